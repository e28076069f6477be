"""Fetching over a real loopback server: bodies, limits, compression, timeouts, redirects, exchanges, TLS/HTTP2."""

from __future__ import annotations

import gzip
import hashlib
import ipaddress
import threading
import zlib
from collections.abc import Callable
from datetime import UTC
from pathlib import Path

import pytest

from ramscope.config import Settings
from ramscope.errors import BlockedURLError, FetchError, FetchTimeoutError, SpecTooLargeError
from ramscope.store import AddressPolicy, GuardedTransport, Origin, SpecStore
from ramscope.store.store import USER_AGENT
from tests.support.httpserver import LocalHTTPServer, Reply, Request, ipv6_available

SPEC = b'{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {}}'
MakeSettings = Callable[..., Settings]

#: Only the loopback test server is allowed; every other private range stays refused.
LOOPBACK_ONLY = AddressPolicy(allow_networks=(ipaddress.ip_network("127.0.0.1/32"),))


def test_fetch_returns_body_and_provenance(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A fetched spec carries its bytes, sha256, media type, final URL, time, origin and the peer address."""
    server.route("/spec.json", body=SPEC, content_type="application/json; charset=utf-8", etag='"v1"')
    with SpecStore(make_settings()) as store:
        spec = store.get(server.url("/spec.json"))
    assert spec.body == SPEC
    assert spec.sha256 == hashlib.sha256(SPEC).hexdigest()
    assert spec.media_type == "application/json"
    assert spec.final_url == spec.url == server.url("/spec.json")
    assert spec.origin is Origin.NETWORK
    assert spec.etag == '"v1"'
    assert spec.fetched_at.tzinfo is UTC
    assert spec.provenance["server_address"] == f"127.0.0.1:{server.port}"
    assert spec.provenance["http_version"] == "HTTP/1.1"
    record = spec.to_record()
    assert record["origin"] == "network"
    assert record["sha256"] == spec.sha256
    assert record["fetched_at"].endswith("Z")
    req = server.last("/spec.json")
    assert req.headers["user-agent"] == USER_AGENT
    assert req.headers["accept-encoding"] == "gzip, deflate"


def test_plain_http_is_reported_not_refused(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """An http URL is fetched, flagged insecure and carries an insecure-fetch warning."""
    server.route("/spec.json", body=SPEC)
    with SpecStore(make_settings()) as store:
        spec = store.get(server.url("/spec.json"))
        assert spec.provenance["insecure"] is True
        assert [d.code for d in spec.diagnostics] == ["insecure-fetch"]
        assert [d.code for d in store.diagnostics] == ["insecure-fetch"]


def test_one_connection_is_reused_for_many_specs(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """Sequential fetches from one origin share one keep-alive connection (redirect hops included)."""
    for i in range(5):
        server.route(f"/s{i}.json", body=SPEC)
    server.route("/moved", redirect="/s0.json")
    with SpecStore(make_settings()) as store:
        for i in range(5):
            store.get(server.url(f"/s{i}.json"))
        store.get(server.url("/moved"))
    assert server.connections == 1


def test_http_errors_and_empty_bodies_are_fetch_errors(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """4xx/5xx and empty 200 answers raise FetchError naming the status; never an empty spec."""
    server.route("/gone", status=410, body=b"gone")
    server.route("/boom", status=503, body=b"")
    server.route("/empty", body=b"")
    with SpecStore(make_settings()) as store:
        with pytest.raises(FetchError, match="HTTP 404"):
            store.get(server.url("/missing"))
        with pytest.raises(FetchError, match="HTTP 410 Gone"):
            store.get(server.url("/gone"))
        with pytest.raises(FetchError, match="HTTP 503"):
            store.get(server.url("/boom"))
        with pytest.raises(FetchError, match="empty body"):
            store.get(server.url("/empty"))


def test_connection_refused_is_a_fetch_error(make_settings: MakeSettings) -> None:
    """Nothing listening: a FetchError saying the host cannot be reached."""
    with LocalHTTPServer() as srv:
        url = srv.url("/spec.json")
    with SpecStore(make_settings()) as store, pytest.raises(FetchError, match=r"cannot reach 127\.0\.0\.1") as info:
        store.get(url)
    assert type(info.value) is FetchError


# --------------------------------------------------------------------------- size limits


def test_oversize_body_with_content_length(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A declared length over --max-spec-bytes is refused before the body is read."""
    server.route("/big.json", body=b"x" * 5000)
    with SpecStore(make_settings(max_spec_bytes=1000)) as store, pytest.raises(SpecTooLargeError, match="5,000"):
        store.get(server.url("/big.json"))


def test_oversize_body_while_streaming(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A chunked body without a length is cut off as soon as it passes the limit."""
    server.route("/big.json", body=b"x" * 4096, chunk_size=512, chunked=True)
    with SpecStore(make_settings(max_spec_bytes=1000)) as store, pytest.raises(SpecTooLargeError, match="1,000"):
        store.get(server.url("/big.json"))


def test_endless_body_stops_at_the_limit(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A body that never ends is stopped by the byte limit."""
    server.route("/forever", body=b"y" * 4096, endless=True)
    with SpecStore(make_settings(max_spec_bytes=64 * 1024)) as store, pytest.raises(SpecTooLargeError):
        store.get(server.url("/forever"))


def test_gzip_and_deflate_bodies_are_decoded(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """gzip, zlib-wrapped deflate, raw deflate and multi-member gzip bodies arrive decoded."""
    raw = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    raw_deflate = raw.compress(SPEC) + raw.flush()
    server.route("/gz", body=SPEC, gzip=True)
    server.route("/zlib", encoded=zlib.compress(SPEC), encoding="deflate")
    server.route("/raw", encoded=raw_deflate, encoding="deflate")
    server.route("/multi", encoded=gzip.compress(SPEC[:10]) + gzip.compress(SPEC[10:]))
    with SpecStore(make_settings()) as store:
        for path in ("/gz", "/zlib", "/raw", "/multi"):
            assert store.get(server.url(path)).body == SPEC, path


def test_gzip_bomb_stops_at_the_limit(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """64 MiB of zeros in ~64 KiB of gzip is stopped at the decompressed limit, never inflated whole."""
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < 100 * 1024
    server.route("/bomb.json", encoded=bomb)
    with (
        SpecStore(make_settings(max_spec_bytes=1024 * 1024)) as store,
        pytest.raises(SpecTooLargeError, match="after decompression"),
    ):
        store.get(server.url("/bomb.json"))


def test_corrupt_and_unknown_encodings_are_errors(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A corrupt gzip stream, a truncated one and an unrequested encoding are clear FetchErrors."""
    server.route("/corrupt", encoded=b"\x1f\x8b\x08\x00garbage-garbage")
    server.route("/truncated", encoded=gzip.compress(SPEC)[:-12])
    server.route("/br", encoded=b"\x0b\x02\x80hello\x03", encoding="br")
    with SpecStore(make_settings()) as store:
        with pytest.raises(FetchError, match="corrupt"):
            store.get(server.url("/corrupt"))
        with pytest.raises(FetchError, match="corrupt"):
            store.get(server.url("/truncated"))
        with pytest.raises(FetchError, match="unsupported Content-Encoding 'br'"):
            store.get(server.url("/br"))


# --------------------------------------------------------------------------- time limits


def test_slow_server_times_out(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A server that does not answer within --timeout gives FetchTimeoutError."""
    # The answer is held until the client has given up: the timeout, not the answer, ended the request.
    gate = threading.Event()

    def held(req: Request) -> Reply:
        gate.wait(60)
        return Reply(200, SPEC, {"content-type": "application/json"})

    server.route("/slow", handler=held)
    with SpecStore(make_settings(timeout=0.5)) as store, pytest.raises(FetchTimeoutError, match="--timeout"):
        store.get(server.url("/slow"))
    assert not gate.is_set()
    gate.set()


def test_dripping_body_hits_the_total_deadline(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A body trickling in faster than any read timeout is still cut off by the total timeout."""
    # Endless: only a deadline can end it, so the error is the outcome, whatever the machine's speed.
    server.route("/drip", body=b"z", chunk_size=1, chunk_delay=0.05, endless=True)
    with SpecStore(make_settings(timeout=1.0)) as store, pytest.raises(FetchTimeoutError):
        store.get(server.url("/drip"))


# --------------------------------------------------------------------------- redirects


def test_redirect_chain_is_followed(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """Three hops (absolute and relative Locations, 301/302/307/308) end at the spec; the chain is kept."""
    server.route("/a", redirect=server.url("/b"), status=301)
    server.route("/b", redirect="c", status=307)
    server.route("/c", redirect="/spec.json", status=308)
    server.route("/spec.json", body=SPEC)
    with SpecStore(make_settings()) as store:
        spec = store.get(server.url("/a"))
    assert spec.body == SPEC
    assert spec.url == server.url("/a")
    assert spec.final_url == server.url("/spec.json")
    ex_chain = [server.url("/b"), server.url("/c"), server.url("/spec.json")]
    assert [r.path for r in server.requests] == ["/a", "/b", "/c", "/spec.json"]
    with SpecStore(make_settings(cache_dir=make_settings().cache_dir.parent / "other")) as store:
        ex = store.exchange("GET", server.url("/a"))
    assert list(ex.redirects) == ex_chain


def test_more_than_five_redirects_is_an_error(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """Six hops are one too many."""
    for i in range(6):
        server.route(f"/r{i}", redirect=f"/r{i + 1}")
    server.route("/r6", body=SPEC)
    server.route("/ok0", redirect="/ok1")
    for i in range(1, 5):
        server.route(f"/ok{i}", redirect=f"/ok{i + 1}")
    server.route("/ok5", body=SPEC)
    with SpecStore(make_settings()) as store:
        assert store.get(server.url("/ok0")).body == SPEC
        with pytest.raises(FetchError, match="more than 5 redirects"):
            store.get(server.url("/r0"))
    assert server.hits("/r6") == 0


def test_redirect_into_a_private_literal_is_refused(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A public-looking spec that redirects to 169.254.169.254 or 10/8 is refused at that hop."""
    server.route("/meta", redirect="http://169.254.169.254/latest/meta-data/")
    server.route("/lan", redirect="http://0x0a000001/admin")
    with SpecStore(make_settings(allow_private_network=False), policy=LOOPBACK_ONLY) as store:
        with pytest.raises(BlockedURLError, match=r"redirect to http://169\.254\.169\.254/.*link-local") as info:
            store.get(server.url("/meta"))
        assert info.value.url == server.url("/meta")
        with pytest.raises(BlockedURLError, match=r"10\.0\.0\.1"):
            store.get(server.url("/lan"))


def test_redirect_to_a_name_resolving_private_is_refused_without_connecting(
    server: LocalHTTPServer, make_settings: MakeSettings
) -> None:
    """Each hop's host is resolved and vetted: a name that resolves into the LAN gets no connection."""
    server.route("/start", redirect=f"http://intranet.test:{server.port}/secrets")
    connected: list[str] = []

    class Resolver:
        def resolve(self, host: str, port: int) -> list[str]:
            return {"intranet.test": ["192.168.10.20"]}.get(host, ["127.0.0.1"])

    def connector(ip: str, port: int, timeout: float | None):  # type: ignore[no-untyped-def]
        from ramscope.store.http import connect_socket

        connected.append(ip)
        return connect_socket(ip, port, timeout)

    transport = GuardedTransport(LOOPBACK_ONLY, resolver=Resolver(), connector=connector)
    with (
        SpecStore(make_settings(allow_private_network=False), transport=transport, policy=LOOPBACK_ONLY) as store,
        pytest.raises(BlockedURLError, match=r"intranet\.test resolves to 192\.168\.10\.20"),
    ):
        store.get(server.url("/start"))
    assert connected == ["127.0.0.1"]
    assert server.hits("/secrets") == 0


def test_post_303_becomes_get_and_credentials_stay_on_their_origin(
    server: LocalHTTPServer, make_settings: MakeSettings
) -> None:
    """303 turns POST into GET without a body; Authorization is not carried to another origin."""
    with LocalHTTPServer() as other:
        other.route("/result", body=SPEC)
        server.route("/rpc", method="POST", redirect=other.url("/result"), status=303)
        with SpecStore(make_settings()) as store:
            ex = store.exchange(
                "POST", server.url("/rpc"), json_body={"a": 1}, headers={"Authorization": "Bearer t0ken"}
            )
        assert ex.status == 200
        assert ex.body == SPEC
        assert server.last("/rpc").headers["authorization"] == "Bearer t0ken"
        final = other.last("/result")
        assert final.method == "GET"
        assert final.body == b""
        assert "authorization" not in final.headers


# --------------------------------------------------------------------------- exchanges


def test_post_exchange_returns_errors_as_results(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A JSON POST is sent as JSON; a 401 with repeated WWW-Authenticate comes back as data, not an error."""

    def handler(req: Request) -> Reply:
        assert req.headers["content-type"] == "application/json"
        return Reply(401, b'{"error":"auth"}', {"www-authenticate": 'Bearer resource_metadata="https://x/.well-known"'})

    server.route("/mcp", method="POST", handler=handler)
    with SpecStore(make_settings()) as store:
        ex = store.exchange("POST", server.url("/mcp"), json_body={"jsonrpc": "2.0", "id": 1, "method": "initialize"})
    assert ex.status == 401
    assert not ex.ok
    assert ex.header_all("WWW-Authenticate") == ['Bearer resource_metadata="https://x/.well-known"']
    assert server.last("/mcp").body == b'{"jsonrpc":"2.0","id":1,"method":"initialize"}'


def test_until_stops_reading_a_stream_early(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A caller reading an SSE stream stops when its response has arrived; the endless rest is not read."""
    event = b'event: message\r\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\r\n\r\n'
    server.route("/sse", method="POST", body=event, content_type="text/event-stream", endless=True, chunk_delay=0.01)
    seen = bytearray()

    def until(piece: bytes) -> bool:
        seen.extend(piece)
        return b"\r\n\r\n" in seen

    with SpecStore(make_settings()) as store:
        ex = store.exchange("POST", server.url("/sse"), json_body={"id": 1}, until=until)
    assert not ex.complete
    assert ex.body.startswith(event)
    assert ex.media_type == "text/event-stream"


def test_endless_stream_without_an_answer_is_cut_off(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """An SSE stream that never delivers what `until` waits for ends in a clear timeout."""
    server.route("/sse", method="POST", body=b": keepalive\n\n", endless=True, chunk_delay=0.02)
    with SpecStore(make_settings(timeout=0.8)) as store, pytest.raises(FetchTimeoutError):
        store.exchange("POST", server.url("/sse"), json_body={}, until=lambda _: False)


def test_unsupported_methods_and_bodies_are_programming_errors(make_settings: MakeSettings) -> None:
    """Only GET, POST and DELETE with JSON-compatible bodies are accepted."""
    with SpecStore(make_settings()) as store:
        with pytest.raises(ValueError, match="PUT"):
            store.exchange("PUT", "https://example.com/")
        with pytest.raises(ValueError, match="JSON"):
            store.exchange("POST", "https://example.com/", json_body={"x": object()})


# --------------------------------------------------------------------------- IPv6, TLS and HTTP/2


@pytest.mark.skipif(not ipv6_available(), reason="no IPv6 loopback")
def test_fetch_over_ipv6_loopback(make_settings: MakeSettings) -> None:
    """A spec on [::1] is fetched when private networks are allowed, refused otherwise."""
    with LocalHTTPServer("::1") as srv:
        srv.route("/spec.json", body=SPEC)
        with SpecStore(make_settings()) as store:
            spec = store.get(srv.url("/spec.json"))
        assert spec.body == SPEC
        assert spec.provenance["server_address"] == f"[::1]:{srv.port}"
        with SpecStore(make_settings(allow_private_network=False)) as store, pytest.raises(BlockedURLError):
            store.get(srv.url("/spec.json"))


def _tls_store(tmp_path: Path, resolver_map: dict[str, str], ssl_ctx: object, *, http2: bool = True) -> SpecStore:
    import ssl

    assert isinstance(ssl_ctx, ssl.SSLContext)

    class Resolver:
        def resolve(self, host: str, port: int) -> list[str]:
            return [resolver_map[host]]

    policy = AddressPolicy(allow_networks=(ipaddress.ip_network("127.0.0.1/32"),))
    transport = GuardedTransport(policy, resolver=Resolver(), ssl_context=ssl_ctx, http2=http2)
    return SpecStore(Settings(cache_dir=tmp_path / "cache", timeout=10.0), transport=transport, policy=policy)


def test_https_over_http2_with_pinned_address_verifies_the_name(tmp_path: Path) -> None:
    """Connected to 127.0.0.1, TLS still sends SNI for and verifies the URL's host name; ALPN picks HTTP/2."""
    from tests.support.h2server import TLSServer

    with TLSServer("specs.example.test", {"/spec.json": SPEC}) as srv:
        store = _tls_store(tmp_path, {"specs.example.test": "127.0.0.1"}, srv.client_context())
        with store:
            spec = store.get(f"https://specs.example.test:{srv.port}/spec.json")
            again = store.exchange("GET", f"https://specs.example.test:{srv.port}/other", cache=False)
        assert spec.body == SPEC
        assert spec.provenance["http_version"] == "HTTP/2"
        assert "insecure" not in spec.provenance
        assert spec.diagnostics == ()
        assert again.status == 404
        assert srv.sni_names == ["specs.example.test"]
        assert srv.protocols == ["h2"]


def test_https_over_http1_when_http2_is_off(tmp_path: Path) -> None:
    """Without HTTP/2 the same pinned TLS connection speaks HTTP/1.1."""
    from tests.support.h2server import TLSServer

    with TLSServer("specs.example.test", {"/spec.json": SPEC}) as srv:
        with _tls_store(tmp_path, {"specs.example.test": "127.0.0.1"}, srv.client_context(), http2=False) as store:
            spec = store.get(f"https://specs.example.test:{srv.port}/spec.json")
        assert spec.provenance["http_version"] == "HTTP/1.1"
        assert srv.protocols == ["http/1.1"]


def test_certificate_for_another_name_is_rejected(tmp_path: Path) -> None:
    """Pinning the address does not weaken TLS: a certificate for another name fails the fetch."""
    from tests.support.h2server import TLSServer

    with TLSServer("specs.example.test", {"/spec.json": SPEC}) as srv:
        store = _tls_store(tmp_path, {"evil.example.test": "127.0.0.1"}, srv.client_context())
        with store, pytest.raises(FetchError, match=r"certificate|CERTIFICATE|hostname"):
            store.get(f"https://evil.example.test:{srv.port}/spec.json")
        assert srv.sni_names == ["evil.example.test"]


@pytest.mark.parametrize(
    "location", ["https:x", "http:\\\\h/x", "http://xn--/", "http://[::1/", "https://a b/", "http://h:99999/"]
)
def test_a_malformed_redirect_location_is_a_fetch_error(
    server: LocalHTTPServer, make_settings: MakeSettings, location: str
) -> None:
    """Issue 14, item 10: a Location httpx cannot build a request for raised out of httpx (traceback, exit 1).
    It is a FetchError naming the spec URL and the Location."""
    server.route("/spec.json", redirect=location)
    with SpecStore(make_settings()) as store, pytest.raises(FetchError, match="redirect") as info:
        store.get(server.url("/spec.json"))
    assert info.value.url == server.url("/spec.json")
