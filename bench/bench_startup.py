"""Benchmark 10: start-up, against an empty interpreter.

    python bench/run.py --only startup

``ramscope --version`` (the console script), ``ramscope validate`` of the bundled example and
``ramscope derive --help``, each against ``python -c pass`` started the same way, interleaved.
Targets (issue 17, then issue 36 for all three): each ≤ 4x the empty interpreter.
"""

from __future__ import annotations

import sys
from typing import Any

from _common import REPO, Context, Target, interleaved, ramscope_cmd, run_process, summary, table

EXAMPLE = REPO / "examples" / "travel-agent.card.json"


def run(ctx: Context) -> tuple[dict[str, Any], list[Target]]:
    runs = interleaved(
        {
            "pass": lambda: run_process([sys.executable, "-c", "pass"]),
            "version": lambda: run_process(ramscope_cmd("--version")),
            "validate": lambda: run_process(ramscope_cmd("validate", str(EXAMPLE))),
            "derive_help": lambda: run_process(ramscope_cmd("derive", "--help")),
        },
        max(ctx.runs, 9),  # a few tens of milliseconds each: more runs, steadier medians
    )
    s = {k: summary(v) for k, v in runs.items()}
    base = s["pass"]["median_s"]
    ratios = {k: s[k]["median_s"] / base for k in s}
    rows = [
        [name, f"{s[key]['median_s'] * 1000:.1f}", f"{s[key]['min_s'] * 1000:.1f}", f"{ratios[key]:.2f}"]
        for key, name in (
            ("pass", "python -c pass (baseline)"),
            ("version", "ramscope --version"),
            ("validate", f"ramscope validate {EXAMPLE.name}"),
            ("derive_help", "ramscope derive --help"),
        )
    ]
    print(table(f"10. start-up (median of {max(ctx.runs, 9)})", ["process", "median ms", "min ms", "ratio"], rows))
    targets = [
        Target("10 startup", "ramscope --version / python -c pass", ratios["version"], "<= 4", ratios["version"] <= 4),
        Target(
            "10 startup",
            "ramscope validate (example) / python -c pass",
            ratios["validate"],
            "<= 4",
            ratios["validate"] <= 4,
        ),
        Target(
            "10 startup",
            "ramscope derive --help / python -c pass",
            ratios["derive_help"],
            "<= 4",
            ratios["derive_help"] <= 4,
        ),
    ]
    return {**s, "ratios": ratios}, targets
