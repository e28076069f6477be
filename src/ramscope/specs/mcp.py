"""MCP server captures (``ramscope-mcp-capture/1``) -> :class:`SpecIndex`.

The MCP fetcher (:mod:`ramscope.store.mcp`) records a server's ``tools/list``
and what it said about authorization; this module reads that record, purely.
Each tool becomes an :class:`OperationEntry` (key and operation id = the tool
name, kept exactly as the server wrote it). Its requirements come from, in order:

1. **the tool's own** ``securitySchemes`` (MCP SEP-1488, the OpenAI Apps SDK
   form; on the tool or in its ``_meta``): an array of alternatives, ``noauth``
   an empty alternative, ``oauth2`` the server's OAuth scheme with the listed
   scopes (``security_source: "tool"``);
2. **the server's** (``security_source: "server"``):

   * the ``scope`` of the 401's Bearer challenge: the MCP authorization spec has
     clients request exactly that;
   * else the Protected Resource Metadata's ``scopes_supported``, which MCP
     2026-07-28 calls "the minimal set of scopes necessary for basic
     functionality": the server's baseline, a floor that the derivation states
     and never takes for the tool's answer (``security_source: "server-baseline"``);
   * else, when a credential was demanded (401/403) without OAuth metadata: the
     credential the evidence points to (an API key when the error body or the
     challenge says so, HTTP authentication for a non-Bearer challenge, a bare
     Bearer token, else ``unknown``): never "nothing";
   * else (tools listed anonymously, no metadata): ``()`` with an info finding.

The OAuth scheme's flows come from the authorization server's metadata
(``grant_types_supported``: authorization_code, client_credentials,
device_code), its token endpoint naming the scope namespace; without that
metadata the scheme is authorization code (MCP authorization is OAuth 2.1 with
PKCE), marked ``inferred``, with the authorization server's URL as token URL.

When the server lists tools only to authenticated clients, the index has no
tools; it records the server-wide requirement (:func:`server_requirements`)
and ``extra["tools_listed"] = False``, and the resolver stands in an
unverified entry for the tool the manifest names.

Tool annotations are the server's *hints* (the spec says so and so does the
index: ``annotations_source: "server"``), with the spec's defaults filled in.
Strings are bounded, never escaped: renderers escape.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from .._text import for_terminal
from ..diagnostics import Diagnostic, Severity, join_pointer, rule
from ..documents import CAPTURE_FORMAT, FetchedSpec
from ..errors import SpecError
from ._doc import DUPLICATE_OPERATION_ID, INVALID_OPERATION, INVALID_SECURITY, INVALID_SECURITY_SCHEME
from .model import (
    FlowKind,
    OAuthFlow,
    OperationEntry,
    Requirement,
    Requirements,
    SchemeRequirement,
    SchemeType,
    SecurityScheme,
    SpecIndex,
    SpecKind,
    reqs_from_json,
    reqs_to_json,
)
from .refs import RefLoader

__all__ = [
    "ANNOTATION_DEFAULTS",
    "API_KEY_SCHEME",
    "BASELINE_SOURCE",
    "BEARER_SCHEME",
    "CAPTURE_FORMAT",
    "CREDENTIAL_SCHEME",
    "OAUTH_SCHEME",
    "MCPAdapter",
    "build_mcp_index",
    "server_requirements",
    "server_source_label",
    "unlisted_tool",
]

_CAPTURE_FAMILY = "ramscope-mcp-capture/"

#: Scheme names the index gives what an MCP server asks for (servers name none).
OAUTH_SCHEME = "mcp-oauth"
API_KEY_SCHEME = "mcp-api-key"
BEARER_SCHEME = "mcp-bearer"
CREDENTIAL_SCHEME = "mcp-credential"

#: The MCP spec's defaults for the tool annotation hints (a tool may be destructive and open-world
#: unless it says otherwise).
ANNOTATION_DEFAULTS: Mapping[str, bool] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
_MAX_DESCRIPTION = 4096
_MAX_TITLE = 1024
_MAX_EVIDENCE = 300
_DEVICE_CODE = "urn:ietf:params:oauth:grant-type:device_code"
#: RFC 8414 2: grant_types_supported omitted means authorization_code and implicit; MCP
#: authorization is OAuth 2.1, which has no implicit grant.
_DEFAULT_GRANTS = ("authorization_code",)
_API_KEY_WORDS = re.compile(r"api[\s_-]?key", re.IGNORECASE)
_KEY_HEADER = re.compile(r"\b(x-[a-z0-9-]*key[a-z0-9-]*)\b", re.IGNORECASE)
#: The MCP spec (2025-11-25) asks for 1-128 characters of [A-Za-z0-9_.-].
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}\Z")

_S = "mcp"
MCP_NO_AUTHORIZATION = rule(
    "mcp-no-authorization",
    Severity.INFO,
    "The MCP server listed its tools without a credential and publishes no protected-resource metadata: "
    "its tools are taken to need no authorization.",
    stage=_S,
)
MCP_ANONYMOUS_LISTING = rule(
    "mcp-anonymous-listing",
    Severity.INFO,
    "The MCP server listed its tools without a credential but publishes protected-resource metadata: "
    "its scopes_supported is the server's baseline, the least a tool that declares nothing of its own needs.",
    stage=_S,
)
MCP_CREDENTIAL_INFERRED = rule(
    "mcp-credential-inferred",
    Severity.WARNING,
    "The MCP server demands a credential but publishes no OAuth metadata; the kind of credential is "
    "inferred from its answer.",
    stage=_S,
)
MCP_AS_METADATA_UNAVAILABLE = rule(
    "mcp-as-metadata-unavailable",
    Severity.WARNING,
    "The authorization server's metadata could not be obtained, or names no grant ramscope knows: which grants "
    "it issues, so whether an end user or the agent can obtain its tokens, is unknown.",
    stage=_S,
)
MCP_METADATA_UNAVAILABLE = rule(
    "mcp-metadata-unavailable",
    Severity.ERROR,
    "Looking up the MCP server's authorization metadata failed (not a 404 or 410: a server error, a timeout, "
    "a refusal, a redirect loop, an unusable document): whether and how its tools need authorization is unknown.",
    stage=_S,
)
MCP_LEGACY_AUTHORIZATION = rule(
    "mcp-legacy-authorization",
    Severity.INFO,
    "The MCP server publishes no protected-resource metadata but serves authorization-server metadata on its "
    "origin (the 2025-03-26 revision's discovery): its grants and scopes are read from that.",
    stage=_S,
)
MCP_OAUTH_INFERRED = rule(
    "mcp-oauth-inferred",
    Severity.WARNING,
    "The MCP server's Bearer challenge names scopes but no metadata describes its authorization server: OAuth is "
    "inferred, and which grants it issues (so whether an end user or the agent can use it) is unknown.",
    stage=_S,
)
MCP_CONFLICTING_TOOL_SECURITY = rule(
    "mcp-conflicting-tool-security",
    Severity.WARNING,
    "A tool declares securitySchemes both on itself and in its _meta, differently; the tool's own are used.",
    stage=_S,
)
MCP_UNUSUAL_TOOL_NAME = rule(
    "mcp-unusual-tool-name",
    Severity.WARNING,
    "A tool name is outside the MCP spec's 1-128 characters of [A-Za-z0-9_.-]; control, bidi or invisible "
    "characters in it are kept as data and shown escaped.",
    stage=_S,
)


MCP_PRIVATE_LISTING = rule(
    "mcp-private-listing",
    Severity.WARNING,
    'The server marks its tools/list result cacheScope "private" (it depends on the caller\'s authorization) and '
    "ramscope listed its tools without a credential: tools a token would see may be missing from the listing.",
    stage=_S,
)
MCP_TOKEN_SCOPE_ADVERTISED = rule(
    "mcp-token-scope-advertised",
    Severity.INFO,
    "The server's protected-resource metadata or challenge names offline_access or openid, which the MCP "
    "specification (2026-07-28) says it should not: token lifetime and sign-in are no permission over data, so "
    "they are listed apart, never counted.",
    stage=_S,
)

#: A tool's requirement read from the server's Protected Resource Metadata ``scopes_supported``: under
#: the 2026-07-28 revision "the minimal set of scopes necessary for basic functionality", a floor (the
#: tool may need more, asked for by step-up), never the answer for one tool.
BASELINE_SOURCE = "server-baseline"
#: Scopes that are no permission over data (MCP 2026-07-28: offline_access is never in
#: scopes_supported or a challenge; clients add it themselves).
_TOKEN_SCOPES = frozenset({"offline_access", "openid"})


def server_source_label(server_source: str) -> str:
    """The ``security_source`` of a tool that declares nothing of its own, by where the server's requirement
    came from: the metadata's baseline, or the server's word (a challenge, a credential demanded ...)."""
    return BASELINE_SOURCE if server_source == "protected-resource-metadata" else "server"


class MCPAdapter:
    """The :class:`~ramscope.specs.Adapter` for MCP server captures."""

    kind = SpecKind.MCP

    def sniff(self, doc: Any) -> str | None:
        if not isinstance(doc, dict):
            return None
        fmt = doc.get("format")
        if fmt == CAPTURE_FORMAT:
            return str(doc.get("protocol_version") or "")
        if isinstance(fmt, str) and fmt.startswith(_CAPTURE_FAMILY):
            raise SpecError(
                f"unsupported spec: an MCP capture of format {fmt[:60]!r}; this ramscope reads {CAPTURE_FORMAT}"
            )
        return None

    def build(self, doc: Any, spec: FetchedSpec, *, spec_version: str, load_ref: RefLoader | None = None) -> SpecIndex:
        return build_mcp_index(doc, spec, spec_version=spec_version)


def server_requirements(index: SpecIndex) -> Requirements | None:
    """The server-wide requirement recorded in an MCP index (what unlisted tools need)."""
    raw = index.extra.get("server_requirements")
    try:
        return reqs_from_json(raw)
    except (TypeError, ValueError):
        return None


def unlisted_tool(index: SpecIndex, name: str) -> OperationEntry:
    """The stand-in entry for a tool the server did not list to ramscope: what a vendor catalog applied to
    the index (``extra["mcp_catalog"]``) documents for it, else the server-wide requirement."""
    cat = index.extra.get("mcp_catalog")
    tools = cat.get("tools") if isinstance(cat, Mapping) else None
    hit = tools.get(name) if isinstance(tools, Mapping) else None
    if isinstance(hit, Mapping):
        try:
            reqs = reqs_from_json(hit.get("requirements"))
        except (TypeError, ValueError):
            reqs = None
        if reqs is not None:
            assert isinstance(cat, Mapping)
            return OperationEntry(
                key=name,
                operation_id=name,
                requirements=reqs,
                security_source=str(cat.get("label", "catalog")),
                extra={"verified": False, "mcp_catalog": dict(hit)},
            )
    reqs = server_requirements(index)
    return OperationEntry(
        key=name,
        operation_id=name,
        # "Nothing needed" was the server's word for the tools it listed anonymously, not for one it did not list.
        requirements=None if reqs == () else reqs,
        security_source=server_source_label(str(index.extra.get("server_security_source") or "")),
        extra={"verified": False},
    )


# --------------------------------------------------------------------------- helpers


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _strings(v: Any) -> list[str]:
    return [x for x in v if isinstance(x, str)] if isinstance(v, list) else []


def _bounded(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[: limit - 1] + "…", True


def _evidence_text(body: str) -> str:
    """The human part of an error body: Google's ``error.message``, an OAuth ``error_description``, or the text."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        doc = None
    if isinstance(doc, dict):
        err = doc.get("error")
        for candidate in (
            err.get("message") if isinstance(err, dict) else None,
            doc.get("error_description"),
            doc.get("message"),
            err if isinstance(err, str) else None,
        ):
            if isinstance(candidate, str) and candidate:
                return candidate[:_MAX_EVIDENCE]
    return body[:_MAX_EVIDENCE]


