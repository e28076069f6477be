"""Benchmark 9 (issue 17): YAML parsers on big real specs, and a cold derive of a YAML spec vs its JSON.

    python bench/bench_yaml.py [--runs N] [--quick] [--only NAME ...]   # in-process parser table
    python bench/run.py --only yaml                                     # parsers + the derive target

**Parsers, in process** (like ``bench_index.py``): the YAML forms of Microsoft Graph v1.0 (26 MB)
and GitHub's REST spec (10 MB) that ``bench/make_yaml.py`` writes from the npm corpora. Every
candidate installable from PyPI on CPython 3.11 is timed (median of ``--runs``, cyclic GC paused as
ramscope pauses it when parsing a spec; a parser whose first run takes over 20 s runs once) and its
value compared with what ramscope read before issue 17 (libyaml's path: compose, inspect, construct,
JSON-compatible conversion). "same" is that comparison; where it fails, the first difference is
named: the Rust-backed parsers read YAML 1.2's core schema, PyYAML and ramscope YAML 1.1.

**Cold derive** (with ``run.py``): ``ramscope derive`` of a card with one access into Graph v1.0
(``me.ListMessages``), the spec served as YAML and as JSON on 127.0.0.1 with
``--allow-private-network`` and an empty cache per run, interleaved. The target: YAML ≤ 3× JSON.
The same YAML card with the fast path switched off (libyaml's path, as before) is run beside them.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import platform
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_yaml

REPO = Path(__file__).resolve().parent.parent

#: A parser slower than this on its first run is not run again (ruamel.yaml's round-trip loader).
SLOW_S = 20.0


def _candidates() -> list[tuple[str, str, Callable[[], Callable[[str, bytes], Any]]]]:
    """(name, PyPI distribution, factory of a loader taking (text, bytes)); imported when run."""

    def ramscope_now() -> Callable[[str, bytes], Any]:
        from ramscope._parse import parse_bytes
        from ramscope.specs._doc import SPEC_LIMITS

        return lambda _t, b: parse_bytes(b, source="spec.yaml", limits=SPEC_LIMITS, fmt="yaml").value

    def ramscope_before() -> Callable[[str, bytes], Any]:
        from ramscope._parse import _decode, _parse_yaml_libyaml
        from ramscope.specs._doc import SPEC_LIMITS

        return lambda _t, b: _parse_yaml_libyaml(_decode(b, "spec.yaml"), "spec.yaml", SPEC_LIMITS).value

    def csafe() -> Callable[[str, bytes], Any]:
        import yaml

        return lambda t, _b: yaml.load(t, Loader=yaml.CSafeLoader)

    def ryml_tree() -> Callable[[str, bytes], Any]:
        import ryml

        return lambda _t, b: ryml.parse_in_arena(b)

    def ruamel(typ: str) -> Callable[[], Callable[[str, bytes], Any]]:
        def make() -> Callable[[str, bytes], Any]:
            from ruamel.yaml import YAML

            y = YAML(typ=typ, pure=False)
            return lambda t, _b: y.load(t)

        return make

    def simple(module: str, call: Callable[[Any, str], Any]) -> Callable[[], Callable[[str, bytes], Any]]:
        def make() -> Callable[[str, bytes], Any]:
            import importlib

            mod = importlib.import_module(module)
            return lambda t, _b: call(mod, t)

        return make

    return [
        ("ramscope before: libyaml compose/inspect/construct", "PyYAML", ramscope_before),
        ("ramscope now: rapidyaml tree + PyYAML resolvers", "rapidyaml", ramscope_now),
        ("PyYAML CSafeLoader, yaml.load alone", "PyYAML", csafe),
        ("rapidyaml: parse_in_arena, tree only", "rapidyaml", ryml_tree),
        ("ruamel.yaml typ=safe (C reader)", "ruamel.yaml.clib", ruamel("safe")),
        ("ruamel.yaml typ=rt", "ruamel.yaml", ruamel("rt")),
        ("yaml-rs (Rust)", "yaml-rs", simple("yaml_rs", lambda m, t: m.loads(t, parse_datetime=False))),
        ("fastyaml-rs (Rust)", "fastyaml-rs", simple("fast_yaml", lambda m, t: m.safe_load(t))),
        ("py-yaml12 (Rust)", "py-yaml12", simple("yaml12", lambda m, t: m.parse_yaml(t))),
        ("oryaml (Rust)", "oryaml", simple("oryaml", lambda m, t: m.loads(t))),
        ("pyyaml-rs (Rust)", "pyyaml-rs", simple("pyyaml_rs", lambda m, t: m.safe_load(t))),
        ("rustyyaml (Rust)", "rustyyaml", simple("rustyyaml", lambda m, t: m.safe_load(t))),
        ("ryaml (Rust)", "ryaml", simple("ryaml", lambda m, t: m.loads(t))),
        ("pyrs-yaml (Rust)", "pyrs-yaml", simple("pyrs_yaml", lambda m, t: m.safe_load(t))),
        (
            "pyrs-yaml (Rust) schema=yaml1.1",
            "pyrs-yaml",
            simple("pyrs_yaml", lambda m, t: m.safe_load(t, schema="yaml1.1")),
        ),
        ("rs-turboyaml (Rust)", "rs-turboyaml", simple("turboyaml", lambda m, t: m.load(t))),
    ]


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where two parsed documents first differ, as a JSON pointer and the two values (iterative)."""
    stack = [(a, b, path)]
    while stack:
        x, y, p = stack.pop()
        kind_x, kind_y = _kind(x), _kind(y)
        if kind_x is not kind_y:
            return f"{_tail(p)}: {x!r:.24} vs {y!r:.24}"
        if isinstance(x, dict):
            if list(x) != list(y):
                return f"{_tail(p)}: keys {sorted(set(map(str, x)) ^ set(map(str, y)))[:3]}"
            stack.extend((x[k], y[k], f"{p}/{k}") for k in reversed(list(x)))
        elif isinstance(x, list):
            if len(x) != len(y):
                return f"{_tail(p)}: {len(x)} vs {len(y)} items"
            stack.extend((i, j, f"{p}/{n}") for n, (i, j) in reversed(list(enumerate(zip(x, y, strict=True)))))
        elif x != y and not (isinstance(x, float) and math.isnan(x) and isinstance(y, float) and math.isnan(y)):
            return f"{_tail(p)}: {x!r:.24} vs {y!r:.24}"
    return None


