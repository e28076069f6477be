"""Benchmark (issue 31): ``ramscope draft --code`` over a large real tree, time and peak RSS, against parsing
the same files alone with ``ast``.

    python bench/bench_code.py [--root DIR] [--runs N] [--output FILE]

The tree: the venv's ``site-packages`` by default (4,000+ Python files of real libraries: httpx, requests,
googleapiclient, mcp, slack-free code ...). Three processes, interleaved, median of ``--runs``:

* baseline: walk the files the reader would (the same walk: ``ramscope.evidence.code``'s skips) and
  ``ast.parse`` each, nothing else;
* ``ramscope --offline draft --code ROOT`` with an empty cache, as the hidden benchmark runs it (the reader
  skips files that name no client it knows before parsing them, and no spec can be fetched);
* the reader on every file, no skip (``read_python`` of each: parse plus the two passes), to show what the
  interpretation costs when every file is a candidate.

The target: the draft at most 2x the baseline's time.
"""

from __future__ import annotations

import argparse
import json
import site
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import child_env, interleaved, median, ramscope_cmd, run_process, summary, table

_WALK = """
import ast, sys, time
from pathlib import Path
from ramscope.evidence.code import _Stats, _files, _kind, CodeLimits
root = Path(sys.argv[1]); mode = sys.argv[2]
if mode == "read":
    from ramscope.evidence.code_python import read_python
n = calls = 0
for path, label in _files(root, "", _Stats(""), CodeLimits()):
    k = _kind(path)
    if k is None or k[0] != "python":
        continue
    data = path.read_bytes()
    if len(data) > CodeLimits().max_file_bytes:
        continue
    n += 1
    if mode == "parse":
        try:
            ast.parse(data)
        except (SyntaxError, ValueError):
            pass
    else:
        calls += sum(1 for _ in read_python(data, label))
print(n, calls)
"""


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_root = Path(next(p for p in site.getsitepackages() if p.endswith("site-packages")))
    ap.add_argument("--root", type=Path, default=default_root)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--output", type=Path, help="also write the raw figures here (JSON)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ramscope-bench-code-") as tmp:
        work = Path(tmp)
        draft = ramscope_cmd(
            "--offline",
            "--cache-dir",
            str(work / "empty-cache"),
            "--quiet",
            "draft",
            "--code",
            str(args.root),
            "-o",
            str(work / "card.json"),
            "--report",
            str(work / "report.json"),
        )
        parse = [sys.executable, "-c", _WALK, str(args.root), "parse"]
        read = [sys.executable, "-c", _WALK, str(args.root), "read"]
        names = {
            "ast.parse of every file (baseline)": parse,
            "ramscope --offline draft --code": draft,
            "read_python of every file (no skip)": read,
        }
        runs = interleaved(
            {name: (lambda cmd=cmd: run_process(cmd, env=child_env())) for name, cmd in names.items()}, args.runs
        )
        files = int(runs["ast.parse of every file (baseline)"][0].stdout.split()[0])
        report = json.loads((work / "report.json").read_text())
    base = summary(runs["ast.parse of every file (baseline)"])
    rows, raw = [], {}
    for name, rs in runs.items():
        s = summary(rs)
        cpu = median([r.cpu for r in rs])
        raw[name] = {**s, "median_cpu_s": cpu, "seconds": [r.seconds for r in rs]}
        rows.append(
            [name, s["median_s"], s["min_s"], s["max_s"], cpu, s["median_rss_mb"], s["median_s"] / base["median_s"]]
        )
    sites = len(report["call_sites"]) + report["call_sites_more"]
    if args.output:
        args.output.write_text(
            json.dumps({"root": str(args.root), "files": files, "call_sites": sites, "runs": raw}, indent=2)
        )
    print(
        table(
            f"draft --code over {args.root} ({files:,} Python files; {sites:,} call sites, "
            f"{len(report['unresolved']):,} unresolved; median of {args.runs})",
            ["process", "median s", "min s", "max s", "CPU s", "peak RSS MB", "time ratio"],
            rows,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
