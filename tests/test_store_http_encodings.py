"""Stacked Content-Encodings from a stranger's server: two layers are undone in reverse order, within the
decompressed byte limit; more than two (``_MAX_ENCODINGS``) are refused before any byte is inflated."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable

import pytest

from ramscope.config import Settings
from ramscope.errors import FetchError, SpecTooLargeError
from ramscope.store import SpecStore
from tests.support.httpserver import LocalHTTPServer

SPEC = b'{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {}}'
MakeSettings = Callable[..., Settings]


def test_two_layers_are_undone_in_reverse_order(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """`gzip, deflate` is gzip applied first: deflate is undone first, then gzip; and the other way round."""
    server.route("/gd", encoded=zlib.compress(gzip.compress(SPEC)), encoding="gzip, deflate")
    server.route("/dg", encoded=gzip.compress(zlib.compress(SPEC)), encoding="deflate, gzip")
    server.route("/gg", encoded=gzip.compress(gzip.compress(SPEC)), encoding="x-gzip,GZIP")
    with SpecStore(make_settings()) as store:
        for path in ("/gd", "/dg", "/gg"):
            assert store.get(server.url(path)).body == SPEC, path


def test_layers_in_the_wrong_order_are_a_corrupt_body(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A body whose layers do not match the header's order is refused as corrupt, never passed on half-decoded."""
    server.route("/swapped", encoded=gzip.compress(zlib.compress(SPEC)), encoding="gzip, deflate")
    with SpecStore(make_settings()) as store, pytest.raises(FetchError) as info:
        store.get(server.url("/swapped"))
    assert "the compressed body is corrupt: " in str(info.value)


def test_identity_and_empty_entries_are_not_layers(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """`identity` and empty list entries decode nothing and do not count towards the bound."""
    server.route("/one", encoded=gzip.compress(SPEC), encoding="identity, , gzip, identity")
    server.route(
        "/two", encoded=zlib.compress(gzip.compress(SPEC)), encoding="identity, gzip, identity, deflate, identity"
    )
    with SpecStore(make_settings()) as store:
        assert store.get(server.url("/one")).body == SPEC
        assert store.get(server.url("/two")).body == SPEC


@pytest.mark.parametrize(
    ("encoding", "count"), [("gzip, gzip, gzip", 3), ("deflate,gzip,deflate,gzip", 4), ("gzip, br, gzip", 3)]
)
def test_more_than_two_stacked_encodings_are_refused(
    server: LocalHTTPServer, make_settings: MakeSettings, encoding: str, count: int
) -> None:
    """Three or more layers (each one more decompressor to run on a stranger's bytes) are a FetchError."""
    body = SPEC
    for _ in range(count):
        body = gzip.compress(body)
    server.route("/stacked", encoded=body, encoding=encoding)
    with SpecStore(make_settings()) as store, pytest.raises(FetchError) as info:
        store.get(server.url("/stacked"))
    assert str(info.value) == f"{server.url('/stacked')}: refusing {count} stacked content encodings"


def test_an_unknown_encoding_in_a_stack_is_refused(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """`gzip, br`: one layer ramscope did not ask for is an error naming it."""
    server.route("/gbr", encoded=gzip.compress(SPEC), encoding="gzip, br")
    with SpecStore(make_settings()) as store, pytest.raises(FetchError) as info:
        store.get(server.url("/gbr"))
    assert str(info.value).endswith(": unsupported Content-Encoding 'br' (ramscope asks for gzip or deflate)")


def test_a_bomb_inside_a_second_layer_stops_at_the_limit(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """gzip of a gzip bomb (64 MiB of zeros, ~200 bytes on the wire) stops at the decompressed limit."""
    inner = gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9)
    outer = gzip.compress(inner, compresslevel=9)
    assert len(outer) < 2048
    server.route("/bomb.json", encoded=outer, encoding="gzip, gzip")
    limit = 1024 * 1024
    with SpecStore(make_settings(max_spec_bytes=limit)) as store, pytest.raises(SpecTooLargeError) as info:
        store.get(server.url("/bomb.json"))
    assert str(info.value).endswith(f": the body grew past --max-spec-bytes ({limit:,} bytes) after decompression")


def test_a_truncated_inner_layer_is_a_corrupt_body(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """The outer layer complete, the inner one cut before its end marker: corrupt, not a short document."""
    server.route("/cut", encoded=gzip.compress(zlib.compress(SPEC)[:-6]), encoding="deflate, gzip")
    with SpecStore(make_settings()) as store, pytest.raises(FetchError) as info:
        store.get(server.url("/cut"))
    assert str(info.value).endswith(": the compressed body is corrupt: the compressed body ends before its end marker")