def _kind(v: Any) -> type:
    """The JSON type of a value: ruamel.yaml's round-trip loader gives subclasses (ScalarInt, CommentedMap)."""
    for t in (bool, int, float, str, dict, list):
        if isinstance(v, t):
            return t
    return type(v)


def _tail(pointer: str) -> str:
    """The last two tokens of a pointer: enough to see what kind of value differs."""
    return "/".join(["...", *pointer.split("/")[-2:]]) if pointer.count("/") > 2 else pointer or "/"


def _time(load: Callable[[str, bytes], Any], text: str, data: bytes, runs: int) -> tuple[list[float], Any]:
    times: list[float] = []
    value: Any = None
    for _ in range(runs):
        value = None
        gc.collect()
        gc.disable()
        try:
            t = time.perf_counter()
            value = load(text, data)
            times.append(time.perf_counter() - t)
        finally:
            gc.enable()
        if times[-1] > SLOW_S:
            break
    return times, value


def run_parsers(runs: int, files: dict[str, Path], *, only: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"files": {}, "parsers": []}
    for fname, path in files.items():
        data = path.read_bytes()
        text = data.decode("utf-8")
        out["files"][fname] = {"bytes": len(data), "lines": data.count(b"\n")}
        reference: Any = None
        for name, dist, factory in _candidates():
            if only and not any(o.lower() in name.lower() for o in only) and "before" not in name:
                continue
            row: dict[str, Any] = {"file": fname, "parser": name, "distribution": dist}
            try:
                load = factory()
            except ImportError as exc:
                row["error"] = f"not installed ({exc.name})"
                out["parsers"].append(row)
                continue
            try:
                times, value = _time(load, text, data, runs)
            except Exception as exc:  # a parser that cannot read a real spec is a result too
                row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:80] if str(exc) else ''}"
                out["parsers"].append(row)
                continue
            med = statistics.median(times)
            row.update(median_s=med, min_s=min(times), runs=len(times), mb_per_s=len(data) / 1e6 / med)
            if "before" in name:
                reference = value
            if "tree only" in name:
                row["same"] = None
            else:
                diff = first_difference(reference, value) if reference is not None else "no reference"
                row["same"] = diff is None
                if diff:
                    row["difference"] = diff
            del value
            out["parsers"].append(row)
            print(f"  {fname:16} {name:52} {med:7.3f} s  {row['mb_per_s']:6.1f} MB/s", file=sys.stderr, flush=True)
        reference = None
    return out


