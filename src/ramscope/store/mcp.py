"""The MCP fetcher: an MCP server's ``tools/list`` and its authorization, captured as one document.

An MCP server has no document to GET; its "spec" is a JSON-RPC conversation
over Streamable HTTP. This fetcher holds that conversation through
:meth:`FetchContext.exchange <ramscope.store.FetchContext.exchange>` only (so
every request is guarded, bounded, recorded and replayable) and returns
ramscope's own JSON *capture* of it (:data:`CAPTURE_FORMAT`), which the MCP
adapter (:mod:`ramscope.specs.mcp`) indexes. The conversation::

    POST server/discover          MCP-Protocol-Version: 2026-07-28, Mcp-Method, params._meta   (stateless era)
      └ a 4xx without a modern JSON-RPC error (e.g. 400 "Server not initialized", 404, 405, 401/403),
        or a result whose supportedVersions does not name 2026-07-28 (lenient servers answer ``{}``):
        POST initialize           protocolVersion 2025-11-25 offered; 2025-06-18, 2025-03-26, 2024-11-05 accepted
          └ a 4xx (not 401/403): the old HTTP+SSE transport: GET the URL → ``endpoint`` event (same
            origin) → the POSTs below go there, answered 202, their responses read from the stream
        POST notifications/initialized                        → 202      (handshake era)
    POST tools/list (+ nextCursor pages, at most MAX_PAGES)   Mcp-Session-Id, MCP-Protocol-Version
    DELETE the session                                        (failure is not an error)
    401/403 → WWW-Authenticate parsed; Protected Resource Metadata (RFC 9728): the challenge's
              resource_metadata, then the path-suffixed well-known URL, then the root one;
              then the authorization server's metadata (RFC 8414, then OpenID Connect Discovery);
              without PRM (404/410 everywhere), the 2025-03-26 discovery: RFC 8414 metadata at
              the MCP server's origin. Only 404/410 means "not published": any other failure
              makes the capture's ``auth.metadata_state`` "unknown" and the capture uncacheable.

Every exchange of one conversation, metadata included, is also bounded together by the
spec deadline (``--spec-deadline``), which the store applies around the fetcher.

Protected-resource metadata is looked for even when the tools were listed
without a credential: a server may list anonymously and still demand a token
to call them. No client capabilities are declared (``{}``), and the capture
says so, because servers list different tools to clients that declare
sampling, elicitation or roots.

Requests are deterministic (fixed JSON-RPC ids, stable bodies; ``clientInfo``
is left out of cassette match keys), so a recorded conversation replays. The
conversation's exchanges are not cached one by one (``cache=False``): a cached
``initialize`` would hand back a dead session id; the capture as a whole is
cached by the store instead. An SSE answer is read only until the JSON-RPC
response with our id has arrived (``until=``); an endless or huge stream is cut
off by the store's limits (``--max-spec-bytes``, ``--timeout``), and every
failure names the step it happened in.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import orjson

from .._sse import SSEDecoder, parse_sse
from .._version import __version__
from ..documents import CAPTURE_FORMAT
from ..errors import FetchError, FetchTimeoutError, SpecTooLargeError
from ._challenge import Challenge, parse_www_authenticate
from .cache import listing_cache_control
from .fetchers import FetchContext, FetcherResult
from .keys import canonical_url
from .model import Exchange

__all__ = [
    "CAPTURE_FORMAT",
    "CLIENT_CAPABILITIES",
    "HANDSHAKE_VERSIONS",
    "MAX_PAGES",
    "STATELESS_VERSION",
    "as_metadata_urls",
    "fetch_mcp",
    "initialize_request",
    "initialized_notification",
    "legacy_as_metadata_url",
    "prm_urls",
    "server_discover_request",
    "tools_list_request",
]

#: The stateless protocol revision (no initialize, no session).
STATELESS_VERSION = "2026-07-28"
#: The handshake revisions, newest first; the first is the one offered in ``initialize``.
HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
#: ``tools/list`` pages followed at most; a server that goes on is refused, not truncated.
MAX_PAGES = 100
#: The client capabilities ramscope declares: none.
CLIENT_CAPABILITIES: Mapping[str, Any] = {}

_ACCEPT_RPC = "application/json, text/event-stream"
_ACCEPT_JSON = "application/json"
_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
_META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
#: JSON-RPC errors by which a 2026-07-28 server rejects a request (header mismatch, missing
#: capability, unsupported version): the server is modern, falling back would be wrong.
_MODERN_REJECTIONS = frozenset({-32020, -32021, -32022})
_UNSUPPORTED_VERSION = -32022
_SNIPPET = 2048
#: The only answers of a well-known URL that mean "nothing is published here".
_ABSENT = frozenset({404, 410})
_CLIENT_INFO = {"name": "ramscope", "version": __version__}
_PRM_FIELDS = (
    "resource",
    "authorization_servers",
    "scopes_supported",
    "bearer_methods_supported",
    "resource_name",
    "resource_documentation",
)
_AS_FIELDS = (
    "issuer",
    "authorization_endpoint",
    "token_endpoint",
    "device_authorization_endpoint",
    "registration_endpoint",
    "grant_types_supported",
    "response_types_supported",
    "scopes_supported",
    "code_challenge_methods_supported",
    "token_endpoint_auth_methods_supported",
    "client_id_metadata_document_supported",
)


# --------------------------------------------------------------------------- requests (public: cassettes use them)


def _rpc(req_id: int | None, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0"}
    if req_id is not None:
        msg["id"] = req_id
    msg["method"] = method
    if params is not None:
        msg["params"] = dict(params)
    return msg


def _modern_meta() -> dict[str, Any]:
    return {
        _META_VERSION: STATELESS_VERSION,
        _META_CAPABILITIES: dict(CLIENT_CAPABILITIES),
        _META_CLIENT_INFO: dict(_CLIENT_INFO),
    }


def server_discover_request() -> dict[str, Any]:
    """The stateless era's first request (id 1)."""
    return _rpc(1, "server/discover", {"_meta": _modern_meta()})


