"""GraphQL catalogs compiled by hand from a provider's documentation pages (monday.com).

Where a GraphQL schema carries no permission data but the provider documents, object by object,
which scope a query or a mutation needs ("Required scope: boards:write" on monday.com's API
reference pages), that documentation is compiled once into ``vendor/<name>/catalog.json`` and from
there into ``providers/data/<name>.graphql.json``, the catalog format
:mod:`ramscope.specs.graphql` reads (``scripts/build_providers.py --only <name>``).

The hand file::

    {"name", "version", "source": {...},
     "urls": [regexes over the schema's URL], "endpoint",
     "scheme": {"name", "type": "oauth2", "description", "flows": [...]},
     "scopes": [[scope, description], ...],
     "notes": [{"message", "source"}],              # the provider's word on its tokens
     "objects": [{"object", "page", "fields": {"Query.boards": "boards:read", ...},
                  "notes": {"Mutation.x": "account admin only"}}],  # the page's word beside the scope
     "undetermined": {"Mutation.x": {"reason", "source"}},
     "administrator": {"Query.x": {"message", "source"}}}  # the page says only an admin may call it

A field under ``administrator`` keeps its scope (or stays undetermined); the report adds the
administrator's note, with the page that says so.

A field's scope ``""`` is the page's "none beyond a valid API token": a token of the scheme with no
particular scope. Each object names the page its scopes are read from; a root field listed by two objects must get
the same scope from both (where the provider's pages disagree, the field belongs in
``undetermined`` with the reason, not in either object). The compiled catalog has no defaults: a
root field no page gives a scope stays undetermined, never "needs nothing", never guessed from its
name.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import orjson

from .catalog import CatalogError

__all__ = ["build_graphql_hand"]

_LABEL = re.compile(r"(?:Query|Mutation|Subscription)\.[_A-Za-z][_0-9A-Za-z]{0,255}")


def _compile(doc: dict[str, Any], name: str) -> dict[str, Any]:
    scopes = [(str(s), str(d)) for s, d in doc["scopes"]]
    known = {s for s, _ in scopes}
    fields: dict[str, dict[str, Any]] = {}
    for obj in doc["objects"]:
        page, what = str(obj["page"]), str(obj["object"])
        notes = {str(k): str(v) for k, v in obj.get("notes", {}).items()}
        stray = sorted(set(notes) - set(obj["fields"]))
        if stray:
            raise CatalogError(f"{name}: {what} has notes on fields it does not list: {stray}")
        for label, scope in obj["fields"].items():
            if not _LABEL.fullmatch(label):
                raise CatalogError(f"{name}: {label!r} is not a root field label (Query.x / Mutation.x)")
            if scope and scope not in known:
                raise CatalogError(f"{name}: {label} names the scope {scope!r}, which the scheme does not list")
            said = scope or "none beyond a valid API token"
            why = f"{what}: Required scope: {said}" + (f" ({notes[label]})" if label in notes else "")
            entry = {"alternatives": [[scope] if scope else []], "source": page, "why": why}
            prev = fields.get(label)
            if prev is not None and prev["alternatives"] != entry["alternatives"]:
                raise CatalogError(
                    f"{name}: {label} gets {prev['alternatives']} from {prev['source']} and {[[scope]]} from "
                    f"{page}; list it under undetermined with the reason"
                )
            fields.setdefault(label, entry)
    undetermined: dict[str, dict[str, str]] = {}
    for label, u in doc.get("undetermined", {}).items():
        if not _LABEL.fullmatch(label):
            raise CatalogError(f"{name}: {label!r} is not a root field label (Query.x / Mutation.x)")
        if label in fields:
            raise CatalogError(f"{name}: {label} is both given a scope and listed as undetermined")
        undetermined[label] = {"reason": str(u["reason"]), "source": str(u["source"])}
    administrator: dict[str, dict[str, str]] = {}
    for label, a in doc.get("administrator", {}).items():
        if label not in fields and label not in undetermined:
            raise CatalogError(f"{name}: {label} is said to be an administrator's but neither listed nor undetermined")
        administrator[label] = {"message": str(a["message"]), "source": str(a["source"])}
    scheme = dict(doc["scheme"])
    scheme["flows"] = [dict(f, scopes=[list(s) for s in scopes]) for f in scheme["flows"]]
    return {
        "format": 1,
        "kind": "graphql-catalog",
        "name": name,
        "version": str(doc["version"]),
        "urls": [str(u) for u in doc["urls"]],
        "endpoint": str(doc["endpoint"]),
        "scheme": scheme,
        "defaults": {},
        "fields": fields,
        "undetermined": undetermined,
        "notes": [{"message": str(n["message"]), "source": str(n["source"])} for n in doc.get("notes", ())],
        **({"administrator": administrator} if administrator else {}),
    }


def build_graphql_hand(vendor_dir: Path) -> bytes:
    """Compile ``vendor_dir/catalog.json`` into a ``<name>.graphql.json`` catalog, deterministically."""
    raw = (vendor_dir / "catalog.json").read_bytes()
    doc = orjson.loads(raw)
    try:
        name = str(doc["name"])
        out = _compile(doc, name)
        for pattern in out["urls"]:
            re.compile(pattern)
    except (KeyError, TypeError, ValueError, re.error) as exc:
        if isinstance(exc, CatalogError):
            raise
        raise CatalogError(f"{vendor_dir.name}/catalog.json is malformed: {exc!r}") from exc
    out["source"] = {
        **dict(doc.get("source") or {}),
        "path": f"vendor/{vendor_dir.name}/catalog.json",
        "sha256": hashlib.sha256(raw).hexdigest(),
    }
    return orjson.dumps(out, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"
