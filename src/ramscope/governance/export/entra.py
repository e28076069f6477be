"""``export --format entra-app``: an Entra app registration's ``requiredResourceAccess`` for Microsoft Graph.

Shape (Microsoft's app manifest reference,
https://learn.microsoft.com/en-us/entra/identity-platform/reference-microsoft-graph-app-manifest):
``[{"resourceAppId": "00000003-0000-0000-c000-000000000000", "resourceAccess": [{"id": GUID,
"type": "Scope"|"Role"}]}]``; ``Scope`` is a delegated permission (END_USER), ``Role`` an application
permission (AGENT). Ids from Microsoft's published provisioning data (:mod:`ramscope.providers.graph_ids`).
Entra has no optional permissions in a registration: the higher tiers' delegated permissions can be
asked for at sign-in instead (incremental consent), which ``tiers`` says.
"""

from __future__ import annotations

from typing import Any

from ...providers.graph_ids import GRAPH_APP_ID, GraphIds, graph_ids
from ._out import envelope, left_out, require
from ._read import Permission, Reading

__all__ = ["export_entra", "needs_admin_consent"]

FORMAT = "entra-app"


def _type(p: Permission) -> str:
    return "Role" if "application" in p.scheme or p.namespace.endswith("#app-roles") else "Scope"


def export_entra(reading: Reading, refreshed: GraphIds | None = None) -> dict[str, Any]:
    graph = reading.of("microsoft-graph")
    require(
        bool([p for p in graph if p.scope]), FORMAT, "Microsoft Graph permissions (delegated and application)", reading
    )
    ids = refreshed or graph_ids()
    access: list[dict[str, str]] = []
    kept: list[Permission] = []
    consent: list[dict[str, Any]] = []
    tiers: dict[str, list[str]] = {"required": [], "optional": []}
    skipped: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for p in sorted(graph, key=lambda p: (_type(p), p.name)):
        if p.scope is None:
            continue
        kind = _type(p)
        known = ids.get(p.name)
        guid = None if known is None else (known.scope if kind == "Scope" else known.role)
        if guid is None:
            skipped.append(
                {
                    "permission": p.name,
                    "kind": "scope",
                    "provider": p.provider,
                    "identity": p.identity,
                    "tier": p.tier,
                    "accesses": list(p.accesses),
                    "reason": f"Microsoft's provisioning data ({ids.version}) lists no {kind} id for {p.name}: "
                    "add it by name in the portal",
                }
            )
            continue
        kept.append(p)
        if (guid, kind) not in seen:
            seen.add((guid, kind))
            access.append({"id": guid, "type": kind})
            tiers["required" if p.required else "optional"].append(f"{p.name} ({kind})")
        if kind == "Role" or needs_admin_consent(p):
            consent.append(
                {
                    "permission": p.name,
                    "id": guid,
                    "type": kind,
                    "tier": p.tier,
                    "accesses": list(p.accesses),
                    "why": "an application permission: only an administrator can grant it"
                    if kind == "Role"
                    else "Microsoft marks this delegated permission as needing an administrator's consent",
                }
            )
    body: dict[str, Any] = {
        "manifest": {"requiredResourceAccess": [{"resourceAppId": GRAPH_APP_ID, "resourceAccess": access}]},
        "admin_consent": consent,
        "tiers": {
            **tiers,
            "note": "an app registration has no optional permissions: the optional tiers' delegated permissions "
            "are listed too, and can instead be requested at sign-in when needed (incremental consent)",
        },
        "data": {"graph_ids": ids.version, "source": dict(ids.source)},
    }
    return envelope(reading, FORMAT, body, skipped + left_out(reading, FORMAT, kept + _skipped_perms(graph, kept)))


def needs_admin_consent(p: Permission) -> bool:
    """Microsoft's ``requiresAdminConsent`` of this scheme's permission, from the catalog.

    Read per scheme here, not from the report's flag: a report saved before the flag was kept per
    grant keyed catalog facts by the scope string alone, so a delegated permission whose application
    twin needs an administrator (Mail.Read) is marked too there (``diff`` reads saved reports).
    """
    from ...providers import catalog  # noqa: PLC0415 (the catalog is decoded only for this format)

    cat = catalog("microsoft-graph")
    perm = cat.permission(p.scheme, p.scope) if cat is not None and p.scope else None
    return perm.admin_consent if perm is not None else p.admin_consent


def _skipped_perms(graph: list[Permission], kept: list[Permission]) -> list[Permission]:
    # Graph permissions without an id are reported once, above, not again as another provider's.
    keep = set(map(id, kept))
    return [p for p in graph if id(p) not in keep and p.scope is not None]
