"""What every JSON export carries besides the target's own object: the card, the tiers, and what was left out.

A format exports only its target's permissions; whatever else the tiers ask for is listed in
``not_exported`` with the reason and the format that expresses it, never dropped in silence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._read import PROVIDER_NAMES, NotExpressible, Permission, Reading

__all__ = ["EXPORT_VERSION", "FORMAT_OF_PROVIDER", "envelope", "left_out", "require"]

EXPORT_VERSION = 1

#: The format that expresses each provider's permissions.
FORMAT_OF_PROVIDER = {
    "microsoft-graph": "entra-app",
    "google": "google-oauth",
    "slack": "slack-manifest",
    "github": "github-app",
    "hubspot": "hubspot-app",
    "atlassian": "atlassian-app",
    "mcp": "oauth-client",
    "other": "allowlist",
}


def left_out(reading: Reading, fmt: str, kept: Sequence[Permission]) -> list[dict[str, Any]]:
    """Each permission of the exported tiers this format does not carry, and each incomplete access."""
    out: list[dict[str, Any]] = []
    keep = set(map(id, kept))
    for p in reading.permissions:
        if id(p) in keep:
            continue
        elsewhere = FORMAT_OF_PROVIDER.get(p.provider, "allowlist")
        if p.scope is None:
            reason = (
                f"a credential of type {p.type} ({p.scheme}) for {p.namespace}: issued by that service, not "
                f"requested from {fmt}'s target"
            )
        else:
            reason = f"granted by {PROVIDER_NAMES.get(p.provider, p.provider)} ({p.namespace}), not by {fmt}'s target"
            if elsewhere != fmt:
                reason += f": see `ramscope export --format {elsewhere}`"
        out.append(
            {
                "permission": p.name,
                "kind": "credential" if p.scope is None else "scope",
                "provider": p.provider,
                "identity": p.identity,
                "tier": p.tier,
                "accesses": list(p.accesses),
                "reason": reason,
            }
        )
    for a in reading.incomplete():
        out.append(
            {
                "access": a.id,
                "identity": a.identity,
                "tier": a.necessity,
                "reason": f"its permissions were not determined ({a.reason or 'incomplete'}): nothing exported for it",
            }
        )
    return out


def envelope(reading: Reading, fmt: str, body: dict[str, Any], not_exported: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "export_version": EXPORT_VERSION,
        "format": fmt,
        "card": {"name": reading.card_name, "source": reading.card_source, "sha256": reading.card_sha256},
        "tier": reading.tier,
        "identity": reading.identity,
        "complete": reading.complete and not reading.incomplete(),
        **body,
        "not_exported": not_exported,
    }


def require(found: bool, fmt: str, expresses: str, reading: Reading) -> None:
    """Raise :class:`NotExpressible` when the tiers hold nothing the format can express."""
    if found:
        return
    providers = sorted({p.provider for p in reading.permissions if p.scope})
    wants = [f"{PROVIDER_NAMES.get(p, p)} scopes" for p in providers]
    wants += sorted({f"a credential of type {p.type} ({p.scheme})" for p in reading.permissions if p.scope is None})
    needs = ", ".join(wants) or "no permission"
    raise NotExpressible(
        f"--format {fmt} expresses {expresses}; the card's tiers up to {reading.tier} need {needs}",
        source=reading.card_source or None,
    )
