"""A hostile MCP server on 127.0.0.1: endless and huge answers, endless pagination, escape sequences in tool
names, metadata URLs aimed inside the network. Each is cut off by the store's limits or the page bound, in
bounded time, with a message that names the step; hostile strings survive as data."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

import ramscope.store.http as http_module
from ramscope.config import Settings
from ramscope.derive.resolve import Target, resolve
from ramscope.errors import FetchError, FetchTimeoutError, SpecTooLargeError
from ramscope.specs import SpecIndex, SpecKind, build_index, load_index
from ramscope.store import Cassette, Interaction, SpecStore
from ramscope.store.mcp import MAX_PAGES, server_discover_request
from tests._specs import rest_operation
from tests.support.httpserver import LocalHTTPServer, Reply, Request

MakeSettings = Callable[..., Settings]
MiB = 1024 * 1024


@dataclass
class WireMeter:
    """How many body bytes the store read from the wire, per exchange, and how long the fetch took."""

    reads: list[int] = field(default_factory=list)
    seconds: float = 0.0


@pytest.fixture
def meter(monkeypatch: pytest.MonkeyPatch) -> WireMeter:
    m = WireMeter()
    # The store imports read_body from its http module at the call (lazily), so patch it there.
    real = http_module.read_body

    def counting(response: httpx.Response, **kwargs: Any) -> tuple[bytes, bool]:
        raw_iter = response.iter_raw
        slot = len(m.reads)
        m.reads.append(0)

        def iter_raw(chunk_size: int | None = None) -> Iterator[bytes]:
            for piece in raw_iter(chunk_size):
                m.reads[slot] += len(piece)
                yield piece

        response.iter_raw = iter_raw  # type: ignore[method-assign]
        return real(response, **kwargs)

    monkeypatch.setattr(http_module, "read_body", counting)
    return m


def _fetch(settings: Settings, url: str, meter: WireMeter | None = None) -> bytes:
    start = time.process_time()
    try:
        with SpecStore(settings) as store:
            return store.get(url, kind_hint=SpecKind.MCP).body
    finally:
        if meter is not None:
            meter.seconds = time.process_time() - start


def _rpc_server(server: LocalHTTPServer, tools_list: Callable[[dict[str, Any]], Reply]) -> str:
    """A stateless MCP server whose tools/list answer the test supplies."""

    def handler(req: Request) -> Reply:
        msg = json.loads(req.body)
        if msg.get("method") == "server/discover":
            result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
            return Reply(
                200,
                orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}),
                {"content-type": "application/json"},
            )
        return tools_list(msg)

    server.route("/mcp", method="POST", handler=handler)
    return server.url("/mcp")


def _page(msg: dict[str, Any], tools: list[dict[str, Any]], cursor: str | None = None) -> Reply:
    result: dict[str, Any] = {"tools": tools}
    if cursor is not None:
        result["nextCursor"] = cursor
    return Reply(
        200, orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), {"content-type": "application/json"}
    )


# --------------------------------------------------------------------------- endless and huge


def test_endless_sse_stream_is_cut_at_the_byte_limit(
    server: LocalHTTPServer, make_settings: MakeSettings, meter: WireMeter
) -> None:
    """An event stream that never answers (keep-alives and notifications forever) stops at --max-spec-bytes."""
    noise = b': keep-alive\n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n'
    server.route("/mcp", method="POST", body=noise * 200, content_type="text/event-stream", endless=True)
    with pytest.raises(
        SpecTooLargeError, match=r"MCP server/discover: the body grew past --max-spec-bytes \(1,048,576"
    ):
        _fetch(make_settings(max_spec_bytes=MiB, timeout=10.0), server.url("/mcp"), meter)
    assert meter.reads[0] <= MiB + 64 * 1024
    assert meter.seconds < 5


def test_slow_endless_sse_stream_is_cut_at_the_deadline(
    server: LocalHTTPServer, make_settings: MakeSettings, meter: WireMeter
) -> None:
    """A stream that drips forever, under any byte limit, stops at --timeout."""
    server.route(
        "/mcp",
        method="POST",
        body=b": drip\n\n",
        content_type="text/event-stream",
        endless=True,
        chunk_delay=0.02,
        chunk_size=8,
    )
    with pytest.raises(FetchTimeoutError, match=r"MCP server/discover: no complete response within 1 s"):
        _fetch(make_settings(timeout=1.0), server.url("/mcp"), meter)
    assert meter.seconds < 3
    assert meter.reads[0] < 64 * 1024


_HUGE: list[bytes] = []


def _huge_tools_list(msg: dict[str, Any]) -> Reply:
    """100 MB of tools/list, built once."""
    if not _HUGE:
        tool = b'{"name":"t","description":"' + b"x" * 1000 + b'","inputSchema":{"type":"object"}},'
        count = -(-100 * MiB // len(tool))  # rounded up: at least 100 MiB
        _HUGE.append(b'{"jsonrpc":"2.0","id":2,"result":{"tools":[' + tool * count + b'{"name":"last"}]}}')
    return Reply(200, _HUGE[0], {"content-type": "application/json"})


def test_a_100_mb_tools_list_is_cut_at_the_byte_limit(
    server: LocalHTTPServer, make_settings: MakeSettings, meter: WireMeter
) -> None:
    """A 100 MB answer with an honest Content-Length is read only up to --max-spec-bytes."""
    url = _rpc_server(server, _huge_tools_list)
    with pytest.raises(SpecTooLargeError, match=r"MCP tools/list: the body grew past --max-spec-bytes \(2,097,152"):
        _fetch(make_settings(max_spec_bytes=2 * MiB), url, meter)
    assert len(_HUGE[0]) >= 100 * MiB
    # At most one socket read (http_module.READ_SIZE) past the limit before the cut.
    assert meter.reads[-1] <= 2 * MiB + http_module.READ_SIZE
    assert meter.seconds < 5


def test_pages_together_are_bounded_too(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """Many pages each under the limit are still bounded together."""
    filler = [{"name": f"t{i}", "description": "y" * 2000} for i in range(150)]  # ~ 300 KB a page

    def pages(msg: dict[str, Any]) -> Reply:
        n = int(msg.get("params", {}).get("cursor", "0"))
        return _page(msg, filler, str(n + 1))

    url = _rpc_server(server, pages)
    with pytest.raises(SpecTooLargeError, match=r"MCP tools/list \(page 4\): the tools/list pages together grew"):
        _fetch(make_settings(max_spec_bytes=MiB), url)


# --------------------------------------------------------------------------- endless pagination


def test_ten_thousand_pages_stop_at_the_page_bound(
    server: LocalHTTPServer, make_settings: MakeSettings, meter: WireMeter
) -> None:
    """A server offering 10,000 pages is asked for MAX_PAGES (100) of them, then refused, quickly."""

    def pages(msg: dict[str, Any]) -> Reply:
        n = int(msg.get("params", {}).get("cursor", "0"))
        return _page(msg, [{"name": f"tool_{n}"}], str(n + 1) if n + 1 < 10_000 else None)

    url = _rpc_server(server, pages)
    with pytest.raises(
        FetchError, match=rf"still had a next page after {MAX_PAGES} pages.*\({MAX_PAGES} tools so far\)"
    ):
        _fetch(make_settings(), url, meter)
    assert server.hits("/mcp") == 1 + MAX_PAGES
    assert meter.seconds < 10


def test_a_repeated_cursor_is_a_loop(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A cursor seen before means the listing would never end: refused at once."""
    url = _rpc_server(server, lambda msg: _page(msg, [{"name": "again"}], "same"))
    with pytest.raises(FetchError, match=r"tools/list \(page 2\): the server returned cursor 'same' a second time"):
        _fetch(make_settings(), url)
    assert server.hits("/mcp") == 3


