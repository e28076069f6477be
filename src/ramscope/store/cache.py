"""The on-disk spec cache: diskcache (SQLite), our own envelope, no pickle.

Threat model pieces defended here:

* **Pickle.** diskcache unpickles any value whose row says ``MODE_PICKLE``, and
  any key whose row says it is not raw. Whoever can write the cache database
  (another user sharing ``--cache-dir``, a poisoned CI cache restore) would get
  code execution. We store only ``bytes`` (mode RAW or BINARY) and
  :class:`SafeDisk` refuses every other mode, so nothing is ever unpickled.
* **Paths in rows.** A row's ``filename`` is joined to the cache directory to
  read, and to *delete*, large values. :class:`SafeDisk` accepts only the names
  diskcache itself generates, so a poisoned row cannot read or remove
  ``../../.bashrc``.
* **Corruption.** Every value is an envelope ending in the SHA-256 of all that
  precedes it; a mismatch (a torn write, a flipped bit, a truncated file)
  discards the entry and is reported, and the spec is fetched again. A large
  spec body is kept apart from its entry (see below), content-addressed: it is
  verified against the SHA-256 its entry records whenever it is read.
* **Several processes.** diskcache is SQLite in WAL mode with per-thread
  connections; writes retry while another process holds the lock.

Large bodies are stored apart. An entry saved with its body's SHA-256 and a body of
:data:`SEPARATE_BODY_BYTES` or more keeps only its metadata and a reference
``{"sha256", "size"}`` in the envelope; the body is the value of
``blob:sha256:<hex>``, stored as it is (no second copy, no second hash: its name
is its checksum). :meth:`SpecCache.load` reads and verifies both;
:meth:`SpecCache.peek` reads only the small envelope, which is all a warm run
needs of a spec whose index is cached. A missing or corrupt body discards the
entry that refers to it, like any other corruption. Such a body (and then its
entry) is written by a background thread, so a run goes on parsing the spec
while it is written; reading either waits for the write, and so does close().

What is *not* defended: someone who can write the cache can feed ramscope any
spec bytes with a valid envelope. The cache is as trusted as the account that
runs ramscope; share a cache directory only between processes you trust.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import os
import re
import sqlite3
import struct
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..diagnostics import Severity, rule
from ..errors import InputError

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    import diskcache

__all__ = [
    "CACHE_ENTRY_CORRUPT",
    "SEPARATE_BODY_BYTES",
    "CacheEntry",
    "CachePeek",
    "CorruptCacheEntryError",
    "SafeDisk",  # noqa: F822 - defined on first use, see __getattr__
    "SpecCache",
    "freshness",
    "listing_cache_control",
    "parse_cache_control",
]

CACHE_ENTRY_CORRUPT = rule(
    "cache-entry-corrupt",
    Severity.WARNING,
    "A cached spec failed its integrity check; it was discarded and obtained again.",
    stage="fetch",
)

_MAGIC = b"RSC1"
_HEADER = struct.Struct(">4sI")
_DIGEST_LEN = 32
#: Bodies at least this large are stored apart from their entry (when the caller gives their hash).
SEPARATE_BODY_BYTES = 256 * 1024
#: Bytes of bodies queued for the background writer before a new write waits for older ones.
QUEUED_BYTES = 64 * 1024 * 1024
#: The metadata key of the reference to a body stored apart (never in what callers store or get).
_BODY_REF = "_body"
_BLOB_PREFIX = "blob:sha256:"
#: diskcache's default: smaller values live in the database row, larger ones in their own file.
_MIN_FILE_SIZE = 2**15
#: diskcache's own file names: two levels of hex directories, 28 hex digits, ``.val``.
_VALUE_FILE = re.compile(r"[0-9a-f]{2}[/\\][0-9a-f]{2}[/\\][0-9a-f]{28}\.val\Z")


class UnsafeEntryError(Exception):
    """A cache row that does not look like something ramscope wrote. Not an OSError:
    diskcache would swallow that as "missing"."""


class CorruptCacheEntryError(Exception):
    """Raised by :meth:`SpecCache.load` after discarding an entry that failed its checks."""

    def __init__(self, key: str, reason: str) -> None:
        self.key = key
        self.reason = reason
        super().__init__(f"cache entry {key!r} discarded: {reason}")


# diskcache (and pickle, tempfile ... with it) is imported when the cache is first written:
# reading an existing cache needs only sqlite3 (see SpecCache._get).
_MODE_RAW = 1  # diskcache.core.MODE_RAW
_MODE_BINARY = 2  # diskcache.core.MODE_BINARY


class _NotRaised(Exception):
    """Stands for diskcache.Timeout in ``except`` clauses until diskcache is imported."""


_Timeout: type[Exception] = _NotRaised
_safe_disk: type[Any] | None = None


def _diskcache() -> Any:
    """diskcache, imported now, and SafeDisk defined on it."""
    global _Timeout, _safe_disk  # noqa: PLW0603 - set once, on first use
    import diskcache  # noqa: PLC0415

    if _safe_disk is None:
        if (diskcache.core.MODE_RAW, diskcache.core.MODE_BINARY) != (_MODE_RAW, _MODE_BINARY):  # pragma: no cover
            raise RuntimeError("diskcache's value modes changed")
        _Timeout = diskcache.Timeout
        _safe_disk = _define_safe_disk(diskcache.Disk)
    return diskcache


def _define_safe_disk(disk: type[Any]) -> type[Any]:
    class SafeDisk(disk):  # type: ignore[misc]
        """A diskcache ``Disk`` that only ever returns bytes and never unpickles."""

        def get(self, key: Any, raw: bool) -> Any:
            if not raw:
                raise UnsafeEntryError("a cache key is stored pickled; ramscope never writes such keys")
            return super().get(key, raw)

        def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
            if read:
                raise UnsafeEntryError("file handles are not used")
            if mode == _MODE_RAW:
                data = bytes(value) if isinstance(value, memoryview) else value
                if not isinstance(data, bytes):
                    raise UnsafeEntryError(f"a cache value of type {type(data).__name__}; ramscope stores only bytes")
                return data
            if mode == _MODE_BINARY:
                if not isinstance(filename, str) or not _VALUE_FILE.match(filename):
                    raise UnsafeEntryError(f"a cache row names the file {filename!r}, not one diskcache made")
                return super().fetch(mode, filename, value, read)
            raise UnsafeEntryError(f"a cache value stored in mode {mode} (pickle or text); ramscope stores only bytes")

        def remove(self, file_path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> None:
            if isinstance(file_path, str) and _VALUE_FILE.match(file_path):
                super().remove(file_path)

    return SafeDisk


def __getattr__(name: str) -> Any:
    if name == "SafeDisk":  # defined on diskcache.Disk, once diskcache is imported
        _diskcache()
        return _safe_disk
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------- envelope


def _seal(meta: Mapping[str, Any], body: bytes) -> list[bytes]:
    """The envelope, as parts (joined only if small: a large body is not copied to be stored)."""
    meta_json = orjson.dumps(dict(meta))
    head = _HEADER.pack(_MAGIC, len(meta_json))
    digest = hashlib.sha256()
    for part in (head, meta_json, body):
        digest.update(part)
    return [head, meta_json, body, digest.digest()]


class _PartsReader:
    """``read(n)`` over several buffers in turn: diskcache copies them to its file without a joined copy."""

    def __init__(self, parts: list[bytes]) -> None:
        self._parts = [memoryview(p) for p in parts if p]
        self._i = 0
        self._at = 0

    def read(self, n: int = -1) -> bytes | memoryview:
        while self._i < len(self._parts):
            part = self._parts[self._i]
            if self._at >= len(part):
                self._i, self._at = self._i + 1, 0
                continue
            chunk = part[self._at :] if n < 0 else part[self._at : self._at + n]
            self._at += len(chunk)
            return chunk
        return b""


def _open(data: bytes) -> tuple[dict[str, Any], bytes]:
    if len(data) < _HEADER.size + _DIGEST_LEN:
        raise ValueError("entry is truncated")
    magic, meta_len = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        raise ValueError("entry has an unknown format")
    end_meta = _HEADER.size + meta_len
    if end_meta > len(data) - _DIGEST_LEN:
        raise ValueError("entry is truncated")
    view = memoryview(data)
    if hashlib.sha256(view[:-_DIGEST_LEN]).digest() != data[-_DIGEST_LEN:]:
        raise ValueError("SHA-256 mismatch: the stored bytes changed since they were written")
    meta = orjson.loads(view[_HEADER.size : end_meta])
    if not isinstance(meta, dict):
        raise ValueError("entry metadata is not an object")
    return meta, bytes(view[end_meta:-_DIGEST_LEN])


def _check_ref(ref: Any) -> tuple[str, int]:
    if not (
        isinstance(ref, dict)
        and isinstance(sha := ref.get("sha256"), str)
        and len(sha) == 64
        and all(c in "0123456789abcdef" for c in sha)
        and isinstance(size := ref.get("size"), int)
        and size >= 0
    ):
        raise ValueError("its reference to a separately stored body is malformed")
    return sha, size


class CachedMeta:
    """What a whole entry and a peek at one share: ramscope's JSON metadata, and its freshness."""

    __slots__ = ()
    key: str
    meta: Mapping[str, Any]

    @property
    def expires_at(self) -> float | None:
        v = self.meta.get("expires_at")
        return float(v) if isinstance(v, int | float) else None

    def fresh(self, now: float) -> bool:
        exp = self.expires_at
        return exp is not None and now < exp


