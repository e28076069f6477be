"""The old HTTP+SSE MCP transport (2024-11-05): GET the URL, an ``endpoint`` event, POSTs answered on the stream.

fastmcp ``transport="sse"`` and many deployed servers speak only it (issue 14 item 17).
Against the official ``mcp`` SDK's MCPServer ``sse_app()`` on 127.0.0.1, and small
ASGI servers for the hostile cases: an endpoint on another origin, a stream that
never names an endpoint, a stream that floods past ``--max-spec-bytes``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp.server.mcpserver import MCPServer

from ramscope.cli import EXIT_OK, main
from ramscope.config import Settings
from ramscope.errors import FetchError, FetchTimeoutError, SpecTooLargeError
from ramscope.specs import SpecKind, build_index
from ramscope.store import Origin, SpecStore
from tests.support.asgi import ASGIApp, ASGIServer, Receive, Scope, Send
from tests.support.mcpcards import write_mcp_card

MakeSettings = Callable[..., Settings]


def _server() -> MCPServer:
    server: MCPServer = MCPServer("sse-weather", version="0.9")

    @server.tool()
    def lookup_weather(city: str) -> str:
        """Current conditions for a city."""
        return f"sunny in {city}"

    @server.tool()
    def book_flight(origin: str, destination: str) -> str:
        """Book a flight."""
        return "booked"

    return server


@pytest.fixture(scope="module")
def sse_only() -> Iterator[ASGIServer]:
    with ASGIServer(lambda base: _server().sse_app(host="127.0.0.1")) as srv:
        yield srv


def _get(settings: Settings, url: str) -> tuple[dict[str, Any], Any, Origin]:
    with SpecStore(settings) as store:
        spec = store.get(url, kind_hint=SpecKind.MCP)
        index = build_index(spec, kind_hint=SpecKind.MCP)
    return orjson.loads(spec.body), index, spec.origin


def test_an_sse_only_server_is_listed_over_the_old_transport(sse_only: ASGIServer, make_settings: MakeSettings) -> None:
    """POSTs to /sse are refused (405); a GET opens the stream; its endpoint takes the POSTs; tools come back."""
    capture, index, origin = _get(make_settings(), sse_only.url("/sse"))
    assert origin is Origin.NETWORK
    assert capture["transport"] == "http+sse"
    assert capture["era"] == "handshake"
    assert capture["protocol_version"] == "2025-11-25"
    assert [t["name"] for t in capture["tools"]] == ["lookup_weather", "book_flight"]
    assert [s["step"] for s in capture["steps"]] == [
        "server/discover",
        "initialize",
        "GET (HTTP+SSE)",
        "initialize",
        "notifications/initialized",
        "tools/list",
    ]
    posts = [p for m, p, _ in sse_only.requests if m == "POST"]
    assert posts[:2] == ["/sse", "/sse"]
    assert all(p == "/messages/" for p in posts[2:])
    assert index.extra["transport"] == "http+sse"
    assert {e.operation_id for e in index.operations} == {"lookup_weather", "book_flight"}


def test_derive_through_the_old_transport(sse_only: ASGIServer, tmp_path: Path) -> None:
    """End to end: the tool resolves, no authorization (every well-known URL 404), exit 0."""
    card = write_mcp_card(tmp_path / "card.json", sse_only.url("/sse"), "lookup_weather")
    out = tmp_path / "r.json"
    code = main(["--allow-private-network", "--cache-dir", str(tmp_path / "c"), "derive", str(card), "-o", str(out)])
    assert code == EXIT_OK
    (access,) = json.loads(out.read_text("utf-8"))["accesses"]
    assert (access["complete"], access["requirements"]) == (True, [])


def test_an_sse_conversation_records_and_replays(
    sse_only: ASGIServer, make_settings: MakeSettings, tmp_path: Path
) -> None:
    """The held-open GET is one recorded exchange like any other: a replay offline gives the same capture."""
    cassette = tmp_path / "sse.yaml"
    recorded, _, _ = _get(make_settings(cassette=cassette, record=True), sse_only.url("/sse"))
    replayed, _, origin = _get(
        make_settings(cassette=cassette, offline=True, cache_dir=tmp_path / "other"), sse_only.url("/sse")
    )
    assert origin is Origin.CASSETTE
    assert replayed["tools"] == recorded["tools"]
    assert replayed["transport"] == "http+sse"


# --------------------------------------------------------------------------- hostile old-transport servers


def _stream_app(events: Callable[[str], list[bytes]], *, then: str = "hang") -> ASGIApp:
    """POST /sse → 405; GET /sse → the given SSE bytes, then hang (or flood with comments)."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["method"] != "GET" or scope["path"] != "/sse":
            # POSTs to the endpoint are accepted and never answered on the stream.
            status = {"/sse": 405, "/messages/": 202}.get(scope["path"], 404)
            await send({"type": "http.response.start", "status": status, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        host = dict(scope["headers"])[b"host"].decode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        for chunk in events(host):
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        for _ in range(100_000):
            if then == "flood":
                await send({"type": "http.response.body", "body": b": " + b"x" * 65536 + b"\n\n", "more_body": True})
            await asyncio.sleep(0.01 if then == "flood" else 0.2)

    return app


def test_an_endpoint_on_another_origin_is_refused(make_settings: MakeSettings) -> None:
    """The endpoint event may not send ramscope's POSTs to another host."""
    app = _stream_app(lambda host: [b"event: endpoint\ndata: http://169.254.169.254/latest/?s=1\n\n"])
    with ASGIServer(lambda base: app) as srv, pytest.raises(FetchError, match="another origin"):
        _get(make_settings(), srv.url("/sse"))


def test_a_stream_that_never_names_its_endpoint_times_out(make_settings: MakeSettings) -> None:
    """Only comments on the stream: cut off by --timeout (the whole stream is one exchange)."""
    app = _stream_app(lambda host: [b": waiting\n\n"])
    with ASGIServer(lambda base: app) as srv, pytest.raises(FetchTimeoutError):
        _get(make_settings(timeout=1.0), srv.url("/sse"))


def test_a_flooding_stream_is_cut_at_max_spec_bytes(make_settings: MakeSettings) -> None:
    """After the endpoint, megabytes of comments and never an answer: refused at --max-spec-bytes."""
    app = _stream_app(lambda host: [b"event: endpoint\ndata: /messages/?s=1\n\n"], then="flood")
    with ASGIServer(lambda base: app) as srv, pytest.raises(SpecTooLargeError, match="max-spec-bytes"):
        _get(make_settings(max_spec_bytes=256 * 1024, timeout=20.0), srv.url("/sse"))


def test_a_plain_404_is_still_reported_as_not_an_mcp_endpoint(make_settings: MakeSettings, server: Any) -> None:
    """Neither transport: the initialize refusal is the error, with the GET's answer added."""
    with pytest.raises(FetchError, match=r"MCP initialize: HTTP 404.*GET did not open an HTTP\+SSE stream"):
        _get(make_settings(), server.url("/nothing"))
