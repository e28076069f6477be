"""SpecStore: the one place ramscope touches the network and the disk for specs.

One ``get`` goes::

    memo (each URL once per run, concurrent callers share the fetch)
      └─ a registered fetcher for the kind (MCP, A2A ...), else one guarded GET:
           exchange(GET) ─▶ cache fresh? ─▶ offline? (cache even stale, or cassette, or OfflineMissError)
                         ─▶ cassette replay | guarded network (+ recording) ─▶ redirects re-checked hop by hop
                         ─▶ 304 keeps the cached body; 2xx is cached per Cache-Control / Expires / --cache-ttl

Threat model pieces defended here (the rest is in ``guard``, ``http``,
``cache`` and ``cassette``): every URL, including each redirect target, passes
the guard before a request is built; at most five redirects are followed and
credentials are not carried across origins; a failed or refused fetch is a
:class:`~ramscope.errors.FetchError` naming the URL, never an empty spec; an
empty body is an error too; ``--offline`` never builds a network transport at
all, so no code path can open a socket.
"""

from __future__ import annotations

import hashlib
import itertools
import queue
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

import orjson

from .._version import __version__
from ..config import Settings
from ..diagnostics import Diagnostic, Severity, rule
from ..documents import SpecKind
from ..errors import (
    BlockedURLError,
    FetchError,
    FetchTimeoutError,
    InputError,
    OfflineMissError,
)
from .cache import (
    CACHE_ENTRY_CORRUPT,
    SEPARATE_BODY_BYTES,
    CachedMeta,
    CacheEntry,
    CachePeek,
    CorruptCacheEntryError,
    SpecCache,
    freshness,
)
from .fetchers import FetchContext, Fetcher, FetcherResult, registered_fetchers
from .guard import AddressBlockedError, AddressPolicy, CheckedURL, check_url, judge_host
from .keys import body_digest, canonical_url, document_key, exchange_key
from .model import Exchange, FetchedSpec, Origin, rfc3339

if TYPE_CHECKING:
    import httpx

    from .cassette import Cassette
    from .http import Resolver

# The HTTP stack (httpx's client, httpcore, h2, ssl) and cassettes (PyYAML) are imported when a
# run first needs them: a run answered from the cache does not.

__all__ = [
    "CACHE_ENTRY_DISTRUSTED",
    "INSECURE_FETCH",
    "MAX_REDIRECTS",
    "STALE_SPEC",
    "USER_AGENT",  # noqa: F822 - module __getattr__
    "Clock",
    "SpecStore",
]

#: Seconds since the epoch; injected in tests to move time without sleeping.
Clock = Callable[[], float]

MAX_REDIRECTS = 5
_ACCEPT = "application/json, application/yaml;q=0.9, text/yaml;q=0.9, */*;q=0.5"
_METHODS = frozenset({"GET", "POST", "DELETE"})
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
# Not worth recording in a cassette's request: set per connection, or derived from the body.
_UNRECORDED_REQUEST = frozenset({"host", "content-length", "connection"})
_REDIRECT_BODY_LIMIT = 64 * 1024
_NAMESPACE = re.compile(r"[a-z0-9][a-z0-9._-]*\Z")
_META_VERSION = 1

INSECURE_FETCH = rule(
    "insecure-fetch",
    Severity.WARNING,
    "A spec was fetched over plain http, or redirected to it: anyone on the path could have changed it.",
    stage="fetch",
)
CACHE_ENTRY_DISTRUSTED = rule(
    "cache-entry-distrusted",
    Severity.WARNING,
    "A cached spec claims a fetch time in the future or a freshness beyond --cache-max-ttl: ramscope did "
    "not write it so; it was not used.",
    stage="fetch",
)
#: Bytes of prefetched spec bodies kept in memory until indexed; the rest wait in the cache (issue 14).
PREFETCH_HOLD_BYTES = 128 * 1024 * 1024
#: Seconds of clock difference tolerated between the processes sharing a cache (and a save's two clock reads).
_CLOCK_SLACK = 60.0
STALE_SPEC = rule(
    "stale-spec",
    Severity.WARNING,
    "Offline, a cached spec past its freshness lifetime was used.",
    stage="fetch",
)

T = TypeVar("T")
_C = TypeVar("_C", bound=CachedMeta)


def _user_agent() -> str:
    import httpx  # noqa: PLC0415

    return f"ramscope/{__version__} (spec fetcher; python-httpx/{httpx.__version__})"


def __getattr__(name: str) -> Any:
    if name == "USER_AGENT":  # computed on first use: it names httpx's version
        return _user_agent()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Slot:
    """One memoised get(): a result or an exception, set once, waited for by every other caller.

    What the memo needs of a ``concurrent.futures.Future``, without importing that package (and
    ``logging`` with it) in a run that starts no thread.
    """

    __slots__ = ("_error", "_set", "_value")

    def __init__(self) -> None:
        self._set = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None

    def set_result(self, value: Any) -> None:
        self._value = value
        self._set.set()

    def set_exception(self, error: BaseException) -> None:
        self._error = error
        self._set.set()

    def done(self) -> bool:
        return self._set.is_set()

    def exception(self) -> BaseException | None:
        self._set.wait()
        return self._error

    def result(self) -> Any:
        self._set.wait()
        if self._error is not None:
            raise self._error
        return self._value


@dataclass(frozen=True, slots=True)
class _URLFacts:
    """What parsing a spec URL established, the same in every run: its canonical form, its host as sent."""

    canonical: str
    host: str


#: Cache keys of remembered URL facts (see SpecStore._url_facts).
_FACTS_PREFIX = "url:"


@dataclass(frozen=True, slots=True)
class _Hop:
    url: httpx.URL
    status: int
    reason: str
    header_items: tuple[tuple[str, str], ...]
    body: bytes
    complete: bool
    origin: Origin
    provenance: dict[str, Any]
    #: SHA-256 (hex) of the body, computed while it was read.
    digest: str


