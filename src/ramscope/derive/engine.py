"""The run: :class:`Engine` holds what cards share (the spec store, indexes, grant machinery,
universes, catalogs); :func:`derive` is the one-card convenience."""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from .. import providers
from .._parse import CARD_LIMITS, read_bytes
from ..card import Card, load_card
from ..config import Settings
from ..diagnostics import Diagnostic
from ..errors import FetchError, InputError, RamscopeError, SpecError
from ..manifest import (
    Resource,
)
from ..outputs.diagnostics import findings, is_failing
from ..outputs.report import (
    Report,
    StoredReport,
)
from ..providers import mcp_catalog, quirks
from ..providers.authserver import scheme_server
from ..providers.catalog import Catalog
from ..providers.universe import Universe, UniverseError
from ..specs import load_index
from ..specs.model import SpecIndex, SpecKind
from ..store import SpecStore
from ..store.model import FetchedSpec
from . import reuse
from .policy import Policy
from .privilege import (
    GrantSpace,
    SpecGrants,
    UniverseJoin,
)
from .run import CardRun
from .state import spec_urls

#: Cards loaded (and their specs fetched) at a time by derive_many.
_CHUNK = 256
#: Grant spaces kept for cards with the same specs and universes (cleared when full).
_SPACES = 256


@dataclass(slots=True)
class _Loaded:
    index: SpecIndex | None = None
    fetched: FetchedSpec | None = None
    error: RamscopeError | None = None
    resources: list[str] = field(default_factory=list)
    #: Strict-validation findings (``--validate-specs``), pointing into the spec.
    validation: tuple[Diagnostic, ...] = ()
    #: Every spec the store was asked for to load this one (itself, files its $refs pulled in).
    asked: tuple[tuple[str, SpecKind | None], ...] = ()


class _Recording:
    """The store as indexing sees it, noting every spec asked for (for :mod:`ramscope.derive.reuse`)."""

    __slots__ = ("_store", "asked")

    def __init__(self, store: Any) -> None:
        self._store = store
        self.asked: list[tuple[str, SpecKind | None]] = []

    def get(self, url: str, *, kind_hint: SpecKind | None = None) -> FetchedSpec:
        self.asked.append((url, kind_hint))
        fetched: FetchedSpec = self._store.get(url, kind_hint=kind_hint)
        return fetched

    def get_artifact(self, namespace: str, key: str) -> bytes | None:
        data: bytes | None = self._store.get_artifact(namespace, key)
        return data

    def put_artifact(self, namespace: str, key: str, data: bytes) -> None:
        self._store.put_artifact(namespace, key, data)