def initialize_request() -> dict[str, Any]:
    """The handshake era's first request (id 1), offering the newest handshake revision."""
    return _rpc(
        1,
        "initialize",
        {
            "protocolVersion": HANDSHAKE_VERSIONS[0],
            "capabilities": dict(CLIENT_CAPABILITIES),
            "clientInfo": _CLIENT_INFO,
        },
    )


def initialized_notification() -> dict[str, Any]:
    return _rpc(None, "notifications/initialized", None)


def tools_list_request(page: int, cursor: str | None, *, stateless: bool) -> dict[str, Any]:
    """``tools/list`` for page ``page`` (0-based; JSON-RPC id ``page + 2``)."""
    params: dict[str, Any] = {}
    if stateless:
        params["_meta"] = _modern_meta()
    if cursor is not None:
        params["cursor"] = cursor
    return _rpc(page + 2, "tools/list", params if params else None)


def prm_urls(endpoint: str, hint: str | None = None) -> list[str]:
    """Where Protected Resource Metadata is looked for, in order (RFC 9728 3.1, MCP authorization).

    The challenge's ``resource_metadata`` first, then the well-known URL with the
    endpoint's path (and query) appended, then the one at the root; no repeats.
    """
    parts = urlsplit(endpoint)
    path = parts.path.rstrip("/")
    suffixed = urlunsplit((parts.scheme, parts.netloc, "/.well-known/oauth-protected-resource" + path, parts.query, ""))
    root = urlunsplit((parts.scheme, parts.netloc, "/.well-known/oauth-protected-resource", "", ""))
    return list(dict.fromkeys(u for u in (hint, suffixed, root) if u))


def legacy_as_metadata_url(endpoint: str) -> str:
    """Where a 2025-03-26 server's authorization-server metadata is: RFC 8414's URL at the endpoint's origin.

    That revision had no protected-resource metadata; the MCP server's URL with its
    path discarded was the authorization base URL (and so the issuer).
    """
    return _origin(endpoint).rstrip("/") + "/.well-known/oauth-authorization-server"


