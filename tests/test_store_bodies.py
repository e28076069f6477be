"""Large spec bodies stored apart from their cache entry: a warm run reads metadata, not the body."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from ramscope.config import Settings
from ramscope.derive import Engine
from ramscope.errors import FetchError
from ramscope.store import Origin, SpecStore
from ramscope.store.cache import SEPARATE_BODY_BYTES, SpecCache
from tests.conftest import FakeClock
from tests.support.httpserver import LocalHTTPServer

MakeSettings = Callable[..., Settings]


def big_spec(n_ops: int = 3, pad: int = SEPARATE_BODY_BYTES) -> bytes:
    """An OpenAPI document larger than the threshold, with scoped operations."""
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "Big", "version": "1", "description": "x" * pad},
        "components": {
            "securitySchemes": {
                "oauth": {
                    "type": "oauth2",
                    "flows": {
                        "authorizationCode": {
                            "authorizationUrl": "https://auth.example.com/a",
                            "tokenUrl": "https://auth.example.com/t",
                            "scopes": {"read": "Read", "write": "Write"},
                        }
                    },
                }
            }
        },
        "paths": {
            f"/items/{i}": {"get": {"operationId": f"get{i}", "security": [{"oauth": ["read"]}]}} for i in range(n_ops)
        },
    }
    return orjson.dumps(doc)


class BodyReads:
    """Counts reads of bodies stored apart (SpecCache.load_body)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = SpecCache.load_body

        def spy(cache: SpecCache, sha256: str, size: int) -> bytes | None:
            self.count += 1
            return real(cache, sha256, size)

        monkeypatch.setattr(SpecCache, "load_body", spy)


@pytest.fixture
def body_reads(monkeypatch: pytest.MonkeyPatch) -> BodyReads:
    return BodyReads(monkeypatch)


def _rows(settings: Settings) -> dict[str, tuple[int, str | None, int]]:
    with sqlite3.connect(settings.cache_dir / "cache.db") as db:
        return {k: (m, f, s) for k, m, f, s in db.execute("SELECT key, mode, filename, size FROM Cache")}


def _blob_path(settings: Settings, sha: str) -> Path:
    _, filename, _ = _rows(settings)[f"blob:sha256:{sha}"]
    assert filename is not None
    return settings.cache_dir / filename


