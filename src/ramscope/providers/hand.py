"""Catalogs compiled by hand from a provider's documentation pages (Notion, Stripe restricted keys ...).

Where a provider publishes no machine-readable permission data but documents, page by page, what
each endpoint needs, that documentation is compiled once into ``vendor/<name>/catalog.json`` (every
entry naming its source page) and from there into the same compiled
:class:`~ramscope.providers.catalog.Catalog` as Graph's and GitHub's (``scripts/build_providers.py``).

The hand file::

    {"name", "version", "servers": [regexes over the normalised server URL],
     "source": {"pages": [...], "date", "license", "compiled_by"},
     "overrides_spec": {"reason", "reference"} | absent,   # the provider documents otherwise
     "beside_spec": {"reason", "reference"} | absent,      # narrower credentials beside the spec's
     "schemes": [{"name", "type": "oauth2", "description", "namespace",
                  "flows": [{"kind", "authorization_url", "token_url"}]}],
     "permissions": [{"scope", "short", "scheme", "description", "source"}],
     "entries": [{"method", "path", "alternatives": [[[scheme, [scopes]], ...], ...], "source", "notes"}]}

A path ending in ``/...`` stands for every deeper path (the catalog's any-depth wildcard), so a
resource's permission can be written once for its whole subtree where the provider says so.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from ..specs.model import FlowKind, OAuthFlow, SchemeRequirement, SchemeType, SecurityScheme, normalize_path
from .catalog import CatalogEntry, CatalogError, Permission, encode

__all__ = ["build_hand", "normalise_path"]


def normalise_path(path: str) -> str:
    """Parameter names erased, as for any spec path (``/...`` kept: the any-depth wildcard)."""
    return normalize_path(path)


def _scheme(d: Mapping[str, Any], scopes: list[tuple[str, str]]) -> SecurityScheme:
    flows = tuple(
        OAuthFlow(
            FlowKind(f["kind"]),
            authorization_url=str(f.get("authorization_url", "")),
            token_url=str(f.get("token_url", "")),
            scopes=tuple(scopes),
        )
        for f in d.get("flows", ())
    )
    return SecurityScheme(
        str(d["name"]),
        SchemeType(d.get("type", "oauth2")),
        str(d.get("description", "")),
        flows=flows,
        namespace=str(d.get("namespace", "")),
    )


def build_hand(vendor_dir: Path, *, normalise: Any = normalise_path) -> bytes:
    """Compile ``vendor_dir/catalog.json`` into the catalog format, deterministically."""
    raw_bytes = (vendor_dir / "catalog.json").read_bytes()
    doc = orjson.loads(raw_bytes)
    try:
        perms = [
            Permission(
                str(p["scope"]),
                str(p.get("short") or p["scope"]),
                str(p["scheme"]),
                f"{p['description']} (source: {p['source']})",
                admin_consent=bool(p.get("admin_consent", False)),
            )
            for p in doc["permissions"]
        ]
        by_scheme: dict[str, list[tuple[str, str]]] = {}
        for p in perms:
            by_scheme.setdefault(p.scheme, []).append((p.scope, p.description))
        schemes = [_scheme(s, by_scheme.get(str(s["name"]), [])) for s in doc["schemes"]]
        names = {s.name for s in schemes}
        entries: list[CatalogEntry] = []
        for e in doc["entries"]:
            alts = tuple(
                tuple(SchemeRequirement.of(str(sch), [str(x) for x in scopes]) for sch, scopes in alt)
                for alt in e["alternatives"]
            )
            if not alts or any(t.scheme not in names for alt in alts for t in alt):
                raise CatalogError(f"{vendor_dir.name}: entry {e.get('method')} {e.get('path')} names no known scheme")
            notes = (f"source: {e['source']}", *(str(n) for n in e.get("notes", ())))
            entries.append(CatalogEntry(str(e["method"]).upper(), str(e["path"]), alts, {}, notes))
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, CatalogError):
            raise
        raise CatalogError(f"{vendor_dir.name}/catalog.json is malformed: {exc!r}") from exc
    source = {
        **dict(doc.get("source") or {}),
        "path": f"vendor/{vendor_dir.name}/catalog.json",
        "sha256": hashlib.sha256(raw_bytes).hexdigest(),
    }
    for mode in ("overrides_spec", "beside_spec"):
        if doc.get(mode):
            source[mode] = dict(doc[mode])
    return encode(
        name=str(doc["name"]),
        version=str(doc["version"]),
        source=source,
        servers=[str(s) for s in doc["servers"]],
        schemes=schemes,
        permissions=perms,
        entries=entries,
        normalise=normalise,
        implied=None,
    )
