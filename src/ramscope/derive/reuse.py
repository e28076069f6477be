"""Reusing a report derived by an earlier run, when nothing it was derived from has changed.

Registries re-derive thousands of cards, most of them unchanged, against specs that mostly have
not changed either. A report is a function of: the card's bytes and the name it was read under,
the run's settings and policy, ramscope's own code (and the parsers it relies on), and the state
of every spec its derivation obtained from the store (the card's specs, files their ``$ref``s
pulled in, remote agents' cards and *their* specs). ``derive`` stores each report under a key of
the first four, with the state of each spec it read; a later run with the same key asks the
store for each of those specs again (so freshness, revalidation and offline rules apply exactly
as for a derivation) and reuses the report only if every one is in the same state: same content,
origin, fetch time, provenance and fetch diagnostics, or the same fetch error. Anything else, and
the card is derived again.

The state compared is everything the store says of a spec except its body, whose SHA-256 stands
for it; a report that reads "origin: cache" is therefore only reused while the spec still comes
from the cache. ``--no-reuse`` (``Settings.reuse = False``) derives every card.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.machinery
import sys
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any

import orjson

from .._version import __version__
from ..config import Settings
from ..errors import FetchError
from ..specs.model import SpecKind
from ..store.model import FetchedSpec
from .policy import Policy

__all__ = ["MAX_STORED_BYTES", "NAMESPACE", "Entry", "card_key", "decode", "encode", "run_key", "spec_state"]

#: The artifact namespace of stored reports in the spec cache.
NAMESPACE = "report"
_FORMAT = 1
#: Reports larger than this (compact JSON) are not stored: a card of tens of thousands of accesses
#: is not what reuse is for, and storing it would hold a second copy of its report in memory.
MAX_STORED_BYTES = 16 * 1024 * 1024
#: Settings that change how a run goes, not what it derives.
_OPERATIONAL = frozenset({"jobs", "progress", "reuse", "cache_dir"})
#: Libraries whose behaviour shapes a report besides ramscope's own code: the YAML parsers
#: (rapidyaml, and libyaml behind PyYAML), the JSON parser (numbers), and the strict validators
#: behind --validate-specs.
_LIBRARIES = ("yaml", "ryml", "orjson", "openapi_spec_validator", "jsonschema")

#: One spec the report depends on: (URL, kind hint, digest of its state).
Dep = tuple[str, SpecKind | None, str]


@dataclass(frozen=True, slots=True)
class Entry:
    """A stored report: its exit code, the specs it depends on, and its compact JSON."""

    exit_code: int
    deps: tuple[Dep, ...]
    report: bytes


def run_key(settings: Settings, policy: Policy, providers: Mapping[str, str] | None = None) -> str:
    """What every report of a run depends on besides its card and its specs: ramscope's code, the
    settings, the policy, and the provider snapshots (universes, catalogs) by version."""
    parts = {
        "providers": dict(providers or {}),
        "format": _FORMAT,
        "code": _code_fingerprint(),
        "settings": {
            f.name: _plain(getattr(settings, f.name))
            for f in dataclasses.fields(settings)
            if f.name not in _OPERATIONAL
        },
        # repr: every field of the frozen policy (pins, excludes, preferences, their source).
        "policy": repr(policy),
    }
    return hashlib.sha256(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)).hexdigest()


def card_key(run: str, label: str, card_sha256: str) -> str:
    # The label is in the report (card.source), so the same bytes under another name are another report.
    return hashlib.sha256(f"{run}\0{label}\0{card_sha256}".encode("utf-8", "surrogatepass")).hexdigest()


def spec_state(result: FetchedSpec | FetchError) -> str:
    """A digest of everything the store said of a spec, body aside (its SHA-256 stands for it)."""
    if isinstance(result, FetchError):
        state: dict[str, Any] = {"error": type(result).__name__, "code": result.code, "message": str(result)}
    else:
        state = {
            f.name: _plain(getattr(result, f.name)) for f in dataclasses.fields(result) if not f.name.startswith("_")
        }
        state["diagnostics"] = [d.to_dict() for d in result.diagnostics]
    data = orjson.dumps(state, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=repr)
    return hashlib.sha256(data).hexdigest()


def encode(exit_code: int, deps: Iterable[Dep], report: bytes) -> bytes:
    plain = sorted({(url, kind.value if kind is not None else None, state) for url, kind, state in deps}, key=str)
    header = orjson.dumps({"v": _FORMAT, "exit_code": exit_code, "deps": plain})
    return zlib.compress(header + b"\n" + report, 1)


def decode(data: bytes) -> Entry | None:
    """The entry, or ``None`` for anything malformed (the card is then simply derived again)."""
    try:
        header, _, report = zlib.decompress(data).partition(b"\n")
        h = orjson.loads(header)
        if h["v"] != _FORMAT or type(h["exit_code"]) is not int or not report:
            return None
        deps: list[Dep] = []
        for url, kind, state in h["deps"]:
            if not (isinstance(url, str) and isinstance(state, str) and (kind is None or isinstance(kind, str))):
                return None
            deps.append((url, SpecKind(kind) if kind is not None else None, state))  # ValueError: unknown kind
        return Entry(h["exit_code"], tuple(deps), report)
    except (zlib.error, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


@cache
def _code_fingerprint() -> str:
    """ramscope's code and the libraries that shape its results: name, size and mtime of each file.

    Stat, not content: reading ~60 files on every run would cost more than the reuse saves on a
    small batch, and an edit or an install changes the mtime.
    """
    h = hashlib.sha256(f"{__version__}\0{sys.version}\0".encode())
    root = Path(__file__).resolve().parent
    for path in sorted([*root.rglob("*.py"), *root.rglob("*.json")]):
        st = path.stat()
        h.update(f"{path.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode("utf-8", "surrogatepass"))
    for name in _LIBRARIES:
        # PathFinder, not importlib.util.find_spec: that module alone took 3 ms to import.
        spec = importlib.machinery.PathFinder.find_spec(name)
        origin = spec.origin if spec is not None else None
        if origin and Path(origin).exists():
            st = Path(origin).stat()
            h.update(f"{name}\0{origin}\0{st.st_size}\0{st.st_mtime_ns}\0".encode("utf-8", "surrogatepass"))
        else:
            h.update(f"{name}\0absent\0".encode())
    return h.hexdigest()


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path | datetime):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [_plain(v) for v in value]
    return value
