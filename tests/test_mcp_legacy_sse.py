"""The old HTTP+SSE MCP transport's stream as a stranger's server may write it: responses out of order (an answer
to a later request held until that request is asked), noise between them (notifications, server requests,
non-JSON data, answers to ids never sent), JSON-RPC batches, answers inline in the POST's own body, a
bounded number of held answers, and a stream that ends before the response. A scripted ASGI server on
127.0.0.1 answers each POST by pushing the events the test chose onto the open GET; the order of events on
one stream is the order they were pushed, so nothing here depends on timing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest

from ramscope._sse import SSEEvent
from ramscope.config import Settings
from ramscope.errors import FetchError, FetchTimeoutError
from ramscope.specs import SpecKind
from ramscope.store import SpecStore
from ramscope.store.mcp import MAX_PAGES, _SSEChannel
from tests.support.asgi import ASGIApp, ASGIServer, Receive, Scope, Send

MakeSettings = Callable[..., Settings]

#: Closes the GET stream (pushed in place of an event).
END = b""
#: A POST's answer: events to push on the stream, and the POST's own (status, body).
Script = Callable[[dict[str, Any]], tuple[list[bytes], tuple[int, bytes]]]

INIT = {
    "protocolVersion": "2024-11-05",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "legacy", "version": "1"},
}
TOOL_A = {"name": "lookup_weather", "inputSchema": {"type": "object"}}
TOOL_B = {"name": "book_flight", "inputSchema": {"type": "object"}}


def event(msg: Any) -> bytes:
    """One SSE message event carrying ``msg`` as JSON (or raw text)."""
    data = msg if isinstance(msg, str) else json.dumps(msg)
    return f"event: message\ndata: {data}\n\n".encode()


def result(req_id: Any, res: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req_id, "result": res}


ACCEPTED = (202, b"")


def _app(script: Script, *, first: bytes = b"event: endpoint\ndata: /messages/\n\n", get_status: int = 200) -> ASGIApp:
    """POST /sse → 405 (not Streamable HTTP); GET /sse → `endpoint`, then whatever the script pushes;
    POST /messages/ → the script's answer; anything else 404 (no authorization metadata)."""
    state: dict[str, asyncio.Queue[bytes]] = {}

    async def respond(send: Send, status: int, body: bytes, ctype: bytes = b"application/json") -> None:
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", ctype)]})
        await send({"type": "http.response.body", "body": body})

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        method, path = scope["method"], scope["path"]
        if method == "GET" and path == "/sse" and get_status != 200:
            await send(
                {"type": "http.response.start", "status": get_status, "headers": [(b"www-authenticate", b"Bearer")]}
            )
            await send({"type": "http.response.body", "body": b""})
            return
        if method == "GET" and path == "/sse":
            stream = state["stream"] = asyncio.Queue()
            start = {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
            await send(start)
            await send({"type": "http.response.body", "body": first, "more_body": True})
            while (chunk := await stream.get()) != END:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
            return
        if method == "POST" and path == "/messages/":
            body = b""
            while True:
                part = await receive()
                body += part.get("body", b"")
                if not part.get("more_body"):
                    break
            events, (status, answer) = script(json.loads(body))
            for chunk in events:
                state["stream"].put_nowait(chunk)
            await respond(send, status, answer)
            return
        await respond(send, 405 if path == "/sse" else 404, b"")

    return app


@pytest.fixture
def serve() -> Iterator[Callable[..., ASGIServer]]:
    servers: list[ASGIServer] = []

    def start(script: Script, **kw: Any) -> ASGIServer:
        srv = ASGIServer(lambda base: _app(script, **kw))
        servers.append(srv.__enter__())
        return srv

    yield start
    for srv in servers:
        srv.__exit__(None, None, None)


def _capture(settings: Settings, url: str) -> dict[str, Any]:
    with SpecStore(settings) as store:
        capture: dict[str, Any] = orjson.loads(store.get(url, kind_hint=SpecKind.MCP).body)
    return capture


def test_an_answer_sent_before_its_request_is_held_for_its_turn(
    serve: Callable[..., ASGIServer], make_settings: MakeSettings
) -> None:
    """Page 1's answer arrives before initialize's, amid a notification, a server request, non-JSON data and
    answers to ids never sent: each request still gets its own answer, and both pages are listed."""

    def script(msg: dict[str, Any]) -> tuple[list[bytes], tuple[int, bytes]]:
        method = msg.get("method")
        if method == "initialize":
            return [
                event("not json at all"),
                event({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}}),
                event({"jsonrpc": "2.0", "id": 7, "method": "ping"}),
                event(result(2, {"tools": [TOOL_A], "nextCursor": "c1"})),
                event(result("other", {"content": []})),
                event(result(99, {"content": []})),
                event(result(1, INIT)),
            ], ACCEPTED
        if method == "tools/list" and msg["id"] == 3:
            assert msg["params"] == {"cursor": "c1"}
            return [event(result(3, {"tools": [TOOL_B]})), END], ACCEPTED
        return [], ACCEPTED  # notifications/initialized; tools/list id 2 (already answered)

    srv = serve(script)
    capture = _capture(make_settings(), srv.url("/sse"))
    assert capture["transport"] == "http+sse"
    assert (capture["protocol_version"], capture["pages"]) == ("2024-11-05", 2)
    assert [t["name"] for t in capture["tools"]] == ["lookup_weather", "book_flight"]
    assert [s["step"] for s in capture["steps"]][-4:] == [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/list (page 2)",
    ]


