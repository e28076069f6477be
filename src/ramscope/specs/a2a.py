"""A2A agent cards (v1.0 ProtoJSON and v0.3 JSON, or both merged) -> :class:`SpecIndex`.

A remote agent is a resource like an API: its card says how it wants clients
to authenticate. The two shapes in use::

    v1.0  "securitySchemes": {"oauth": {"oauth2SecurityScheme": {"flows": {"authorizationCode": {...}}}}}
          "securityRequirements": [{"schemes": {"oauth": {"list": ["files:read"]}}}]      (card and skills)
    v0.3  "securitySchemes": {"oauth": {"type": "oauth2", "flows": {...}}}
          "security": [{"oauth": ["files:read"]}]                                         (card and skills)

A server that still serves a 0.3 interface merges both into one card (the
a2a-sdk does); the 1.0 fields are read and the 0.3 ones compared with them, a
disagreement being reported. ProtoJSON parsers accept the proto field names too
(``security_requirements``, ``oauth2_security_scheme``), so they are read as well.
Each scheme's fields and flows are read by :mod:`.security`, the reader OpenAPI's
schemes go through (0.3 uses OpenAPI's object; 1.0's wrappers hold the same fields).

The index has one entry for the card as a whole (key ``"*"``, operation id
``""``, the card's requirements) and one per skill (key and operation id = the
skill id), whose own requirements override the card's as an OpenAPI
operation's ``security`` overrides the root (``security_source`` "skill" or
"card"). A card that requires nothing anywhere has unknown requirements, not
none, as with an OpenAPI spec that declares no security.

``extra`` carries the card itself (``card``, JSON-compatible: the derive engine
loads a nested manifest from it with :func:`ramscope.load_card`), the URL it
finally came from (``card_url``: the agent's identity for cycle detection and
depth limits), its name and protocol version.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..diagnostics import Diagnostic, Severity, join_pointer, rule
from ..documents import FetchedSpec, camel_to_snake, looks_like_card
from ._doc import (
    DUPLICATE_OPERATION_ID,
    INVALID_OPERATION,
    INVALID_SECURITY,
    INVALID_SECURITY_SCHEME,
    SECURITY_UNDECLARED,
    UNDECLARED_SCOPE,
    UNDEFINED_SECURITY_SCHEME,
)
from .model import (
    OperationEntry,
    Requirement,
    Requirements,
    SchemeRequirement,
    SchemeType,
    SecurityScheme,
    SpecIndex,
    SpecKind,
)
from .refs import RefLoader
from .security import A2A_FLOWS, SchemeReader, proto_field, scheme_type
from .security import proto_field as _get

__all__ = ["CARD_KEY", "A2AAdapter", "build_a2a_index", "looks_like_card"]

#: The key of the entry standing for the agent as a whole.
CARD_KEY = "*"

_MAX_TEXT = 4096
_MAX_ITEMS = 64
_MAX_ITEM = 1024

_WRAPPERS: dict[str, SchemeType] = {
    "oauth2SecurityScheme": SchemeType.OAUTH2,
    "apiKeySecurityScheme": SchemeType.API_KEY,
    "httpAuthSecurityScheme": SchemeType.HTTP,
    "openIdConnectSecurityScheme": SchemeType.OPENID_CONNECT,
    "mtlsSecurityScheme": SchemeType.MUTUAL_TLS,
}
_S = "a2a"
A2A_SHAPES_DISAGREE = rule(
    "a2a-shapes-disagree",
    Severity.WARNING,
    "A card carrying both the v1.0 and the v0.3 form of a field says different things in them; the v1.0 form is used.",
    stage=_S,
)
A2A_CARD_REQUIREMENTS_ABSENT = rule(
    "a2a-card-requirements-absent",
    Severity.WARNING,
    "Some skills declare security requirements but the card declares none for the agent as a whole: what the "
    "card and the other skills need is unknown.",
    stage=_S,
)


def _has(d: Mapping[str, Any], camel: str) -> bool:
    return camel in d or camel_to_snake(camel) in d


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _bounded(text: str, limit: int = _MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _texts(v: Any) -> list[str]:
    return [_bounded(x, _MAX_ITEM) for x in v[:_MAX_ITEMS] if isinstance(x, str)] if isinstance(v, list) else []


def _interfaces(doc: Mapping[str, Any]) -> list[dict[str, str]]:
    raw = _get(doc, "supportedInterfaces")
    out: list[dict[str, str]] = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict):
            out.append(
                {
                    "url": _str(item.get("url")),
                    "protocolBinding": _str(_get(item, "protocolBinding")),
                    "protocolVersion": _str(_get(item, "protocolVersion")),
                }
            )
    return out


def protocol_version(doc: Mapping[str, Any]) -> str:
    """The card's protocol version: its first interface's (1.0), else ``protocolVersion`` (0.3)."""
    for iface in _interfaces(doc):
        if iface["protocolVersion"]:
            return iface["protocolVersion"]
    return _str(_get(doc, "protocolVersion"))


def _has_manifest(doc: Mapping[str, Any]) -> bool:
    names = ("resourceAccessManifest", "resource_access_manifest")
    if any(n in doc for n in names):
        return True
    exts = _dict(doc.get("capabilities")).get("extensions")
    return any(
        isinstance(e, dict) and any(n in _dict(e.get("params")) for n in names)
        for e in (exts if isinstance(exts, list) else [])
    )


class A2AAdapter:
    """The :class:`~ramscope.specs.Adapter` for A2A agent cards."""

    kind = SpecKind.A2A

    def sniff(self, doc: Any) -> str | None:
        if not looks_like_card(doc):
            return None
        return protocol_version(doc) or ("1.0" if _has(doc, "supportedInterfaces") else "0.3")

    def build(self, doc: Any, spec: FetchedSpec, *, spec_version: str, load_ref: RefLoader | None = None) -> SpecIndex:
        return build_a2a_index(doc, spec, spec_version=spec_version)


# --------------------------------------------------------------------------- the builder


def _scheme_reader(diags: list[Diagnostic], *, api_key_in: str) -> SchemeReader:
    """A2A's schemes: both shapes take ProtoJSON's snake_case names, and a stranger's card has its texts bounded."""
    return SchemeReader(
        diags.append,
        flow_names=A2A_FLOWS,
        field=proto_field,
        api_key_in=api_key_in,
        text_limit=_MAX_TEXT,
        item_limit=_MAX_ITEM,
    )


