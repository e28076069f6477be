"""Google API Discovery documents (``kind: discovery#restDescription``) -> :class:`SpecIndex`.

A Discovery document lists methods in nested ``resources`` (real documents nest
ten deep); each method has an ``id`` (``calendar.events.insert``), an
``httpMethod``, a ``path`` relative to ``rootUrl + servicePath`` (which may use
RFC 6570 reserved expansion, ``{+name}``, standing for several segments), often a
``flatPath`` spelling those segments out, and ``scopes``: any one of them
suffices. Scope descriptions live in ``auth.oauth2.scopes``.

What the format leaves implicit, and how it is read here:

* No OAuth flow is named. Google's OAuth 2.0 serves both delegated user consent
  (authorization code) and service accounts (a signed JWT exchanged at the token
  endpoint: the agent's own identity, which plays the role of client
  credentials), so the ``Oauth2`` scheme gets both flows, marked ``inferred``.
* A method without ``scopes`` (or with ``scopes: []``) declares nothing: its
  requirements are unknown (``None``, source ``undeclared``), never "needs
  nothing" and never a guessed API key (the ``key`` query parameter every Google
  document defines says a key *may* be sent, not that one suffices). A policy pin
  (``scopes = []``) says it is public where the provider documents that. A
  document in which no method declares scopes has ``security_declared=False``,
  as an OpenAPI spec without ``security``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..diagnostics import Diagnostic
from ..documents import FetchedSpec
from ._doc import INVALID_OPERATION, INVALID_SECURITY, SECURITY_UNDECLARED, UNDECLARED_SCOPE, assign_keys
from .model import (
    FlowKind,
    OAuthFlow,
    OperationEntry,
    Requirements,
    SchemeRequirement,
    SchemeType,
    SecurityScheme,
    SpecIndex,
    SpecKind,
)
from .refs import RefLoader

__all__ = ["DISCOVERY_KIND", "OAUTH2_SCHEME", "DiscoveryAdapter", "build_discovery_index"]

DISCOVERY_KIND = "discovery#restDescription"
#: The scheme name the index gives Google's OAuth 2.0 (Discovery documents name none).
OAUTH2_SCHEME = "Oauth2"

GOOGLE_AUTHORIZATION_URL = "https://accounts.google.com/o/oauth2/auth"
GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token"


class DiscoveryAdapter:
    """The :class:`~ramscope.specs.Adapter` for Google Discovery documents."""

    kind = SpecKind.DISCOVERY

    def sniff(self, doc: Any) -> str | None:
        if isinstance(doc, dict) and doc.get("kind") == DISCOVERY_KIND:
            return str(doc.get("discoveryVersion") or "v1")
        return None

    def build(self, doc: Any, spec: FetchedSpec, *, spec_version: str, load_ref: RefLoader | None = None) -> SpecIndex:
        # Discovery documents have no $ref to other documents (schemas use bare names).
        return build_discovery_index(doc, spec, spec_version=spec_version)


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1") if "~" in token or "/" in token else token


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _with_service_path(service_path: str, path: str) -> str:
    return "/" + (service_path.strip("/") + "/" if service_path.strip("/") else "") + path.lstrip("/")


_RESERVED = re.compile(r"\{\+([^{}]*)\}")


def _reserved_patterns(path: str, parameters: Any) -> dict[str, str | None]:
    """Each reserved-expansion parameter (``{+name}``) of ``path`` and its declared ``pattern``
    (``None`` when it declares none): what bounds the several segments it may stand for, for an
    export that must allow no more than the method (``ramscope.governance.cedar``)."""
    out: dict[str, str | None] = {}
    params = parameters if isinstance(parameters, dict) else {}
    for name in _RESERVED.findall(path):
        p = params.get(name)
        pattern = p.get("pattern") if isinstance(p, dict) else None
        out[name] = pattern if isinstance(pattern, str) else None
    return out


def build_discovery_index(doc: Mapping[str, Any], spec: FetchedSpec, *, spec_version: str = "v1") -> SpecIndex:
    diags: list[Diagnostic] = []
    auth = doc.get("auth")
    oauth2 = auth.get("oauth2") if isinstance(auth, dict) else None
    raw_scopes = oauth2.get("scopes") if isinstance(oauth2, dict) else None
    scope_list: tuple[tuple[str, str], ...] = ()
    if isinstance(raw_scopes, dict):
        scope_list = tuple(
            (str(k), _str(v.get("description")) if isinstance(v, dict) else "") for k, v in raw_scopes.items()
        )
    declared_scopes = {s for s, _ in scope_list}

    service_path = _str(doc.get("servicePath"))
    entries: list[OperationEntry] = []
    uses_oauth = isinstance(oauth2, dict)
    undeclared: dict[str, str] = {}
    #: Methods declaring nothing: (pointer, name). Reported per method only if others declare.
    silent: list[tuple[str, str]] = []
    reqs_cache: dict[tuple[Any, ...], Requirements] = {}

    # Iterative walk: resources nest ten deep in real documents, and a hostile one could nest more.
    stack: list[tuple[Mapping[str, Any], str]] = [(doc, "")]
    while stack:
        node, ptr = stack.pop()
        methods = node.get("methods")
        if isinstance(methods, dict):
            for name, m in methods.items():
                mptr = f"{ptr}/methods/{_escape(name)}"
                if not isinstance(m, dict) or not isinstance(m.get("path"), str) or not _str(m.get("httpMethod")):
                    diags.append(INVALID_OPERATION(mptr, f"method {name!r} has no path or no httpMethod; skipped"))
                    continue
                path = m["path"]
                scopes = m.get("scopes")
                reqs: Requirements | None
                if isinstance(scopes, list) and scopes:
                    # Only strings are scopes. Entries of other types are reported and dropped; if none
                    # is left, what the method needs is unknown, never "nothing" (fail closed).
                    key = tuple(s for s in scopes if isinstance(s, str))
                    if len(key) < len(scopes):
                        diags.append(
                            INVALID_SECURITY(
                                mptr + "/scopes",
                                f"method {name!r} lists scopes that are not strings"
                                + ("; they are ignored" if key else "; its requirements are unknown"),
                            )
                        )
                    cached = reqs_cache.get(key) if key else None
                    if key and cached is None:
                        # Any one of the listed scopes suffices: one alternative per scope.
                        uniq = list(dict.fromkeys(key))
                        cached = reqs_cache[key] = tuple((SchemeRequirement(OAUTH2_SCHEME, (s,)),) for s in uniq)
                        for s in uniq:
                            if s not in declared_scopes and s not in undeclared:
                                undeclared[s] = mptr + "/scopes"
                    reqs = cached
                    uses_oauth = True
                    src = "method"
                elif scopes is not None and not isinstance(scopes, list):
                    diags.append(
                        INVALID_SECURITY(
                            mptr + "/scopes",
                            f"method {name!r} has scopes that are not a list; its requirements are unknown",
                        )
                    )
                    reqs, src = None, "method"
                else:
                    reqs, src = None, "undeclared"
                    silent.append((mptr, name))
                flat = m.get("flatPath")
                alt: tuple[str, ...] = ()
                full = _with_service_path(service_path, path)
                if isinstance(flat, str) and flat != path:
                    alt = tuple(dict.fromkeys((flat, _with_service_path(service_path, flat))))
                method_id = _str(m.get("id"))
                http_method = m["httpMethod"].upper()
                reserved = _reserved_patterns(path, m.get("parameters"))
                entries.append(
                    OperationEntry(
                        key=method_id or f"{http_method} {full}",
                        operation_id=method_id,
                        method=http_method,
                        path=path,
                        full_path=full,
                        alt_paths=alt,
                        requirements=reqs,
                        security_source=src,
                        description=_str(m.get("description")),
                        deprecated=m.get("deprecated") is True,
                        extra={"reserved_patterns": reserved} if reserved else {},
                        pointer=mptr,
                    )
                )
        resources = node.get("resources")
        if isinstance(resources, dict):
            # Reversed so the walk meets resources in document order.
            stack.extend(
                (r, f"{ptr}/resources/{_escape(rname)}")
                for rname, r in reversed(resources.items())
                if isinstance(r, dict)
            )

    declared = any(e.security_source == "method" and e.requirements is not None for e in entries)
    if not declared:
        diags.append(
            SECURITY_UNDECLARED(
                "",
                "no method of the document lists scopes, so what its methods need is unknown: "
                "check its documentation (pin public methods with a policy)",
                data={"affects": "all"},
            )
        )
    else:
        for mptr, name in silent:
            diags.append(
                SECURITY_UNDECLARED(
                    mptr,
                    f"method {name!r} lists no scopes, so what it needs is unknown, not nothing "
                    "(pin it with a policy if the provider documents it as public)",
                )
            )

    for scope, where in undeclared.items():
        diags.append(
            UNDECLARED_SCOPE(
                where,
                f"scope {scope!r} is not listed in auth.oauth2.scopes",
                data={"scheme": OAUTH2_SCHEME, "scope": scope},
            )
        )

    schemes: list[SecurityScheme] = []
    if uses_oauth:
        schemes.append(
            SecurityScheme(
                OAUTH2_SCHEME,
                SchemeType.OAUTH2,
                "Google OAuth 2.0 (flows inferred: Discovery documents do not name them)",
                flows=(
                    OAuthFlow(
                        FlowKind.AUTHORIZATION_CODE,
                        authorization_url=GOOGLE_AUTHORIZATION_URL,
                        token_url=GOOGLE_TOKEN_URL,
                        scopes=scope_list,
                    ),
                    OAuthFlow(FlowKind.CLIENT_CREDENTIALS, token_url=GOOGLE_TOKEN_URL, scopes=scope_list),
                ),
                inferred=True,
            )
        )
    base = _with_service_path(service_path, "").rstrip("/")
    operations = tuple(assign_keys(entries, diags))
    return SpecIndex(
        kind=SpecKind.DISCOVERY,
        url=spec.url,
        sha256=spec.sha256,
        title=_str(doc.get("title")) or _str(doc.get("name")),
        version=_str(doc.get("version")),
        spec_version=spec_version,
        base_paths=(base,) if base else (),
        operations=operations,
        schemes=tuple(schemes),
        security_declared=declared,
        diagnostics=tuple(diags),
        extra={k: doc[k] for k in ("id", "name", "rootUrl", "servicePath") if isinstance(doc.get(k), str)},
    )
