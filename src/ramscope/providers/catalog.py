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

Compiled form (``format`` 2, gzip-compressed JSON), every string stored once and referred to by
position, so that loading Graph's 11,000 endpoints costs one small parse; entries are turned into
:class:`CatalogEntry` objects only when looked up::

    {"format": 2, "kind": "catalog", "name": "microsoft-graph", "version": "...",
     "source": {"repository", "path", "commit", "date", "license", "sha256", ...},
     "servers": [regular expressions over the normalised server URL that this catalog serves],
     "schemes": [scheme_to_dict(...) with "namespace" where needed],
     "permissions": [[scope, short, scheme, description, admin_description, admin_consent,
                      privilege_level or null], ...],
     "strings": [scheme names and scopes],
     "terms": [[scheme (string), [scopes (strings)]], ...],
     "entries": [[METHOD, path, [[term, ...] per alternative], [[scheme, [scopes]], ...] (least),
                  [notes]], ...]}
"""

from __future__ import annotations

import gzip
import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import orjson

from ..specs.model import Requirements, SchemeRequirement, SecurityScheme, scheme_from_dict, scheme_to_dict
from .authserver import scheme_server
from .universe import Universe, _deltas, _undelta

__all__ = ["FORMAT", "Catalog", "CatalogEntry", "CatalogError", "Permission", "decode", "encode"]

FORMAT = 2
MAX_COMPRESSED_BYTES = 32 * 1024 * 1024


class CatalogError(ValueError):
    """A compiled catalog that is malformed or of another format."""


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

    @property
    def key(self) -> str:
        return f"{self.method} {self.path}"


#: A provider's path normaliser: the same function maps the catalog's and the spec's spellings.
Normaliser = Callable[[str], str]
#: A provider's inclusions by name: the short names a permission includes (Microsoft:
#: ``X.ReadWrite`` includes ``X.Read``).
Implied = Callable[[str], tuple[str, ...]]


@dataclass(frozen=True)
class Catalog:
    name: str
    version: str
    source: Mapping[str, Any]
    servers: tuple[str, ...]
    schemes: tuple[SecurityScheme, ...]
    #: The permissions as compiled (see the module docstring); :attr:`permissions` decodes them.
    raw_permissions: Sequence[Any] = field(repr=False)
    strings: tuple[str, ...] = field(repr=False)
    #: Each term: (scheme, scopes), as positions in :attr:`strings`.
    terms: tuple[tuple[int, tuple[int, ...]], ...] = field(repr=False)
    #: The entries as compiled; :meth:`entry` decodes one.
    raw_entries: Sequence[Any] = field(repr=False)
    #: Each entry's path as the provider's normaliser spells it (compiled in).
    keys: Sequence[str] = field(repr=False)
    #: The universe as compiled: ((scheme, scope) positions in :attr:`strings`, delta-encoded entries).
    raw_universe: Sequence[Any] = field(repr=False)
    normalise: Normaliser = field(compare=False, repr=False)

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
        return len(self.raw_entries)

    @cached_property
    def permissions(self) -> dict[str, Permission]:
        """``scheme NUL scope`` -> the permission (see :meth:`permission`)."""
        out: dict[str, Permission] = {}
        for scope, short, scheme, desc, admin_desc, admin, level in self.raw_permissions:
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
        method, path, alts, least, notes = self.raw_entries[i]
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
        )

    @cached_property
    def entries(self) -> tuple[CatalogEntry, ...]:
        """Every entry, decoded (for tools that walk the whole catalog; a derivation looks up a few)."""
        return tuple(self.entry(i) for i in range(len(self.raw_entries)))

    @cached_property
    def _table(self) -> tuple[dict[tuple[str, str], int], list[tuple[str, re.Pattern[str], int]]]:
        exact: dict[tuple[str, str], int] = {}
        deep: list[tuple[str, re.Pattern[str], int]] = []
        for i, (raw, key) in enumerate(zip(self.raw_entries, self.keys, strict=True)):
            method = raw[0]
            if "/..." in key:
                # The provider's own "any depth" wildcard (Microsoft's ``/.../``), not a guess of ours.
                parts = [re.escape(p) for p in key.split("/...")]
                deep.append((method, re.compile(r"(?:/[^/]+)+".join(parts)), i))
            else:
                exact.setdefault((method, key), i)
        return exact, deep

    def lookup(self, method: str, path: str) -> CatalogEntry | None:
        """The entry for ``method`` on the spec path ``path`` (relative to the API's server), if any."""
        exact, deep = self._table
        key = self.normalise(path)
        m = method.upper()
        i = exact.get((m, key))
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
        for pairs, deltas in self.raw_universe:
            key = frozenset((namespaces[strings[sch]], strings[x]) for sch, x in pairs)
            by_alt.setdefault(key, set()).update(_undelta(deltas))
        return Universe(
            name=self.name,
            server=self.label,
            version=self.version,
            source=self.source,
            apis=(self.name,),
            ops=tuple(f"{raw[0]} {raw[1]}" for raw in self.raw_entries),
            op_api=(0,) * len(self.raw_entries),
            alternatives=tuple((k, tuple(sorted(v))) for k, v in by_alt.items()),
        )

    def _namespace(self, scheme: str) -> str:
        return scheme_server(self.scheme_map.get(scheme)) or f"{self.label}#{scheme}"

    def servers_of_schemes(self) -> frozenset[str]:
        """The grant namespaces the catalog's permissions live in."""
        return frozenset(ns for s in self.schemes if (ns := scheme_server(s)))

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
        for e in entries
    ]
    # Before "strings" is written: the universe's inclusions may name permissions no entry lists.
    universe = _universe_section(compiled, list(terms), permissions, sid, implied)
    body = {
        "format": FORMAT,
        "kind": "catalog",
        "name": name,
        "version": version,
        "source": dict(source),
        "servers": list(servers),
        "schemes": [scheme_to_dict(s) for s in schemes],
        "permissions": [
            [p.scope, p.short, p.scheme, p.description, p.admin_description, p.admin_consent, p.privilege_level]
            for p in permissions
        ],
        "strings": list(strings),
        "terms": [[scheme, list(scopes)] for scheme, scopes in terms],
        "entries": compiled,
        "keys": [normalise(e.path) for e in entries],
        "universe": universe,
    }
    return gzip.compress(orjson.dumps(body), compresslevel=9, mtime=0)


