"""The MCP tools a card may call, as both gateway formats read them (ToolHive, agentgateway)."""

from __future__ import annotations

from dataclasses import dataclass

from ._out import require
from ._read import AccessRow, Reading

__all__ = ["Tool", "mcp_tools", "skipped_lines"]


@dataclass(frozen=True)
class Tool:
    name: str
    #: The name a gateway's per-server scoping uses when the card names several servers: the card's id
    #: of the first resource on this server (an MCP resource is one tool, so a server has several).
    resource: str
    server: str
    accesses: tuple[AccessRow, ...]

    @property
    def asks_first(self) -> bool:
        return any(a.confirmation_required for a in self.accesses)

    @property
    def optional(self) -> bool:
        return all(a.necessity != "REQUIRED" for a in self.accesses)


def mcp_tools(reading: Reading, fmt: str) -> tuple[list[Tool], list[str]]:
    """The exported tiers' MCP tools (one per server and name, in card order) and why others are left out."""
    tools: dict[tuple[str, str], list[AccessRow]] = {}
    names: dict[str, str] = {}
    skipped: list[str] = []
    for a in reading.in_tiers():
        if a.kind != "mcp":
            skipped.append(f"access {a.id}: not an MCP tool call ({a.kind or 'unresolved'}); the gateway never sees it")
            continue
        if not a.complete or a.tool is None:
            skipped.append(f"access {a.id}: its permissions were not determined ({a.reason or 'incomplete'}): denied")
            continue
        names.setdefault(a.server, a.resource)
        tools.setdefault((a.server, a.tool), []).append(a)
    found = [Tool(name, names[server], server, tuple(rows)) for (server, name), rows in tools.items()]
    require(bool(found), fmt, "the MCP tools a card calls (tools/call)", reading)
    return found, skipped


def skipped_lines(skipped: list[str]) -> list[str]:
    return [f"not exported: {s}" for s in skipped]
