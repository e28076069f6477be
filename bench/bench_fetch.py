"""Wall time of fetching 20 specs behind 200 ms of latency: --jobs 1 against --jobs 8.

A local server (127.0.0.1 only) answers every request after an injected
200 ms delay. Each run starts with an empty cache and a new store, so every
spec is really fetched. Prints the median of the runs for each setting and
their ratio::

    python bench/bench_fetch.py            # 9 runs each
    python bench/bench_fetch.py --quick    # 5 runs each
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ramscope.config import Settings  # noqa: E402
from ramscope.errors import FetchError  # noqa: E402
from ramscope.store import SpecStore  # noqa: E402
from tests.support.httpserver import LocalHTTPServer  # noqa: E402

SPECS = 20
LATENCY = 0.2


def one_run(urls: list[str], jobs: int) -> float:
    with tempfile.TemporaryDirectory() as cache:
        settings = Settings(cache_dir=Path(cache), allow_private_network=True, jobs=jobs, timeout=30.0)
        with SpecStore(settings) as store:
            started = time.perf_counter()
            results = store.prefetch((u, None) for u in urls)
            elapsed = time.perf_counter() - started
    failed = [u for u, r in results.items() if isinstance(r, FetchError)]
    if failed:
        raise SystemExit(f"fetch failed: {failed}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="5 runs per setting instead of 9")
    p.add_argument("--runs", type=int, default=None)
    args = p.parse_args(argv)
    runs = args.runs or (5 if args.quick else 9)
    body = b'{"openapi": "3.1.0", "info": {"title": "bench", "version": "1"}, "paths": {}}'
    with LocalHTTPServer() as server:
        urls = []
        for i in range(SPECS):
            server.route(f"/spec{i}.json", body=body, latency=LATENCY)
            urls.append(server.url(f"/spec{i}.json"))
        medians: dict[int, float] = {}
        print(f"{SPECS} specs, {LATENCY * 1000:.0f} ms latency each, median of {runs} runs")
        print(f"{'jobs':>5}  {'median s':>9}  {'min s':>7}  {'max s':>7}")
        for jobs in (1, 8):
            times = [one_run(urls, jobs) for _ in range(runs)]
            medians[jobs] = statistics.median(times)
            print(f"{jobs:>5}  {medians[jobs]:>9.3f}  {min(times):>7.3f}  {max(times):>7.3f}")
    print(f"speed-up --jobs 8 over --jobs 1: {medians[1] / medians[8]:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
