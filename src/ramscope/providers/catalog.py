"""Provider permission catalogs: requirements where a spec declares none.

Microsoft Graph's and GitHub's OpenAPI documents declare no security at all, so from the spec
alone an access is undetermined. Both providers publish, apart from the spec, which permission
each endpoint needs. A :class:`Catalog` is that publication compiled: (method, path template) →
requirement alternatives over the catalog's own :class:`SecurityScheme` objects, with the
provider's descriptions of each permission and its least-privilege marks.

Precedence (``derive``): a spec's own declared security always wins; a catalog fills in only an
operation whose spec declares nothing, and the access says so (``requirements_source``). No
entry for the operation → undetermined, never a guess from a parent path. A catalog is also the
permission universe of its namespaces: the blast radius of ``Mail.Read`` is every endpoint
Microsoft lists for it, not the few operations of the card's spec.

Each provider module (:mod:`.graph`, :mod:`.github`) supplies the build from the upstream files
(``scripts/build_providers.py``) and the path normaliser used on both sides of a look-up.

Compiled form (``format`` 3, gzip-compressed JSON). Every string of the requirements is stored
once and referred to by position; the big parts are JSON texts of their own, parsed only when
needed, and the entries are in blocks of :data:`ENTRY_BLOCK`: a derivation that looks up one
Graph endpoint parses the keys, one block, the universe and the permissions, not 11,000 entries::

    {"format": 3, "kind": "catalog", "name": "microsoft-graph", "version": "...",
     "source": {"repository", "path", "commit", "date", "license", "sha256", ...},
     "servers": [regular expressions over the normalised server URL that this catalog serves],
     "count": number of entries,
     "strings": [scheme names and scopes],
     "terms": [[scheme (string), [scopes (strings)]], ...],
     "parts": {
       "schemes": JSON of [scheme_to_dict(...) with "namespace" where needed],
       "permissions": JSON of [[scope, short, scheme, description, admin_description,
                                admin_consent, privilege_level or null], ...],
       "entries": [JSON of up to ENTRY_BLOCK entries [METHOD, path, [[term, ...] per alternative],
                   [[scheme, [scopes]], ...] (least marks), [notes],
                   optionally {"conditional": [[scheme, scope, condition]], "public": text}], ...],
       "keys": JSON of ["METHOD normalised-path" per entry],
       "universe": JSON of [[[[scheme, scope] (strings)], [delta-coded entries]], ...]}}
"""

from __future__ import annotations

import gzip
import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import orjson

from ..errors import RamscopeError
from ..specs.model import Requirements, SchemeRequirement, SecurityScheme, scheme_from_dict, scheme_to_dict
from .authserver import scheme_server
from .universe import Universe, _deltas, _undelta

__all__ = ["FORMAT", "Catalog", "CatalogEntry", "CatalogError", "Permission", "decode", "encode"]

FORMAT = 3
#: Entries per separately parsed block.
ENTRY_BLOCK = 256
MAX_COMPRESSED_BYTES = 32 * 1024 * 1024


class CatalogError(RamscopeError, ValueError):
    """A compiled catalog that is malformed or of another format (one line from the CLI, no traceback)."""

    code = "catalog-invalid"


@dataclass(frozen=True, slots=True)
class Permission:
    """One grantable permission as the provider describes it."""

    #: As a token request needs it (``https://graph.microsoft.com/Mail.Read``, ``issues:write``).
    scope: str
    #: For people (``Mail.Read``).
    short: str
    #: The catalog scheme it belongs to.
    scheme: str
    #: What the provider tells the user it allows.
    description: str
    #: What the provider tells an administrator (may be the same).
    admin_description: str = ""
    #: An administrator of the user's organisation must approve it.
    admin_consent: bool = False
    privilege_level: int | None = None


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """The provider's requirements for one (method, path template)."""

    method: str
    #: The path as the catalog publishes it.
    path: str
    requirements: Requirements
    #: scheme -> the scopes the provider marks least privileged for this endpoint and scheme.
    least: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: (scheme, scope, condition): needed besides the pick only under the condition, not ANDed
    #: (GitHub's ``workflows:write`` for files under ``.github/workflows``).
    conditional: tuple[tuple[str, str, str], ...] = ()
    #: What the provider says of calls without authentication ("" = nothing): public resources.
    public: str = ""

    @property
    def key(self) -> str:
        return f"{self.method} {self.path}"


