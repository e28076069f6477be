#!/usr/bin/env python3
"""Over every Discovery document google-api-python-client bundles: does any access's choice open
strictly more of Google than another of its alternatives would?

    python scripts/universe_check.py [--limit N]

For each method of each document, a card holding only that document is derived the way ramscope
derives it (the document's grant sets joined with Google's universe), and the choice is checked
against every alternative: a violation is an alternative whose grant set across Google is a strict
subset of the choice's. It also counts the same check for the choice made inside the document
alone (what ramscope did before universes), the figure the issue started from.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import googleapiclient  # noqa: E402

from ramscope.privilege import GrantSpace, SpecGrants, choose_least_privilege  # noqa: E402
from ramscope.providers import GOOGLE, shipped_universe  # noqa: E402
from ramscope.specs import build_index  # noqa: E402
from ramscope.store.model import FetchedSpec, Origin  # noqa: E402


def check(limit: int | None = None) -> dict[str, int]:
    docs = sorted((Path(googleapiclient.__file__).parent / "discovery_cache" / "documents").glob("*.json"))
    u = shipped_universe(GOOGLE)
    assert u is not None
    totals = {"documents": 0, "methods": 0, "with_alternatives": 0, "ambiguous": 0}
    for k in ("violations", "violations_spec_local", "larger", "larger_spec_local"):
        totals[k] = 0
    for path in docs[:limit]:
        body = path.read_bytes()
        if b'"discovery#restDescription"' not in body[:4096] and b"discovery#restDescription" not in body:
            continue
        url = f"https://discovery.example/{path.name}"
        spec = FetchedSpec(
            url=url,
            final_url=url,
            body=body,
            sha256=hashlib.sha256(body).hexdigest(),
            media_type="application/json",
            origin=Origin.CACHE,
            fetched_at=datetime.now(UTC),
        )
        index = build_index(spec)
        g = SpecGrants(index)
        space = GrantSpace([g], [u])
        totals["documents"] += 1
        for op in index.operations:
            totals["methods"] += 1
            alts = [a for a in g.alternatives(op) if a.atoms]
            if len(alts) < 2:
                continue
            totals["with_alternatives"] += 1
            masks = [space.granted(a.atoms) for a in alts]
            api = u.api_of(op.operation_id)
            choice = choose_least_privilege(space, alts, api=api)
            local = choose_least_privilege(g, alts)
            assert choice is not None
            assert local is not None
            totals["ambiguous"] += bool(choice.rivals)
            before = space.granted(local.alternative.atoms)
            for chosen, suffix in ((choice.granted, ""), (before, "_spec_local")):
                if any(m != chosen and m & chosen == m for m in masks):
                    totals["violations" + suffix] += 1
                if any(m.bit_count() < chosen.bit_count() for m in masks):
                    totals["larger" + suffix] += 1
    return totals


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="only the first N documents")
    args = ap.parse_args()
    t = time.perf_counter()
    totals = check(args.limit)
    print(
        f"{totals['documents']} Discovery documents, {totals['methods']} methods, {totals['with_alternatives']} "
        f"with two or more alternatives, {totals['ambiguous']} ambiguous:\n"
        "  methods whose choice opens more of Google than another alternative would"
        " (by count | a strict superset):\n"
        f"    choice in Google's universe (now):        {totals['larger']} | {totals['violations']}\n"
        f"    choice inside its own document (before):  {totals['larger_spec_local']} | "
        f"{totals['violations_spec_local']}\n"
        f"  ({time.perf_counter() - t:.1f} s)"
    )
    return 1 if totals["violations"] or totals["larger"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
