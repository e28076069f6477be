"""Refresh a permission universe or catalog from its provider, through the spec store (``ramscope universe refresh``).

Google: the Discovery directory (``https://www.googleapis.com/discovery/v1/apis``) lists every API
with its ``discoveryRestUrl``; each document is fetched through the same guarded, cached store as any
spec (so ``--offline`` serves the cache, and ``--cassette`` replays), compiled by
:func:`ramscope.providers.universe.build_google`, and stored as an artifact of the cache. Derivations
then prefer it to the shipped snapshot, and a report names the version it used.

Microsoft Graph's catalog likewise (``ramscope universe refresh microsoft-graph``): Microsoft's newest
``permissions.json``, fetched through the same store, compiled with ramscope's reviewed additions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from .errors import FetchError, InputError
from .providers.universe import Universe, build_google, encode

__all__ = [
    "CATALOG_NAMESPACE",
    "GOOGLE_DIRECTORY",
    "GRAPH_PERMISSIONS",
    "NAMESPACE",
    "REFRESHABLE_CATALOGS",
    "CatalogRefreshResult",
    "RefreshResult",
    "refresh_catalog",
    "refresh_google",
]

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


# --------------------------------------------------------------------------- catalogs

#: The cache artifact namespace of refreshed catalogs (key: the catalog's name).
CATALOG_NAMESPACE = "catalog"
#: Microsoft's permissions data, newest commit of its default branch.
GRAPH_PERMISSIONS = (
    "https://raw.githubusercontent.com/microsoftgraph/microsoft-graph-devx-content/master/permissions/new/permissions.json"
)
#: Catalogs ``refresh_catalog`` can rebuild from their provider's data (GitHub's spans several
#: generated files and a reviewed reading of its docs: refreshed by re-vendoring, not here).
REFRESHABLE_CATALOGS = ("microsoft-graph",)


@dataclass(frozen=True, slots=True)
class CatalogRefreshResult:
    name: str
    version: str
    entries: int
    url: str
    sha256: str


def refresh_catalog(store: Any, name: str = "microsoft-graph", *, url: str = GRAPH_PERMISSIONS) -> CatalogRefreshResult:
    """Fetch ``name``'s permission data through ``store`` (guarded, cached; ``--offline`` serves the
    cache, ``--cassette`` replays), compile it with ramscope's reviewed additions, and store it as an
    artifact of the cache: derivations then prefer it to the shipped snapshot and reports name its
    version. Fails (``InputError``) when the data cannot be read or compiled."""
    import hashlib  # noqa: PLC0415

    from .providers import CATALOGS  # noqa: PLC0415
    from .providers.catalog import CatalogError, decode  # noqa: PLC0415
    from .providers.graph import build_from, normalise_path, shipped_additions, twins  # noqa: PLC0415

    if name not in REFRESHABLE_CATALOGS or name not in CATALOGS:
        raise InputError(f"catalog {name!r} cannot be refreshed; refreshable: {', '.join(REFRESHABLE_CATALOGS)}")
    try:
        data = store.get(url).body
    except FetchError as exc:
        raise InputError(f"{name}'s permission data {url} could not be read: {exc}") from exc
    sha = hashlib.sha256(data).hexdigest()
    source = {
        "repository": "https://github.com/microsoftgraph/microsoft-graph-devx-content",
        "path": "permissions/new/permissions.json",
        "from": url,
        "commit": "",
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "license": "MIT",
        "sha256": sha,
    }
    try:
        compiled = build_from(data, source, shipped_additions(), origin=url, strict=False)
        cat = decode(compiled, normalise_path, twins)
        count = len(cat)
    except (ValueError, CatalogError) as exc:
        raise InputError(f"{url} is not Microsoft's permissions data: {exc}") from exc
    if count == 0:
        raise InputError(f"{url} lists no endpoint")
    store.put_artifact(CATALOG_NAMESPACE, name, compiled)
    store.put_artifact(CATALOG_NAMESPACE, version_key(name), cat.version.encode())
    return CatalogRefreshResult(name, cat.version, count, url, sha)
