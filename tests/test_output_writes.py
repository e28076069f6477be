"""Every write to stdout or an output file is checked (issue 22, items 10 and 17).

A full disk (``/dev/full``: ENOSPC) or the file size limit (RLIMIT_FSIZE with SIGXFSZ ignored: a short
write, then EFBIG) used to truncate the output silently with exit 0. Now the run exits 2 with the
reason on stderr, for every command that writes a large output. A stdout ramscope was started without
(``>&-``) is an error to write to (exit 2, one line), not an AttributeError traceback.
"""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adversarial.measure import TRACEBACK, child_env

ROOT = Path(__file__).resolve().parent.parent
CARD = "examples/travel-agent.card.json"
RUN = ["--offline", "--cassette", "cassettes/travel-agent.yaml", "--policy", "examples/travel-agent.policy.toml"]
#: Bytes a limited output may hold: well short of every command's output below.
LIMIT = 1000

COMMANDS = {
    "derive": ["derive", CARD],
    "derive-text": ["derive", "--format", "text", CARD],
    "consent": ["consent", CARD],
    "export": ["export", CARD],
    "check-sarif": ["check", "--rules", "examples/org.rules.toml", "--format", "sarif", CARD],
}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache the example's specs are in (filled without a size limit: the cache's own writes are not tested)."""
    path = tmp_path_factory.mktemp("cache")
    proc = _run(["--cache-dir", str(path), *RUN, "derive", CARD], stdout=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    return path


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def _run(args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "ramscope", *args],
        cwd=ROOT,
        env=child_env(),
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        **kw,
    )


def _one_error_line(err: str, reason: str) -> None:
    assert TRACEBACK not in err
    assert err == f"ramscope: error: could not write the output: {reason}\n"


@pytest.mark.parametrize("command", list(COMMANDS.values()), ids=list(COMMANDS))
def test_a_short_write_to_a_file_at_its_size_limit_is_exit_2(command: list[str], cache: Path, tmp_path: Path) -> None:
    """stdout a file that reaches RLIMIT_FSIZE: exit 2, "File too large" on stderr, not a silent truncation."""
    out = tmp_path / "out.txt"
    with out.open("wb") as fh:
        proc = _run(["--cache-dir", str(cache), *RUN, *command], stdout=fh, preexec_fn=_limit_file_size)
    assert proc.returncode == 2, proc.stderr
    _one_error_line(proc.stderr, "[Errno 27] File too large")
    assert out.stat().st_size == LIMIT


@pytest.mark.parametrize("command", list(COMMANDS.values()), ids=list(COMMANDS))
def test_a_full_disk_is_exit_2(command: list[str], cache: Path) -> None:
    """stdout on /dev/full: exit 2, "No space left on device" on stderr."""
    with open("/dev/full", "wb") as full:
        proc = _run(["--cache-dir", str(cache), *RUN, *command], stdout=full)
    assert proc.returncode == 2, proc.stderr
    _one_error_line(proc.stderr, "[Errno 28] No space left on device")


def test_an_output_file_at_its_size_limit_is_not_left_truncated(cache: Path, tmp_path: Path) -> None:
    """-o FILE past the size limit: exit 2, and no output file (nor its temporary file) is left."""
    out = tmp_path / "report.json"
    proc = _run(
        ["--cache-dir", str(cache), *RUN, "derive", CARD, "-o", str(out)],
        stdout=subprocess.DEVNULL,
        preexec_fn=_limit_file_size,
    )
    assert proc.returncode == 2, proc.stderr
    _one_error_line(proc.stderr, "[Errno 27] File too large")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "command",
    [["validate", CARD], [*RUN, "derive", CARD], ["schema", "manifest"]],
    ids=["validate", "derive", "schema"],
)
def test_a_closed_stdout_is_one_line_and_exit_2(command: list[str], cache: Path) -> None:
    """Started with stdout closed (``>&-``): exit 2 and one line, no AttributeError traceback."""
    proc = _run(["--cache-dir", str(cache), *command], stdout=None, preexec_fn=_close_stdout)
    assert proc.returncode == 2, proc.stderr
    _one_error_line(proc.stderr, "[Errno 9] standard output is closed")


def test_a_closed_stdout_does_not_stop_an_output_file(cache: Path, tmp_path: Path) -> None:
    """With -o FILE nothing goes to stdout: the report is written, exit 0, and descriptor 1 is not reused for it."""
    out = tmp_path / "report.json"
    proc = _run(["--cache-dir", str(cache), *RUN, "derive", CARD, "-o", str(out)], preexec_fn=_close_stdout)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text("utf-8").startswith("{")


def _close_stdout() -> None:
    import os

    os.close(1)
