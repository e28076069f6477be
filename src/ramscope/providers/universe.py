"""Permission universes: which operations each scope opens across every API of one server.

A scope is granted by an authorization server, not by one API: Google's ``drive.file`` opens 142
methods across Google, although inside the Sheets document it looks exactly like ``spreadsheets``
(31 across Google). A :class:`Universe` holds, for one canonical authorization server, every
operation known to accept its scopes and the alternatives (AND-sets of scopes) that authorize each.
``privilege`` joins it with the card's own specs to compute blast radii.

Universes are data, compiled ahead of time (``scripts/build_providers.py``) into a small JSON
document, gzip-compressed and shipped in ``ramscope/providers/data/``. Loading one is lazy (only
when a scope of its server is involved) and decodes only the scopes asked for. This module never
touches the network: a refresh (``ramscope universe refresh``) fetches through the spec store and
hands the documents to :func:`build_google`.

Compiled form (``format`` 1)::

    {"format": 1, "kind": "universe", "name": "google", "server": "https://accounts.google.com",
     "version": "...", "source": {...}, "apis": [api names], "ops": [operation ids],
     "op_api": [index into apis, one per operation],
     "alternatives": [[[scope, ...], [delta-encoded operation positions]], ...]}
"""

from __future__ import annotations

import gzip
import hashlib
import zlib
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate
from typing import Any

import orjson

from ..errors import RamscopeError
from .authserver import GOOGLE

__all__ = ["FORMAT", "Universe", "UniverseError", "build_google", "decode", "encode"]

FORMAT = 1

#: Bounds on a compiled universe (a refreshed one comes from the network).
MAX_OPERATIONS = 500_000
MAX_ALTERNATIVES = 100_000
MAX_COMPRESSED_BYTES = 64 * 1024 * 1024


class UniverseError(RamscopeError, ValueError):
    """A compiled universe that is malformed or of another format (one line from the CLI, no traceback)."""

    code = "universe-invalid"


@dataclass(frozen=True)
class Universe:
    """One authorization server's operations and the scope sets that authorize them."""

    name: str
    server: str
    version: str
    source: Mapping[str, Any]
    apis: tuple[str, ...]
    ops: tuple[str, ...]
    op_api: tuple[int, ...]
    #: ((namespace, scope) pairs ANDed, positions of the operations they authorize), in compiled order.
    alternatives: tuple[tuple[frozenset[tuple[str, str]], tuple[int, ...]], ...]
    #: Scope descriptions where the source gives them (optional).
    descriptions: Mapping[str, str] = field(default_factory=dict)

    @cached_property
    def positions(self) -> dict[str, int]:
        return {op: i for i, op in enumerate(self.ops)}

    @cached_property
    def by_scope(self) -> dict[tuple[str, str], list[int]]:
        out: dict[tuple[str, str], list[int]] = {}
        for j, (scopes, _) in enumerate(self.alternatives):
            for s in scopes:
                out.setdefault(s, []).append(j)
        return out

    @cached_property
    def home_api(self) -> dict[tuple[str, str], str]:
        """Each scope's home: the API with the most of the operations it opens alone."""
        out: dict[tuple[str, str], str] = {}
        for scopes, pos in self.alternatives:
            if len(scopes) != 1:
                continue
            (scope,) = scopes
            counts: dict[int, int] = {}
            for p in pos:
                a = self.op_api[p]
                counts[a] = counts.get(a, 0) + 1
            if counts:
                best = max(sorted(counts), key=lambda a: counts[a])
                out[scope] = self.apis[best]
        return out

    @cached_property
    def _alone(self) -> dict[tuple[str, str], tuple[int, ...]]:
        """The operations each scope opens on its own."""
        out: dict[tuple[str, str], list[int]] = {}
        for scopes, pos in self.alternatives:
            if len(scopes) == 1:
                out.setdefault(next(iter(scopes)), []).extend(pos)
        return {k: tuple(v) for k, v in out.items()}

    @cached_property
    def _api_sizes(self) -> dict[int, int]:
        sizes: dict[int, int] = {}
        for a in self.op_api:
            sizes[a] = sizes.get(a, 0) + 1
        return sizes

    @cached_property
    def family_home(self) -> dict[str, str]:
        """A scope family's API (the family: a Google scope's first name segment, ``devstorage`` of
        ``devstorage.read_only``): the API of that very name (``bigquery``), else the one where the
        family's scopes open most operations, if that is most of them (``devstorage``: ``storage``).
        A family spread over many APIs (``cloud-platform``) has none."""
        names = set(self.apis)
        counts: dict[str, dict[int, int]] = {}
        for key, pos in self._alone.items():
            fam = _family(key[1])
            if not fam:
                continue
            per = counts.setdefault(fam, {})
            for p in pos:
                per[self.op_api[p]] = per.get(self.op_api[p], 0) + 1
        out: dict[str, str] = {}
        for fam, per in counts.items():
            if fam in names:
                out[fam] = fam
                continue
            best = max(sorted(per), key=lambda a: per[a])
            if per[best] * 2 > sum(per.values()):
                out[fam] = self.apis[best]
        return out

    def part_of(self, key: tuple[str, str], api: str) -> str | None:
        """The other API whose part of an ``api`` operation the scope ``key`` does, if it is that API's:
        its family's API is another one and the family's scopes open at most a quarter of ``api``'s
        operations (Cloud Storage's ``devstorage.*`` open 1 of BigQuery's 47 methods: the objects a job
        reads; Drive's open all 17 of Sheets': a spreadsheet is a Drive file, so they do the job)."""
        fam = _family(key[1])
        home = self.family_home.get(fam)
        if home is None or home == api or api not in self.apis:
            return None
        a = self.apis.index(api)
        return home if self._family_ops(fam, a) * 4 <= self._api_sizes.get(a, 0) else None

    @cached_property
    def _family_memo(self) -> dict[tuple[str, int], int]:
        return {}

    def _family_ops(self, fam: str, api: int) -> int:
        """How many of API ``api``'s operations the family's scopes open on their own."""
        memo = self._family_memo
        if (fam, api) not in memo:
            opened = {p for k, pos in self._alone.items() if _family(k[1]) == fam for p in pos if self.op_api[p] == api}
            memo[(fam, api)] = len(opened)
        return memo[(fam, api)]

    def api_of(self, operation_id: str) -> str | None:
        p = self.positions.get(operation_id)
        return self.apis[self.op_api[p]] if p is not None else None

    def summary(self) -> dict[str, Any]:
        """What a report says of the universe it used."""
        return {
            "name": self.name,
            "server": self.server,
            "version": self.version,
            "operations": len(self.ops),
            "source": dict(self.source),
        }