def print_parsers(result: dict[str, Any]) -> None:
    from _common import table

    rows = []
    for r in result["parsers"]:
        if "error" in r:
            rows.append([r["parser"], r["file"], "-", "-", "-", r["error"]])
            continue
        same = "n/a" if r["same"] is None else "yes" if r["same"] else "no"
        rows.append(
            [r["parser"], r["file"], f"{r['median_s']:.3f}", f"{r['mb_per_s']:.1f}", same, r.get("difference", "")]
        )
    print(
        table(
            "9a. YAML parsers, in process (GC paused)",
            ["parser", "file", "median s", "MB/s", "same", "first difference"],
            rows,
        )
    )


# --------------------------------------------------------------------------- with run.py

#: Runs ramscope's CLI with the rapidyaml path switched off: the libyaml path, as before issue 17.
_BEFORE = (
    "import sys\nimport ramscope._parse as p\np._fast_yaml = lambda *args: p._FALLBACK\n"
    "from ramscope.cli import main\nsys.argv[0] = 'ramscope'\nsys.exit(main())\n"
)


def run(ctx: Any, *, parsers: bool = True) -> tuple[dict[str, Any], list[Any]]:
    from _common import (
        Access,
        Missing,
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

    if ctx.quick:  # no npm corpora: Gmail's Discovery document (150 KB), as YAML in the scratch directory
        json_path = spec_path("gmail")
        yaml_path = ctx.work / "gmail.v1.yaml"
        make_yaml.convert(json_path, yaml_path, check=False)
        files = {yaml_path.name: yaml_path}
        op = SpecOp("gmail.users.messages.list", "GET")
    else:
        json_path = spec_path("graph-v1")
        try:
            files = make_yaml.ensure()
        except FileNotFoundError as exc:
            raise Missing(str(exc)) from None
        yaml_path = files["graph-v1.0.yaml"]
        op = SpecOp("me.ListMessages", "GET")
    section: dict[str, Any] = {}
    if parsers:
        section["parsers"] = run_parsers(1 if ctx.quick else ctx.runs, files)
        print_parsers(section["parsers"])
    cards = {
        # One card name: it is in the reports, which are compared.
        "json": write_card(ctx.work / "yaml-bench-json.json", "spec", [Access(ctx.serve(json_path), op)]),
        "yaml": write_card(ctx.work / "yaml-bench-yaml.json", "spec", [Access(ctx.serve(yaml_path), op)]),
    }

    def derive(kind: str, *, before: bool = False) -> Run:
        cache = ctx.scratch(f"yaml-{kind}-")
        args = ["--cache-dir", str(cache), "--allow-private-network", "--no-progress", "derive", str(cards[kind])]
        cmd = [sys.executable, "-c", _BEFORE, *args] if before else ramscope_cmd(*args)
        try:
            return run_process(cmd, ok=(0, 3))
        finally:
            shutil.rmtree(cache, ignore_errors=True)

    runs = interleaved(
        {
            "json": lambda: derive("json"),
            "yaml": lambda: derive("yaml"),
            "yaml_libyaml": lambda: derive("yaml", before=True),
        },
        ctx.runs,
    )
    s = {k: summary(v) for k, v in runs.items()}
    ratio = s["yaml"]["median_s"] / s["json"]["median_s"]
    before = s["yaml_libyaml"]["median_s"] / s["json"]["median_s"]
    # The same report either way: the YAML and JSON forms hold the same document.
    reports = {k: json.loads(v[-1].stdout) for k, v in runs.items()}
    same = _strip(reports["json"]) == _strip(reports["yaml"]) == _strip(reports["yaml_libyaml"])
    section["derive"] = {
        **s,
        "yaml_over_json": ratio,
        "libyaml_yaml_over_json": before,
        "reports_equal": same,
        "json_bytes": json_path.stat().st_size,
        "yaml_bytes": yaml_path.stat().st_size,
    }
    rows = [
        [f"JSON {json_path.stat().st_size / 1e6:.1f} MB", f"{s['json']['median_s']:.3f}", "1.000"],
        [f"YAML {yaml_path.stat().st_size / 1e6:.1f} MB (rapidyaml)", f"{s['yaml']['median_s']:.3f}", f"{ratio:.3f}"],
        [
            f"YAML {yaml_path.stat().st_size / 1e6:.1f} MB (libyaml, before)",
            f"{s['yaml_libyaml']['median_s']:.3f}",
            f"{before:.3f}",
        ],
    ]
    print(table(f"9b. cold derive, one access ({op.operation_id})", ["spec served as", "median s", "/ JSON"], rows))
    print(f"reports equal (JSON, YAML, YAML before): {same}\n")
    targets = [
        Target(
            "yaml", f"{json_path.name} cold derive: YAML / JSON", ratio, "≤ 3.0", ratio <= 3.0, f"before: {before:.2f}"
        ),
    ]
    return section, targets


def _strip(report: dict[str, Any]) -> Any:
    """A report without what differs between runs and between the two spec URLs."""
    drop = {"generated_at", "fetched_at", "cache", "timing", "duration_ms", "spec_url", "url", "final_url", "sha256"}
    drop |= {"source"}

    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if k not in drop}
        if isinstance(v, list):
            return [clean(x) for x in v]
        if isinstance(v, str) and "127.0.0.1" in v:
            return "<url>"
        return v

    return clean(report)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per parser (median; default 3)")
    ap.add_argument("--quick", action="store_true", help="GitHub's spec only")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="parsers whose name contains NAME (and the reference)")
    ap.add_argument("--derive", action="store_true", help="only the cold derive, YAML vs JSON (as run.py runs it)")
    args = ap.parse_args(argv)
    if args.derive:
        return _derive_only(args.runs)
    files = make_yaml.ensure()
    if args.quick:
        files = {"github.yaml": files["github.yaml"]}
    result = run_parsers(args.runs, files, only=args.only)
    print_parsers(result)
    result["meta"] = {"python": sys.version.split()[0], "machine": platform.machine(), "runs": args.runs}
    (REPO / "bench" / "results-yaml.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0


def _derive_only(runs: int) -> int:
    import subprocess
    import tempfile

    from _common import SRC, Context, Spawner

    Spawner.get()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(SRC)], check=True, stdout=subprocess.DEVNULL)
    work = Path(tempfile.mkdtemp(prefix="ramscope-bench-yaml-"))
    ctx = Context(quick=False, runs=max(runs, 5), work=work, naive_python=None, naive_cap=0.0)
    try:
        section, targets = run(ctx, parsers=False)
    finally:
        ctx.close()
        Spawner.stop()
        shutil.rmtree(work, ignore_errors=True)
    for t in targets:
        print(f"{t.what}: {t.measured:.3f} (target {t.target}, {'met' if t.met else 'MISSED'}; {t.note})")
    print(json.dumps(section, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
