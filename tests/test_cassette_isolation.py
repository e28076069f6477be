"""A cassette is the network for the run that names it, nothing more (issue 22, item 7).

Its answers are never stored in the spec cache: a later run with another cassette, or online, or
offline, must not read them first.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ramscope.config import Settings
from ramscope.errors import OfflineMissError
from ramscope.store import Cassette, Origin, SpecStore
from tests.support.httpserver import LocalHTTPServer

MakeSettings = Callable[..., Settings]
URL = "https://specs.example.com/spec.json"
HONEST = b'{"swagger": "2.0", "paths": {"/honest": {}}}'
HOSTILE = b'{"swagger": "2.0", "paths": {"/hostile": {}}}'


def _cassette(path: Path, url: str, body: bytes) -> Path:
    c = Cassette(path)
    c.add_synthesized(url=url, body=body, source="a stranger's reproduction")
    c.save()
    return c.path


def test_a_replayed_answer_is_not_in_the_cache_for_an_offline_run(tmp_path: Path) -> None:
    """After a replay, an offline run with the same cache finds nothing: the cassette's body was not stored."""
    cassette = _cassette(tmp_path / "a.yaml", URL, HOSTILE)
    with SpecStore(Settings(cache_dir=tmp_path / "cache", cassette=cassette)) as store:
        assert store.get(URL).origin is Origin.CASSETTE
    with SpecStore(Settings(cache_dir=tmp_path / "cache", offline=True)) as store, pytest.raises(OfflineMissError):
        store.get(URL)


def test_a_second_cassette_is_answered_by_itself(tmp_path: Path) -> None:
    """Cassette B after cassette A (same URL, same cache) gives B's body, not A's."""
    first = _cassette(tmp_path / "a.yaml", URL, HOSTILE)
    second = _cassette(tmp_path / "b.yaml", URL, HONEST)
    with SpecStore(Settings(cache_dir=tmp_path / "cache", cassette=first)) as store:
        assert store.get(URL).body == HOSTILE
    with SpecStore(Settings(cache_dir=tmp_path / "cache", cassette=second)) as store:
        spec = store.get(URL)
    assert spec.body == HONEST
    assert spec.provenance["cassette"] == str(second)


def test_an_online_run_after_a_replay_asks_the_server(tmp_path: Path, make_settings: MakeSettings) -> None:
    """A cassette naming the server's own URL does not answer a later online run in its place."""
    with LocalHTTPServer() as server:
        server.route("/spec.json", body=HONEST, headers={"cache-control": "max-age=3600"})
        url = server.url("/spec.json")
        cassette = _cassette(tmp_path / "a.yaml", url, HOSTILE)
        with SpecStore(make_settings(cassette=cassette)) as store:
            assert store.get(url).body == HOSTILE
        with SpecStore(make_settings()) as store:
            spec = store.get(url)
        assert spec.body == HONEST
        assert spec.origin is Origin.NETWORK
        assert server.hits("/spec.json") == 1


def test_a_replayed_mcp_exchange_is_not_cached(tmp_path: Path) -> None:
    """A POST answered by a cassette is not stored either: the offline run has no copy."""
    c = Cassette(tmp_path / "rpc.yaml")
    c.add_synthesized(url="https://mcp.example.com/mcp", body=b'{"result": {}}', source="test")
    c.save()
    with SpecStore(Settings(cache_dir=tmp_path / "cache", cassette=c.path)) as store:
        assert store.exchange("GET", "https://mcp.example.com/mcp").body == b'{"result": {}}'
        assert store.replaying
    with SpecStore(Settings(cache_dir=tmp_path / "cache", offline=True)) as store, pytest.raises(OfflineMissError):
        store.exchange("GET", "https://mcp.example.com/mcp")