class Engine:
    """One derivation run: a spec store and caches shared by every card derived with it."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        policy: Policy | None = None,
        store: Any = None,
    ) -> None:
        self.settings = settings or Settings()
        self.policy = policy or Policy()
        self._owns_store = store is None
        self.store: Any = store if store is not None else SpecStore(self.settings)
        self._loaded: dict[tuple[str, SpecKind | None], _Loaded] = {}
        self._grants: dict[tuple[str, str, tuple[str, ...]], SpecGrants] = {}
        #: The specs loaded while deriving the current card (its remote agents' included).
        self._touched: set[tuple[str, SpecKind | None]] = set()
        #: reuse.spec_state of each spec asked for in this run.
        self._states: dict[tuple[str, SpecKind | None], str] = {}
        self._run_key: str | None = None
        #: Specs already prefetched in this run: a batch prefetches a chunk's specs, then each card
        #: asks for its own again; asked twice, the store drew its progress bar twice.
        self._prefetched: set[tuple[str, SpecKind | None]] = set()
        #: canonical server -> its permission universe (refreshed in the cache, else shipped), or None.
        self._universes: dict[str, Universe | None] = {}
        #: Why a refreshed universe was not used, per server (said on every card that uses the server).
        self.universe_problems: dict[str, str] = {}
        self._spaces: dict[tuple[tuple[tuple[str, str, tuple[str, ...]], ...], tuple[str, ...]], GrantSpace] = {}
        self._joins: dict[tuple[str, ...], UniverseJoin] = {}
        #: (spec URL, sha256) -> the catalog serving its servers, if any.
        self._catalogs: dict[tuple[str, str], Catalog | None] = {}
        self._named_catalogs: dict[str, Catalog | None] = {}
        self._enriched: dict[tuple[str, str, str], SpecIndex] = {}
        #: id() of the cards of the chunk being derived, whose fetches derive_files planned.
        self._planned: set[int] = set()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owns_store:
            self.store.close()

    # ------------------------------------------------------------------ public

    def derive(self, card: Card | str | os.PathLike[str] | Mapping[str, Any]) -> Report:
        if not isinstance(card, Card):
            card = load_card(card)
        self._touched = set()
        return CardRun(self, card).run()

    def derive_files(
        self, paths: Iterable[str | os.PathLike[str]], *, on_unreadable: Callable[[InputError], None]
    ) -> Iterator[Report | StoredReport]:
        """Like :meth:`derive_many` over card files, reusing the stored report of a card whose
        bytes, name, settings, policy and specs have not changed (see :mod:`ramscope.derive.reuse`).

        A file that cannot be read or parsed goes to ``on_unreadable``; the others are derived.
        """
        todo = iter(paths)
        while chunk := list(itertools.islice(todo, _CHUNK)):
            read: list[tuple[bytes, str, str] | None] = []
            for path in chunk:
                try:
                    data, label = read_bytes(path, max_bytes=CARD_LIMITS.max_bytes)
                except InputError as exc:
                    on_unreadable(exc)
                    read.append(None)
                    continue
                read.append((data, label, hashlib.sha256(data).hexdigest()))
            entries = [self._entry(item[1], item[2]) if item is not None else None for item in read]
            # The specs the stored reports depend on, asked for together (a stale one is revalidated).
            self.prefetch(((url, kind) for e in entries if e is not None for url, kind, _ in e.deps), derive=False)
            found: list[Report | StoredReport | Card | None] = []
            for item, entry in zip(read, entries, strict=True):
                if item is None:
                    found.append(None)
                    continue
                data, label, sha = item
                stored = self._reused(label, sha, entry) if entry is not None else None
                if stored is not None:
                    found.append(stored)
                    continue
                try:
                    found.append(load_card(data, name=label))
                except InputError as exc:
                    on_unreadable(exc)
                    found.append(None)
            cards = [c for c in found if isinstance(c, Card)]
            urls = [u for c in cards for u in spec_urls(c)]
            self.prefetch(urls)
            # Their derivations need not plan the same fetches again (~0.1 ms a card).
            self._planned = {id(c) for c in cards}
            derived = map(self._derive_stored, cards)
            # Stored a chunk at a time, in one cache transaction (one per report cost ~0.3 ms each).
            to_store: list[tuple[str, bytes]] = []
            to_locate: list[tuple[str, bytes]] = []
            for got in found:
                if isinstance(got, Card):
                    report, form = next(derived)
                    if form is not None:
                        to_store.append(form)
                        to_locate.append((form[0], _positions_json(got, report)))
                    yield report
                elif got is not None:
                    yield got
            self._planned = set()
            self.store.put_artifacts(reuse.NAMESPACE, to_store)
            self.store.put_artifacts(POSITIONS, to_locate)

    def prefetch_card(self, card: Card) -> None:
        """Fetch what ``card`` names, unless its chunk's fetches were planned with it."""
        if id(card) not in self._planned:
            self.prefetch(spec_urls(card))

    def _derive_stored(self, card: Card) -> tuple[Report, tuple[str, bytes] | None]:
        report = self.derive(card)
        return report, self._stored_form(card, report)

    def _reusing(self) -> bool:
        s = self.settings
        # --refresh refetches every spec, and --record must really perform the exchanges.
        return s.reuse and not s.refresh and not s.record

    def _key(self, label: str, sha: str) -> str:
        if self._run_key is None:
            self._run_key = reuse.run_key(self.settings, self.policy, self._provider_versions())
        return reuse.card_key(self._run_key, label, sha)

    def _provider_versions(self) -> dict[str, str]:
        """The shipped snapshots' versions, and those of universes refreshed into the cache."""
        from ..providers.refresh import NAMESPACE, version_key  # noqa: PLC0415

        out = dict(providers.snapshot_versions())
        for name, _ in providers.UNIVERSES.values():
            refreshed = self.store.get_artifact(NAMESPACE, version_key(name))
            if refreshed is not None:
                out[f"universe:{name}:refreshed"] = refreshed.decode("utf-8", "replace")
        from ..providers.refresh import CATALOG_NAMESPACE, REFRESHABLE_CATALOGS  # noqa: PLC0415

        for name in REFRESHABLE_CATALOGS:
            refreshed = self.store.get_artifact(CATALOG_NAMESPACE, version_key(name))
            if refreshed is not None:
                out[f"catalog:{name}:refreshed"] = refreshed.decode("utf-8", "replace")
        return out

    def _entry(self, label: str, sha: str) -> reuse.Entry | None:
        """The stored report of this card file, if any, not yet checked."""
        if not self._reusing():
            return None
        data = self.store.get_artifact(reuse.NAMESPACE, self._key(label, sha))
        return reuse.decode(data) if data is not None else None

    def _reused(self, label: str, sha: str, entry: reuse.Entry) -> StoredReport | None:
        """The stored report, if every spec it depends on is still in the state it was derived from."""
        for url, kind, state in entry.deps:
            if self._state(url, kind) != state:
                return None
        at = self.store.get_artifact(POSITIONS, self._key(label, sha))
        if at is not None:
            try:
                positions = {k: (int(v[0]), int(v[1])) for k, v in orjson.loads(at).items()}
            except (ValueError, TypeError, IndexError, AttributeError):
                positions = None  # not ours after all: the card is read again for them, as before
            if positions is not None:
                return LocatedReport(
                    card_source=label, exit_code=entry.exit_code, json=entry.report, positions=positions
                )
        return StoredReport(card_source=label, exit_code=entry.exit_code, json=entry.report)

    def _stored_form(self, card: Card, report: Report) -> tuple[str, bytes] | None:
        """(key, entry) to store this report under, or ``None`` when it is not to be stored."""
        if not self.settings.reuse:
            return None
        try:
            data = report.to_json()
        except TypeError:
            return None  # a value orjson refuses (an integer beyond 64 bits): not stored, derived each time
        if len(data) > reuse.MAX_STORED_BYTES:
            return None
        asked = {a for key in self._touched for a in self._loaded[key].asked}
        deps = [(url, kind, self._state(url, kind)) for url, kind in asked]
        return self._key(card.source, card.sha256), reuse.encode(report.exit_code, deps, data)

    def _state(self, url: str, kind: SpecKind | None) -> str:
        state = self._states.get((url, kind))
        if state is None:
            try:
                result: FetchedSpec | FetchError = self.store.get(url, kind_hint=kind)
            except FetchError as exc:
                result = exc
            state = self._states[(url, kind)] = reuse.spec_state(result)
        return state

    def derive_many(self, cards: Iterable[Card | str | os.PathLike[str]]) -> Iterator[Report]:
        # A chunk of cards at a time: the specs of a chunk are fetched together, concurrently
        # (indexes are then built once per run), and only a chunk of cards is ever in memory.
        todo = iter(cards)
        while chunk := [c if isinstance(c, Card) else load_card(c) for c in itertools.islice(todo, _CHUNK)]:
            self.prefetch(url_kind for c in chunk for url_kind in spec_urls(c))
            for card in chunk:
                yield self.derive(card)

    def prefetch(self, urls: Iterable[tuple[str, SpecKind | None]], *, derive: bool = True) -> None:
        """Fetch these specs (each once per run), concurrently. ``derive``: cards are about to be
        derived from them, so each is indexed, and its providers made ready, as it arrives;
        otherwise (the specs stored reports depend on, to check) they are only fetched."""
        todo = sorted(
            {u for u in urls if u not in self._loaded and u not in self._prefetched}, key=lambda u: (u[0], str(u[1]))
        )
        if todo:
            self._prefetched.update(todo)
            # Each spec is indexed as it arrives, while the others still download (the index is
            # what every access needs next; load() keeps it, and its error, for them).
            self.store.prefetch(todo, on_ready=self._arrived if derive else None)

    # ------------------------------------------------------------------ internals

    def load(self, url: str, kind: SpecKind | None) -> _Loaded:
        key = (url, kind)
        self._touched.add(key)
        hit = self._loaded.get(key)
        if hit is not None:
            return hit
        loaded = _Loaded()
        source = _Recording(self.store)
        try:
            loaded.fetched = source.get(url, kind_hint=kind)
            loaded.index = load_index(url, source, kind_hint=kind, byte_budget=self.settings.max_spec_bytes)
            # The provider's documented reading of its own spec (any-of scope lists, retired scopes ...).
            loaded.index = quirks.apply(loaded.index)
            # An MCP server's vendor-published per-tool scopes (GitHub's MCP server), keyed by its URL.
            loaded.index = mcp_catalog.apply(loaded.index)
        except (FetchError, SpecError) as exc:
            loaded.error = exc
        loaded.asked = tuple(dict.fromkeys(source.asked))
        if self.settings.validate_specs and loaded.index is not None and loaded.index.kind is SpecKind.OPENAPI:
            from ..specs.strict import validate_spec  # noqa: PLC0415 - opt-in, and slow to import

            assert loaded.fetched is not None
            loaded.validation = validate_spec(loaded.fetched)
        if loaded.fetched is not None:
            loaded.fetched.release_body()  # indexed: read back from the cache if ever needed again
        self._loaded[key] = loaded
        return loaded

    def _arrived(self, url: str, kind: SpecKind | None) -> None:
        """A prefetched spec: indexed, and what its accesses will ask of the providers made ready.

        Called as each spec arrives, while the others still download: the permission universe of
        each authorization server its schemes name, and (a spec that declares no security) the
        catalog serving its servers, decoded with the parts a derivation reads. All is kept for
        the accesses that need them; in a run that has nothing left to wait for, it is work they
        would do a moment later.
        """
        index = self.load(url, kind).index
        if index is None:
            return
        for server in sorted({s for s in map(scheme_server, index.schemes) if s in providers.UNIVERSES}):
            self.universe(server)
        if not index.security_declared:
            cat = self._serving(index)
            if cat is not None:
                _ = cat.schemes, cat.universe

    def grants(self, index: SpecIndex) -> SpecGrants:
        # A catalog's enriched index has the spec's URL and sha256, and more schemes: keyed by URL
        # and hash alone, whichever came first in the batch served both (a report then depended on
        # the cards before it: "scheme 'github-user' is not defined").
        key = _spec_key(index)
        g = self._grants.get(key)
        if g is None:
            g = self._grants[key] = SpecGrants(index)
        return g

    def universe(self, server: str) -> Universe | None:
        """The permission universe of canonical ``server``: a refresh in the cache, else the shipped one."""
        if server not in self._universes:
            self._universes[server] = self._load_universe(server)
        return self._universes[server]

    def _load_universe(self, server: str) -> Universe | None:
        hit = providers.UNIVERSES.get(server)
        if hit is None:
            return None
        from ..providers.refresh import NAMESPACE  # noqa: PLC0415 - only for servers that have a universe

        data = self.store.get_artifact(NAMESPACE, hit[0])
        if data is not None:
            from ..providers.universe import decode  # noqa: PLC0415

            try:
                u = decode(data)
                if u.server == server:
                    return u
                self.universe_problems[server] = f"the refreshed universe names server {u.server!r}"
            except UniverseError as exc:
                self.universe_problems[server] = str(exc)
        return providers.shipped_universe(server)

    def space(self, grants: Sequence[SpecGrants], universes: Sequence[Universe]) -> GrantSpace:
        """The grant space of these specs and universes (shared by every card with the same ones;
        the universes' part is shared by every card with the same universes)."""
        ukey = tuple(sorted(f"{u.server}@{u.version}" for u in universes))
        key = (tuple(sorted(_spec_key(g.index) for g in grants)), ukey)
        sp = self._spaces.get(key)
        if sp is None:
            join = self._joins.get(ukey)
            if join is None:
                join = self._joins[ukey] = UniverseJoin(sorted(universes, key=lambda u: u.server))
            ordered = sorted(grants, key=lambda g: _spec_key(g.index))
            if len(self._spaces) >= _SPACES:
                # Cards of a batch rarely share all their specs: kept unbounded, spaces were most of
                # a large batch's memory, and one is now cheap to build (its universes are joined).
                self._spaces.clear()
            sp = self._spaces[key] = GrantSpace(ordered, join=join)
        return sp

    def enriched(self, index: SpecIndex, cat: Catalog) -> SpecIndex:
        """``index`` with the catalog's schemes beside its own, so its requirements can name them."""
        key = (index.url, index.sha256, cat.label)
        hit = self._enriched.get(key)
        if hit is None:
            hit = self._enriched[key] = replace(index, schemes=(*index.schemes, *cat.schemes))
        return hit

    def catalog_for(self, res: Resource, index: SpecIndex) -> Catalog | None:
        """The catalog a policy names for the resource, else the one serving the spec's servers."""
        named = self.policy.catalog_named_for(res.id)
        if named == "none":
            return None
        if named:
            return self.catalog(named)
        return self._serving(index)

    def catalog(self, name: str) -> Catalog | None:
        """The catalog ``name``: a refresh in the cache (``ramscope universe refresh microsoft-graph``),
        else the shipped one. A refreshed catalog the cache holds but that does not decode is not used."""
        if name not in self._named_catalogs:
            self._named_catalogs[name] = self._load_catalog(name)
        return self._named_catalogs[name]

    def _load_catalog(self, name: str) -> Catalog | None:
        import importlib  # noqa: PLC0415

        from ..providers.catalog import CatalogError, decode  # noqa: PLC0415
        from ..providers.refresh import CATALOG_NAMESPACE  # noqa: PLC0415

        hit = providers.CATALOGS.get(name)
        data = self.store.get_artifact(CATALOG_NAMESPACE, name) if hit is not None else None
        if hit is not None and data is not None:
            module = importlib.import_module(hit[0])
            try:
                cat = decode(data, module.normalise_path, getattr(module, "twins", None))
                if cat.name == name:
                    return cat
                self.universe_problems[f"catalog:{name}"] = f"the refreshed catalog is named {cat.name!r}"
            except CatalogError as exc:
                self.universe_problems[f"catalog:{name}"] = str(exc)
        return providers.catalog(name)

    def _serving(self, index: SpecIndex) -> Catalog | None:
        """The catalog serving the spec's servers, if any."""
        key = (index.url, index.sha256)
        if key not in self._catalogs:
            # Per spec, not per access: normalising and matching every server is ~0.3 ms.
            servers = index.extra.get("servers")
            shipped = (
                providers.catalog_for_servers(
                    [providers.normalise_url(str(u)) for u in servers], plan=_plan(index.extra)
                )
                if isinstance(servers, list) and servers
                else None
            )
            self._catalogs[key] = self.catalog(shipped.name) if shipped is not None else None
        return self._catalogs[key]


