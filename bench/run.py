"""Run ramscope's benchmarks: one table per benchmark, a summary of the targets, ``bench/results.json``.

    python bench/run.py                 # everything, as the issue states it (the naive baseline takes minutes)
    python bench/run.py --quick         # small specs, few cards, short latencies: well under a minute
    python bench/run.py --only cold warm --runs 9
    python bench/run.py --against e7c1367 --only cold tiercase startup   # this checkout against an earlier commit

Benchmarks (``bench/README.md`` describes the method and the latest numbers):

  cold     1. cold derive vs the parse floor (read + orjson.loads of the same files)
  warm     2. warm derive vs cold; a 47 MB-spec card vs a 100 KB-spec card, both warm
  naive    3. prance + openapi-core on the same specs vs ramscope (needs the ``bench`` extra)
  batch    4. 1 to 10,000 generated cards over 50 shared real specs: time and peak RSS
  fetch    5. 20 specs behind 200 ms latency, --jobs 1 vs --jobs 8
  memory   6. peak RSS of a cold derive against Graph beta vs holding its parsed JSON
  tier     7. the per-tier optimiser's bounded fallback, 200 to 5,000 accesses
  providers 8. cards that need a permission universe (Google) or a catalog (Graph): warm vs cold
  yaml     9. YAML parsers on Graph v1.0 and GitHub as YAML; cold derive of the YAML form vs the JSON
  startup  10. `ramscope --version`, `ramscope validate` and `derive --help` vs an empty interpreter
  tiercase 11. a whole derive of 800 accesses x 50 alternatives (issue 36's tier case): time, peak RSS

``--against REV`` runs the selected benchmarks twice in one invocation, alternately with this
checkout's ramscope and with REV's (checked out into a temporary worktree; the benchmark code is
this checkout's for both), and prints both figures and their ratio (this / REV) per target.

Every figure is the median of at least 5 runs, measured in the same invocation as its
baseline and interleaved with it; ratios, not absolute times, are what the targets judge.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, SRC, Context, Missing, Spawner, Target, table

# In-process benchmarks (the tier optimiser) import the ramscope being measured.
sys.path.insert(0, str(SRC))

BENCHMARKS = ("cold", "warm", "naive", "batch", "fetch", "memory", "tier", "providers", "yaml", "startup", "tiercase")
RESULTS = REPO / "bench" / "results.json"


def _naive_python(given: str | None) -> str | None:
    """An interpreter that can import prance and openapi-core (they cannot share the test environment)."""
    candidates = [given, os.environ.get("RAMSCOPE_BENCH_NAIVE_PYTHON"), sys.executable]
    local = REPO / "bench" / ".venv-naive" / "bin" / "python"
    candidates.append(str(local) if local.exists() else None)
    for c in candidates:
        if not c:
            continue
        probe = subprocess.run([c, "-c", "import prance, openapi_core"], capture_output=True, check=False)
        if probe.returncode == 0:
            return c
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small specs, few cards, short latency (CI smoke)")
    ap.add_argument("--only", nargs="+", choices=BENCHMARKS, metavar="NAME", help=f"among: {', '.join(BENCHMARKS)}")
    ap.add_argument("--runs", type=int, default=5, help="runs per measurement, >= 5 (median; default 5)")
    ap.add_argument("--naive-python", help="interpreter with the bench extra (prance, openapi-core) installed")
    ap.add_argument("--naive-cap", type=float, default=None, help="seconds per naive run (default 300; quick 10)")
    ap.add_argument("--output", type=Path, default=RESULTS, help=f"results file (default {RESULTS.relative_to(REPO)})")
    ap.add_argument("--against", metavar="REV", help="also run every selected benchmark on commit REV; print both")
    ap.add_argument("--rounds", type=int, default=1, help="with --against: alternate this checkout and REV this often")
    args = ap.parse_args(argv)
    if args.runs < 5:
        ap.error("--runs must be at least 5: every figure is a median of at least 5 runs")
    if args.against:
        return _against(args, argv or sys.argv[1:])
    selected = args.only or list(BENCHMARKS)
    Spawner.get()  # now, while this process is small: children inherit its size in their peak RSS
    # Child processes import ramscope from src/; an installed ramscope has its bytecode compiled, so
    # compile ours too (PYTHONDONTWRITEBYTECODE would otherwise make every child compile every module).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(SRC)], check=True, stdout=subprocess.DEVNULL)
    work = Path(tempfile.mkdtemp(prefix="ramscope-bench-"))
    ctx = Context(
        quick=args.quick,
        runs=args.runs,
        work=work,
        naive_python=_naive_python(args.naive_python) if "naive" in selected else None,
        naive_cap=args.naive_cap or (10.0 if args.quick else 300.0),
    )
    results: dict[str, Any] = {
        "meta": {
            "when": datetime.now(UTC).isoformat(timespec="seconds"),
            "mode": "quick" if args.quick else "full",
            "runs": args.runs,
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "rss_method": "ru_maxrss from os.wait4 on each child, started by a small spawner process",
        }
    }
    targets: list[Target] = []
    started = time.perf_counter()
    try:
        for name in BENCHMARKS:
            if name not in selected or name in results:
                continue
            t0 = time.perf_counter()
            try:
                sections, found = _run(name, ctx)
            except Missing as exc:
                print(f"{name}: skipped: {exc}\n")
                sections, found = {name: {"skipped": str(exc)}}, []
            except Exception as exc:  # a broken benchmark must not hide the others' results
                traceback.print_exc()
                sections, found = {name: {"error": f"{type(exc).__name__}: {exc}"}}, []
            for key, value in sections.items():
                value.setdefault("seconds", time.perf_counter() - t0)
                results[key] = value
            targets.extend(found)
    finally:
        ctx.close()
        Spawner.stop()
        shutil.rmtree(work, ignore_errors=True)
    results["summary"] = [t.to_dict() for t in targets]
    results["meta"]["seconds"] = time.perf_counter() - started
    rows = [[t.benchmark, t.what, _num(t.measured), t.target, _met(t.met), t.note] for t in targets]
    print(table("summary", ["benchmark", "measured", "value", "target", "result", "note"], rows))
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"results written to {args.output} ({results['meta']['seconds']:.0f} s)")
    failed = [name for name in selected if "error" in results.get(name, {})]
    return 1 if failed else 0


def _run(name: str, ctx: Context) -> tuple[dict[str, dict[str, Any]], list[Target]]:
    runners: dict[str, Callable[[Context], tuple[dict[str, dict[str, Any]], list[Target]]]] = {
        "cold": _cold_warm,
        "warm": _cold_warm,
        "naive": _naive,
        "batch": _batch,
        "fetch": _fetch,
        "memory": _memory,
        "tier": _tier,
        "providers": _providers,
        "startup": _startup,
        "yaml": _yaml,
        "tiercase": _tiercase,
    }
    return runners[name](ctx)


def _tiercase(ctx: Context) -> tuple[dict[str, dict[str, Any]], list[Target]]:
    import bench_tiercase

    section, targets = bench_tiercase.run(ctx)
    return {"tiercase": section}, targets


def _child_argv(argv: list[str]) -> list[str]:
    """``argv`` without ``--against REV``, ``--rounds N`` and ``--output FILE``."""
    out: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        name = a.split("=", 1)[0]
        if name in ("--against", "--rounds", "--output"):
            skip = "=" not in a
            continue
        out.append(a)
    return out


def _against(args: argparse.Namespace, argv: list[str]) -> int:
    """Each round: the benchmarks on this checkout, then on REV (same benchmark code, REV's ramscope)."""
    rev = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--verify", f"{args.against}^{{commit}}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if rev.returncode != 0:
        print(f"run.py: error: {args.against!r} is not a commit of this repository", file=sys.stderr)
        return 2
    commit = rev.stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="ramscope-against-"))
    tree = work / "tree"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), commit], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    results: dict[str, list[dict[str, Any]]] = {"this": [], "rev": []}
    try:
        child = _child_argv(argv)
        for _ in range(max(1, args.rounds)):
            for side, src in (("this", SRC), ("rev", tree / "src")):
                out = work / f"{side}-{len(results[side])}.json"
                env = dict(os.environ, RAMSCOPE_BENCH_SRC=str(src))
                print(f"== {side}: ramscope from {src}", flush=True)
                subprocess.run([sys.executable, __file__, *child, "--output", str(out)], env=env, check=False)
                if out.exists():
                    results[side].append(json.loads(out.read_text()))
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        shutil.rmtree(work, ignore_errors=True)
    rows, table_json = _regression_rows(results, commit)
    print(table(f"regression table: this checkout against {commit[:12]}", ["benchmark", "measured", "this", "REV",
                                                                          "this / REV"], rows))  # fmt: skip
    args.output.write_text(json.dumps({"against": commit, "rows": table_json, "runs": results}, indent=2) + "\n")
    print(f"results written to {args.output}")
    return 0 if results["this"] and results["rev"] else 1


