"""Refreshing Google's universe through the spec store, and using it: offline afterwards, named in
the report, part of the reuse key, and never trusted when the cache holds garbage."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from ramscope import Settings
from ramscope.cli import main
from ramscope.derive import Engine
from ramscope.providers import GOOGLE, shipped_universe
from ramscope.refresh import NAMESPACE, refresh_google
from ramscope.store import SpecStore
from tests.support.httpserver import LocalHTTPServer
from tests.test_derive import card

AUTH = "https://www.googleapis.com/auth/"
DOCS = ("sheets.v4.json", "drive.v3.json", "slides.v1.json")


@pytest.fixture
def google(discovery_documents: Path) -> Iterator[LocalHTTPServer]:
    """A Discovery directory listing three real documents (Sheets, Drive, Slides), and one that fails."""
    with LocalHTTPServer() as srv:
        items = []
        for name in DOCS:
            route = f"/discovery/{name}"
            srv.route(route, body=(discovery_documents / name).read_bytes())
            items.append({"id": name, "discoveryRestUrl": srv.url(route)})
        srv.route("/discovery/broken.json", status=500, body=b"{}")
        items.append({"id": "broken", "discoveryRestUrl": srv.url("/discovery/broken.json")})
        srv.route("/discovery/v1/apis", body=orjson.dumps({"kind": "discovery#directoryList", "items": items}))
        yield srv


def settings(tmp_path: Path, **kw: object) -> Settings:
    return Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=10, **kw)  # type: ignore[arg-type]


def test_refresh_builds_stores_and_is_used(google: LocalHTTPServer, tmp_path: Path) -> None:
    with SpecStore(settings(tmp_path)) as store:
        result = refresh_google(store, directory=google.url("/discovery/v1/apis"))
    assert result.documents == 3
    assert [url for url, _ in result.failed] == [google.url("/discovery/broken.json")]
    u = result.universe
    shipped = shipped_universe(GOOGLE)
    assert shipped is not None
    assert u.version != shipped.version
    assert set(u.apis) == {"sheets", "drive", "slides"}
    # Derived offline afterwards, against the refreshed universe (only three APIs: drive.file now
    # opens Drive, Sheets and Slides methods only), and the report says which universe it used.
    with Engine(settings(tmp_path, offline=True)) as engine:
        r = engine.derive(
            {
                "name": "refreshed",
                "resourceAccessManifest": card(
                    google, ("/discovery/sheets.v4.json", "", {"operation_id": "sheets.spreadsheets.batchUpdate"}, {})
                ),
            }
        )
    (a,) = r.accesses
    assert a.scopes == [AUTH + "spreadsheets"]
    (used,) = r.to_dict()["providers"]["universes"]
    assert used["version"] == u.version
    assert used["source"]["from"] == google.url("/discovery/v1/apis")


def test_refresh_command_and_show(google: LocalHTTPServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--cache-dir", str(tmp_path / "cache"), "--allow-private-network"]
    assert main([*base, "universe", "refresh", "--directory", google.url("/discovery/v1/apis")]) == 0
    out = capsys.readouterr()
    assert "from 3 documents" in out.out
    assert "broken.json" in out.err
    assert main([*base, "--offline", "universe", "show", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    (u,) = shown["universes"]
    assert u["refreshed"] is True
    assert u["operations"] < 16699


def test_refresh_without_a_directory_fails_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--cache-dir", str(tmp_path / "c"), "--offline", "universe", "refresh"])
    assert code == 2
    assert "Discovery directory" in capsys.readouterr().err


def test_garbage_in_the_cache_falls_back_to_the_shipped_universe(tmp_path: Path) -> None:
    with SpecStore(settings(tmp_path)) as store:
        store.put_artifact(NAMESPACE, "google", b"\x1f\x8b not really gzip")
    with Engine(settings(tmp_path)) as engine:
        u = engine.universe(GOOGLE)
    shipped = shipped_universe(GOOGLE)
    assert u is shipped
    assert GOOGLE in engine.universe_problems


def test_reuse_key_changes_with_a_refresh(google: LocalHTTPServer, tmp_path: Path) -> None:
    with Engine(settings(tmp_path)) as engine:
        before = engine._key("card.json", "0" * 64)
    with SpecStore(settings(tmp_path)) as store:
        refresh_google(store, directory=google.url("/discovery/v1/apis"))
    with Engine(settings(tmp_path)) as engine:
        after = engine._key("card.json", "0" * 64)
    assert before != after
