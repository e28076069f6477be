"""The guarded HTTP transport: pinned connections, a total deadline, bounded bodies.

Threat model pieces defended here:

* **DNS rebinding.** A hostile name can resolve to a public address when it is
  checked and to 127.0.0.1 when the client connects. So the check happens *at*
  the connection: :class:`GuardedBackend` (an ``httpcore`` network backend)
  resolves the host once, vets every address with the
  :class:`~ramscope.store.guard.AddressPolicy`, and opens the TCP connection to
  the vetted address itself. TLS (SNI and certificate checks) and the ``Host``
  header still use the name, because httpcore wraps the stream we return.
  Pooled connections are keyed by origin, so a reused connection is one that
  was vetted.
* **Slow servers.** httpx's timeouts are per operation; a server dripping one
  byte a second never trips them. A per-exchange deadline (a context variable
  set by the store) clamps every connect, read and write, and resolution too.
* **Huge and compressed bodies.** :func:`read_body` decodes ``gzip``/``deflate``
  itself with ``max_length`` on every ``decompress`` call, so a gzip bomb
  produces at most one bounded piece past the limit before it is cut off, and
  the wire bytes are bounded as well.
* **Ambient credentials.** The client is built with ``trust_env=False`` (no
  ``.netrc`` credentials or proxies from the environment sent to a stranger's
  host) and a cookie jar that accepts nothing.
"""

from __future__ import annotations

import contextlib
import queue
import socket
import ssl
import threading
import time
import typing
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import Protocol

import httpcore
import httpx

from ..errors import FetchError, SpecTooLargeError
from .guard import AddressPolicy, parse_numeric_host

__all__ = [
    "Connector",
    "GuardedBackend",
    "GuardedTransport",
    "Resolver",
    "SystemResolver",
    "connect_socket",
    "deadline",
    "http2_available",
    "read_body",
    "remaining_time",
    "spec_deadline",
    "spec_deadline_passed",
]


# --------------------------------------------------------------------------- deadline

_DEADLINE: ContextVar[float | None] = ContextVar("ramscope_store_deadline", default=None)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Everything network-bound in this thread must finish within ``seconds``."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


#: The deadline over every exchange of one spec URL (``--spec-deadline``): (monotonic end, seconds).
_SPEC_DEADLINE: ContextVar[tuple[float, float] | None] = ContextVar("ramscope_spec_deadline", default=None)


@contextlib.contextmanager
def spec_deadline(seconds: float) -> Iterator[None]:
    """Every exchange made for one spec in this thread, together, must finish within ``seconds``.

    Nested inside it, each exchange's own :func:`deadline` still applies; the earlier end wins.
    """
    token = _SPEC_DEADLINE.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _SPEC_DEADLINE.reset(token)


def spec_deadline_passed() -> float | None:
    """The ``--spec-deadline`` seconds when the current spec's deadline has passed, else ``None``."""
    spec = _SPEC_DEADLINE.get()
    if spec is None or time.monotonic() < spec[0]:
        return None
    return spec[1]


def remaining_time() -> float | None:
    """Seconds left before the current deadline (the exchange's or the spec's); ``None`` when there is none."""
    end = _DEADLINE.get()
    spec = _SPEC_DEADLINE.get()
    if spec is not None:
        end = spec[0] if end is None else min(end, spec[0])
    return None if end is None else end - time.monotonic()


def _clamp(timeout: float | None, exc: type[Exception]) -> float | None:
    left = remaining_time()
    if left is None:
        return timeout
    if left <= 0:
        raise exc("the total time allowed for this exchange ran out")
    return left if timeout is None else min(timeout, left)


# --------------------------------------------------------------------------- resolution


class Resolver(Protocol):
    """Turns a host name into IP address strings. Injected in tests."""

    def resolve(self, host: str, port: int) -> list[str]: ...


class SystemResolver:
    """``getaddrinfo``, bounded by the exchange deadline.

    ``getaddrinfo`` cannot be interrupted, so it runs in a daemon thread; when
    the deadline passes first, the exchange fails and the thread is left to
    finish on its own.
    """

    def __init__(self, timeout: float = 30.0) -> None:
        self._timeout = timeout

    def resolve(self, host: str, port: int) -> list[str]:
        box: queue.Queue[list[str] | BaseException] = queue.Queue(maxsize=1)

        def work() -> None:
            try:
                infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
                box.put([str(info[4][0]) for info in infos])
            except BaseException as exc:  # handed to the waiting thread, which raises it
                box.put(exc)

        threading.Thread(target=work, name=f"ramscope-resolve-{host}", daemon=True).start()
        wait = _clamp(self._timeout, httpcore.ConnectTimeout)
        try:
            result = box.get(timeout=wait)
        except queue.Empty:
            raise httpcore.ConnectTimeout(f"resolving {host} took too long") from None
        if isinstance(result, BaseException):
            raise httpcore.ConnectError(f"cannot resolve {host}: {result}") from result
        return list(dict.fromkeys(result))


