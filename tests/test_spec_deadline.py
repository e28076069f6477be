"""``--spec-deadline``: one bound on the time of every exchange made for one spec URL (issue 14 item 14).

``--timeout`` bounds each exchange; a server answering each ``tools/list`` page just
within it could hold one resource for 100 pages × 30 s. The spec deadline bounds
the whole conversation, metadata look-ups included. The servers here answer each
request after a short pause, forever; no assertion is about time, only about what
was asked and what was concluded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from ramscope.cli import EXIT_INCOMPLETE, main
from ramscope.config import Settings
from ramscope.errors import FetchTimeoutError
from ramscope.specs import SpecKind
from ramscope.store import SpecStore
from ramscope.store.mcp import MAX_PAGES, STATELESS_VERSION
from tests.support.httpserver import LocalHTTPServer, Reply, Request
from tests.support.mcpcards import write_mcp_card

MakeSettings = Callable[..., Settings]
#: The deadline the tests set: what a held answer (below) runs into. Seconds on the clock, since the
#: deadline is one, but no outcome depends on how fast the machine is: the answers past the first
#: page are held until the server stops, so only the deadline can end the fetch.
DEADLINE = 3.0


def _rpc(msg: dict[str, Any], result: dict[str, Any]) -> Reply:
    body = orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result})
    return Reply(200, body, {"content-type": "application/json"})


def _endless_pages(server: LocalHTTPServer) -> str:
    """A stateless server whose tools/list always has a next page; the second page is held until the
    server stops (each page is within --timeout, the listing as a whole never ends)."""

    def handle(req: Request) -> Reply:
        msg = json.loads(req.body)
        if msg["method"] == "server/discover":
            return _rpc(msg, {"supportedVersions": [STATELESS_VERSION], "capabilities": {"tools": {}}})
        page = int((msg.get("params") or {}).get("cursor", "p0")[1:])
        if page >= 1:
            server._stopping.wait(600)
        return _rpc(msg, {"tools": [{"name": f"tool_{page}"}], "nextCursor": f"p{page + 1}"})

    server.route("/mcp", method="POST", handler=handle)
    return server.url("/mcp")


def test_a_slowly_paging_server_is_stopped_by_the_spec_deadline(
    server: LocalHTTPServer, make_settings: MakeSettings
) -> None:
    """Each page within --timeout, the pages together past --spec-deadline: a timeout naming the deadline."""
    url = _endless_pages(server)
    with (
        SpecStore(make_settings(timeout=60.0, spec_deadline=DEADLINE)) as store,
        pytest.raises(FetchTimeoutError, match=r"MCP tools/list.*--spec-deadline"),
    ):
        store.get(url, kind_hint=SpecKind.MCP)
    assert server.hits("/mcp", "POST") == 3  # discover, the first page, the held second page
    assert server.hits("/mcp", "POST") < MAX_PAGES


def test_metadata_look_ups_count_against_the_same_deadline(
    server: LocalHTTPServer, make_settings: MakeSettings
) -> None:
    """A quick listing and a stalling metadata URL: the look-up is cut by the spec deadline, and is unknown."""

    def handle(req: Request) -> Reply:
        msg = json.loads(req.body)
        if msg["method"] == "server/discover":
            return _rpc(msg, {"supportedVersions": [STATELESS_VERSION]})
        return _rpc(msg, {"tools": [{"name": "t"}]})

    def stall(req: Request) -> Reply:
        server._stopping.wait(600)  # held until the server stops: only the deadline ends the look-up
        return Reply(404, b"{}", {"content-type": "application/json"})

    server.route("/mcp", method="POST", handler=handle)
    server.route("/.well-known/oauth-protected-resource/mcp", handler=stall)
    with SpecStore(make_settings(timeout=60.0, spec_deadline=DEADLINE)) as store:
        spec = store.get(server.url("/mcp"), kind_hint=SpecKind.MCP)
    auth = orjson.loads(spec.body)["auth"]
    tried = auth["protected_resource_metadata"]["tried"]
    assert tried[0]["status"] is None
    assert "--spec-deadline" in tried[0]["outcome"]
    assert auth["metadata_state"] == "unknown"


def test_the_cli_option_reaches_the_store(server: LocalHTTPServer, tmp_path: Path) -> None:
    """``--spec-deadline SECONDS``: the access through the endless server is unresolved (fetch-timeout), exit 3."""
    card = write_mcp_card(tmp_path / "card.json", _endless_pages(server), "tool_0")
    out = tmp_path / "report.json"
    code = main(
        [
            "--allow-private-network",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--spec-deadline",
            str(int(DEADLINE)),
            "derive",
            str(card),
            "-o",
            str(out),
        ]
    )
    assert code == EXIT_INCOMPLETE
    (access,) = json.loads(out.read_text("utf-8"))["accesses"]
    assert access["reason"] == "spec-unavailable"
    assert "--spec-deadline" in access["reason_message"]


def test_the_default_is_a_few_minutes() -> None:
    """Long enough for a real server's 100 pages and metadata; short of 100 × --timeout."""
    assert 60 <= Settings().spec_deadline <= 600