def _regression_rows(
    results: dict[str, list[dict[str, Any]]], commit: str
) -> tuple[list[list[str]], list[dict[str, Any]]]:
    """Per target, the median over rounds of each side's measured value, and their ratio."""
    import statistics

    def values(side: str) -> dict[tuple[str, str], list[float]]:
        out: dict[tuple[str, str], list[float]] = {}
        for res in results[side]:
            for t in res.get("summary", []):
                out.setdefault((t["benchmark"], t["what"]), []).append(float(t["measured"]))
        return out

    this, rev = values("this"), values("rev")
    rows: list[list[str]] = []
    data: list[dict[str, Any]] = []
    for key in list(this) + [k for k in rev if k not in this]:
        a = statistics.median(this[key]) if key in this else None
        b = statistics.median(rev[key]) if key in rev else None
        ratio = a / b if a is not None and b else None
        rows.append([key[0], key[1], _num(a) if a is not None else "-", _num(b) if b is not None else "-",
                     f"{ratio:.2f}" if ratio is not None else "-"])  # fmt: skip
        data.append({"benchmark": key[0], "what": key[1], "this": a, "rev": b, "ratio": ratio})
    return rows, data


def _cold_warm(ctx: Context) -> tuple[dict[str, dict[str, Any]], list[Target]]:
    import bench_derive

    cold, warm, targets = bench_derive.run_cold_warm(ctx)
    return {"cold": cold, "warm": warm}, targets


