"""What governance reads off a permission report: one place that knows the report's shape.

Everything here takes the report's JSON form (``Report.to_dict()`` or a saved ``derive``
report) and never the spec store: governance judges what a derivation found, it does not
derive. Fields other stages add over time are read with ``.get`` and a fallback to the
fields every report has, so an older report is still judged (with less precision, said).

Fail closed: an access whose effect cannot be told (unresolved, an A2A delegation, an MCP
tool whose annotations are unknown) is ``UNKNOWN``, which rules treat as possibly writing.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "IDENTITIES",
    "READ_METHODS",
    "TIERS",
    "Delegation",
    "Effect",
    "TierRequest",
    "access_blast_radius",
    "access_effect",
    "access_hosts",
    "admin_consent",
    "alternative_operations",
    "api_hosts",
    "delegations",
    "host_of",
    "is_write_permission",
    "requirements_source",
    "scope_server",
    "spec_by_resource",
    "tier_blast_radius",
    "tier_requests",
]

TIERS = ("REQUIRED", "RECOMMENDED", "OPTIONAL")
IDENTITIES = ("END_USER", "AGENT")
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
_DESTRUCTIVE_METHODS = frozenset({"DELETE"})
_WRITE_METHODS = frozenset({"POST", "PUT", "PATCH"})


class Effect(enum.IntEnum):
    """What an access may do to the user's data; ordered, so ``max`` gives the stronger."""

    READ = 0
    WRITE = 1
    DESTRUCTIVE = 2
    #: Cannot be told: treated as possibly destructive by every rule that asks.
    UNKNOWN = 3

    @property
    def label(self) -> str:
        return self.name.lower()


