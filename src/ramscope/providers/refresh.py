"""Refresh a permission universe or catalog from its provider, through the spec store (``ramscope universe refresh``).

Google: the Discovery directory (``https://www.googleapis.com/discovery/v1/apis``) lists every API
with its ``discoveryRestUrl``; each document is fetched through the same guarded, cached store as any
spec (so ``--offline`` serves the cache), compiled by :func:`ramscope.providers.universe.build_google`,
and stored as an artifact of the cache. Derivations then prefer it to the shipped snapshot, and a
report names the version it used.

A refreshed universe decides what every later run in that cache grants, so a refresh is all or
nothing (issue 22):

* only Google's directory, over https, and only documents on Google's API hosts over https;
* not from a cassette (a cassette is the network of the run that names it; a universe stored
  from it would answer every later run);
* any document that cannot be fetched or read fails the refresh, and so does a result that loses
  APIs or methods the shipped universe has, unless ``force``;
* documents are read one at a time (each parsed, compiled into the running tables, dropped), and
  each is bounded in bytes and in parsed nodes like any spec;
* on failure nothing is stored: the universe in use stays.

Microsoft Graph's catalog likewise (``ramscope universe refresh microsoft-graph``): Microsoft's newest
``permissions.json``, fetched through the same store, compiled with ramscope's reviewed additions;
not from a cassette either.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import orjson

from ..errors import FetchError, InputError, LimitError
from .universe import Universe, build_google, encode

__all__ = [
    "CATALOG_NAMESPACE",
    "GOOGLE_DIRECTORY",
    "GRAPH_IDS_KEY",
    "GRAPH_PERMISSIONS",
    "NAMESPACE",
    "REFRESHABLE_CATALOGS",
    "CatalogRefreshResult",
    "RefreshResult",
    "UniverseChanges",
    "compare",
    "refresh_catalog",
    "refresh_google",
]

#: The cache artifact namespace of refreshed universes (key: the universe's name).
NAMESPACE = "universe"
GOOGLE_DIRECTORY = "https://www.googleapis.com/discovery/v1/apis"
#: The one host a Discovery directory is read from, and the suffix of the hosts documents are.
DIRECTORY_HOST = "www.googleapis.com"
DOCUMENT_HOST_SUFFIX = ".googleapis.com"
#: A directory listing more than this many APIs is not Google's.
MAX_APIS = 5000
#: Values and keys one Discovery document may build (the largest, compute.alpha, has 190,000).
MAX_DOCUMENT_NODES = 2_000_000
#: Names shown per kind of change; the counts are always whole.
SHOWN = 10


def version_key(name: str) -> str:
    return f"{name}.version"


@dataclass(frozen=True, slots=True)
class UniverseChanges:
    """What a refreshed universe adds and removes, against another (the one in use, or the shipped one)."""

    apis_added: tuple[str, ...] = ()
    apis_removed: tuple[str, ...] = ()
    operations_added: tuple[str, ...] = ()
    operations_removed: tuple[str, ...] = ()
    scopes_added: tuple[str, ...] = ()
    scopes_removed: tuple[str, ...] = ()
    #: Scopes kept whose set of operations changed.
    scopes_changed: tuple[str, ...] = ()

    @property
    def loses(self) -> bool:
        return bool(self.apis_removed or self.operations_removed)

    def to_dict(self) -> dict[str, Any]:
        return {
            name: {"count": len(items), "names": list(items[:SHOWN])}
            for name, items in (
                ("apis_added", self.apis_added),
                ("apis_removed", self.apis_removed),
                ("operations_added", self.operations_added),
                ("operations_removed", self.operations_removed),
                ("scopes_added", self.scopes_added),
                ("scopes_removed", self.scopes_removed),
                ("scopes_changed", self.scopes_changed),
            )
        }

    def lines(self) -> list[str]:
        """One line per kind of change, with its count and the first names (for the terminal)."""
        out = []
        for name, entry in self.to_dict().items():
            if entry["count"]:
                more = (
                    f", and {entry['count'] - len(entry['names'])} more" if entry["count"] > len(entry["names"]) else ""
                )
                out.append(f"{name.replace('_', ' ')}: {entry['count']} ({', '.join(entry['names'])}{more})")
        return out or ["no changes"]


def compare(old: Universe, new: Universe) -> UniverseChanges:
    def scopes(u: Universe) -> dict[str, frozenset[str]]:
        out: dict[str, frozenset[str]] = {}
        for atoms, positions in u.alternatives:
            if len(atoms) == 1:
                ((_, scope),) = atoms
                out[scope] = frozenset(u.ops[p] for p in positions)
        return out

    old_scopes, new_scopes = scopes(old), scopes(new)
    kept = new_scopes.keys() & old_scopes.keys()
    return UniverseChanges(
        apis_added=tuple(sorted(set(new.apis) - set(old.apis))),
        apis_removed=tuple(sorted(set(old.apis) - set(new.apis))),
        operations_added=tuple(sorted(set(new.ops) - set(old.ops))),
        operations_removed=tuple(sorted(set(old.ops) - set(new.ops))),
        scopes_added=tuple(sorted(new_scopes.keys() - old_scopes.keys())),
        scopes_removed=tuple(sorted(old_scopes.keys() - new_scopes.keys())),
        scopes_changed=tuple(sorted(s for s in kept if new_scopes[s] != old_scopes[s])),
    )


@dataclass(frozen=True, slots=True)
class RefreshResult:
    universe: Universe
    documents: int
    #: (url, why) of each document that could not be fetched or read (only with ``force``).
    failed: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    #: Against the universe in use before the refresh.
    changes: UniverseChanges = field(default_factory=UniverseChanges)
    #: Against the shipped snapshot (what ``force`` was needed for, if it lost anything).
    against_shipped: UniverseChanges = field(default_factory=UniverseChanges)


def _is_google(url: str, *, directory: bool) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    host = (parts.hostname or "").lower()
    if parts.scheme != "https" or parts.username is not None or parts.password is not None:
        return False
    if parts.port not in (None, 443):
        return False
    if directory:
        return host == DIRECTORY_HOST and parts.path == "/discovery/v1/apis"
    return host.endswith(DOCUMENT_HOST_SUFFIX) and host != DOCUMENT_HOST_SUFFIX[1:]


def _parse(body: bytes, url: str) -> Any:
    from .._parse import check_json_nodes  # noqa: PLC0415

    try:
        check_json_nodes(body, MAX_DOCUMENT_NODES, url)
        return orjson.loads(body)
    except LimitError as exc:
        raise InputError(exc.detail, source=url) from None
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc}", source=url) from None


def refresh_google(
    store: Any,
    *,
    directory: str = GOOGLE_DIRECTORY,
    force: bool = False,
    shipped: Universe | None = None,
    current: Universe | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RefreshResult:
    """Fetch Google's Discovery directory and documents through ``store``; build and store the universe.

    ``shipped`` (default: the packaged snapshot) is what the result may not lose without ``force``;
    ``current`` (default: ``shipped``) is what the changes are reported against. Raises
    ``InputError``, storing nothing, when the directory is not Google's over https, when the store
    replays a cassette, when the directory cannot be read, and (without ``force``) when any document
    fails or the result loses APIs or methods of ``shipped``.
    """
    if getattr(store, "replaying", False):
        raise InputError(
            "a universe is not refreshed from a cassette: a cassette answers its own run only, and a "
            "refreshed universe answers every later run in this cache; refresh online"
        )
    if not _is_google(directory, directory=True):
        raise InputError(f"a universe is refreshed only from Google's Discovery directory, {GOOGLE_DIRECTORY}")
    if shipped is None:
        from . import GOOGLE, shipped_universe  # noqa: PLC0415

        shipped = shipped_universe(GOOGLE)
    try:
        listing = _parse(store.get(directory).body, directory)
    except (FetchError, InputError) as exc:
        raise InputError(f"the Discovery directory {directory} could not be read: {exc}") from exc
    items = listing.get("items") if isinstance(listing, dict) else None
    if not isinstance(items, list) or len(items) > MAX_APIS:
        raise InputError(f"{directory} is not a Discovery directory (no 'items' list of at most {MAX_APIS})")
    listed = sorted({u for i in items if isinstance(i, Mapping) and isinstance(u := i.get("discoveryRestUrl"), str)})
    off_host = "not a document on Google's API hosts over https"
    failed: list[tuple[str, str]] = [(u, off_host) for u in listed if not _is_google(u, directory=False)]
    urls = [u for u in listed if _is_google(u, directory=False)]
    store.prefetch([(u, None) for u in urls])
    read = 0

    def documents() -> Iterator[Mapping[str, Any]]:
        # One document alive at a time: build_google keeps only method ids and scopes of each.
        nonlocal read
        for n, url in enumerate(urls, start=1):
            try:
                spec = store.get(url)
                doc = _parse(spec.body, url)
                release = getattr(spec, "release_body", None)
                if callable(release):
                    release()
                del spec
            except (FetchError, InputError) as exc:
                failed.append((url, str(exc)))
                continue
            finally:
                if progress is not None:
                    progress(n, len(urls))
            if isinstance(doc, dict) and doc.get("kind") == "discovery#restDescription":
                read += 1
                yield doc
            else:
                failed.append((url, "not a Discovery document"))
            del doc

    source = {
        "from": directory,
        "license": "Apache-2.0",
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
    }
    universe = build_google(documents(), source=source)
    failed.sort()
    if not read:
        raise InputError(f"none of the {len(listed)} Discovery documents listed by {directory} could be read")
    if failed and not force:
        shown = "; ".join(f"{u}: {why}" for u, why in failed[:3])
        raise InputError(
            f"{len(failed)} of {len(listed)} Discovery documents could not be read ({shown}); nothing was "
            "stored, the universe in use stays (--force stores the rest)"
        )
    against_shipped = compare(shipped, universe) if shipped is not None else UniverseChanges()
    if against_shipped.loses and not force:
        lost = (*against_shipped.apis_removed, *against_shipped.operations_removed)
        raise InputError(
            "the refreshed universe loses "
            f"{len(against_shipped.apis_removed)} APIs and {len(against_shipped.operations_removed)} methods of the "
            f"shipped one (e.g. {', '.join(lost[:3])}); nothing was stored, the universe in use stays "
            "(--force stores it anyway)"
        )
    # The counts go into the source (and so into reports) once known; the version does not depend on them.
    universe = replace(universe, source={**source, "documents": read, "failed": len(failed)})
    baseline = current if current is not None else shipped
    changes = compare(baseline, universe) if baseline is not None else UniverseChanges()
    store.put_artifact(NAMESPACE, universe.name, encode(universe))
    # Small, so that every run's reuse key can include it without decoding the universe.
    store.put_artifact(NAMESPACE, version_key(universe.name), universe.version.encode())
    return RefreshResult(universe, read, tuple(failed), changes, against_shipped)


# --------------------------------------------------------------------------- catalogs

#: The cache artifact namespace of refreshed catalogs (key: the catalog's name).
CATALOG_NAMESPACE = "catalog"
#: Microsoft's permissions data, newest commit of its default branch.
GRAPH_PERMISSIONS = "https://raw.githubusercontent.com/microsoftgraph/microsoft-graph-devx-content/master/permissions/new/permissions.json"
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
    #: Microsoft Graph: the version of the permission ids (GUIDs) refreshed beside the catalog, from the
    #: same directory's ``provisioningInfo.json``; ``None`` when it could not be read (the shipped ids stay).
    ids_version: str | None = None


def refresh_catalog(store: Any, name: str = "microsoft-graph", *, url: str = GRAPH_PERMISSIONS) -> CatalogRefreshResult:
    """Fetch ``name``'s permission data through ``store`` (guarded, cached; ``--offline`` serves the
    cache, ``--cassette`` replays), compile it with ramscope's reviewed additions, and store it as an
    artifact of the cache: derivations then prefer it to the shipped snapshot and reports name its
    version. Fails (``InputError``) when the data cannot be read or compiled."""
    import hashlib  # noqa: PLC0415

    from . import CATALOGS  # noqa: PLC0415
    from .catalog import CatalogError, decode  # noqa: PLC0415
    from .graph import build_from, normalise_path, shipped_additions, twins  # noqa: PLC0415

    if getattr(store, "replaying", False):
        raise InputError(
            "a catalog is not refreshed from a cassette: a cassette answers its own run only, and a "
            "refreshed catalog answers every later run in this cache; refresh online"
        )
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
    return CatalogRefreshResult(name, cat.version, count, url, sha, _refresh_graph_ids(store, url))


#: The cache artifact (namespace ``CATALOG_NAMESPACE``) of refreshed Microsoft Graph permission ids.
GRAPH_IDS_KEY = "microsoft-graph-ids"


def _refresh_graph_ids(store: Any, url: str) -> str | None:
    """Refresh the permission GUIDs of ``export --format entra-app`` from ``provisioningInfo.json`` beside
    ``permissions.json`` (Microsoft publishes both in one directory). Best effort: the catalog refresh
    stands on its own; when the ids cannot be read the shipped ones stay, and the result says so."""
    import hashlib  # noqa: PLC0415

    from .graph_ids import compile_ids  # noqa: PLC0415

    if not url.endswith("/permissions.json"):
        return None
    ids_url = url.removesuffix("permissions.json") + "provisioningInfo.json"
    try:
        data = store.get(ids_url).body
        source = {
            "repository": "https://github.com/microsoftgraph/microsoft-graph-devx-content",
            "path": "permissions/new/provisioningInfo.json",
            "from": ids_url,
            "commit": "",
            "date": datetime.now(UTC).strftime("%Y-%m-%d"),
            "license": "MIT",
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        compiled = compile_ids(orjson.loads(data), source)
    except (FetchError, ValueError):
        return None
    if not compiled["ids"]:
        return None
    store.put_artifact(CATALOG_NAMESPACE, GRAPH_IDS_KEY, orjson.dumps(compiled, option=orjson.OPT_SORT_KEYS))
    return str(compiled["version"])
