"""The one reader of a derived report for every exporter: per tier, identity and provider, what is granted.

Every ``export`` format is written from a :class:`Reading`, never from the report dict itself, so
that what a tier asks for, which provider a permission belongs to, and what cannot be exported are
decided once. Fail closed: an access whose permissions were not determined is never exported, and
is listed with its reason; the report of an invalid card reads as an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from ...errors import InputError
from ...providers.authserver import GOOGLE, MICROSOFT

__all__ = [
    "IDENTITIES",
    "PROVIDER_NAMES",
    "TIERS",
    "AccessRow",
    "Narrower",
    "NotExpressible",
    "Permission",
    "Reading",
    "provider_of",
    "read_report",
]

TIERS = ("REQUIRED", "RECOMMENDED", "OPTIONAL")
IDENTITIES = ("END_USER", "AGENT")

#: Provider keys as the exporters name them, and the words a person reads.
PROVIDER_NAMES = {
    "microsoft-graph": "Microsoft Graph",
    "google": "Google",
    "slack": "Slack",
    "github": "GitHub",
    "hubspot": "HubSpot",
    "atlassian": "Atlassian",
    "mcp": "an MCP server's authorization server",
    "other": "another authorization server",
}


class NotExpressible(InputError):
    """The card needs nothing the format can express (exit 2, one line saying what it can express)."""

    code = "not-expressible"


@dataclass(frozen=True)
class Permission:
    """One scope (or non-scope credential) a tier asks for, for one identity."""

    #: The scope as the report spells it; ``None`` for a credential (an API key, HTTP auth ...).
    scope: str | None
    #: The provider's short name for people (``Mail.Read``), else the scope, else the scheme.
    name: str
    namespace: str
    scheme: str
    type: str
    identity: str
    #: The lowest tier that asks for it: ``REQUIRED``, else ``RECOMMENDED``, else ``OPTIONAL``.
    tier: str
    provider: str
    description: str | None
    admin_consent: bool
    accesses: tuple[str, ...]

    @property
    def required(self) -> bool:
        return self.tier == "REQUIRED"


@dataclass(frozen=True)
class Narrower:
    """A narrower alternative the derivation offered beside an access's pick, with its conditions."""

    scopes: tuple[str, ...]
    conditions: tuple[str, ...]
    limits: tuple[str, ...]


@dataclass(frozen=True)
class AccessRow:
    """What the exporters need of one access."""

    id: str
    identity: str
    necessity: str
    confirmation_required: bool
    justification: str
    complete: bool
    reason: str | None
    kind: str | None
    resource: str
    display_name: str
    server: str
    #: The API's base URLs (OpenAPI ``servers``, Discovery ``rootUrl``); ``()`` when the report names none.
    servers: tuple[str, ...]
    tool: str | None
    tool_verified: bool
    annotations: Mapping[str, bool]
    scopes: tuple[str, ...] | None
    scope_names: Mapping[str, str]
    narrower: tuple[Narrower, ...]
    #: GitHub: the classic OAuth scopes of the other token family, when the pick is fine-grained
    #: (``None`` when unknown or not GitHub), and why the classic family cannot do it, if it cannot.
    classic_scopes: tuple[str, ...] | None
    classic_why: str | None
    token_family: str | None


@dataclass(frozen=True)
class Reading:
    """A report, read once: what each tier (up to ``tier``) asks for, per identity and provider."""

    card_name: str
    card_source: str
    card_sha256: str
    complete: bool
    #: The highest tier exported (tiers are cumulative); ``identity`` the one exported, or ``None`` for both.
    tier: str
    identity: str | None
    permissions: tuple[Permission, ...]
    accesses: tuple[AccessRow, ...]

    def resource_servers(self, access_id: str) -> tuple[str, ...]:
        """Where an access's calls go: an MCP or A2A server's URL, else the API's base URLs (else its spec's)."""
        a = self.access(access_id)
        if a is None:
            return ()
        if a.kind in ("mcp", "a2a") or not a.servers:
            return (a.server,) if a.server else ()
        return a.servers

    def of(self, *providers: str) -> list[Permission]:
        return [p for p in self.permissions if p.provider in providers]

    def in_tiers(self) -> list[AccessRow]:
        """The accesses of the exported tiers and identity, in card order."""
        top = TIERS.index(self.tier)
        return [
            a
            for a in self.accesses
            if a.necessity in TIERS
            and TIERS.index(a.necessity) <= top
            and (self.identity is None or a.identity == self.identity)
        ]

    def incomplete(self) -> list[AccessRow]:
        return [a for a in self.in_tiers() if not a.complete]

    def access(self, access_id: str) -> AccessRow | None:
        return next((a for a in self.accesses if a.id == access_id), None)