#: A provider's path normaliser: the same function maps the catalog's and the spec's spellings.
Normaliser = Callable[[str], str]
#: A provider's documented twins of a normalised path, nearest first, each with what it means.
Twins = Callable[[str], tuple[tuple[str, str], ...]]
#: A provider's inclusions by name: the short names a permission includes (Microsoft:
#: ``X.ReadWrite`` includes ``X.Read``).
Implied = Callable[[str], tuple[str, ...]]


@dataclass(frozen=True)
class Catalog:
    name: str
    version: str
    source: Mapping[str, Any]
    servers: tuple[str, ...]
    strings: tuple[str, ...] = field(repr=False)
    #: Each term: (scheme, scopes), as positions in :attr:`strings`.
    terms: tuple[tuple[int, tuple[int, ...]], ...] = field(repr=False)
    #: How many entries.
    count: int
    #: The compiled parts, each a JSON text parsed when first needed (see the module docstring).
    parts: Mapping[str, Any] = field(repr=False)
    normalise: Normaliser = field(compare=False, repr=False)
    #: The provider's documented twins of a normalised path (Graph: ``/me/x`` and ``/users/{id}/x``),
    #: tried when the path itself has no entry.
    twins: Twins | None = field(default=None, compare=False, repr=False)

    def _part(self, name: str) -> Any:
        try:
            return orjson.loads(self.parts[name])
        except (KeyError, TypeError, orjson.JSONDecodeError) as exc:
            raise CatalogError(f"catalog {self.name}: part {name!r} is malformed: {exc}") from exc

    @cached_property
    def schemes(self) -> tuple[SecurityScheme, ...]:
        try:
            return tuple(scheme_from_dict(s) for s in self._part("schemes"))
        except (KeyError, TypeError, ValueError) as exc:
            raise CatalogError(f"catalog {self.name}: malformed schemes: {exc!r}") from exc

    @cached_property
    def keys(self) -> list[str]:
        """Each entry as ``METHOD normalised-path`` (the provider's normaliser, compiled in)."""
        keys = self._part("keys")
        if not isinstance(keys, list) or len(keys) != self.count or not all(isinstance(k, str) for k in keys):
            raise CatalogError(f"catalog {self.name}: keys and entries disagree")
        return keys

    def _raw_entry(self, i: int) -> Any:
        block = self._blocks.get(i // ENTRY_BLOCK)
        if block is None:
            block = self._blocks[i // ENTRY_BLOCK] = orjson.loads(self.parts["entries"][i // ENTRY_BLOCK])
        return block[i % ENTRY_BLOCK]

    @cached_property
    def _blocks(self) -> dict[int, list[Any]]:
        return {}

    @property
    def label(self) -> str:
        """``catalog:<name>@<version>``, as reports name a requirements source."""
        return f"catalog:{self.name}@{self.version}"

    @cached_property
    def _server_patterns(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p) for p in self.servers)

    def serves(self, server_url: str) -> bool:
        """Does this catalog describe the API at ``server_url`` (normalised, see authserver)?"""
        return any(p.search(server_url) for p in self._server_patterns)

    def __len__(self) -> int:
        return self.count

    @cached_property
    def permissions(self) -> dict[str, Permission]:
        """``scheme NUL scope`` -> the permission (see :meth:`permission`)."""
        out: dict[str, Permission] = {}
        for scope, short, scheme, desc, admin_desc, admin, level in self._part("permissions"):
            out[f"{scheme}\0{scope}"] = Permission(
                str(scope),
                str(short),
                str(scheme),
                str(desc),
                str(admin_desc),
                bool(admin),
                int(level) if level is not None else None,
            )
        return out

    def entry(self, i: int) -> CatalogEntry:
        """Entry ``i``, decoded (and kept)."""
        hit = self._decoded.get(i)
        if hit is None:
            hit = self._decoded[i] = self._decode_entry(i)
        return hit

    @cached_property
    def _decoded(self) -> dict[int, CatalogEntry]:
        return {}

    def _decode_entry(self, i: int) -> CatalogEntry:
        try:
            # A sixth element, {"conditional": [[scheme, scope, condition], ...], "public": text}, is optional.
            raw = self._raw_entry(i)
            method, path, alts, least, notes = raw[:5]
            extra = raw[5] if len(raw) > 5 else {}
            conditional = tuple((str(a), str(b), str(c)) for a, b, c in extra.get("conditional", ()))
            public = str(extra.get("public", ""))
        except (IndexError, TypeError, ValueError, AttributeError, orjson.JSONDecodeError) as exc:
            raise CatalogError(f"catalog {self.name}: entry {i} is malformed: {exc!r}") from exc
        n, nterms = len(self.strings), len(self.terms)
        if (
            not isinstance(path, str)
            or not alts
            or any(not 0 <= t < nterms for alt in alts for t in alt)
            or any(not 0 <= x < n for sch, scopes in least for x in (sch, *scopes))
        ):
            raise CatalogError(f"entry {i} ({method} {path!r}) is malformed, refers out of range or has no alternative")
        strings = self.strings
        reqs = tuple(
            tuple(
                SchemeRequirement(strings[self.terms[t][0]], tuple(strings[x] for x in self.terms[t][1])) for t in alt
            )
            for alt in alts
        )
        return CatalogEntry(
            str(method),
            str(path),
            reqs,
            {strings[sch]: tuple(strings[x] for x in scopes) for sch, scopes in least},
            tuple(str(n) for n in notes),
            conditional,
            public,
        )

    @cached_property
    def entries(self) -> tuple[CatalogEntry, ...]:
        """Every entry, decoded (for tools that walk the whole catalog; a derivation looks up a few)."""
        return tuple(self.entry(i) for i in range(self.count))

    @cached_property
    def _table(self) -> tuple[dict[str, int], list[tuple[str, re.Pattern[str], int]]]:
        # Keyed by the "METHOD path" strings as stored (Graph: 10,000 of them, on every warm run):
        # the first of equal keys wins.
        keys = self.keys
        exact = {k: i for i, k in reversed(list(enumerate(keys)))}
        deep: list[tuple[str, re.Pattern[str], int]] = []
        for i, both in enumerate(keys):
            if "/..." in both:
                # The provider's own "any depth" wildcard (Microsoft's ``/.../``), not a guess of ours.
                method, _, key = both.partition(" ")
                parts = [re.escape(p) for p in key.split("/...")]
                deep.append((method, re.compile(r"(?:/[^/]+)+".join(parts)), i))
                exact.pop(both, None)
        return exact, deep

    def lookup(self, method: str, path: str) -> CatalogEntry | None:
        """The entry for ``method`` on the spec path ``path`` (relative to the API's server), if any;
        else the entry of the path's documented twin, with a note saying which."""
        key = self.normalise(path)
        hit = self._lookup(method.upper(), key)
        if hit is not None or self.twins is None:
            return hit
        for twin, meaning in self.twins(key):
            hit = self._lookup(method.upper(), twin)
            if hit is not None:
                note = f"{self.name} lists this endpoint as its documented twin {hit.method} {hit.path}: {meaning}"
                return replace(hit, notes=(note,))
        return None

    def _lookup(self, m: str, key: str) -> CatalogEntry | None:
        exact, deep = self._table
        i = exact.get(f"{m} {key}")
        if i is not None:
            return self.entry(i)
        for dm, pattern, j in deep:
            if dm == m and pattern.fullmatch(key):
                return self.entry(j)
        return None

    @cached_property
    def scheme_map(self) -> dict[str, SecurityScheme]:
        return {s.name: s for s in self.schemes}

    @cached_property
    def universe(self) -> Universe:
        """The catalog as a permission universe: every endpoint, opened by the permissions it lists,
        and by the permissions that include those by the provider's own naming (compiled in)."""
        strings = self.strings
        namespaces = {s.name: self._namespace(s.name) for s in self.schemes}
        by_alt: dict[frozenset[tuple[str, str]], set[int]] = {}
        try:
            for pairs, deltas in self._part("universe"):
                key = frozenset((namespaces[strings[sch]], strings[x]) for sch, x in pairs)
                where = _undelta(deltas)
                if where and where[-1] >= self.count:
                    raise CatalogError("a universe alternative names an entry out of range")
                by_alt.setdefault(key, set()).update(where)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            if isinstance(exc, CatalogError):
                raise
            raise CatalogError(f"catalog {self.name}: malformed universe: {exc!r}") from exc
        return Universe(
            name=self.name,
            server=self.label,
            version=self.version,
            source=self.source,
            apis=(self.name,),
            ops=tuple(self.keys),
            op_api=(0,) * self.count,
            alternatives=tuple((k, tuple(sorted(v))) for k, v in by_alt.items()),
        )

    def _namespace(self, scheme: str) -> str:
        return scheme_server(self.scheme_map.get(scheme)) or f"{self.label}#{scheme}"

    def permission(self, scheme: str, scope: str) -> Permission | None:
        return self.permissions.get(f"{scheme}\0{scope}")

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "entries": len(self), "source": dict(self.source)}