def test_large_body_is_stored_apart_once(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """The entry keeps metadata only; the body is one content-addressed value, shared by two URLs."""
    body = big_spec()
    server.route("/a.json", body=body)
    server.route("/b.json", body=body)
    settings = make_settings()
    with SpecStore(settings) as store:
        a = store.get(server.url("/a.json"))
        store.get(server.url("/b.json"))
    sha = hashlib.sha256(body).hexdigest()
    assert a.sha256 == sha
    rows = _rows(settings)
    assert [k for k in rows if k.startswith("blob:")] == [f"blob:sha256:{sha}"]
    assert rows[f"blob:sha256:{sha}"][2] == len(body)
    entry = rows[f"spec:GET:{server.url('/a.json')}"]
    assert entry[1] is None  # small enough to live in the database row
    assert _blob_path(settings, sha).read_bytes() == body


def test_warm_get_reads_no_body_until_asked(
    server: LocalHTTPServer, make_settings: MakeSettings, body_reads: BodyReads
) -> None:
    """From the cache, get() answers with metadata; the body is read (and verified) on first use, once."""
    body = big_spec()
    server.route("/spec.json", body=body)
    with SpecStore(make_settings()) as store:
        first = store.get(server.url("/spec.json"))
    assert body_reads.count == 0
    with SpecStore(make_settings()) as store:
        spec = store.get(server.url("/spec.json"))
        assert spec.origin is Origin.CACHE
        assert (spec.sha256, spec.size, spec.fetched_at) == (first.sha256, len(body), first.fetched_at)
        assert not spec.body_loaded
        assert body_reads.count == 0
        assert spec.body == body
        assert spec.body == body
    assert body_reads.count == 1
    assert server.hits("/spec.json") == 1


def test_warm_derive_reads_no_spec_body(
    server: LocalHTTPServer, make_settings: MakeSettings, body_reads: BodyReads, write_card: Callable[..., Path]
) -> None:
    """With the index cached by sha256, a second derive needs neither the body nor the network."""
    server.route("/spec.json", body=big_spec())
    card = write_card(
        {
            "resources": [{"id": "r", "interaction_protocol": "REST", "spec": {"spec_url": server.url("/spec.json")}}],
            "operations": [{"id": "o", "resource": "r", "api_operation_spec": {"operation_id": "get1"}}],
            "resource_accesses": [
                {"id": "a", "operation": "o", "identity_used": "END_USER", "necessity": "REQUIRED"},
            ],
        }
    )
    with Engine(make_settings()) as engine:
        cold = engine.derive(card).to_dict()
    with Engine(make_settings()) as engine:
        warm = engine.derive(card).to_dict()
    assert body_reads.count == 0
    assert server.hits("/spec.json") == 1
    assert warm["accesses"][0]["scopes"] == cold["accesses"][0]["scopes"] == ["read"]
    assert warm["specs"][0]["origin"] == "cache"
    assert warm["specs"][0]["sha256"] == cold["specs"][0]["sha256"]


def test_corrupt_body_is_discarded_and_fetched_again(
    server: LocalHTTPServer, make_settings: MakeSettings, body_reads: BodyReads
) -> None:
    """A body that fails its SHA-256 is noticed when read, discarded, reported, and fetched again."""
    body = big_spec()
    server.route("/spec.json", body=body)
    settings = make_settings()
    with SpecStore(settings) as store:
        sha = store.get(server.url("/spec.json")).sha256
    path = _blob_path(settings, sha)
    broken = bytearray(path.read_bytes())
    broken[100] ^= 1
    path.write_bytes(bytes(broken))
    with SpecStore(settings) as store:
        spec = store.get(server.url("/spec.json"))
        assert spec.body == body
        codes = [d.code for d in store.diagnostics]
    assert "cache-entry-corrupt" in codes
    assert server.hits("/spec.json") == 2
    with SpecStore(settings) as store:  # and the cache is whole again
        assert store.get(server.url("/spec.json")).body == body
    assert server.hits("/spec.json") == 2


def test_lost_body_of_a_changed_spec_is_an_error(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """If the body is gone and the server now serves other bytes, the run's metadata no longer holds: an error."""
    server.route("/spec.json", body=big_spec())
    settings = make_settings()
    with SpecStore(settings) as store:
        sha = store.get(server.url("/spec.json")).sha256
    _blob_path(settings, sha).unlink()
    server.route("/spec.json", body=big_spec(n_ops=4))
    with SpecStore(settings) as store:
        spec = store.get(server.url("/spec.json"))
        with pytest.raises(FetchError, match="changed since"):
            _ = spec.body


def test_lost_body_offline_is_an_error(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """Offline, a body that is gone cannot be fetched again: a FetchError, not a crash."""
    server.route("/spec.json", body=big_spec())
    settings = make_settings()
    with SpecStore(settings) as store:
        sha = store.get(server.url("/spec.json")).sha256
    _blob_path(settings, sha).unlink()
    with SpecStore(make_settings(offline=True)) as store:
        spec = store.get(server.url("/spec.json"))
        with pytest.raises(FetchError):
            _ = spec.body
    assert server.hits("/spec.json") == 1


def test_body_can_be_read_after_the_store_is_closed(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A spec outlives its store: its body is still read from the cache directory."""
    body = big_spec()
    server.route("/spec.json", body=body)
    with SpecStore(make_settings()) as store:
        store.get(server.url("/spec.json"))
    with SpecStore(make_settings()) as store:
        spec = store.get(server.url("/spec.json"))
    assert spec.body == body


def test_stale_offline_and_revalidated_specs_keep_their_body(
    server: LocalHTTPServer, make_settings: MakeSettings, clock: FakeClock
) -> None:
    """The other ways an entry answers (stale offline, 304 revalidation) serve the same body."""
    body = big_spec()
    server.route("/spec.json", body=body, etag='"v1"', headers={"cache-control": "max-age=10"})
    settings = make_settings()
    with SpecStore(settings, clock=clock) as store:
        store.get(server.url("/spec.json"))
    clock.advance(60)
    with SpecStore(make_settings(offline=True), clock=clock) as store:
        stale = store.get(server.url("/spec.json"))
        assert stale.provenance.get("stale") is True
        assert stale.body == body
    with SpecStore(settings, clock=clock) as store:
        fresh = store.get(server.url("/spec.json"))
        assert fresh.provenance.get("revalidated") is True
        assert fresh.body == body
    assert server.hits("/spec.json") == 2
    assert len([k for k in _rows(settings) if k.startswith("blob:")]) == 1


def test_hash_computed_while_downloading(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """The sha256 of a gzip-encoded body is that of the decoded document."""
    body = big_spec()
    server.route("/spec.json", body=body, gzip=True)
    with SpecStore(make_settings()) as store:
        ex = store.exchange("GET", server.url("/spec.json"))
    assert ex.digest == hashlib.sha256(body).hexdigest() == ex.sha256
    assert ex.body == body


def test_fetched_spec_needs_a_body_or_a_loader(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    from datetime import UTC, datetime

    from ramscope.store.model import FetchedSpec

    base: dict[str, Any] = {
        "url": "u",
        "final_url": "u",
        "media_type": "application/json",
        "sha256": "0" * 64,
        "fetched_at": datetime.now(UTC),
        "origin": Origin.CACHE,
    }
    with pytest.raises(ValueError, match="either"):
        FetchedSpec(**base)
    with pytest.raises(ValueError, match="size"):
        FetchedSpec(**base, body_loader=lambda: b"x")
    lazy = FetchedSpec(**base, body_loader=lambda: b"abc", size=3)
    assert lazy == FetchedSpec(**base, body=b"abc")
    assert lazy.to_record()["bytes"] == 3


# --------------------------------------------------------------------------- URL facts


def test_remembered_url_is_judged_by_the_current_policy(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A URL parsed in an earlier run is not parsed again, but the address policy is applied again."""
    from ramscope.errors import BlockedURLError

    server.route("/spec.json", body=big_spec())
    url = server.url("/spec.json")
    with SpecStore(make_settings()) as store:
        store.get(url)
    with SpecStore(make_settings(allow_private_network=False)) as store, pytest.raises(BlockedURLError):
        store.get(url)
    with SpecStore(make_settings()) as store:
        assert store.get(url).origin is Origin.CACHE


def test_corrupt_url_facts_are_parsed_again(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    server.route("/spec.json", body=big_spec())
    url = server.url("/spec.json")
    settings = make_settings()
    with SpecStore(settings) as store:
        store.get(url)
    with sqlite3.connect(settings.cache_dir / "cache.db") as db:
        db.execute("UPDATE Cache SET value = ? WHERE key = ?", (b"garbage" * 10, f"url:{url}"))
    with SpecStore(settings) as store:
        assert store.get(url).origin is Origin.CACHE


def test_warm_derive_imports_no_http_stack(
    server: LocalHTTPServer, make_settings: MakeSettings, write_card: Callable[..., Path]
) -> None:
    """A derive answered from the cache imports neither the HTTP stack, PyYAML nor rich, nor diskcache
    (it reads the cache with sqlite3) nor concurrent.futures (it starts no thread). Storing a derived
    report for reuse writes to the cache (diskcache); reusing it, or --no-reuse, does not."""
    import subprocess
    import sys

    server.route("/spec.json", body=big_spec())
    card = write_card(
        {
            "resources": [{"id": "r", "interaction_protocol": "REST", "spec": {"spec_url": server.url("/spec.json")}}],
            "operations": [{"id": "o", "resource": "r", "api_operation_spec": {"operation_id": "get1"}}],
            "resource_accesses": [{"id": "a", "operation": "o", "identity_used": "END_USER", "necessity": "REQUIRED"}],
        }
    )
    cache = make_settings().cache_dir
    script = (
        "import io, sys, contextlib\n"
        "from ramscope.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    args = ['--cache-dir', {str(cache)!r}, '--allow-private-network', 'derive', *sys.argv[1:]]\n"
        f"    code = main([*args, {str(card)!r}])\n"
        # A None entry is an import refused, not a module (the CLI's stand-in for httpx._main).
        "heavy = sorted(m for m, v in sys.modules.items() if v is not None and m.split('.')[0] in "
        "('httpx', 'httpcore', 'h11', 'h2', 'ssl', 'yaml', 'rich', 'diskcache', 'concurrent', 'logging'))\n"
        "print(code, heavy)\n"
    )
    root = Path(__file__).resolve().parent.parent
    runs = [
        subprocess.run([sys.executable, "-c", script, *extra], capture_output=True, text=True, cwd=root, check=True)
        for extra in ([], ["--no-reuse"], [], [])
    ]
    code, _, cold = runs[0].stdout.partition(" ")
    assert "'httpx'" in cold  # the cold run fetched
    assert "yaml" not in cold  # a JSON card, no cassette
    assert runs[1].stdout.strip() == f"{code} []"  # derived from the cache, nothing stored
    assert "'httpx'" not in runs[2].stdout  # derived from the cache, and its report stored
    assert runs[3].stdout.strip() == f"{code} []"  # reused


def test_prefetch_answers_cached_specs_without_threads(
    server: LocalHTTPServer, make_settings: MakeSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm prefetch starts no worker thread (each would open its own SQLite connection); a miss still does."""
    import ramscope.store.store as store_module

    for i in range(3):
        server.route(f"/s{i}.json", body=big_spec(pad=10 * i))
    urls = [(server.url(f"/s{i}.json"), None) for i in range(3)]
    with SpecStore(make_settings()) as store:
        store.prefetch(urls[:2])
    pools: list[int] = []
    real = store_module._concurrently

    def counting(fn: Any, items: Any, jobs: int) -> Any:
        pools.append(jobs)
        return real(fn, items, jobs)

    monkeypatch.setattr(store_module, "_concurrently", counting)
    with SpecStore(make_settings()) as store:
        got = store.prefetch(urls[:2])
        assert pools == []
        assert all(not isinstance(r, FetchError) and r.origin is Origin.CACHE for r in got.values())
        assert got[urls[0][0]] is store.get(urls[0][0])
        store.prefetch([*urls, ("https://x.invalid:99999/", None)])
    assert pools == [2]  # the uncached spec and the bad URL


def test_corrupt_entry_found_by_prefetch_is_reported_with_the_refetch(
    server: LocalHTTPServer, make_settings: MakeSettings
) -> None:
    server.route("/spec.json", body=b'{"openapi": "3.0.3", "paths": {}}')
    settings = make_settings()
    url = server.url("/spec.json")
    with SpecStore(settings) as store:
        store.get(url)
    with sqlite3.connect(settings.cache_dir / "cache.db") as db:
        (value,) = db.execute("SELECT value FROM Cache WHERE key = ?", (f"spec:GET:{url}",)).fetchone()
        db.execute("UPDATE Cache SET value = ? WHERE key = ?", (value[:-1] + b"\x00", f"spec:GET:{url}"))
    with SpecStore(settings) as store:
        spec = store.prefetch([(url, None)])[url]
        assert not isinstance(spec, FetchError)
        assert spec.origin is Origin.NETWORK
        assert "cache-entry-corrupt" in [d.code for d in spec.diagnostics]


def test_large_bodies_are_written_in_the_background(tmp_path: Path) -> None:
    """save() queues a body stored apart; reading waits for it, and close() leaves it on disk."""
    body = big_spec()
    sha = hashlib.sha256(body).hexdigest()
    cache = SpecCache(tmp_path / "c")
    assert cache.save("k", {"v": 1}, body, body_sha256=sha)
    peek = cache.peek("k")
    assert peek is not None
    assert (peek.body_sha256, peek.body_size, peek.inline_body) == (sha, len(body), None)
    assert cache.load_body(sha, len(body)) == body
    assert cache.save("k2", {"v": 2}, body, body_sha256=sha)
    cache.close()
    again = SpecCache(tmp_path / "c")
    entry = again.load("k2")
    assert entry is not None
    assert (entry.meta["v"], entry.body) == (2, body)
    again.close()
