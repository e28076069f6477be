"""Benchmark 7: the per-tier optimiser's fallback on adversarial tiers, up to 5,000 accesses.

    python bench/run.py --only tier [--quick]

G accesses, each to its own operation with 50 alternatives of 5 scopes drawn from a pool of 2G
(the shape of tests/adversarial's optimiser case): far past the exact search, so the greedy
fallback runs. Before the fallback was bounded, G = 200 took 7.5 s and 1,600 took 630 s. The
curve is timed in-process (solve_tier alone, as derive calls it: each access's own choice given),
each G against G = 200 measured in the same run; the target is that time grows no faster than
G·log G past the baseline (ratio ≤ 1.5 × G/200 · log(G)/log(200)).
"""

from __future__ import annotations

import math
import statistics
import time
from typing import Any

from _common import Context, Target, table

try:
    from ramscope.derive.privilege import GrantSpace, SpecGrants, TierProblem, choose_least_privilege, solve_tier
except ImportError:  # an earlier commit (run.py --against), before the stages moved into derive/
    from ramscope.privilege import (  # type: ignore[no-redef]
        GrantSpace,
        SpecGrants,
        TierProblem,
        choose_least_privilege,
        solve_tier,
    )
from ramscope.specs.model import (
    FlowKind,
    OAuthFlow,
    OperationEntry,
    SchemeRequirement,
    SchemeType,
    SecurityScheme,
    SpecIndex,
    SpecKind,
)

FULL = (200, 400, 800, 1600, 3200, 5000)
QUICK = (200, 400, 800)


def case(g: int, alternatives: int = 50, size: int = 5) -> tuple[GrantSpace, list[TierProblem]]:
    scheme = SecurityScheme(
        "oauth", SchemeType.OAUTH2, flows=(OAuthFlow(FlowKind.AUTHORIZATION_CODE, token_url="https://a.example/t"),)
    )
    ops = []
    for i in range(g):
        alts = tuple(
            (SchemeRequirement.of("oauth", [f"s{(i * 7 + j * 3 + k) % (g * 2)}" for k in range(size)]),)
            for j in range(alternatives)
        )
        ops.append(OperationEntry(key=f"op{i}", operation_id=f"op{i}", requirements=alts))
    index = SpecIndex(
        kind=SpecKind.OPENAPI, url="https://a.example/spec", sha256="0" * 64, operations=tuple(ops), schemes=(scheme,)
    )
    grants = SpecGrants(index)
    space = GrantSpace([grants])
    problems = []
    for i, op in enumerate(index.operations):
        cands = tuple(grants.alternatives(op))
        own = choose_least_privilege(space, cands)
        assert own is not None
        problems.append(TierProblem(f"a{i}", grants, cands, own.alternative))
    return space, problems


def _time(g: int, runs: int) -> tuple[float, dict[str, Any]]:
    times = []
    sol = None
    for _ in range(runs):
        space, problems = case(g)
        t = time.perf_counter()
        sol = solve_tier(problems, frozenset(), space)
        times.append(time.perf_counter() - t)
    assert sol is not None
    return statistics.median(times), {"method": sol.method, "blast_radius": sol.blast_radius, "atoms": len(sol.atoms)}


def run(ctx: Context) -> tuple[dict[str, Any], list[Target]]:
    sizes = QUICK if ctx.quick else FULL
    runs = max(1, min(ctx.runs, 3))
    base, _ = _time(sizes[0], runs)
    rows = []
    section: dict[str, Any] = {"baseline_g": sizes[0], "points": []}
    worst = 0.0
    for g in sizes:
        t, info = (base, _time(g, 1)[1]) if g == sizes[0] else _time(g, runs)
        ratio = t / base
        allowed = 1.5 * (g / sizes[0]) * (math.log(g) / math.log(sizes[0]))
        worst = max(worst, ratio / allowed)
        rows.append([f"G = {g:,}", f"{t:.2f}", f"{ratio:.1f}", f"{allowed:.1f}", info["method"], info["blast_radius"]])
        section["points"].append({"g": g, "median_s": t, "ratio": ratio, "allowed": allowed, **info})
    print(
        table("7. tier optimiser fallback (in-process)", ["tier", "s", "x G=200", "allowed", "method", "radius"], rows)
    )
    target = Target(
        "tier",
        "worst (time ratio / G·log G allowance)",
        worst,
        "≤ 1.0",
        worst <= 1.0,
        f"G up to {sizes[-1]:,}, 50 alternatives of 5 scopes each",
    )
    return section, [target]