# --------------------------------------------------------------------------- codec


def encode(
    *,
    name: str,
    version: str,
    source: Mapping[str, Any],
    servers: Sequence[str],
    schemes: Sequence[SecurityScheme],
    permissions: Sequence[Permission],
    entries: Sequence[CatalogEntry],
    normalise: Normaliser | None = None,
    implied: Implied | None = None,
) -> bytes:
    """The compiled form. ``normalise`` and ``implied`` default to the registered provider module's
    ``normalise_path`` and ``implied`` (the catalog's paths are compiled normalised, and its
    universe with the provider's own inclusions, so loading does neither)."""
    if normalise is None or implied is None:
        module = _provider_module(name)
        normalise = normalise or getattr(module, "normalise_path", None) or (lambda p: p)
        implied = implied or getattr(module, "implied", None)
    strings: dict[str, int] = {}
    terms: dict[tuple[int, tuple[int, ...]], int] = {}

    def sid(text: str) -> int:
        return strings.setdefault(text, len(strings))

    def tid(t: SchemeRequirement) -> int:
        return terms.setdefault((sid(t.scheme), tuple(sid(x) for x in t.scopes)), len(terms))

    compiled = [
        [
            e.method,
            e.path,
            [[tid(t) for t in alt] for alt in e.requirements],
            [[sid(k), [sid(x) for x in v]] for k, v in e.least.items()],
            list(e.notes),
        ]
        + (
            [{"conditional": [list(c) for c in e.conditional]} | ({"public": e.public} if e.public else {})]
            if e.conditional or e.public
            else []
        )
        for e in entries
    ]
    # Before "strings" is written: the universe's inclusions may name permissions no entry lists.
    universe = _universe_section(compiled, list(terms), permissions, sid, implied)

    def text(value: Any) -> str:
        return orjson.dumps(value).decode()

    body = {
        "format": FORMAT,
        "kind": "catalog",
        "name": name,
        "version": version,
        "source": dict(source),
        "servers": list(servers),
        "count": len(compiled),
        "strings": list(strings),
        "terms": [[scheme, list(scopes)] for scheme, scopes in terms],
        "parts": {
            "schemes": text([scheme_to_dict(s) for s in schemes]),
            "permissions": text(
                [
                    [p.scope, p.short, p.scheme, p.description, p.admin_description, p.admin_consent, p.privilege_level]
                    for p in permissions
                ]
            ),
            "entries": [text(compiled[i : i + ENTRY_BLOCK]) for i in range(0, len(compiled), ENTRY_BLOCK)],
            "keys": text([f"{e.method} {normalise(e.path)}" for e in entries]),
            "universe": text(universe),
        },
    }
    return gzip.compress(orjson.dumps(body), compresslevel=9, mtime=0)


