"""Caching built indexes by the spec's SHA-256, so a warm run parses no large spec again.

The value stored is the index in its compact form (:mod:`ramscope.specs.compact`:
decoded lazily, so a warm run pays for the operations it resolves, not for all of
them) plus what it was built from: the URL it was read at (relative refs and
relative server URLs depend on it) and the external documents its ``$ref``\\ s
pulled in, each with its SHA-256. A cached index is used only if it decodes, has
the current :data:`INDEX_FORMAT_VERSION` and shipped catalogs (:func:`built_with`), was
built from the same URL, and every dependency still has the same hash; otherwise it is rebuilt and stored again.
Nothing here touches disk or network itself: the :class:`SpecSource` (the spec
store) does. A warm run asks the source for the spec's SHA-256 only: the store
answers that from its cache entry's metadata, without reading the body.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Protocol

from ..documents import FetchedSpec
from ..errors import FetchError
from .compact import CompactError, decode, encode
from .model import INDEX_FORMAT_VERSION, SpecIndex, SpecKind

__all__ = ["INDEX_NAMESPACE", "SpecSource", "built_with", "index_cache_key", "load_index"]

#: The artifact namespace indexes are stored under.
INDEX_NAMESPACE = "spec-index"


class SpecSource(Protocol):
    """What indexing needs from the spec store (the real store satisfies it)."""

    def get(self, url: str, *, kind_hint: SpecKind | None = None) -> FetchedSpec: ...

    def get_artifact(self, namespace: str, key: str) -> bytes | None: ...

    def put_artifact(self, namespace: str, key: str, data: bytes) -> None: ...


def index_cache_key(sha256: str, kind_hint: SpecKind | None = None) -> str:
    return f"v{INDEX_FORMAT_VERSION}.{built_with()}-{sha256}-{kind_hint.value if kind_hint else 'auto'}"


@cache
def built_with(folder: Traversable | None = None) -> str:
    """A digest of the shipped data an index is built with, beside the code (:data:`INDEX_FORMAT_VERSION`):
    the GraphQL catalogs a schema's root fields are read against (Linear's, monday.com's). A cached
    index built with other catalogs is rebuilt, so an upgrade's new readings reach specs cached before."""
    folder = folder if folder is not None else resources.files("ramscope.providers") / "data"
    h = hashlib.sha256()
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if item.name.endswith(".graphql.json"):
            h.update(item.name.encode() + b"\0" + item.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def load_index(
    url: str, source: SpecSource, *, kind_hint: SpecKind | None = None, byte_budget: int | None = None
) -> SpecIndex:
    """The index of the spec at ``url``: from the artifact cache when still valid, else built and cached.

    ``byte_budget`` (the run's ``--max-spec-bytes``) bounds the spec and every document its ``$ref``
    values read, together: one spec URL cannot make ramscope parse and hold 32 documents of the limit
    each (issue 14). A document that would take the total past it is not read (its refs are unresolved).
    Each document's body is released from memory once parsed, when it can be read back.

    Raises :class:`~ramscope.errors.FetchError` if the spec cannot be obtained and
    :class:`~ramscope.errors.SpecError` if it is not a spec ramscope understands.
    """
    from . import _gc_paused, build_index  # noqa: PLC0415 - the package imports this module

    spec = source.get(url, kind_hint=kind_hint)
    key = index_cache_key(spec.sha256, kind_hint)
    cached = source.get_artifact(INDEX_NAMESPACE, key)
    if cached is not None:
        index = _from_cache(cached, spec, source)
        if index is not None:
            return index

    deps: list[tuple[str, str]] = []
    used = [spec.size]

    def load_ref(ref_url: str) -> FetchedSpec:
        fetched = source.get(ref_url)
        if byte_budget is not None and used[0] + fetched.size > byte_budget:
            fetched.release_body()
            raise FetchError(
                f"reading it ({fetched.size:,} bytes) would take this spec and the documents its $refs read "
                f"({used[0]:,} bytes so far) past --max-spec-bytes ({byte_budget:,}), a budget they share",
                url=ref_url,
            )
        used[0] += fetched.size
        deps.append((ref_url, fetched.sha256))
        return fetched

    # The collector stays paused until the built index is dropped: resumed while its operations
    # (Graph beta: 22,000 entries, 150,000 objects) are alive, it would walk them all once, for
    # nothing (they hold no cycles, and the run goes on with the compact form).
    with _gc_paused():
        index = build_index(spec, kind_hint=kind_hint, load_ref=load_ref)
        try:
            encoded = encode(index, built_from=spec.final_url or spec.url, deps=deps)
        except TypeError:
            # orjson cannot encode every value a YAML spec may hold (integers beyond 64 bits, e.g. in
            # an index's extra facts): such an index is used, just not cached.
            return index
        del index
    source.put_artifact(INDEX_NAMESPACE, key, encoded)
    # The run goes on with the compact form it just stored, as a warm run would: its hash tables
    # answer the look-ups without building the map of every path spelling (Graph beta: 45,000
    # spellings, 0.15 s, for one look-up), and cold and warm runs share one code path.
    compact, _, _ = decode(encoded)
    return compact if compact.url == spec.url else replace(compact, url=spec.url)


def _from_cache(data: bytes, spec: FetchedSpec, source: SpecSource) -> SpecIndex | None:
    """The cached index if it is intact and still describes this spec; ``None`` to rebuild."""
    try:
        index, built_from, deps = decode(data)
    except CompactError:
        return None  # corrupted or of another format: rebuild
    if built_from != (spec.final_url or spec.url):
        return None
    if index.sha256 != spec.sha256:
        return None
    for dep_url, dep_sha in deps:
        try:
            if source.get(dep_url).sha256 != dep_sha:
                return None
        except FetchError:
            return None
    return index if index.url == spec.url else replace(index, url=spec.url)
