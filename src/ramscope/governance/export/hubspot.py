"""``export --format hubspot-app``: the ``auth`` block of a HubSpot app's ``app-hsmeta.json``, scopes by tier.

Shape (HubSpot's developer platform: https://developers.hubspot.com/docs/apps/developer-platform/build-apps/
authentication/scopes and .../build-apps/app-configuration; HubSpot's own templates,
HubSpot/hubspot-project-components ``2025.2/components/app/oauth-marketplace/src/app/app-hsmeta.json``):
``config.auth`` holds ``type`` (``oauth`` or ``static``), ``redirectUrls``, and three scope lists.
HubSpot's scope types are RAM's tiers:

- ``requiredScopes``: the user must authorize them, and every install URL's ``scope`` carries them
  (the REQUIRED tier);
- ``conditionallyRequiredScopes``: required only when the install URL's ``scope`` names them, so a
  second install URL offers a feature tier (the RECOMMENDED tier);
- ``optionalScopes``: the installer may lack or leave them out, and the token then does not carry them
  (the OPTIONAL tier).

A static-auth app (a private app's own token) takes required scopes only: ``type`` is ``oauth`` here,
and the notes say so. ``install`` gives each install URL's ``scope`` and ``optional_scope`` values.
"""

from __future__ import annotations

from typing import Any

from ._out import envelope, left_out, require
from ._read import Permission, Reading

__all__ = ["FORMAT", "SCOPE_LISTS", "export_hubspot"]

FORMAT = "hubspot-app"

#: RAM's tier -> HubSpot's scope list.
SCOPE_LISTS = {
    "REQUIRED": "requiredScopes",
    "RECOMMENDED": "conditionallyRequiredScopes",
    "OPTIONAL": "optionalScopes",
}


def export_hubspot(reading: Reading) -> dict[str, Any]:
    hubspot = [p for p in reading.of("hubspot") if p.scope]
    require(bool(hubspot), FORMAT, "HubSpot scopes (required, conditionally required, optional)", reading)
    lists: dict[str, set[str]] = {name: set() for name in SCOPE_LISTS.values()}
    for p in hubspot:
        assert p.scope is not None
        lists[SCOPE_LISTS[p.tier]].add(p.scope)
    # A scope in two lists (two accesses of two tiers) belongs to the stronger one.
    required = lists["requiredScopes"]
    conditional = lists["conditionallyRequiredScopes"] - required
    optional = lists["optionalScopes"] - required - conditional
    auth: dict[str, Any] = {
        "type": "oauth",
        "redirectUrls": ["<https URL of the app's OAuth callback>"],
        "requiredScopes": sorted(required),
        "conditionallyRequiredScopes": sorted(conditional),
        "optionalScopes": sorted(optional),
    }
    install = [
        {
            "tier": "REQUIRED",
            "for": "the agent's required features",
            "scope": sorted(required),
            "optional_scope": sorted(optional),
        }
    ]
    if conditional:
        install.append(
            {
                "tier": "RECOMMENDED",
                "for": "the agent with its recommended features",
                "scope": sorted(required | conditional),
                "optional_scope": sorted(optional),
            }
        )
    body: dict[str, Any] = {
        "auth": auth,
        "install": install,
        "tiers": {
            **SCOPE_LISTS,
            "note": "a static-auth app takes requiredScopes only: list the other tiers' scopes there too, or "
            "keep type oauth; optional scopes are missing from the token when the account lacks them, so the "
            "agent must check which scopes it was granted",
        },
        "by_scope": [_row(p) for p in sorted(hubspot, key=lambda p: (p.scope or "", p.identity))],
    }
    return envelope(reading, FORMAT, body, left_out(reading, FORMAT, hubspot))


def _row(p: Permission) -> dict[str, Any]:
    return {"scope": p.scope, "identity": p.identity, "tier": p.tier, "accesses": list(p.accesses)}
