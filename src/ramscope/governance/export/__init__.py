"""``ramscope export`` to where permissions are granted and enforced: one reader, one small module per target.

Every format is written from the same :class:`~._read.Reading` of a derived report (per tier,
identity and provider), so what a tier asks for and what cannot be exported are decided once:

- ``entra-app``: an Entra app registration's ``requiredResourceAccess`` for Microsoft Graph (:mod:`.entra`)
- ``google-oauth``: the consent screen's scopes and verification drafts (:mod:`.google`)
- ``slack-manifest``: a Slack app manifest's ``oauth_config`` (:mod:`.slack`)
- ``github-app``: a GitHub App manifest's ``default_permissions``, an OAuth App's classic scopes (:mod:`.github`)
- ``toolhive``: ToolHive Cedar policies (:mod:`.toolhive`); ``agentgateway``: CEL rules (:mod:`.agentgateway`)
- ``allowlist``: the per-agent scope allowlist for an identity provider (:mod:`.allowlist`)
- ``oauth-client``: a client ID metadata document skeleton (:mod:`.oauth_client`)
- ``hubspot-app``: a HubSpot app's ``auth`` scopes, required / conditionally required / optional (:mod:`.hubspot`)
- ``atlassian-app``: a Forge app's ``permissions.scopes`` and a 3LO app's scopes per product (:mod:`.atlassian`)

A format whose target the card does not use raises :class:`~._read.NotExpressible` (exit 2).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._read import NotExpressible, Reading, read_report

if TYPE_CHECKING:
    from ...providers.graph_ids import GraphIds

__all__ = ["TARGET_FORMATS", "Exported", "NotExpressible", "export_report", "read_report"]

TARGET_FORMATS = (
    "entra-app",
    "google-oauth",
    "slack-manifest",
    "github-app",
    "toolhive",
    "agentgateway",
    "allowlist",
    "oauth-client",
    "hubspot-app",
    "atlassian-app",
)


@dataclass(frozen=True)
class Exported:
    """The text to write, and the notes to say on stderr (what was left out or must be filled in)."""

    text: str
    notes: tuple[str, ...]


def _json(doc: Any) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _notes_of(doc: Mapping[str, Any]) -> tuple[str, ...]:
    out = []
    for s in doc.get("not_exported", []):
        what = s.get("permission") or f"access {s.get('access')}"
        out.append(f"not exported: {what}: {s.get('reason')}")
    return tuple(out)


def export_report(
    report: Mapping[str, Any],
    fmt: str,
    *,
    tier: str = "OPTIONAL",
    identity: str | None = None,
    graph_ids: GraphIds | None = None,
) -> Exported:
    """One format's export of a report. Raises :class:`NotExpressible` or ``InputError``.

    ``graph_ids``: Microsoft Graph permission ids refreshed into the cache (``universe refresh
    microsoft-graph``), for ``entra-app``; the shipped ones otherwise.
    """
    reading = read_report(report, tier=tier, identity=identity)
    if fmt == "toolhive":
        from .toolhive import export_toolhive  # noqa: PLC0415 (each format loads only its own module)

        return Exported(export_toolhive(reading), ())
    if fmt == "agentgateway":
        from .agentgateway import export_agentgateway  # noqa: PLC0415 (each format loads only its own module)

        return Exported(export_agentgateway(reading), ())
    if fmt == "oauth-client":
        from .oauth_client import export_oauth_client  # noqa: PLC0415 (each format loads only its own module)

        doc, notes = export_oauth_client(reading)
        return Exported(_json(doc), tuple(notes))
    doc = _dispatch(reading, fmt, report, graph_ids)
    return Exported(_json(doc), _notes_of(doc))


def _dispatch(reading: Reading, fmt: str, report: Mapping[str, Any], ids: GraphIds | None) -> dict[str, Any]:
    if fmt == "entra-app":
        from .entra import export_entra  # noqa: PLC0415 (each format loads only its own module)

        return export_entra(reading, ids)
    if fmt == "google-oauth":
        from .google import export_google  # noqa: PLC0415 (each format loads only its own module)

        return export_google(reading)
    if fmt == "slack-manifest":
        from .slack import export_slack  # noqa: PLC0415 (each format loads only its own module)

        return export_slack(reading)
    if fmt == "github-app":
        from .github import export_github  # noqa: PLC0415 (each format loads only its own module)

        return export_github(reading)
    if fmt == "allowlist":
        from .allowlist import export_allowlist  # noqa: PLC0415 (each format loads only its own module)

        return export_allowlist(reading, report)
    if fmt == "hubspot-app":
        from .hubspot import export_hubspot  # noqa: PLC0415 (each format loads only its own module)

        return export_hubspot(reading)
    if fmt == "atlassian-app":
        from .atlassian import export_atlassian  # noqa: PLC0415 (each format loads only its own module)

        return export_atlassian(reading)
    raise ValueError(f"unknown export format {fmt!r}")
