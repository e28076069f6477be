"""A universe refresh is all or nothing, from Google only (issue 22, items 6 and 9).

Refreshed universes decide what every later run in a cache grants, so: only Google's directory over
https, only documents on Google's API hosts; never from a cassette; any failed document, or a result
that loses APIs or methods of the shipped universe, stores nothing unless forced; the changes are
reported; documents are read one at a time, each bounded in parsed nodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from ramscope import InputError, Settings
from ramscope.providers.refresh import GOOGLE_DIRECTORY, NAMESPACE, refresh_google
from ramscope.providers.universe import Universe, build_google
from ramscope.store import Cassette, SpecStore
from tests.support.google import DOCS, FakeGoogle, doc_values

SHEETS, DRIVE, SLIDES = (DOCS[n] for n in ("sheets.v4.json", "drive.v3.json", "slides.v1.json"))


@pytest.fixture
def google(discovery_documents: Path) -> FakeGoogle:
    return FakeGoogle(discovery_documents)


@pytest.fixture
def shipped(discovery_documents: Path) -> Universe:
    """A stand-in for the shipped snapshot: the three documents the fake directory lists."""
    return build_google(doc_values(discovery_documents, DOCS), source={"from": "test"})


def _store(tmp_path: Path, google: FakeGoogle, **kw: Any) -> SpecStore:
    return SpecStore(Settings(cache_dir=tmp_path / "cache", **kw), transport=google.transport())


def _stored(tmp_path: Path) -> bytes | None:
    with SpecStore(Settings(cache_dir=tmp_path / "cache", offline=True)) as store:
        return store.get_artifact(NAMESPACE, "google")


def test_a_complete_refresh_is_stored_and_says_what_changed(
    tmp_path: Path, google: FakeGoogle, shipped: Universe, discovery_documents: Path
) -> None:
    """All documents read, nothing lost: stored, with the changes against the universe in use."""
    current = build_google(doc_values(discovery_documents, ["sheets.v4.json", "drive.v3.json"]), source={})
    with _store(tmp_path, google) as store:
        result = refresh_google(store, shipped=shipped, current=current)
    assert result.documents == 3
    assert result.failed == ()
    assert result.changes.apis_added == ("slides",)
    assert result.changes.apis_removed == ()
    assert result.changes.operations_removed == ()
    assert "slides.presentations.create" in result.changes.operations_added
    assert result.changes.lines()[0] == "apis added: 1 (slides)"
    assert result.universe.source["documents"] == 3
    assert _stored(tmp_path) is not None


@pytest.mark.parametrize(
    "directory",
    [
        "https://evil.example/discovery/v1/apis",
        "http://www.googleapis.com/discovery/v1/apis",
        "https://www.googleapis.com.evil.example/discovery/v1/apis",
        "https://www.googleapis.com:8443/discovery/v1/apis",
        "https://user@www.googleapis.com/discovery/v1/apis",
        "https://www.googleapis.com/other/apis",
    ],
)
def test_only_googles_directory_over_https(tmp_path: Path, google: FakeGoogle, directory: str) -> None:
    """Any other directory URL is refused before anything is fetched, and nothing is stored."""
    with _store(tmp_path, google) as store, pytest.raises(InputError, match="only from Google's Discovery directory"):
        refresh_google(store, directory=directory)
    assert google.hits == {}
    assert _stored(tmp_path) is None


def test_a_document_off_googles_hosts_fails_the_refresh(tmp_path: Path, google: FakeGoogle, shipped: Universe) -> None:
    """A listed document on another host (or over http) is not fetched; the refresh stores nothing."""
    google.extra += ["https://collector.evil.example/rest", "http://sheets.googleapis.com/$discovery/rest"]
    with _store(tmp_path, google) as store, pytest.raises(InputError, match=r"2 of 5 Discovery documents"):
        refresh_google(store, shipped=shipped)
    assert "https://collector.evil.example/rest" not in google.hits
    assert _stored(tmp_path) is None


def test_one_failed_document_keeps_the_old_universe(tmp_path: Path, google: FakeGoogle, shipped: Universe) -> None:
    """One document answering 500 fails the whole refresh: nothing stored, the reason named."""
    google.statuses["https://broken.googleapis.com/$discovery/rest"] = 500
    with (
        _store(tmp_path, google) as store,
        pytest.raises(InputError, match=r"1 of 4 .*broken.googleapis.com.*HTTP 500"),
    ):
        refresh_google(store, shipped=shipped)
    assert _stored(tmp_path) is None


def test_force_stores_what_could_be_read(tmp_path: Path, google: FakeGoogle, shipped: Universe) -> None:
    """With ``force`` the documents read are stored, and the failures listed."""
    google.statuses["https://broken.googleapis.com/$discovery/rest"] = 500
    with _store(tmp_path, google) as store:
        result = refresh_google(store, shipped=shipped, force=True)
    assert [url for url, _ in result.failed] == ["https://broken.googleapis.com/$discovery/rest"]
    assert result.universe.source["failed"] == 1
    assert _stored(tmp_path) is not None


def test_a_result_that_loses_shipped_methods_is_refused(
    tmp_path: Path, discovery_documents: Path, shipped: Universe
) -> None:
    """A directory listing one document would drop two APIs of the shipped universe: refused, unless forced."""
    one = FakeGoogle(discovery_documents, names=["sheets.v4.json"])
    with _store(tmp_path, one) as store, pytest.raises(InputError, match=r"loses 2 APIs and \d+ methods"):
        refresh_google(store, shipped=shipped)
    assert _stored(tmp_path) is None
    with _store(tmp_path, one) as store:
        forced = refresh_google(store, shipped=shipped, force=True)
    assert forced.against_shipped.apis_removed == ("drive", "slides")
    assert _stored(tmp_path) is not None


def test_the_packaged_universe_is_the_default_baseline(tmp_path: Path, google: FakeGoogle) -> None:
    """Without a baseline given, the shipped 16,699-operation universe is what may not be lost."""
    with _store(tmp_path, google) as store, pytest.raises(InputError, match=r"loses \d+ APIs and \d+ methods"):
        refresh_google(store)
    assert _stored(tmp_path) is None


def test_a_cassette_never_refreshes_a_universe(tmp_path: Path, discovery_documents: Path) -> None:
    """A cassette naming Google's directory URL is refused: its answers would outlive its run."""
    c = Cassette(tmp_path / "google.yaml")
    c.add_synthesized(url=GOOGLE_DIRECTORY, body=b'{"items": []}', source="a stranger")
    c.save()
    replay = Settings(cache_dir=tmp_path / "cache", cassette=c.path)
    with SpecStore(replay) as store, pytest.raises(InputError, match="not refreshed from a cassette"):
        refresh_google(store)
    assert _stored(tmp_path) is None


