"""Engines for concurrent requests: one :class:`~ramscope.derive.Engine` per worker thread.

An :class:`~ramscope.derive.Engine` is synchronous and keeps per-card state while it derives
(the specs the current card touched, the fetches planned for it), so two threads must never
derive with the same one. The :class:`~ramscope.store.SpecStore` is thread-safe (its memo lets
concurrent callers share one fetch of a URL): every engine of a *generation* shares one store,
and a request borrows an idle engine, derives in a worker thread, and gives it back. A request
whose spec is slow holds one engine and one thread; the others go on with theirs.

A generation is also what a run is to the CLI: each spec URL is fetched once and its index kept.
A resident process cannot keep that forever, so a generation is retired (and a fresh one started
for the next requests; the old one closes when its last request is done) when:

* it is older than ``refresh_after`` seconds: cached specs past their freshness are fetched again;
* its specs number more than ``max_specs``: strangers' cards naming ever new URLs cannot grow the
  process without bound;
* a fetch failed in it and it is older than ``retry_failed_after`` seconds: the store keeps a
  failure for its run, and a resident process must not repeat a passing outage for hours.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson

from ..card import Card
from ..config import Settings
from ..derive import Engine
from ..derive.policy import Policy
from ..store import SpecStore

__all__ = ["Busy", "CancellableStore", "Cancelled", "DeadlineExceeded", "EnginePool", "PolicyCards", "Usage"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PolicyCards:
    """The cards the operator's policy is for, by digest.

    A policy's pins name accesses and operations by the ids a card gives them, and a card posted by
    a stranger chooses its own ids: matched by id alone, the operator's "no authorization needed"
    for their own public-holidays call served any card that named an operation the same way. So the
    policy applies only to cards the operator named when starting the server, by content: the
    sha256 of the card's bytes (``card.sha256`` of a report), or of its canonical JSON (keys sorted,
    no whitespace), so the same card posted re-encoded (an MCP argument) is still known.
    """

    digests: frozenset[str] = frozenset()

    @staticmethod
    def canonical_digest(document: Mapping[str, Any]) -> str:
        return hashlib.sha256(orjson.dumps(dict(document), option=orjson.OPT_SORT_KEYS)).hexdigest()

    @classmethod
    def of_cards(cls, cards: Iterable[Card], digests: Iterable[str] = ()) -> PolicyCards:
        found = {d.lower() for d in digests}
        for card in cards:
            found |= {card.sha256, cls.canonical_digest(card.document)}
        return cls(frozenset(found))

    def names(self, card: Card) -> bool:
        if not self.digests:
            return False
        if card.sha256 in self.digests:
            return True
        try:
            return self.canonical_digest(card.document) in self.digests
        except TypeError:  # not JSON-encodable (an integer past 64 bits): not one the operator named
            return False


class Cancelled(Exception):
    """The request's deadline passed: its work stops at the next fetch instead of going on unseen."""


class CancellableStore:
    """The generation's shared store as one request's work sees it: each ``get`` and ``prefetch``
    first checks the request's ``cancel`` event, so a request answered 504 fetches nothing more.

    (Issue 30 item 9: after the 504, the worker went on fetching every spec of the card.) A
    ``prefetch`` is done ``jobs`` URLs at a time, checking between: what is in flight when the
    deadline passes finishes under its own timeouts; nothing new starts.
    """

    def __init__(self, store: SpecStore, cancel: threading.Event) -> None:
        self._store = store
        self._cancel = cancel

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    @property
    def shared(self) -> SpecStore:
        """The generation's store this request's work goes through."""
        return self._store

    def check(self) -> None:
        if self._cancel.is_set():
            raise Cancelled

    def get(self, url: str, **kw: Any) -> Any:
        self.check()
        return self._store.get(url, **kw)

    def prefetch(self, urls: Iterable[tuple[str, Any]], **kw: Any) -> dict[str, Any]:
        todo = list(dict.fromkeys(urls))
        step = max(1, self._store.settings.jobs)
        out: dict[str, Any] = {}
        for at in range(0, len(todo), step):
            self.check()
            out.update(self._store.prefetch(todo[at : at + step], **kw))
        return out


class DeadlineExceeded(Exception):
    """The request's deadline passed before its derivation finished (the thread finishes on its own)."""


class Busy(Exception):
    """Every worker stayed busy until the request's deadline."""


