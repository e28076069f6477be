"""The compact form of a cached :class:`SpecIndex`: decoded lazily, one operation at a time.

A warm run resolves a handful of operations, but Graph beta's index holds 22,000. Decoding
all of them into dataclasses costs more than everything else a warm run does, so the cached
form is split into sections that are decoded only when asked for::

    b"RSIX" u32 version u32 count  (u32 offset, u32 length) * count  section ...

    0 header   JSON: the index without its operations, the number of operations, the
               distinct requirement sets, what the cache check needs (built_from, deps)
    1 ids      hash table: operation id -> positions
    2 paths    hash table: "METHOD normalised-path" -> positions, every spelling of each path
               but those that are a base path plus the path's own (see _prefixable)
    3 groups   u32 per operation: its requirement set (index into the header's list)
    4 offsets  u32 per block of 256 operations, plus one: where it starts in section 5
    5 records  per block, a zlib-compressed JSON array of one array (a record) per operation

A hash table is searched in place, never decoded whole (Graph beta has 22,000 ids and
45,000 path spellings), and holds no keys: a key's CRC-32 finds the candidate operations
(bisection over the sorted hashes), whose records then confirm it, so a collision costs
one more record decoded, never a wrong answer::

    u32 n  u32 hash[n] (sorted)  u32 value_end[n]  u32 positions

Integers are little-endian, sections 8-aligned. The bytes are integrity-checked by the
cache envelope before they get here (a SHA-256 over all of them, which is why they are
kept small); :func:`decode` checks the header and the sizes and ends of every table, so
an artefact of another layout is rejected (and rebuilt); it does not walk every offset,
which would cost a warm run as much as the look-ups it saves. The :class:`SpecIndex` it
returns is an ordinary one whose ``operations`` is a :class:`CompactOperations`: a
read-only sequence that decodes records on demand and answers the look-ups
(``by_operation_id``, ``by_method_path``, ``requirement_groups``) from these sections.
"""

from __future__ import annotations

import struct
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from itertools import accumulate, chain
from typing import Any

import orjson

from ..diagnostics import Diagnostic
from .model import (
    OperationEntry,
    OperationTable,
    RequirementGroups,
    Requirements,
    Row,
    RowOperations,
    SpecIndex,
    SpecKind,
    bitmask,
    entry_row,
    normalize_path,
    path_spellings,
    reqs_from_json,
    reqs_to_json,
    scheme_from_dict,
    scheme_to_dict,
    standard_pointer,
)

__all__ = ["COMPACT_VERSION", "CompactError", "CompactOperations", "decode", "encode"]

MAGIC = b"RSIX"
#: Bump with any change of the layout (the index format version is in the cache key too).
COMPACT_VERSION = 5
_HEAD = struct.Struct("<4sII")
_SECTION = struct.Struct("<II")
_SECTIONS = 6
_U32 = "I"
#: Operations per record block. Encoded a block at a time (one call per block, not per
#: operation) and compressed (JSON records shrink about 9x: Graph beta's 6.5 MB of records
#: to 0.7 MB, which is what a warm run must read and verify), a block decodes in about a
#: millisecond when one of its operations is first asked for.
BLOCK = 256


