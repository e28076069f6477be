"""``ramscope serve``: the HTTP JSON API (Starlette on uvicorn) over one :class:`~.core.Service`.

Safe by default:

* it listens on loopback unless told otherwise, and then only with a bearer token
  (:func:`check_bind`); the token is compared in constant time (:func:`hmac.compare_digest`);
* on loopback, a request naming another host in its ``Host`` header is refused (a web page that
  rebinds its own name to 127.0.0.1 cannot reach the API), and a POST body must be
  ``application/json`` (a page cannot send that cross-origin without a CORS preflight, which this
  server never answers);
* bodies are read up to ``max_body_bytes`` and no further; JSON nesting is bounded; each request has
  a deadline; uvicorn bounds connections (``limit_concurrency``) and header size;
* cards come only in the body or from a URL fetched through the guarded store (the SSRF guard of
  every spec); no endpoint reads a local file.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import os
import socket
import sys
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from ..errors import InputError
from .core import Service
from .openapi import openapi_document
from .operations import Answer, CardSource, Refusal, parse_json_object
from .operations import check as op_check
from .operations import consent as op_consent
from .operations import derive as op_derive
from .operations import diff as op_diff
from .operations import scopes as op_scopes
from .operations import validate as op_validate

if TYPE_CHECKING:
    import uvicorn

__all__ = ["check_bind", "create_app", "guarded_protocol", "is_loopback", "make_server", "read_token", "serve"]

#: Fewer characters than this is not a secret worth the name (``openssl rand -hex 32`` gives 64).
MIN_TOKEN_CHARS = 16
#: Connections (and so requests) open at once; beyond, uvicorn answers 503 at once.
MAX_CONNECTIONS = 256
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
_TIERS = ("required", "recommended", "optional")
_IDENTITIES = ("end_user", "agent", "all")
_FORMATS = ("json", "markdown", "html")

Handler = Callable[[Request], Awaitable[Response]]


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_token(path: str | os.PathLike[str]) -> bytes:
    """The bearer token in ``path`` (surrounding whitespace dropped); an unusable one is an error."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the token file: {exc.strerror or exc}", source=str(path)) from None
    token = raw.strip()
    if len(token) < MIN_TOKEN_CHARS:
        raise InputError(f"the token must be at least {MIN_TOKEN_CHARS} characters", source=str(path))
    if any(b < 0x21 or b > 0x7E for b in token):
        raise InputError("the token must be printable ASCII without spaces (it travels in a header)", source=str(path))
    return token


def check_bind(host: str, token: bytes | None) -> None:
    """Refuse to listen beyond loopback without a token: the API derives, fetches and caches for
    whoever reaches it."""
    if not is_loopback(host) and token is None:
        raise InputError(
            f"listening on {host} (beyond loopback) needs --token-file FILE: every client must then send "
            "'Authorization: Bearer <token>'"
        )


# --------------------------------------------------------------------------- the application


