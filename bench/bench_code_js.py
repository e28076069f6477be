"""Benchmark (issue 31): the JavaScript/TypeScript code reader over a large real tree, against parsing alone.

    python bench/bench_code_js.py DIR [--runs N]
    python bench/bench_code_js.py --install [--runs N]     # npm-installs a real tree into a temp dir

DIR is any tree of JavaScript/TypeScript (a ``node_modules``: thousands of real files, minified bundles,
generated SDKs, .d.ts declarations). ``--install`` makes one: ``npm install --ignore-scripts`` of
googleapis, @slack/bolt, octokit, @modelcontextprotocol/sdk, @microsoft/microsoft-graph-client, axios,
stripe, @notionhq/client and typescript 5 (nothing of it is run).

Measured, each in a child process of its own, interleaved (baseline, reader, baseline, reader ...), median
of N runs, with the child's own peak RSS:

- baseline: tree-sitter parsing every file (the same grammars and the same bytes bound as the reader);
- parse-named: parsing only the files the reader parses (those naming a client, an HTTP library, a URL
  or a marker, declaration files left out), so reader / parse-named is its cost over the parse of a file;
- reader: ``read_js`` of every file (prefilter, parse, bindings, calls), every call consumed.

The target (issue 31): the reader takes at most 2x the parsing alone.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import child_env, interleaved, mb, run_process, summary, table

SUFFIXES = {
    ".js": "js",
    ".mjs": "js",
    ".cjs": "js",
    ".jsx": "jsx",
    ".ts": "ts",
    ".mts": "ts",
    ".cts": "ts",
    ".tsx": "tsx",
}
DECLARATIONS = (".d.ts", ".d.mts", ".d.cts")
PACKAGES = (
    "googleapis",
    "@slack/bolt",
    "octokit",
    "@modelcontextprotocol/sdk",
    "@microsoft/microsoft-graph-client",
    "axios",
    "stripe",
    "@notionhq/client",
    "typescript@5",
)


def files_of(root: Path) -> list[tuple[Path, str]]:
    out = []
    for p in sorted(root.rglob("*")):
        dialect = SUFFIXES.get(p.suffix)
        if dialect and p.is_file() and not p.is_symlink():
            out.append((p, dialect))
    return out


def child(mode: str, root: Path) -> None:
    """One measured pass (run in a child process): prints a JSON line of counts."""
    from ramscope.evidence.code_js import _PREFILTER, DEFAULT_LIMITS, _parse, read_js
    from ramscope.evidence.model import ObservedCall

    files = files_of(root)
    counts = {"files": len(files), "bytes": 0, "calls": 0, "unresolved": 0, "not_read": 0}
    t0 = time.perf_counter()
    for path, dialect in files:
        data = path.read_bytes()
        counts["bytes"] += len(data)
        if mode == "parse-named" and (not any(w in data for w in _PREFILTER) or path.name.endswith(DECLARATIONS)):
            continue  # the files read_js parses: the prefilter's, declaration files left out
        if mode in ("parse", "parse-named"):
            if len(data) > DEFAULT_LIMITS.max_bytes or isinstance(_parse(data, dialect, DEFAULT_LIMITS), str):
                counts["not_read"] += 1
            continue
        for c in read_js(data, str(path.relative_to(root)), dialect=dialect):
            if isinstance(c, ObservedCall):
                counts["calls"] += 1
            else:
                counts["unresolved"] += 1
    counts["inner_s"] = round(time.perf_counter() - t0, 3)
    print(json.dumps(counts))


def install(into: Path) -> Path:
    (into / "package.json").write_text('{"name": "bench", "version": "1.0.0", "private": true}\n')
    subprocess.run(
        ["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", *PACKAGES],
        cwd=into,
        check=True,
        capture_output=True,
    )
    return into / "node_modules"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("dir", nargs="?", type=Path)
    ap.add_argument("--install", action="store_true", help="npm-install a real tree into a temp dir")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--child", choices=("parse", "parse-named", "read"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.dir)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = install(Path(tmp)) if args.install else args.dir
        if root is None:
            ap.error("give DIR or --install")
        me = [sys.executable, str(Path(__file__).resolve())]
        env = child_env()
        runs = interleaved(
            {
                "parse": lambda: run_process([*me, "--child", "parse", str(root)], env=env),
                "parse-named": lambda: run_process([*me, "--child", "parse-named", str(root)], env=env),
                "read": lambda: run_process([*me, "--child", "read", str(root)], env=env),
            },
            args.runs,
        )
        last = {k: json.loads(v[-1].stdout.decode().strip().splitlines()[-1]) for k, v in runs.items()}
        s = {k: summary(v) for k, v in runs.items()}
        ratio = s["read"]["median_s"] / s["parse"]["median_s"]
        cpu = {k: sorted(r.cpu for r in v)[len(v) // 2] for k, v in runs.items()}
        cpu_ratio = cpu["read"] / cpu["parse"] if cpu["parse"] else 0.0
        named_ratio = cpu["read"] / cpu["parse-named"] if cpu["parse-named"] else 0.0
        rows = [
            [
                "tree-sitter parse only",
                f"{s['parse']['median_s']:.2f}",
                f"{cpu['parse']:.2f}",
                mb(s["parse"]["median_rss_mb"] * 1e6),
                "",
                "",
            ],
            [
                "parse only the files read_js parses",
                f"{s['parse-named']['median_s']:.2f}",
                f"{cpu['parse-named']:.2f}",
                mb(s["parse-named"]["median_rss_mb"] * 1e6),
                "",
                "",
            ],
            [
                "read_js (parse + calls)",
                f"{s['read']['median_s']:.2f}",
                f"{cpu['read']:.2f}",
                mb(s["read"]["median_rss_mb"] * 1e6),
                f"{ratio:.2f}x",
                f"{cpu_ratio:.2f}x",
            ],
        ]
        info = last["read"]
        title = (
            f"code_js over {info['files']:,} files, {info['bytes'] / 1e6:,.1f} MB ({args.runs} runs, median): "
            f"{info['calls']:,} calls, {info['unresolved']:,} unresolved"
        )
        print(table(title, ["pass", "wall s", "cpu s", "peak RSS MB", "wall ratio", "cpu ratio"], rows))
        out = {
            "ratio": round(ratio, 3),
            "cpu_ratio": round(cpu_ratio, 3),
            "cpu_ratio_to_the_files_parsed": round(named_ratio, 3),
            "cpu_s": cpu,
        }
        print(json.dumps({**out, "parse": s["parse"], "read": s["read"], "counts": last}))


if __name__ == "__main__":
    main()