def test_documents_are_read_one_at_a_time(
    tmp_path: Path, google: FakeGoogle, shipped: Universe, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each document is parsed only when the universe builder asks for the next one."""
    import ramscope.providers.refresh as refresh

    parsed: list[str] = []
    seen: list[int] = []
    real_parse = refresh._parse

    def counting_parse(body: bytes, url: str) -> Any:
        parsed.append(url)
        return real_parse(body, url)

    def builder(docs: Iterable[Mapping[str, Any]], *, source: Mapping[str, Any]) -> Universe:
        taken = []
        for doc in docs:
            seen.append(len(parsed))  # the directory, then one more document per step
            taken.append(doc)
        return build_google(taken, source=source)

    monkeypatch.setattr(refresh, "_parse", counting_parse)
    monkeypatch.setattr(refresh, "build_google", builder)
    with _store(tmp_path, google) as store:
        refresh_google(store, shipped=shipped)
    assert seen == [2, 3, 4]


def test_a_document_that_parses_large_fails_without_building_it(
    tmp_path: Path, google: FakeGoogle, shipped: Universe, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small document of ``[{},{},...]`` over the node bound is a failed document, not a MemoryError."""
    import ramscope.providers.refresh as refresh

    monkeypatch.setattr(refresh, "MAX_DOCUMENT_NODES", 10_000)
    google.bodies["https://bomb.googleapis.com/$discovery/rest"] = b"[" + b"{}," * 5000 + b"{}]"
    with _store(tmp_path, google) as store, pytest.raises(InputError, match="more than 10,000 values and keys"):
        refresh_google(store, shipped=shipped)
    assert _stored(tmp_path) is None