def _memory(ctx: Context) -> tuple[dict[str, dict[str, Any]], list[Target]]:
    import bench_derive

    section, targets = bench_derive.run_memory(ctx)
    return {"memory": section}, targets


def _naive(ctx: Context) -> tuple[dict[str, dict[str, Any]], list[Target]]:
    import bench_naive

    section, targets = bench_naive.run(ctx)
    return {"naive": section}, targets


def _batch(ctx: Context) -> tuple[dict[str, dict[str, Any]], list[Target]]:
    import bench_batch

    section, targets = bench_batch.run(ctx)
    return {"batch": section}, targets


def _fetch(ctx: Context) -> tuple[dict[str, dict[str, Any]], list[Target]]:
    import bench_fetch

    section, targets = bench_fetch.run(ctx)
    return {"fetch": section}, targets


def _tier(ctx: Context) -> tuple[dict[str, dict[str, Any]], list[Target]]:
    import bench_tier

    section, targets = bench_tier.run(ctx)
    return {"tier": section}, targets


def _providers(ctx: Context) -> tuple[dict[str, dict[str, Any]], list[Target]]:
    import bench_providers

    section, targets = bench_providers.run(ctx)
    return {"providers": section}, targets


def _startup(ctx: Context) -> tuple[dict[str, dict[str, Any]], list[Target]]:
    import bench_startup

    section, targets = bench_startup.run(ctx)
    return {"startup": section}, targets


def _yaml(ctx: Context) -> tuple[dict[str, dict[str, Any]], list[Target]]:
    import bench_yaml

    section, targets = bench_yaml.run(ctx)
    return {"yaml": section}, targets


def _num(v: float) -> str:
    return f"{v:.3f}" if v < 10 else f"{v:,.1f}"


def _met(met: bool | None) -> str:
    return "n/a" if met is None else "met" if met else "MISSED"


if __name__ == "__main__":
    sys.exit(main())