def test_batches_on_the_stream_and_in_the_post_answer_are_read(
    serve: Callable[..., ASGIServer], make_settings: MakeSettings
) -> None:
    """A JSON-RPC batch (2025-03-26 allowed them) holding the answer among other messages, on the stream;
    and a POST answered inline with a batch instead of 202 (the stream is then not needed)."""

    def script(msg: dict[str, Any]) -> tuple[list[bytes], tuple[int, bytes]]:
        method = msg.get("method")
        if method == "initialize":
            batch = [{"jsonrpc": "2.0", "method": "notifications/message", "params": {}}, result(1, INIT)]
            return [event(batch)], ACCEPTED
        if method == "tools/list":
            inline = json.dumps([{"jsonrpc": "2.0", "id": 42, "result": {}}, result(2, {"tools": [TOOL_A]})])
            return [END], (200, inline.encode())
        return [], ACCEPTED

    srv = serve(script)
    capture = _capture(make_settings(), srv.url("/sse"))
    assert [t["name"] for t in capture["tools"]] == ["lookup_weather"]
    assert capture["pages"] == 1


@pytest.mark.parametrize(
    ("ends_at", "message"),
    [
        (
            "initialize",
            "MCP initialize: the HTTP+SSE stream ended (HTTP 200 OK (text/event-stream)) before the "
            "response to request 1",
        ),
        (
            "tools/list",
            "MCP tools/list: the HTTP+SSE stream ended (HTTP 200 OK (text/event-stream)) before the "
            "response to request 2",
        ),
    ],
)
def test_a_stream_that_ends_before_the_response_is_an_error(
    serve: Callable[..., ASGIServer], make_settings: MakeSettings, ends_at: str, message: str
) -> None:
    """The server closes the stream instead of answering: a FetchError naming the step and the request."""

    def script(msg: dict[str, Any]) -> tuple[list[bytes], tuple[int, bytes]]:
        method = msg.get("method")
        if method == ends_at:
            return [event({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}), END], ACCEPTED
        if method == "initialize":
            return [event(result(1, INIT))], ACCEPTED
        return [], ACCEPTED

    srv = serve(script)
    with pytest.raises(FetchError) as info:
        _capture(make_settings(), srv.url("/sse"))
    assert type(info.value) is FetchError
    assert str(info.value) == f"{srv.url('/sse')}: {message}"


def test_a_stream_whose_first_event_is_not_the_endpoint_is_not_that_transport(
    serve: Callable[..., ASGIServer], make_settings: MakeSettings
) -> None:
    """The old transport's first event names the endpoint; a message first means it is not that transport."""
    srv = serve(lambda msg: ([], ACCEPTED), first=event(result(1, INIT)))
    with pytest.raises(FetchError) as info:
        _capture(make_settings(), srv.url("/sse"))
    assert str(info.value) == (
        f"{srv.url('/sse')}: MCP initialize: HTTP 405 Method Not Allowed; not an MCP endpoint, or one ramscope "
        "cannot speak to; a GET did not open an HTTP+SSE stream either (an event stream without an endpoint event)"
    )


