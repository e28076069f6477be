#!/usr/bin/env python3
"""Rebuild the compiled provider snapshots in src/ramscope/providers/data/ from their sources.

    python scripts/build_providers.py [--only google|<catalog name>]

Sources:
- google: the Discovery documents bundled by google-api-python-client (the version pinned in the
  `test` extra); provenance = the package name and version.
- microsoft-graph: vendor/microsoft-graph/ (permissions.json, LICENSE, SOURCES.md).
- github: vendor/github/ (github/docs REST permission data, LICENSE, SOURCES.md).
- notion, docusign, stripe-restricted-keys, intercom, zendesk: vendor/<name>/catalog.json (compiled by hand from the
  provider's documentation, each entry with its page; ramscope.providers.hand).
- monday: vendor/monday/catalog.json -> monday.graphql.json, a GraphQL catalog keyed by root field
  (ramscope.providers.graphql_hand).

Each build is deterministic (sorted, gzip mtime 0): rebuilding from the same sources gives the same
bytes, which tests/test_providers_build.py checks. versions.json beside the snapshots names each one's
version; reports and reuse keys carry it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "src" / "ramscope" / "providers" / "data"
VENDOR = ROOT / "vendor"
sys.path.insert(0, str(ROOT / "src"))


def build_google() -> bytes:
    from importlib.metadata import version

    import googleapiclient

    from ramscope.providers.universe import build_google as build
    from ramscope.providers.universe import encode

    docs_dir = Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"
    docs = []
    for f in sorted(docs_dir.glob("*.json")):
        doc = orjson.loads(f.read_bytes())
        if isinstance(doc, dict) and doc.get("kind") == "discovery#restDescription":
            docs.append(doc)
    pkg = version("google-api-python-client")
    source = {
        "from": f"google-api-python-client {pkg} (googleapiclient/discovery_cache/documents)",
        "documents": len(docs),
        "license": "Apache-2.0",
        "date": _newest_revision(docs),
    }
    return encode(build(docs, source=source))


def _newest_revision(docs: list[dict[str, object]]) -> str:
    revs = sorted(str(d.get("revision", "")) for d in docs if str(d.get("revision", "")).isdigit())
    r = revs[-1] if revs else ""
    return f"{r[:4]}-{r[4:6]}-{r[6:8]}" if len(r) == 8 else ""


def build_catalog(name: str) -> bytes:
    from ramscope.providers import CATALOGS

    module = importlib.import_module(CATALOGS[name][0])
    data: bytes = module.build(VENDOR / name)
    return data


CATALOGS_NAMES = ("microsoft-graph", "github", "notion", "docusign", "stripe-restricted-keys", "intercom", "zendesk")
#: Hand catalogs of GraphQL root fields, compiled to providers/data/<name>.graphql.json.
GRAPHQL_HAND_NAMES = ("monday",)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=sorted(["google", *CATALOGS_NAMES, *GRAPHQL_HAND_NAMES]))
    args = ap.parse_args()
    from ramscope.providers import CATALOGS, UNIVERSES
    from ramscope.providers.catalog import decode as decode_catalog
    from ramscope.providers.universe import decode as decode_universe

    DATA.mkdir(parents=True, exist_ok=True)
    versions_file = DATA / "versions.json"
    versions = orjson.loads(versions_file.read_bytes()) if versions_file.exists() else {}
    for _server, (uname, fname) in UNIVERSES.items():
        if args.only in (None, uname):
            data = build_google()
            (DATA / fname).write_bytes(data)
            u = decode_universe(data)
            versions[f"universe:{uname}"] = u.version
            print(f"universe {uname}: {len(u.ops)} operations, {len(u.alternatives)} alternatives, "
                  f"{len(data)} bytes, version {u.version}")
    for cname, (module, fname) in CATALOGS.items():
        if args.only in (None, cname):
            data = build_catalog(cname)
            (DATA / fname).write_bytes(data)
            c = decode_catalog(data, importlib.import_module(module).normalise_path)
            versions[f"catalog:{cname}"] = c.version
            print(f"catalog {cname}: {len(c.entries)} entries, {len(c.permissions)} permissions, "
                  f"{len(data)} bytes, version {c.version}")
    for gname in GRAPHQL_HAND_NAMES:
        if args.only in (None, gname):
            from ramscope.providers.graphql_hand import build_graphql_hand

            data = build_graphql_hand(VENDOR / gname)
            (DATA / f"{gname}.graphql.json").write_bytes(data)
            g = orjson.loads(data)
            versions[f"graphql-catalog:{gname}"] = g["version"]
            print(f"graphql catalog {gname}: {len(g['fields'])} root fields with a scope, "
                  f"{len(g['undetermined'])} undetermined with a reason, {len(data)} bytes, version {g['version']}")
    versions_file.write_bytes(orjson.dumps(versions, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
