"""The pipeline: card → specs → targets → requirements → least-privilege sets → report.

:class:`Engine` holds what a run shares between cards — the spec store, the
built indexes and their grant-set machinery — so a batch of cards fetches and
indexes each spec once. :func:`derive` is the one-card convenience.

Fail closed: every access ends either with its permissions derived, or marked
incomplete with a reason code and message (``spec-unavailable``,
``operation-not-found``, ``security-undeclared``, ``no-compatible-alternative``
...). Incomplete accesses have ``scopes``/``requirements`` of ``None`` and make
every tier that contains them incomplete.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from . import providers, reuse
from ._parse import CARD_LIMITS, read_bytes
from .card import Card, load_card
from .config import Settings
from .diagnostics import Diagnostic, Severity, has_errors, rule
from .errors import FetchError, InputError, RamscopeError, SpecError
from .governance.skills import find_skill_extension
from .manifest import (
    AccessNecessity,
    IdentityType,
    Operation,
    Resource,
    ResourceAccess,
    ResourceOwner,
)
from .naming import display_name_diagnostics
from .outputs.report import (
    IDENTITIES,
    TIERS,
    AccessRecord,
    IdentityTier,
    Report,
    SkillRecord,
    SpecRecord,
    StoredReport,
    TierRecord,
)
from .policy import Pin, Policy
from .privilege import (
    AMBIGUOUS,
    Alternative,
    Atom,
    Choice,
    GrantSpace,
    SpecGrants,
    TierProblem,
    choose_least_privilege,
    fits,
    solve_tier,
)
from .providers.catalog import Catalog, CatalogEntry
from .providers.universe import Universe, UniverseError
from .resolve import Target, Unresolved, resolve, spec_url_for, unresolved_for_error
from .specs import load_index
from .specs.model import OperationEntry, SchemeRequirement, SchemeType, SpecIndex, SpecKind
from .store import SpecStore, kind_for_protocol, spec_refs
from .store.model import FetchedSpec, rfc3339
from .validate import check_spec_url, validate

__all__ = ["Engine", "derive"]

_S = "derive"
ACCESS_UNRESOLVED = rule(
    "access-unresolved",
    Severity.ERROR,
    "An access could not be resolved to an operation of its spec; its permissions are unknown.",
    stage=_S,
)
ACCESS_UNDETERMINED = rule(
    "access-undetermined",
    Severity.ERROR,
    "An access was resolved but its permissions cannot be determined (undeclared or unusable security).",
    stage=_S,
)
CATALOG_NO_ENTRY = rule(
    "catalog-no-entry",
    Severity.INFO,
    "The spec declares no security and the provider's permission catalog lists no permission for this operation.",
    stage=_S,
)
CATALOG_LEAST_DIFFERS = rule(
    "catalog-least-differs",
    Severity.INFO,
    "The provider marks other permissions least privileged than the narrowest by grant set; the marked one is used.",
    stage=_S,
)
UNIVERSE_UNREADABLE = rule(
    "universe-refresh-unreadable",
    Severity.WARNING,
    "A refreshed permission universe in the cache could not be read; the shipped snapshot was used.",
    stage=_S,
)
PIN_NOT_ALTERNATIVE = rule(
    "pin-not-an-alternative",
    Severity.WARNING,
    "A policy pin names scopes that are not one of the operation's declared alternatives.",
    stage=_S,
)
PIN_UNUSED = rule("policy-pin-unused", Severity.WARNING, "A policy pin matched no access or operation.", stage=_S)
A2A_CYCLE = rule(
    "a2a-cycle",
    Severity.WARNING,
    "Following remote agents' manifests leads back to an agent already on the path; it is not derived again.",
    stage=_S,
)
FOOTPRINT_TRUNCATED = rule(
    "footprint-truncated",
    Severity.INFO,
    "A remote agent's own manifest lies deeper than --max-depth and was not derived.",
    stage=_S,
)
FOOTPRINT_INCOMPLETE = rule(
    "footprint-incomplete",
    Severity.WARNING,
    "A remote agent's own manifest could not be derived completely: delegating to it exposes unknown permissions.",
    stage=_S,
)


#: A card gets nearest-operation suggestions for at most this many unresolved accesses: each is a
#: similarity search over the spec's operations, and a hostile card can hold 100,000 accesses.
MAX_SUGGESTED_ACCESSES = 25

#: Cards loaded (and their specs fetched) at a time by derive_many.
_CHUNK = 256


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
    """The store as indexing sees it, noting every spec asked for (for :mod:`ramscope.reuse`)."""

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
        self._grants: dict[tuple[str, str], SpecGrants] = {}
        #: The specs loaded while deriving the current card (its remote agents' included).
        self._touched: set[tuple[str, SpecKind | None]] = set()
        #: reuse.spec_state of each spec asked for in this run.
        self._states: dict[tuple[str, SpecKind | None], str] = {}
        self._run_key: str | None = None
        #: canonical server -> its permission universe (refreshed in the cache, else shipped), or None.
        self._universes: dict[str, Universe | None] = {}
        #: Why a refreshed universe was not used, per server (said on every card that uses the server).
        self.universe_problems: dict[str, str] = {}
        self._spaces: dict[tuple[tuple[tuple[str, str], ...], tuple[str, ...]], GrantSpace] = {}
        self._enriched: dict[tuple[str, str, str], SpecIndex] = {}

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
        return _CardRun(self, card).run()

    def derive_files(
        self, paths: Iterable[str | os.PathLike[str]], *, on_unreadable: Callable[[InputError], None]
    ) -> Iterator[Report | StoredReport]:
        """Like :meth:`derive_many` over card files, reusing the stored report of a card whose
        bytes, name, settings, policy and specs have not changed (see :mod:`ramscope.reuse`).

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
            self.prefetch((url, kind) for e in entries if e is not None for url, kind, _ in e.deps)
            found: list[Report | StoredReport | Card | None] = []
            for item, entry in zip(read, entries, strict=True):
                if item is None:
                    found.append(None)
                    continue
                data, label, _ = item
                stored = self._reused(label, entry) if entry is not None else None
                if stored is not None:
                    found.append(stored)
                    continue
                try:
                    found.append(load_card(data, name=label))
                except InputError as exc:
                    on_unreadable(exc)
                    found.append(None)
            self.prefetch(u for c in found if isinstance(c, Card) for u in _spec_urls(c))
            # Stored a chunk at a time, in one cache transaction (one per report cost ~0.3 ms each).
            to_store: list[tuple[str, bytes]] = []
            for got in found:
                if isinstance(got, Card):
                    report = self.derive(got)
                    form = self._stored_form(got, report)
                    if form is not None:
                        to_store.append(form)
                    yield report
                elif got is not None:
                    yield got
            self.store.put_artifacts(reuse.NAMESPACE, to_store)

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
        from .refresh import NAMESPACE, version_key  # noqa: PLC0415

        out = dict(providers.snapshot_versions())
        for name, _ in providers.UNIVERSES.values():
            refreshed = self.store.get_artifact(NAMESPACE, version_key(name))
            if refreshed is not None:
                out[f"universe:{name}:refreshed"] = refreshed.decode("utf-8", "replace")
        return out

    def _entry(self, label: str, sha: str) -> reuse.Entry | None:
        """The stored report of this card file, if any, not yet checked."""
        if not self._reusing():
            return None
        data = self.store.get_artifact(reuse.NAMESPACE, self._key(label, sha))
        return reuse.decode(data) if data is not None else None

    def _reused(self, label: str, entry: reuse.Entry) -> StoredReport | None:
        """The stored report, if every spec it depends on is still in the state it was derived from."""
        for url, kind, state in entry.deps:
            if self._state(url, kind) != state:
                return None
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
            self.prefetch(url_kind for c in chunk for url_kind in _spec_urls(c))
            for card in chunk:
                yield self.derive(card)

    def prefetch(self, urls: Iterable[tuple[str, SpecKind | None]]) -> None:
        todo = sorted({u for u in urls if u not in self._loaded}, key=lambda u: (u[0], str(u[1])))
        if todo:
            self.store.prefetch(todo)

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
            loaded.index = load_index(url, source, kind_hint=kind)
        except (FetchError, SpecError) as exc:
            loaded.error = exc
        loaded.asked = tuple(dict.fromkeys(source.asked))
        if self.settings.validate_specs and loaded.index is not None and loaded.index.kind is SpecKind.OPENAPI:
            from .specs.strict import validate_spec  # noqa: PLC0415 - opt-in, and slow to import

            assert loaded.fetched is not None
            loaded.validation = validate_spec(loaded.fetched)
        self._loaded[key] = loaded
        return loaded

    def grants(self, index: SpecIndex) -> SpecGrants:
        key = (index.url, index.sha256)
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
        from .refresh import NAMESPACE  # noqa: PLC0415 - only for servers that have a universe

        data = self.store.get_artifact(NAMESPACE, hit[0])
        if data is not None:
            from .providers.universe import decode  # noqa: PLC0415

            try:
                u = decode(data)
                if u.server == server:
                    return u
                self.universe_problems[server] = f"the refreshed universe names server {u.server!r}"
            except UniverseError as exc:
                self.universe_problems[server] = str(exc)
        return providers.shipped_universe(server)

    def space(self, grants: Sequence[SpecGrants], universes: Sequence[Universe]) -> GrantSpace:
        """The grant space of these specs and universes (shared by every card with the same ones)."""
        key = (
            tuple(sorted((g.index.url, g.index.sha256) for g in grants)),
            tuple(sorted(f"{u.server}@{u.version}" for u in universes)),
        )
        sp = self._spaces.get(key)
        if sp is None:
            ordered = sorted(grants, key=lambda g: (g.index.url, g.index.sha256))
            sp = self._spaces[key] = GrantSpace(ordered, sorted(universes, key=lambda u: u.server))
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
            return providers.catalog(named)
        servers = index.extra.get("servers")
        if not isinstance(servers, list) or not servers:
            return None
        return providers.catalog_for_servers([providers.normalise_url(str(u)) for u in servers])


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