def _family(scope: str) -> str:
    """A Google scope's family (``devstorage`` of ``.../auth/devstorage.read_only``), or ``""``."""
    prefix = "https://www.googleapis.com/auth/"
    if not scope.startswith(prefix):
        return ""
    return scope[len(prefix) :].split(".", 1)[0]


# --------------------------------------------------------------------------- codec


def encode(u: Universe) -> bytes:
    """The compiled form of a single-server universe (every scope in ``u.server``'s namespace)."""
    if any(ns != u.server for s, _ in u.alternatives for ns, _ in s):
        raise UniverseError("only a universe of one namespace has a compiled form")
    body = {
        "format": FORMAT,
        "kind": "universe",
        "name": u.name,
        "server": u.server,
        "version": u.version,
        "source": dict(u.source),
        "apis": list(u.apis),
        "ops": list(u.ops),
        "op_api": list(u.op_api),
        "alternatives": [[sorted(scope for _, scope in s), _deltas(pos)] for s, pos in u.alternatives],
        "descriptions": dict(sorted(u.descriptions.items())),
    }
    return gzip.compress(orjson.dumps(body), compresslevel=9, mtime=0)


def decode(data: bytes) -> Universe:
    """The universe in ``data`` (gzip-compressed JSON), checked; :class:`UniverseError` otherwise."""
    if len(data) > MAX_COMPRESSED_BYTES:
        raise UniverseError(f"compiled universe of {len(data)} bytes exceeds {MAX_COMPRESSED_BYTES}")
    try:
        raw = orjson.loads(_gunzip(data))
    except (zlib.error, orjson.JSONDecodeError) as exc:
        raise UniverseError(f"not a compiled universe: {exc}") from exc
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or raw.get("kind") != "universe":
        got = raw.get("format") if isinstance(raw, dict) else type(raw).__name__
        raise UniverseError(f"compiled universe of another format: {got!r}")
    try:
        ops = tuple(_strs(raw["ops"]))
        apis = tuple(_strs(raw["apis"]))
        op_api = tuple(int(i) for i in raw["op_api"])
        if len(ops) > MAX_OPERATIONS or len(op_api) != len(ops) or any(not 0 <= i < len(apis) for i in op_api):
            raise UniverseError("operations and their APIs disagree")
        alts_raw = raw["alternatives"]
        if len(alts_raw) > MAX_ALTERNATIVES:
            raise UniverseError(f"{len(alts_raw)} alternatives exceed {MAX_ALTERNATIVES}")
        server = str(raw["server"])
        alts: list[tuple[frozenset[tuple[str, str]], tuple[int, ...]]] = []
        for scopes, deltas in alts_raw:
            pos = tuple(_undelta(deltas))
            if pos and (pos[0] < 0 or pos[-1] >= len(ops)):
                raise UniverseError("an alternative names an operation out of range")
            alts.append((frozenset((server, s) for s in _strs(scopes)), pos))
        descriptions = {str(k): str(v) for k, v in (raw.get("descriptions") or {}).items()}
        return Universe(
            name=str(raw["name"]),
            server=server,
            version=str(raw["version"]),
            source=dict(raw.get("source") or {}),
            apis=apis,
            ops=ops,
            op_api=op_api,
            alternatives=tuple(alts),
            descriptions=descriptions,
        )
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, UniverseError):
            raise
        raise UniverseError(f"malformed compiled universe: {exc!r}") from exc