def encode(index: SpecIndex, *, built_from: str, deps: Sequence[tuple[str, str]]) -> bytes:
    """The compact bytes of ``index`` (see the module docstring)."""
    if array(_U32).itemsize != 4:  # pragma: no cover - every platform CPython runs on
        raise RuntimeError("array('I') is not 32 bits here")
    ops = index.operations
    # A fresh OpenAPI index holds rows already: encoded as they are, no entry made for them.
    rows: Sequence[Row] = ops.rows if isinstance(ops, RowOperations) else [entry_row(op) for op in ops]
    group_ids: dict[Any, int] = {}
    # Operations share their requirement tuples (adapters cache them): looked up by identity first,
    # which spares hashing nested tuples 22,000 times.
    group_by_id: dict[int, tuple[Any, int]] = {}
    group_reqs: list[Any] = []
    groups = array(_U32)
    # Tables keyed by hash: keys that collide share a list (of increasing positions, each once).
    ids: dict[int, list[int]] = {}
    paths: dict[int, list[int]] = {}
    bases = list(index.base_paths)
    base_at = {b: n for n, b in reversed(list(enumerate(bases, start=1)))}
    blocks: list[bytes] = []
    block: list[list[Any]] = []
    # The methods of one path, and one base path, share their spellings: normalised and encoded once.
    spelled: dict[str, bytes] = {}
    prefixable_paths: dict[str, bool] = {}
    method_crc: dict[str, int] = {}
    clean_bases = {b for b in bases if _clean_base(b)}
    crc32 = _crc32
    for i, row in enumerate(rows):
        key, op_id, method, path, full, alt, reqs, source, title, description, deprecated, extra, pointer = row
        hit = group_by_id.get(id(reqs))
        if hit is not None and hit[0] is reqs:
            g = hit[1]
        else:
            found = group_ids.get(reqs)
            if found is None:
                found = group_ids[reqs] = len(group_reqs)
                group_reqs.append(reqs_to_json(reqs))
            g = found
            group_by_id[id(reqs)] = (reqs, g)
        groups.append(g)
        if op_id:
            h = crc32(op_id.encode("utf-8", "surrogatepass"))
            filed = ids.get(h)
            if filed is None:
                ids[h] = [i]
            elif filed[-1] != i:
                filed.append(i)
        mc = method_crc.get(method)
        if mc is None:  # _hash(f"{method} {path}"), computed as a continuation of the method's CRC
            mc = method_crc[method] = crc32(f"{method} ".encode("utf-8", "surrogatepass"))
        prefixable = False
        if path:
            known = prefixable_paths.get(path)
            if known is None:
                own = spelled[path] = normalize_path(path).encode("utf-8", "surrogatepass")
                known = prefixable_paths[path] = _prefixable(path, own)
            prefixable = known
        seen: list[bytes] = []
        for p in (path, full, *alt) if alt else (path, full):  # what path_spellings() gives
            if not p:
                continue
            if prefixable and p is not path and p.endswith(path) and p[: len(p) - len(path)] in clean_bases:
                continue  # a clean base + the path: found through the base (see _prefixable)
            nb = spelled.get(p)
            if nb is None:
                nb = spelled[p] = normalize_path(p).encode("utf-8", "surrogatepass")
            if nb not in seen:
                seen.append(nb)
                h = crc32(nb, mc)
                filed = paths.get(h)
                if filed is None:
                    paths[h] = [i]
                elif filed[-1] != i:
                    filed.append(i)
        # The record (see "records" below): what equals its usual value is written as 0 or null.
        if full == path:
            full_field: Any = 0
        elif path and full.endswith(path) and (n := base_at.get(full[: len(full) - len(path)])):
            full_field = n
        else:
            full_field = full
        if pointer is not None and pointer == standard_pointer(path, method):
            pointer = None
        block.append(
            [
                key,
                0 if op_id == key else op_id,
                method,
                path,
                full_field,
                list(alt) if alt else 0,
                g,
                source,
                title,
                description,
                1 if deprecated else 0,
                dict(extra) if extra else 0,
                pointer,
            ]
        )
        if len(block) == BLOCK:
            blocks.append(zlib.compress(orjson.dumps(block), 1))
            block = []
    if block:
        blocks.append(zlib.compress(orjson.dumps(block), 1))
    header = {
        "built_from": built_from,
        "deps": [list(d) for d in deps],
        "n_ops": len(ops),
        "groups": group_reqs,
        "index": {
            "kind": index.kind.value,
            "url": index.url,
            "sha256": index.sha256,
            "title": index.title,
            "version": index.version,
            "spec_version": index.spec_version,
            "base_paths": bases,
            "security_declared": index.security_declared,
            "schemes": [scheme_to_dict(s) for s in index.schemes],
            "diagnostics": [d.to_dict() for d in index.diagnostics],
            "extra": dict(index.extra),
        },
    }
    offsets = array(_U32, accumulate(map(len, blocks), initial=0))
    little = struct.pack("=I", 1) == struct.pack("<I", 1)
    sections: list[list[bytes]] = [
        [orjson.dumps(header)],
        [_pack_table(ids, little)],
        [_pack_table(paths, little)],
        [groups.tobytes() if little else _swapped(groups)],
        [offsets.tobytes() if little else _swapped(offsets)],
        blocks,  # joined once, with everything else, below
    ]
    # Each section starts 8-aligned, so the integer tables can be read in place.
    out: list[bytes] = [b""]
    at = _HEAD.size + _SECTION.size * len(sections)
    table = bytearray(_HEAD.pack(MAGIC, COMPACT_VERSION, len(sections)))
    for parts in sections:
        pad = -at % 8
        out.append(b"\0" * pad)
        at += pad
        length = sum(map(len, parts))
        table += _SECTION.pack(at, length)
        out.extend(parts)
        at += length
    out[0] = bytes(table)
    return b"".join(out)