def _spec_urls(card: Card) -> list[tuple[str, SpecKind | None]]:
    """The (URL, kind) pairs worth fetching: the store's plan, minus URLs the card check refuses."""
    return [(r.url, r.kind) for r in spec_refs([card]) if not has_errors(check_spec_url(r.url, ""))]


# --------------------------------------------------------------------------- one card


@dataclass(slots=True)
class _Outcome:
    """What the per-access stage decided, kept for the tier stage."""

    access: ResourceAccess
    key: str
    record: AccessRecord
    grants: SpecGrants | None = None
    candidates: tuple[Alternative, ...] = ()
    #: The access's own least-privilege choice, when it has one.
    own: Alternative | None = None


@dataclass(slots=True)
class _Pending:
    """A resolved access waiting for the card's grant space before its choice is made."""

    access: ResourceAccess
    key: str
    base: dict[str, Any]
    resource: Resource
    operation: Operation
    found: Target
    #: Where its requirements come from: "spec", or the catalog that supplied them.
    catalog: Catalog | None = None
    catalog_entry: CatalogEntry | None = None


class _CardRun:
    def __init__(self, engine: Engine, card: Card, *, depth: int = 0, path: tuple[str, ...] = ()) -> None:
        self.engine = engine
        self.card = card
        self.policy = engine.policy
        self.diags: list[tuple[Diagnostic, str | None]] = []
        self.used_pins: set[int] = set()
        #: How many agents deep this card is (0: the card the user gave).
        self.depth = depth
        #: The agents on the way here, by card URL and content hash, for cycle detection.
        self.path = (*path, card.source, f"sha256:{card.sha256}")
        #: Unresolved accesses still offered "did you mean" suggestions (each costs a similarity search).
        self.suggestions_left = MAX_SUGGESTED_ACCESSES
        #: Remote agents' manifests derived for this card, by (card URL, sha256), with the first access
        #: that showed them: each is derived and embedded once, later accesses refer to it.
        self.footprints: dict[tuple[str, str], tuple[str, Report]] = {}
        #: The specs this card's accesses loaded. Not the engine's (every card's so far): a report
        #: must not depend on which cards were derived before it.
        self.used_specs: set[tuple[str, SpecKind | None]] = set()

    def run(self) -> Report:
        card_diags = validate(self.card)
        self.diags.extend((d, None) for d in card_diags)
        m = self.card.manifest
        self.engine.prefetch(_spec_urls(self.card))
        first = [self._access(i, a) for i, a in enumerate(m.resource_accesses)]
        pending = [p for p in first if isinstance(p, _Pending)]
        self.space = self._space(pending)
        outcomes = [self._resolved(p) if isinstance(p, _Pending) else p for p in first]
        for i, pin in enumerate(self.policy.pins):
            if i not in self.used_pins:
                what = f"access {pin.access!r}" if pin.access else f"operation {pin.operation!r}"
                self.diags.append((PIN_UNUSED("", f"policy pin for {what} matched nothing in this card"), None))
        tiers = self._tiers(outcomes)
        skills = self._skills(outcomes)
        specs = self._spec_records()
        names = ((r.id, r.display_name, r.loc.of("display_name")) for r in m.resources)
        self.diags.extend((d, None) for d in display_name_diagnostics(names, [s.to_dict() for s in specs]))
        return Report(
            card_name=self.card.name,
            card_source=self.card.source,
            card_sha256=self.card.sha256,
            card_valid=not has_errors(card_diags),
            specs=specs,
            accesses=[o.record for o in outcomes],
            tiers=tiers,
            diagnostics=list(dict.fromkeys(self.diags)),
            policy=self.policy.to_dict()
            if (self.policy.pins or self.policy.exclude or self.policy.prefer or self.policy.catalog_for)
            else None,
            providers=self._providers(pending),
            skills=skills,
        )

    def _skills(self, outcomes: Sequence[_Outcome]) -> dict[str, SkillRecord] | None:
        """Each mapped skill's own cumulative tiers, solved over that skill's accesses alone."""
        sets, _ = find_skill_extension(self.card)
        if sets is None:
            return None
        out: dict[str, SkillRecord] = {}
        for s in sets.skills:
            if s.skill_id in out:
                continue  # mapped twice: a validation error; the first mapping is used
            wanted = set(s.resource_accesses)
            mine = [o for o in outcomes if o.access.id in wanted]
            known = {o.access.id for o in outcomes}
            out[s.skill_id] = SkillRecord(
                accesses=[o.access.id for o in mine],
                tiers=self._tiers(mine),
                unknown_accesses=[a for a in s.resource_accesses if a not in known],
            )
        return out

    # ---------------------------------------------------------------- grant space

    def _space(self, pending: Sequence[_Pending]) -> GrantSpace:
        """The card's grant space: its resolved specs, and the universe of every server their
        alternatives name (and of every catalog that supplied requirements)."""
        grants: dict[tuple[str, str], SpecGrants] = {}
        servers: set[str] = set()
        universes: dict[str, Universe] = {}
        for p in pending:
            g = self.engine.grants(p.found.index)
            grants[(g.index.url, g.index.sha256)] = g
            for alt in g.alternatives(p.found.entry):
                servers.update(atom.namespace for atom in alt.atoms if atom.is_scope)
            if p.catalog is not None:
                universes[p.catalog.label] = p.catalog.universe
        for server in sorted(servers):
            u = self.engine.universe(server)
            if u is not None:
                universes[u.server] = u
                problem = self.engine.universe_problems.get(server)
                if problem:
                    self.diags.append((UNIVERSE_UNREADABLE("", f"{server}: {problem}"), None))
        return self.engine.space(list(grants.values()), list(universes.values()))

    def _providers(self, pending: Sequence[_Pending]) -> dict[str, Any]:
        catalogs = {p.catalog.label: p.catalog.summary() for p in pending if p.catalog is not None}
        return {
            "universes": [u.summary() for u in self.space.universes if not u.server.startswith("catalog:")],
            "catalogs": [catalogs[k] for k in sorted(catalogs)],
        }

    # ---------------------------------------------------------------- specs

    def _spec_records(self) -> list[SpecRecord]:
        seen: dict[tuple[str, SpecKind | None], list[str]] = {}
        where: dict[tuple[str, SpecKind | None], str] = {}
        m = self.card.manifest
        for op in m.operations:
            res = m.resource(op.resource)
            if res is None:
                continue
            url = spec_url_for(res, op)
            key = (url, kind_for_protocol(res.interaction_protocol))
            if key in self.used_specs:
                ids = seen.setdefault(key, [])
                if res.id not in ids:
                    ids.append(res.id)
                aos = op.api_operation_spec
                where.setdefault(
                    key,
                    aos.loc.of("spec_url")
                    if aos is not None and aos.spec_url
                    else res.spec.loc.of("spec_url")
                    if res.spec is not None
                    else res.loc.pointer,
                )
        records: list[SpecRecord] = []
        for key, resources in seen.items():
            loaded = self.engine._loaded[key]
            f, idx, err = loaded.fetched, loaded.index, loaded.error
            # Strict-validation findings point into the spec: their source is its URL.
            self.diags.extend((d, key[0]) for d in loaded.validation)
            if f is not None:
                # How the spec was obtained (plain http, a corrupt cache entry, a stale copy used
                # offline) concerns every access through it: said once, at the card's spec_url.
                self.diags.extend((replace(d, path=where[key]), None) for d in f.diagnostics)
            records.append(
                SpecRecord(
                    url=key[0],
                    resources=tuple(resources),
                    kind=idx.kind.value if idx else (key[1].value if key[1] else None),
                    sha256=f.sha256 if f else None,
                    origin=f.origin.value if f else None,
                    fetched_at=rfc3339(f.fetched_at) if f else None,
                    final_url=f.final_url if f else None,
                    title=idx.title if idx else "",
                    spec_version=idx.spec_version if idx else "",
                    security_declared=idx.security_declared if idx else None,
                    operations=len(idx.operations) if idx else None,
                    error={"code": err.code, "message": str(err)} if err else None,
                    provenance=dict(f.provenance) if f else {},
                )
            )
        return records

    # ---------------------------------------------------------------- accesses

    def _access(self, i: int, a: ResourceAccess) -> _Outcome | _Pending:
        m = self.card.manifest
        op = m.operation(a.operation)
        res = m.resource(op.resource) if op is not None else None
        base: dict[str, Any] = {
            "id": a.id,
            "operation": a.operation,
            "resource": op.resource if op is not None else "",
            "display_name": res.display_name if res is not None else "",
            "owner": _enum_name(res.owner) if res is not None else "RESOURCE_OWNER_UNSPECIFIED",
            "identity": _enum_name(a.identity_used),
            "necessity": _enum_name(a.necessity),
            "confirmation_required": a.confirmation_required,
            "justification": a.access_justification,
        }
        key = f"{i}:{a.id}"
        if op is None or res is None:
            what = f"operation {a.operation!r}" if op is None else f"resource {op.resource!r}"
            return self._unresolved(a, key, base, "invalid-reference", f"the manifest defines no {what}")
        url = spec_url_for(res, op)
        base["spec_url"] = url or None
        if not url:
            return self._unresolved(a, key, base, "missing-spec-url", f"resource {res.id!r} has no spec_url")
        url_problems = [d for d in check_spec_url(url, "") if d.severity is Severity.ERROR]
        if url_problems:
            return self._unresolved(a, key, base, "invalid-spec-url", url_problems[0].message)
        kind = kind_for_protocol(res.interaction_protocol)
        loaded = self.engine.load(url, kind)
        self.used_specs.add((url, kind))
        if loaded.index is None:
            err = loaded.error or SpecError("no index was built", url=url)
            why = unresolved_for_error(err, res, op)
            self.diags.extend((d, None) for d in why.diagnostics)
            return self._unresolved(a, key, base, why.reason, f"{why.message} ({err.code})")
        index = loaded.index
        found = resolve(res, op, index, suggest=self.suggestions_left > 0)
        if isinstance(found, Unresolved):
            self.suggestions_left -= 1
            self.diags.extend((d, None) for d in found.diagnostics)
            return self._unresolved(a, key, base, found.reason, found.message, found.suggestions)
        self.diags.extend((d, None) for d in found.diagnostics)
        pending = _Pending(a, key, base, res, op, found)
        if found.entry.requirements is None and not index.security_declared:
            self._from_catalog(pending)
        return pending

    def _from_catalog(self, p: _Pending) -> None:
        """Where the spec declares no security, the provider's catalog may say (never a parent path)."""
        cat = self.engine.catalog_for(p.resource, p.found.index)
        if cat is None:
            return
        entry = p.found.entry
        hit = cat.lookup(entry.method, entry.path) if entry.method and entry.path else None
        if hit is None:
            self.diags.append(
                (
                    CATALOG_NO_ENTRY(
                        p.access.loc.pointer,
                        f"access {p.access.id!r}: {cat.label} lists no permission for {entry.method} {entry.path}; "
                        "its permissions stay undetermined",
                        data={"catalog": cat.label},
                    ),
                    None,
                )
            )
            return
        hit = providers.catalog_requirements(cat, hit, accounts=self.policy.graph_accounts)
        p.catalog, p.catalog_entry = cat, hit
        p.found = replace(
            p.found,
            index=self.engine.enriched(p.found.index, cat),
            entry=replace(entry, requirements=hit.requirements, security_source=cat.label),
        )

    def _unresolved(
        self,
        a: ResourceAccess,
        key: str,
        base: dict[str, Any],
        reason: str,
        message: str,
        suggestions: Sequence[str] = (),
    ) -> _Outcome:
        hint = "did you mean: " + "; ".join(suggestions) if suggestions else None
        self.diags.append(
            (
                ACCESS_UNRESOLVED(
                    a.loc.pointer,
                    f"access {a.id!r} is unresolved ({reason}): {message}",
                    hint=hint,
                    data={"reason": reason, "suggestions": list(suggestions)},
                ),
                None,
            )
        )
        record = AccessRecord(
            **base,
            status="unresolved",
            complete=False,
            reason=reason,
            reason_message=message,
            suggestions=tuple(suggestions),
        )
        return _Outcome(a, key, record)

    def _resolved(self, p: _Pending) -> _Outcome:
        a, key, base, op, found = p.access, p.key, p.base, p.operation, p.found
        index, entry = found.index, found.entry
        grants = self.engine.grants(index)
        space = self.space
        target = _target_dict(found)
        requirements = _requirements_json(index, entry.requirements)
        effects: list[dict[str, Any]] = []
        pin = self._pin(a, op)
        candidates: list[Alternative]
        all_alts: list[dict[str, Any]] = []
        reason: tuple[str, str] | None = None
        method = "least-privilege"
        source = p.catalog.label if p.catalog is not None else "spec"
        if pin is not None:
            candidates = [self._pinned_alternative(a, grants, entry.requirements, pin, effects)]
            method = "pinned"
            if entry.requirements is None:
                source = "policy"
        elif entry.requirements is None:
            candidates = []
            reason = (
                "security-undeclared",
                f"{index.url} does not declare the security of {entry.key!r}; "
                "its permissions cannot be derived (pin them with a policy if you know them)",
            )
        elif entry.requirements == ():
            candidates = [Alternative(frozenset(), ())]
            method = "none-required"
        else:
            candidates, all_alts, reason = self._filter(a, grants, grants.alternatives(entry), effects, p)
            if candidates and any(not alt.atoms for alt in candidates):
                method = "anonymous-allowed"
        record_kw: dict[str, Any] = {
            "status": "resolved",
            "target": target,
            "security_declared": index.security_declared,
            "requirements": requirements if entry.requirements is not None or pin is not None else None,
            "alternatives": all_alts or None,
            "policy": effects,
            "requirements_source": source if entry.requirements is not None or pin is not None else None,
        }
        if pin is not None and entry.requirements is None:
            record_kw["requirements"] = [[_term_json(index, t) for t in candidates[0].terms]]
        if index.kind is SpecKind.A2A:
            # Whatever the access itself needs, a reviewer must see what delegating to the agent exposes.
            record_kw["footprint"] = self._footprint(a, index)
        api = _api_of(space, entry)
        choice = choose_least_privilege(space, candidates, api=api) if candidates else None
        if choice is not None and p.catalog_entry is not None and pin is None:
            choice, method = self._provider_least(p, space, candidates, choice, api, method, effects)
        if choice is None:
            code, message = reason or ("no-compatible-alternative", "no usable alternative")
            self.diags.append(
                (
                    ACCESS_UNDETERMINED(a.loc.pointer, f"access {a.id!r}: {message}", data={"reason": code}),
                    None,
                )
            )
            record = AccessRecord(**base, **record_kw, complete=False, reason=code, reason_message=message)
            return _Outcome(a, key, record, grants, ())
        alt = choice.alternative
        if choice.rivals:
            names = [_alt_label(alt)] + [_alt_label(r) for r, _ in choice.rivals]
            self.diags.append(
                (
                    AMBIGUOUS(
                        a.loc.pointer,
                        f"access {a.id!r}: the narrowest alternatives grant equal or incomparable sets of "
                        "operations across their authorization servers: "
                        + ", ".join(names)
                        + f"; picked {names[0]} (smallest grant set, then scopes of the access's own API, "
                        "then fewest scopes, then name)",
                        data={"candidates": names},
                    ),
                    None,
                )
            )
        local = grants.granted(alt.atoms)
        examples = [o.key for o in grants.operations_in(local, limit=20)]
        universes = sorted({u.name for u in space.universes if _touches(u, alt)})
        record = AccessRecord(
            **base,
            **record_kw,
            complete=True,
            scopes=alt.scopes,
            credentials=_credentials(alt.atoms),
            scope_descriptions=_descriptions(index, alt),
            blast_radius={
                "granted_operations": local.bit_count(),
                "spec_operations": grants.n_ops,
                "protected_operations": grants.protected_count,
                "granted": examples,
                "universe_operations": choice.granted.bit_count(),
                "universes": universes,
                "outside_spec": space.outside(choice.granted, grants),
            },
            choice={
                "method": method,
                "ambiguous": bool(choice.rivals),
                "candidates": [_alt_label(r) for r, _ in choice.rivals],
                "rivals": [_rival(r, m, choice.granted) for r, m in choice.rivals],
            },
            scope_servers={atom.scope: atom.namespace for atom in sorted(alt.atoms) if atom.is_scope},
            scope_names=_scope_names(p, alt),
            admin_consent=_admin_consent(p, alt),
        )
        return _Outcome(a, key, record, grants, tuple(candidates), alt)

    def _provider_least(
        self,
        p: _Pending,
        space: GrantSpace,
        candidates: Sequence[Alternative],
        choice: Choice,
        api: str | None,
        method: str,
        effects: list[dict[str, Any]],
    ) -> tuple[Choice, str]:
        """Where the provider marks permissions least privileged for this endpoint and scheme, choose
        among those by grant set; say so when the unrestricted lattice would have chosen otherwise."""
        entry = p.catalog_entry
        assert entry is not None
        marked = [
            alt
            for alt in candidates
            if alt.terms and all(t.scopes and set(t.scopes) <= set(entry.least.get(t.scheme, ())) for t in alt.terms)
        ]
        if not marked:
            return choice, method
        best = choose_least_privilege(space, marked, api=api)
        assert best is not None
        effects.append({"effect": "provider-least", "scopes": sorted({s for m in marked for s in m.scopes})})
        if best.alternative.atoms != choice.alternative.atoms:
            self.diags.append(
                (
                    CATALOG_LEAST_DIFFERS(
                        p.access.loc.pointer,
                        f"access {p.access.id!r}: the provider marks {', '.join(_alt_label(m) for m in marked)} least "
                        f"privileged for {entry.method} {entry.path}; the narrowest by grant set is "
                        f"{_alt_label(choice.alternative)} ({choice.granted.bit_count()} operations, against "
                        f"{best.granted.bit_count()}); the provider's mark is used",
                        data={"marked": [m.scopes for m in marked], "lattice": choice.alternative.scopes},
                    ),
                    None,
                )
            )
        return best, "provider-least"

    def _footprint(self, a: ResourceAccess, index: SpecIndex) -> dict[str, Any] | None:
        """What delegating to a remote agent exposes: its own manifest, derived in turn."""
        extra = index.extra
        doc = extra.get("card")
        if not extra.get("has_manifest") or not isinstance(doc, Mapping):
            return None
        url = str(extra.get("card_url") or index.url)
        if url in self.path or f"sha256:{index.sha256}" in self.path:
            chain = [p for p in self.path if not p.startswith("sha256:")] + [url]
            self.diags.append(
                (A2A_CYCLE(a.loc.pointer, f"access {a.id!r}: agents delegate in a cycle: {' -> '.join(chain)}"), None)
            )
            return {"card_url": url, "cycle": chain}
        depth = self.depth + 1
        if depth > self.engine.settings.max_depth:
            self.diags.append(
                (
                    FOOTPRINT_TRUNCATED(
                        a.loc.pointer,
                        f"access {a.id!r}: {url} carries its own manifest, deeper than --max-depth "
                        f"{self.engine.settings.max_depth}; not derived",
                    ),
                    None,
                )
            )
            return {"card_url": url, "depth": depth, "truncated": True}
        seen = self.footprints.get((url, index.sha256))
        if seen is not None:
            # Derived already for an earlier access of this card: the same agent at the same depth on
            # the same path gives the same report. Embedding it again for every access multiplied
            # the work and the report by (accesses per card) ** depth.
            first, nested = seen
            self._check_footprint(a, url, nested)
            return {
                "card_url": url,
                "name": nested.card_name,
                "depth": depth,
                "complete": nested.complete and nested.card_valid,
                "same_as": first,
            }
        try:
            nested_card = load_card(doc, name=url)
        except RamscopeError as exc:
            self._check_footprint(a, url, None, f"could not be read: {exc}")
            return {"card_url": url, "depth": depth, "complete": False, "error": str(exc)}
        nested = _CardRun(self.engine, nested_card, depth=depth, path=self.path).run()
        self.footprints[(url, index.sha256)] = (a.id, nested)
        self._check_footprint(a, url, nested)
        body = nested.to_dict()
        body.pop("generator", None)
        return {
            "card_url": url,
            "name": nested.card_name,
            "depth": depth,
            "complete": nested.complete and nested.card_valid,
            "report": body,
        }

    def _check_footprint(
        self, a: ResourceAccess, url: str, nested: Report | None, why: str = "could not be derived completely"
    ) -> None:
        """A footprint that is not whole is a warning on the access: what delegating exposes is unknown."""
        if nested is None or not nested.complete or not nested.card_valid:
            self.diags.append(
                (FOOTPRINT_INCOMPLETE(a.loc.pointer, f"access {a.id!r}: the manifest of {url} {why}"), None)
            )

    def _pin(self, a: ResourceAccess, op: Operation) -> Pin | None:
        pin = self.policy.pin_for(a.id, op.id)
        if pin is not None:
            self.used_pins.add(self.policy.pins.index(pin))
        return pin

    def _pinned_alternative(
        self,
        a: ResourceAccess,
        grants: SpecGrants,
        requirements: Any,
        pin: Pin,
        effects: list[dict[str, Any]],
    ) -> Alternative:
        wanted = set(pin.scopes)
        for alt in grants.alternatives_of(requirements) if requirements else []:
            if set(alt.scopes) == wanted and (wanted or not alt.atoms):
                effects.append({"effect": "pinned", "scopes": sorted(wanted), "reason": pin.reason or None})
                return alt
        if not wanted:
            # The reviewer asserts that no authorization is needed.
            if requirements == ():
                effects.append({"effect": "pinned", "scopes": [], "reason": pin.reason or None})
            else:
                self.diags.append(
                    (
                        PIN_NOT_ALTERNATIVE(
                            a.loc.pointer,
                            f"access {a.id!r}: the policy asserts that no authorization is needed, which the spec "
                            "does not declare; the assertion is used as the policy says",
                        ),
                        None,
                    )
                )
                effects.append({"effect": "pinned", "scopes": [], "declared": False, "reason": pin.reason or None})
            return Alternative(frozenset(), ())
        scheme = pin.scheme or next(
            (s.name for s in grants.index.schemes if s.type in (SchemeType.OAUTH2, SchemeType.OPENID_CONNECT)),
            "pinned",
        )
        terms = (SchemeRequirement.of(scheme, pin.scopes),)
        self.diags.append(
            (
                PIN_NOT_ALTERNATIVE(
                    a.loc.pointer,
                    f"access {a.id!r}: pinned scopes {sorted(wanted)} are not one of the operation's declared "
                    "alternatives; they are used as the policy says",
                ),
                None,
            )
        )
        effects.append({"effect": "pinned", "scopes": sorted(wanted), "declared": False, "reason": pin.reason or None})
        return Alternative(grants.atoms_of(terms), terms)

    def _filter(
        self,
        a: ResourceAccess,
        grants: SpecGrants,
        alternatives: list[Alternative],
        effects: list[dict[str, Any]],
        pending: _Pending | None = None,
    ) -> tuple[list[Alternative], list[dict[str, Any]], tuple[str, str] | None]:
        """Identity and policy filtering; every alternative is listed with why it was kept or not."""
        identity = a.identity_used
        listed: list[dict[str, Any]] = []
        usable: list[Alternative] = []
        incompatible = excluded = 0
        whys: list[str] = []
        for alt in alternatives:
            entry: dict[str, Any] = {
                "scopes": alt.scopes,
                "credentials": _credentials(alt.atoms),
                "granted_operations": grants.granted(alt.atoms).bit_count(),
                "universe_operations": self.space.granted(alt.atoms).bit_count(),
            }
            fit = fits(alt.terms, grants.index.scheme_map, identity)
            ok = fit.ok
            entry["compatible"] = None if identity is IdentityType.IDENTITY_TYPE_UNSPECIFIED else ok
            if not ok:
                entry["why_not"] = fit.why
                whys.append(fit.why)
            hit = next((g for s in alt.scopes if (g := self.policy.excluded_by(s))), None)
            entry["excluded_by"] = hit
            listed.append(entry)
            if not ok:
                incompatible += 1
                continue
            if hit is not None:
                excluded += 1
                effects.append({"effect": "excluded", "scopes": alt.scopes, "rule": hit})
                continue
            usable.append(alt)
        if identity is IdentityType.IDENTITY_TYPE_UNSPECIFIED:
            return [], listed, ("identity-unspecified", "the access does not say whose identity it uses")
        if not usable:
            if excluded and not incompatible:
                return (
                    [],
                    listed,
                    (
                        "all-alternatives-excluded",
                        "every alternative of the operation is excluded by the policy",
                    ),
                )
            kinds = sorted({t.scheme for alt in alternatives for t in alt.terms})
            notes = list(pending.catalog_entry.notes) if pending and pending.catalog_entry else []
            return (
                [],
                listed,
                (
                    "no-compatible-alternative",
                    f"no alternative fits identity {identity.name} (schemes: {', '.join(kinds)}"
                    + (f"; {'; '.join(sorted(set(whys)))}" if whys else "")
                    + ")"
                    + (f"; {excluded} more excluded by policy" if excluded else "")
                    + "".join(f"; {n}" for n in notes),
                ),
            )
        preferred = [alt for alt in usable if self.policy.preferred(alt.scopes)]
        if preferred and len(preferred) < len(usable):
            effects.append({"effect": "preferred", "scopes": sorted({s for p in preferred for s in p.scopes})})
            usable = preferred
        return usable, listed, None

    # ---------------------------------------------------------------- tiers

    def _tiers(self, outcomes: Sequence[_Outcome]) -> dict[str, TierRecord]:
        space = self.space
        m = self.card.manifest
        bases: dict[str, frozenset[Atom]] = {name: frozenset() for name in IDENTITIES}
        prev_scopes: dict[str, set[str]] = {name: set() for name in IDENTITIES}
        out: dict[str, TierRecord] = {}
        for level, tier in enumerate(TIERS, start=1):
            members = [o for o in outcomes if _tier_level(o.access.necessity) <= level]
            per_identity: dict[str, IdentityTier] = {}
            for ident in IDENTITIES:
                mine = [o for o in members if o.access.identity_used.name == ident]
                problems = [
                    TierProblem(o.key, o.grants, o.candidates, o.own) for o in mine if o.record.complete and o.grants
                ]
                incomplete = [o.access.id for o in members if not o.record.complete and _identity_bucket(o) == ident]
                below = bases[ident]
                sol = solve_tier(problems, below, space)
                bases[ident] = sol.atoms
                scopes = sorted({a.scope for a in sol.atoms if a.is_scope})
                per_identity[ident] = IdentityTier(
                    scopes=scopes,
                    credentials=_credentials(sol.atoms),
                    grants=[{"namespace": a.namespace, "scope": a.scope} for a in sorted(sol.atoms) if a.is_scope],
                    accesses=[o.access.id for o in mine],
                    incomplete_accesses=incomplete,
                    added_scopes=sorted(set(scopes) - prev_scopes[ident]),
                    blast_radius=sol.blast_radius,
                    method=sol.method,
                    combinations=sol.combinations,
                    choices=[self._tier_choice(o, sol.chosen.get(o.key), sol.atoms, below) for o in mine],
                )
                prev_scopes[ident] = set(scopes)
            acks = sorted(
                {
                    res.id
                    for o in members
                    if (op := m.operation(o.access.operation)) is not None
                    and (res := m.resource(op.resource)) is not None
                    and res.owner is ResourceOwner.THIRD_PARTY
                }
            )
            confirmations = [o.access.id for o in members if o.access.confirmation_required]
            out[tier] = TierRecord(per_identity, acks, confirmations)
        return out

    def _tier_choice(
        self, o: _Outcome, chosen: Alternative | None, atoms: frozenset[Atom], below: frozenset[Atom]
    ) -> dict[str, Any]:
        """How the tier's set satisfies one access, and why that differs from the access's own choice."""
        out: dict[str, Any] = {"access": o.access.id}
        if chosen is None or o.own is None:
            out.update(scopes=None, credentials=None, same_as_access=None, why="the access is incomplete")
            return out
        same = chosen.atoms == o.own.atoms
        out.update(scopes=chosen.scopes, credentials=_credentials(chosen.atoms), same_as_access=same, why=None)
        if same:
            return out
        space = self.space
        extra = space.granted(atoms | o.own.atoms).bit_count() - space.granted(atoms).bit_count()
        if chosen.atoms <= below:
            why = f"the tier below already grants {_alt_label(chosen)}"
        else:
            why = f"{_alt_label(chosen)} is in the tier's set for its other accesses"
        out["why"] = (
            f"{why}; the access's own choice {_alt_label(o.own)} would open {extra} more operation(s)"
            if extra
            else f"{why}; the access's own choice {_alt_label(o.own)} opens nothing more but adds a grant"
        )
        return out