def as_metadata_urls(issuer: str) -> list[str]:
    """Where an authorization server's metadata is looked for, in the MCP authorization spec's order.

    RFC 8414 with the issuer's path inserted, OpenID Connect Discovery with it
    inserted, then OpenID Connect Discovery appended to the issuer; without a
    path, the two root well-known URLs.
    """
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(p: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, p, "", ""))

    if not path:
        return [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")]
    return [
        at("/.well-known/oauth-authorization-server" + path),
        at("/.well-known/openid-configuration" + path),
        at(path + "/.well-known/openid-configuration"),
    ]


# --------------------------------------------------------------------------- reading answers


def _matches(msg: Any, req_id: int) -> bool:
    """The response to ``req_id``: a result or error with our id (echoed as a string by some servers).

    An error with a null id answers a request whose id the server could not read
    (JSON-RPC 2.0 5): on a POST carrying one request, that is ours.
    """
    if not isinstance(msg, dict) or "method" in msg:
        return False
    rid = msg.get("id")
    if "error" in msg and rid is None:
        return True
    if isinstance(rid, bool) or rid not in (req_id, str(req_id)):
        return False
    return "result" in msg or "error" in msg


def _find_response(doc: Any, req_id: int) -> dict[str, Any] | None:
    if _matches(doc, req_id):
        found: dict[str, Any] = doc
        return found
    if isinstance(doc, list):  # a JSON-RPC batch (2025-03-26 allowed them)
        for item in doc:
            if _matches(item, req_id):
                hit: dict[str, Any] = item
                return hit
    return None


def _loads(text: str | bytes) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


class _ResponseWatcher:
    """``until=`` for one exchange: True once the SSE stream has delivered the response to ``req_id``.

    A JSON answer is read to its end (the store bounds it); only an event stream
    is stopped early, since the server may keep it open after answering.
    """

    def __init__(self, req_id: int) -> None:
        self._req_id = req_id
        self._decoder = SSEDecoder()
        self._mode: str | None = None

    def __call__(self, piece: bytes) -> bool:
        if self._mode is None:
            head = piece.lstrip()
            if not head:
                return False
            self._mode = "json" if head[:1] in (b"{", b"[") else "sse"
        if self._mode == "json":
            return False
        return any(_find_response(_loads(ev.data), self._req_id) for ev in self._decoder.feed(piece) if ev.data)


def _response(ex: Exchange, req_id: int) -> dict[str, Any] | None:
    """The JSON-RPC response to ``req_id`` in an answer, whether JSON or an event stream."""
    if ex.media_type != "text/event-stream":
        found = _find_response(_loads(ex.body), req_id)
        if found is not None or b"data:" not in ex.body:
            return found
    for ev in parse_sse(ex.body):
        if ev.data and (hit := _find_response(_loads(ev.data), req_id)) is not None:
            return hit
    return None


def _snippet(body: bytes) -> str:
    text = body[:_SNIPPET].decode("utf-8", "replace")
    return text + ("…" if len(body) > _SNIPPET else "")


def _error_text(msg: Mapping[str, Any]) -> str:
    err = msg.get("error")
    if not isinstance(err, dict):
        return "an error without details"
    code, message = err.get("code"), err.get("message")
    return f"JSON-RPC error {code}: {str(message)[:300]}"


def _describe(ex: Exchange) -> str:
    return f"HTTP {ex.status} {ex.reason}".rstrip() + (f" ({ex.media_type})" if ex.body else "")


# --------------------------------------------------------------------------- the conversation


@dataclass
class _Denied:
    """The server demanded a credential (401/403) at ``step``."""

    step: str
    ex: Exchange


@dataclass
class _Listing:
    era: str
    protocol_version: str
    server_info: Any = None
    server_capabilities: Any = None
    supported_versions: list[Any] | None = None
    tools: list[Any] = field(default_factory=list)
    pages: int = 0
    list_meta: dict[str, Any] = field(default_factory=dict)
    session: bool = False
    session_ended: int | str | None = None


class _FallBack(Exception):
    """The stateless attempt says: not a 2026-07-28 server; try the handshake."""


class _NoStreamableHTTP(Exception):
    """initialize was refused with a 4xx: maybe a server of the old HTTP+SSE transport (2024-11-05)."""

    def __init__(self, error: FetchError) -> None:
        super().__init__(str(error))
        self.error = error


class _SSEChannel:
    """The old HTTP+SSE transport's event stream: one GET held open in a thread while requests are POSTed.

    The stream is read through the store's own guarded exchange (so ``--max-spec-bytes``, ``--timeout``,
    the spec deadline, the URL guard and cassettes all apply to it as to any answer); each event is
    handed to the conversation through a queue. Reading stops as soon as the event that ends the
    conversation has arrived: an error, or a ``tools/list`` result without a next cursor.
    """

    _END = "end"
    _ERROR = "error"

    def __init__(self, conv: _Conversation) -> None:
        self.conv = conv
        self.items: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self.stop = threading.Event()
        self.waiting: dict[Any, Any] = {}
        #: The ids of the requests posted on this stream's endpoint: only an answer to one of them can
        #: end the stream (added before each POST, so before its answer can arrive).
        self.sent: set[int] = set()
        self.ended: Exchange | None = None
        self.endpoint: str | None = None
        self._thread: threading.Thread | None = None

    def open(self) -> None:
        # The spec deadline (a context variable) applies in the reading thread too.
        ctx = contextvars.copy_context()
        self._thread = threading.Thread(target=ctx.run, args=(self._read,), name="ramscope-mcp-sse", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        decoder = SSEDecoder()

        def until(piece: bytes) -> bool:
            for ev in decoder.feed(piece):
                self.items.put(("event", ev))
                if _ends_conversation(ev, self.sent):
                    self.stop.set()
            return self.stop.is_set()

        try:
            ex = self.conv.ctx.exchange(
                "GET", self.conv.url, headers={"accept": "text/event-stream"}, cache=False, until=until
            )
        except BaseException as exc:  # handed to the conversation's thread, which raises it
            self.items.put((self._ERROR, exc))
            return
        self.items.put((self._END, ex))

    def next_item(self, step: str) -> tuple[str, Any]:
        left = self.conv.time_left()
        try:
            return self.items.get(timeout=max(left, 0.0))
        except queue.Empty:
            raise FetchTimeoutError(
                f"MCP {step}: no event on the HTTP+SSE stream within the time allowed "
                f"(--timeout {self.conv.ctx.settings.timeout:g} s for the whole stream, or --spec-deadline)",
                url=self.conv.url,
            ) from None

    def first_event(self) -> tuple[str | None, Exchange | None]:
        """The ``endpoint`` event's data, or (None, the GET's answer) when the stream is not one."""
        step = "GET (HTTP+SSE)"
        while True:
            kind, item = self.next_item(step)
            if kind == self._ERROR:
                raise _with_step(item, step, self.conv.url)
            if kind == self._END:
                self.ended = item
                return None, item
            ev = item
            if ev.event == "endpoint":
                return ev.data, None
            # The old transport's first event is the endpoint; anything else first is not that transport.
            if ev.data:
                return None, None

    def response(self, req_id: int, step: str) -> dict[str, Any]:
        """The JSON-RPC response to ``req_id`` from the stream (server requests and notifications skipped)."""
        if req_id in self.waiting:
            found: dict[str, Any] = self.waiting.pop(req_id)
            return found
        while True:
            if self.ended is not None:
                raise FetchError(
                    f"MCP {step}: the HTTP+SSE stream ended ({_describe(self.ended)}) before the response "
                    f"to request {req_id}",
                    url=self.conv.url,
                )
            kind, item = self.next_item(step)
            if kind == self._ERROR:
                raise _with_step(item, step, self.conv.url)
            if kind == self._END:
                self.ended = item
                continue
            msg = _loads(item.data) if item.data else None
            if _find_response(msg, req_id) is not None:
                hit: dict[str, Any] = _find_response(msg, req_id) or {}
                return hit
            rid = msg.get("id") if isinstance(msg, dict) else None
            # JSON-RPC ids are strings or numbers: `true` is neither, though Python takes it for the int 1.
            answer_to_another = isinstance(msg, dict) and "method" not in msg and type(rid) is int
            if answer_to_another and len(self.waiting) < MAX_PAGES:  # kept for its turn
                assert isinstance(msg, dict)
                self.waiting[msg["id"]] = msg

    def close(self) -> None:
        """Stop reading; wait (briefly, bounded) for the GET to be recorded when it has already ended."""
        self.stop.set()
        if self._thread is not None:
            self._thread.join(timeout=min(1.0, max(self.conv.time_left(), 0.0)))


def _ends_conversation(ev: Any, sent: set[int]) -> bool:
    msg = _loads(ev.data) if ev.data else None
    if not isinstance(msg, dict) or "method" in msg or "id" not in msg:
        return False
    rid = msg["id"]
    if isinstance(rid, bool) or not any(rid in (i, str(i)) for i in sent):
        # An answer to no request of ours (an id never sent, or `true`, which Python takes for 1).
        return rid is None and "error" in msg
    if "error" in msg:
        return True
    result = msg.get("result")
    # tools/list results (ids >= 2) without a next page end the listing.
    return isinstance(result, dict) and "tools" in result and not isinstance(result.get("nextCursor"), str)


def _with_step(exc: BaseException, step: str, url: str) -> BaseException:
    if isinstance(exc, FetchError):
        return type(exc)(f"MCP {step}: {exc.detail}", url=url)
    return exc


class _Conversation:
    def __init__(self, ctx: FetchContext, url: str) -> None:
        self.ctx = ctx
        self.url = url
        self.steps: list[dict[str, Any]] = []
        self.listed_bytes = 0
        #: The old HTTP+SSE transport's stream, when the server speaks only that.
        self.channel: _SSEChannel | None = None
        self.started = time.monotonic()

    def time_left(self) -> float:
        """Seconds the conversation may still wait for an event: the stream's --timeout, the spec deadline."""
        from .http import remaining_time  # noqa: PLC0415

        left = self.ctx.settings.timeout - (time.monotonic() - self.started)
        spec = remaining_time()
        return left if spec is None else min(left, spec)

    # ---- one exchange

    def _exchange(
        self,
        step: str,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        body: object = None,
        until: Callable[[bytes], bool] | None = None,
        cache: bool = False,
    ) -> Exchange:
        try:
            return self.ctx.exchange(method, url, headers=headers, json_body=body, cache=cache, until=until)
        except FetchError as exc:
            # Same class (so the reason code stays), with the step that failed in front.
            raise type(exc)(f"MCP {step}: {exc.detail}", url=self.url) from None

    def _post(self, step: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> tuple[Exchange, Any]:
        req_id = body.get("id")
        if self.channel is not None and self.channel.endpoint is not None:
            # HTTP+SSE: the POST is accepted (202) and the response comes on the event stream.
            if isinstance(req_id, int):
                self.channel.sent.add(req_id)
            ex = self._exchange(
                step, "POST", self.channel.endpoint, headers={"accept": _ACCEPT_RPC, **headers}, body=dict(body)
            )
            if not ex.ok or not isinstance(req_id, int):
                return ex, None
            msg = _response(ex, req_id) if ex.body.strip() else None
            return ex, msg if msg is not None else self.channel.response(req_id, step)
        watcher = _ResponseWatcher(req_id) if isinstance(req_id, int) else None
        ex = self._exchange(
            step, "POST", self.url, headers={"accept": _ACCEPT_RPC, **headers}, body=dict(body), until=watcher
        )
        msg = _response(ex, req_id) if isinstance(req_id, int) else None
        return ex, msg

    def _note(self, step: str, ex: Exchange, outcome: str) -> None:
        self.steps.append(
            {"step": step, "method": ex.method, "status": ex.status, "media_type": ex.media_type, "outcome": outcome}
        )

    # ---- eras

    def stateless(self) -> _Listing | _Denied:
        step = "server/discover"
        ex, msg = self._post(step, server_discover_request(), _modern_headers("server/discover"))
        if msg is not None and "result" in msg and ex.ok:
            result = msg["result"] if isinstance(msg["result"], dict) else {}
            versions = result.get("supportedVersions")
            if not isinstance(versions, list) or STATELESS_VERSION not in versions:
                # Some servers answer every unknown method with an empty result (the conformance suite's
                # mock servers answer ``{}``): only a result naming this revision says the server speaks it.
                said = "no supportedVersions" if not isinstance(versions, list) else f"supportedVersions {versions!r}"
                self._note(step, ex, f"not a server/discover result ({said[:200]}): handshake")
                raise _FallBack
            self._note(step, ex, "stateless server")
            meta = result.get("_meta")
            meta = meta if isinstance(meta, dict) else {}
            listing = _Listing(
                era="stateless",
                protocol_version=STATELESS_VERSION,
                server_info=meta.get(_META_SERVER_INFO),
                server_capabilities=result.get("capabilities"),
                supported_versions=versions,
            )
            denied = self._pages(listing, stateless=True)
            return denied or listing
        if msg is not None and isinstance(msg.get("error"), dict) and msg["error"].get("code") in _MODERN_REJECTIONS:
            err: dict[str, Any] = msg["error"]
            data = err.get("data")
            supported: list[Any] = []
            if isinstance(data, dict) and isinstance(data.get("supported"), list):
                supported = data["supported"]
            if err.get("code") == _UNSUPPORTED_VERSION and any(v in HANDSHAKE_VERSIONS for v in supported):
                self._note(step, ex, f"{_error_text(msg)}; the server offers {supported}: handshake")
                raise _FallBack
            self._note(step, ex, _error_text(msg))
            raise FetchError(
                f"MCP {step}: the server speaks the stateless protocol but refused ramscope's request "
                f"({_error_text(msg)}; it supports {supported or 'unspecified versions'})",
                url=self.url,
            )
        if ex.status in (401, 403):
            # Authorization is checked before any routing by era; the handshake asks again and tells the era.
            self._note(step, ex, f"credential demanded ({_describe(ex)}): handshake")
            raise _FallBack
        if 400 <= ex.status < 500 or (ex.ok and msg is not None):
            # A handshake-era server: 400 "Server not initialized", 404/405, 401/403 before any routing,
            # or a JSON-RPC error answered in-band. The handshake tells which.
            what = _error_text(msg) if msg is not None else _describe(ex)
            self._note(step, ex, f"not a stateless server ({what}): handshake")
            raise _FallBack
        self._note(step, ex, "unexpected answer")
        if ex.ok:
            raise FetchError(
                f"MCP {step}: the answer ({_describe(ex)}) holds no JSON-RPC response to the request; "
                "is this an MCP Streamable HTTP endpoint?",
                url=self.url,
            )
        raise FetchError(f"MCP {step}: {_describe(ex)}", url=self.url)

    def handshake(self) -> _Listing | _Denied:
        step = "initialize"
        ex, msg = self._post(step, initialize_request(), {})
        if ex.status in (401, 403):
            self._note(step, ex, "credential demanded")
            return _Denied(step, ex)
        if not ex.ok:
            self._note(step, ex, "refused")
            error = FetchError(
                f"MCP {step}: {_describe(ex)}; not an MCP endpoint, or one ramscope cannot speak to", url=self.url
            )
            if self.channel is None and 400 <= ex.status < 500:
                # The transports' backwards-compatibility rule: a 4xx to the POST may mean the old HTTP+SSE one.
                raise _NoStreamableHTTP(error)
            raise error
        if msg is None or not isinstance(msg.get("result"), dict):
            self._note(step, ex, "no result")
            detail = _error_text(msg) if msg is not None else f"no JSON-RPC response in the answer ({_describe(ex)})"
            raise FetchError(f"MCP {step}: {detail}", url=self.url)
        result = msg["result"]
        version = result.get("protocolVersion")
        session = ex.header("mcp-session-id")
        listing = _Listing(
            era="handshake",
            protocol_version=str(version),
            server_info=result.get("serverInfo"),
            server_capabilities=result.get("capabilities"),
            session=session is not None,
        )
        headers = {"mcp-protocol-version": str(version)}
        if session is not None:
            headers["mcp-session-id"] = session
        try:
            if version not in HANDSHAKE_VERSIONS:
                self._note(step, ex, f"unknown protocol version {str(version)[:40]!r}")
                raise FetchError(
                    f"MCP {step}: the server chose protocol version {str(version)[:40]!r}; ramscope speaks "
                    f"{STATELESS_VERSION} and {', '.join(HANDSHAKE_VERSIONS)}",
                    url=self.url,
                )
            self._note(step, ex, f"protocol {version}")
            step = "notifications/initialized"
            note, _ = self._post(step, initialized_notification(), headers)
            self._note(step, note, "accepted" if note.ok else "refused (going on)")
            denied = self._pages(listing, stateless=False, headers=headers)
            return denied or listing
        finally:
            if session is not None:
                listing.session_ended = self._end_session(headers)

    def http_sse(self, refused: FetchError) -> _Listing | _Denied:
        """The old HTTP+SSE transport: GET the URL, read the ``endpoint`` event, POST there, read the stream."""
        step = "GET (HTTP+SSE)"
        channel = self.channel = _SSEChannel(self)
        self.started = time.monotonic()  # the stream is one exchange: its --timeout starts with it
        channel.open()
        try:
            data, answer = channel.first_event()
            if data is None:
                if answer is not None and answer.status in (401, 403):
                    self._note(step, answer, "credential demanded")
                    return _Denied(step, answer)
                said = _describe(answer) if answer is not None else "an event stream without an endpoint event"
                self.steps.append(
                    {
                        "step": step,
                        "method": "GET",
                        "status": answer.status if answer else None,
                        "outcome": f"not an HTTP+SSE stream ({said})",
                    }
                )
                raise FetchError(
                    f"{refused.detail}; a GET did not open an HTTP+SSE stream either ({said})", url=self.url
                )
            endpoint = urljoin(self.url, data.strip())
            if _origin(endpoint) != _origin(self.url):
                raise FetchError(
                    f"MCP {step}: the endpoint event names {endpoint[:200]!r}, on another origin than the stream; "
                    "the HTTP+SSE transport keeps both on one origin, so it is refused",
                    url=self.url,
                )
            self.steps.append(
                {
                    "step": step,
                    "method": "GET",
                    "status": 200,
                    "media_type": "text/event-stream",
                    "outcome": "endpoint event: HTTP+SSE transport",
                }
            )
            channel.endpoint = endpoint
            return self.handshake()
        finally:
            channel.close()

    def _end_session(self, headers: Mapping[str, str]) -> int | str:
        """DELETE the session; a server that refuses or fails is not an error (it will expire it)."""
        try:
            ex = self.ctx.exchange("DELETE", self.url, headers=dict(headers), cache=False)
        except FetchError as exc:
            self.steps.append({"step": "session end", "method": "DELETE", "status": None, "outcome": exc.code})
            return exc.code
        self._note("session end", ex, "ended" if ex.ok else "not ended (the server will expire it)")
        return ex.status

    # ---- tools/list pages

    def _pages(self, listing: _Listing, *, stateless: bool, headers: Mapping[str, str] | None = None) -> _Denied | None:
        cursor: str | None = None
        seen: set[str] = set()
        limit = self.ctx.settings.max_spec_bytes
        for page in range(MAX_PAGES):
            step = "tools/list" + (f" (page {page + 1})" if page else "")
            hdrs = _modern_headers("tools/list") if stateless else dict(headers or {})
            ex, msg = self._post(step, tools_list_request(page, cursor, stateless=stateless), hdrs)
            if ex.status in (401, 403):
                self._note(step, ex, "credential demanded")
                return _Denied(step, ex)
            self.listed_bytes += len(ex.body)
            if self.listed_bytes > limit:
                raise SpecTooLargeError(
                    f"MCP {step}: the tools/list pages together grew past --max-spec-bytes ({limit:,} bytes)",
                    url=self.url,
                )
            if not ex.ok or msg is None or not isinstance(msg.get("result"), dict):
                self._note(step, ex, "failed")
                detail = (
                    _error_text(msg)
                    if msg is not None
                    else f"{_describe(ex)} without a JSON-RPC response to request {page + 2}"
                )
                raise FetchError(f"MCP {step}: {detail}", url=self.url)
            result = msg["result"]
            tools = result.get("tools")
            if not isinstance(tools, list):
                self._note(step, ex, "no tools array")
                raise FetchError(f"MCP {step}: the result has no 'tools' array", url=self.url)
            self._note(step, ex, f"{len(tools)} tools")
            listing.tools.extend(tools)
            listing.pages = page + 1
            if stateless:
                listing.list_meta = {k: result[k] for k in ("ttlMs", "cacheScope") if k in result}
            nxt = result.get("nextCursor")
            if not isinstance(nxt, str):
                return None
            if nxt in seen:
                raise FetchError(
                    f"MCP {step}: the server returned cursor {nxt[:60]!r} a second time; "
                    "its pagination loops, so the tool list would never end",
                    url=self.url,
                )
            seen.add(nxt)
            cursor = nxt
        raise FetchError(
            f"MCP tools/list: the server still had a next page after {MAX_PAGES} pages; "
            f"ramscope stops there rather than follow a listing without end ({len(listing.tools)} tools so far)",
            url=self.url,
        )

    # ---- authorization discovery

    def authorization(self, denied: _Denied | None) -> dict[str, Any]:
        auth: dict[str, Any] = {"status": None, "www_authenticate": [], "challenges": [], "error_body": None}
        hint: str | None = None
        if denied is not None:
            ex = denied.ex
            values = ex.header_all("www-authenticate")
            challenges = parse_www_authenticate(values)
            auth.update(
                status=ex.status,
                step=denied.step,
                www_authenticate=[v[:_SNIPPET] for v in values[:8]],
                challenges=[c.to_json() for c in challenges],
                error_body=_snippet(ex.body) if ex.body else None,
                error_media_type=ex.media_type if ex.body else None,
            )
            bearer = _bearer(challenges)
            if bearer is not None:
                hint = bearer.params.get("resource_metadata") or None
        prm = self._metadata(
            prm_urls(self.url, hint),
            _PRM_FIELDS,
            lambda url, doc: _check_resource(self.url, url, doc),
        )
        auth["protected_resource_metadata"] = prm
        servers = (prm.get("document") or {}).get("authorization_servers")
        if isinstance(servers, list) and servers and isinstance(servers[0], str):
            issuer = servers[0]
            asm = self._metadata(as_metadata_urls(issuer), _AS_FIELDS, lambda url, doc: _check_issuer(issuer, doc))
            auth["authorization_server"] = {"issuer": issuer, "discovered_by": "protected-resource-metadata", **asm}
        elif prm["state"] == "absent":
            # The 2025-03-26 revision had no protected-resource metadata: the MCP server's origin is the
            # authorization base URL, and its RFC 8414 metadata says which grants and scopes exist.
            issuer = _origin(self.url).rstrip("/")
            asm = self._metadata(
                [legacy_as_metadata_url(self.url)], _AS_FIELDS, lambda url, doc: _check_origin(issuer, doc)
            )
            auth["authorization_server"] = {"issuer": issuer, "discovered_by": "origin (2025-03-26)", **asm}
        else:
            auth["authorization_server"] = None
        states = [prm["state"]] + ([auth["authorization_server"]["state"]] if auth["authorization_server"] else [])
        # Known only when every well-known location either answered or said 404/410.
        auth["metadata_state"] = "unknown" if "unknown" in states else "known"
        return auth

    def _metadata(
        self,
        urls: list[str],
        fields: tuple[str, ...],
        check: Callable[[str, dict[str, Any]], str | None],
    ) -> dict[str, Any]:
        """GET each URL until one holds valid metadata; every attempt is recorded, none is fatal.

        ``state`` is ``found``, ``absent`` (every URL said 404 or 410: none is published) or
        ``unknown`` (some URL failed otherwise: a 5xx, a timeout, a refusal, a redirect loop, a
        document that cannot be used). Only ``absent`` may be read as "no metadata".
        """
        tried: list[dict[str, Any]] = []
        for url in urls:
            try:
                ex = self.ctx.exchange("GET", url, headers={"accept": _ACCEPT_JSON})
            except FetchError as exc:
                tried.append({"url": url, "status": None, "outcome": f"{exc.code}: {exc.detail}"[:300]})
                continue
            if not ex.ok:
                gone = ex.status in _ABSENT
                tried.append({"url": url, "status": ex.status, "outcome": "not found" if gone else "refused"})
                continue
            doc = _loads(ex.body)
            if not isinstance(doc, dict):
                tried.append({"url": url, "status": ex.status, "outcome": f"not a JSON object ({ex.media_type})"})
                continue
            problem = check(url, doc)
            if problem is not None:
                tried.append({"url": url, "status": ex.status, "outcome": f"not used: {problem}"})
                continue
            tried.append({"url": url, "status": ex.status, "outcome": "used"})
            return {"tried": tried, "url": url, "document": _subset(doc, fields), "state": "found"}
        absent = all(t["status"] in _ABSENT for t in tried)
        return {"tried": tried, "url": None, "document": None, "state": "absent" if absent else "unknown"}


def _modern_headers(method: str) -> dict[str, str]:
    return {"mcp-protocol-version": STATELESS_VERSION, "mcp-method": method}


def _bearer(challenges: list[Challenge]) -> Challenge | None:
    return next((c for c in challenges if c.scheme.lower() == "bearer"), None)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/", "", ""))


def _same(a: str, b: str) -> bool:
    try:
        return canonical_url(a) == canonical_url(b)
    except (ValueError, TypeError):  # httpx.InvalidURL is a ValueError
        return False


def _check_resource(endpoint: str, metadata_url: str, doc: Mapping[str, Any]) -> str | None:
    """RFC 9728 3.3: the metadata must name this resource, else it must not be used.

    The endpoint itself always matches; the metadata at the root well-known URL
    describes the origin, so that matches too.
    """
    resource = doc.get("resource")
    if not isinstance(resource, str):
        return "it has no 'resource'"
    if _same(resource, endpoint):
        return None
    root = prm_urls(endpoint)[-1]
    if metadata_url == root and _same(resource, _origin(endpoint)):
        return None
    return f"it describes resource {resource[:200]!r}, not {endpoint!r} (RFC 9728 3.3)"


def _check_issuer(issuer: str, doc: Mapping[str, Any]) -> str | None:
    """RFC 8414 3.3: the metadata's issuer must be the one it was looked up for."""
    got = doc.get("issuer")
    if not isinstance(got, str):
        return "it has no 'issuer'"
    if not _same(got, issuer):
        return f"its issuer is {got[:200]!r}, not {issuer!r} (RFC 8414 3.3)"
    return None


def _check_origin(origin: str, doc: Mapping[str, Any]) -> str | None:
    """The 2025-03-26 metadata at an MCP server's origin: its issuer must be on that origin.

    That revision took the origin as the authorization base URL without naming an issuer, and
    servers of the time (the conformance suite's among them) put the issuer under a path such
    as ``/oauth``. The document is the origin's own word, so an issuer there is accepted; one on
    another origin is not (it would let the server's metadata speak for someone else's).
    """
    got = doc.get("issuer")
    if not isinstance(got, str):
        return "it has no 'issuer'"
    try:
        same = _same(_origin(got), _origin(origin))
    except ValueError:
        same = False
    if not same:
        return f"its issuer is {got[:200]!r}, not on the MCP server's origin {origin!r}"
    return None


def _subset(doc: Mapping[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """The fields ramscope reads, when they have the right shape (strings, lists of strings, booleans)."""
    out: dict[str, Any] = {}
    for name in fields:
        v = doc.get(name)
        if isinstance(v, str | bool):
            out[name] = v
        elif isinstance(v, list) and all(isinstance(x, str) for x in v):
            out[name] = list(v)
    return out


# --------------------------------------------------------------------------- the fetcher


def fetch_mcp(ctx: FetchContext, url: str) -> FetcherResult:
    """Hold the conversation with the MCP server at ``url`` and return its capture."""
    conv = _Conversation(ctx, url)
    try:
        outcome = conv.stateless()
    except _FallBack:
        try:
            outcome = conv.handshake()
        except _NoStreamableHTTP as refused:
            outcome = conv.http_sse(refused.error)
    listing = outcome if isinstance(outcome, _Listing) else None
    denied = outcome if isinstance(outcome, _Denied) else None
    capture: dict[str, Any] = {
        "format": CAPTURE_FORMAT,
        "endpoint": url,
        "transport": "http+sse" if conv.channel is not None and conv.channel.endpoint else "streamable-http",
        "client_capabilities": dict(CLIENT_CAPABILITIES),
        "tools_listed": listing is not None,
        "era": listing.era if listing else None,
        "protocol_version": listing.protocol_version if listing else None,
        "server_info": listing.server_info if listing else None,
        "server_capabilities": listing.server_capabilities if listing else None,
        "supported_versions": listing.supported_versions if listing else None,
        "session": listing.session if listing else False,
        "session_ended": listing.session_ended if listing else None,
        "tools": listing.tools if listing else [],
        "pages": listing.pages if listing else 0,
        "list_meta": listing.list_meta if listing else {},
        "steps": conv.steps,
        "auth": conv.authorization(denied),
    }
    try:
        body = orjson.dumps(capture, option=orjson.OPT_SORT_KEYS)
    except TypeError as exc:  # pragma: no cover - everything in it came from JSON
        raise FetchError(f"MCP capture is not JSON-compatible: {exc}", url=url) from None
    provenance: dict[str, Any] = {"mcp_tools_listed": listing is not None}
    if listing is not None:
        provenance.update(mcp_era=listing.era, mcp_protocol_version=listing.protocol_version, mcp_pages=listing.pages)
    headers: dict[str, str] = {}
    ttl = listing.list_meta.get("ttlMs") if listing else None
    cache_control = listing_cache_control(ttl)
    if cache_control is not None:
        # The server's freshness hint for its listing is the capture's (RFC 9111 max-age, bounded by
        # --cache-max-ttl); cacheScope is kept in the capture for the index to judge.
        provenance["mcp_ttl_ms"] = ttl
        headers["cache-control"] = cache_control
    if capture["auth"]["metadata_state"] == "unknown":
        # A failed look-up is not an answer: cached, it would outlive the server's repair.
        provenance["mcp_metadata_unknown"] = True
        headers["cache-control"] = "no-store"
    return FetcherResult(
        body=body, media_type="application/json", final_url=url, headers=headers, provenance=provenance
    )
