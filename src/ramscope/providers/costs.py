"""What a permission costs: the provider's class of it and what requesting it triggers.

Two agents can ask for equally narrow permissions and pay very different prices: Google classes
every scope non-sensitive, sensitive or restricted (a sensitive one needs Google's verification, a
restricted one a yearly third-party security assessment too), Microsoft Graph permissions may need an
administrator's consent, some Slack scopes keep an app out of the Slack Marketplace, Shopify fields
that read protected customer data need Shopify's review for a public app. That price is provider data,
compiled like the universes and catalogs:

* ``data/costs.json`` is built by ``scripts/build_costs.py`` from the providers' own pages, vendored
  under ``vendor/costs/`` (each with its URL, date and license) and a reviewed exceptions table
  (``vendor/costs/exceptions.json``, each entry quoting the page it rests on);
* Microsoft Graph's admin consent is read from the shipped Graph catalog (``requiresAdminConsent``),
  not copied.

What no page classes is *unclassified*: :func:`cost_of` returns ``None`` and the report says so, never
"costs nothing".

Triggers (stable names, ``TRIGGERS``): ``google-verification``, ``google-security-assessment``,
``admin-consent``, ``marketplace-ineligible``, ``review-required``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import orjson

from .authserver import GOOGLE, MICROSOFT, canonical_server

__all__ = [
    "FORMAT",
    "PROVIDERS",
    "TRIGGERS",
    "Cost",
    "cost_of",
    "cost_table_version",
    "costs_summary",
    "field_cost",
    "google_scope_class",
    "provider_of",
    "unclassified_reason",
]

FORMAT = 1

#: Trigger -> what it means, in words a report can quote.
TRIGGERS: Mapping[str, str] = {
    "google-verification": "Google's OAuth app verification of a sensitive or restricted scope",
    "google-security-assessment": "Google's yearly third-party security assessment of a restricted scope",
    "admin-consent": "an administrator of the user's organisation must consent",
    "marketplace-ineligible": "keeps the app out of the Slack Marketplace",
    "review-required": "the provider must review and approve the app's use of it",
}

#: Provider name -> the canonical authorization server its permissions are granted by.
PROVIDERS: Mapping[str, str] = {
    "google": GOOGLE,
    "microsoft-graph": MICROSOFT,
    "slack": "https://slack.com",
    "shopify": "https://shopify.com",
    "hubspot": "https://app.hubspot.com",
}


@dataclass(frozen=True, slots=True)
class Cost:
    """The provider's class of one permission and what requesting it triggers."""

    #: ``google``, ``microsoft-graph``, ``slack``, ``shopify``.
    provider: str
    permission: str
    #: The provider's own class (``non-sensitive``, ``sensitive``, ``restricted``; ``admin-consent`` /
    #: ``user-consent``; ``marketplace-ineligible``; ``protected-customer-data-level-2``).
    cls: str
    #: What requesting it triggers (names of ``TRIGGERS``); ``()`` when it triggers nothing.
    triggers: tuple[str, ...]
    #: The page the class was read from.
    source: str
    #: When the trigger holds only under a condition the provider states (Google's assessment: when
    #: restricted data is stored on or sent through servers), the condition; else ``""``.
    condition: str = ""
    #: ``page`` (read from the provider's page by the build), ``exception`` (the reviewed table) or
    #: ``catalog:<name>`` (read from a shipped catalog).
    basis: str = "page"

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "class": self.cls,
            "triggers": list(self.triggers),
            "source": self.source,
            "condition": self.condition or None,
            "basis": self.basis,
        }


def _raw() -> bytes:
    return (resources.files(__package__) / "data" / "costs.json").read_bytes()


@cache
def _table() -> dict[str, Any]:
    doc = orjson.loads(_raw())
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("kind") != "costs":
        raise ValueError("providers/data/costs.json: not a cost table of format 1")
    return doc


@cache
def cost_table_version() -> str:
    """The compiled table's version and content hash (reuse keys and reports name it)."""
    return f"{_table().get('version', '')}+{hashlib.sha256(_raw()).hexdigest()[:12]}"


def costs_summary() -> dict[str, Any]:
    """What a report names of the cost snapshot it used: ``{name, version, providers, source}``."""
    t = _table()
    return {
        "name": "costs",
        "version": cost_table_version(),
        "providers": sorted(t["providers"]),
        "source": "scripts/build_costs.py from vendor/costs (see its SOURCES.md)",
    }


#: Provider -> the authorization servers (canonical, by prefix) that grant its permissions: a spec
#: names the token or authorization URL, and the report's namespace is its canonical form.
_SERVERS: Mapping[str, tuple[str, ...]] = {
    "slack": ("https://slack.com",),
    "shopify": ("https://shopify.com",),
    "hubspot": ("https://app.hubspot.com", "https://api.hubapi.com", "https://app-eu1.hubspot.com"),
}
#: Shopify's OAuth endpoints are each shop's own (``https://{shop}.myshopify.com/admin/oauth/...``).
_SHOPIFY_SHOP = re.compile(r"^https://[a-z0-9][a-z0-9-]{0,62}\.myshopify\.com/admin/oauth(/|$)")


def provider_of(server_or_provider: str) -> str | None:
    """The provider name for a provider name or (any spelling of) an authorization server URL."""
    if server_or_provider in PROVIDERS:
        return server_or_provider
    server = canonical_server(server_or_provider) if "://" in server_or_provider else server_or_provider
    for name, srv in PROVIDERS.items():
        for prefix in _SERVERS.get(name, (srv,)):
            if server == prefix or server.startswith(prefix + "/"):
                return name
    if _SHOPIFY_SHOP.match(server):
        return "shopify"
    return None


