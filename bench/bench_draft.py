"""Benchmark (issue 24): ``ramscope draft`` of a generated 100,000-entry HAR, time and peak RSS.

    python bench/bench_draft.py [--entries N] [--runs N]

The HAR (seeded) is what a recording proxy writes for an agent that lists and inserts Google Calendar
events, reads single events and lists GitHub issues, with a user's bearer token, 8 request headers,
request bodies on the inserts and ~600-byte response bodies; 5% of the calls are to GitHub paths no
operation has (unmatched-call findings, with nearest operations for the first 200). The two specs
(Calendar's Discovery document, GitHub's 13 MB REST description) are served on 127.0.0.1 and given
with ``--spec``; the cache is filled by one unmeasured run, so the measured runs are the evidence
read, matched and drafted.

The baseline, measured in the same invocation and interleaved with it: a process that
``json.load``\\s the same HAR (what reading it whole costs, without doing anything with it). The
target: ``draft`` takes at most the baseline's peak memory (it streams) and at most 3x its time.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    Context,
    child_env,
    discovery_dir,
    interleaved,
    mb,
    median,
    ramscope_cmd,
    run_process,
    summary,
    table,
)

REPO = Path(__file__).resolve().parent.parent
GITHUB = REPO / ".corpora" / "node_modules" / "@octokit" / "openapi" / "generated" / "api.github.com.json"


def write_har(path: Path, n: int, seed: int = 24) -> int:
    """Write an ``n``-entry HAR to ``path``, one entry at a time; returns its size in bytes."""
    rng = random.Random(seed)
    headers = [
        {"name": "User-Agent", "value": "agent/1.0 httpx/0.28"},
        {"name": "Accept", "value": "application/json"},
        {"name": "Accept-Encoding", "value": "gzip, deflate"},
        {"name": "Connection", "value": "keep-alive"},
        {"name": "X-Request-Id", "value": ""},
        {"name": "Authorization", "value": "Bearer ya29.a0AfB_byC-benchmark-token-" + "x" * 120},
        {"name": "X-Goog-Api-Client", "value": "gl-python/3.11 gdcl/2.202.0"},
        {"name": "Host", "value": ""},
    ]
    body = json.dumps({"items": [{"id": f"evt{i}", "summary": "Flight " * 8, "status": "confirmed"} for i in range(6)]})
    with path.open("w", encoding="utf-8") as f:
        f.write('{"log": {"version": "1.2", "creator": {"name": "ramscope-bench", "version": "1"}, "entries": [\n')
        for i in range(n):
            r = rng.random()
            post = ""
            if r < 0.40:
                method, url = (
                    "GET",
                    (
                        f"https://www.googleapis.com/calendar/v3/calendars/cal{rng.randrange(50)}%40example.com/events"
                        f"?maxResults={rng.randrange(1, 250)}&pageToken=tok{rng.randrange(10**9)}"
                    ),
                )
            elif r < 0.60:
                method, url = "POST", f"https://www.googleapis.com/calendar/v3/calendars/cal{rng.randrange(50)}/events"
                post = json.dumps({"summary": f"Trip {i}", "start": {"dateTime": "2026-05-03T10:00:00Z"}})
            elif r < 0.70:
                method, url = (
                    "GET",
                    (f"https://www.googleapis.com/calendar/v3/calendars/primary/events/e{rng.randrange(10**12)}"),
                )
            elif r < 0.95:
                method, url = (
                    "GET",
                    (
                        f"https://api.github.com/repos/org{rng.randrange(100)}/repo{rng.randrange(1000)}/issues"
                        "?state=open&per_page=100"
                    ),
                )
            else:
                method, url = "GET", f"https://api.github.com/nowhere{rng.randrange(5000)}/x"
            hs = [dict(h) for h in headers]
            hs[4]["value"] = f"{rng.randrange(16**16):016x}"
            hs[7]["value"] = url.split("/")[2]
            entry = {
                "startedDateTime": f"2026-12-01T10:{i // 6000 % 60:02d}:{i // 100 % 60:02d}.{i % 1000:03d}Z",
                "time": rng.randrange(20, 400),
                "request": {
                    "method": method,
                    "url": url,
                    "httpVersion": "HTTP/1.1",
                    "headers": hs,
                    "queryString": [],
                    "cookies": [],
                    "headersSize": -1,
                    "bodySize": len(post),
                    **({"postData": {"mimeType": "application/json", "text": post}} if post else {}),
                },
                "response": {
                    "status": 404 if "nowhere" in url else 200,
                    "statusText": "OK",
                    "httpVersion": "HTTP/1.1",
                    "headers": [{"name": "Content-Type", "value": "application/json; charset=UTF-8"}],
                    "cookies": [],
                    "content": {"size": len(body), "mimeType": "application/json", "text": body},
                    "redirectURL": "",
                    "headersSize": -1,
                    "bodySize": len(body),
                },
                "cache": {},
                "timings": {"send": 1, "wait": 50, "receive": 2},
            }
            f.write(("" if i == 0 else ",\n") + json.dumps(entry))
        f.write("\n]}}\n")
    return path.stat().st_size


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--output", type=Path, help="also write the raw figures here (JSON)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ramscope-bench-draft-") as tmp:
        work = Path(tmp)
        ctx = Context(quick=False, runs=args.runs, work=work, naive_python=None, naive_cap=0)
        try:
            har = work / "session.har"
            size = write_har(har, args.entries)
            calendar = ctx.serve(discovery_dir() / "calendar.v3.json")
            github = ctx.serve(GITHUB)
            cache = work / "cache"
            cmd = ramscope_cmd(
                "--cache-dir",
                str(cache),
                "--allow-private-network",
                "--quiet",
                "draft",
                str(har),
                "-o",
                str(work / "card.json"),
                "--report",
                str(work / "report.json"),
                "--spec",
                f"https://www.googleapis.com/calendar/v3/={calendar}",
                "--spec",
                f"https://api.github.com/={github}",
            )
            baseline = [sys.executable, "-c", "import json, sys; json.load(open(sys.argv[1], 'rb'))", str(har)]
            runs = interleaved(
                {
                    "json.load of the HAR (baseline)": lambda: run_process(baseline, env=child_env()),
                    "ramscope draft, warm spec cache": lambda: run_process(cmd, env=child_env()),
                },
                args.runs,
            )
            report = json.loads((work / "report.json").read_text())
            card = json.loads((work / "card.json").read_text())
        finally:
            ctx.close()
    base = summary(runs["json.load of the HAR (baseline)"])
    base_cpu = median([r.cpu for r in runs["json.load of the HAR (baseline)"]])
    rows = []
    raw = {}
    for name, rs in runs.items():
        s = summary(rs)
        cpu = median([r.cpu for r in rs])
        raw[name] = {**s, "median_cpu_s": cpu, "seconds": [r.seconds for r in rs], "cpu": [r.cpu for r in rs]}
        rows.append(
            [
                name,
                s["median_s"],
                s["min_s"],
                s["max_s"],
                cpu,
                s["median_rss_mb"],
                s["median_s"] / base["median_s"],
                cpu / base_cpu,
                s["median_rss_mb"] / base["median_rss_mb"],
            ]
        )
    if args.output:
        args.output.write_text(json.dumps({"entries": args.entries, "har_bytes": size, "runs": raw}, indent=2))
    print(
        table(
            f"draft from a {args.entries:,}-entry HAR ({mb(size)} MB; median of {args.runs})",
            ["process", "median s", "min s", "max s", "CPU s", "peak RSS MB", "time ratio", "CPU ratio", "RSS ratio"],
            rows,
        )
    )
    print(
        f"calls {report['calls']:,}, matched {report['matched']:,}, operations {report['operations']}, "
        f"distinct unmatched {len(report['unmatched']):,}; card: {len(card['resource_accesses'])} accesses"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