class SpecStore:
    """Obtains specs for one run: guarded network, on-disk cache, cassettes, offline mode.

    ``resolver`` is used by the default network transport; ``transport``
    replaces that transport (a :class:`~ramscope.store.http.GuardedTransport`
    with a spy connector, or ``httpx.MockTransport``); ``clock`` returns epoch
    seconds; ``fetchers`` adds to the registered protocol fetchers; ``policy``
    replaces the address policy derived from ``settings``.

    Thread-safe. Use as a context manager, or call :meth:`close`: that is when a
    recording cassette is written.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        resolver: Resolver | None = None,
        transport: httpx.BaseTransport | None = None,
        clock: Clock | None = None,
        fetchers: Mapping[SpecKind, Fetcher] | None = None,
        policy: AddressPolicy | None = None,
    ) -> None:
        if settings.record and settings.cassette is None:
            raise ValueError("recording needs a cassette file")
        if settings.record and settings.offline:
            raise ValueError("recording and offline mode contradict each other")
        self.settings = settings
        self.policy = policy or AddressPolicy(allow_private=settings.allow_private_network)
        self._resolver = resolver
        self._transport = transport
        self._clock: Clock = clock or time.time
        self._fetchers: dict[SpecKind, Fetcher] = {**registered_fetchers(), **(fetchers or {})}
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None
        self._cache: SpecCache | None = None
        self._memo: dict[tuple[str, str], _Slot] = {}
        self._facts: dict[str, _URLFacts] = {}
        #: Diagnostics of a cache look-up that could not answer, for the get() that then fetches.
        self._carried: dict[str, list[Diagnostic]] = {}
        self._diagnostics: dict[tuple[str, str], Diagnostic] = {}
        self._closed = False
        # Recording wants every exchange of the run in the file, so the cache may not answer.
        self._bypass_cache = settings.refresh or settings.record
        #: Cache keys found untrustworthy (and reported) in this run.
        self._distrusted: frozenset[str] = frozenset()
        self._cassette: Cassette | None = None
        if settings.cassette is not None:
            from .cassette import Cassette  # noqa: PLC0415

            if settings.record:
                self._cassette = Cassette(settings.cassette, meta={"note": "recorded by ramscope --record"})
            else:
                self._cassette = Cassette.load(settings.cassette)

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close connections and the cache; write the cassette when recording. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            client, cache = self._client, self._cache
        if client is not None:
            client.close()
        if cache is not None:
            cache.close()
        if self.settings.record and self._cassette is not None:
            try:
                self._cassette.save()
            except OSError as exc:
                raise InputError(f"cannot write the cassette: {exc}", source=str(self._cassette.path)) from None

    @property
    def replaying(self) -> bool:
        """Whether a cassette is this run's network. Its answers serve this run only: none is stored
        in the cache, where a later run (another cassette, or online) would read it first."""
        return self._cassette is not None and not self.settings.record

    def register_fetcher(self, kind: SpecKind, fetcher: Fetcher) -> None:
        """Use ``fetcher`` for specs of ``kind`` in this store (overrides the registry)."""
        self._fetchers[kind] = fetcher

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """Everything worth reporting about how this run's specs were obtained, without duplicates."""
        with self._lock:
            return tuple(self._diagnostics.values())

    # ------------------------------------------------------------------ specs

    def get(self, url: str, *, kind_hint: SpecKind | None = None) -> FetchedSpec:
        """The spec at ``url``, fetched at most once per run; raises :class:`FetchError` subclasses."""
        fetcher = self._fetchers.get(kind_hint) if kind_hint is not None else None
        memo_key = (self._url_facts(url).canonical, kind_hint.value if fetcher is not None and kind_hint else "GET")
        if fetcher is not None and kind_hint is not None:
            return self._once(memo_key, lambda: self._get_with_fetcher(url, kind_hint, fetcher))
        if kind_hint is SpecKind.MCP:
            raise FetchError(
                "an MCP server's spec is a JSON-RPC conversation, and no MCP fetcher is installed "
                "(a plain GET of the endpoint would not be its spec)",
                url=url,
            )
        return self._once(memo_key, lambda: self._get_document(url, kind_hint))

    def prefetch(
        self,
        urls: Iterable[tuple[str, SpecKind | None]],
        *,
        on_ready: Callable[[str, SpecKind | None], object] | None = None,
    ) -> dict[str, FetchedSpec | FetchError]:
        """Fetch many specs concurrently (``settings.jobs`` threads), each URL once.

        Failures are returned, not raised. Keyed by URL as given; a URL given
        with two kinds keeps the last result (both are fetched, and ``get``
        returns either from the memo). ``on_ready(url, kind)`` is called in the
        calling thread as each spec arrives, while the others are still being
        fetched: the engine indexes it then (issue 17: a small spec's index is
        built while a large one downloads).
        """
        todo = list(dict.fromkeys(urls))
        results: dict[str, FetchedSpec | FetchError] = {}
        # Prefetched specs wait to be indexed, and a card's may add up to GBs (20 specs of 30 MiB):
        # past PREFETCH_HOLD_BYTES, each large body goes to wait in the cache as soon as it is
        # fetched, and is read back when indexed (issue 14).
        held = [0]

        def hold(spec: FetchedSpec) -> None:
            if not spec.body_loaded:
                return
            with self._lock:
                held[0] += spec.size
                if held[0] <= PREFETCH_HOLD_BYTES or spec.size < SEPARATE_BODY_BYTES:
                    return
                held[0] -= spec.size
            spec.release_body()

        def one(item: tuple[str, SpecKind | None]) -> FetchedSpec | FetchError:
            try:
                spec = self.get(item[0], kind_hint=item[1])
            except FetchError as exc:
                return exc
            hold(spec)
            return spec

        with self._progress(len(todo)) as advance:
            # What the cache answers is answered here: a worker thread would open its own
            # SQLite connection to the cache (a few ms each), only to read a few rows.
            rest: list[tuple[str, SpecKind | None]] = []
            cached: list[tuple[tuple[str, SpecKind | None], FetchedSpec]] = []
            for item in todo:
                spec = self._cached_only(*item)
                if spec is None:
                    rest.append(item)
                else:
                    cached.append((item, spec))
            fetching: Iterator[tuple[tuple[str, SpecKind | None], FetchedSpec | FetchError]]
            if self.settings.jobs <= 1 or len(rest) <= 1:
                fetching = ((item, one(item)) for item in rest)  # one at a time, as they are asked for
            else:
                # Daemon worker threads (see _concurrently): an interrupted run exits at once. They
                # start now: what the cache answered is handed over while the rest download.
                fetching = _concurrently(one, rest, min(self.settings.jobs, len(rest)))
            for item, result in itertools.chain(cached, fetching):
                results[item[0]] = result
                advance()
                if on_ready is not None and not isinstance(result, FetchError):
                    on_ready(*item)
        return {item[0]: results[item[0]] for item in todo}

    def _cached_only(self, url: str, kind_hint: SpecKind | None) -> FetchedSpec | None:
        """``get(url)`` if the cache alone answers it (and nothing else is fetching it), else ``None``."""
        fetcher = self._fetchers.get(kind_hint) if kind_hint is not None else None
        if fetcher is not None or kind_hint is SpecKind.MCP:
            return None
        try:
            facts = self._url_facts(url)
        except FetchError:
            return None  # get() raises it again, as the result of this URL
        memo_key = (facts.canonical, "GET")
        with self._lock:
            fut = self._memo.get(memo_key)
        if fut is not None:  # asked for before in this run: its answer, if there is one yet
            answered: FetchedSpec | None = fut.result() if fut.done() and fut.exception() is None else None
            return answered
        diags: list[Diagnostic] = []
        spec = self._cached_document(url, kind_hint, diags)
        with self._lock:
            if spec is None:
                if diags:  # a corrupt entry was discarded: said again by the get() that refetches it
                    self._carried.setdefault(facts.canonical, []).extend(diags)
                return None
            if memo_key in self._memo:
                return None
            done = _Slot()
            done.set_result(spec)
            self._memo[memo_key] = done
        return spec

    # ------------------------------------------------------------------ artefacts

    def get_artifact(self, namespace: str, key: str) -> bytes | None:
        """A derived artefact (e.g. a spec index keyed by content sha256), integrity-checked; None if absent."""
        entry = self._load(_artifact_key(namespace, key), f"artefact {namespace}/{key}", [])
        return entry.body if entry is not None else None

    def put_artifact(self, namespace: str, key: str, data: bytes) -> None:
        self._cache_store().save(_artifact_key(namespace, key), self._artifact_meta(namespace, key), bytes(data))

    def put_artifacts(self, namespace: str, items: Sequence[tuple[str, bytes]]) -> None:
        """Several small artefacts at once (one cache transaction)."""
        entries = [(_artifact_key(namespace, k), self._artifact_meta(namespace, k), bytes(d)) for k, d in items]
        if entries:
            self._cache_store().save_many(entries)

    def _artifact_meta(self, namespace: str, key: str) -> dict[str, Any]:
        return {"v": _META_VERSION, "artifact": namespace, "key": key, "stored_at": self._clock()}

    # ------------------------------------------------------------------ exchanges

    def exchange(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        json_body: object = None,
        cache: bool = True,
        until: Callable[[bytes], bool] | None = None,
    ) -> Exchange:
        """One guarded request (GET, POST with a JSON body, DELETE) with its response.

        Limits (``max_spec_bytes``, the total ``timeout``), the URL guard, the
        cache (GET and POST, keyed by method, URL and body digest; only complete
        2xx answers are stored), the cassette and offline mode all apply. A 4xx
        or 5xx answer is returned, not raised. ``until`` is called with each
        decoded piece of the body as it arrives; when it returns True, reading
        stops and the exchange has ``complete=False`` (an endless SSE stream is
        still cut off by the limits).
        """
        self._check_open()
        method = method.upper()
        if method not in _METHODS:
            raise ValueError(f"method {method} is not supported (GET, POST, DELETE)")
        checked = check_url(url, self.policy)
        content: bytes | None = None
        if json_body is not None:
            try:
                content = orjson.dumps(json_body)
            except TypeError as exc:
                raise ValueError(f"json_body is not JSON-compatible: {exc}") from None
        key = exchange_key(method, checked.url, body_digest(json_body))
        use_cache = cache and method != "DELETE"
        diags: list[Diagnostic] = []
        entry = self._load(key, str(checked.url), diags) if use_cache else None
        if entry is not None and not self._bypass_cache and entry.fresh(self._clock()):
            return self._from_entry(entry, diags, {})
        if self.settings.offline:
            if entry is not None:
                if entry.fresh(self._clock()):
                    return self._from_entry(entry, diags, {})
                diags.append(STALE_SPEC("", f"offline: using the cached copy of {checked.url}, past its freshness"))
                return self._from_entry(entry, diags, {"stale": True})
            if self._cassette is None:
                raise OfflineMissError(
                    "offline, and the cache holds no copy; fill the cache first with "
                    "`ramscope fetch CARD` (without --offline), or replay a recording with --cassette FILE",
                    url=str(checked.url),
                )
        send_headers = {k.lower(): v for k, v in (headers or {}).items()}
        if content is not None:
            send_headers.setdefault("content-type", "application/json")
        conditional = entry is not None and not self._bypass_cache
        if conditional and entry is not None:
            if isinstance(etag := entry.meta.get("etag"), str):
                send_headers["if-none-match"] = etag
            if isinstance(modified := entry.meta.get("last_modified"), str):
                send_headers["if-modified-since"] = modified
            conditional = "if-none-match" in send_headers or "if-modified-since" in send_headers
        _check_spec_deadline(str(checked.url))
        ex = self._perform(method, checked, send_headers, content, until, diags)
        now = self._clock()
        if ex.status == 304 and conditional and entry is not None:
            return self._revalidated(entry, ex, now, diags)
        if use_cache and ex.ok and ex.complete and not self.replaying:
            storable, expires_at = freshness(
                ex.headers, now=now, default_ttl=self.settings.cache_ttl, max_ttl=self._max_ttl
            )
            if storable:
                self._save(key, ex, media_type=ex.media_type, expires_at=expires_at)
        return ex

    # ------------------------------------------------------------------ internals: getting specs

    def _once(self, key: tuple[str, str], work: Callable[[], T]) -> T:
        """Run ``work`` once per key per run; concurrent callers wait for the first one's result."""
        with self._lock:
            fut = self._memo.get(key)
            owner = fut is None
            if fut is None:
                fut = self._memo[key] = _Slot()
        if not owner:
            result: T = fut.result()
            return result
        try:
            value = work()
        except BaseException as exc:
            fut.set_exception(exc)
            raise
        fut.set_result(value)
        return value

    def _url_facts(self, url: str) -> _URLFacts:
        """The URL guard's verdict on ``url`` and its canonical form; raises :class:`BlockedURLError`.

        :func:`check_url` parses with httpx, and importing httpx costs a warm run more than
        everything else it does. So what the parse established (canonical form, host) is
        remembered in the cache under the URL as written, and a later run re-applies only
        the part of the check that depends on the policy (:func:`judge_host`) to it: the same
        verdict, since the rest depends on the URL alone.
        """
        facts = self._facts.get(url)
        if facts is None:
            facts = self._remembered_facts(url)
            if facts is not None:
                self._facts[url] = facts
        if facts is not None:
            judge_host(facts.host, self.policy, url)
            return facts
        checked = check_url(url, self.policy)
        facts = self._facts[url] = _URLFacts(canonical_url(checked.url), checked.host)
        self._cache_store().save(
            _FACTS_PREFIX + url, {"v": _META_VERSION, "canonical": facts.canonical, "host": facts.host}, b""
        )
        return facts

    def _remembered_facts(self, url: str) -> _URLFacts | None:
        try:
            peek = self._cache_store().peek(_FACTS_PREFIX + url)
        except CorruptCacheEntryError:
            return None  # discarded; parsed again
        if peek is None:
            return None
        m = peek.meta
        canonical, host = m.get("canonical"), m.get("host")
        if m.get("v") != _META_VERSION or not isinstance(canonical, str) or not isinstance(host, str):
            return None
        return _URLFacts(canonical, host)

    def _get_document(self, url: str, kind_hint: SpecKind | None) -> FetchedSpec:
        canonical = self._url_facts(url).canonical
        with self._lock:
            diags: list[Diagnostic] = self._carried.pop(canonical, [])
        cached = self._cached_document(url, kind_hint, diags)
        if cached is not None:
            return cached
        from .http import spec_deadline  # noqa: PLC0415

        with spec_deadline(self.settings.spec_deadline):
            ex = self.exchange("GET", url, headers={"accept": _ACCEPT})
        if not ex.ok:
            where = f" (at {ex.final_url})" if ex.final_url != ex.url else ""
            raise FetchError(f"HTTP {ex.status} {ex.reason}".rstrip() + where, url=url)
        if not ex.body:
            raise FetchError("the server answered with an empty body", url=url)
        loader = None
        if len(ex.body) >= SEPARATE_BODY_BYTES and ex.sha256:
            # Stored apart in the cache (or, if not storable, obtained again and checked by hash): the
            # body can be released from memory once indexed, and read back (FetchedSpec.release_body).
            loader = self._body_loader(document_key(canonical), canonical, ex.sha256, len(ex.body))
        spec = self._spec_from(url, kind_hint, ex, ex.media_type, reloader=loader)
        # A corrupt entry found (and discarded) by the look-up above is part of how this spec was obtained.
        return replace(spec, diagnostics=(*diags, *spec.diagnostics)) if diags else spec

    def _cached_document(self, url: str, kind_hint: SpecKind | None, diags: list[Diagnostic]) -> FetchedSpec | None:
        """The spec from its cache entry, when the entry alone can answer, without reading a large body.

        The same decisions as :meth:`exchange` for a GET: a fresh entry answers (unless --refresh or
        --record), and offline any entry answers (a stale one with a diagnostic). A body stored apart
        (see :mod:`ramscope.store.cache`) is not read here: the spec gets a loader that reads and
        verifies it on first use of ``body``, so a warm run that finds the spec's index cached never
        reads it. ``None`` when :meth:`exchange` must decide (no entry, revalidation, a refetch).
        """
        self._check_open()
        offline = self.settings.offline
        if self._bypass_cache and not offline:
            return None
        where = self._url_facts(url).canonical
        key = document_key(where)
        peek = self._peek(key, where, diags)
        if peek is None:
            return None
        now = self._clock()
        fresh = peek.fresh(now)
        m = peek.meta
        sha = m.get("sha256")
        if not (offline or (fresh and not self._bypass_cache)) or not isinstance(sha, str) or not peek.body_size:
            return None
        if not 200 <= m["status"] < 300:
            return None
        extra: dict[str, Any] = {}
        if not fresh:
            extra["stale"] = True
            diags.append(STALE_SPEC("", f"offline: using the cached copy of {where}, past its freshness"))
        body = peek.inline_body
        ex = self._exchange_from_meta(m, body or b"", diags, extra)
        if body is not None:
            return self._spec_from(url, kind_hint, ex, ex.media_type)
        assert peek.body_sha256 is not None
        loader = self._body_loader(key, where, peek.body_sha256, peek.body_size)
        return self._spec_from(url, kind_hint, ex, ex.media_type, body_loader=loader, size=peek.body_size)

    def _body_loader(self, key: str, url: str, sha256: str, size: int) -> Callable[[], bytes]:
        """Reads a body stored apart when the spec's ``body`` is first used; refetches it if it is gone."""

        def load() -> bytes:
            body = self._read_body_apart(key, url, sha256, size)
            if body is not None:
                return body
            if self._closed:
                raise FetchError("the cached body of this spec is gone, and its store is closed", url=url)
            # Evicted or corrupt: drop the entry and obtain the document again, accepting it only if
            # it is the document whose metadata (hash, provenance) this run has already used.
            self._cache_store().delete(key)
            ex = self.exchange("GET", url, headers={"accept": _ACCEPT})
            if ex.ok and ex.complete and ex.sha256 == sha256:
                return ex.body
            raise FetchError(
                "the cached copy of this spec was lost, and the spec has changed since; run again", url=url
            )

        return load

    def _read_body_apart(self, key: str, url: str, sha256: str, size: int) -> bytes | None:
        with self._lock:
            closed = self._closed
        # A spec may outlive its store (read after the ``with`` block): the cache directory still has the body.
        cache = SpecCache(self.settings.cache_dir) if closed else self._cache_store()
        try:
            return cache.load_body(sha256, size)
        except CorruptCacheEntryError as exc:
            self._note(
                CACHE_ENTRY_CORRUPT(
                    "",
                    f"the cached copy of {url} was corrupt and has been discarded: {exc.reason}",
                    data={"cache_key": key},
                )
            )
            return None
        finally:
            if closed:
                cache.close()

    def _get_with_fetcher(self, url: str, kind: SpecKind, fetcher: Fetcher) -> FetchedSpec:
        checked = check_url(url, self.policy)
        key = f"spec:{kind.value}:{canonical_url(checked.url)}"
        diags: list[Diagnostic] = []
        entry = self._load(key, url, diags)
        now = self._clock()
        if entry is not None and (self.settings.offline or (not self._bypass_cache and entry.fresh(now))):
            extra: dict[str, Any] = {}
            if not entry.fresh(now):
                extra["stale"] = True
                diags.append(STALE_SPEC("", f"offline: using the cached capture of {url}, past its freshness"))
            ex = self._from_entry(entry, diags, extra)
            return self._spec_from(url, kind, ex, str(entry.meta.get("media_type") or ex.media_type))
        from .http import spec_deadline  # noqa: PLC0415

        ctx = FetchContext(self, url, kind)
        with spec_deadline(self.settings.spec_deadline):
            result: FetcherResult = fetcher(ctx, url)
        if not result.body:
            raise FetchError(f"the {kind.value} fetcher obtained nothing", url=url)
        for e in ctx.exchanges:
            diags.extend(e.diagnostics)
        fetched_at = datetime.fromtimestamp(self._clock(), UTC)
        ex = Exchange(
            method="FETCH",
            url=canonical_url(checked.url),
            final_url=result.final_url,
            status=result.status,
            header_items=tuple((k.lower(), v) for k, v in result.headers.items()),
            body=result.body,
            origin=ctx.origin(),
            fetched_at=fetched_at,
            provenance={**_shared_provenance(ctx.exchanges), **result.provenance},
            diagnostics=tuple(diags),
        )
        storable, expires_at = freshness(
            ex.headers, now=now, default_ttl=self.settings.cache_ttl, max_ttl=self._max_ttl
        )
        if storable and not self.replaying:
            self._save(key, ex, media_type=result.media_type, expires_at=expires_at)
        return self._spec_from(url, kind, ex, result.media_type)

    def _spec_from(
        self,
        url: str,
        kind: SpecKind | None,
        ex: Exchange,
        media_type: str,
        *,
        body_loader: Callable[[], bytes] | None = None,
        size: int | None = None,
        reloader: Callable[[], bytes] | None = None,
    ) -> FetchedSpec:
        return FetchedSpec(
            url=url,
            final_url=ex.final_url,
            body=None if body_loader is not None else ex.body,
            body_loader=body_loader or reloader,
            size=size,
            media_type=media_type,
            sha256=ex.sha256,
            fetched_at=ex.fetched_at,
            origin=ex.origin,
            status=ex.status,
            etag=ex.header("etag"),
            last_modified=ex.header("last-modified"),
            headers=ex.headers,
            provenance={**ex.provenance, "kind_hint": kind.value if kind else None},
            diagnostics=ex.diagnostics,
        )

    # ------------------------------------------------------------------ internals: the wire

    def _perform(
        self,
        method: str,
        checked: CheckedURL,
        headers: dict[str, str],
        content: bytes | None,
        until: Callable[[bytes], bool] | None,
        diags: list[Diagnostic],
    ) -> Exchange:
        import httpx  # noqa: PLC0415

        from .http import deadline  # noqa: PLC0415

        client = self._http()
        asked, asked_method = str(checked.url), method
        current = checked
        redirects: list[str] = []
        insecure = checked.insecure
        with deadline(self.settings.timeout):
            while True:
                hop = self._send(client, method, current, headers, content, until, asked)
                location = dict(hop.header_items).get("location")
                if hop.status not in _REDIRECTS or location is None:
                    break
                if len(redirects) >= MAX_REDIRECTS:
                    raise FetchError(f"more than {MAX_REDIRECTS} redirects (last to {current.url})", url=asked)
                try:
                    target = hop.url.join(location)
                except (httpx.InvalidURL, ValueError) as exc:
                    raise FetchError(f"a redirect to an invalid URL ({location!r}): {exc}", url=asked) from None
                try:
                    nxt = check_url(target, self.policy)
                except BlockedURLError as exc:
                    raise BlockedURLError(f"redirect to {target} {exc.detail}", url=asked) from None
                if _origin(nxt.url) != _origin(current.url):
                    for name in _CREDENTIAL_HEADERS:
                        headers.pop(name, None)
                if hop.status == 303 or (hop.status in (301, 302) and method == "POST"):
                    method, content = "GET", None
                    headers.pop("content-type", None)
                redirects.append(str(nxt.url))
                insecure = insecure or nxt.insecure
                current = nxt
        provenance = dict(hop.provenance)
        if insecure:
            provenance["insecure"] = True
        return Exchange(
            method=asked_method,
            url=asked,
            final_url=str(current.url),
            status=hop.status,
            header_items=hop.header_items,
            body=hop.body,
            origin=hop.origin,
            fetched_at=datetime.fromtimestamp(self._clock(), UTC),
            reason=hop.reason,
            complete=hop.complete,
            redirects=tuple(redirects),
            provenance=provenance,
            diagnostics=self._finish_diags(asked, provenance, diags),
            digest=hop.digest,
        )

    def _send(
        self,
        client: httpx.Client,
        method: str,
        checked: CheckedURL,
        headers: Mapping[str, str],
        content: bytes | None,
        until: Callable[[bytes], bool] | None,
        asked: str,
    ) -> _Hop:
        import httpx  # noqa: PLC0415

        from .http import read_body  # noqa: PLC0415

        request = client.build_request(method, checked.url, headers=headers, content=content)
        try:
            response = client.send(request, stream=True)
        except AddressBlockedError as exc:
            raise BlockedURLError(str(exc), url=asked) from None
        except httpx.TimeoutException:
            raise FetchTimeoutError(self._too_slow(), url=asked) from None
        except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
            # httpx parses a redirect's Location inside send() even when it follows none, and a stranger's
            # `https:x`, `http:\\h/x` or `http://xn--/` raises InvalidURL or an IDNA (Unicode) error there.
            location = request.extensions.get(_LOCATION_NOTE)
            if isinstance(location, str):
                raise FetchError(f"a redirect to an invalid URL ({location[:200]!r}): {exc}", url=asked) from None
            if not isinstance(exc, httpx.HTTPError):
                raise FetchError(f"cannot build a request to {checked.host}: {exc}", url=asked) from None
            raise FetchError(f"cannot reach {checked.host}: {exc}", url=asked) from None
        # Where the bytes came from, read before the body: closing may drop the connection.
        replayed = response.extensions.get("ramscope_provenance")
        provenance: dict[str, Any] = dict(replayed) if isinstance(replayed, dict) else _wire_provenance(response)
        redirect = response.status_code in _REDIRECTS and "location" in response.headers
        digest = hashlib.sha256()
        try:
            if redirect:
                # Drained (bounded) so the connection can carry the next hop; its text is not used.
                body, complete = _drain(response), True
            else:
                body, complete = read_body(response, limit=self.settings.max_spec_bytes, until=until, digest=digest)
        except httpx.TimeoutException:
            raise FetchTimeoutError(self._too_slow(), url=asked) from None
        except httpx.HTTPError as exc:
            raise FetchError(f"the connection failed while reading: {exc}", url=asked) from None
        except FetchError as exc:
            if exc.url is None:
                raise type(exc)(exc.detail, url=asked) from None
            raise
        finally:
            response.close()
        header_items = tuple(response.headers.multi_items())
        if self.settings.record and self._cassette is not None:
            self._cassette.record(
                method=method,
                url=str(checked.url),
                request_headers=[(k, v) for k, v in request.headers.multi_items() if k not in _UNRECORDED_REQUEST],
                request_body=content,
                status=response.status_code,
                reason=response.reason_phrase,
                response_headers=header_items,
                body=body,
                extra={k: v for k, v in provenance.items() if k in ("server_address", "http_version")},
            )
        return _Hop(
            url=checked.url,
            status=response.status_code,
            reason=response.reason_phrase,
            header_items=header_items,
            body=body,
            complete=complete,
            origin=Origin.CASSETTE if replayed else Origin.NETWORK,
            provenance=provenance,
            digest="" if redirect else digest.hexdigest(),
        )

    def _too_slow(self) -> str:
        from .http import spec_deadline_passed  # noqa: PLC0415

        spent = spec_deadline_passed()
        if spent is not None:
            return _spec_deadline_message(spent)
        return f"no complete response within {self.settings.timeout:g} s (--timeout)"

    def _http(self) -> httpx.Client:
        from http.cookiejar import CookieJar, DefaultCookiePolicy  # noqa: PLC0415

        import httpx  # noqa: PLC0415

        with self._lock:
            if self._client is None:
                self._client = httpx.Client(
                    transport=self._make_transport(),
                    follow_redirects=False,
                    # No .netrc credentials, no proxies from the environment: never sent to a stranger's host.
                    trust_env=False,
                    # A jar that accepts nothing: no state carried between hosts or requests.
                    cookies=CookieJar(DefaultCookiePolicy(allowed_domains=[])),
                    timeout=httpx.Timeout(self.settings.timeout, connect=min(self.settings.timeout, 15.0)),
                    headers={"user-agent": _user_agent(), "accept-encoding": "gzip, deflate"},
                    event_hooks={"response": [_note_location]},
                )
            return self._client

    def _make_transport(self) -> httpx.BaseTransport:
        if self._cassette is not None and not self.settings.record:
            from .cassette import ReplayTransport  # noqa: PLC0415

            return ReplayTransport(self._cassette)
        if self.settings.offline:  # pragma: no cover - exchange() raises before asking for a client
            raise OfflineMissError("offline: the network is not used")
        if self._transport is not None:
            return self._transport
        from .http import GuardedTransport  # noqa: PLC0415

        return GuardedTransport(self.policy, resolver=self._resolver)

    # ------------------------------------------------------------------ internals: cache

    def _cache_store(self) -> SpecCache:
        with self._lock:
            if self._cache is None:
                self._cache = SpecCache(self.settings.cache_dir)
            return self._cache

    def _load(self, key: str, what: str, diags: list[Diagnostic]) -> CacheEntry | None:
        # Artifacts carry their own metadata, checked by whoever reads them.
        return self._read_checked(self._cache_store().load, key, what, diags, check=not key.startswith("artifact:"))

    def _save(self, key: str, ex: Exchange, *, media_type: str, expires_at: float) -> None:
        fetched = ex.fetched_at.timestamp()
        sha256 = ex.sha256
        meta = {
            "v": _META_VERSION,
            "method": ex.method,
            "url": ex.url,
            "final_url": ex.final_url,
            "status": ex.status,
            "reason": ex.reason,
            # Cookies are never kept, on disk least of all.
            "headers": [[k, v] for k, v in ex.header_items if k != "set-cookie"],
            "media_type": media_type,
            "fetched_at": fetched,
            "validated_at": fetched,
            "expires_at": expires_at,
            "etag": ex.header("etag"),
            "last_modified": ex.header("last-modified"),
            "origin": ex.origin.value,
            "redirects": list(ex.redirects),
            "provenance": {k: v for k, v in ex.provenance.items() if k not in ("stale", "revalidated")},
            "sha256": sha256,
        }
        self._cache_store().save(key, meta, ex.body, body_sha256=sha256)

    def _peek(self, key: str, what: str, diags: list[Diagnostic]) -> CachePeek | None:
        """Like :meth:`_load`, but a body stored apart is not read."""
        return self._read_checked(self._cache_store().peek, key, what, diags, check=True)

    def _read_checked(
        self, read: Callable[[str], _C | None], key: str, what: str, diags: list[Diagnostic], *, check: bool
    ) -> _C | None:
        """``read(key)``; a corrupt entry, or one whose metadata is malformed, is discarded and reported."""
        try:
            got = read(key)
            if got is not None and check:
                _check_meta(got.meta)
        except CorruptCacheEntryError as exc:
            reason = exc.reason
        except (KeyError, TypeError, ValueError) as exc:
            self._cache_store().delete(key)
            reason = f"its metadata is malformed ({exc})"
        else:
            doubt = self._doubt(got.meta) if got is not None and check else None
            if doubt is None:
                return got
            # Not deleted: the entry may be another process's under other settings (a longer
            # --cache-max-ttl); the fetch that follows overwrites it with one these settings trust.
            with self._lock:
                told, self._distrusted = key in self._distrusted, self._distrusted | {key}
            if not told:  # a peek and the exchange after it read the same entry: said once
                diag = CACHE_ENTRY_DISTRUSTED(
                    "", f"the cached copy of {what} is not used: {doubt}", data={"cache_key": key}
                )
                diags.append(diag)
                self._note(diag)
            return None
        diag = CACHE_ENTRY_CORRUPT(
            "",
            f"the cached copy of {what} was corrupt and has been discarded: {reason}",
            data={"cache_key": key},
        )
        diags.append(diag)
        self._note(diag)
        return None

    @property
    def _max_ttl(self) -> float:
        return max(self.settings.cache_max_ttl, self.settings.cache_ttl)

    def _doubt(self, meta: Mapping[str, Any]) -> str | None:
        """Why an intact entry cannot have been written by ramscope under these settings, if it cannot.

        The seal proves an entry is whole, not who wrote it: whoever can write the cache directory can
        seal anything. An entry fetched (or revalidated) in the future, or fresh for longer than
        ``cache_max_ttl`` after it, is not one this store wrote, so it is a miss.
        """
        now = self._clock()
        for name in ("fetched_at", "validated_at"):
            if float(meta[name]) > now + _CLOCK_SLACK:
                return f"its {name.replace('_', ' ')} time lies in the future"
        expires = meta.get("expires_at")
        if isinstance(expires, int | float) and expires - float(meta["validated_at"]) > self._max_ttl + _CLOCK_SLACK:
            days = (expires - float(meta["validated_at"])) / 86400
            return f"it claims {days:,.1f} days of freshness, more than --cache-max-ttl ({self._max_ttl:g} s) allows"
        return None

    def _from_entry(self, entry: CacheEntry, diags: list[Diagnostic], extra: Mapping[str, Any]) -> Exchange:
        return self._exchange_from_meta(entry.meta, entry.body, diags, extra)

    def _exchange_from_meta(
        self, m: Mapping[str, Any], body: bytes, diags: list[Diagnostic], extra: Mapping[str, Any]
    ) -> Exchange:
        provenance = {
            **m["provenance"],
            "first_origin": m["origin"],
            "validated_at": rfc3339(datetime.fromtimestamp(m["validated_at"], UTC)),
            **extra,
        }
        return Exchange(
            method=m["method"],
            url=m["url"],
            final_url=m["final_url"],
            status=m["status"],
            header_items=tuple((str(k), str(v)) for k, v in m["headers"]),
            body=body,
            origin=Origin.CACHE,
            fetched_at=datetime.fromtimestamp(m["fetched_at"], UTC),
            reason=m["reason"],
            redirects=tuple(m["redirects"]),
            provenance=provenance,
            diagnostics=self._finish_diags(m["url"], provenance, diags),
            digest=m["sha256"] if isinstance(m.get("sha256"), str) else "",
        )

    def _revalidated(self, entry: CacheEntry, answer: Exchange, now: float, diags: list[Diagnostic]) -> Exchange:
        """A 304: keep the body, take the new freshness headers (RFC 9111 4.3.4), store, serve."""
        updated = {k.lower() for k, _ in answer.header_items} - {"content-length", "content-encoding"}
        kept = [(k, v) for k, v in entry.meta["headers"] if k not in updated]
        header_items = tuple(kept) + tuple((k, v) for k, v in answer.header_items if k in updated)
        merged = dict(header_items)
        _, expires_at = freshness(merged, now=now, default_ttl=self.settings.cache_ttl, max_ttl=self._max_ttl)
        meta = dict(entry.meta)
        meta.update(
            headers=[[k, v] for k, v in header_items],
            validated_at=now,
            expires_at=expires_at,
            etag=merged.get("etag", meta.get("etag")),
            last_modified=merged.get("last-modified", meta.get("last_modified")),
        )
        sha = meta.get("sha256")
        if not self.replaying:  # a cassette's 304 vouches for the entry in this run only
            self._cache_store().save(
                entry.key, meta, entry.body, body_sha256=str(sha) if isinstance(sha, str) else None
            )
        return self._from_entry(CacheEntry(entry.key, meta, entry.body), diags, {"revalidated": True})

    # ------------------------------------------------------------------ internals: bookkeeping

    def _finish_diags(self, url: str, provenance: Mapping[str, Any], diags: list[Diagnostic]) -> tuple[Diagnostic, ...]:
        if provenance.get("insecure") and not any(d.code == INSECURE_FETCH.code for d in diags):
            diags.append(
                INSECURE_FETCH(
                    "",
                    f"{url} was fetched over plain http (or redirected to it): anyone on the network path "
                    "could have changed it",
                    hint="publish and reference the spec over https",
                    data={"url": url},
                )
            )
        for d in diags:
            self._note(d)
        return tuple(diags)

    def _note(self, diag: Diagnostic) -> None:
        with self._lock:
            self._diagnostics.setdefault((diag.code, diag.message), diag)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the spec store is closed")

    @contextmanager
    def _progress(self, total: int) -> Iterator[Callable[[], None]]:
        if not self.settings.progress or total == 0:
            yield lambda: None
            return
        from rich.console import Console  # noqa: PLC0415 - only on a terminal
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: PLC0415

        with Progress(
            TextColumn("fetching specs"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        ) as progress:
            task = progress.add_task("fetch", total=total)
            yield lambda: progress.advance(task)


_T = TypeVar("_T")
_R = TypeVar("_R")


def _concurrently(fn: Callable[[_T], _R], items: Sequence[_T], jobs: int) -> Iterator[tuple[_T, _R]]:
    """``fn`` over ``items`` on ``jobs`` daemon threads; yields (item, result) in completion order.

    Not a ThreadPoolExecutor: its worker threads are joined when the pool is left and again at
    interpreter exit, so a Ctrl-C or SIGTERM during a fetch waited for the slowest server (up to
    --timeout) before the process could exit. Daemon workers are abandoned instead; what one leaves
    half done is what a killed process leaves, which the cache survives (SQLite transactions,
    checksummed entries). An exception other than the ones ``fn`` returns is re-raised here.
    """
    todo: queue.SimpleQueue[_T] = queue.SimpleQueue()
    done: queue.SimpleQueue[tuple[_T, bool, Any]] = queue.SimpleQueue()
    for item in items:
        todo.put(item)

    def worker() -> None:
        while True:
            try:
                item = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((item, True, fn(item)))
            except BaseException as exc:  # handed to the caller's thread, which re-raises it
                done.put((item, False, exc))

    for i in range(jobs):
        threading.Thread(target=worker, name=f"ramscope-fetch-{i}", daemon=True).start()

    # The workers start now, not when the results are first asked for: the caller has other
    # work to do while they run.
    def results() -> Iterator[tuple[_T, _R]]:
        for _ in range(len(items)):
            item, ok, value = done.get()
            if not ok:
                raise value
            yield item, value

    return results()


#: Request extension where :func:`_note_location` leaves a response's raw Location.
_LOCATION_NOTE = "ramscope_location"


def _note_location(response: httpx.Response) -> None:
    """Keep a redirect's raw Location on its request, so an error httpx raises parsing it can quote it."""
    location = response.headers.get("location")
    if location is not None:
        response.request.extensions[_LOCATION_NOTE] = location


def _spec_deadline_message(seconds: float) -> str:
    return f"the exchanges for this spec took longer than {seconds:g} s in all (--spec-deadline)"


def _check_spec_deadline(url: str) -> None:
    """No new request once the spec's deadline has passed (the cache may still answer)."""
    from .http import spec_deadline_passed  # noqa: PLC0415

    spent = spec_deadline_passed()
    if spent is not None:
        raise FetchTimeoutError(_spec_deadline_message(spent), url=url)


def _drain(response: httpx.Response) -> bytes:
    from .http import read_body  # noqa: PLC0415

    # An odd redirect body only costs the connection, which closing then drops.
    with suppress(FetchError):
        read_body(response, limit=_REDIRECT_BODY_LIMIT)
    return b""


def _wire_provenance(response: httpx.Response) -> dict[str, Any]:
    out: dict[str, Any] = {}
    version = response.extensions.get("http_version")
    if isinstance(version, bytes):
        out["http_version"] = version.decode("ascii", "replace")
    stream = response.extensions.get("network_stream")
    try:
        peer = stream.get_extra_info("server_addr") if stream is not None else None
    except OSError:
        peer = None
    if isinstance(peer, tuple) and len(peer) >= 2:
        host = f"[{peer[0]}]" if ":" in str(peer[0]) else str(peer[0])
        out["server_address"] = f"{host}:{peer[1]}"
    return out


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return (url.scheme, url.host, url.port)


def _artifact_key(namespace: str, key: str) -> str:
    if not _NAMESPACE.match(namespace):
        raise ValueError(f"artefact namespace {namespace!r} must match {_NAMESPACE.pattern}")
    if not key:
        raise ValueError("artefact key must not be empty")
    return f"artifact:{namespace}:{key}"


def _check_meta(meta: Mapping[str, Any]) -> None:
    """Raise if the metadata of an exchange entry is not what ``_save`` writes."""
    if meta.get("v") != _META_VERSION:
        raise ValueError(f"format {meta.get('v')!r}")
    for name, kind in (
        ("method", str),
        ("url", str),
        ("final_url", str),
        ("status", int),
        ("reason", str),
        ("headers", list),
        ("fetched_at", float | int),
        ("validated_at", float | int),
        ("origin", str),
        ("redirects", list),
        ("provenance", dict),
    ):
        if not isinstance(meta.get(name), kind):
            raise TypeError(f"{name} is missing or not a {kind}")
    Origin(meta["origin"])
    for pair in meta["headers"]:
        if not (isinstance(pair, list) and len(pair) == 2):
            raise TypeError("a header is not a [name, value] pair")


def _shared_provenance(exchanges: Iterable[Exchange]) -> dict[str, Any]:
    """Provenance a fetcher's result inherits from its exchanges (cassette, synthesized, insecure)."""
    out: dict[str, Any] = {}
    for ex in exchanges:
        for name in ("cassette", "insecure"):
            if name in ex.provenance:
                out[name] = ex.provenance[name]
        if ex.provenance.get("synthesized"):
            out["synthesized"] = True
    return out