def _plan(extra: Any) -> str | None:
    # The spec's own GitHub marker (info.x-github-plan), kept by the OpenAPI reader (issue 30, item 16).
    plan = extra.get("x-github-plan") if isinstance(extra, dict) else None
    return plan if isinstance(plan, str) else None


#: Artefact namespace: where each failing finding of a stored report points in its card, under the
#: report's key. A reused report's failing findings (what the CLI says without -v) are said with line
#: and column; finding them again meant reading and scanning the card (~1.5 ms, most of a reused
#: card's cost). Only the failing ones: scanning every card of a batch for its info findings cost as
#: much as deriving it (issue 25); -v reads the card for the others.
POSITIONS = "report-positions"


@dataclass(frozen=True, slots=True)
class LocatedReport(StoredReport):
    """A stored report, and where its findings point in the card (JSON pointer -> line, column)."""

    positions: Mapping[str, tuple[int, int]] = field(default_factory=dict)


def _positions_json(card: Card, report: Report | StoredReport) -> bytes:
    pairs = ((f.path, card.position(f.path)) for f in findings(report) if f.source is None and is_failing(f))
    return orjson.dumps({path: pos for path, pos in pairs if pos is not None})


def _spec_key(index: SpecIndex) -> tuple[str, str, tuple[str, ...]]:
    """A spec as grants see it: URL, content, and its schemes (a catalog's enriched index has more)."""
    return index.url, index.sha256, tuple(s.name for s in index.schemes)


def derive(
    card: Card | str | os.PathLike[str] | Mapping[str, Any],
    *,
    settings: Settings | None = None,
    policy: Policy | None = None,
    store: Any = None,
) -> Report:
    """Derive the permission report of one card (see :class:`Engine` for batches)."""
    with Engine(settings, policy=policy, store=store) as engine:
        return engine.derive(card)