# --------------------------------------------------------------------------- hostile strings

_NAMES = [
    "\x1b[2J\x1b[H",  # clear the screen
    "\x1b]8;;https://evil.example/\x07click me\x1b]8;;\x07",  # OSC 8 hyperlink
    "\x1b]0;pwned\x07title",  # retitle the terminal
    "delete_\u202etxt.exe",  # bidi override
    "zero\u200bwidth",
    "nul\x00byte",
    "n" * 300,
    "fine_name",
]


def test_escape_sequences_in_tool_names_survive_as_data(
    server: LocalHTTPServer, make_settings: MakeSettings, tmp_path: Path
) -> None:
    """Names with terminal escapes, bidi and NUL are kept exactly, resolvable, flagged, and escaped in messages."""
    tools = [{"name": n, "description": "\x1b[31mred\x1b[0m " + "d" * 10_000} for n in _NAMES]
    url = _rpc_server(server, lambda msg: _page(msg, tools))
    settings = make_settings()
    with SpecStore(settings) as store:
        index = load_index(url, store, kind_hint=SpecKind.MCP)
    assert [e.key for e in index.operations] == _NAMES
    assert SpecIndex.from_json(index.to_json()).operations == index.operations
    flagged = [d for d in index.diagnostics if d.code == "mcp-unusual-tool-name"]
    assert len(flagged) == len(_NAMES) - 1
    for d in flagged:
        for raw in ("\x1b", "\x00", "\u202e", "\u200b"):
            assert raw not in d.message
    first = index.operations[0]
    assert first.description.startswith("\x1b[31mred")  # kept as data: renderers escape
    assert len(first.description) == 4096
    assert first.extra["description_truncated"] is True
    for name in _NAMES:
        got = resolve(*rest_operation(path=name, spec_url=url), index)
        assert isinstance(got, Target)
        assert got.entry.operation_id == name
    with SpecStore(make_settings(offline=True)) as store:  # the cached index comes back the same
        assert load_index(url, store, kind_hint=SpecKind.MCP).operations == index.operations


