#!/usr/bin/env python3
"""Over every Discovery document google-api-python-client bundles: does any access's choice open
strictly more of Google than another alternative of its class would?

    python scripts/universe_check.py [--limit N]

For each method of each document, a card holding only that document is derived the way ramscope
derives it (the document's grant sets joined with Google's universe), and the choice is checked
against every alternative: a violation is an alternative whose grant set across Google is a strict
subset of the choice's. It also counts the same check for the choice made inside the document
alone (what ramscope did before universes), the figure the issue started from.

Since issue 21 the alternatives are first ranked by what they reach (``derive.reach``: level,
principal, slice; as an END_USER access): the check holds within the class the choice is made
from, and the script counts how often the ranking departs from the plain lattice, and why.
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

from ramscope.derive.policy import Policy  # noqa: E402
from ramscope.derive.privilege import GrantSpace, SpecGrants, choose_least_privilege  # noqa: E402
from ramscope.derive.reach import rank_by_reach  # noqa: E402
from ramscope.manifest import IdentityType  # noqa: E402
from ramscope.providers import GOOGLE, shipped_universe  # noqa: E402
from ramscope.providers.reach import Reach, classify  # noqa: E402
from ramscope.specs import build_index  # noqa: E402
from ramscope.store.model import FetchedSpec, Origin  # noqa: E402


def check(limit: int | None = None) -> dict[str, int]:
    docs = sorted((Path(googleapiclient.__file__).parent / "discovery_cache" / "documents").glob("*.json"))
    u = shipped_universe(GOOGLE)
    assert u is not None
    totals = {"documents": 0, "methods": 0, "with_alternatives": 0, "ambiguous": 0}
    for k in ("violations", "violations_spec_local", "larger", "larger_spec_local", "departures"):
        totals[k] = 0
    classes: dict[str, Reach] = {}

    def reach_of(_scheme: str, scope: str) -> Reach:
        hit = classes.get(scope)
        if hit is None:
            hit = classes[scope] = classify(scope, u.descriptions.get(scope, ""))
        return hit

    policy = Policy()
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
            every = [a for a in g.alternatives(op) if a.atoms]
            if len(every) < 2:
                continue
            # The default policy's excludes (Workspace add-on scopes) apply, as in a derivation.
            alts = [a for a in every if not any(policy.excluded_by(s) for s in a.scopes)]
            totals["with_alternatives"] += 1
            ranked = rank_by_reach(
                alts, reach_of, operation_id=op.operation_id or op.key, identity=IdentityType.END_USER
            )
            pool = list(ranked.eligible)
            if not pool:
                continue
            masks = [space.granted(a.atoms) for a in pool]
            all_masks = [space.granted(a.atoms) for a in every]
            api = u.api_of(op.operation_id)
            choice = choose_least_privilege(space, pool, api=api)
            lattice = choose_least_privilege(space, alts, api=api) or choice
            local = choose_least_privilege(g, every)
            assert choice is not None
            assert lattice is not None
            assert local is not None
            totals["ambiguous"] += bool(choice.rivals)
            totals["departures"] += choice.alternative.atoms != lattice.alternative.atoms
            before = space.granted(local.alternative.atoms)
            for chosen, suffix, among in ((choice.granted, "", masks), (before, "_spec_local", all_masks)):
                if any(m != chosen and m & chosen == m for m in among):
                    totals["violations" + suffix] += 1
                if any(m.bit_count() < chosen.bit_count() for m in among):
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
        f"    choice in Google's universe, within its class (now): {totals['larger']} | {totals['violations']}\n"
        f"    choice inside its own document (before):  {totals['larger_spec_local']} | "
        f"{totals['violations_spec_local']}\n"
        f"  choices where what a permission reaches departs from the plain lattice: {totals['departures']}\n"
        f"  ({time.perf_counter() - t:.1f} s)"
    )
    return 1 if totals["violations"] or totals["larger"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
