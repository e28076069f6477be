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
  discards the entry and is reported, and the spec is fetched again.
* **Several processes.** diskcache is SQLite in WAL mode with per-thread
  connections; writes retry while another process holds the lock.

What is *not* defended: someone who can write the cache can feed ramscope any
spec bytes with a valid envelope. The cache is as trusted as the account that
runs ramscope; share a cache directory only between processes you trust.
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import os
import re
import sqlite3
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import diskcache
import orjson

from ..diagnostics import Severity, rule
from ..errors import InputError

__all__ = [
    "CACHE_ENTRY_CORRUPT",
    "CacheEntry",
    "CorruptCacheEntryError",
    "SafeDisk",
    "SpecCache",
    "freshness",
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


class SafeDisk(diskcache.Disk):
    """A diskcache ``Disk`` that only ever returns bytes and never unpickles."""

    def get(self, key: Any, raw: bool) -> Any:
        if not raw:
            raise UnsafeEntryError("a cache key is stored pickled; ramscope never writes such keys")
        return super().get(key, raw)

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
        if read:
            raise UnsafeEntryError("file handles are not used")
        if mode == diskcache.core.MODE_RAW:
            data = bytes(value) if isinstance(value, memoryview) else value
            if not isinstance(data, bytes):
                raise UnsafeEntryError(f"a cache value of type {type(data).__name__}; ramscope stores only bytes")
            return data
        if mode == diskcache.core.MODE_BINARY:
            if not isinstance(filename, str) or not _VALUE_FILE.match(filename):
                raise UnsafeEntryError(f"a cache row names the file {filename!r}, not one diskcache made")
            return super().fetch(mode, filename, value, read)
        raise UnsafeEntryError(f"a cache value stored in mode {mode} (pickle or text); ramscope stores only bytes")

    def remove(self, file_path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> None:
        if isinstance(file_path, str) and _VALUE_FILE.match(file_path):
            super().remove(file_path)


# --------------------------------------------------------------------------- envelope


def _seal(meta: Mapping[str, Any], body: bytes) -> bytes:
    meta_json = orjson.dumps(dict(meta))
    head = _HEADER.pack(_MAGIC, len(meta_json))
    digest = hashlib.sha256()
    for part in (head, meta_json, body):
        digest.update(part)
    return b"".join((head, meta_json, body, digest.digest()))


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


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One verified cache value: ramscope's JSON metadata and the body bytes."""

    key: str
    meta: Mapping[str, Any]
    body: bytes

    @property
    def expires_at(self) -> float | None:
        v = self.meta.get("expires_at")
        return float(v) if isinstance(v, int | float) else None

    def fresh(self, now: float) -> bool:
        exp = self.expires_at
        return exp is not None and now < exp


class SpecCache:
    """Bytes-only, integrity-checked access to a diskcache directory, shared by processes."""

    #: Big enough for a handful of the largest specs seen (47 MB) plus indexes.
    SIZE_LIMIT = 4 * 1024**3

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        try:
            self._cache = diskcache.Cache(
                str(directory),
                disk=SafeDisk,
                timeout=60,
                size_limit=self.SIZE_LIMIT,
                eviction_policy="least-recently-stored",
                statistics=0,
                tag_index=0,
            )
        except (OSError, sqlite3.Error) as exc:
            raise InputError(f"cannot open the spec cache: {exc}", source=str(directory)) from None

    def load(self, key: str) -> CacheEntry | None:
        """The verified entry, ``None`` if absent; raises :class:`CorruptCacheEntryError` after discarding a bad one."""
        try:
            data = self._cache.get(key, default=None, retry=True)
        except UnsafeEntryError as exc:
            self.delete(key)
            raise CorruptCacheEntryError(key, str(exc)) from None
        except (OSError, sqlite3.Error, diskcache.Timeout):
            return None  # unreadable now (locked, vanished file): a miss, fetched again
        if data is None:
            return None
        try:
            meta, body = _open(data)
        except ValueError as exc:
            self.delete(key)
            raise CorruptCacheEntryError(key, str(exc)) from None
        return CacheEntry(key=key, meta=meta, body=body)

    def save(self, key: str, meta: Mapping[str, Any], body: bytes) -> bool:
        """Store an entry; False (and nothing stored) if the cache cannot be written now."""
        try:
            self._cache.set(key, _seal(meta, body), retry=True)
        except (OSError, sqlite3.Error, diskcache.Timeout):
            return False
        return True

    def delete(self, key: str) -> None:
        with contextlib.suppress(OSError, sqlite3.Error, diskcache.Timeout, UnsafeEntryError):
            self._cache.delete(key, retry=True)

    def close(self) -> None:
        self._cache.close()


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
        return email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def freshness(headers: Mapping[str, str], *, now: float, default_ttl: float) -> tuple[bool, float]:
    """``(storable, expires_at)`` for a response received at ``now`` (RFC 9111, simplified).

    ``s-maxage`` wins over ``max-age`` (several processes share one cache
    directory, which makes it a shared cache), then ``Expires`` minus ``Date``,
    then ``default_ttl`` (``--cache-ttl``). ``Age`` is subtracted. ``no-store``
    is not stored; ``no-cache`` is stored but stale at once, so every use
    revalidates.
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
    age = _seconds(headers.get("age")) or 0
    return True, now + max(0.0, lifetime - age)