def _unique(reqs: list[Requirement]) -> Requirements:
    return tuple(dict.fromkeys(reqs))


# --------------------------------------------------------------------------- the builder


class _Builder:
    def __init__(self, doc: Mapping[str, Any], spec: FetchedSpec) -> None:
        self.doc = doc
        self.spec = spec
        self.diags: list[Diagnostic] = []
        auth = _dict(doc.get("auth"))
        self.auth = auth
        self.status = auth.get("status") if isinstance(auth.get("status"), int) else None
        self.challenges = [c for c in _list(auth.get("challenges")) if isinstance(c, dict)]
        self.bearer = next((c for c in self.challenges if _str(c.get("scheme")).lower() == "bearer"), None)
        bearer_params = _dict(self.bearer.get("params")) if self.bearer else {}
        self.challenge_scopes = _str(bearer_params.get("scope")).split()
        prm_block = _dict(auth.get("protected_resource_metadata"))
        self.prm = _dict(prm_block.get("document")) or None
        self.prm_url = _str(prm_block.get("url"))
        self.prm_tried = [t for t in _list(prm_block.get("tried")) if isinstance(t, dict)]
        as_block = _dict(auth.get("authorization_server"))
        self.asm = _dict(as_block.get("document")) or None
        self.asm_url = _str(as_block.get("url"))
        #: The authorization server was found at the MCP server's origin (2025-03-26), not named by metadata.
        self.legacy = _str(as_block.get("discovered_by")).startswith("origin")
        # An issuer guessed from the origin and not confirmed by a document there is no issuer at all.
        self.issuer = "" if self.legacy and self.asm is None else _str(as_block.get("issuer"))
        self.as_tried = [t for t in _list(as_block.get("tried")) if isinstance(t, dict)] if as_block else []
        self.metadata_unknown = self._metadata_unknown(prm_block, as_block)
        # OAuth scopes met anywhere (metadata, challenge, tools), in order: the scheme's flows list them.
        self.oauth_scopes: dict[str, None] = {}
        self.oauth_used = False
        self.schemes: dict[str, SecurityScheme] = {}

    @staticmethod
    def _metadata_unknown(prm_block: Mapping[str, Any], as_block: Mapping[str, Any]) -> bool:
        """Did a metadata look-up fail other than by 404/410? (Captures before ``state`` say it by their tries.)"""
        given = [_str(b.get("state")) for b in (prm_block, as_block) if b]
        if any(given):
            return "unknown" in given
        for block in (prm_block, as_block):
            if block and not block.get("document"):
                tried = [t for t in _list(block.get("tried")) if isinstance(t, dict)]
                if any(t.get("status") not in (404, 410) for t in tried):
                    return True
        return False

    def _tried(self) -> str:
        tries = [*self.prm_tried, *self.as_tried]
        return "; ".join(f"{_str(t.get('url'))}: {t.get('status') or ''} {_str(t.get('outcome'))}" for t in tries)

    # ---- server-wide

    def server(self, tools_listed: bool) -> tuple[Requirements | None, str]:
        """The server-wide requirement and what it was read from."""
        if self.prm is not None:
            for s in _strings(self.prm.get("scopes_supported")):
                self.oauth_scopes.setdefault(s)
        if self.bearer is not None and self.challenge_scopes:
            return ((self._oauth(self.challenge_scopes),),), "challenge"
        if self.prm is None and self.legacy and self.asm is not None:
            scopes = _strings(self.asm.get("scopes_supported"))
            self.diags.append(
                MCP_LEGACY_AUTHORIZATION(
                    "/auth/authorization_server",
                    "the server publishes no protected-resource metadata but serves authorization-server metadata "
                    f"on its origin ({self.asm_url}, the 2025-03-26 discovery): "
                    + (f"its scopes {', '.join(scopes)}" if scopes else "no scopes_supported (a token of no scope)")
                    + (" are taken as needed to call the tools" if scopes else " is taken as needed"),
                    data={"affects": "root-security"},
                )
            )
            return ((self._oauth(scopes),),), "authorization-server-metadata"
        if self.prm is None and self.metadata_unknown:
            self.diags.append(
                MCP_METADATA_UNAVAILABLE(
                    "/auth",
                    "the server's authorization metadata could not be read (" + self._tried() + "); "
                    "only 404 or 410 at every well-known location means none is published, so what its tools "
                    "need is unknown",
                    hint="run again when the server answers; a failed look-up is never cached",
                    data={"affects": "root-security"},
                )
            )
            return None, "unknown"
        if self.prm is not None:
            if tools_listed and self.status is None:
                self.diags.append(
                    MCP_ANONYMOUS_LISTING(
                        "/auth/protected_resource_metadata",
                        "the server listed its tools without a credential, but publishes protected-resource "
                        f"metadata ({self.prm_url}): its scopes_supported is the server's baseline, the least a "
                        "tool that declares nothing of its own needs",
                        data={"affects": "root-security"},
                    )
                )
            scopes = _strings(self.prm.get("scopes_supported"))
            return ((self._oauth(scopes),),), "protected-resource-metadata"
        if self.status in (401, 403):
            return ((self._credential(),),), "credential-demanded"
        if tools_listed:
            tried = ", ".join(f"{_str(t.get('url'))} ({t.get('status') or t.get('outcome')})" for t in self.prm_tried)
            self.diags.append(
                MCP_NO_AUTHORIZATION(
                    "",
                    "the server listed its tools without asking for a credential and publishes no "
                    f"protected-resource metadata (tried {tried or 'nothing'}): its tools are taken to need "
                    "no authorization",
                    data={"affects": "root-security"},
                )
            )
            return (), "none"
        return None, "unknown"

    def _oauth(self, scopes: list[str]) -> SchemeRequirement:
        self.oauth_used = True
        for s in scopes:
            self.oauth_scopes.setdefault(s)
        return SchemeRequirement.of(OAUTH_SCHEME, scopes)

    def oauth_scheme(self) -> SecurityScheme:
        scopes = tuple((s, "") for s in self.oauth_scopes)
        resource = _str(self.prm.get("resource")) if self.prm else ""
        where = [f"protected resource {resource}" if resource else f"MCP server {self.spec.url}"]
        if self.issuer:
            where.append(f"authorization server {self.issuer}")
        if self.asm is not None:
            token = _str(self.asm.get("token_endpoint"))
            authz = _str(self.asm.get("authorization_endpoint"))
            device = _str(self.asm.get("device_authorization_endpoint"))
            given = self.asm.get("grant_types_supported")
            grants = _strings(given) if isinstance(given, list) else list(_DEFAULT_GRANTS)
            flows: list[OAuthFlow] = []
            for g in dict.fromkeys(grants):
                if g == "authorization_code":
                    flows.append(OAuthFlow(FlowKind.AUTHORIZATION_CODE, authz, token, scopes=scopes))
                elif g == "client_credentials":
                    flows.append(OAuthFlow(FlowKind.CLIENT_CREDENTIALS, token_url=token, scopes=scopes))
                elif g == _DEVICE_CODE:
                    flows.append(OAuthFlow(FlowKind.DEVICE_CODE, device, token, scopes=scopes))
            if flows:
                return SecurityScheme(
                    OAUTH_SCHEME,
                    SchemeType.OAUTH2,
                    description="OAuth 2.1 per MCP authorization: "
                    + "; ".join(where)
                    + f"; grants from its metadata ({self.asm_url})",
                    flows=tuple(flows),
                )
            self.diags.append(
                MCP_AS_METADATA_UNAVAILABLE(
                    "/auth/authorization_server/document/grant_types_supported",
                    f"the authorization server offers none of the grants ramscope maps ({', '.join(grants)}); "
                    "which identity can obtain its tokens is unknown",
                    data={"scheme": OAUTH_SCHEME},
                )
            )
        elif self.issuer:
            self.diags.append(
                MCP_AS_METADATA_UNAVAILABLE(
                    "/auth/authorization_server",
                    f"the metadata of authorization server {self.issuer} could not be obtained "
                    "(RFC 8414 and OpenID Connect Discovery URLs tried); which grants it issues, so whether an "
                    "end user or the agent can obtain its tokens, is unknown",
                    data={"scheme": OAUTH_SCHEME},
                )
            )
        else:
            self.diags.append(
                MCP_OAUTH_INFERRED(
                    "/auth/challenges",
                    (
                        "OAuth is inferred from the Bearer challenge's scope= ("
                        + " ".join(self.challenge_scopes)[:_MAX_EVIDENCE]
                        + ")"
                        if self.challenge_scopes
                        else "OAuth is named by the tools' securitySchemes"
                    )
                    + "; no metadata describes the authorization server ("
                    + (self._tried() or "nothing tried")
                    + "), so which grants it issues, and whether an end user or the agent can use it, is unknown",
                    data={"scheme": OAUTH_SCHEME},
                )
            )
        # No metadata names the grants: no flow is invented (an OAuth scheme without flows fits no
        # identity for sure, so identity decisions say "unknown" rather than guess authorization code).
        return SecurityScheme(
            OAUTH_SCHEME,
            SchemeType.OAUTH2,
            description="OAuth per MCP authorization (inferred; grants unknown): " + "; ".join(where),
            inferred=True,
        )

    def _credential(self) -> SchemeRequirement:
        """A credential was demanded without OAuth metadata: name the kind the evidence shows."""
        status, step = self.status, _str(self.auth.get("step")) or "the first request"
        body = _str(self.auth.get("error_body"))
        said = _evidence_text(body) if body else ""
        tried = "; ".join(f"{_str(t.get('url'))}: {_str(t.get('outcome'))}" for t in self.prm_tried)
        evidence = f"HTTP {status} at {step}"
        evidence += (
            "; WWW-Authenticate: " + ", ".join(_str(c.get("scheme")) for c in self.challenges)
            if self.challenges
            else "; no WWW-Authenticate challenge"
        )
        evidence += f"; no protected-resource metadata (tried {tried or 'nothing'})"
        if said:
            evidence += f"; the server says: {said!r}"
        other = next((c for c in self.challenges if c is not self.bearer), None)
        if self.bearer is not None:
            # Under the 2025-03-26 revision a bare Bearer challenge without metadata *is* OAuth (clients
            # use /authorize and /token at the origin, which issue user tokens); other servers want a
            # static token. Nothing tells them apart, so who can obtain the token is unknown.
            scheme = SecurityScheme(
                BEARER_SCHEME,
                SchemeType.UNKNOWN,
                description=f"a Bearer token of unknown issuer: an OAuth token from the 2025-03-26 default "
                f"endpoints (/authorize, /token, for an end user) or a static token ({evidence})",
                http_scheme="bearer",
                inferred=True,
            )
        elif other is not None and _API_KEY_WORDS.search(_str(other.get("scheme"))):
            params = _dict(other.get("params"))
            name = _str(params.get("header") or params.get("name"))
            scheme = SecurityScheme(
                API_KEY_SCHEME,
                SchemeType.API_KEY,
                description=f"an API key ({evidence})",
                api_key_in=_str(params.get("in")) or ("header" if name else ""),
                api_key_name=name,
                inferred=True,
            )
        elif other is not None:
            http_scheme = _str(other.get("scheme")).lower()
            scheme = SecurityScheme(
                f"mcp-http-{http_scheme}"[:64],
                SchemeType.HTTP,
                description=f"HTTP {_str(other.get('scheme'))} authentication ({evidence})",
                http_scheme=http_scheme,
                inferred=True,
            )
        elif _API_KEY_WORDS.search(body):
            header = _KEY_HEADER.search(body)
            scheme = SecurityScheme(
                API_KEY_SCHEME,
                SchemeType.API_KEY,
                description=f"an API key ({evidence})",
                api_key_in="header" if header else "",
                api_key_name=header.group(1) if header else "",
                inferred=True,
            )
        else:
            scheme = SecurityScheme(
                CREDENTIAL_SCHEME,
                SchemeType.UNKNOWN,
                description=f"a credential of unknown kind ({evidence})",
                inferred=True,
            )
        self.schemes[scheme.name] = scheme
        self.diags.append(
            MCP_CREDENTIAL_INFERRED(
                "/auth",
                f"the server demands a credential but publishes no OAuth metadata; read as {scheme.type.value} "
                f"({evidence})",
                data={"scheme": scheme.name},
            )
        )
        return SchemeRequirement(scheme.name)

    def listing(self, tools_listed: bool, authorized: bool) -> dict[str, Any]:
        """The tools/list result's caching hints (2026-07-28: ``ttlMs``, ``cacheScope``), and whether ramscope
        listed anonymously; a ``private`` listing seen without a credential, of a server with some
        authorization (metadata, a challenge, a tool's securitySchemes), may lack tools."""
        meta = _dict(self.doc.get("list_meta"))
        ttl = meta.get("ttlMs")
        scope = meta.get("cacheScope")
        out: dict[str, Any] = {
            "ttl_ms": ttl if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0 else None,
            "cache_scope": scope[:40] if isinstance(scope, str) else None,
            "anonymous": tools_listed and self.status is None,
            "may_be_incomplete": False,
        }
        if out["anonymous"] and out["cache_scope"] == "private" and authorized:
            out["may_be_incomplete"] = True
            self.diags.append(
                MCP_PRIVATE_LISTING(
                    "/list_meta/cacheScope",
                    'the server\'s tools/list result is cacheScope "private": what it lists depends on the '
                    "caller's authorization, and ramscope listed without a credential, so tools a token would see "
                    "may be missing; a tool the card names that is not listed stays unverified",
                    hint="check the tool names against the server's documentation, or record a listing made with "
                    "the agent's token",
                    data={"affects": "all"},
                )
            )
        return out

    # ---- tools

    def tool_requirements(self, tool: Mapping[str, Any], ptr: str) -> Requirements | str | None:
        """The tool's own requirements, ``None`` if malformed, or "server" if it declares none."""
        own, meta = tool.get("securitySchemes"), _dict(tool.get("_meta")).get("securitySchemes")
        raw, where = (
            (own, join_pointer(ptr, "securitySchemes")) if own is not None else (meta, ptr + "/_meta/securitySchemes")
        )
        if own is not None and meta is not None and meta != own:
            self.diags.append(
                MCP_CONFLICTING_TOOL_SECURITY(
                    join_pointer(ptr, "securitySchemes"),
                    "the tool declares securitySchemes on itself and, differently, in _meta; its own are used",
                )
            )
        if raw is None:
            return "server"
        if not isinstance(raw, list):
            self.diags.append(
                INVALID_SECURITY(where, "securitySchemes is not an array; the tool's requirements are unknown")
            )
            return None
        alts: list[Requirement] = []
        for i, item in enumerate(raw):
            kind = _str(item.get("type")) if isinstance(item, dict) else ""
            if kind == "noauth":
                alts.append(())
            elif kind == "oauth2":
                assert isinstance(item, dict)
                scopes = item.get("scopes", [])
                if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
                    self.diags.append(
                        INVALID_SECURITY(
                            join_pointer(where, i, "scopes"),
                            "scopes are not an array of strings; the tool's requirements are unknown",
                        )
                    )
                    return None
                alts.append((self._oauth(scopes),))
            else:
                self.diags.append(
                    INVALID_SECURITY_SCHEME(
                        join_pointer(where, i),
                        f"security scheme type {kind[:40]!r} is not one MCP defines (noauth, oauth2); "
                        "that alternative is ignored",
                    )
                )
        if not alts:
            self.diags.append(
                INVALID_SECURITY(
                    where, "securitySchemes offers no alternative ramscope can read; the requirements are unknown"
                )
            )
            return None
        return _unique(alts)

    def tool(
        self, tool: Mapping[str, Any], ptr: str, server: Requirements | None, server_source: str = ""
    ) -> OperationEntry:
        name: str = tool["name"]
        if not _TOOL_NAME.match(name):
            self.diags.append(
                MCP_UNUSUAL_TOOL_NAME(
                    join_pointer(ptr, "name"),
                    f"tool name {for_terminal(name, max_len=80)} is not 1-128 characters of [A-Za-z0-9_.-]; "
                    "it is kept exactly as given",
                )
            )
        annotations = _dict(tool.get("annotations"))
        hints = {
            k: annotations[k] if isinstance(annotations.get(k), bool) else d for k, d in ANNOTATION_DEFAULTS.items()
        }
        extra_ann: dict[str, Any] = dict(hints)
        if isinstance(annotations.get("title"), str):
            extra_ann["title"] = _bounded(annotations["title"], _MAX_TITLE)[0]
        title = _bounded(_str(tool.get("title")) or _str(annotations.get("title")), _MAX_TITLE)[0]
        description, cut = _bounded(_str(tool.get("description")), _MAX_DESCRIPTION)
        extra: dict[str, Any] = {
            "annotations": extra_ann,
            "annotations_source": "server",
            "annotations_given": sorted(k for k in ANNOTATION_DEFAULTS if isinstance(annotations.get(k), bool)),
        }
        if title:
            extra["title"] = title
        if cut:
            extra["description_truncated"] = True
        own = self.tool_requirements(tool, ptr)
        reqs, source = (server, server_source_label(server_source)) if own == "server" else (own, "tool")
        assert not isinstance(reqs, str)
        return OperationEntry(
            key=name,
            operation_id=name,
            requirements=reqs,
            security_source=source,
            title=title,
            description=description,
            extra=extra,
            pointer=ptr,
        )

    # ---- the index

    def build(self, spec_version: str) -> SpecIndex:
        doc = self.doc
        tools_listed = doc.get("tools_listed") is not False
        server_reqs, server_source = self.server(tools_listed)
        entries: list[OperationEntry] = []
        seen: dict[str, str] = {}
        for i, tool in enumerate(_list(doc.get("tools"))):
            ptr = f"/tools/{i}"
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"]:
                self.diags.append(INVALID_OPERATION(ptr, "a tool without a name (or not an object) was skipped"))
                continue
            name = tool["name"]
            if name in seen:
                self.diags.append(
                    DUPLICATE_OPERATION_ID(
                        ptr,
                        f"tool {for_terminal(name, max_len=80)} is listed again (first at {seen[name]}); "
                        "the first listing is used",
                        data={"operation_id": name},
                    )
                )
                continue
            seen[name] = ptr
            entries.append(self.tool(tool, ptr, server_reqs, server_source))
        if self.oauth_used:
            self.schemes[OAUTH_SCHEME] = self.oauth_scheme()
        # A private listing can differ per caller only where some authorization exists to differ by.
        authorized = server_source != "none" or any(
            e.security_source == "tool" and e.requirements and () not in e.requirements for e in entries
        )
        listing = self.listing(tools_listed, authorized)
        baseline = _strings(self.prm.get("scopes_supported")) if self.prm is not None else None
        advertised = sorted(_TOKEN_SCOPES & {*(_strings(self.prm.get("scopes_supported")) if self.prm else []),
                                             *self.challenge_scopes})  # fmt: skip
        if advertised:
            self.diags.append(
                MCP_TOKEN_SCOPE_ADVERTISED(
                    "/auth",
                    f"the server names {', '.join(advertised)} in its metadata or challenge: token lifetime and "
                    "sign-in, listed apart from the tools' permissions and never counted in a blast radius",
                    data={"scopes": advertised, "affects": "root-security"},
                )
            )
        info = _dict(doc.get("server_info"))
        asm = self.asm or {}
        extra: dict[str, Any] = {
            "endpoint": _str(doc.get("endpoint")) or self.spec.url,
            "era": doc.get("era"),
            "protocol_version": doc.get("protocol_version"),
            "client_capabilities": doc.get("client_capabilities"),
            "server_info": {k: v for k, v in info.items() if isinstance(v, str)},
            "server_capabilities": _dict(doc.get("server_capabilities")),
            "tools_listed": tools_listed,
            "pages": doc.get("pages") if isinstance(doc.get("pages"), int) else 0,
            "server_requirements": reqs_to_json(server_reqs),
            "server_security_source": server_source,
            "baseline_scopes": baseline,
            "listing": listing,
            "auth": {
                "status": self.status,
                "challenge_schemes": [_str(c.get("scheme")) for c in self.challenges],
                "challenge_scope": self.challenge_scopes,
                "protected_resource_metadata_url": self.prm_url or None,
                "resource": _str(self.prm.get("resource")) if self.prm else None,
                "authorization_server": self.issuer or None,
                "authorization_server_metadata_url": self.asm_url or None,
                "grant_types_supported": _strings(asm.get("grant_types_supported")) or None,
                "token_endpoint": _str(asm.get("token_endpoint")) or None,
                "authorization_server_discovered_by": "origin (2025-03-26)" if self.legacy and self.asm else None,
                "metadata_unknown": self.metadata_unknown,
            },
            "transport": doc.get("transport") if isinstance(doc.get("transport"), str) else "streamable-http",
        }
        return SpecIndex(
            kind=SpecKind.MCP,
            url=self.spec.url,
            sha256=self.spec.sha256,
            title=_bounded(_str(info.get("title")) or _str(info.get("name")), _MAX_TITLE)[0],
            version=_bounded(_str(info.get("version")), _MAX_TITLE)[0],
            spec_version=spec_version,
            operations=tuple(entries),
            schemes=tuple(self.schemes[k] for k in sorted(self.schemes)),
            security_declared=server_reqs is not None or any(e.requirements is not None for e in entries),
            diagnostics=tuple(self.diags),
            extra=extra,
        )


def build_mcp_index(doc: Mapping[str, Any], spec: FetchedSpec, *, spec_version: str = "") -> SpecIndex:
    """Index an MCP capture (see the module docstring)."""
    return _Builder(doc, spec).build(spec_version)
