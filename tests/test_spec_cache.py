"""load_index: the built index cached by the spec's SHA-256, with its external-ref dependencies checked."""

from __future__ import annotations

from typing import Any

import pytest

import ramscope.specs as specs
from ramscope.errors import FetchError
from ramscope.specs import INDEX_NAMESPACE, SpecKind, SpecSource, index_cache_key, load_index
from ramscope.specs.compact import decode
from ramscope.store.model import FetchedSpec
from tests._specs import make_spec

MAIN = "https://specs.example.com/apis/main.json"
SHARED = "https://specs.example.com/apis/shared.json"


def main_doc(title: str = "Main") -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": title, "version": "1"},
        "security": [],
        "paths": {"/local": {"get": {"operationId": "local", "responses": {}}}, "/shared": {"$ref": "shared.json#/p"}},
    }


def shared_doc(op_id: str = "shared") -> dict[str, Any]:
    return {"p": {"get": {"operationId": op_id, "responses": {}}}}


class FakeSource:
    """An in-memory SpecSource: URL -> document, plus an artifact map; counts gets."""

    def __init__(self, docs: dict[str, dict[str, Any]]) -> None:
        self.specs = {url: make_spec(doc, url) for url, doc in docs.items()}
        self.artifacts: dict[tuple[str, str], bytes] = {}
        self.gets: list[str] = []

    def get(self, url: str, *, kind_hint: SpecKind | None = None) -> FetchedSpec:
        self.gets.append(url)
        if url not in self.specs:
            raise FetchError("gone", url=url)
        return self.specs[url]

    def get_artifact(self, namespace: str, key: str) -> bytes | None:
        return self.artifacts.get((namespace, key))

    def put_artifact(self, namespace: str, key: str, data: bytes) -> None:
        self.artifacts[(namespace, key)] = data


@pytest.fixture
def source() -> FakeSource:
    return FakeSource({MAIN: main_doc(), SHARED: shared_doc()})


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts real index builds (i.e. parses of the spec)."""
    calls: list[str] = []
    real = specs.build_index

    def counting(spec: FetchedSpec, **kw: Any) -> Any:
        calls.append(spec.url)
        return real(spec, **kw)

    monkeypatch.setattr(specs, "build_index", counting)
    return calls


def test_fake_source_satisfies_the_protocol(source: FakeSource) -> None:
    """The in-memory fake is a SpecSource (the real store must be too)."""
    s: SpecSource = source
    assert s.get_artifact("x", "y") is None


def test_second_load_comes_from_the_cache(source: FakeSource, builds: list[str]) -> None:
    """The first load builds and stores the index with its dependencies; the second parses nothing."""
    first = load_index(MAIN, source)
    assert {o.key for o in first.operations} == {"local", "shared"}
    assert builds == [MAIN]
    ((ns, key),) = source.artifacts
    assert ns == INDEX_NAMESPACE
    assert key == index_cache_key(source.specs[MAIN].sha256)
    _, built_from, deps = decode(source.artifacts[(ns, key)])
    assert (built_from, deps) == (MAIN, [(SHARED, source.specs[SHARED].sha256)])
    second = load_index(MAIN, source)
    assert builds == [MAIN]
    assert second == first
    assert second.operations == first.operations


def test_changed_dependency_invalidates(source: FakeSource, builds: list[str]) -> None:
    """If a file an external $ref pulled in has changed, the cached index is rebuilt."""
    load_index(MAIN, source)
    source.specs[SHARED] = make_spec(shared_doc("renamed"), SHARED)
    again = load_index(MAIN, source)
    assert builds == [MAIN, MAIN]
    assert {o.key for o in again.operations} == {"local", "renamed"}


def test_vanished_dependency_invalidates(source: FakeSource, builds: list[str]) -> None:
    """A dependency that can no longer be fetched forces a rebuild (which then reports the broken ref)."""
    load_index(MAIN, source)
    del source.specs[SHARED]
    again = load_index(MAIN, source)
    assert builds == [MAIN, MAIN]
    assert [d.code for d in again.diagnostics] == ["ref-unresolved"]


@pytest.mark.parametrize(
    "garbage",
    [b"not json", b"[]", b'{"built_from": "x"}', b'{"built_from": "%s", "index": {"format": 0}}' % MAIN.encode()],
    ids=["not-json", "not-object", "other-url", "old-format"],
)
def test_corrupt_or_stale_artifacts_are_rebuilt(source: FakeSource, builds: list[str], garbage: bytes) -> None:
    """A cached value that does not decode, is of an old format or was built from another URL is ignored."""
    key = index_cache_key(source.specs[MAIN].sha256)
    source.artifacts[(INDEX_NAMESPACE, key)] = garbage
    index = load_index(MAIN, source)
    assert builds == [MAIN]
    assert index.title == "Main"
    assert decode(source.artifacts[(INDEX_NAMESPACE, key)])[1] == MAIN


def test_same_body_at_another_url_is_rebuilt(builds: list[str]) -> None:
    """Relative refs and server URLs depend on where a spec was read, so the same bytes elsewhere are rebuilt."""
    other = "https://mirror.example.com/apis/main.json"
    source = FakeSource({MAIN: main_doc(), SHARED: shared_doc(), other: main_doc()})
    load_index(MAIN, source)
    index = load_index(other, source)
    assert builds == [MAIN, other]
    assert index.url == other


def test_kind_hint_is_part_of_the_key(source: FakeSource) -> None:
    """Indexes built under different kind hints are cached apart."""
    assert index_cache_key("abc") != index_cache_key("abc", SpecKind.OPENAPI)
    load_index(MAIN, source, kind_hint=SpecKind.OPENAPI)
    assert (INDEX_NAMESPACE, index_cache_key(source.specs[MAIN].sha256, SpecKind.OPENAPI)) in source.artifacts


def test_the_key_names_the_catalogs_the_index_was_built_with(tmp_path: Any) -> None:
    """A GraphQL catalog shipped with another release (monday.com's, Linear's) changes the key: an index
    cached with the old catalog's readings is rebuilt rather than served."""
    from ramscope.specs.cache import built_with

    assert index_cache_key("abc").startswith(f"v{specs.INDEX_FORMAT_VERSION}.{built_with()}-abc")
    (tmp_path / "linear.graphql.json").write_bytes(b'{"fields": {"issue": "read"}}')
    (tmp_path / "unrelated.json").write_bytes(b"{}")
    before = built_with(tmp_path)
    (tmp_path / "unrelated.json").write_bytes(b'{"changed": true}')
    built_with.cache_clear()
    assert built_with(tmp_path) == before
    (tmp_path / "linear.graphql.json").write_bytes(b'{"fields": {"issue": "write"}}')
    built_with.cache_clear()
    assert built_with(tmp_path) != before
