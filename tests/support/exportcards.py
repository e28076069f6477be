"""Our own cards for the export tests, one per target provider, derived offline: Microsoft Graph, GitHub and
Slack from trimmed provider specs on a loopback server (the shipped catalogs and quirks supply their
permissions), Google Calendar and Maps' MCP server from the README example's cassette, and an MCP server
with per-tool security schemes from its cassette."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from ramscope import Settings, derive, load_card
from tests.support.httpserver import LocalHTTPServer
from tests.support.reports import TRAVEL, derive_offline

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
MCP_CASSETTE = FIXTURES / "cassettes" / "mcp-tool-security.yaml"
DOCS = "https://docs.example.com/mcp"


def rest_card(
    server: LocalHTTPServer, name: str, route: str, entries: list[tuple[str, dict[str, Any]]]
) -> dict[str, Any]:
    """A card of one REST resource and one access per (operation id, access fields) entry."""
    accesses = []
    operations = []
    for i, (op, fields) in enumerate(entries):
        operations.append({"id": f"op{i}", "resource": "api", "api_operation_spec": {"operation_id": op}})
        accesses.append(
            {
                "id": fields.pop("id", f"a{i}"),
                "operation": f"op{i}",
                "identity_used": fields.pop("identity", "END_USER"),
                "necessity": fields.pop("necessity", "REQUIRED"),
                "access_justification": fields.pop("why", f"To {op}."),
                **fields,
            }
        )
    return {
        "name": name,
        "resourceAccessManifest": {
            "resources": [
                {
                    "id": "api",
                    "interaction_protocol": "REST",
                    "owner": "CONSUMER",
                    "display_name": name,
                    "spec": {"spec_url": server.url(route)},
                }
            ],
            "operations": operations,
            "resource_accesses": accesses,
        },
    }


GRAPH = [
    ("me.ListMessages", {"id": "read-mail", "why": "To read the user's mail to find flight confirmations."}),
    ("me.user.GetUser", {"id": "read-profile", "why": "To greet the user by name."}),
    ("me.sendMail", {"id": "send-mail", "necessity": "RECOMMENDED", "confirmation_required": True}),
    ("users.ListMessages", {"id": "scan-shared-mailbox", "identity": "AGENT", "necessity": "OPTIONAL"}),
]
GITHUB = [
    ("issues/create", {"id": "file-issue"}),
    ("repos/get-content", {"id": "read-file", "identity": "AGENT", "necessity": "RECOMMENDED"}),
    ("pulls/merge", {"id": "merge-pr", "necessity": "OPTIONAL", "confirmation_required": True}),
]
SLACK = [
    ("chat_postMessage", {"id": "post-summary", "identity": "AGENT"}),
    ("conversations_history", {"id": "read-history", "necessity": "RECOMMENDED"}),
    ("conversations_join", {"id": "join-channel", "identity": "AGENT", "necessity": "OPTIONAL"}),
]


def mcp_card() -> dict[str, Any]:
    """Two tools of one MCP server with per-tool securitySchemes (the cassette's): one required, one
    optional that asks first."""
    resources = [
        {
            "id": f"docs-{tool}",
            "interaction_protocol": "MCP",
            "owner": "CONSUMER",
            "display_name": "Docs",
            "spec": {"spec_url": DOCS, "resource_path": tool},
        }
        for tool in ("search", "create_doc")
    ]
    return {
        "name": "Docs Agent",
        "resourceAccessManifest": {
            "resources": resources,
            "operations": [
                {"id": "search", "resource": "docs-search", "description": "Searches documents."},
                {"id": "create", "resource": "docs-create_doc", "description": "Creates a document."},
            ],
            "resource_accesses": [
                {
                    "id": "search-docs",
                    "operation": "search",
                    "identity_used": "END_USER",
                    "necessity": "REQUIRED",
                    "access_justification": "To find the documents the user asks about.",
                },
                {
                    "id": "create-doc",
                    "operation": "create",
                    "identity_used": "END_USER",
                    "necessity": "OPTIONAL",
                    "confirmation_required": True,
                    "access_justification": "To write the trip summary into a new document.",
                },
            ],
        },
    }


def derive_rest(
    cache: Path, cards: dict[str, tuple[str, list[tuple[str, dict[str, Any]]]]]
) -> dict[str, dict[str, Any]]:
    """Reports of REST cards over the export specs: name -> (route, entries)."""
    out: dict[str, dict[str, Any]] = {}
    with LocalHTTPServer() as srv:
        srv.route("/graph.json", body=(FIXTURES / "export" / "graph.json").read_bytes())
        srv.route("/github.json", body=(FIXTURES / "export" / "github.json").read_bytes())
        srv.route("/slack.json", body=(FIXTURES / "specs" / "reach" / "slack.json").read_bytes())
        settings = Settings(cache_dir=cache / "rest", allow_private_network=True, reuse=False)
        for name, (route, entries) in cards.items():
            card = rest_card(srv, "Agent", route, copy.deepcopy(entries))
            out[name] = derive(load_card(card, name=f"{name}.card.json"), settings=settings).to_dict()
    return out


def derive_all(cache: Path) -> dict[str, dict[str, Any]]:
    """The reports of every card, by provider name."""
    out: dict[str, dict[str, Any]] = {}
    with LocalHTTPServer() as srv:
        srv.route("/graph.json", body=(FIXTURES / "export" / "graph.json").read_bytes())
        srv.route("/github.json", body=(FIXTURES / "export" / "github.json").read_bytes())
        srv.route("/slack.json", body=(FIXTURES / "specs" / "reach" / "slack.json").read_bytes())
        settings = Settings(cache_dir=cache / "rest", allow_private_network=True, reuse=False)
        for name, route, entries in (
            ("graph", "/graph.json", GRAPH),
            ("github", "/github.json", GITHUB),
            ("slack", "/slack.json", SLACK),
        ):
            card = rest_card(srv, f"{name.title()} Agent", route, copy.deepcopy(entries))
            out[name] = derive(load_card(card, name=f"{name}.card.json"), settings=settings).to_dict()
    out["travel"] = derive_offline(TRAVEL, cache / "travel")
    mcp_settings = Settings(cache_dir=cache / "mcp", offline=True, cassette=MCP_CASSETTE, reuse=False)
    out["mcp"] = derive(load_card(mcp_card(), name="mcp.card.json"), settings=mcp_settings).to_dict()
    return out
