"""A threaded local HTTP/1.1 server for tests: routes, latency, gzip, redirects, ETag/304, slow and endless bodies.

It binds to 127.0.0.1 (or ::1) only. Reuse it for anything that needs a real
server::

    with LocalHTTPServer() as srv:
        srv.route("/spec.json", body=b'{"openapi": "3.1.0"}', etag='"v1"')
        srv.route("/old", redirect="/spec.json")
        srv.route("/mcp", method="POST", handler=lambda req: Reply(200, b"..."))
        url = srv.url("/spec.json")
        ...
        srv.hits("/spec.json"), srv.requests[-1].headers["user-agent"], srv.max_in_flight
"""

from __future__ import annotations

import gzip as _gzip
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["LocalHTTPServer", "Reply", "Request", "Route", "ipv6_available"]


@dataclass(frozen=True)
class Request:
    method: str
    #: Path with query string, as sent.
    target: str
    path: str
    headers: dict[str, str]
    body: bytes
    client_port: int


@dataclass
class Reply:
    """What a custom ``handler`` returns."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    content_type: str | None = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    #: Seconds to wait before answering at all.
    latency: float = 0.0
    #: Compress ``body`` with gzip and say so.
    gzip: bool = False
    #: Send these bytes as they are with ``Content-Encoding: <encoding>`` (bombs, corrupt data).
    encoded: bytes | None = None
    encoding: str = "gzip"
    #: Answer 304 to a matching If-None-Match.
    etag: str | None = None
    #: Answer 304 to If-Modified-Since equal to this.
    last_modified: str | None = None
    #: Send a redirect to this Location (status 302 unless ``status`` says otherwise).
    redirect: str | None = None
    #: Chunked body: seconds between chunks, and their size.
    chunk_delay: float = 0.0
    chunk_size: int = 64 * 1024
    #: Keep sending chunks of ``body`` forever (until the client leaves or the server stops).
    endless: bool = False
    #: Omit Content-Length and use chunked encoding even for a plain body.
    chunked: bool = False
    handler: Callable[[Request], Reply] | None = None
    #: Called with the number of body bytes sent so far before each chunk of a chunked body: a
    #: test blocks it on an event to hold the download at a point it chooses (no sleeps).
    before_chunk: Callable[[int], None] | None = None


def ipv6_available() -> bool:
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128
    allow_reuse_address = True

    def __init__(self, owner: LocalHTTPServer, address: tuple[str, int], family: int) -> None:
        self.address_family = family
        self.owner = owner
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that hang up early (limits, timeouts, `until`) are what the tests are about.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.owner._lock:
            self.owner.connections += 1
        super().process_request(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle on, the client's delayed
    # ACK would add ~40 ms to every answer and distort timings.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()

    def _handle(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0]
        req = Request(
            method=self.command,
            target=self.path,
            path=path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            client_port=self.client_address[1],
        )
        with owner._lock:
            owner.requests.append(req)
            owner._in_flight += 1
            owner.max_in_flight = max(owner.max_in_flight, owner._in_flight)
        try:
            route = owner.routes.get((self.command, path))
            if route is None:
                self._send(404, b'{"error": "not found"}', {"content-type": "application/json"})
                return
            if route.latency:
                owner._stopping.wait(route.latency)
            self._serve(route, req)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            with owner._lock:
                owner._in_flight -= 1

    def _serve(self, route: Route, req: Request) -> None:
        if route.handler is not None:
            reply = route.handler(req)
            self._send(reply.status, reply.body, reply.headers)
            return
        headers = dict(route.headers)
        if route.content_type:
            headers.setdefault("content-type", route.content_type)
        if route.redirect is not None:
            headers["location"] = route.redirect
            self._send(route.status if route.status != 200 else 302, b"", headers)
            return
        if route.etag:
            headers["etag"] = route.etag
            if req.headers.get("if-none-match") == route.etag:
                self._send(304, b"", headers, body_allowed=False)
                return
        if route.last_modified:
            headers["last-modified"] = route.last_modified
            if req.headers.get("if-modified-since") == route.last_modified:
                self._send(304, b"", headers, body_allowed=False)
                return
        body = route.body
        if route.encoded is not None:
            body = route.encoded
            headers["content-encoding"] = route.encoding
        elif route.gzip:
            body = _gzip.compress(body)
            headers["content-encoding"] = "gzip"
        if route.endless or route.chunk_delay or route.chunked or route.before_chunk:
            self._send_chunked(route, body, headers)
        else:
            self._send(route.status, body, headers)

    def _send(self, status: int, body: bytes, headers: dict[str, str], *, body_allowed: bool = True) -> None:
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        if body_allowed:
            self.send_header("content-length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def _send_chunked(self, route: Route, body: bytes, headers: dict[str, str]) -> None:
        owner = self.server.owner
        self.send_response(route.status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        size = max(1, route.chunk_size)
        while True:
            for i in range(0, len(body), size):
                if owner._stopping.is_set():
                    self.close_connection = True
                    return
                if route.before_chunk is not None:
                    route.before_chunk(i)
                piece = body[i : i + size]
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self.wfile.flush()
                if route.chunk_delay:
                    owner._stopping.wait(route.chunk_delay)
            if not route.endless:
                break
        self.wfile.write(b"0\r\n\r\n")


class LocalHTTPServer:
    """A real HTTP/1.1 server on loopback in a background thread."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.routes: dict[tuple[str, str], Route] = {}
        self.requests: list[Request] = []
        self.connections = 0
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._server = _Server(self, (host, 0), family)
        self.port: int = self._server.server_address[1]
        self._thread: threading.Thread | None = None

    # ---- lifecycle

    def start(self) -> LocalHTTPServer:
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> LocalHTTPServer:
        return self.start()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    # ---- configuration

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def route(self, path: str, *, method: str = "GET", **kwargs: Any) -> Route:
        r = Route(**kwargs)
        self.routes[(method, path)] = r
        return r

    # ---- observations

    def hits(self, path: str, method: str | None = None) -> int:
        with self._lock:
            return sum(1 for r in self.requests if r.path == path and (method is None or r.method == method))

    def last(self, path: str) -> Request:
        with self._lock:
            return next(r for r in reversed(self.requests) if r.path == path)

    def reset_counts(self) -> None:
        with self._lock:
            self.requests.clear()
            self.connections = 0
            self.max_in_flight = 0


def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()