def _dict(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _list(v: Any) -> list[Any]:
    return list(v) if isinstance(v, list) else []


def host_of(url: Any) -> str:
    """The lower-cased host of ``url`` ("" when there is none)."""
    if not isinstance(url, str) or not url:
        return ""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def spec_by_resource(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for s in _list(report.get("specs")):
        for rid in _list(_dict(s).get("resources")) or [_dict(s).get("resource")]:
            if isinstance(rid, str):
                out.setdefault(rid, s)
    return out


def access_hosts(access: Mapping[str, Any], spec: Mapping[str, Any] | None = None) -> list[str]:
    """Every host the access's resource is reached through: its spec URL and where that redirected."""
    hosts = [host_of(access.get("spec_url"))]
    if spec:
        hosts.append(host_of(spec.get("final_url")))
    return [h for h in dict.fromkeys(hosts) if h]


def api_hosts(access: Mapping[str, Any], spec: Mapping[str, Any] | None = None) -> list[str] | None:
    """Every host the access's requests (and so the user's data) go to, or ``None`` when the
    report cannot tell: an HTTP API's server URLs (OpenAPI ``servers``, Discovery ``rootUrl``; an
    OpenAPI 3 spec naming none is served where the spec is), an MCP server's or A2A agent's own
    endpoint. Not the host its spec was fetched from: a spec on an allowed host may describe an
    API anywhere. An unresolved access is judged by where its resource was reached."""
    target = access.get("target")
    if not isinstance(target, Mapping):
        return access_hosts(access, spec)
    kind = target.get("kind")
    if kind == "mcp":
        return access_hosts(access, spec)
    if kind == "a2a":
        fp = _dict(access.get("footprint"))
        return [h for h in dict.fromkeys([*access_hosts(access, spec), host_of(fp.get("card_url"))]) if h]
    servers = target.get("servers")
    if not isinstance(servers, list):
        # A report of this version names the servers of these kinds; without them it is an older one.
        # Other kinds (GraphQL) say nothing of their endpoint's host but where the schema was read.
        return None if kind in ("openapi", "google-discovery", "stone") else access_hosts(access, spec)
    hosts = [h for h in dict.fromkeys(host_of(u) for u in servers) if h]
    if not servers and kind == "openapi":
        return access_hosts(access, spec)
    return hosts or None


def is_write_permission(scope: str) -> bool:
    """A catalog permission that writes: GitHub's ``contents:write``, ``issues:write`` ..."""
    return scope.endswith((":write", ":admin"))


def access_effect(access: Mapping[str, Any]) -> tuple[Effect, str]:
    """The strongest thing the access may do, and why ramscope thinks so."""
    target = access.get("target")
    perms = [s for s in _list(access.get("scopes")) if isinstance(s, str) and is_write_permission(s)]
    by_perm = (Effect.WRITE, f"catalog write permission {perms[0]}") if perms else None
    if not isinstance(target, Mapping):
        return Effect.UNKNOWN, "the access did not resolve to an operation"
    kind = target.get("kind")
    found: tuple[Effect, str]
    if kind == "mcp":
        ann = _dict(_dict(target.get("hints")).get("annotations"))
        if not ann:
            found = Effect.UNKNOWN, "the MCP tool's annotations are unknown (MCP's default: may be destructive)"
        elif ann.get("readOnlyHint") is True:
            found = Effect.READ, "MCP readOnlyHint"
        elif ann.get("destructiveHint") is not False:
            found = Effect.DESTRUCTIVE, "MCP destructiveHint (or its default, true)"
        else:
            found = Effect.WRITE, "MCP tool not read-only (readOnlyHint false), not destructive"
    elif kind == "a2a":
        found = Effect.UNKNOWN, "a remote A2A agent may do anything its own manifest allows"
    else:
        method = str(target.get("method") or "").upper()
        if method in READ_METHODS:
            found = Effect.READ, f"HTTP {method}"
        elif method in _DESTRUCTIVE_METHODS:
            found = Effect.DESTRUCTIVE, f"HTTP {method}"
        elif method in _WRITE_METHODS:
            found = Effect.WRITE, f"HTTP {method}"
        else:
            found = Effect.UNKNOWN, f"HTTP method {method or 'unknown'}"
    if by_perm is not None and by_perm[0] > found[0]:
        return by_perm
    return found


def access_blast_radius(access: Mapping[str, Any]) -> tuple[int | None, str]:
    """Operations the access's choice authorizes: across its authorization server's whole universe
    when the report says (``universe_operations``), else within the spec (``granted_operations``)."""
    br = _dict(access.get("blast_radius"))
    for key, label in (("universe_operations", "universe"), ("granted_operations", "spec")):
        v = br.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            return v, label
    return None, "unknown"


def tier_blast_radius(tier_identity: Mapping[str, Any]) -> int | None:
    for key in ("universe_blast_radius", "blast_radius"):
        v = tier_identity.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def scope_server(access: Mapping[str, Any], scope: str) -> str | None:
    """The canonical authorization server of ``scope`` when the report names it."""
    v = _dict(access.get("scope_servers")).get(scope)
    return v if isinstance(v, str) else None


def requirements_source(access: Mapping[str, Any]) -> str:
    v = access.get("requirements_source")
    return v if isinstance(v, str) else "spec"


def admin_consent(access: Mapping[str, Any]) -> list[str] | None:
    """Scopes of this access needing an administrator's approval; ``None``: the report does not say."""
    v = access.get("admin_consent")
    if isinstance(v, list):
        return [s for s in v if isinstance(s, str)]
    if isinstance(v, bool):
        return list(_list(access.get("scopes"))) if v else []
    return None


@dataclass(frozen=True, slots=True)
class TierRequest:
    """A scope or credential a cumulative tier requests for one identity that no access of that
    identity in the tier picked itself: the tier's own addition (a shared, wider scope that
    satisfies several accesses at once). ``scopes`` prints it and the consent screen asks for it,
    so rules judge it as well as each access's own pick."""

    tier: str
    identity: str
    name: str
    #: "scope" or "credential" (a credential is judged by its scheme name).
    kind: str
    #: The authorization server (grant namespace) when the report names it.
    namespace: str | None
    #: True/False when the report says whether an administrator must approve it; None: unknown.
    admin_consent: bool | None
    #: The accesses of the tier it serves (the report's ``permissions[].accesses``; else all members).
    accesses: tuple[str, ...]


def _picked(access: Mapping[str, Any]) -> set[str]:
    out = {s for s in _list(access.get("scopes")) if isinstance(s, str)}
    out |= {str(c["scheme"]) for c in _list(access.get("credentials")) if isinstance(_dict(c).get("scheme"), str)}
    return out


def tier_requests(report: Mapping[str, Any]) -> Iterator[TierRequest]:
    """Every scope and credential a tier requests beyond its accesses' own picks, per tier and identity."""
    tiers = _dict(report.get("tiers"))
    accesses = {str(_dict(a).get("id")): _dict(a) for a in _list(report.get("accesses"))}
    for tier in TIERS:
        t = _dict(tiers.get(tier))
        for ident in IDENTITIES:
            it = _dict(t.get(ident))
            members = [str(x) for x in _list(it.get("accesses")) if isinstance(x, str)]
            picked: set[str] = set()
            for m in members:
                picked |= _picked(accesses.get(m, {}))
            perms: dict[str, Mapping[str, Any]] = {}
            for p in _list(it.get("permissions")):
                name = _dict(p).get("scope") or _dict(p).get("scheme")
                if isinstance(name, str):
                    perms.setdefault(name, _dict(p))
            requested = [(s, "scope") for s in _list(it.get("scopes")) if isinstance(s, str)]
            requested += [
                (str(c["scheme"]), "credential")
                for c in _list(it.get("credentials"))
                if isinstance(_dict(c).get("scheme"), str)
            ]
            for name, kind in dict.fromkeys(requested):
                if name in picked:
                    continue
                p = perms.get(name, {})
                admin = p.get("admin_consent")
                served = [x for x in _list(p.get("accesses")) if isinstance(x, str)] or members
                ns = p.get("namespace")
                yield TierRequest(
                    tier,
                    ident,
                    name,
                    kind,
                    ns if isinstance(ns, str) else None,
                    admin if isinstance(admin, bool) else None,
                    tuple(served),
                )


def alternative_operations(access: Mapping[str, Any], names: set[str]) -> tuple[int | None, str]:
    """Operations authorized by the access's alternative made of exactly ``names`` (scopes and
    credential schemes), across the universe when the report says, else within the spec."""
    for raw in _list(access.get("alternatives")):
        alt = _dict(raw)
        got = {s for s in _list(alt.get("scopes")) if isinstance(s, str)}
        got |= {str(_dict(c).get("scheme")) for c in _list(alt.get("credentials")) if _dict(c).get("scheme")}
        if got != names:
            continue
        for key, label in (("universe_operations", "universe"), ("granted_operations", "spec")):
            v = alt.get(key)
            if isinstance(v, int) and not isinstance(v, bool):
                return v, label
    return None, "unknown"


@dataclass(frozen=True, slots=True)
class Delegation:
    """A remote agent reached, directly or through others, from one access of the top card."""

    #: The top-level access through which it is reached (findings point at it).
    access: str
    chain: tuple[str, ...]
    depth: int
    footprint: Mapping[str, Any]

    @property
    def truncated(self) -> bool:
        return bool(self.footprint.get("truncated"))

    @property
    def cycle(self) -> bool:
        return "cycle" in self.footprint


def delegations(report: Mapping[str, Any], *, _top: str = "", _chain: Sequence[str] = ()) -> Iterator[Delegation]:
    """Every A2A footprint in the report, nested ones included, depth-first."""
    for a in _list(report.get("accesses")):
        fp = _dict(a).get("footprint")
        if not isinstance(fp, Mapping):
            continue
        top = _top or str(a.get("id", ""))
        url = str(fp.get("card_url", ""))
        chain = (*_chain, url)
        depth = fp.get("depth")
        yield Delegation(top, chain, depth if isinstance(depth, int) else len(chain), fp)
        nested = fp.get("report")
        if isinstance(nested, Mapping):
            yield from delegations(nested, _top=top, _chain=chain)
