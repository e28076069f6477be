"""Issue 30 item 7: idle and trickling sockets cannot starve `ramscope serve`. Real sockets on 127.0.0.1 against
the server `serve` runs (uvicorn with ramscope's guarded protocol); every wait is on the server closing or
answering a socket, never a sleep."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn

from ramscope.config import Settings
from ramscope.service import Service, ServiceLimits
from ramscope.service.http import make_server

GUARD = 60.0  # a socket timeout that only a hung server reaches


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()


@contextmanager
def serving(tmp_path: Path, **limits: float) -> Iterator[int]:
    """``serve``'s server over an offline service, on a free port of 127.0.0.1; yields the port."""
    service = Service(Settings(cache_dir=tmp_path / "cache", offline=True), limits=ServiceLimits(**limits))  # type: ignore[arg-type]
    made = make_server(service)
    server = _Server(made.config)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(512)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        assert server.ready.wait(GUARD), "the server did not start"
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(GUARD)
        sock.close()
        service.close()


def _connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(GUARD)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def _read_all(s: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a reset, when it closed with our bytes
    unread, is a close too)."""
    out = b""
    try:
        while chunk := s.recv(65536):
            out += chunk
    except ConnectionResetError:
        pass
    return out


def _health(port: int, source: str = "127.0.0.1") -> bytes:
    with _connect(port, source) as s:
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return _read_all(s)


def test_idle_and_half_sent_heads_are_closed_after_the_read_timeout(tmp_path: Path) -> None:
    """Before: a connection that sent nothing (or half a head) stayed open for ever, and 256 of them made the
    server answer 503 to everyone. Now each is closed by the server once the read timeout passes."""
    with serving(tmp_path, read_timeout=0.5, max_client_connections=64) as port:
        idle = [_connect(port) for _ in range(20)]
        half = [_connect(port) for _ in range(20)]
        for s in half:
            s.sendall(b"POST /v1/derive HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
        for s in idle + half:
            assert _read_all(s) == b""  # closed by the server, with nothing said
            s.close()
        assert _health(port).startswith(b"HTTP/1.1 200")


def test_a_trickled_body_is_answered_408_after_the_read_timeout(tmp_path: Path) -> None:
    with serving(tmp_path, read_timeout=0.5) as port, _connect(port) as s:
        s.sendall(
            b"POST /v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 1000\r\n\r\n{"resources": '
        )
        answer = _read_all(s)
        assert answer.startswith(b"HTTP/1.1 408")
        assert b'"read-timeout"' in answer


def test_one_client_cannot_hold_every_connection(tmp_path: Path) -> None:
    """One address holds at most max_client_connections; the next is answered 503 and closed at once, while
    another client (127.0.0.2, another address on loopback) is still served."""
    with serving(tmp_path, read_timeout=GUARD, max_client_connections=4) as port:
        held = [_connect(port) for _ in range(4)]
        try:
            with _connect(port) as extra:
                refused = _read_all(extra)
            assert refused.startswith(b"HTTP/1.1 503")
            assert b"too many connections" in refused
            assert _health(port, "127.0.0.2").startswith(b"HTTP/1.1 200")
        finally:
            for s in held:
                s.close()


def test_a_client_under_its_bound_is_served_on_a_keep_alive_connection(tmp_path: Path) -> None:
    """The head timer restarts after each answer: a keep-alive client sending whole requests is not cut off."""
    with serving(tmp_path, read_timeout=GUARD) as port, _connect(port) as s:
        for _ in range(3):
            s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert _one_response(s).startswith(b"HTTP/1.1 200")


def _one_response(s: socket.socket) -> bytes:
    """One whole response on a keep-alive connection (its head, then Content-Length bytes of body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        assert chunk, "closed before a whole head"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = s.recv(65536)
        assert chunk, "closed before a whole body"
        body += chunk
    return head + b"\r\n\r\n" + body


@pytest.mark.parametrize("count", [300])
def test_many_idle_connections_do_not_keep_the_server_busy(tmp_path: Path, count: int) -> None:
    """The issue's reproducer, 300 idle sockets from other addresses than the client's: once they are closed by
    the head timeout, the server answers (before: 503 for as long as they stayed open)."""
    with serving(tmp_path, read_timeout=0.5, max_client_connections=count) as port:
        idle = [_connect(port, f"127.0.1.{1 + i % 200}") for i in range(count)]
        for s in idle:
            assert _read_all(s) == b""
            s.close()
        assert _health(port).startswith(b"HTTP/1.1 200")
