"""Benchmark 5: fetching 20 specs behind 200 ms of injected latency, ``--jobs 1`` against ``--jobs 8``.

    python bench/run.py --only fetch [--quick]

Twenty real Discovery documents (20-120 KB, from google-api-python-client) are served on
127.0.0.1, each answer delayed by 200 ms (20 ms with ``--quick``). Every run starts with an empty
cache, so every spec is really fetched. Two measurements, each interleaved (jobs 1, jobs 8, ...):

* ``SpecStore.prefetch`` in this process: the fetching alone, as ``bench_fetch.py`` measured it
  before this suite existed;
* ``ramscope fetch CARD --jobs N``: the whole process, as a user runs it, start-up (imports,
  ~0.1 s) and the result table included.

Both are judged against the target, and both verdicts are reported.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import (
    Access,
    Context,
    Run,
    SpecOp,
    Target,
    discovery_dir,
    interleaved,
    ramscope_cmd,
    run_process,
    summary,
    table,
    write_card,
)

SPECS = 20


def _spec_files() -> list[Path]:
    files = sorted(p for p in discovery_dir().glob("*.json") if 20_000 <= p.stat().st_size <= 120_000)
    return files[:SPECS]


def run(ctx: Context) -> tuple[dict[str, Any], list[Target]]:
    latency = 0.02 if ctx.quick else 0.2
    files = _spec_files()
    urls = [ctx.serve(f, latency=latency) for f in files]
    card = write_card(ctx.work / "fetch-card.json", "fetch", [Access(u, SpecOp("unused", "GET")) for u in urls])

    def cli(jobs: int) -> Run:
        cache = ctx.scratch("fetch-")
        try:
            cmd = ramscope_cmd(
                "--cache-dir",
                str(cache),
                "--allow-private-network",
                "--no-progress",
                "--jobs",
                str(jobs),
                "fetch",
                str(card),
            )
            return run_process(cmd)
        finally:
            shutil.rmtree(cache, ignore_errors=True)

    def store(jobs: int) -> Run:
        from ramscope.config import Settings
        from ramscope.errors import FetchError
        from ramscope.store import SpecStore

        with tempfile.TemporaryDirectory(dir=ctx.work) as cache:
            settings = Settings(cache_dir=Path(cache), allow_private_network=True, jobs=jobs, timeout=30.0)
            with SpecStore(settings) as s:
                started = time.perf_counter()
                results = s.prefetch((u, None) for u in urls)
                elapsed = time.perf_counter() - started
        failed = [u for u, r in results.items() if isinstance(r, FetchError)]
        if failed:
            raise RuntimeError(f"fetch failed: {failed}")
        return Run(elapsed, 0, 0)

    runs = interleaved(
        {
            "cli_jobs1": lambda: cli(1),
            "cli_jobs8": lambda: cli(8),
            "store_jobs1": lambda: store(1),
            "store_jobs8": lambda: store(8),
        },
        ctx.runs,
        warmup=not ctx.quick,
    )
    s = {k: summary(v) for k, v in runs.items()}
    ratio = s["cli_jobs1"]["median_s"] / s["cli_jobs8"]["median_s"]
    ratio_store = s["store_jobs1"]["median_s"] / s["store_jobs8"]["median_s"]
    rows = [
        ["ramscope fetch --jobs 1 (baseline)", *_cells(s["cli_jobs1"]), "1.00"],
        ["ramscope fetch --jobs 8", *_cells(s["cli_jobs8"]), f"{ratio:.2f}x"],
        ["SpecStore.prefetch, jobs 1 (baseline)", *_cells(s["store_jobs1"]), "1.00"],
        ["SpecStore.prefetch, jobs 8", *_cells(s["store_jobs8"]), f"{ratio_store:.2f}x"],
    ]
    ideal = SPECS / -(-SPECS // 8)
    print(
        table(
            f"5. fetch concurrency: {SPECS} specs, {latency * 1000:.0f} ms latency each (median of {ctx.runs}; "
            f"at most {ideal:.2f}x with 8 workers: {-(-SPECS // 8)} rounds)",
            ["what", "median s", "min s", "max s", "speed-up"],
            rows,
        )
    )
    section = {
        "specs": len(files),
        "latency_s": latency,
        "runs": s,
        "speedup_cli": ratio,
        "speedup_store": ratio_store,
        "ideal_speedup": ideal,
    }
    quick = " (quick run: 20 ms latency, not the issue's 200 ms)" if ctx.quick else ""
    return section, [
        Target(
            "5 fetch",
            "fetching 20 specs (SpecStore.prefetch), jobs 1 / jobs 8",
            ratio_store,
            ">= 5",
            ratio_store >= 5,
            f"at most {ideal:.2f}x with 8 workers{quick}",
        ),
        Target(
            "5 fetch",
            "whole `ramscope fetch` process, --jobs 1 / --jobs 8",
            ratio,
            ">= 5",
            ratio >= 5,
            f"fixed start-up and table in both{quick}",
        ),
    ]


def _cells(s: dict[str, Any]) -> list[str]:
    return [f"{s['median_s']:.3f}", f"{s['min_s']:.3f}", f"{s['max_s']:.3f}"]