@dataclass(frozen=True, slots=True)
class CacheEntry(CachedMeta):
    """One verified cache value: ramscope's JSON metadata and the body bytes."""

    key: str
    meta: Mapping[str, Any]
    body: bytes


@dataclass(frozen=True, slots=True)
class CachePeek(CachedMeta):
    """A verified entry's metadata, and its body only if it is kept inline (see :meth:`SpecCache.peek`)."""

    key: str
    meta: Mapping[str, Any]
    #: The body when stored inline; ``None`` when it is stored apart (read it with :meth:`SpecCache.load_body`).
    inline_body: bytes | None
    body_sha256: str | None
    body_size: int


class SpecCache:
    """Bytes-only, integrity-checked access to a diskcache directory, shared by processes."""

    #: Big enough for a handful of the largest specs seen (47 MB) plus indexes.
    SIZE_LIMIT = 4 * 1024**3

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._diskcache: diskcache.Cache | None = None
        self._open_lock = threading.Lock()
        self._readers = threading.local()
        self._reader_cons: list[sqlite3.Connection] = []
        # Opening diskcache writes its settings into the database every time (and so, now and
        # then, a checkpoint with an fsync): a run that only reads an existing cache reads it
        # through read-only SQLite connections instead, and opens diskcache on its first write.
        if not (directory / "cache.db").exists():
            self._cache  # noqa: B018 - create it now: a cache that cannot be created fails here
        self._writer: ThreadPoolExecutor | None = None
        #: Keys whose background write is not known to be finished.
        self._pending: dict[str, Future[bool]] = {}
        self._pending_lock = threading.Lock()
        #: Background writes not known to be done, oldest first, with the bytes each holds.
        self._queued: collections.deque[tuple[Future[bool], int]] = collections.deque()
        self._queued_bytes = 0

    @property
    def _cache(self) -> diskcache.Cache:
        """diskcache, opened on first use (writes, deletes)."""
        with self._open_lock:
            if self._diskcache is None:
                try:
                    dc = _diskcache()
                    self._diskcache = dc.Cache(
                        str(self.directory),
                        disk=_safe_disk,
                        timeout=60,
                        size_limit=self.SIZE_LIMIT,
                        eviction_policy="least-recently-stored",
                        statistics=0,
                        tag_index=0,
                    )
                except (OSError, sqlite3.Error) as exc:
                    raise InputError(f"cannot open the spec cache: {exc}", source=str(self.directory)) from None
            return self._diskcache

    def _get(self, key: str) -> bytes | None:
        """What ``diskcache.Cache.get(key)`` returns for ramscope's rows, read without opening diskcache.

        Raises :class:`UnsafeEntryError` for a row ramscope does not write (pickle and text
        modes, file names diskcache does not make), :class:`sqlite3.Error` when the database
        cannot be read now.
        """
        con = self._reader()
        row = con.execute(
            "SELECT mode, filename, value FROM Cache WHERE key = ? AND raw = 1"
            " AND (expire_time IS NULL OR expire_time > ?)",
            (key, time.time()),
        ).fetchone()
        if row is None:
            return None
        mode, filename, value = row
        if mode == _MODE_BINARY:
            if not isinstance(filename, str) or not _VALUE_FILE.match(filename):
                raise UnsafeEntryError(f"a cache row names the file {filename!r}, not one diskcache made")
            try:
                with open(self.directory / filename, "rb") as fh:
                    return fh.read()
            except FileNotFoundError:
                return None  # deleted since the row was read, as diskcache says
        if mode == _MODE_RAW:
            data = bytes(value) if isinstance(value, memoryview) else value
            if not isinstance(data, bytes):
                raise UnsafeEntryError(f"a cache value of type {type(data).__name__}; ramscope stores only bytes")
            return data
        raise UnsafeEntryError(f"a cache value stored in mode {mode} (pickle or text); ramscope stores only bytes")

    def _reader(self) -> sqlite3.Connection:
        con: sqlite3.Connection | None = getattr(self._readers, "con", None)
        if con is None:
            uri = (self.directory / "cache.db").absolute().as_uri() + "?mode=ro"
            con = sqlite3.connect(uri, uri=True, timeout=60, check_same_thread=False, isolation_level=None)
            self._readers.con = con
            with self._open_lock:
                self._reader_cons.append(con)
        return con

    def load(self, key: str) -> CacheEntry | None:
        """The verified entry, ``None`` if absent; raises :class:`CorruptCacheEntryError` after discarding a bad one.

        A body stored apart is read and verified too; if it is missing or corrupt the entry is discarded.
        """
        peek = self.peek(key)
        if peek is None:
            return None
        if peek.inline_body is not None:
            return CacheEntry(key=key, meta=peek.meta, body=peek.inline_body)
        assert peek.body_sha256 is not None
        try:
            body = self.load_body(peek.body_sha256, peek.body_size)
        except CorruptCacheEntryError as exc:
            self.delete(key)
            raise CorruptCacheEntryError(key, exc.reason) from None
        if body is None:
            self.delete(key)
            raise CorruptCacheEntryError(key, "its separately stored body is gone")
        return CacheEntry(key=key, meta=peek.meta, body=body)

    def _read(self, key: str) -> bytes | None:
        """The row's bytes once no write of it is pending; ``None`` if absent or unreadable now.

        A row ramscope does not write is discarded and raised as :class:`CorruptCacheEntryError`.
        """
        self._wait(key)
        try:
            return self._get(key)
        except UnsafeEntryError as exc:
            self.delete(key)
            raise CorruptCacheEntryError(key, str(exc)) from None
        except (OSError, sqlite3.Error):
            return None  # unreadable now (locked, vanished file): a miss, fetched again

    def peek(self, key: str) -> CachePeek | None:
        """The verified envelope of an entry, without reading a body stored apart; same errors as :meth:`load`."""
        data = self._read(key)
        if data is None:
            return None
        try:
            meta, body = _open(data)
            ref = meta.pop(_BODY_REF, None)
            if ref is None:
                return CachePeek(key, meta, body, None, len(body))
            sha, size = _check_ref(ref)
            if body:
                raise ValueError("it has both an inline body and a reference to one")
        except ValueError as exc:
            self.delete(key)
            raise CorruptCacheEntryError(key, str(exc)) from None
        return CachePeek(key, meta, None, sha, size)

    def load_body(self, sha256: str, size: int) -> bytes | None:
        """A body stored apart, verified against its SHA-256; ``None`` if it is absent.

        Raises :class:`CorruptCacheEntryError` (naming the body's key) after discarding a corrupt one.
        """
        key = _BLOB_PREFIX + sha256
        data = self._read(key)
        if data is None:
            return None
        if len(data) != size or hashlib.sha256(data).hexdigest() != sha256:
            self.delete(key)
            raise CorruptCacheEntryError(key, "SHA-256 mismatch: the stored body changed since it was written")
        return bytes(data)

    def save(self, key: str, meta: Mapping[str, Any], body: bytes, *, body_sha256: str | None = None) -> bool:
        """Store an entry; False (and nothing stored) if the cache cannot be written now.

        Given the body's SHA-256 (hex), a body of :data:`SEPARATE_BODY_BYTES` or more is stored
        apart from the entry, once per content, and the entry refers to it. Those two are written
        in the background: this returns True once they are queued, and reading either key (or
        :meth:`close`) waits until they are written.
        """
        if _BODY_REF in meta:
            raise ValueError(f"{_BODY_REF!r} is reserved in cache metadata")
        if body_sha256 is None or len(body) < SEPARATE_BODY_BYTES:
            self._wait(key)  # after a queued write of the same key, not before it
            return self._set(key, _seal(meta, body))
        blob = _BLOB_PREFIX + body_sha256
        entry = _seal({**meta, _BODY_REF: {"sha256": body_sha256, "size": len(body)}}, b"")
        self._background((key, blob), lambda: self._save_apart(key, blob, body, entry), size=len(body))
        return True

    def _save_apart(self, key: str, blob: str, body: bytes, entry: list[bytes]) -> bool:
        try:
            present = blob in self._cache
        except (OSError, sqlite3.Error, _Timeout, InputError):
            present = False
        # Body first: an entry never refers to a body that was not written. A present body that is
        # corrupt is found when read, and then discarded with the entries that need it.
        if not present and not self._set(blob, [body]):
            return False
        return self._set(key, entry)

    def _background(self, keys: tuple[str, ...], work: Callable[[], bool], *, size: int = 0) -> None:
        # Each queued write holds its body: when fetches outrun the disk, the queue would hold every
        # body of a run (20 specs of 30 MiB: 600 MiB, issue 14). Past QUEUED_BYTES, wait for the oldest.
        while True:
            with self._pending_lock:
                while self._queued and self._queued[0][0].done():
                    self._queued_bytes -= self._queued.popleft()[1]
                if not self._queued or self._queued_bytes + size <= QUEUED_BYTES:
                    break
                oldest = self._queued[0][0]
            with contextlib.suppress(Exception):  # a failed write is a miss, found when read
                oldest.result()
        with self._pending_lock:
            if self._writer is None:
                from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 - only when writing

                # One writer: writes land in the order they were asked for.
                self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ramscope-cache-writer")
            fut = self._writer.submit(work)
            for k in keys:
                self._pending[k] = fut
            self._queued.append((fut, size))
            self._queued_bytes += size

    def _wait(self, key: str) -> None:
        with self._pending_lock:
            fut = self._pending.get(key)
        if fut is not None:
            with contextlib.suppress(Exception):  # a failed write is a miss; it is fetched again
                fut.result()
            with self._pending_lock:
                if self._pending.get(key) is fut:
                    del self._pending[key]

    def _set(self, key: str, parts: list[bytes]) -> bool:
        try:
            self._put(key, parts)
        except (OSError, sqlite3.Error, _Timeout, InputError):
            return False
        return True

    def _put(self, key: str, parts: list[bytes]) -> None:
        if sum(map(len, parts)) >= _MIN_FILE_SIZE:
            # Read in 4 MiB chunks. Given bytes, diskcache would write a large value line by line.
            self._cache.set(key, _PartsReader(parts), read=True, retry=True)
        else:
            self._cache.set(key, b"".join(parts), retry=True)

    def save_many(self, entries: Sequence[tuple[str, Mapping[str, Any], bytes]]) -> bool:
        """Store several entries (bodies kept inline) in one transaction; False if the cache cannot
        be written now (then none of them, or some, are stored: each is whole or absent).

        One transaction per entry costs ~0.3 ms; a batch of 10,000 derived reports paid 3 s for it.
        """
        for key, _, _ in entries:
            self._wait(key)
        try:
            with self._cache.transact(retry=True):
                for key, meta, body in entries:
                    self._put(key, _seal(meta, body))
        except (OSError, sqlite3.Error, _Timeout, InputError):
            return False
        return True

    def delete(self, key: str) -> None:
        self._wait(key)
        with contextlib.suppress(OSError, sqlite3.Error, _Timeout, UnsafeEntryError, InputError):
            self._cache.delete(key, retry=True)

    def flush(self) -> None:
        """Wait for every background write."""
        with self._pending_lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.shutdown(wait=True)
        with self._pending_lock:
            self._pending = {k: f for k, f in self._pending.items() if not f.done()}

    def close(self) -> None:
        self.flush()
        with self._open_lock:
            cons, self._reader_cons = self._reader_cons, []
            dc, self._diskcache = self._diskcache, None
        for con in cons:
            with contextlib.suppress(sqlite3.Error):
                con.close()
        self._readers = threading.local()
        if dc is not None:
            dc.close()


