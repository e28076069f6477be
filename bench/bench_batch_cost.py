"""Where a card's time goes in a batch (issue 25, item 4): `ramscope derive DIR` against `Engine.derive`.

    PYTHONPATH=src python bench/bench_batch_cost.py [--cards 1000] [--runs 5]

N copies of the example card, each with its own name (so its own bytes, hash and stored report),
offline with the example's cassette and policy, on a cache the first card warmed. Per card, in one
process, rounds interleaved (median of ``--runs``):

* ``Engine.derive``: the cards already loaded, derived one after the other on one engine;
* the batch's parts, each over every card: reading the file, hashing it, parsing it (strict JSON:
  duplicate keys refused, depth bounded), the manifest, the whole ``load_card``, the derivation,
  the report's JSON, the positions of its findings (line and column, stored beside a reused report),
  encoding the stored entry;
* ``derive_files``: what the CLI batch runs, each report's JSON line written to a null sink, with
  reuse off (``--no-reuse``: every card derived) and on (a first run on these cards: every card
  derived, its report and positions stored);
* the CLI itself: ``ramscope derive DIR --no-reuse`` over N cards and over 1, per extra card
  ``(T(N) - T(1)) / (N - 1)``; the same for a first run with reuse (a fresh copy of the cache).

The target: the batch's per-card cost within 2x of ``Engine.derive`` in process.
Whatever ``ramscope`` is importable is measured (PYTHONPATH), so two checkouts compare.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "travel-agent.card.json"
CASSETTE = REPO / "cassettes" / "travel-agent.yaml"
POLICY = REPO / "examples" / "travel-agent.policy.toml"


def _cards(directory: Path, n: int) -> list[Path]:
    card = json.loads(EXAMPLE.read_text("utf-8"))
    paths = []
    for i in range(n):
        card["name"] = f"Travel Reservation Agent {i}"
        path = directory / f"card{i:05}.json"
        path.write_text(json.dumps(card, indent=2) + "\n", "utf-8")
        paths.append(path)
    return paths


def _per_card(fn: Callable[[], object], n: int) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) / n * 1000


def _cli(cache: Path, *args: str) -> float:
    script = Path(sys.executable).with_name("ramscope")
    base = [sys.executable, str(script)] if script.exists() else [sys.executable, "-m", "ramscope"]
    cmd = [*base, "--offline", "--cassette", str(CASSETTE), "--policy", str(POLICY), "--cache-dir", str(cache), *args]
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cards", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-cli", action="store_true", help="skip the CLI runs")
    args = ap.parse_args()

    from ramscope.card import load_card
    from ramscope.config import Settings
    from ramscope.derive import Engine
    from ramscope.derive.policy import load_policy

    work = Path(tempfile.mkdtemp(prefix="ramscope-bench-batch-cost-"))
    try:
        cards_dir = work / "cards"
        cards_dir.mkdir()
        paths = _cards(cards_dir, args.cards)
        one_dir = work / "one"
        one_dir.mkdir()
        shutil.copy(paths[0], one_dir / paths[0].name)
        cache = work / "cache"
        policy = load_policy(POLICY)

        def settings(cache_dir: Path, *, reuse_on: bool) -> Settings:
            return Settings(cache_dir=cache_dir, offline=True, cassette=CASSETTE, reuse=reuse_on)

        with Engine(settings(cache, reuse_on=False), policy=policy) as e:
            e.derive(load_card(paths[0]))  # the cache holds the specs and their indexes from here on
        n = len(paths)
        rounds: list[dict[str, float]] = []
        for _ in range(args.runs):
            r: dict[str, float] = {}
            with Engine(settings(cache, reuse_on=False), policy=policy) as e:
                e.derive(load_card(paths[0]))
                r.update(_parts(e, paths))
            for reuse_on, name in ((False, "derive_files --no-reuse"), (True, "derive_files, first run (stores)")):
                run_cache = work / f"cache-{name[:8]}-{reuse_on}"
                shutil.copytree(cache, run_cache)
                with Engine(settings(run_cache, reuse_on=reuse_on), policy=policy) as e:
                    sink = io.StringIO()
                    r[name] = _per_card(lambda e=e, sink=sink: _write_all(e, paths, sink), n)
                shutil.rmtree(run_cache)
            if not args.no_cli:
                for flag, name in ((["--no-reuse"], "CLI --no-reuse"), ([], "CLI, first run (stores)")):
                    times = []
                    for target in (cards_dir, one_dir):
                        run_cache = work / "cli-cache"
                        shutil.copytree(cache, run_cache)
                        times.append(_cli(run_cache, "derive", str(target), *flag))
                        shutil.rmtree(run_cache)
                    r[name] = (times[0] - times[1]) / (n - 1) * 1000
            rounds.append(r)
        med = {k: statistics.median(x[k] for x in rounds) for k in rounds[0]}
        base = med["Engine.derive"]
        width = max(map(len, med))
        print(f"per card, ms (median of {args.runs} rounds, {n} cards)")
        for k, v in med.items():
            print(f"  {k.ljust(width)}  {v:7.3f}  {v / base:5.2f}x Engine.derive")
        worst = max(v for k, v in med.items() if k.startswith(("derive_files", "CLI")))
        print(f"batch per card / Engine.derive: {worst / base:.2f} (target <= 2)")
        return 0 if worst <= 2 * base else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _parts(e: Any, paths: list[Path]) -> dict[str, float]:
    """Each part of a batch's per-card work, over every card, on the warm engine ``e``."""
    from ramscope._parse import CARD_LIMITS, parse_bytes, read_bytes
    from ramscope.card import load_card
    from ramscope.derive import reuse
    from ramscope.derive.engine import _positions_json
    from ramscope.manifest import parse_manifest

    n = len(paths)
    r: dict[str, float] = {}
    cards = [load_card(p) for p in paths]
    r["Engine.derive"] = _per_card(lambda: [e.derive(c) for c in cards], n)
    datas = [read_bytes(p, max_bytes=CARD_LIMITS.max_bytes)[0] for p in paths]
    named = list(zip(datas, map(str, paths), strict=True))
    r["read"] = _per_card(lambda: [read_bytes(p, max_bytes=CARD_LIMITS.max_bytes) for p in paths], n)
    r["sha256"] = _per_card(lambda: [hashlib.sha256(d).hexdigest() for d in datas], n)
    parsed = [parse_bytes(d, source=p, fmt="json") for d, p in named]
    r["parse (strict JSON)"] = _per_card(lambda: [parse_bytes(d, source=p, fmt="json") for d, p in named], n)
    r["manifest"] = _per_card(
        lambda: [parse_manifest(d.value["resourceAccessManifest"], pointer="/x") for d in parsed], n
    )
    r["load_card (all of it)"] = _per_card(lambda: [load_card(d, name=p) for d, p in named], n)
    reports = [e.derive(c) for c in cards]
    r["report JSON"] = _per_card(lambda: [_json(rep) for rep in reports], n)
    fresh = [load_card(d, name=p) for d, p in named]
    pairs = list(zip(fresh, reports, strict=True))
    r["finding positions"] = _per_card(lambda: [_positions_json(c, rep) for c, rep in pairs], n)
    blobs = [rep.to_json() for rep in reports]
    r["stored entry"] = _per_card(lambda: [reuse.encode(0, [("u", None, "s")] * 3, b) for b in blobs], n)
    return r


def _write_all(e: Any, paths: list[Path], sink: io.StringIO) -> None:
    for rep in e.derive_files(paths, on_unreadable=print):
        sink.write(rep.to_json().decode() + "\n")


def _json(report: Any) -> bytes:
    object.__setattr__(report, "_json", None)  # not the JSON kept from an earlier round
    data: bytes = report.to_json()
    return data


if __name__ == "__main__":
    sys.exit(main())
