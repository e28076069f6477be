"""Cards that name one MCP server's tool, for end-to-end runs of ``ramscope derive`` against local MCP servers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["mcp_card", "write_mcp_card"]


def mcp_card(url: str, tool: str, identities: Sequence[str] = ("END_USER",)) -> dict[str, Any]:
    """A bare manifest: one MCP resource (``tool`` in its resource_path), one access per identity."""
    return {
        "resources": [
            {
                "id": "mcp-server",
                "interaction_protocol": "MCP",
                "owner": "CONSUMER",
                "display_name": "Local MCP server",
                "spec": {"spec_url": url, "resource_path": tool},
            }
        ],
        "operations": [{"id": "call-tool", "resource": "mcp-server", "description": f"Calls {tool}."}],
        "resource_accesses": [
            {
                "id": f"call-as-{identity.lower().replace('_', '-')}",
                "operation": "call-tool",
                "identity_used": identity,
                "necessity": "REQUIRED",
                "access_justification": "To call the tool.",
            }
            for identity in identities
        ],
    }


def write_mcp_card(path: Path, url: str, tool: str, identities: Sequence[str] = ("END_USER",)) -> Path:
    path.write_text(json.dumps(mcp_card(url, tool, identities), indent=2), "utf-8")
    return path