# --------------------------------------------------------------------------- freshness


def parse_cache_control(value: str) -> dict[str, str | None]:
    """``Cache-Control`` directives, names lower-cased, quoted values unquoted."""
    out: dict[str, str | None] = {}
    for part in value.split(","):
        name, eq, arg = part.strip().partition("=")
        name = name.strip().lower()
        if not name:
            continue
        out.setdefault(name, arg.strip().strip('"') if eq else None)
    return out


def _seconds(value: str | None) -> int | None:
    if value is None or not value.strip().isdigit():
        return None
    return int(value.strip())


def _http_date(value: str | None) -> float | None:
    if not value:
        return None
    try:
        import email.utils  # noqa: PLC0415 - only for an Expires header, on a fetch

        return email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def listing_cache_control(ttl_ms: object) -> str | None:
    """The ``Cache-Control`` an MCP listing's ``ttlMs`` (2026-07-28 caching) amounts to, or None when it
    gives none: whole seconds, rounded down (0 = stale at once). :func:`freshness` then applies it,
    bounded by ``--cache-max-ttl`` like any server's word."""
    if not isinstance(ttl_ms, int) or isinstance(ttl_ms, bool) or ttl_ms < 0:
        return None
    return f"max-age={ttl_ms // 1000}"


def freshness(
    headers: Mapping[str, str], *, now: float, default_ttl: float, max_ttl: float | None = None
) -> tuple[bool, float]:
    """``(storable, expires_at)`` for a response received at ``now`` (RFC 9111, simplified).

    ``s-maxage`` wins over ``max-age`` (several processes share one cache
    directory, which makes it a shared cache), then ``Expires`` minus ``Date``,
    then ``default_ttl`` (``--cache-ttl``). ``Age`` is subtracted. ``no-store``
    is not stored; ``no-cache`` is stored but stale at once, so every use
    revalidates. The lifetime is at most ``max_ttl`` (``--cache-max-ttl``) when given.
    """
    cc = parse_cache_control(headers.get("cache-control", ""))
    if "no-store" in cc:
        return False, now
    if "no-cache" in cc:
        return True, now
    lifetime: float | None = None
    for directive in ("s-maxage", "max-age"):
        if directive in cc:
            lifetime = _seconds(cc[directive])
            if lifetime is None:
                lifetime = 0  # unparsable: treat as stale (RFC 9111 4.2.1)
            break
    if lifetime is None and "expires" in headers:
        expires = _http_date(headers["expires"])
        date = _http_date(headers.get("date")) or now
        lifetime = 0 if expires is None else expires - date
    if lifetime is None:
        lifetime = default_ttl
    if max_ttl is not None:
        lifetime = min(lifetime, max_ttl)
    age = _seconds(headers.get("age")) or 0
    return True, now + max(0.0, lifetime - age)