def decode(data: bytes, normalise: Normaliser, twins: Twins | None = None) -> Catalog:
    """The catalog in ``data``, its structure checked (every reference in range, every scheme
    defined); its entries are decoded only when looked up."""
    if len(data) > MAX_COMPRESSED_BYTES:
        raise CatalogError(f"compiled catalog of {len(data)} bytes exceeds {MAX_COMPRESSED_BYTES}")
    try:
        raw = orjson.loads(gzip.decompress(data))
    except (OSError, EOFError, orjson.JSONDecodeError) as exc:
        raise CatalogError(f"not a compiled catalog: {exc}") from exc
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or raw.get("kind") != "catalog":
        raise CatalogError("compiled catalog of another format")
    try:
        strings = tuple(raw["strings"])
        if not all(isinstance(x, str) for x in strings):
            raise CatalogError("strings must be strings")
        n = len(strings)
        terms = tuple((int(scheme), tuple(int(x) for x in scopes)) for scheme, scopes in raw["terms"])
        for scheme, scopes in terms:
            if not 0 <= scheme < n or any(not 0 <= x < n for x in scopes):
                raise CatalogError("a term refers to a string out of range")
        parts = raw["parts"]
        count = int(raw["count"])
        if not isinstance(parts, dict) or not isinstance(parts.get("entries"), list):
            raise CatalogError("malformed parts")
        if len(parts["entries"]) != (count + ENTRY_BLOCK - 1) // ENTRY_BLOCK:
            raise CatalogError("entry blocks and count disagree")
        # The parts are parsed (and checked) when first needed: a derivation that looks up one
        # endpoint reads the keys, one block of entries, the universe and the permissions.
        return Catalog(
            name=str(raw["name"]),
            version=str(raw["version"]),
            source=dict(raw.get("source") or {}),
            servers=tuple(str(s) for s in raw["servers"]),
            strings=strings,
            terms=terms,
            count=count,
            parts=parts,
            normalise=normalise,
            twins=twins,
        )
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, CatalogError):
            raise
        raise CatalogError(f"malformed compiled catalog: {exc!r}") from exc


