"""A minimal HTTPS server on 127.0.0.1 that speaks HTTP/2 (ALPN ``h2``) or HTTP/1.1, for TLS tests.

It serves fixed bodies by path and records the SNI name each client sent, so a
test can prove that a connection pinned to 127.0.0.1 still verified the
certificate for, and sent SNI of, the URL's host name.
"""

from __future__ import annotations

import socket
import ssl
import threading
from types import TracebackType

import h2.config
import h2.connection
import h2.events
import trustme

__all__ = ["TLSServer"]


class TLSServer:
    def __init__(self, hostname: str, routes: dict[str, bytes]) -> None:
        self.ca = trustme.CA()
        self.hostname = hostname
        self.routes = routes
        self.sni_names: list[str | None] = []
        self.protocols: list[str | None] = []
        self._ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ca.issue_cert(hostname).configure_cert(self._ctx)
        self._ctx.set_alpn_protocols(["h2", "http/1.1"])
        self._ctx.sni_callback = self._sni
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        # accept() is not interrupted by close(); poll so stopping is prompt.
        self._sock.settimeout(0.05)
        self.port: int = self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def client_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context()
        self.ca.configure_trust(ctx)
        return ctx

    def _sni(self, sslobj: ssl.SSLObject, name: str | None, ctx: ssl.SSLContext) -> None:
        self.sni_names.append(name)

    def __enter__(self) -> TLSServer:
        self._thread.start()
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                raw, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            raw.settimeout(10)
            threading.Thread(target=self._serve, args=(raw,), daemon=True).start()

    def _serve(self, raw: socket.socket) -> None:
        try:
            conn = self._ctx.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            raw.close()
            return
        proto = conn.selected_alpn_protocol()
        self.protocols.append(proto)
        try:
            if proto == "h2":
                self._serve_h2(conn)
            else:
                self._serve_h1(conn)
        except (OSError, ssl.SSLError):
            pass
        finally:
            conn.close()

    def _serve_h2(self, conn: ssl.SSLSocket) -> None:
        h2c = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False))
        h2c.initiate_connection()
        conn.sendall(h2c.data_to_send())
        while True:
            data = conn.recv(65536)
            if not data:
                return
            for event in h2c.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    headers = {k.decode() if isinstance(k, bytes) else k: v for k, v in event.headers}
                    path = headers.get(":path", "/")
                    path = path.decode() if isinstance(path, bytes) else path
                    body = self.routes.get(path)
                    status = "200" if body is not None else "404"
                    payload = body if body is not None else b"{}"
                    h2c.send_headers(
                        event.stream_id,
                        [
                            (":status", status),
                            ("content-type", "application/json"),
                            ("content-length", str(len(payload))),
                        ],
                    )
                    h2c.send_data(event.stream_id, payload, end_stream=True)
            conn.sendall(h2c.data_to_send())

    def _serve_h1(self, conn: ssl.SSLSocket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        path = data.split(b" ", 2)[1].decode()
        body = self.routes.get(path, b"{}")
        status = b"200 OK" if path in self.routes else b"404 Not Found"
        conn.sendall(
            b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\nconnection: close\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
