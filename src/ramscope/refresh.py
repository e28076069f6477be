"""Refresh a permission universe from its provider, through the spec store (``ramscope universe refresh``).

Google: the Discovery directory (``https://www.googleapis.com/discovery/v1/apis``) lists every API
with its ``discoveryRestUrl``; each document is fetched through the same guarded, cached store as any
spec (so ``--offline`` serves the cache, and ``--cassette`` replays), compiled by
:func:`ramscope.providers.universe.build_google`, and stored as an artifact of the cache. Derivations
then prefer it to the shipped snapshot, and a report names the version it used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from .errors import FetchError, InputError
from .providers.universe import Universe, build_google, encode

__all__ = ["GOOGLE_DIRECTORY", "NAMESPACE", "RefreshResult", "refresh_google"]

#: The cache artifact namespace of refreshed universes (key: the universe's name).
NAMESPACE = "universe"
GOOGLE_DIRECTORY = "https://www.googleapis.com/discovery/v1/apis"
#: A directory listing more than this many APIs is not Google's.
MAX_APIS = 5000


def version_key(name: str) -> str:
    return f"{name}.version"


@dataclass(frozen=True, slots=True)
class RefreshResult:
    universe: Universe
    documents: int
    #: (url, why) of each document that could not be fetched or read.
    failed: tuple[tuple[str, str], ...] = field(default_factory=tuple)


def refresh_google(
    store: Any,
    *,
    directory: str = GOOGLE_DIRECTORY,
    progress: Callable[[int, int], None] | None = None,
) -> RefreshResult:
    """Fetch Google's Discovery directory and documents through ``store``; build and store the universe.

    Fails (``InputError``) when the directory itself cannot be read, or when no document could be;
    documents that fail individually are listed in the result and left out.
    """
    try:
        listing = orjson.loads(store.get(directory).body)
    except (FetchError, orjson.JSONDecodeError) as exc:
        raise InputError(f"the Discovery directory {directory} could not be read: {exc}") from exc
    items = listing.get("items") if isinstance(listing, dict) else None
    if not isinstance(items, list) or len(items) > MAX_APIS:
        raise InputError(f"{directory} is not a Discovery directory (no 'items' list of at most {MAX_APIS})")
    urls = sorted({u for i in items if isinstance(i, Mapping) and isinstance(u := i.get("discoveryRestUrl"), str)})
    store.prefetch([(u, None) for u in urls])
    docs: list[Mapping[str, Any]] = []
    failed: list[tuple[str, str]] = []
    for n, url in enumerate(urls, start=1):
        try:
            doc = orjson.loads(store.get(url).body)
        except (FetchError, orjson.JSONDecodeError) as exc:
            failed.append((url, str(exc)))
            continue
        if isinstance(doc, dict) and doc.get("kind") == "discovery#restDescription":
            docs.append(doc)
        else:
            failed.append((url, "not a Discovery document"))
        if progress is not None:
            progress(n, len(urls))
    if not docs:
        raise InputError(f"none of the {len(urls)} Discovery documents listed by {directory} could be read")
    source = {
        "from": directory,
        "documents": len(docs),
        "failed": len(failed),
        "license": "Apache-2.0",
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
    }
    universe = build_google(docs, source=source)
    store.put_artifact(NAMESPACE, universe.name, encode(universe))
    # Small, so that every run's reuse key can include it without decoding the universe.
    store.put_artifact(NAMESPACE, version_key(universe.name), universe.version.encode())
    return RefreshResult(universe, len(docs), tuple(failed))
