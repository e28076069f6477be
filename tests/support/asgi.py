"""Run a real ASGI application (an MCP server, an A2A agent) under uvicorn on 127.0.0.1, in a thread.

::

    with ASGIServer(lambda base_url: make_app(base_url)) as srv:
        url = srv.url("/mcp")
        srv.requests  # (method, path, headers) of every request, in order

The socket is bound before the application is built, so the application can be
told its own URL (an MCP server behind ``AuthSettings`` must name itself in its
protected-resource metadata). Only loopback is ever bound.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from types import TracebackType
from typing import Any

import uvicorn

__all__ = ["ASGIApp", "ASGIServer"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class ASGIServer:
    def __init__(self, factory: Callable[[str], ASGIApp]) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        inner = factory(self.base_url)

        async def logged(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http":
                headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
                self.requests.append((scope["method"], scope["path"], headers))
            await inner(scope, receive, send)

        config = uvicorn.Config(logged, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    def url(self, path: str) -> str:
        return self.base_url + path

    def start(self) -> ASGIServer:
        self._thread.start()
        deadline = time.monotonic() + 300  # a guard against a hang, never reached when the server starts
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the ASGI server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def __enter__(self) -> ASGIServer:
        return self.start()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