def test_unknown_tool_suggestions_do_not_break_on_hostile_names(
    server: LocalHTTPServer, make_settings: MakeSettings
) -> None:
    """Suggestions may be hostile names; they are returned as data and the message is one line of text."""
    url = _rpc_server(server, lambda msg: _page(msg, [{"name": n} for n in _NAMES]))
    with SpecStore(make_settings()) as store:
        index = build_index(store.get(url, kind_hint=SpecKind.MCP), kind_hint=SpecKind.MCP)
    got = resolve(*rest_operation(path="fine_nam", spec_url=url), index)
    assert not isinstance(got, Target)
    assert got.suggestions[0] == "fine_name"


# --------------------------------------------------------------------------- metadata URLs aimed inward


def _cassette_with_challenge(tmp_path: Path, resource_metadata: str) -> Path:
    url = "https://hostile.example.com/mcp"
    challenge = f'Bearer error="invalid_token", resource_metadata="{resource_metadata}"'
    cassette = Cassette(tmp_path / "hostile.yaml")
    for body in (
        server_discover_request(),
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
        },
    ):
        cassette.append(
            Interaction(
                method="POST",
                uri=url,
                request_body=orjson.dumps(body),
                status=401,
                reason="Unauthorized",
                response_headers=(("www-authenticate", challenge),),
                body=b"",
            )
        )
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        cassette.append(
            Interaction(method="GET", uri=f"https://hostile.example.com{path}", request_body=None, status=404, body=b"")
        )
    cassette.save()
    return cassette.path


@pytest.mark.parametrize(
    ("target", "code"),
    [
        ("http://169.254.169.254/latest/meta-data/iam/", "url-blocked"),
        ("http://127.0.0.1:22/", "url-blocked"),
        ("file:///etc/passwd", "url-blocked"),
    ],
)
def test_resource_metadata_pointing_inward_is_refused_and_recorded(
    tmp_path: Path, make_settings: MakeSettings, target: str, code: str
) -> None:
    """resource_metadata aimed at the metadata service, loopback or a file: refused, recorded, next URL tried."""
    path = _cassette_with_challenge(tmp_path, target)
    with SpecStore(make_settings(cassette=path, allow_private_network=False)) as store:
        spec = store.get("https://hostile.example.com/mcp", kind_hint=SpecKind.MCP)
    tried = orjson.loads(spec.body)["auth"]["protected_resource_metadata"]["tried"]
    assert tried[0]["url"] == target
    assert tried[0]["outcome"].startswith(f"{code}:")
    assert [t["status"] for t in tried[1:]] == [404, 404]
    index = build_index(spec, kind_hint=SpecKind.MCP)
    # The server said where its metadata is and it could not be read: unknown, not a bare bearer (issue 14 item 1).
    assert index.extra["server_requirements"] is None
    assert "mcp-metadata-unavailable" in {d.code for d in index.diagnostics}
