"""Running ramscope in a child process and measuring it: exit code, output, wall time, peak RSS.

The peak RSS comes from ``os.wait4`` on that one child (``ru_maxrss``, KiB on Linux), so
every measurement is of the run itself and not of the test process or earlier children.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.support.httpserver import LocalHTTPServer, Reply, Request

from .hostile import Case

TRACEBACK = "Traceback (most recent call last)"

_MARK = b"\n@@ramscope-rusage@@ "
#: Runs ``python -m ramscope.cli ARGS`` as its child and appends "MARK maxrss_kib exitcode" to stderr.
_LAUNCHER = r"""
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, "-m", "ramscope.cli", *sys.argv[1:]])
_, status, usage = os.wait4(pid, 0)
code = os.waitstatus_to_exitcode(status)
sys.stderr.write("\n@@ramscope-rusage@@ %d %d %.6f\n" % (usage.ru_maxrss, code, usage.ru_utime + usage.ru_stime))
sys.exit(0)
"""


@dataclass
class Run:
    argv: list[str]
    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float
    maxrss_kib: int
    timed_out: bool = False
    #: CPU seconds the run itself spent (user + system): what a bound on work is checked against,
    #: since unlike ``seconds`` (wall time) it does not grow when other processes load the machine.
    cpu_seconds: float = 0.0

    @property
    def err(self) -> str:
        return self.stderr.decode("utf-8", "replace")

    @property
    def out(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    @property
    def maxrss_mib(self) -> float:
        return self.maxrss_kib / 1024


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAMSCOPE_", "PYTEST_"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def run_ramscope(
    args: Sequence[str],
    *,
    timeout: float = 600.0,  # a guard against a hang, not a bound on the work
    cwd: str | Path | None = None,
    env: dict[str, str] | None = None,
    stdin: bytes | None = None,
) -> Run:
    """``python -m ramscope.cli ARGS`` in a child; wall time and that child's own peak RSS."""
    # A small launcher forks the run and reports its rusage: forked straight from this (large)
    # test process, the child's ru_maxrss would start at this process's peak instead of its own.
    argv = [sys.executable, "-c", _LAUNCHER, *args]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(
            argv,
            stdout=out,
            stderr=err,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            cwd=cwd,
            env=env or child_env(),
            start_new_session=True,
        )
        timed_out = threading.Event()

        def kill() -> None:
            timed_out.set()
            os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            if stdin is not None:
                assert proc.stdin is not None
                proc.stdin.write(stdin)
                proc.stdin.close()
            _, status, _usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        seconds = time.monotonic() - start
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stderr = err.read()
        maxrss, cpu = 0, 0.0
        if stderr.endswith(b"\n") and _MARK in stderr:
            head, _, tail = stderr.rpartition(_MARK)
            fields = tail.split()
            stderr, maxrss, code, cpu = head, int(fields[0]), int(fields[1]), float(fields[2])
        return Run(
            argv=list(args),
            returncode=code,
            stdout=out.read(),
            stderr=stderr,
            seconds=seconds,
            maxrss_kib=maxrss,
            timed_out=timed_out.is_set(),
            cpu_seconds=cpu,
        )


def serve(server: LocalHTTPServer, case: Case) -> None:
    """Put the case's documents on the local server."""
    for s in case.served:
        if s.mcp_tools_result is not None:
            result = s.mcp_tools_result

            def handler(req: Request, result: bytes = result) -> Reply:
                import json

                try:
                    msg = json.loads(req.body)
                except ValueError:
                    return Reply(400, b"{}")
                mid = json.dumps(msg.get("id")).encode()
                if msg.get("method") == "server/discover":
                    res = b'{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}'
                elif msg.get("method") == "tools/list":
                    res = result
                else:
                    return Reply(202, b"")
                body = b'{"jsonrpc":"2.0","id":' + mid + b',"result":' + res + b"}"
                return Reply(200, body, {"content-type": "application/json"})

            server.route(s.path, method="POST", handler=handler)
        else:
            server.route(s.path, body=s.body, content_type=s.content_type)


def run_case(
    case: Case, server: LocalHTTPServer, workdir: Path, *, command: Sequence[str] = ("derive",), timeout: float = 120.0
) -> Run:
    serve(server, case)
    card = workdir / f"{case.klass}-{case.name}{case.card_suffix}"
    card.write_bytes(case.card(server.url("")))
    out = workdir / f"{case.klass}-{case.name}.out"
    extra = ["-o", str(out)] if command[0] in ("derive", "consent") else []
    return run_ramscope(
        [
            "--allow-private-network",
            "--cache-dir",
            str(workdir / "cache"),
            "--timeout",
            "30",
            "--no-progress",
            *command,
            str(card),
            *extra,
        ],
        timeout=timeout,
    )