def _gunzip(data: bytes) -> bytes:
    # Bounded: a refreshed universe comes from the network, and gzip bombs are cheap to make.
    limit = 16 * MAX_COMPRESSED_BYTES
    d = zlib.decompressobj(wbits=31)
    out = d.decompress(data, limit + 1)
    if len(out) > limit:
        raise UniverseError(f"compiled universe inflates beyond {limit} bytes")
    if not d.eof:
        raise UniverseError("compiled universe is truncated")
    return out


def _strs(items: Any) -> Iterator[str]:
    for x in items:
        if not isinstance(x, str):
            raise UniverseError(f"expected a string, got {type(x).__name__}")
        yield x


def _deltas(positions: Sequence[int]) -> list[int]:
    out: list[int] = []
    prev = 0
    for p in positions:
        out.append(p - prev)
        prev = p
    return out


def _undelta(deltas: Iterable[Any]) -> list[int]:
    """Positions from their gaps (the first from 0). Checked and summed in C: a warm run into
    Graph decodes tens of thousands of them."""
    try:
        gaps = array("q", deltas)  # integers only (no floats, strings, or ints past 64 bits)
    except (TypeError, OverflowError, ValueError):
        raise UniverseError("positions must be ascending integers") from None
    if gaps and min(gaps) < 0:
        raise UniverseError("positions must be ascending integers")
    return list(accumulate(gaps))


# --------------------------------------------------------------------------- Google


def build_google(docs: Iterable[Mapping[str, Any]], *, source: Mapping[str, Any]) -> Universe:
    """Google's universe from Discovery documents (any number, any versions).

    A method id names one method across versions (``compute.instances.delete`` in ``alpha``,
    ``beta`` and ``v1``): it is one operation, opened by the union of the scopes its versions
    accept, since a token with any of them reaches it in some version. Methods without scopes are
    left out (they do not discriminate between choices).
    """
    scopes_of: dict[str, set[str]] = {}
    api_of: dict[str, str] = {}
    descriptions: dict[str, str] = {}
    for doc in docs:
        name = doc.get("name")
        if not isinstance(name, str):
            continue
        auth = doc.get("auth")
        scopes = auth.get("oauth2", {}).get("scopes") if isinstance(auth, dict) else None
        if isinstance(scopes, dict):
            for s, info in scopes.items():
                d = info.get("description") if isinstance(info, dict) else None
                if isinstance(s, str) and isinstance(d, str) and s not in descriptions:
                    descriptions[s] = d
        stack: list[Mapping[str, Any]] = [doc]
        depth = 0
        while stack and depth < 1_000_000:
            depth += 1
            node = stack.pop()
            methods = node.get("methods")
            if isinstance(methods, dict):
                for m in methods.values():
                    if not isinstance(m, dict):
                        continue
                    mid = m.get("id")
                    ms = m.get("scopes")
                    if not isinstance(mid, str) or not isinstance(ms, list):
                        continue
                    got = {s for s in ms if isinstance(s, str)}
                    if got:
                        scopes_of.setdefault(mid, set()).update(got)
                        api_of.setdefault(mid, name)
            resources = node.get("resources")
            if isinstance(resources, dict):
                stack.extend(r for r in resources.values() if isinstance(r, dict))
    ops = sorted(scopes_of)
    apis = sorted(set(api_of.values()))
    api_pos = {a: i for i, a in enumerate(apis)}
    by_scope: dict[str, list[int]] = {}
    for i, op in enumerate(ops):
        for s in scopes_of[op]:
            by_scope.setdefault(s, []).append(i)
    alternatives = tuple((frozenset({(GOOGLE, s)}), tuple(pos)) for s, pos in sorted(by_scope.items()))
    digest = hashlib.sha256(orjson.dumps([ops, [[s, p] for s, p in sorted(by_scope.items())]])).hexdigest()[:12]
    date = str(source.get("date", ""))
    return Universe(
        name="google",
        server=GOOGLE,
        version=f"{date}+{digest}" if date else digest,
        source=dict(source),
        apis=tuple(apis),
        ops=tuple(ops),
        op_api=tuple(api_pos[api_of[op]] for op in ops),
        alternatives=alternatives,
        descriptions=descriptions,
    )
