"""Benchmark 11: the tier case of issue 36, a whole ``ramscope derive`` of a card of 800 accesses,
each to its own operation with 50 alternatives of 5 scopes, one OpenAPI spec, every access END_USER.

    python bench/run.py --only tiercase

The card and spec are ``tests/adversarial/hostile.py``'s optimiser case, served on 127.0.0.1; the
cache is filled first and each measured run derives with ``--no-reuse`` (the spec's parse is not
what this measures). Targets (issue 36): under 15 s and under 350 MB peak RSS. ``--quick`` takes
60 accesses and reports only.
"""

from __future__ import annotations

import sys
from typing import Any

from _common import REPO, Context, Target, interleaved, ramscope_cmd, run_process, summary, table

sys.path.insert(0, str(REPO))
from tests.adversarial.hostile import optimiser_case

#: The issue's figures: 12.5 s / 293 MB before last round, 69.6 s / 552 MB at its end (quiet machine).
SECONDS, MIB = 15.0, 350.0


def run(ctx: Context) -> tuple[dict[str, Any], list[Target]]:
    n = 60 if ctx.quick else 800
    case = optimiser_case(n, 50)
    served = case.served[0]
    spec = ctx.scratch("tiercase-spec-") / served.path.lstrip("/")
    spec.write_bytes(served.body)
    url = ctx.serve(spec)  # .../N/openapi.json: the card names the spec at base + served.path
    card = ctx.work / "tiercase-card.json"
    card.write_bytes(case.card(url[: -len(served.path)]))
    cache = ctx.scratch("tiercase-")

    def derive(*extra: str) -> Any:
        cmd = ramscope_cmd(
            "--cache-dir", str(cache), "--allow-private-network", "--no-progress", "derive", *extra, str(card),
            "-o", str(ctx.work / "tiercase-report.json"),
        )  # fmt: skip
        return run_process(cmd, ok=(0, 3), keep_output=False)

    derive()  # fills the cache
    runs = interleaved({"derive": lambda: derive("--no-reuse")}, max(1, min(ctx.runs, 3)), warmup=False)
    s = summary(runs["derive"])
    mib = sorted(r.rss for r in runs["derive"])[len(runs["derive"]) // 2] / 2**20
    rows = [[f"{n} accesses x 50 alternatives", f"{s['median_s']:.2f}", f"{s['min_s']:.2f}", f"{mib:.0f}"]]
    print(table("11. tier case (whole derive, warm cache)", ["card", "median s", "min s", "peak MiB"], rows))
    targets = [
        Target("11 tiercase", f"derive of {n} x 50, seconds", s["median_s"], f"< {SECONDS:g}",
               None if ctx.quick else s["median_s"] < SECONDS),
        Target("11 tiercase", f"derive of {n} x 50, peak MiB", mib, f"< {MIB:g}", None if ctx.quick else mib < MIB),
    ]  # fmt: skip
    return {**s, "peak_mib": mib, "accesses": n}, targets