class _Builder:
    def __init__(self, doc: Mapping[str, Any]) -> None:
        self.doc = doc
        self.diags: list[Diagnostic] = []
        self.schemes: dict[str, SecurityScheme] = {}
        # The 1.0 wrappers hold OpenAPI's fields but for the API key's location.
        self.v10_reader = _scheme_reader(self.diags, api_key_in="location")
        self.v03_reader = _scheme_reader(self.diags, api_key_in="in")
        self.undefined: dict[str, str] = {}
        self.undeclared: dict[tuple[str, str], str] = {}

    # ---- schemes

    def read_schemes(self) -> None:
        raw = _get(self.doc, "securitySchemes")
        ptr = "/securitySchemes" if "securitySchemes" in self.doc else "/security_schemes"
        if raw is None:
            return
        if not isinstance(raw, dict):
            self.diags.append(INVALID_SECURITY_SCHEME(ptr, "securitySchemes is not an object; it is ignored"))
            return
        for name, body in raw.items():
            at = join_pointer(ptr, name)
            if not isinstance(body, dict):
                self.diags.append(INVALID_SECURITY_SCHEME(at, f"scheme {name!r} is not an object; it is ignored"))
                continue
            v10 = self._scheme_v10(name, body, at)
            v03 = self._scheme_v03(name, body, at) if "type" in body else None
            if v10 is not None and v03 is not None and _scheme_shape(v10) != _scheme_shape(v03):
                self.diags.append(
                    A2A_SHAPES_DISAGREE(
                        at,
                        f"scheme {name!r}: the v1.0 form says {_scheme_shape(v10)}, the v0.3 form "
                        f"{_scheme_shape(v03)}; the v1.0 form is used",
                        data={"scheme": name},
                    )
                )
            chosen = v10 or v03
            if chosen is None:
                if not any(_has(body, w) for w in _WRAPPERS) and "type" not in body:
                    self.diags.append(
                        INVALID_SECURITY_SCHEME(
                            at, f"scheme {name!r} has neither a v1.0 wrapper (oauth2SecurityScheme ...) nor a type"
                        )
                    )
                continue
            self.schemes[name] = chosen

    def _scheme_v10(self, name: str, body: Mapping[str, Any], at: str) -> SecurityScheme | None:
        found = [(w, t) for w, t in _WRAPPERS.items() if _has(body, w)]
        if not found:
            return None
        if len(found) > 1:
            self.diags.append(
                INVALID_SECURITY_SCHEME(
                    at,
                    f"scheme {name!r} sets {len(found)} of the oneof wrappers ({', '.join(w for w, _ in found)}); "
                    f"the first, {found[0][0]}, is used",
                )
            )
        wrapper, kind = found[0]
        inner = _dict(_get(body, wrapper))
        meta = _str(_get(inner, "oauth2MetadataUrl")) if kind is SchemeType.OAUTH2 else ""
        return self.v10_reader.read(
            name,
            kind,
            inner,
            join_pointer(at, wrapper),
            description=f"(authorization server metadata: {meta})" if meta else "",
        )

    def _scheme_v03(self, name: str, body: Mapping[str, Any], at: str) -> SecurityScheme | None:
        kind = scheme_type(body.get("type"))
        if kind is None:
            self.diags.append(
                INVALID_SECURITY_SCHEME(
                    join_pointer(at, "type"),
                    f"scheme {name!r} has type {str(body.get('type'))[:40]!r}, which A2A 0.3 does not define",
                    data={"scheme": name},
                )
            )
            return None
        return self.v03_reader.read(name, kind, body, at)

    # ---- requirements

    def requirements(self, holder: Mapping[str, Any], ptr: str, what: str) -> Requirements | None:
        """``holder``'s own requirements (1.0 preferred, 0.3 compared), ``None`` if it declares none."""
        v10_name = "securityRequirements" if "securityRequirements" in holder else "security_requirements"
        v10 = self._reqs_v10(holder[v10_name], join_pointer(ptr, v10_name)) if v10_name in holder else None
        v03 = self._reqs_v03(holder["security"], join_pointer(ptr, "security")) if "security" in holder else None
        if v10 is not None and v03 is not None and set(v10) != set(v03):
            self.diags.append(
                A2A_SHAPES_DISAGREE(
                    join_pointer(ptr, "security"),
                    f"{what}: securityRequirements (v1.0) says {_show(v10)}, security (v0.3) says {_show(v03)}; "
                    "the v1.0 form is used",
                )
            )
        chosen = v10 if v10 is not None else v03
        if chosen is None:
            return None
        for alt in chosen:
            for term in alt:
                self._check_term(term, ptr)
        return chosen

    def _reqs_v10(self, raw: Any, ptr: str) -> Requirements | None:
        if not isinstance(raw, list):
            self.diags.append(INVALID_SECURITY(ptr, "securityRequirements is not an array; it is ignored"))
            return None
        alts: list[Requirement] = []
        for i, item in enumerate(raw):
            schemes = _dict(item).get("schemes", {}) if isinstance(item, dict) else None
            if not isinstance(schemes, dict):
                self.diags.append(INVALID_SECURITY(join_pointer(ptr, i), "a requirement without a 'schemes' object"))
                return None
            terms: list[SchemeRequirement] = []
            for name, value in schemes.items():
                scopes = value.get("list", []) if isinstance(value, dict) else value
                if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
                    self.diags.append(
                        INVALID_SECURITY(
                            join_pointer(ptr, i, "schemes", name), f"the scopes of {name!r} are not a list of strings"
                        )
                    )
                    return None
                terms.append(SchemeRequirement.of(name, scopes))
            alts.append(tuple(sorted(terms)))
        return tuple(dict.fromkeys(alts))

    def _reqs_v03(self, raw: Any, ptr: str) -> Requirements | None:
        if not isinstance(raw, list):
            self.diags.append(INVALID_SECURITY(ptr, "security is not an array; it is ignored"))
            return None
        alts: list[Requirement] = []
        for i, item in enumerate(raw):
            if not isinstance(item, dict):
                self.diags.append(INVALID_SECURITY(join_pointer(ptr, i), "a requirement that is not an object"))
                return None
            terms: list[SchemeRequirement] = []
            for name, scopes in item.items():
                if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
                    self.diags.append(
                        INVALID_SECURITY(
                            join_pointer(ptr, i, name), f"the scopes of {name!r} are not a list of strings"
                        )
                    )
                    return None
                terms.append(SchemeRequirement.of(name, scopes))
            alts.append(tuple(sorted(terms)))
        return tuple(dict.fromkeys(alts))

    def _check_term(self, term: SchemeRequirement, ptr: str) -> None:
        scheme = self.schemes.get(term.scheme)
        if scheme is None:
            self.undefined.setdefault(term.scheme, ptr)
            return
        if scheme.type in (SchemeType.OAUTH2,) and scheme.flows:
            for s in term.scopes:
                if scheme.scope_description(s) is None:
                    self.undeclared.setdefault((term.scheme, s), ptr)

    def finish_checks(self) -> None:
        defined = ", ".join(sorted(self.schemes)) or "none"
        for name, ptr in self.undefined.items():
            self.diags.append(
                UNDEFINED_SECURITY_SCHEME(
                    ptr,
                    f"security scheme {name!r} is required but not defined in securitySchemes (defined: {defined}); "
                    "the requirement is kept as written",
                    data={"scheme": name},
                )
            )
        for (name, scope), ptr in self.undeclared.items():
            self.diags.append(
                UNDECLARED_SCOPE(
                    ptr,
                    f"scope {scope!r} is not listed by the flows of scheme {name!r}",
                    data={"scheme": name, "scope": scope},
                )
            )

    # ---- the index

    def build(self, spec: FetchedSpec, spec_version: str) -> SpecIndex:
        doc = self.doc
        self.read_schemes()
        card_reqs = self.requirements(doc, "", "the card")
        name = _bounded(_str(doc.get("name")), _MAX_ITEM)
        skills: list[tuple[Mapping[str, Any], str, Requirements | None]] = []
        raw_skills = doc.get("skills")
        for i, skill in enumerate(raw_skills if isinstance(raw_skills, list) else []):
            ptr = f"/skills/{i}"
            if not isinstance(skill, dict) or not isinstance(skill.get("id"), str) or not skill["id"]:
                self.diags.append(INVALID_OPERATION(ptr, "a skill without an id (or not an object) was skipped"))
                continue
            skills.append((skill, ptr, self.requirements(skill, ptr, f"skill {skill['id']!r}")))
        declared = card_reqs is not None or any(r is not None for _, _, r in skills)
        if not declared:
            msg = "the card declares no security requirements (no securityRequirements or security)"
            if self.schemes:
                msg += f"; it defines the scheme(s) {', '.join(sorted(self.schemes))} but never requires them"
            msg += ", so what the agent needs is unknown: check its documentation"
            self.diags.append(SECURITY_UNDECLARED("", msg, data={"affects": "all"}))
        elif card_reqs is None:
            self.diags.append(
                A2A_CARD_REQUIREMENTS_ABSENT(
                    "",
                    "some skills declare security requirements, but the card declares none for the agent as a "
                    "whole: what the card and the skills without their own need is unknown",
                    data={"affects": "root-security"},
                )
            )
        entries = [
            OperationEntry(
                key=CARD_KEY,
                operation_id="",
                requirements=card_reqs,
                security_source="card",
                title=name,
                description=_bounded(_str(doc.get("description"))),
                extra={"skills": len(skills)},
                pointer="",
            )
        ]
        keys = {CARD_KEY: ""}
        for skill, ptr, own in skills:
            skill_id: str = skill["id"]
            if skill_id in keys and skill_id != CARD_KEY:
                self.diags.append(
                    DUPLICATE_OPERATION_ID(
                        ptr,
                        f"skill id {skill_id!r} is used again (first at {keys[skill_id]}); the first is used",
                        data={"operation_id": skill_id},
                    )
                )
                continue
            key = skill_id if skill_id not in keys else f"{skill_id}#skill"
            keys[key] = ptr
            entries.append(
                OperationEntry(
                    key=key,
                    operation_id=skill_id,
                    requirements=own if own is not None else card_reqs,
                    security_source="skill" if own is not None else "card",
                    title=_bounded(_str(skill.get("name")), _MAX_ITEM),
                    description=_bounded(_str(skill.get("description"))),
                    extra={"tags": _texts(skill.get("tags")), "examples": _texts(skill.get("examples"))},
                    pointer=ptr,
                )
            )
        self.finish_checks()
        interfaces = _interfaces(doc)
        extra: dict[str, Any] = {
            "card_url": spec.final_url or spec.url,
            "card_name": name,
            "protocol_version": spec_version,
            "protocol_versions": list(dict.fromkeys(i["protocolVersion"] for i in interfaces if i["protocolVersion"]))
            or ([spec_version] if spec_version else []),
            "interfaces": interfaces or ([{"url": _str(doc.get("url"))}] if isinstance(doc.get("url"), str) else []),
            "has_manifest": _has_manifest(doc),
            "card": dict(doc),
        }
        return SpecIndex(
            kind=SpecKind.A2A,
            url=spec.url,
            sha256=spec.sha256,
            title=name,
            version=_bounded(_str(doc.get("version")), _MAX_ITEM),
            spec_version=spec_version,
            operations=tuple(entries),
            schemes=tuple(self.schemes.values()),
            security_declared=declared,
            diagnostics=tuple(self.diags),
            extra=extra,
        )


def _scheme_shape(s: SecurityScheme) -> str:
    """What must agree between the two forms of one scheme, as text for a message."""
    parts = [s.type.value]
    for f in s.flows:
        parts.append(f"{f.kind.value}(token {f.token_url or '-'}; scopes {', '.join(sorted(n for n, _ in f.scopes))})")
    if s.api_key_in or s.api_key_name:
        parts.append(f"{s.api_key_in} {s.api_key_name}")
    if s.http_scheme:
        parts.append(s.http_scheme)
    if s.open_id_connect_url:
        parts.append(s.open_id_connect_url)
    return " ".join(parts)


def _show(reqs: Requirements) -> str:
    return (
        " or ".join(
            "(" + " and ".join(f"{t.scheme}[{' '.join(t.scopes)}]" for t in alt) + ")" if alt else "(anonymous)"
            for alt in reqs
        )
        or "nothing"
    )


def build_a2a_index(doc: Mapping[str, Any], spec: FetchedSpec, *, spec_version: str = "") -> SpecIndex:
    """Index an agent card (see the module docstring)."""
    return _Builder(doc).build(spec, spec_version)
