"""The on-disk cache: hits, freshness, revalidation, offline mode, integrity, artefacts, several processes."""

from __future__ import annotations

import json
import pickle
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from ramscope.config import Settings
from ramscope.errors import FetchError, OfflineMissError
from ramscope.store import Origin, SpecStore
from ramscope.store.cache import freshness, parse_cache_control
from tests.conftest import FakeClock
from tests.support.httpserver import LocalHTTPServer

SPEC = b'{"openapi": "3.0.3", "paths": {}}'
MakeSettings = Callable[..., Settings]
DAY = 24 * 3600.0


def test_second_run_is_served_from_the_cache(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A fresh entry answers a later run without touching the server, keeping the original fetch time."""
    server.route("/spec.json", body=SPEC)
    with SpecStore(make_settings()) as store:
        first = store.get(server.url("/spec.json"))
    with SpecStore(make_settings()) as store:
        again = store.get(server.url("/spec.json"))
    assert server.hits("/spec.json") == 1
    assert again.origin is Origin.CACHE
    assert again.body == first.body
    assert again.sha256 == first.sha256
    assert again.fetched_at == first.fetched_at
    assert again.provenance["first_origin"] == "network"
    assert [d.code for d in again.diagnostics] == ["insecure-fetch"]


def test_a_cache_dir_given_as_a_string_works(server: LocalHTTPServer, tmp_path: Path) -> None:
    """Library callers pass ``cache_dir`` (and ``cassette``) as strings as often as Paths."""
    server.route("/spec.json", body=SPEC)
    settings = Settings(cache_dir=str(tmp_path / "c"), allow_private_network=True)  # type: ignore[arg-type]
    assert settings.cache_dir == tmp_path / "c"
    for origin in (Origin.NETWORK, Origin.CACHE):
        with SpecStore(settings) as store:
            assert store.get(server.url("/spec.json")).origin is origin
    assert isinstance(Settings(cassette=str(tmp_path / "x.yaml")).cassette, Path)  # type: ignore[arg-type]


def test_each_url_is_fetched_once_per_run(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """Within one run the same URL (even with another fragment) is fetched once, also with --refresh."""
    server.route("/spec.json", body=SPEC)
    with SpecStore(make_settings(refresh=True)) as store:
        a = store.get(server.url("/spec.json"))
        b = store.get(server.url("/spec.json#/paths"))
    assert a is b
    assert server.hits("/spec.json") == 1


def test_default_ttl_expiry_refetches(server: LocalHTTPServer, make_settings: MakeSettings, clock: FakeClock) -> None:
    """Without caching headers an entry is fresh for --cache-ttl, then fetched again."""
    server.route("/spec.json", body=SPEC)
    settings = make_settings(cache_ttl=100.0)
    with SpecStore(settings, clock=clock) as store:
        store.get(server.url("/spec.json"))
    clock.advance(99)
    with SpecStore(settings, clock=clock) as store:
        assert store.get(server.url("/spec.json")).origin is Origin.CACHE
    clock.advance(2)
    with SpecStore(settings, clock=clock) as store:
        assert store.get(server.url("/spec.json")).origin is Origin.NETWORK
    assert server.hits("/spec.json") == 2
    assert "if-none-match" not in server.last("/spec.json").headers


def test_304_revalidation_keeps_the_body(
    server: LocalHTTPServer, make_settings: MakeSettings, clock: FakeClock
) -> None:
    """A stale entry with an ETag is revalidated; 304 keeps the cached body and makes it fresh again."""
    server.route("/spec.json", body=SPEC, etag='"v1"', headers={"cache-control": "max-age=60"})
    settings = make_settings()
    with SpecStore(settings, clock=clock) as store:
        first = store.get(server.url("/spec.json"))
    clock.advance(61)
    with SpecStore(settings, clock=clock) as store:
        spec = store.get(server.url("/spec.json"))
    assert server.last("/spec.json").headers["if-none-match"] == '"v1"'
    assert spec.origin is Origin.CACHE
    assert spec.provenance["revalidated"] is True
    assert spec.body == SPEC
    assert spec.sha256 == first.sha256
    clock.advance(30)
    with SpecStore(settings, clock=clock) as store:
        assert store.get(server.url("/spec.json")).origin is Origin.CACHE
    assert server.hits("/spec.json") == 2


def test_revalidation_with_last_modified(
    server: LocalHTTPServer, make_settings: MakeSettings, clock: FakeClock
) -> None:
    """Last-Modified is sent back as If-Modified-Since; a changed spec replaces the entry."""
    stamp = "Sun, 29 Nov 2026 10:00:00 GMT"
    route = server.route("/spec.json", body=SPEC, last_modified=stamp)
    settings = make_settings(cache_ttl=10.0)
    with SpecStore(settings, clock=clock) as store:
        store.get(server.url("/spec.json"))
    clock.advance(11)
    with SpecStore(settings, clock=clock) as store:
        assert store.get(server.url("/spec.json")).provenance.get("revalidated") is True
    assert server.last("/spec.json").headers["if-modified-since"] == stamp
    route.last_modified, route.body = "Mon, 30 Nov 2026 10:00:00 GMT", b'{"openapi": "3.1.0"}'
    clock.advance(11)
    with SpecStore(settings, clock=clock) as store:
        changed = store.get(server.url("/spec.json"))
    assert changed.origin is Origin.NETWORK
    assert changed.body == b'{"openapi": "3.1.0"}'


def test_cache_control_is_honoured(server: LocalHTTPServer, make_settings: MakeSettings, clock: FakeClock) -> None:
    """max-age beats the default TTL, no-store is not kept, no-cache revalidates on every use."""
    server.route("/short", body=SPEC, headers={"cache-control": "max-age=5"})
    server.route("/nostore", body=SPEC, headers={"cache-control": "no-store"})
    server.route("/nocache", body=SPEC, etag='"n"', headers={"cache-control": "no-cache"})
    settings = make_settings()
    for _ in range(2):
        with SpecStore(settings, clock=clock) as store:
            for path in ("/short", "/nostore", "/nocache"):
                store.get(server.url(path))
    assert server.hits("/short") == 1
    assert server.hits("/nostore") == 2
    assert server.hits("/nocache") == 2
    clock.advance(6)
    with SpecStore(settings, clock=clock) as store:
        assert store.get(server.url("/short")).origin is Origin.NETWORK


def test_refresh_refetches_a_fresh_entry(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """--refresh goes to the server even when the entry is fresh, unconditionally."""
    server.route("/spec.json", body=SPEC, etag='"v1"')
    with SpecStore(make_settings()) as store:
        store.get(server.url("/spec.json"))
    with SpecStore(make_settings(refresh=True)) as store:
        assert store.get(server.url("/spec.json")).origin is Origin.NETWORK
    assert server.hits("/spec.json") == 2
    assert "if-none-match" not in server.last("/spec.json").headers


@pytest.mark.parametrize(
    ("headers", "ttl", "expected"),
    [
        ({}, 100.0, (True, 1100.0)),
        ({"cache-control": "max-age=60"}, 100.0, (True, 1060.0)),
        ({"cache-control": "max-age=60, s-maxage=10"}, 100.0, (True, 1010.0)),
        ({"cache-control": "max-age=60", "age": "50"}, 100.0, (True, 1010.0)),
        ({"cache-control": "max-age=60", "age": "500"}, 100.0, (True, 1000.0)),
        ({"cache-control": "max-age=bogus"}, 100.0, (True, 1000.0)),
        ({"cache-control": 'public, max-age="30"'}, 100.0, (True, 1030.0)),
        ({"cache-control": "no-store"}, 100.0, (False, 1000.0)),
        ({"cache-control": "no-cache"}, 100.0, (True, 1000.0)),
        (
            {"expires": "Thu, 01 Jan 1970 00:20:00 GMT", "date": "Thu, 01 Jan 1970 00:16:40 GMT"},
            100.0,
            (True, 1200.0),
        ),
        ({"expires": "0"}, 100.0, (True, 1000.0)),
    ],
)
def test_freshness_rules(headers: dict[str, str], ttl: float, expected: tuple[bool, float]) -> None:
    """Freshness comes from s-maxage, max-age, Expires - Date, else the default TTL, minus Age."""
    assert freshness(headers, now=1000.0, default_ttl=ttl) == expected


def test_parse_cache_control() -> None:
    """Directive names are case-insensitive; the first occurrence wins; quotes are removed."""
    assert parse_cache_control('Max-Age=5, max-age=9, no-cache, private="x"') == {
        "max-age": "5",
        "no-cache": None,
        "private": "x",
    }


# --------------------------------------------------------------------------- offline


class ExplodingTransport(httpx.BaseTransport):
    def handle_request(self, request: httpx.Request) -> httpx.Response:
        raise AssertionError("offline mode used the network transport")


def test_offline_hit_and_stale_hit(server: LocalHTTPServer, make_settings: MakeSettings, clock: FakeClock) -> None:
    """Offline, a fresh entry answers, and so does a stale one (with a stale-spec warning)."""
    server.route("/spec.json", body=SPEC)
    with SpecStore(make_settings(cache_ttl=10.0), clock=clock) as store:
        store.get(server.url("/spec.json"))
    offline = make_settings(offline=True, cache_ttl=10.0)
    with SpecStore(offline, clock=clock, transport=ExplodingTransport()) as store:
        spec = store.get(server.url("/spec.json"))
        assert spec.origin is Origin.CACHE
        assert "stale" not in spec.provenance
    clock.advance(3600)
    with SpecStore(offline, clock=clock, transport=ExplodingTransport()) as store:
        spec = store.get(server.url("/spec.json"))
    assert spec.provenance["stale"] is True
    assert "stale-spec" in [d.code for d in spec.diagnostics]
    assert server.hits("/spec.json") == 1


def test_offline_with_refresh_serves_a_fresh_entry_as_fresh(
    server: LocalHTTPServer, make_settings: MakeSettings
) -> None:
    """--refresh cannot refetch offline; the cached copy answers and is not called stale while fresh."""
    server.route("/spec.json", body=SPEC)
    with SpecStore(make_settings()) as store:
        store.get(server.url("/spec.json"))
    with SpecStore(make_settings(offline=True, refresh=True), transport=ExplodingTransport()) as store:
        spec = store.get(server.url("/spec.json"))
    assert spec.origin is Origin.CACHE
    assert "stale" not in spec.provenance


def test_offline_miss_is_a_clear_error(make_settings: MakeSettings) -> None:
    """Offline with nothing cached: OfflineMissError naming the URL and how to fill the cache."""
    with (
        SpecStore(make_settings(offline=True), transport=ExplodingTransport()) as store,
        pytest.raises(OfflineMissError) as info,
    ):
        store.get("https://api.example.com/openapi.json")
    msg = str(info.value)
    assert "https://api.example.com/openapi.json" in msg
    assert "ramscope fetch" in msg
    assert "--cassette" in msg
    assert info.value.code == "offline-miss"


# --------------------------------------------------------------------------- integrity


def _db(settings: Settings) -> sqlite3.Connection:
    return sqlite3.connect(settings.cache_dir / "cache.db")


def _row(settings: Settings, key: str) -> tuple[int, str | None, bytes | None]:
    with _db(settings) as db:
        mode, filename, value = db.execute("SELECT mode, filename, value FROM Cache WHERE key = ?", (key,)).fetchone()
    return mode, filename, value


def test_corrupted_small_entry_is_discarded_and_refetched(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A flipped byte in an entry stored inside the database fails the SHA-256 check: reported, refetched."""
    server.route("/spec.json", body=SPEC)
    settings = make_settings()
    url = server.url("/spec.json")
    with SpecStore(settings) as store:
        store.get(url)
    key = f"spec:GET:{url}"
    _, _, value = _row(settings, key)
    assert value is not None
    broken = bytearray(value)
    broken[len(broken) // 2] ^= 0x01
    with _db(settings) as db:
        db.execute("UPDATE Cache SET value = ? WHERE key = ?", (bytes(broken), key))
    with SpecStore(settings) as store:
        spec = store.get(url)
        assert spec.origin is Origin.NETWORK
        assert spec.body == SPEC
        codes = [d.code for d in store.diagnostics]
    assert "cache-entry-corrupt" in codes
    corrupt = next(d for d in spec.diagnostics if d.code == "cache-entry-corrupt")
    assert "SHA-256 mismatch" in corrupt.message
    assert url in corrupt.message
    assert server.hits("/spec.json") == 2


def test_corrupted_large_entry_file_is_discarded(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A large entry lives in a file; truncating that file is detected the same way."""
    big = b'{"x": "' + b"a" * 100_000 + b'"}'
    server.route("/big.json", body=big)
    settings = make_settings()
    url = server.url("/big.json")
    with SpecStore(settings) as store:
        store.get(url)
    mode, filename, _ = _row(settings, f"spec:GET:{url}")
    assert mode == 2
    assert filename
    path = settings.cache_dir / filename
    path.write_bytes(path.read_bytes()[:-100])
    with SpecStore(settings) as store:
        assert store.get(url).origin is Origin.NETWORK
        assert "cache-entry-corrupt" in [d.code for d in store.diagnostics]


class _Boom:
    """Unpickling this creates a file: proof of code execution if it ever happens."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (Path.touch, (self.path,))  # type: ignore[return-value]


def test_pickled_cache_values_are_never_unpickled(
    server: LocalHTTPServer, make_settings: MakeSettings, tmp_path: Path
) -> None:
    """A poisoned row in pickle mode is discarded as corrupt; the pickle never runs."""
    server.route("/spec.json", body=SPEC)
    settings = make_settings()
    url = server.url("/spec.json")
    marker = tmp_path / "pwned"
    with SpecStore(settings) as store:
        store.get(url)
    with _db(settings) as db:
        db.execute(
            "UPDATE Cache SET mode = 4, value = ? WHERE key = ?", (pickle.dumps(_Boom(str(marker))), f"spec:GET:{url}")
        )
    with SpecStore(settings) as store:
        assert store.get(url).origin is Origin.NETWORK
        assert any("pickle" in d.message for d in store.diagnostics)
    assert not marker.exists()


def test_cache_rows_cannot_name_files_outside_the_cache(
    server: LocalHTTPServer, make_settings: MakeSettings, tmp_path: Path
) -> None:
    """A row pointing at ../victim is neither read nor deleted when the entry is discarded."""
    server.route("/spec.json", body=SPEC)
    settings = make_settings()
    url = server.url("/spec.json")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    with SpecStore(settings) as store:
        store.get(url)
    with _db(settings) as db:
        db.execute(
            "UPDATE Cache SET mode = 2, value = NULL, filename = ? WHERE key = ?", ("../victim.txt", f"spec:GET:{url}")
        )
    with SpecStore(settings) as store:
        assert store.get(url).body == SPEC
        assert any("../victim.txt" in d.message for d in store.diagnostics)
    assert victim.read_text() == "precious"


# --------------------------------------------------------------------------- artefacts


def test_artifacts_round_trip_and_are_integrity_checked(make_settings: MakeSettings) -> None:
    """Derived artefacts live in the same cache, keyed by content sha256, and are verified on read."""
    settings = make_settings()
    key = "0" * 64
    with SpecStore(settings) as store:
        assert store.get_artifact("index.openapi", key) is None
        store.put_artifact("index.openapi", key, b'{"operations": []}')
        assert store.get_artifact("index.openapi", key) == b'{"operations": []}'
    with _db(settings) as db:
        (value,) = db.execute("SELECT value FROM Cache WHERE key = ?", (f"artifact:index.openapi:{key}",)).fetchone()
        db.execute("UPDATE Cache SET value = ? WHERE key = ?", (value[:-1] + b"\x00", f"artifact:index.openapi:{key}"))
    with SpecStore(make_settings(offline=True)) as store:
        assert store.get_artifact("index.openapi", key) is None
        assert [d.code for d in store.diagnostics] == ["cache-entry-corrupt"]
        with pytest.raises(ValueError, match="namespace"):
            store.put_artifact("Bad:NS", key, b"")


# --------------------------------------------------------------------------- several processes


def test_two_processes_fill_one_cache_concurrently(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """Two ramscope processes filling one cache directory at once both succeed, and the result is complete."""
    urls = []
    for i in range(20):
        server.route(f"/spec{i}.json", body=b'{"n": %d, "pad": "%s"}' % (i, b"p" * (i * 4000)), latency=0.02)
        urls.append(server.url(f"/spec{i}.json"))
    settings = make_settings()
    cmd = [sys.executable, "-m", "tests.support.fill_cache", str(settings.cache_dir), *urls]
    root = Path(__file__).resolve().parent.parent
    procs = [subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outputs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err.decode()
        assert set(json.loads(out)) == set(urls)
    for path in (f"/spec{i}.json" for i in range(20)):
        assert 1 <= server.hits(path) <= 2
    with SpecStore(make_settings(offline=True), transport=ExplodingTransport()) as store:
        results = store.prefetch((u, None) for u in urls)
        assert store.diagnostics == () or all(d.code == "insecure-fetch" for d in store.diagnostics)
    for i, url in enumerate(urls):
        spec = results[url]
        assert not isinstance(spec, FetchError)
        assert spec.origin is Origin.CACHE
        assert json.loads(spec.body)["n"] == i


# --------------------------------------------------------------------------- distrust (issue 14, item 8)

TEN_YEARS = 10 * 365 * 86400


def test_freshness_is_clamped_to_the_configured_maximum() -> None:
    """A server's max-age of ten years is kept for at most the configured maximum."""
    assert freshness({"cache-control": f"max-age={TEN_YEARS}"}, now=1000.0, default_ttl=100.0, max_ttl=500.0) == (
        True,
        1500.0,
    )
    assert freshness({}, now=1000.0, default_ttl=100.0, max_ttl=500.0) == (True, 1100.0)


def test_an_entry_fresh_beyond_the_maximum_is_distrusted(
    server: LocalHTTPServer, make_settings: MakeSettings, clock: FakeClock
) -> None:
    """An entry claiming ten years of freshness (as a crafted cache shipped beside a card does) is not what
    ramscope writes: it is discarded with a cache-entry-distrusted warning and the spec fetched again;
    offline it is a miss."""
    server.route("/spec.json", body=SPEC, headers={"cache-control": f"max-age={TEN_YEARS}"})
    with SpecStore(make_settings(cache_max_ttl=float(TEN_YEARS)), clock=clock) as store:
        store.get(server.url("/spec.json"))  # written by a run that allowed it: the forged entry
    with (
        SpecStore(make_settings(offline=True), clock=clock, transport=ExplodingTransport()) as store,
        pytest.raises(OfflineMissError),
    ):
        store.get(server.url("/spec.json"))
    with SpecStore(make_settings(), clock=clock) as store:
        spec = store.get(server.url("/spec.json"))
    assert spec.origin is Origin.NETWORK
    assert "cache-entry-distrusted" in [d.code for d in spec.diagnostics]
    assert server.hits("/spec.json") == 2
    with SpecStore(make_settings(), clock=clock) as store:  # stored again, clamped: trusted now
        assert store.get(server.url("/spec.json")).origin is Origin.CACHE


def test_an_entry_fetched_in_the_future_is_distrusted(
    server: LocalHTTPServer, make_settings: MakeSettings, clock: FakeClock
) -> None:
    """An entry whose fetch time lies ahead of the clock cannot be one ramscope wrote: a miss, reported."""
    server.route("/spec.json", body=SPEC)
    with SpecStore(make_settings(), clock=clock) as store:
        store.get(server.url("/spec.json"))
    clock.advance(-7200)
    with SpecStore(make_settings(), clock=clock) as store:
        spec = store.get(server.url("/spec.json"))
    assert spec.origin is Origin.NETWORK
    (d,) = [d for d in spec.diagnostics if d.code == "cache-entry-distrusted"]
    assert "in the future" in d.message
    assert server.hits("/spec.json") == 2


def test_the_default_cache_is_the_users_cache_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Not ./specs_cache: a repository that ships one beside its cards must not decide what ramscope reports."""
    from ramscope.config import default_cache_dir

    monkeypatch.delenv("RAMSCOPE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    assert default_cache_dir() == tmp_path / "xdg" / "ramscope"
    assert Settings().cache_dir == tmp_path / "xdg" / "ramscope"
    monkeypatch.setenv("RAMSCOPE_CACHE_DIR", "specs_cache")
    assert default_cache_dir() == Path("specs_cache")  # the documented project-local choice


def test_tests_never_use_the_real_user_cache() -> None:
    """conftest points XDG_CACHE_HOME at a temporary directory for the whole run (and its children)."""
    import os

    import platformdirs

    assert os.environ["XDG_CACHE_HOME"].startswith(str(Path(os.environ.get("TMPDIR", "/tmp"))))
    assert not Path(platformdirs.user_cache_dir("ramscope")).is_relative_to(Path.home())
