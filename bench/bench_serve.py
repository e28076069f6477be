"""The resident service (issue 25): warm `POST /v1/derive` against a cold CLI derive, measured in one run.

    python bench/bench_serve.py [--requests 1000] [--concurrent 8] [--total 10000] [--cold-runs 5]

The card is the example (examples/travel-agent.card.json) with the example's global options:
``--offline --cassette cassettes/travel-agent.yaml --policy examples/travel-agent.policy.toml``.

1. cold CLI: ``ramscope derive CARD`` in a new process on an empty cache (median of ``--cold-runs``),
   and warm CLI (the same on the cache it filled) for reference;
2. ``ramscope serve --port 0`` started with the same options; after 50 unmeasured requests (the
   first answer read whole and checked; the others checked by a byte search for the scopes),
   ``--requests`` sequential POSTs of the card on one keep-alive connection: median and p99 latency,
   each as a ratio to the cold CLI derive (target: median <= 0.05x);
3. ``--concurrent`` clients, each on its own connection and thread of this process, after 20
   unmeasured requests each (so every worker's engine is warm), ``--requests`` POSTs between
   them: throughput and p99;
4. memory: the server's resident set (VmRSS) and peak (VmHWM, from /proc) after the first 1,000
   requests and after ``--total``; the stated bound: the peak after ``--total`` requests is within
   10% (and 16 MB) of the peak after 1,000, i.e. nothing grows per request.

Every request is checked: status 200 and the user's optional tier asking for calendar.events.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
CARD = REPO / "examples" / "travel-agent.card.json"
GLOBAL = [
    "--offline",
    "--cassette",
    str(REPO / "cassettes" / "travel-agent.yaml"),
    "--policy",
    str(REPO / "examples" / "travel-agent.policy.toml"),
]
EVENTS = "https://www.googleapis.com/auth/calendar.events"
_EXPECTED = b'"scopes":["https://www.googleapis.com/auth/calendar.events"]'


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("RAMSCOPE_CACHE_DIR", None)
    return env


def _cli(*args: str) -> list[str]:
    script = Path(sys.executable).with_name("ramscope")
    return [sys.executable, str(script), *args] if script.exists() else [sys.executable, "-m", "ramscope", *args]


def _cold_and_warm(runs: int, work: Path) -> tuple[list[float], list[float]]:
    cold: list[float] = []
    warm: list[float] = []
    for i in range(runs):
        cache = work / f"cli-cache-{i}"
        cmd = _cli(*GLOBAL, "--cache-dir", str(cache), "derive", str(CARD))
        for out in (cold, warm):
            t = time.perf_counter()
            subprocess.run(cmd, env=_env(), check=True, stdout=subprocess.DEVNULL)
            out.append(time.perf_counter() - t)
        shutil.rmtree(cache, ignore_errors=True)
    return cold, warm


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _memory(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) * 1024
    return out


def _post(client: httpx.Client, body: bytes) -> float:
    t = time.perf_counter()
    r = client.post("/v1/derive", content=body, headers={"content-type": "application/json"})
    elapsed = time.perf_counter() - t
    # Checked cheaply (a byte search, not a parse): the client shares the machine with the server.
    if r.status_code != 200 or _EXPECTED not in r.content:
        raise RuntimeError(f"unexpected answer {r.status_code}: {r.text[:300]}")
    return elapsed


def _check_once(client: httpx.Client, body: bytes) -> None:
    """The first answer, read whole: the user's optional tier asks for calendar.events."""
    r = client.post("/v1/derive", content=body, headers={"content-type": "application/json"})
    if r.status_code != 200 or r.json()["tiers"]["OPTIONAL"]["END_USER"]["scopes"] != [EVENTS]:
        raise RuntimeError(f"unexpected answer {r.status_code}: {r.text[:300]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--concurrent", type=int, default=8)
    ap.add_argument("--total", type=int, default=10_000)
    ap.add_argument("--cold-runs", type=int, default=5)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    body = CARD.read_bytes()
    work = Path(tempfile.mkdtemp(prefix="ramscope-bench-serve-"))
    results: dict[str, Any] = {}
    proc: subprocess.Popen[str] | None = None
    try:
        cold, warm = _cold_and_warm(args.cold_runs, work)
        cold_s, warm_s = statistics.median(cold), statistics.median(warm)
        proc = subprocess.Popen(
            _cli(*GLOBAL, "--cache-dir", str(work / "serve-cache"), "serve", "--policy-card", str(CARD), "--port", "0"),
            env=_env(),
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"serve's first line is not its URL: {url!r}")
        sent = 0
        with httpx.Client(base_url=url, timeout=60) as client:
            _check_once(client, body)
            for _ in range(49):
                _post(client, body)
            sent += 50
            seq = [_post(client, body) for _ in range(args.requests)]
            sent += args.requests
        median, p99 = statistics.median(seq), _quantile(seq, 0.99)

        def concurrently(per: int) -> tuple[float, list[float]]:
            lat: list[list[float]] = [[] for _ in range(args.concurrent)]

            def client_loop(i: int) -> None:
                with httpx.Client(base_url=url, timeout=60) as c:
                    lat[i].extend(_post(c, body) for _ in range(per))

            threads = [threading.Thread(target=client_loop, args=(i,)) for i in range(args.concurrent)]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return time.perf_counter() - t0, [x for part in lat for x in part]

        # Unmeasured: every worker's engine derives its first cards (each engine loads the indexes
        # and builds the grant space once: what a resident server does in its first seconds).
        concurrently(20)
        sent += 20 * args.concurrent
        per = args.requests // args.concurrent
        wall, flat = concurrently(per)
        sent += per * args.concurrent

        with httpx.Client(base_url=url, timeout=60) as client:
            while sent < 1000:
                _post(client, body)
                sent += 1
            at_1000 = _memory(proc.pid)
            while sent < args.total:
                _post(client, body)
                sent += 1
        at_total = _memory(proc.pid)
        bound = max(at_1000["VmHWM"] * 1.10, at_1000["VmHWM"] + 16 * 1024 * 1024)
        results = {
            "cold_cli_s": cold_s,
            "warm_cli_s": warm_s,
            "sequential": {
                "requests": args.requests,
                "median_ms": median * 1000,
                "p99_ms": p99 * 1000,
                "median_ratio_to_cold": median / cold_s,
                "p99_ratio_to_cold": p99 / cold_s,
                "target_median_ratio": 0.05,
                "met": median / cold_s <= 0.05,
            },
            "concurrent": {
                "clients": args.concurrent,
                "requests": len(flat),
                "throughput_rps": len(flat) / wall,
                "median_ms": statistics.median(flat) * 1000,
                "p99_ms": _quantile(flat, 0.99) * 1000,
            },
            "memory": {
                "requests": sent,
                "rss_after_1000_mb": at_1000["VmRSS"] / 1e6,
                "peak_after_1000_mb": at_1000["VmHWM"] / 1e6,
                "rss_after_total_mb": at_total["VmRSS"] / 1e6,
                "peak_after_total_mb": at_total["VmHWM"] / 1e6,
                "bound_mb": bound / 1e6,
                "met": at_total["VmHWM"] <= bound,
            },
        }
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    s, c, m = results["sequential"], results["concurrent"], results["memory"]
    print(f"cold CLI derive {results['cold_cli_s']:.3f} s, warm CLI derive {results['warm_cli_s']:.3f} s (median)")
    print(
        f"warm POST /v1/derive x{s['requests']}: median {s['median_ms']:.2f} ms = "
        f"{s['median_ratio_to_cold']:.4f}x cold (target <= 0.05x: {'met' if s['met'] else 'MISSED'}), "
        f"p99 {s['p99_ms']:.2f} ms = {s['p99_ratio_to_cold']:.4f}x"
    )
    print(
        f"{c['clients']} concurrent clients, {c['requests']} requests: {c['throughput_rps']:.0f} req/s, "
        f"median {c['median_ms']:.2f} ms, p99 {c['p99_ms']:.2f} ms"
    )
    print(
        f"memory after {m['requests']} requests: RSS {m['rss_after_total_mb']:.1f} MB, "
        f"peak {m['peak_after_total_mb']:.1f} MB (after 1,000: RSS {m['rss_after_1000_mb']:.1f}, "
        f"peak {m['peak_after_1000_mb']:.1f}; bound {m['bound_mb']:.1f}: {'met' if m['met'] else 'MISSED'})"
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if s["met"] and m["met"] else 1


if __name__ == "__main__":
    sys.exit(main())
