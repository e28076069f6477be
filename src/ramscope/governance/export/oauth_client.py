"""``export --format oauth-client``: a client ID metadata document skeleton for the agent's MCP client identity.

MCP's 2026-07-28 authorization prefers Client ID Metadata Documents to dynamic registration: the
client's ``client_id`` is an https URL serving its metadata (draft-ietf-oauth-client-id-metadata-document),
in RFC 7591's client metadata fields. The skeleton fills ``scope`` with the REQUIRED tier's scopes of
the card's MCP servers (the baseline a client asks for first; the other tiers come by step-up), the
grant types from the identities that use them (END_USER: ``authorization_code``; AGENT:
``client_credentials``), and leaves what only the author knows as ``<...>`` placeholders:
``client_id`` (this document's own URL), ``redirect_uris``, ``client_uri``. No shared-secret
authentication: the draft forbids it (``none``, or ``private_key_jwt`` with ``jwks_uri``).
``offline_access`` and ``openid`` are never added: they are token lifetime and sign-in, not
permissions, and a client adds them itself where it needs them.
"""

from __future__ import annotations

from typing import Any

from ._out import require
from ._read import Permission, Reading

__all__ = ["export_oauth_client"]

FORMAT = "oauth-client"
_NOT_PERMISSIONS = frozenset({"offline_access", "openid"})


def _mcp_permissions(reading: Reading) -> list[Permission]:
    rows = {a.id: a for a in reading.accesses}
    return [
        p
        for p in reading.permissions
        if p.scope and p.accesses and all(rows.get(x) is not None and rows[x].kind == "mcp" for x in p.accesses)
    ]


def export_oauth_client(reading: Reading) -> tuple[dict[str, Any], list[str]]:
    """The document, and the notes said on stderr (what was left out or must be filled in)."""
    mcp = _mcp_permissions(reading)
    mcp_accesses = [a for a in reading.in_tiers() if a.kind == "mcp"]
    require(bool(mcp), FORMAT, "the OAuth scopes of the MCP servers a card calls (an MCP client identity)", reading)
    required = sorted({p.scope for p in mcp if p.required and p.scope and p.scope not in _NOT_PERMISSIONS})
    later = sorted({p.scope for p in mcp if not p.required and p.scope and p.scope not in _NOT_PERMISSIONS})
    identities = {a.identity for a in mcp_accesses}
    grants = []
    if "END_USER" in identities:
        grants += ["authorization_code", "refresh_token"]
    if "AGENT" in identities:
        grants.append("client_credentials")
    doc: dict[str, Any] = {
        "client_id": "<https URL where this document is served>",
        "client_name": reading.card_name or "ramscope agent",
        "client_uri": "<https URL of the agent's home page>",
        "grant_types": grants,
        "response_types": ["code"] if "END_USER" in identities else [],
        "token_endpoint_auth_method": "none" if "AGENT" not in identities else "private_key_jwt",
        "scope": " ".join(required),
        # This version of the card (a software_id would have to stay the same across versions).
        "software_version": reading.card_sha256 and f"sha256:{reading.card_sha256}",
    }
    if "END_USER" in identities:
        doc["redirect_uris"] = ["<the client's redirect URI>"]
    if "AGENT" in identities:
        doc["jwks_uri"] = "<https URL of the client's public keys>"
    notes = [f"fill in {k}: {v}" for k, v in doc.items() if isinstance(v, str) and v.startswith("<")]
    if later:
        notes.append("asked for by step-up beyond the REQUIRED tier: " + " ".join(later))
    for a in reading.incomplete():
        if a.kind == "mcp":
            notes.append(
                f"access {a.id}: its permissions were not determined ({a.reason or 'incomplete'}): not in scope"
            )
    return doc, notes