# --------------------------------------------------------------------------- connecting

#: Opens a TCP connection to an IP address string (raising httpcore's ConnectError /
#: ConnectTimeout). Injected in tests as a spy that proves no connection was attempted.
Connector = Callable[[str, int, float | None], httpcore.NetworkStream]

_SYNC = httpcore.SyncBackend()


def connect_socket(ip: str, port: int, timeout: float | None) -> httpcore.NetworkStream:
    """A TCP connection to exactly this address.

    ``ip`` is an address string from the vetting step, so ``getaddrinfo`` inside
    ``create_connection`` parses it as numeric and performs no lookup.
    """
    return _SYNC.connect_tcp(ip, port, timeout=timeout, socket_options=[])


#: Bytes asked of the socket per read. httpcore asks for 64 KiB, and every read then costs
#: a pass through h11 and httpcore: a 47 MB spec took 0.20 s to read that way, 0.16 s this way.
#: (TLS sockets return one record, 16 KiB at most, whatever is asked.)
READ_SIZE = 1024 * 1024


class _DeadlineStream(httpcore.NetworkStream):
    """Clamps every read and write of a connection to the current exchange's deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max(max_bytes, READ_SIZE), _clamp(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _clamp(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname, _clamp(timeout, httpcore.ConnectTimeout))
        return _DeadlineStream(inner)

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class GuardedBackend(httpcore.NetworkBackend):
    """An httpcore backend that connects only to addresses the policy allows.

    ``host`` is resolved exactly once per connection; every address returned is
    vetted (one bad address refuses them all); the socket is connected to a
    vetted address. A numeric host is read the way the URL guard reads it and
    never sent to the resolver.
    """

    def __init__(self, policy: AddressPolicy, resolver: Resolver, connector: Connector = connect_socket) -> None:
        self._policy = policy
        self._resolver = resolver
        self._connector = connector

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        try:
            literal = parse_numeric_host(host)
        except ValueError as exc:
            raise httpcore.ConnectError(str(exc)) from None
        addresses = [str(literal)] if literal is not None else self._resolver.resolve(host, port)
        vetted = self._policy.vet(host, addresses)
        last: Exception | None = None
        for ip in vetted:
            try:
                stream = self._connector(ip, port, _clamp(timeout, httpcore.ConnectTimeout))
            except httpcore.ConnectTimeout:
                raise
            except httpcore.ConnectError as exc:
                last = exc
                continue
            return _DeadlineStream(stream)
        raise httpcore.ConnectError(f"cannot connect to {host} ({', '.join(vetted)}): {last}") from last

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are never used for spec URLs")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


# --------------------------------------------------------------------------- transport


def http2_available() -> bool:
    """HTTP/2 needs the ``h2`` package (a dependency; a stripped-down install without it speaks HTTP/1.1)."""
    try:
        import h2  # noqa: F401, PLC0415
    except ImportError:
        return False
    return True


# Most specific first: the first isinstance match wins.
_EXC_MAP: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextlib.contextmanager
def _mapped() -> Iterator[None]:
    """httpcore errors as the httpx errors the store understands (as httpx's own transport does)."""
    try:
        yield
    except httpcore.ProxyError as exc:  # pragma: no cover - no proxies are ever configured
        raise httpx.ProxyError(str(exc)) from exc
    except Exception as exc:
        for source, target in _EXC_MAP:
            if isinstance(exc, source):
                raise target(str(exc)) from exc
        raise


class _ResponseStream(httpx.SyncByteStream):
    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _mapped():
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            with _mapped():
                close()


class GuardedTransport(httpx.BaseTransport):
    """httpx transport over an httpcore pool whose every connection goes through :class:`GuardedBackend`.

    HTTP/1.1 always; HTTP/2 is offered through ALPN on https when ``h2`` is
    installed (the TLS layer is httpcore's, on top of our pinned socket, so ALPN
    negotiates exactly as with httpx's own transport).
    """

    def __init__(
        self,
        policy: AddressPolicy,
        *,
        resolver: Resolver | None = None,
        connector: Connector = connect_socket,
        ssl_context: ssl.SSLContext | None = None,
        http2: bool | None = None,
        max_connections: int = 64,
    ) -> None:
        self.backend = GuardedBackend(policy, resolver or SystemResolver(), connector)
        self.http2 = http2_available() if http2 is None else http2
        self._pool = httpcore.ConnectionPool(
            # trust_env only lets SSL_CERT_FILE/SSL_CERT_DIR choose the CA bundle.
            ssl_context=ssl_context or httpx.create_ssl_context(),
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
            keepalive_expiry=30.0,
            http1=True,
            http2=self.http2,
            retries=0,
            network_backend=self.backend,
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        req = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _mapped():
            resp = self._pool.handle_request(req)
        assert isinstance(resp.stream, Iterable)
        return httpx.Response(
            status_code=resp.status,
            headers=resp.headers,
            stream=_ResponseStream(resp.stream),
            extensions=resp.extensions,
        )

    def close(self) -> None:
        self._pool.close()


# --------------------------------------------------------------------------- bounded bodies

#: Largest piece one ``decompress`` call may produce.
_PIECE = 256 * 1024
_MAX_ENCODINGS = 2


class _Inflater:
    """gzip / deflate decoding that never produces more than ``_PIECE`` bytes per step."""

    def __init__(self, encoding: str) -> None:
        self._gzip = encoding in ("gzip", "x-gzip")
        self._wbits = 16 + zlib.MAX_WBITS if self._gzip else zlib.MAX_WBITS
        self._d = zlib.decompressobj(self._wbits)
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        buf = data
        while True:
            try:
                out = self._d.decompress(buf, _PIECE)
            except zlib.error:
                if self._gzip or self._started:
                    raise
                # "deflate" is meant to be zlib-wrapped; some servers send it raw.
                self._wbits = -zlib.MAX_WBITS
                self._d = zlib.decompressobj(self._wbits)
                self._started = True
                continue
            self._started = True
            if out:
                yield out
            if self._d.eof:
                rest = self._d.unused_data
                if not (self._gzip and rest.startswith(b"\x1f\x8b")):
                    return  # trailing bytes after the stream are ignored, as browsers do
                self._d = zlib.decompressobj(self._wbits)  # next gzip member
                buf = rest
                continue
            buf = self._d.unconsumed_tail
            if not buf and len(out) < _PIECE:
                return

    def finish(self) -> Iterator[bytes]:
        yield from self.feed(b"")
        if not self._d.eof and self._started:
            raise zlib.error("the compressed body ends before its end marker")


def _decoders(content_encoding: str | None) -> list[_Inflater]:
    names = [e.strip().lower() for e in (content_encoding or "").split(",")]
    names = [n for n in names if n and n != "identity"]
    if len(names) > _MAX_ENCODINGS:
        raise FetchError(f"refusing {len(names)} stacked content encodings")
    for n in names:
        if n not in ("gzip", "x-gzip", "deflate"):
            raise FetchError(f"unsupported Content-Encoding {n!r} (ramscope asks for gzip or deflate)")
    # Applied in order, so undone in reverse.
    return [_Inflater(n) for n in reversed(names)]


def _through(decoders: list[_Inflater], data: bytes, *, final: bool = False) -> Iterator[bytes]:
    if not decoders:
        if data:
            yield data
        return
    head, rest = decoders[0], decoders[1:]
    for piece in head.feed(data):
        yield from _through(rest, piece)
    if final:
        for piece in head.finish():
            yield from _through(rest, piece)
        yield from _through(rest, b"", final=True)


class Digest(Protocol):
    """What ``read_body`` needs of a ``hashlib`` object."""

    def update(self, data: bytes, /) -> None: ...


def read_body(
    response: httpx.Response,
    *,
    limit: int,
    until: Callable[[bytes], bool] | None = None,
    digest: Digest | None = None,
) -> tuple[bytes, bool]:
    """Read and decode a streamed response within ``limit`` bytes and the deadline.

    Returns ``(body, complete)``; ``complete`` is False when ``until`` returned
    True for a piece and reading stopped there. ``until`` sees each decoded piece
    as it arrives (an SSE reader feeds them to its own parser). ``digest`` (a
    ``hashlib`` object) is updated with each decoded piece as it arrives, so the
    body is hashed while it downloads rather than read again afterwards. Raises
    :class:`SpecTooLargeError` or :class:`FetchError` (without a URL: the caller
    adds it) and lets httpx's own errors (timeouts, broken connections) through.
    """
    declared = response.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit and not until:
        raise SpecTooLargeError(f"the server announces {int(declared):,} bytes, over --max-spec-bytes ({limit:,})")
    decoders = _decoders(response.headers.get("content-encoding"))
    # Pieces joined once at the end: a growing bytearray copied into bytes would copy the body twice.
    pieces: list[bytes] = []
    size = 0
    wire = 0

    def take(decoded: Iterator[bytes]) -> bool:
        nonlocal size
        for piece in decoded:
            if size + len(piece) > limit:
                what = "after decompression " if decoders else ""
                raise SpecTooLargeError(f"the body grew past --max-spec-bytes ({limit:,} bytes) {what}".rstrip())
            pieces.append(piece)
            size += len(piece)
            if digest is not None:
                digest.update(piece)
            if until is not None and until(piece):
                return True
        return False

    try:
        for raw in response.iter_raw():
            _clamp(None, httpx.ReadTimeout)
            wire += len(raw)
            if wire > limit:
                raise SpecTooLargeError(f"the body grew past --max-spec-bytes ({limit:,} bytes)")
            if take(_through(decoders, raw)):
                return b"".join(pieces), False
        if take(_through(decoders, b"", final=True)):
            return b"".join(pieces), False
    except zlib.error as exc:
        raise FetchError(f"the compressed body is corrupt: {exc}") from None
    return b"".join(pieces), True