class CompactError(ValueError):
    """The bytes are not a compact index this version can read."""


def decode(data: bytes) -> tuple[SpecIndex, str, list[tuple[str, str]]]:
    """``(index, built_from, deps)``; raises :class:`CompactError` for anything malformed."""
    view = memoryview(data)
    try:
        magic, version, count = _HEAD.unpack_from(view)
    except struct.error:
        raise CompactError("truncated") from None
    if magic != MAGIC or version != COMPACT_VERSION or count != _SECTIONS:
        raise CompactError("not a compact index of this version")
    sections: list[memoryview] = []
    for k in range(count):
        try:
            at, length = _SECTION.unpack_from(view, _HEAD.size + k * _SECTION.size)
        except struct.error:
            raise CompactError("truncated section table") from None
        if at + length > len(view):
            raise CompactError("a section runs past the end")
        sections.append(view[at : at + length])
    try:
        header = orjson.loads(sections[0])
        d = header["index"]
        n_ops = int(header["n_ops"])
        group_reqs = [reqs_from_json(r) for r in header["groups"]]
        built_from = str(header["built_from"])
        deps = [(str(u), str(h)) for u, h in header["deps"]]
        kind = SpecKind(d["kind"])
        base_paths = tuple(str(b) for b in d["base_paths"])
        schemes = tuple(scheme_from_dict(s) for s in d["schemes"])
        diagnostics = tuple(Diagnostic.from_dict(x) for x in d["diagnostics"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise CompactError(f"bad header: {exc}") from None
    groups = _u32s(sections[3], n_ops)
    offsets = _u32s(sections[4], -(-n_ops // BLOCK) + 1)
    records = sections[5]
    if offsets[0] != 0 or offsets[-1] != len(records):
        raise CompactError("record offsets do not span the records")
    ops = CompactOperations(
        n_ops, group_reqs, groups, offsets, records, _Table(sections[1]), _Table(sections[2]), base_paths
    )
    index = SpecIndex(
        kind=kind,
        url=str(d["url"]),
        sha256=str(d["sha256"]),
        title=str(d.get("title", "")),
        version=str(d.get("version", "")),
        spec_version=str(d.get("spec_version", "")),
        base_paths=base_paths,
        operations=ops,
        schemes=schemes,
        security_declared=bool(d.get("security_declared", True)),
        diagnostics=diagnostics,
        extra=dict(d.get("extra") or {}),
    )
    return index, built_from, deps


def _u32s(section: memoryview, n: int) -> memoryview:
    if len(section) != 4 * n or n < 0:
        raise CompactError("an integer table has the wrong length")
    if struct.pack("=I", 1) != struct.pack("<I", 1):  # pragma: no cover - big-endian hosts
        a = array(_U32, section.tobytes())
        a.byteswap()
        return memoryview(a.tobytes()).cast("I")
    return section.cast("I")


def _swapped(a: array[int]) -> bytes:  # pragma: no cover - big-endian hosts
    b = array(_U32, a)
    b.byteswap()
    return b.tobytes()


#: The tables' hash: CRC-32, chained (crc32(b"GET " + path) == crc32(path, crc32(b"GET "))).
_crc32 = zlib.crc32


def _hash(key: str) -> int:
    return _crc32(key.encode("utf-8", "surrogatepass"))


def _clean_base(base: str) -> bool:
    """A base path that normalisation leaves as it is, and that no neighbour can change."""
    return (
        len(base) > 1
        and base.startswith("/")
        and not base.endswith("/")
        and base == base.strip()
        and "//" not in base
        and "{" not in base
        and "}" not in base
    )


def _prefixable(path: str, normalized: bytes) -> bool:
    """Whether ``normalize_path(base + path) == base + normalize_path(path)`` for every clean base.

    True when the path starts with "/", has no surrounding whitespace, and does not normalise
    to "/" (``normalized`` is its normal form, encoded): normalisation then never reaches
    across the junction (a property test checks it). Such base + path spellings are not filed
    in the path table; a look-up finds them by trying the spelling with each clean base prefix
    removed, and confirms every candidate against its record.
    """
    return path.startswith("/") and path == path.strip() and normalized != b"/"


def _pack_table(table: dict[int, list[int]], little: bool) -> bytes:
    """A hash table (see the module docstring): hashes sorted, positions in the same order."""
    order = sorted(table)
    values = [table[h] for h in order]
    hashes = array(_U32, order)
    value_end = array(_U32, accumulate(map(len, values)))
    positions = array(_U32, chain.from_iterable(values))
    ints = [hashes, value_end, positions]
    parts = [a.tobytes() for a in ints] if little else [_swapped(a) for a in ints]
    return b"".join([struct.pack("<I", len(order)), *parts])


class _Table:
    """A hash table read in place: the positions filed under a key's CRC-32 (candidates, to confirm)."""

    def __init__(self, section: memoryview) -> None:
        if len(section) < 4:
            raise CompactError("a hash table is truncated")
        n = int(struct.unpack_from("<I", section)[0])
        self._hashes = _u32s(section[4 : 4 + 4 * n], n)
        self._value_end = _u32s(section[4 + 4 * n : 4 + 8 * n], n)
        n_values = self._value_end[-1] if n else 0
        self._values = _u32s(section[4 + 8 * n :], n_values)

    def candidates(self, key: str) -> list[int]:
        """Positions filed under the key's hash, in spec order; some may belong to another key."""
        h = _hash(key)
        i = bisect_left(self._hashes, h)
        if i == len(self._hashes) or self._hashes[i] != h:
            return []
        return list(self._values[self._value_end[i - 1] if i else 0 : self._value_end[i]])


# --------------------------------------------------------------------------- records

# Record fields, in order: key, operation id (0: same as key), method, path, full path (0: the
# path; n: base_paths[n-1] + path; else the string), alternative paths (0: none), requirement
# set, security source, title, description, deprecated (0/1), extra (0: none), pointer (null:
# "/paths/<escaped path>/<method>", the usual OpenAPI location).


def _entry(r: list[Any], requirements: Requirements | None, bases: tuple[str, ...]) -> OperationEntry:
    key, op_id, method, path, full, alt, _, source, title, description, deprecated, extra, pointer = r
    if full == 0:
        full = path
    elif isinstance(full, int):
        full = bases[full - 1] + path
    return OperationEntry(
        key=key,
        operation_id=key if op_id == 0 else op_id,
        method=method,
        path=path,
        full_path=full,
        alt_paths=tuple(alt) if alt else (),
        requirements=requirements,
        security_source=source,
        title=title,
        description=description,
        deprecated=bool(deprecated),
        extra=dict(extra) if extra else {},
        pointer=standard_pointer(path, method) if pointer is None else pointer,
    )


class CompactOperations(OperationTable):
    """The operations of a cached index, decoded one at a time when first asked for."""

    def __init__(
        self,
        n: int,
        group_reqs: list[Requirements | None],
        groups: memoryview,
        offsets: memoryview,
        records: memoryview,
        ids: _Table,
        paths: _Table,
        bases: tuple[str, ...],
    ) -> None:
        self._n = n
        self._group_reqs = group_reqs
        self._groups = groups
        self._offsets = offsets
        self._records = records
        self._ids = ids
        self._paths = paths
        self._bases = bases
        self._decoded: dict[int, OperationEntry] = {}
        self._blocks: dict[int, list[Any]] = {}
        self.clean_bases = [b for b in bases if _clean_base(b)]

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        return f"<CompactOperations: {self._n} operations, {len(self._decoded)} decoded>"

    @property
    def decoded(self) -> int:
        """How many operations have been decoded so far."""
        return len(self._decoded)

    def _at(self, k: int) -> OperationEntry:
        hit = self._decoded.get(k)
        if hit is None:
            b = k // BLOCK
            block = self._blocks.get(b)
            if block is None:
                raw = zlib.decompress(self._records[self._offsets[b] : self._offsets[b + 1]])
                block = self._blocks[b] = orjson.loads(raw)
            hit = self._decoded[k] = _entry(block[k % BLOCK], self._group_reqs[self._groups[k]], self._bases)
        return hit

    # ---- the lookups SpecIndex asks an OperationTable for

    def by_operation_id(self) -> Mapping[str, list[OperationEntry]]:
        return _Lookup(self, self._ids)

    def by_method_path(self) -> Mapping[tuple[str, str], list[OperationEntry]]:
        return _PathLookup(self, self._paths)

    def requirement_groups(self) -> RequirementGroups:
        masks = [0] * len(self._group_reqs)
        if len(masks) == 1:
            masks[0] = (1 << self._n) - 1 if self._n else 0
        else:
            members: list[list[int]] = [[] for _ in masks]
            for k, g in enumerate(self._groups):
                members[g].append(k)
            masks = [bitmask(m, self._n) for m in members]
        return tuple((r, m) for r, m in zip(self._group_reqs, masks, strict=True) if m)


class _Lookup(Mapping[str, list[OperationEntry]]):
    """operation id -> operations, confirmed against their records."""

    def __init__(self, ops: CompactOperations, table: _Table) -> None:
        self._ops = ops
        self._table = table

    def __getitem__(self, key: str) -> list[OperationEntry]:
        if not isinstance(key, str) or not key:
            raise KeyError(key)
        hit = [op for i in self._table.candidates(key) if (op := self._ops[i]).operation_id == key]
        if not hit:
            raise KeyError(key)
        return hit

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(op.operation_id for op in self._ops if op.operation_id))

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _PathLookup(Mapping[tuple[str, str], list[OperationEntry]]):
    """(METHOD, normalised path) -> operations, confirmed against their records."""

    def __init__(self, ops: CompactOperations, table: _Table) -> None:
        self._ops = ops
        self._table = table

    def __getitem__(self, key: tuple[str, str]) -> list[OperationEntry]:
        if not (isinstance(key, tuple) and len(key) == 2):
            raise KeyError(key)
        method, path = key
        found = self._table.candidates(f"{method} {path}")
        for base in self._ops.clean_bases:  # base + path spellings are filed under the path alone
            if path.startswith(base + "/"):
                found.extend(self._table.candidates(f"{method} {path[len(base) :]}"))
        hit = [op for i in sorted(set(found)) if (op := self._ops[i]).method == method and path in path_spellings(op)]
        if not hit:
            raise KeyError(key)
        return hit

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(dict.fromkeys((op.method, p) for op in self._ops for p in path_spellings(op)))

    def __len__(self) -> int:
        return sum(1 for _ in self)
