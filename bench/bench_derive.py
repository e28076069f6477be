"""Benchmarks 1, 2 and 6: cold derive vs the parse floor, warm derive, peak memory.

    python bench/run.py --only cold warm memory [--quick]

1. **cold**: ``ramscope derive`` of a card with accesses into Graph beta (47 MB), GitHub
   (13 MB), compute.alpha (6 MB) and Gmail (150 KB), served on 127.0.0.1, each run with an
   empty cache, against the *parse floor*: a process that only reads the same four files and
   ``orjson.loads`` each. A second floor, ``orjson.loads`` with the cyclic GC paused (what
   ramscope itself does), is shown too: it is the stricter floor, not the target's baseline.
   1b: the same against a card whose big-spec access is named by resource_path + http_method
   (GitHub by operationId, Graph beta by ``GET /me/messages``: issue 17's card), and its floor.
   Target (issue 17): both ≤ 1.3x.
2. **warm**: the same card with the cache filled, against the cold derive; and a card with one
   access into Graph beta against a card with one access into a ~100 KB spec, both warm. These
   run with ``--no-reuse``: they derive from the cached specs and indexes. The same card with its
   stored report reused (what an unchanged card gets by default) is shown beside them.
   Target (issue 17): warm ≤ 0.05x cold.
6. **memory**: peak RSS of a cold derive of a card against Graph beta, against a process that
   reads the file and holds the parsed JSON.

``--quick`` swaps in compute.alpha and Gmail for the big specs (no npm corpora needed).
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
    median,
    ramscope_cmd,
    run_process,
    spec_path,
    summary,
    table,
    write_card,
)

#: (spec, operation) of the cold card: two Graph beta, one GitHub, one compute.alpha, two Gmail accesses.
FULL_CARD = [
    ("graph-beta", SpecOp("me.ListMessages", "GET")),
    ("graph-beta", SpecOp("users.user.ListUser", "GET")),
    ("github", SpecOp("issues/list-for-repo", "GET")),
    ("compute.alpha", SpecOp("compute.instances.list", "GET")),
    ("gmail", SpecOp("gmail.users.messages.list", "GET")),
    ("gmail", SpecOp("gmail.users.messages.send", "POST")),
]
#: Issue 17's card: GitHub by operationId and Graph beta by resource_path + http_method (matched
#: against the path spellings of 22,000 operations, not looked up by id).
PATH_CARD = [
    ("github", SpecOp("issues/list-for-repo", "GET")),
    ("graph-beta", SpecOp("", "GET", path="/me/messages")),
]
QUICK_PATH_CARD = [
    ("compute.alpha", SpecOp("", "GET", path="/projects/{project}/zones/{zone}/instances")),
    ("gmail", SpecOp("gmail.users.messages.list", "GET")),
]
QUICK_CARD = [
    ("compute.alpha", SpecOp("compute.instances.list", "GET")),
    ("compute.alpha", SpecOp("compute.instances.insert", "POST")),
    ("gmail", SpecOp("gmail.users.messages.list", "GET")),
    ("gmail", SpecOp("gmail.users.messages.send", "POST")),
]
#: The big and the ~100 KB spec of the size-independence check, with one operation each.
FULL_SIZES = (("graph-beta", SpecOp("me.ListMessages", "GET")), ("graphrbac", SpecOp("Applications_List", "GET")))
QUICK_SIZES = (
    ("compute.alpha", SpecOp("compute.instances.list", "GET")),
    ("discovery:file.v1.json", SpecOp("file.projects.locations.instances.list", "GET")),
)
#: Reads the files given and parses each with orjson; nothing else.
FLOOR = "import sys, orjson\nfor p in sys.argv[1:]:\n    with open(p, 'rb') as f:\n        orjson.loads(f.read())\n"
FLOOR_PAUSED = "import gc\ngc.disable()\n" + FLOOR
#: Reads one file and holds the parsed JSON until exit.
HOLD = "import sys, orjson\nwith open(sys.argv[1], 'rb') as f:\n    doc = orjson.loads(f.read())\n"
#: ramscope exits 3 when an access is incomplete: Graph beta and GitHub declare no security at all.
DERIVE_OK = (0, 3)


def _derive(ctx: Context, cache: Path, card: Path, *extra: str) -> Run:
    cmd = ramscope_cmd(
        "--cache-dir", str(cache), "--allow-private-network", "--no-progress", "derive", *extra, str(card)
    )
    return run_process(cmd, ok=DERIVE_OK)


def _card(ctx: Context, name: str, items: list[tuple[str, SpecOp]]) -> tuple[Path, list[Path]]:
    files = []
    accesses = []
    for spec, op in items:
        path = spec_path(spec)
        if path not in files:
            files.append(path)
        accesses.append(Access(ctx.serve(path), op))
    return write_card(ctx.work / f"{name}.json", name, accesses), files


def run_cold_warm(ctx: Context) -> tuple[dict[str, Any], dict[str, Any], list[Target]]:
    card, files = _card(ctx, "cold-card", QUICK_CARD if ctx.quick else FULL_CARD)
    path_card, path_files = _card(ctx, "path-card", QUICK_PATH_CARD if ctx.quick else PATH_CARD)
    path_files_args = [str(f) for f in path_files]
    big_spec, small_spec = QUICK_SIZES if ctx.quick else FULL_SIZES
    big_card, _ = _card(ctx, "one-big", [big_spec])
    small_card, _ = _card(ctx, "one-small", [small_spec])
    files_args = [str(f) for f in files]
    warm_cache = ctx.scratch("warm-")
    _derive(ctx, warm_cache, card)  # fill: the warm card and both size cards share this cache
    _derive(ctx, warm_cache, big_card)
    _derive(ctx, warm_cache, small_card)

    def cold(which: Path = card) -> Run:
        cache = ctx.scratch("cold-")
        try:
            return _derive(ctx, cache, which)
        finally:
            shutil.rmtree(cache, ignore_errors=True)

    runs = interleaved(
        {
            "floor": lambda: run_process([sys.executable, "-c", FLOOR, *files_args]),
            "floor_gc_paused": lambda: run_process([sys.executable, "-c", FLOOR_PAUSED, *files_args]),
            "cold": cold,
            "path_floor": lambda: run_process([sys.executable, "-c", FLOOR, *path_files_args]),
            "path_cold": lambda: cold(path_card),
            # --no-reuse: the targets are about deriving from cached specs and indexes; a report
            # reused whole (the default for an unchanged card) is measured beside them.
            "warm": lambda: _derive(ctx, warm_cache, card, "--no-reuse"),
            "warm_big": lambda: _derive(ctx, warm_cache, big_card, "--no-reuse"),
            "warm_small": lambda: _derive(ctx, warm_cache, small_card, "--no-reuse"),
            "reused": lambda: _derive(ctx, warm_cache, card),
        },
        ctx.runs,
        warmup=not ctx.quick,
    )
    shutil.rmtree(warm_cache, ignore_errors=True)
    s = {name: summary(r) for name, r in runs.items()}
    floor, cold_t, warm_t = s["floor"]["median_s"], s["cold"]["median_s"], s["warm"]["median_s"]
    ratio_cold = cold_t / floor
    ratio_path = s["path_cold"]["median_s"] / s["path_floor"]["median_s"]
    ratio_strict = cold_t / s["floor_gc_paused"]["median_s"]
    ratio_warm = warm_t / cold_t
    ratio_size = s["warm_big"]["median_s"] / s["warm_small"]["median_s"]
    sizes = {f.name: f.stat().st_size for f in files}
    specs_desc = ", ".join(f"{n} ({b / 1e6:.1f} MB)" for n, b in sizes.items())
    cold_rows = [
        ["floor: read + orjson.loads", *_cells(s["floor"]), "1.00"],
        [
            "floor, GC paused (stricter)",
            *_cells(s["floor_gc_paused"]),
            f"{s['floor_gc_paused']['median_s'] / floor:.2f}",
        ],
        ["ramscope derive, empty cache", *_cells(s["cold"]), f"{ratio_cold:.2f}"],
    ]
    header = ["process", "median s", "min s", "max s", "peak RSS MB", "ratio"]
    print(table(f"1. cold derive vs the parse floor ({specs_desc}; median of {ctx.runs})", header, cold_rows))
    path_sizes = {f.name: f.stat().st_size for f in path_files}
    path_desc = ", ".join(f"{n} ({b / 1e6:.1f} MB)" for n, b in path_sizes.items())
    path_ops = ", ".join(
        f"{op.method} {op.path}" if op.path else op.operation_id
        for _, op in (QUICK_PATH_CARD if ctx.quick else PATH_CARD)
    )
    path_rows = [
        ["floor: read + orjson.loads", *_cells(s["path_floor"]), "1.00"],
        ["ramscope derive, empty cache", *_cells(s["path_cold"]), f"{ratio_path:.2f}"],
    ]
    print(
        table(
            f"1b. cold derive by path + method vs the parse floor ({path_desc}: {path_ops}; median of {ctx.runs})",
            header,
            path_rows,
        )
    )
    big_name = spec_path(big_spec[0]).name
    small_name = spec_path(small_spec[0]).name
    warm_rows = [
        ["cold derive (baseline)", *_cells(s["cold"]), "1.00"],
        ["warm derive, same card (--no-reuse)", *_cells(s["warm"]), f"{ratio_warm:.3f}"],
        ["warm, same card, report reused", *_cells(s["reused"]), f"{s['reused']['median_s'] / cold_t:.3f}"],
        [f"warm, 1 access into {small_name} (baseline)", *_cells(s["warm_small"]), "1.00"],
        [f"warm, 1 access into {big_name}", *_cells(s["warm_big"]), f"{ratio_size:.2f}"],
    ]
    print(table(f"2. warm derive (median of {ctx.runs})", header, warm_rows))
    quick = " (quick run: small specs, not the issue's conditions)" if ctx.quick else ""
    targets = [
        Target(
            "1 cold",
            "cold derive / parse floor (by operationId)",
            ratio_cold,
            "<= 1.3",
            ratio_cold <= 1.3,
            f"vs the GC-paused floor: {ratio_strict:.2f}{quick}",
        ),
        Target(
            "1 cold",
            "cold derive / parse floor (a big spec by path + method)",
            ratio_path,
            "<= 1.3",
            ratio_path <= 1.3,
            quick.strip(),
        ),
        Target("2 warm", "warm derive / cold derive", ratio_warm, "<= 0.05", ratio_warm <= 0.05, quick.strip()),
        Target(
            "2 warm",
            f"warm {big_name} card / warm {small_name} card",
            ratio_size,
            "<= 1.5",
            ratio_size <= 1.5,
            quick.strip(),
        ),
    ]
    cold_section = {
        "specs": sizes,
        "card": str(card),
        "runs": {k: s[k] for k in ("floor", "floor_gc_paused", "cold", "path_floor", "path_cold")},
        "ratio": ratio_cold,
        "ratio_strict_floor": ratio_strict,
        "path_card": {"specs": path_sizes, "operations": path_ops, "ratio": ratio_path},
    }
    warm_section = {
        "runs": {k: s[k] for k in ("cold", "warm", "warm_big", "warm_small", "reused")},
        "ratio_warm_over_cold": ratio_warm,
        "big_spec": {"file": big_name, "bytes": spec_path(big_spec[0]).stat().st_size},
        "small_spec": {"file": small_name, "bytes": spec_path(small_spec[0]).stat().st_size},
        "ratio_big_over_small": ratio_size,
    }
    return cold_section, warm_section, targets


def run_memory(ctx: Context) -> tuple[dict[str, Any], list[Target]]:
    spec = (
        "compute.alpha" if ctx.quick else "graph-beta",
        SpecOp("compute.instances.list", "GET") if ctx.quick else SpecOp("me.ListMessages", "GET"),
    )
    card, (path,) = _card(ctx, "memory-card", [spec])

    def cold() -> Run:
        cache = ctx.scratch("mem-")
        try:
            return _derive(ctx, cache, card)
        finally:
            shutil.rmtree(cache, ignore_errors=True)

    runs = interleaved(
        {"hold": lambda: run_process([sys.executable, "-c", HOLD, str(path)]), "cold": cold},
        ctx.runs,
        warmup=not ctx.quick,
    )
    hold = median([r.rss for r in runs["hold"]])
    derive = median([r.rss for r in runs["cold"]])
    ratio = derive / hold
    rows = [
        [
            "read + orjson.loads, held (baseline)",
            f"{hold / 1e6:,.1f}",
            f"{median([r.seconds for r in runs['hold']]):.3f}",
            "1.00",
        ],
        [
            "ramscope derive, empty cache",
            f"{derive / 1e6:,.1f}",
            f"{median([r.seconds for r in runs['cold']]):.3f}",
            f"{ratio:.2f}",
        ],
    ]
    print(
        table(
            f"6. peak RSS, cold derive against {path.name} (median of {ctx.runs})",
            ["process", "peak RSS MB", "median s", "ratio"],
            rows,
        )
    )
    section = {
        "spec": {"file": path.name, "bytes": path.stat().st_size},
        "hold_rss_mb": hold / 1e6,
        "derive_rss_mb": derive / 1e6,
        "runs": {"hold": summary(runs["hold"]), "cold": summary(runs["cold"])},
        "ratio": ratio,
    }
    quick = "quick run: a 6 MB spec, not the issue's conditions" if ctx.quick else ""
    return section, [
        Target("6 memory", f"peak RSS cold derive / holding parsed {path.name}", ratio, "<= 1.5", ratio <= 1.5, quick)
    ]


def _cells(s: dict[str, Any]) -> list[str]:
    return [f"{s['median_s']:.3f}", f"{s['min_s']:.3f}", f"{s['max_s']:.3f}", f"{s['median_rss_mb']:,.1f}"]