@dataclass(slots=True)
class Usage:
    """What a request's derivations touched, reported back to the pool: it decides retirement."""

    spec_urls: set[str] = field(default_factory=set)
    failed: bool = False
    #: The engine to derive ``card`` on (set by the pool): the one with the operator's policy for a
    #: card the operator named, else the plain one (see :class:`PolicyCards`).
    engine_for: Callable[[Card], Engine] | None = None
    #: Set when the request's deadline passed: its work stops at the next fetch (:class:`Cancelled`).
    cancel: threading.Event = field(default_factory=threading.Event)
    #: Whether a card of this request was derived with the operator's policy (``None``: no card asked).
    policy_applied: bool | None = None


class _Generation:
    __slots__ = ("active", "born", "engines", "failed", "idle", "retired", "spec_urls", "store")

    def __init__(self, settings: Settings, born: float) -> None:
        self.store = SpecStore(settings)
        #: Idle engines, by whether they carry the operator's policy.
        self.idle: dict[bool, list[Engine]] = {False: [], True: []}
        self.engines = 0
        self.active = 0
        self.born = born
        self.spec_urls: set[str] = set()
        self.failed = False
        self.retired = False

    def close(self) -> None:
        for engines in self.idle.values():
            for engine in engines:
                engine.close()  # does not close the shared store (the engine does not own it)
            engines.clear()
        self.store.close()