def _dict(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _strs(v: Any) -> tuple[str, ...]:
    return tuple(x for x in _list(v) if isinstance(x, str))


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def provider_of(namespace: str, scheme: str, kinds: Sequence[str | None] = ()) -> str:
    """The provider whose authorization server grants a permission (``PROVIDER_NAMES``' keys).

    By the canonical server the report names (one per provider however its documents spell the
    token URL), then the catalog schemes ramscope names itself; a server the provider tables do not
    know is an MCP server's when every access it serves is an MCP tool, else ``other``.
    """
    if namespace.startswith(MICROSOFT) or scheme.startswith("microsoft-graph"):
        return "microsoft-graph"
    if namespace == GOOGLE:
        return "google"
    host = _host(namespace)
    if host == "slack.com" or host.endswith(".slack.com"):
        return "slack"
    if namespace == "https://github.com" or scheme.startswith("github-"):
        return "github"
    # HubSpot's token endpoint (api.hubapi.com/oauth/v1/token, /oauth/2026-03/token) and its authorize
    # page (app.hubspot.com, app-eu1.hubspot.com); Atlassian's one server for Jira, Confluence and the rest.
    if host in {"api.hubapi.com", "hubspot.com"} or host.endswith(".hubspot.com"):
        return "hubspot"
    if host == "auth.atlassian.com":
        return "atlassian"
    if kinds and all(k == "mcp" for k in kinds):
        return "mcp"
    return "other"


def _access_row(a: Mapping[str, Any]) -> AccessRow:
    target = _dict(a.get("target"))
    hints = _dict(target.get("hints"))
    annotations = {k: v for k, v in _dict(hints.get("annotations")).items() if isinstance(v, bool)}
    choice = _dict(a.get("choice"))
    narrower = tuple(
        Narrower(_strs(n.get("scopes")), _strs(n.get("conditions")), _strs(n.get("limits")))
        for n in _list(choice.get("narrower"))
        if isinstance(n, Mapping)
    )
    family = _dict(choice.get("token_family"))
    picked = family.get("picked") if isinstance(family.get("picked"), str) else None
    other = _dict(family.get("other"))
    scopes = a.get("scopes")
    classic: tuple[str, ...] | None = None
    classic_why: str | None = None
    if picked == "classic" and isinstance(scopes, list):
        classic = _strs(scopes)
    elif other.get("family") == "classic":
        classic = _strs(other.get("scopes")) if isinstance(other.get("scopes"), list) else None
        classic_why = other.get("why") if isinstance(other.get("why"), str) else None
    tool = target.get("tool") if target.get("kind") == "mcp" else None
    return AccessRow(
        id=str(a.get("id") or ""),
        identity=str(a.get("identity") or ""),
        necessity=str(a.get("necessity") or ""),
        confirmation_required=a.get("confirmation_required") is True,
        justification=str(a.get("justification") or ""),
        complete=a.get("complete") is True,
        reason=a.get("reason") if isinstance(a.get("reason"), str) else None,
        kind=target.get("kind") if isinstance(target.get("kind"), str) else None,
        resource=str(a.get("resource") or ""),
        display_name=str(a.get("display_name") or ""),
        server=str(a.get("spec_url") or ""),
        servers=_strs(target.get("servers")),
        tool=tool if isinstance(tool, str) and tool else None,
        tool_verified=target.get("matched_by") != "tool_name_unverified" and hints.get("verified") is not False,
        annotations=annotations,
        scopes=_strs(scopes) if isinstance(scopes, list) else None,
        scope_names={k: v for k, v in _dict(a.get("scope_names")).items() if isinstance(v, str)},
        narrower=narrower,
        classic_scopes=classic,
        classic_why=classic_why,
        token_family=picked,
    )


def read_report(report: Mapping[str, Any], *, tier: str = "OPTIONAL", identity: str | None = None) -> Reading:
    """Read a report for the exporters: the tiers up to ``tier`` (cumulative), one identity or both.

    Raises :class:`InputError` for the report of an invalid card (nothing is exported from it) and
    for a tier or identity that is not one of the report's.
    """
    card = _dict(report.get("card"))
    source = str(card.get("source") or "")
    if card.get("valid") is not True:
        raise InputError("the card is invalid (see `ramscope validate`): nothing is exported from it", source=source)
    if tier not in TIERS:
        raise InputError(f"--tier {tier!r} is not one of {', '.join(TIERS)}")
    if identity is not None and identity not in IDENTITIES:
        raise InputError(f"--identity {identity!r} is not one of {', '.join(IDENTITIES)}")
    accesses = tuple(_access_row(a) for a in _list(report.get("accesses")) if isinstance(a, Mapping))
    kind_of = {a.id: a.kind for a in accesses}
    tiers = _dict(report.get("tiers"))
    seen: dict[tuple[str, str | None, str, str], Permission] = {}
    for name in TIERS[: TIERS.index(tier) + 1]:
        for ident in IDENTITIES:
            if identity is not None and ident != identity:
                continue
            for p in _list(_dict(_dict(tiers.get(name)).get(ident)).get("permissions")):
                if not isinstance(p, Mapping):
                    continue
                scope = p.get("scope") if isinstance(p.get("scope"), str) else None
                namespace, scheme = str(p.get("namespace") or ""), str(p.get("scheme") or "")
                key = (ident, scope, namespace, scheme)
                served = _strs(p.get("accesses"))
                if key in seen:
                    # Cumulative tiers: the first tier that asks for it is the one it belongs to;
                    # a higher tier may serve more accesses with it.
                    old = seen[key]
                    more = tuple(x for x in served if x not in old.accesses)
                    if more:
                        seen[key] = replace(old, accesses=old.accesses + more)
                    continue
                short = p.get("name") if isinstance(p.get("name"), str) and p.get("name") else None
                seen[key] = Permission(
                    scope=scope,
                    name=short or scope or scheme,
                    namespace=namespace,
                    scheme=scheme,
                    type=str(p.get("type") or ""),
                    identity=ident,
                    tier=name,
                    provider=provider_of(namespace, scheme, [kind_of.get(x) for x in served]),
                    description=p.get("description") if isinstance(p.get("description"), str) else None,
                    admin_consent=p.get("admin_consent") is True,
                    accesses=served,
                )
    return Reading(
        card_name=str(card.get("name") or ""),
        card_source=source,
        card_sha256=str(card.get("sha256") or ""),
        complete=report.get("complete") is True,
        tier=tier,
        identity=identity,
        permissions=tuple(seen.values()),
        accesses=accesses,
    )