def test_a_stream_demanding_a_credential_is_a_denial_not_an_error(
    serve: Callable[..., ASGIServer], make_settings: MakeSettings
) -> None:
    """GET answered 401: the tools are behind a credential (recorded as such), not "not an MCP server"."""
    srv = serve(lambda msg: ([], ACCEPTED), get_status=401)
    capture = _capture(make_settings(), srv.url("/sse"))
    assert (capture["tools_listed"], capture["auth"]["status"]) == (False, 401)
    assert capture["steps"][-1]["step"] == "GET (HTTP+SSE)"
    assert capture["steps"][-1]["outcome"] == "credential demanded"


# --------------------------------------------------------------------------- the held answers' bound


class _Conv:
    """What _SSEChannel asks of its conversation: no time left, so an empty queue is a timeout at once."""

    url = "http://127.0.0.1:9/sse"

    class ctx:  # stands in for the FetchContext attribute
        class settings:
            timeout = 30.0

    def time_left(self) -> float:
        return 0.0


def _channel(messages: list[Any]) -> _SSEChannel:
    channel = _SSEChannel(_Conv())  # type: ignore[arg-type]
    for m in messages:
        channel.items.put(("event", SSEEvent(data=json.dumps(m))))
    return channel


def test_answers_held_for_later_are_bounded() -> None:
    """A stream flooding answers to other ids before the one asked for keeps at most MAX_PAGES of them
    (the first ones): a server cannot make the client hold an unbounded number of messages."""
    flood = [result(100 + i, {"tools": []}) for i in range(MAX_PAGES + 150)]
    channel = _channel([*flood, result(2, {"tools": [TOOL_A]})])
    assert channel.response(2, "tools/list") == result(2, {"tools": [TOOL_A]})
    assert sorted(channel.waiting) == list(range(100, 100 + MAX_PAGES))
    # A held answer is handed out when its request asks, once.
    assert channel.response(150, "tools/list") == result(150, {"tools": []})
    assert 150 not in channel.waiting
    # One past the bound was dropped: asking for it waits for the stream, which has nothing more.
    with pytest.raises(FetchTimeoutError) as info:
        channel.response(100 + MAX_PAGES, "tools/list (page 3)")
    assert str(info.value) == (
        "http://127.0.0.1:9/sse: MCP tools/list (page 3): no event on the HTTP+SSE stream within the time allowed "
        "(--timeout 30 s for the whole stream, or --spec-deadline)"
    )


def test_only_answers_with_integer_ids_are_held() -> None:
    """Server requests, notifications, string ids and batches are skipped, never held."""
    channel = _channel(
        [
            {"jsonrpc": "2.0", "id": 5, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/progress"},
            result("9", {}),
            [result(8, {})],
            result(2, {"tools": []}),
        ]
    )
    assert channel.response(2, "tools/list") == result(2, {"tools": []})
    assert channel.waiting == {}


def test_a_boolean_id_is_not_held() -> None:
    """`{"id": true, ...}` answers no request (JSON-RPC ids are strings or numbers): skipped, not held."""
    channel = _channel([result(True, {"tools": []}), result(2, {"tools": []})])
    assert channel.response(2, "tools/list") == result(2, {"tools": []})
    assert channel.waiting == {}


class _Exchange:
    status, reason, media_type, body = 200, "OK", "text/event-stream", b"..."


def test_an_answer_to_an_id_never_sent_does_not_end_the_stream() -> None:
    """The stream is read on after `{"id": 99, "result": {"tools": []}}` while request 1 is unanswered."""
    pieces = [event(result(99, {"tools": []})), event(result(1, INIT))]

    class Ctx:
        class settings:
            timeout = 30.0

        @staticmethod
        def exchange(*_a: Any, until: Callable[[bytes], bool], **_k: Any) -> _Exchange:
            # The store's exchange: pieces one read at a time, until `until` says stop.
            for piece in pieces:
                if until(piece):
                    break
            return _Exchange()

    conv = _Conv()
    conv.ctx = Ctx  # type: ignore[assignment]
    channel = _SSEChannel(conv)  # type: ignore[arg-type]
    channel._read()
    assert channel.response(1, "initialize") == result(1, INIT)