class EnginePool:
    """At most ``workers`` derivations at a time, each on its own engine, in its own thread."""

    def __init__(
        self,
        settings: Settings,
        policy: Policy,
        *,
        policy_cards: PolicyCards | None = None,
        workers: int = 4,
        refresh_after: float = 3600.0,
        max_specs: int = 512,
        retry_failed_after: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.settings = settings
        self.policy = policy
        self.policy_cards = policy_cards or PolicyCards()
        self.workers = workers
        self.refresh_after = refresh_after
        self.max_specs = max_specs
        self.retry_failed_after = retry_failed_after
        self._clock = clock
        self._lock = threading.Lock()
        self._gen = _Generation(settings, clock())
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ramscope-derive")
        #: Created on first use, in the event loop that serves the requests.
        self._slots: asyncio.Semaphore | None = None
        self._slots_loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        #: Generations retired so far (the health endpoint says it).
        self.retired = 0
        #: Works running now (in any thread), and a condition to wait for none (tests, shutdown).
        self._running = 0
        self._quiet = threading.Condition(self._lock)

    # ------------------------------------------------------------------ borrowing

    def _take(self) -> tuple[_Generation, Engine]:
        with self._lock:
            if self._closed:
                raise RuntimeError("the engine pool is closed")
            gen = self._gen
            if self._stale(gen):
                self._retire(gen)
                gen = self._gen = _Generation(self.settings, self._clock())
        return gen, self._borrow(gen, policied=False)

    def _borrow(self, gen: _Generation, *, policied: bool) -> Engine:
        with self._lock:
            gen.active += 1
            idle = gen.idle[policied]
            if idle:
                return idle.pop()
            gen.engines += 1
        # Built outside the lock: an engine is cheap, but not free, and others may be waiting.
        return Engine(self.settings, policy=self.policy if policied else Policy(), store=gen.store)

    def _give(self, gen: _Generation, engine: Engine, usage: Usage, *, policied: bool = False) -> None:
        close_gen = False
        with self._lock:
            gen.active -= 1
            gen.spec_urls |= usage.spec_urls
            gen.failed = gen.failed or usage.failed
            if gen.retired:
                engine.close()
                close_gen = gen.active == 0
            else:
                gen.idle[policied].append(engine)
        if close_gen:
            gen.close()

    def _stale(self, gen: _Generation) -> bool:
        age = self._clock() - gen.born
        return (
            age >= self.refresh_after
            or len(gen.spec_urls) > self.max_specs
            or (gen.failed and age >= self.retry_failed_after)
        )

    def _retire(self, gen: _Generation) -> None:
        gen.retired = True
        self.retired += 1
        if gen.active == 0:
            gen.close()

    # ------------------------------------------------------------------ running

    def call(self, work: Callable[[Engine, Usage], T], *, cancel: threading.Event | None = None) -> T:
        """``work(engine, usage)`` in the calling thread, on a borrowed engine (tests, the bench).
        Once ``cancel`` is set, the work's next fetch raises :class:`Cancelled`."""
        with self._lock:
            self._running += 1
        try:
            gen, engine = self._take()
        except BaseException:
            self._done()
            raise
        usage = Usage(cancel=cancel or threading.Event())
        store = CancellableStore(gen.store, usage.cancel)
        engine.store = store
        policied: list[Engine] = []

        def engine_for(card: Card) -> Engine:
            if not self.policy_cards.names(card):
                usage.policy_applied = bool(usage.policy_applied)
                return engine
            usage.policy_applied = True
            if not policied:
                extra = self._borrow(gen, policied=True)
                extra.store = store
                policied.append(extra)
            return policied[0]

        usage.engine_for = engine_for
        stopped = False
        try:
            return work(engine, usage)
        except Cancelled:
            stopped = True
            raise
        finally:
            for one, is_policied in [(engine, False), *((p, True) for p in policied)]:
                one.store = gen.store
                if stopped:
                    # Stopped mid-derivation: what it noted as prefetched was not all fetched.
                    with self._lock:
                        gen.engines -= 1
                    one.close()
                    self._give_back_slot(gen, usage)
                else:
                    self._give(gen, one, usage if not is_policied else Usage(), policied=is_policied)
            self._done()

    def _give_back_slot(self, gen: _Generation, usage: Usage) -> None:
        close_gen = False
        with self._lock:
            gen.active -= 1
            gen.spec_urls |= usage.spec_urls
            close_gen = gen.retired and gen.active == 0
        if close_gen:
            gen.close()

    def _done(self) -> None:
        with self._lock:
            self._running -= 1
            if self._running == 0:
                self._quiet.notify_all()

    def wait_quiet(self, timeout: float) -> bool:
        """Wait until no work runs, in any thread (a request past its deadline included)."""
        with self._quiet:
            return self._quiet.wait_for(lambda: self._running == 0, timeout)

    async def run(self, work: Callable[[Engine, Usage], T], *, deadline: float) -> T:
        """``work(engine, usage)`` in a worker thread, within ``deadline`` seconds from now.

        Waiting for a free worker counts against the deadline (:class:`Busy` when none came);
        past it, :class:`DeadlineExceeded` is raised here while the thread finishes on its own and
        then gives its worker back (a thread cannot be stopped; each fetch has its own timeouts).
        """
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots_loop is not loop:
            # An asyncio semaphore belongs to one event loop (a library user may run several in turn).
            self._slots, self._slots_loop = asyncio.Semaphore(self.workers), loop
        slots = self._slots
        until = loop.time() + deadline
        try:
            await asyncio.wait_for(slots.acquire(), timeout=max(until - loop.time(), 0.0))
        except TimeoutError:
            raise Busy from None

        cancel = threading.Event()

        def job() -> T:
            try:
                return self.call(work, cancel=cancel)
            finally:
                # The loop may be gone by then (a request past its deadline, the server shut down).
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(slots.release)

        try:
            future = loop.run_in_executor(self._executor, job)
        except BaseException:
            slots.release()
            raise
        # Its exception (Cancelled, after a deadline) is nobody's to see once the answer has gone.
        future.add_done_callback(lambda f: f.cancelled() or f.exception())
        try:
            # shield: a deadline (or a client gone) stops the waiting, not the thread's own release.
            return await asyncio.wait_for(asyncio.shield(future), timeout=max(until - loop.time(), 0.0))
        except TimeoutError:
            cancel.set()  # the work stops at its next fetch (its thread then frees the worker)
            raise DeadlineExceeded from None
        except asyncio.CancelledError:
            cancel.set()  # the client went away, or the server is stopping: nobody waits for it
            raise

    # ------------------------------------------------------------------ lifecycle

    def stats(self) -> dict[str, Any]:
        with self._lock:
            gen = self._gen
            return {
                "workers": self.workers,
                "engines": gen.engines,
                "busy": gen.active,
                "specs": len(gen.spec_urls),
                "generation_age_seconds": round(self._clock() - gen.born, 3),
                "generations_retired": self.retired,
            }

    def close(self) -> None:
        """Stop taking work; close the current generation (waits for running derivations)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._executor.shutdown(wait=True)
        with self._lock:
            gen = self._gen
            gen.retired = True
        gen.close()

    def __enter__(self) -> EnginePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
