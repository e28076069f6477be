"""Runs the benchmarks' child processes, from a process that stays small.

A child's ``ru_maxrss`` starts at its parent's resident size when it is forked: a
benchmark process holding 70 MB of specs for its HTTP server would make every child
look at least 70 MB large. So ``run.py`` starts this process first, while it is
small, and asks it to run each measured command. Protocol: one JSON object per line
on stdin (``cmd``, ``env``, ``stdout`` and ``stderr`` file paths or null,
``timeout`` seconds or null, ``memory_cap`` bytes or null); one JSON object per line
on stdout (``seconds``, ``rss`` in bytes, ``returncode``, ``timed_out``).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time
from typing import Any


def _run(req: dict[str, Any]) -> dict[str, Any]:
    cap = req.get("memory_cap")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    out = open(req["stdout"], "wb") if req.get("stdout") else subprocess.DEVNULL  # noqa: SIM115
    err = open(req["stderr"], "wb") if req.get("stderr") else subprocess.DEVNULL  # noqa: SIM115
    try:
        started = time.perf_counter()
        proc = subprocess.Popen(
            req["cmd"],
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=req["env"],
            preexec_fn=limit if cap else None,  # noqa: PLW1509
        )
        timeout = req.get("timeout")
        timer = threading.Timer(timeout, proc.kill) if timeout else None
        if timer is not None:
            timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            if timer is not None:
                timer.cancel()
        elapsed = time.perf_counter() - started
    finally:
        for f in (out, err):
            if f is not subprocess.DEVNULL:
                f.close()
    code = os.waitstatus_to_exitcode(status)
    rss = usage.ru_maxrss if sys.platform == "darwin" else usage.ru_maxrss * 1024
    return {
        "seconds": elapsed,
        "rss": rss,
        # CPU seconds of the child (user + system): steadier than wall time on a shared machine.
        "cpu": usage.ru_utime + usage.ru_stime,
        "returncode": code,
        "timed_out": bool(timeout) and code < 0 and elapsed >= timeout,
    }


def main() -> int:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            result = _run(json.loads(line))
        except Exception as exc:  # reported to the benchmark, which raises it there
            result = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