def cost_of(
    server_or_provider: str, permission: str, *, scheme: str | None = None, token: str | None = None
) -> Cost | None:
    """What requesting ``permission`` costs, or ``None`` when the provider's pages do not class it.

    ``server_or_provider``: a provider name (``"google"``, ``"microsoft-graph"``, ``"slack"``) or the
    authorization server that grants the permission (any URL spelling: Google's three endpoint URLs
    are one server; the report's ``scope_servers`` values are what to pass).

    ``scheme``: for Microsoft Graph, the catalog scheme of the permission
    (``microsoft-graph-application``, ``microsoft-graph-delegated-work`` ...): an application
    permission and its delegated namesake differ in consent; without it, the delegated forms are read
    and an application-only permission is read as the application one.

    ``token``: for Slack, ``"user"`` or ``"bot"`` (Slack's Marketplace rule on ``*:history`` is a
    user token's); ``None`` reads a token-conditioned rule as applying, with its condition stated.

    ``None`` means unclassified (no page of the provider classes it), never "costs nothing"; a
    permission that costs nothing has a :class:`Cost` with ``triggers == ()``.
    """
    name = provider_of(server_or_provider)
    if name is None:
        return None
    if name == "microsoft-graph":
        return _graph(permission, scheme)
    entry = _table()["providers"].get(name)
    if not isinstance(entry, dict):
        return None
    hit = entry.get("permissions", {}).get(permission)
    if hit is not None:
        return _cost(name, permission, hit)
    for rule in entry.get("patterns", ()):
        if not fnmatch.fnmatchcase(permission, rule["pattern"]):
            continue
        want = rule.get("token")
        if want and token is not None and token != want:
            continue
        cond = rule.get("condition", "")
        if want and token is None:
            cond = cond or f"on a {want} token"
        return _cost(name, permission, {**rule, "condition": cond})
    return None


def google_scope_class(scope: str) -> str | None:
    """Google's class of ``scope`` (``non-sensitive``, ``sensitive``, ``restricted``), or ``None`` when
    no Google page ramscope read classes it (the export's consent-screen draft reads this)."""
    c = cost_of("google", scope)
    return c.cls if c is not None else None


@cache
def _google_unclassified() -> dict[str, str]:
    apis = _table()["providers"].get("google", {}).get("apis", {})
    return {scope: api for api, rec in apis.items() for scope in rec.get("unclassified", ())}


def unclassified_reason(provider: str | None, permission: str) -> str:
    """Why ``permission`` has no cost, in words a report can carry (per API for Google)."""
    if provider is None:
        return "ramscope has no cost data for this provider"
    if provider == "google":
        api = _google_unclassified().get(permission)
        if api is not None:
            apis = _table()["providers"]["google"]["apis"]
            rec = apis.get(api, {})
            return (
                f"no Google page ramscope read classes it: {rec.get('classified', 0)} of the "
                f"{rec.get('scopes', 0)} scopes of the {api} API are classed (vendor/costs/SOURCES.md)"
            )
    if provider == "slack":
        return "Slack's Marketplace guidelines do not name this scope"
    return f"no page of {provider} that ramscope read classes this permission"


def field_cost(provider: str, field: str, required_access: str | None = None) -> Cost | None:
    """What calling a GraphQL root field costs beyond its scopes (Shopify's protected customer data).

    ``field`` is ``Type.field`` as the schema names it (``QueryRoot.shopifyqlQuery``). The compiled
    table lists the fields whose ``requiredAccess`` says "Level N access to Customer data" in the
    shipped schema; ``required_access`` (the text of the schema the run read), when given, is read the
    same way, so a newer schema's level is not missed."""
    entry = _table()["providers"].get(provider)
    if not isinstance(entry, dict):
        return None
    if required_access:
        from ._costs_text import customer_data_level  # noqa: PLC0415 - only for GraphQL schemas

        level = customer_data_level(required_access)
        if level is not None:
            return Cost(
                provider,
                field,
                f"protected-customer-data-level-{level}",
                ("review-required",),
                entry.get("fields_source", ""),
                "for an app distributed publicly (custom apps are granted at install)",
            )
    hit = entry.get("fields", {}).get(field)
    return _cost(provider, field, hit) if hit is not None else None


def _cost(provider: str, permission: str, hit: Mapping[str, Any]) -> Cost:
    return Cost(
        provider,
        permission,
        str(hit["class"]),
        tuple(hit.get("triggers", ())),
        str(hit.get("source", "")),
        str(hit.get("condition", "") or ""),
        str(hit.get("basis", "page")),
    )


_GRAPH_SOURCE = "https://github.com/microsoftgraph/microsoft-graph-devx-content (permissions.json requiresAdminConsent)"


def _graph(permission: str, scheme: str | None) -> Cost | None:
    from . import catalog  # noqa: PLC0415 - the Graph catalog is loaded only when a Graph permission is

    cat = catalog("microsoft-graph")
    if cat is None:
        return None
    order = (
        [scheme]
        if scheme
        else ["microsoft-graph-delegated-work", "microsoft-graph-delegated-personal", "microsoft-graph-application"]
    )
    for s in order:
        perm = cat.permission(s, permission)
        if perm is None and not permission.startswith("https://"):
            perm = cat.permission(s, "https://graph.microsoft.com/" + permission)
        if perm is not None:
            return Cost(
                "microsoft-graph",
                permission,
                "admin-consent" if perm.admin_consent else "user-consent",
                ("admin-consent",) if perm.admin_consent else (),
                _GRAPH_SOURCE,
                basis=cat.label,
            )
    return None