def _api_of(space: GrantSpace, entry: OperationEntry) -> str | None:
    """The access's own API in a universe (Google: the Discovery API of its method id)."""
    if not entry.operation_id:
        return None
    for u in space.universes:
        api = u.api_of(entry.operation_id)
        if api is not None:
            return api
    return None


def _touches(u: Universe, alt: Alternative) -> bool:
    return any(u.by_scope.get((atom.namespace, atom.scope)) for atom in alt.atoms if atom.is_scope)


def _rival(alt: Alternative, mask: int, best: int) -> dict[str, Any]:
    return {
        "scopes": alt.scopes,
        "credentials": _credentials(alt.atoms),
        "universe_operations": mask.bit_count(),
        "relation": "equal" if mask == best else "incomparable",
    }


def _scope_names(p: _Pending, alt: Alternative) -> dict[str, str]:
    if p.catalog is None:
        return {}
    out: dict[str, str] = {}
    for t in alt.terms:
        for scope in t.scopes:
            perm = p.catalog.permission(t.scheme, scope)
            if perm is not None and perm.short != scope:
                out[scope] = perm.short
    return out


def _admin_consent(p: _Pending, alt: Alternative) -> list[str]:
    if p.catalog is None:
        return []
    return sorted(
        scope
        for t in alt.terms
        for scope in t.scopes
        if (perm := p.catalog.permission(t.scheme, scope)) is not None and perm.admin_consent
    )