def create_app(service: Service, *, token: bytes | None = None, loopback: bool = True) -> Starlette:
    """The ASGI application. ``loopback``: the server listens on loopback only (Host header checked)."""
    limits = service.limits
    document = orjson.dumps(openapi_document())

    def guarded(handler: Handler, *, auth: bool = True) -> Handler:
        async def endpoint(request: Request) -> Response:
            try:
                if loopback and not _loopback_host(request.headers.get("host", "")):
                    raise Refusal(421, "misdirected", "this server answers to loopback host names only")
                if request.method == "POST":
                    _same_origin_only(request)
                if auth and token is not None:
                    _authorize(request, token)
                return await handler(request)
            except Refusal as r:
                return _refused(r)

        return endpoint

    async def body_of(request: Request) -> bytes:
        if request.method != "POST":
            return b""
        length = request.headers.get("content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                raise Refusal(400, "bad-input", "Content-Length is not a number") from None
            if declared > limits.max_body_bytes:
                raise Refusal(413, "body-too-large", f"the body is over the limit of {limits.max_body_bytes:,} bytes")
        chunks: list[bytes] = []
        size = 0
        try:
            # A body trickled a byte at a time (or never sent) must not hold a connection for ever.
            async with asyncio.timeout(limits.read_timeout):
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > limits.max_body_bytes:
                        raise Refusal(
                            413, "body-too-large", f"the body is over the limit of {limits.max_body_bytes:,} bytes"
                        )
                    chunks.append(chunk)
        except ClientDisconnect:
            raise Refusal(400, "bad-input", "the client went away while sending the body") from None
        except TimeoutError:
            raise Refusal(408, "read-timeout", f"the body did not arrive within {limits.read_timeout:g} s") from None
        return b"".join(chunks)

    async def card_source(request: Request, allowed: tuple[str, ...] = ()) -> CardSource:
        params = _params(request, ("url", *allowed))
        data = await body_of(request)
        url = params.get("url")
        if url is not None:
            if data.strip():
                raise Refusal(400, "bad-input", "give the card in the body or as ?url=, not both")
            return CardSource(url=url, label=url)
        if not data.strip():
            raise Refusal(400, "bad-input", "no card: send it as the JSON body, or give ?url=")
        return CardSource(data=data, label="<request>")

    async def derive(request: Request) -> Response:
        src = await card_source(request)
        return _answered(await service.answer(partial(_run, op_derive, src, limits)))

    async def scopes(request: Request) -> Response:
        src = await card_source(request, ("tier", "identity"))
        params = _params(request, ("url", "tier", "identity"))
        tier = _choice(params, "tier", _TIERS, "optional")
        identity = _choice(params, "identity", _IDENTITIES, "all")
        return _answered(await service.answer(partial(_run, op_scopes, src, limits, tier=tier, identity=identity)))

    async def consent(request: Request) -> Response:
        src = await card_source(request, ("format",))
        fmt = _choice(_params(request, ("url", "format")), "format", _FORMATS, "json")
        return _answered(await service.answer(partial(_run, op_consent, src, limits, fmt=fmt)))

    async def validate(request: Request) -> Response:
        src = await card_source(request)
        return _answered(await service.answer(partial(_run, op_validate, src, limits)))

    async def check(request: Request) -> Response:
        _params(request, ())
        data = await body_of(request)
        return _answered(
            await service.answer(lambda engine, usage: op_check(engine, usage, parse_json_object(data, limits), limits))
        )

    async def diff(request: Request) -> Response:
        _params(request, ())
        data = await body_of(request)
        return _answered(
            await service.answer(lambda engine, usage: op_diff(engine, usage, parse_json_object(data, limits), limits))
        )

    async def health(request: Request) -> Response:
        return Response(orjson.dumps(service.health()), media_type="application/json")

    async def openapi(request: Request) -> Response:
        return Response(document, media_type="application/json")

    routes = [
        Route("/v1/derive", guarded(derive), methods=["POST"]),
        Route("/v1/scopes", guarded(scopes), methods=["POST"]),
        Route("/v1/consent", guarded(consent), methods=["POST"]),
        Route("/v1/validate", guarded(validate), methods=["POST"]),
        Route("/v1/check", guarded(check), methods=["POST"]),
        Route("/v1/diff", guarded(diff), methods=["POST"]),
        Route("/v1/health", guarded(health, auth=False), methods=["GET"]),
        Route("/openapi.json", guarded(openapi, auth=False), methods=["GET"]),
    ]
    return Starlette(routes=routes)


def _run(op: Callable[..., Answer], src: CardSource, limits: Any, engine: Any, usage: Any, **kw: Any) -> Answer:
    return op(engine, usage, src, limits, **kw)


def _loopback_host(header: str) -> bool:
    host = header.rsplit(":", 1)[0] if not header.endswith("]") else header
    if header.startswith("[") and "]:" in header:
        host = header[: header.index("]:") + 1]
    return host.lower() in _LOOPBACK_NAMES or is_loopback(host)


def _same_origin_only(request: Request) -> None:
    """Refuse what a web page can make a browser send: a POST from another origin.

    A page may send a "simple" cross-origin POST (``text/plain``, an empty body, a form) without a
    CORS preflight; with ``?url=`` an empty body is a whole request, so every POST must say
    ``Content-Type: application/json``, which a page cannot set cross-origin without a preflight
    this server never answers (issue 30 item 6: an empty ``text/plain`` POST was served). Browsers
    also say where a request comes from: an ``Origin`` other than this server's own, or a
    ``Sec-Fetch-Site`` other than ``same-origin`` / ``none`` (``same-site`` is another port of
    localhost too), is refused outright. Clients that are not browsers send neither.
    """
    if not _is_json(request.headers.get("content-type", "")):
        raise Refusal(
            415, "unsupported-media-type", "a POST must be sent as Content-Type: application/json (an empty body too)"
        )
    origin = request.headers.get("origin")
    if origin is not None and origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
        raise Refusal(403, "cross-origin", "requests from web pages of another origin are refused")
    site = request.headers.get("sec-fetch-site")
    if site is not None and site.lower() not in ("same-origin", "none"):
        raise Refusal(403, "cross-origin", f"requests from web pages of another origin are refused ({site})")


def _authorize(request: Request, token: bytes) -> None:
    scheme, _, presented = request.headers.get("authorization", "").partition(" ")
    # Compared as bytes, in constant time; a header that is not ASCII is simply not the token.
    ok = scheme.lower() == "bearer" and hmac.compare_digest(presented.strip().encode("latin-1", "replace"), token)
    if not ok:
        raise Refusal(401, "unauthorized", "send 'Authorization: Bearer <token>' with the server's token")


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def _params(request: Request, allowed: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in request.query_params.multi_items():
        if key not in allowed:
            expected = f"; expected {', '.join(allowed)}" if allowed else "; this endpoint takes none"
            raise Refusal(400, "bad-input", f"unknown query parameter {key!r}{expected}")
        if key in out:
            raise Refusal(400, "bad-input", f"query parameter {key!r} given twice")
        out[key] = value
    return out


def _choice(params: Mapping[str, str], name: str, allowed: tuple[str, ...], default: str) -> Any:
    value = params.get(name, default)
    if value not in allowed:
        raise Refusal(400, "bad-input", f"{name} must be one of {', '.join(allowed)}")
    return value


def _answered(answer: Answer) -> Response:
    headers = {"x-ramscope-exit-code": str(answer.exit_code)}
    if answer.policy is not None:
        headers["x-ramscope-policy"] = answer.policy
    return Response(answer.body, status_code=answer.status, media_type=answer.media_type, headers=headers)


def _refused(r: Refusal) -> Response:
    headers = {"www-authenticate": 'Bearer realm="ramscope"'} if r.status == 401 else None
    if r.status == 408:  # the rest of the body may still come: the connection is not reused
        headers = {"connection": "close"}
    return Response(orjson.dumps(r.to_dict()), status_code=r.status, media_type="application/json", headers=headers)


# --------------------------------------------------------------------------- the server


def bind(host: str, port: int) -> tuple[socket.socket, str]:
    """A listening socket and the URL it answers at (``port`` 0: a free port, chosen now)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if family == socket.AF_INET6 else bound_host
    return sock, f"http://{shown}:{bound_port}"


def make_server(service: Service, *, token: bytes | None = None, loopback: bool = True) -> uvicorn.Server:
    """The uvicorn server of :func:`serve` (not yet listening: ``server.run(sockets=[...])``)."""
    import uvicorn  # noqa: PLC0415

    limits = service.limits
    config = uvicorn.Config(
        create_app(service, token=token, loopback=loopback),
        http=guarded_protocol(limits.read_timeout, limits.max_client_connections),
        log_level="warning",
        access_log=False,
        lifespan="off",
        limit_concurrency=MAX_CONNECTIONS,
        timeout_keep_alive=5,
        h11_max_incomplete_event_size=64 * 1024,
        server_header=False,
    )
    return uvicorn.Server(config)


_BUSY_CLIENT = orjson.dumps(
    {"error": {"status": 503, "code": "busy", "message": "this client has too many connections open"}}
)


def guarded_protocol(read_timeout: float, per_client: int) -> type[asyncio.Protocol]:
    """uvicorn's HTTP/1.1 protocol, with what it lacks against idle sockets (issue 30 item 7: 256 idle
    TCP connections made the server answer 503 to everyone for as long as they stayed open).

    * a **head timeout**: a connection that has not sent a whole request head ``read_timeout``
      seconds after it opened (or after its last answer) is closed; uvicorn's keep-alive timer
      starts only after a first answer, and stops at the first byte of the next request;
    * a **per-client bound**: one client address holds at most ``per_client`` connections; beyond,
      a new one is answered 503 and closed at once, so one client cannot take all 256.

    The body's own timeout is the application's (``read_timeout`` again, 408).
    """
    import h11  # noqa: PLC0415
    from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: PLC0415

    #: Open connections by client address, for this server's connections only (a class per server).
    counts: dict[str, int] = {}
    refusal = (
        b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n"
        + f"content-length: {len(_BUSY_CLIENT)}\r\n\r\n".encode()
        + _BUSY_CLIENT
    )

    class GuardedH11Protocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None
        _counted: str | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            address = self.client[0] if self.client else ""
            if counts.get(address, 0) >= per_client:
                transport.write(refusal)
                transport.close()
                return
            counts[address] = counts.get(address, 0) + 1
            self._counted = address
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._head_timer is not None and self.conn.their_state is not h11.IDLE:
                self._disarm()  # the head is in: the body's timeout is the application's

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._disarm()
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if self._counted is not None:
                left = counts.get(self._counted, 1) - 1
                if left > 0:
                    counts[self._counted] = left
                else:
                    counts.pop(self._counted, None)
                self._counted = None
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._head_timer = self.loop.call_later(read_timeout, self._head_timed_out)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_timed_out(self) -> None:
            self._head_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return GuardedH11Protocol


def serve(
    service: Service,
    *,
    host: str = "127.0.0.1",
    port: int = 8321,
    token: bytes | None = None,
    ready: Callable[[str], object] | None = None,
) -> None:
    """Listen until interrupted. ``ready(url)`` is called once the socket listens (before any request)."""
    check_bind(host, token)
    try:
        sock, url = bind(host, port)
    except OSError as exc:
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    server = make_server(service, token=token, loopback=is_loopback(host))
    if ready is not None:
        ready(url)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        sys.stderr.flush()
