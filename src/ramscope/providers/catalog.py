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

Compiled form (``format`` 1, gzip-compressed JSON)::

    {"format": 1, "kind": "catalog", "name": "microsoft-graph", "version": "...",
     "source": {"repository", "path", "commit", "date", "license", "sha256", ...},
     "servers": [regular expressions over the normalised server URL that this catalog serves],
     "schemes": [scheme_to_dict(...) with "namespace" where needed],
     "permissions": [[scope, short, scheme, description, admin_description, admin_consent,
                      privilege_level or null], ...],
     "entries": [[METHOD, path, requirements (reqs_to_json), {scheme: [least scopes]}, [notes]], ...]}
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import orjson

from ..specs.model import Requirements, SecurityScheme, reqs_from_json, reqs_to_json, scheme_from_dict, scheme_to_dict
from .authserver import scheme_server
from .universe import Universe

__all__ = ["FORMAT", "Catalog", "CatalogEntry", "CatalogError", "Permission", "decode", "encode"]

FORMAT = 1
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


@dataclass(frozen=True)
class Catalog:
    name: str
    version: str
    source: Mapping[str, Any]
    servers: tuple[str, ...]
    schemes: tuple[SecurityScheme, ...]
    permissions: Mapping[str, Permission]
    entries: tuple[CatalogEntry, ...]
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

    @cached_property
    def _table(self) -> tuple[dict[tuple[str, str], int], list[tuple[str, re.Pattern[str], int]]]:
        exact: dict[tuple[str, str], int] = {}
        deep: list[tuple[str, re.Pattern[str], int]] = []
        for i, e in enumerate(self.entries):
            key = self.normalise(e.path)
            if "/..." in key:
                # The provider's own "any depth" wildcard (Microsoft's ``/.../``), not a guess of ours.
                parts = [re.escape(p) for p in key.split("/...")]
                deep.append((e.method, re.compile(r"(?:/[^/]+)+".join(parts)), i))
            else:
                exact.setdefault((e.method, key), i)
        return exact, deep

    def lookup(self, method: str, path: str) -> CatalogEntry | None:
        """The entry for ``method`` on the spec path ``path`` (relative to the API's server), if any."""
        exact, deep = self._table
        key = self.normalise(path)
        m = method.upper()
        i = exact.get((m, key))
        if i is not None:
            return self.entries[i]
        for dm, pattern, j in deep:
            if dm == m and pattern.fullmatch(key):
                return self.entries[j]
        return None

    @cached_property
    def scheme_map(self) -> dict[str, SecurityScheme]:
        return {s.name: s for s in self.schemes}

    @cached_property
    def universe(self) -> Universe:
        """The catalog as a permission universe: every endpoint, opened by the permissions it lists."""
        by_alt: dict[frozenset[tuple[str, str]], list[int]] = {}
        for i, e in enumerate(self.entries):
            for alt in e.requirements:
                pairs: set[tuple[str, str]] = set()
                for t in alt:
                    ns = scheme_server(self.scheme_map.get(t.scheme)) or f"{self.label}#{t.scheme}"
                    pairs.update((ns, scope) for scope in t.scopes)
                if pairs:
                    by_alt.setdefault(frozenset(pairs), []).append(i)
        return Universe(
            name=self.name,
            server=self.label,
            version=self.version,
            source=self.source,
            apis=(self.name,),
            ops=tuple(e.key for e in self.entries),
            op_api=(0,) * len(self.entries),
            alternatives=tuple((k, tuple(dict.fromkeys(v))) for k, v in by_alt.items()),
        )

    def servers_of_schemes(self) -> frozenset[str]:
        """The grant namespaces the catalog's permissions live in."""
        return frozenset(ns for s in self.schemes if (ns := scheme_server(s)))

    def permission(self, scheme: str, scope: str) -> Permission | None:
        return self.permissions.get(f"{scheme}\0{scope}")

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "entries": len(self.entries), "source": dict(self.source)}


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
) -> bytes:
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
        "entries": [
            [e.method, e.path, reqs_to_json(e.requirements), {k: list(v) for k, v in e.least.items()}, list(e.notes)]
            for e in entries
        ],
    }
    return gzip.compress(orjson.dumps(body), compresslevel=9, mtime=0)


def decode(data: bytes, normalise: Normaliser) -> Catalog:
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
        perms: dict[str, Permission] = {}
        for scope, short, scheme, desc, admin_desc, admin, level in raw["permissions"]:
            perms[f"{scheme}\0{scope}"] = Permission(
                str(scope), str(short), str(scheme), str(desc), str(admin_desc), bool(admin),
                int(level) if level is not None else None,
            )
        entries: list[CatalogEntry] = []
        for method, path, reqs, least, notes in raw["entries"]:
            requirements = reqs_from_json(reqs)
            if requirements is None:
                raise CatalogError(f"entry {method} {path}: requirements are null")
            for alt in requirements:
                for t in alt:
                    if t.scheme not in names:
                        raise CatalogError(f"entry {method} {path}: unknown scheme {t.scheme!r}")
            entries.append(
                CatalogEntry(
                    str(method).upper(),
                    str(path),
                    requirements,
                    {str(k): tuple(str(x) for x in v) for k, v in least.items()},
                    tuple(str(n) for n in notes),
                )
            )
        return Catalog(
            name=str(raw["name"]),
            version=str(raw["version"]),
            source=dict(raw.get("source") or {}),
            servers=tuple(str(s) for s in raw["servers"]),
            schemes=schemes,
            permissions=perms,
            entries=tuple(entries),
            normalise=normalise,
        )
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, CatalogError):
            raise
        raise CatalogError(f"malformed compiled catalog: {exc!r}") from exc

