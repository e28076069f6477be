"""``export --format allowlist``: the per-agent scope allowlist an identity provider takes.

Identity providers that issue tokens to agents (Okta's cross-app access, Entra agent identities,
any authorization server with per-client scope policies) take, per agent, the scopes it may be
granted at each resource server. Plain JSON: per identity and authorization server, the resource
servers its accesses call and the scopes per tier (``required``: the REQUIRED tier; ``optional``:
what RECOMMENDED and OPTIONAL add). Non-scope credentials (API keys ...) are listed apart: an
identity provider does not issue them. The agent is named as ``export --format json`` names it
(``sha256:<card digest>``); that format stays the allowlist of operations, this one of scopes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..cedar import agent_id
from ._out import envelope, left_out, require
from ._read import Reading

__all__ = ["SCOPE_ALLOWLIST_VERSION", "export_allowlist"]

FORMAT = "allowlist"
SCOPE_ALLOWLIST_VERSION = 1


def export_allowlist(reading: Reading, report: Mapping[str, Any]) -> dict[str, Any]:
    scoped = [p for p in reading.permissions if p.scope]
    require(bool(scoped), FORMAT, "OAuth scopes, per authorization server", reading)
    grants: dict[tuple[str, str], dict[str, Any]] = {}
    for p in scoped:
        g = grants.setdefault(
            (p.identity, p.namespace),
            {
                "identity": p.identity,
                # ramscope's namespace tells a bot token's or an app role's grants apart with a fragment;
                # the server is the URL before it.
                "authorization_server": p.namespace.split("#", 1)[0],
                "namespace": p.namespace,
                "provider": p.provider,
                "resources": [],
                "required": [],
                "optional": [],
            },
        )
        for x in p.accesses:
            for server in reading.resource_servers(x):
                if server not in g["resources"]:
                    g["resources"].append(server)
        g["required" if p.required else "optional"].append(p.scope)
    out = []
    for g in grants.values():
        g["required"] = sorted(set(g["required"]))
        g["optional"] = sorted(set(g["optional"]) - set(g["required"]))
        out.append(g)
    credentials = [
        {"identity": p.identity, "scheme": p.scheme, "type": p.type, "namespace": p.namespace, "tier": p.tier}
        for p in reading.permissions
        if p.scope is None
    ]
    body = {
        "scope_allowlist_version": SCOPE_ALLOWLIST_VERSION,
        "agent": agent_id(report),
        "agent_name": reading.card_name,
        "default": "deny",
        "grants": sorted(out, key=lambda g: (g["identity"], g["authorization_server"])),
        "credentials": credentials,
    }
    return envelope(reading, FORMAT, body, left_out(reading, FORMAT, reading.permissions))