def decode(data: bytes, normalise: Normaliser) -> Catalog:
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
        schemes = tuple(scheme_from_dict(s) for s in raw["schemes"])
        names = {s.name for s in schemes}
        strings = tuple(raw["strings"])
        if not all(isinstance(x, str) for x in strings):
            raise CatalogError("strings must be strings")
        n = len(strings)
        terms = tuple((int(scheme), tuple(int(x) for x in scopes)) for scheme, scopes in raw["terms"])
        for scheme, scopes in terms:
            if not 0 <= scheme < n or any(not 0 <= x < n for x in scopes):
                raise CatalogError("a term refers to a string out of range")
            if strings[scheme] not in names:
                raise CatalogError(f"a term names an unknown scheme {strings[scheme]!r}")
        # Each entry is checked when it is decoded (a derivation looks up a few of 11,000); the
        # methods and paths every look-up table needs are checked here.
        entries = raw["entries"]
        if not all(isinstance(e, list) and len(e) == 5 and isinstance(e[0], str) for e in entries):
            raise CatalogError("malformed entries")
        keys = raw["keys"]
        if len(keys) != len(entries) or not all(isinstance(k, str) for k in keys):
            raise CatalogError("keys and entries disagree")
        universe = raw["universe"]
        for pairs, deltas in universe:
            if any(not 0 <= x < n for pair in pairs for x in pair):
                raise CatalogError("a universe alternative refers to a string out of range")
            if sum(deltas) >= len(entries) or any(type(d) is not int or d < 0 for d in deltas):
                raise CatalogError("a universe alternative names an entry out of range")
        return Catalog(
            name=str(raw["name"]),
            version=str(raw["version"]),
            source=dict(raw.get("source") or {}),
            servers=tuple(str(s) for s in raw["servers"]),
            schemes=schemes,
            raw_permissions=raw["permissions"],
            strings=strings,
            terms=terms,
            raw_entries=entries,
            keys=keys,
            raw_universe=universe,
            normalise=normalise,
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