def _provider_module(name: str) -> Any:
    from . import CATALOGS  # noqa: PLC0415 - the registry imports this module

    hit = CATALOGS.get(name)
    return importlib.import_module(hit[0]) if hit else None


def _universe_section(
    compiled: Sequence[Sequence[Any]],
    terms: Sequence[tuple[int, tuple[int, ...]]],
    permissions: Sequence[Permission],
    sid: Callable[[str], int],
    implied: Implied | None,
) -> list[list[Any]]:
    """Which entries each alternative opens, with the provider's inclusions added: a permission also
    opens every entry that a permission it includes opens alone (transitively)."""
    by_alt: dict[frozenset[tuple[int, int]], set[int]] = {}
    for i, entry in enumerate(compiled):
        for alt in entry[2]:
            pairs = frozenset((terms[t][0], x) for t in alt for x in terms[t][1])
            if pairs:
                by_alt.setdefault(pairs, set()).add(i)
    if implied is not None:
        single = {next(iter(k)): v for k, v in by_alt.items() if len(k) == 1}
        by_short = {(p.scheme, p.short): (sid(p.scheme), sid(p.scope)) for p in permissions}
        for p in permissions:
            extra: set[int] = set()
            seen: set[str] = set()
            todo = list(implied(p.short))
            while todo:
                short = todo.pop()
                if short in seen:
                    continue
                seen.add(short)
                target = by_short.get((p.scheme, short))
                if target is not None:
                    extra |= single.get(target, set())
                todo.extend(implied(short))
            if extra:
                by_alt.setdefault(frozenset({(sid(p.scheme), sid(p.scope))}), set()).update(extra)
    out: list[list[Any]] = []
    for pairs, where in sorted(by_alt.items(), key=lambda kv: sorted(kv[0])):
        positions = sorted(where)
        out.append([sorted([list(pair) for pair in pairs]), _deltas(positions)])
    return out
