"""``export --format atlassian-app``: a Forge app's ``permissions.scopes``, a 3LO app's scopes per product.

Shapes (Atlassian's developer documentation):

- Forge: ``manifest.yml``'s ``permissions`` section, ``scopes`` a list of OAuth 2.0 scopes
  (https://developer.atlassian.com/platform/forge/manifest-reference/permissions);
- OAuth 2.0 (3LO): the app's scopes are added per product API in the developer console (Permissions),
  and the authorization URL asks for them (``https://auth.atlassian.com/authorize?audience=api.atlassian.com
  &client_id=...&scope=...&redirect_uri=...&state=...&response_type=code&prompt=consent``,
  https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/).

Both take the same scope strings, Jira's, Confluence's and the other products' ("Jira scopes for OAuth
2.0 (3LO) and Forge apps"). Neither has optional scopes: everything the exported tiers ask for is
listed, and ``tiers`` says which ones only optional tiers need (a 3LO app may leave them out of the
authorization URL until needed, as ``authorization_url.required`` does). ``offline_access`` (refresh
tokens) is a token's lifetime, not a permission: ramscope never derives it, ``oauth_app.note`` says when to
add it. The ``YOUR_...`` words of the authorization URL are Atlassian's own placeholders.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ._out import envelope, left_out, require
from ._read import Permission, Reading

__all__ = ["AUTHORIZE", "FORMAT", "export_atlassian", "product_of"]

FORMAT = "atlassian-app"
AUTHORIZE = "https://auth.atlassian.com/authorize"
#: Classic scopes' name prefixes (``read:jira-work``, ``read:servicedesk-request``, ``write:confluence-content``),
#: longest first: the product whose API lists them.
_CLASSIC = (
    ("servicemanagement", "jira-service-management"),
    ("servicedesk", "jira-service-management"),
    ("jira", "jira"),
    ("confluence", "confluence"),
)
#: The User identity API's scopes (``read:me``, ``read:account``).
_IDENTITY = frozenset({"me", "account"})


def product_of(scope: str) -> str | None:
    """The Atlassian product whose API lists a scope, or ``None`` when its name does not tell.

    A granular scope names it last (``read:page:confluence``, ``read:board-scope:jira-software``,
    ``write:request:jira-service-management``); a classic one in its name (``read:jira-work``)."""
    parts = scope.split(":")
    if len(parts) >= 3 and parts[-1]:
        return parts[-1]
    if len(parts) != 2:
        return None
    name = parts[1]
    if name in _IDENTITY:
        return "identity"
    for prefix, product in _CLASSIC:
        if name.startswith(prefix):
            return product
    return None


def _authorize(scopes: list[str]) -> str:
    scope = quote(" ".join(scopes), safe=":")
    return (
        f"{AUTHORIZE}?audience=api.atlassian.com&client_id=YOUR_CLIENT_ID&scope={scope}"
        "&redirect_uri=YOUR_APP_CALLBACK_URL&state=YOUR_USER_BOUND_VALUE&response_type=code&prompt=consent"
    )


def export_atlassian(reading: Reading) -> dict[str, Any]:
    atlassian = [p for p in reading.of("atlassian") if p.scope]
    require(bool(atlassian), FORMAT, "Atlassian scopes (Jira, Confluence and the other products' APIs)", reading)
    required = sorted({p.scope for p in atlassian if p.required and p.scope})
    every = sorted({p.scope for p in atlassian if p.scope})
    optional = [s for s in every if s not in required]
    products: dict[str, list[str]] = {}
    unknown: list[str] = []
    for s in every:
        product = product_of(s)
        if product is None:
            unknown.append(s)
        else:
            products.setdefault(product, []).append(s)
    urls = {"required": _authorize(required)} if required else {}
    oauth_app: dict[str, Any] = {
        "products": dict(sorted(products.items())),
        "authorization_url": {**urls, "all": _authorize(every)},
        "note": "add each product's API in the developer console (Permissions), then its scopes; add "
        "offline_access to the authorization URL's scope when the app needs refresh tokens (it is a token's "
        "lifetime, not a permission, and never derived)",
    }
    if unknown:
        oauth_app["unclassified"] = {
            "scopes": unknown,
            "why": "the scope's name does not say which product's API lists it: add it under the API whose "
            "scopes page lists it",
        }
    body: dict[str, Any] = {
        "manifest": {"permissions": {"scopes": every}},
        "oauth_app": oauth_app,
        "tiers": {
            "required": required,
            "optional": optional,
            "note": "neither a Forge app nor an OAuth 2.0 (3LO) app has optional scopes: the optional tiers' "
            "scopes are listed too; a 3LO app may leave them out of the authorization URL until needed "
            "(authorization_url.required), within the scopes added in the developer console",
        },
        "by_scope": [_row(p) for p in sorted(atlassian, key=lambda p: (p.scope or "", p.identity))],
    }
    return envelope(reading, FORMAT, body, left_out(reading, FORMAT, atlassian))


def _row(p: Permission) -> dict[str, Any]:
    return {
        "scope": p.scope,
        "product": product_of(p.scope or ""),
        "identity": p.identity,
        "tier": p.tier,
        "accesses": list(p.accesses),
    }