def _identity_bucket(o: _Outcome) -> str:
    # An access whose identity is unspecified cannot be placed; it makes both identities incomplete.
    name = o.access.identity_used.name
    return name if name in IDENTITIES else "END_USER"


def _tier_level(n: AccessNecessity) -> int:
    # UNSPECIFIED necessity is a validation error; counting it as REQUIRED never under-reports.
    return int(n) if n else 1


def _enum_name(v: Any) -> str:
    return str(v.name)


def _alt_label(alt: Alternative) -> str:
    parts = alt.scopes or sorted({f"{a.scheme or a.namespace} ({a.type.value})" for a in alt.atoms})
    return " + ".join(parts) if parts else "(anonymous)"


def _credentials(atoms: Iterable[Atom]) -> list[dict[str, Any]]:
    return [
        {"scheme": a.scheme, "type": a.type.value, "namespace": a.namespace} for a in sorted(atoms) if not a.is_scope
    ]


def _descriptions(index: SpecIndex, alt: Alternative) -> dict[str, str]:
    out: dict[str, str] = {}
    for t in alt.terms:
        scheme = index.scheme_map.get(t.scheme)
        if scheme is None:
            continue
        for s in t.scopes:
            d = scheme.scope_description(s)
            if d:
                out[s] = d
    return out


def _term_json(index: SpecIndex, t: SchemeRequirement) -> dict[str, Any]:
    scheme = index.scheme_map.get(t.scheme)
    return {
        "scheme": t.scheme,
        "type": scheme.type.value if scheme is not None else SchemeType.UNKNOWN.value,
        "scopes": list(t.scopes),
    }


def _requirements_json(index: SpecIndex, reqs: Any) -> list[list[dict[str, Any]]] | None:
    if reqs is None:
        return None
    return [[_term_json(index, t) for t in alt] for alt in reqs]


def _target_dict(found: Target) -> dict[str, Any]:
    e = found.entry
    kind = found.index.kind
    out: dict[str, Any] = {
        "kind": kind.value,
        "key": e.key,
        "operation_id": e.operation_id or None,
        "method": e.method or None,
        "path": (e.full_path or e.path) or None,
        "tool": e.operation_id if kind is SpecKind.MCP else None,
        "skill": e.operation_id if kind is SpecKind.A2A and e.operation_id else None,
        "matched_by": found.matched_by,
        "title": e.title or None,
        "security_source": e.security_source or None,
    }
    if e.extra:
        out["hints"] = dict(e.extra)
    return out
