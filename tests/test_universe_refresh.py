"""Refreshing Google's universe through the spec store, and using it: offline afterwards, named in
the report, part of the reuse key, and never trusted when the cache holds garbage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ramscope import Settings
from ramscope.cli import main
from ramscope.derive import Engine
from ramscope.providers import GOOGLE, shipped_universe
from ramscope.providers.refresh import GOOGLE_DIRECTORY, NAMESPACE, refresh_google
from ramscope.providers.universe import Universe, build_google
from ramscope.store import SpecStore
from tests.support.google import DOCS, FakeGoogle, doc_values
from tests.test_derive import card

AUTH = "https://www.googleapis.com/auth/"


@pytest.fixture
def google(discovery_documents: Path) -> FakeGoogle:
    """Google's directory listing three real documents (Sheets, Drive, Slides), served in-process."""
    return FakeGoogle(discovery_documents)


@pytest.fixture
def three(discovery_documents: Path) -> Universe:
    """The baseline the refresh may not lose: the three documents listed (the shipped snapshot has 610)."""
    return build_google(doc_values(discovery_documents, DOCS), source={})


def settings(tmp_path: Path, **kw: object) -> Settings:
    return Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=10, **kw)  # type: ignore[arg-type]


def test_refresh_builds_stores_and_is_used(google: FakeGoogle, three: Universe, tmp_path: Path) -> None:
    with SpecStore(settings(tmp_path), transport=google.transport()) as store:
        result = refresh_google(store, shipped=three)
    assert result.documents == 3
    assert result.failed == ()
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
                    google,  # type: ignore[arg-type]
                    ("sheets.v4.json", "", {"operation_id": "sheets.spreadsheets.batchUpdate"}, {}),
                ),
            }
        )
    (a,) = r.accesses
    assert a.scopes == [AUTH + "spreadsheets"]
    (used,) = r.to_dict()["providers"]["universes"]
    assert used["version"] == u.version
    assert used["source"]["from"] == GOOGLE_DIRECTORY


def test_refresh_command_refuses_a_smaller_universe_and_keeps_the_shipped_one(
    google: FakeGoogle, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three documents would lose most of the shipped universe: exit 2, the reason on stderr, nothing stored."""
    monkeypatch.setattr(SpecStore, "_make_transport", lambda self: google.transport())
    base = ["--cache-dir", str(tmp_path / "cache")]
    assert main([*base, "universe", "refresh"]) == 2
    err = capsys.readouterr().err
    assert "loses" in err
    assert "nothing was stored" in err
    assert main([*base, "--offline", "universe", "show", "--format", "json"]) == 0
    (u,) = json.loads(capsys.readouterr().out)["universes"]
    assert u["refreshed"] is False
    assert u["operations"] == 16699


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


def test_reuse_key_changes_with_a_refresh(google: FakeGoogle, three: Universe, tmp_path: Path) -> None:
    with Engine(settings(tmp_path)) as engine:
        before = engine._key("card.json", "0" * 64)
    with SpecStore(settings(tmp_path), transport=google.transport()) as store:
        refresh_google(store, shipped=three)
    with Engine(settings(tmp_path)) as engine:
        after = engine._key("card.json", "0" * 64)
    assert before != after


def test_refresh_command_with_force_stores_and_prints_the_changes(
    google: FakeGoogle, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--force stores the smaller universe; stdout says what it adds and removes against the one in use."""
    monkeypatch.setattr(SpecStore, "_make_transport", lambda self: google.transport())
    base = ["--cache-dir", str(tmp_path / "cache")]
    assert main([*base, "universe", "refresh", "--force"]) == 0
    out = capsys.readouterr().out
    assert "from 3 documents" in out
    assert "  apis removed: " in out
    assert "  operations removed: " in out
    assert main([*base, "--offline", "universe", "show", "--format", "json"]) == 0
    (u,) = json.loads(capsys.readouterr().out)["universes"]
    assert u["refreshed"] is True


def test_refresh_command_refuses_another_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--directory naming anything but Google's directory over https: exit 2, nothing fetched."""
    code = main(["--cache-dir", str(tmp_path / "c"), "universe", "refresh", "--directory", "https://evil.example/apis"])
    assert code == 2
    assert "only from Google's Discovery directory" in capsys.readouterr().err
