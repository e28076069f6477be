"""`-o FILE` (derive, consent): where a report may be written, and what is never overwritten (issue 14,
item 15). Missing directories and unwritable targets are clear errors (exit 2, no traceback, nothing
derived); FIFOs (process substitution) are streamed to; devices, sockets and directories are refused; a
card being read is never replaced; an existing file keeps its mode, and a symlink keeps pointing at it."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ramscope.cli import main

ROOT = Path(__file__).resolve().parent.parent
CARD = ROOT / "examples" / "travel-agent.card.json"
OFFLINE = ["--offline", "--cassette", str(ROOT / "cassettes" / "travel-agent.yaml")]
OFFLINE += ["--policy", str(ROOT / "examples" / "travel-agent.policy.toml")]


def _run(tmp_path: Path, *args: str) -> int:
    return main(["--cache-dir", str(tmp_path / "cache"), "--no-progress", *OFFLINE, *args])


def test_missing_directory_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "no" / "such" / "dir" / "report.json"
    assert _run(tmp_path, "derive", str(CARD), "-o", str(target)) == 2
    err = capsys.readouterr().err
    assert err.startswith("ramscope: error: ")
    assert "directory" in err
    assert "does not exist" in err
    assert not target.parent.exists()


@pytest.mark.parametrize("command", ["derive", "consent"])
def test_the_card_being_read_is_never_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    card = tmp_path / "card.json"
    card.write_bytes(CARD.read_bytes())
    link = tmp_path / "link.json"
    link.symlink_to(card)
    hard = tmp_path / "hard.json"
    os.link(card, hard)
    for target in (card, link, hard):
        assert _run(tmp_path, command, str(card), "-o", str(target)) == 2
        assert "is an input of this run" in capsys.readouterr().err
        assert card.read_bytes() == CARD.read_bytes()
    assert link.is_symlink()


def test_an_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")
    target.chmod(0o640)
    assert _run(tmp_path, "derive", str(CARD), "-o", str(target)) == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert '"report_version"' in target.read_text()


def test_a_new_file_gets_the_umask_mode(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    old = os.umask(0o027)
    try:
        assert _run(tmp_path, "derive", str(CARD), "-o", str(target)) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_symlink_to_a_regular_file_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "reports" / "report.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    assert _run(tmp_path, "derive", str(CARD), "-o", str(link)) == 0
    assert link.is_symlink()
    assert '"report_version"' in real.read_text()


def test_a_fifo_is_streamed_to(tmp_path: Path) -> None:
    """Process substitution (`-o >(jq .)`) hands ramscope a pipe: it is written to, never replaced."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    code = _run(tmp_path, "derive", str(CARD), "-o", str(fifo))
    reader.join(timeout=60)
    if reader.is_alive():  # the FIFO was never opened for writing (e.g. replaced): unblock the reader
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=5)
    assert code == 0
    assert not reader.is_alive()
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert b'"report_version"' in got[0]


def test_process_substitution_through_a_shell(tmp_path: Path) -> None:
    """The issue's reproduction: `-o >(cat > FILE)` ended in a traceback."""
    out = tmp_path / "via-pipe.json"
    script = (
        f"{sys.executable} -m ramscope --cache-dir {tmp_path / 'c'} --no-progress {' '.join(OFFLINE)} "
        f"derive {CARD} -o >(cat > {out}); wait"
    )
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False, timeout=120)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert '"report_version"' in out.read_text()


def _private_null(tmp_path: Path) -> Path:
    """A character device node of our own (the null device's numbers), so that a regression replaces
    it and not the machine's /dev/null (as root, the old writer did exactly that)."""
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, AttributeError):
        pytest.skip("cannot create a device node here (not root)")
    return node


@pytest.mark.parametrize("target", ["device", "dir", "socket", "link-to-device"])
def test_devices_sockets_and_directories_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    import socket

    if target == "dir":
        path = tmp_path / "adir"
        path.mkdir()
    elif target == "socket":
        path = tmp_path / "s.sock"
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
    elif target == "link-to-device":
        path = tmp_path / "out.json"
        path.symlink_to(_private_null(tmp_path))
    else:
        path = _private_null(tmp_path)
    assert _run(tmp_path, "derive", str(CARD), "-o", str(path)) == 2
    err = capsys.readouterr().err
    assert "not a regular file" in err
    assert "Traceback" not in err
    if target == "link-to-device":
        assert path.is_symlink()
        assert stat.S_ISCHR(path.stat().st_mode)
    elif target == "device":
        assert stat.S_ISCHR(path.lstat().st_mode)


def test_a_link_to_stdout_is_streamed_to_never_replaced(tmp_path: Path) -> None:
    """As root, `-o /dev/stdout` replaced that symlink with a regular file. A link of our own to
    /proc/self/fd/1 (what /dev/stdout is), with stdout a pipe: streamed to, and still a link after."""
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    proc = subprocess.run(
        [sys.executable, "-m", "ramscope", "--cache-dir", str(tmp_path / "c"), "--no-progress", *OFFLINE,
         "derive", str(CARD), "-o", str(link)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert '"report_version"' in proc.stdout
    assert link.is_symlink()
    assert os.readlink(link) == "/proc/self/fd/1"


def test_the_policy_and_the_cassette_are_never_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_bytes((ROOT / "examples" / "travel-agent.policy.toml").read_bytes())
    args = ["--cache-dir", str(tmp_path / "c"), "--no-progress", "--offline", "--cassette"]
    args += [str(ROOT / "cassettes" / "travel-agent.yaml"), "--policy", str(policy)]
    assert main([*args, "derive", str(CARD), "-o", str(policy)]) == 2
    assert "is an input of this run" in capsys.readouterr().err
    assert policy.read_bytes() == (ROOT / "examples" / "travel-agent.policy.toml").read_bytes()


class _FullDisk:
    """A stdout whose writes fail as on a full disk."""

    def write(self, text: str) -> int:
        raise OSError(28, "No space left on device")

    def flush(self) -> None:
        raise OSError(28, "No space left on device")


@pytest.mark.parametrize("argv", [["derive", str(CARD)], ["validate", "--format", "json", str(CARD)]], ids=" ".join)
def test_stdout_that_cannot_be_written_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", _FullDisk())
    assert _run(tmp_path, *argv) == 2
    err = capsys.readouterr().err
    assert (
        err.strip().splitlines()[-1]
        == "ramscope: error: could not write the output: [Errno 28] No space left on device"
    )
    assert "Traceback" not in err


def test_the_program_says_so_when_its_last_output_cannot_be_flushed(tmp_path: Path) -> None:
    """Buffered output that fails only when flushed at the end: exit 2 (an output error, issue 22), one line."""
    code = (
        "import io, sys\n"
        "class Full(io.TextIOBase):\n"
        "    def write(self, s): return len(s)\n"
        "    def flush(self): raise OSError(28, 'No space left on device')\n"
        "sys.stdout = Full()\n"
        f"sys.argv = ['ramscope', 'validate', {str(CARD)!r}]\n"
        "from ramscope.cli import run\n"
        "run()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip() == "ramscope: error: could not write the output: [Errno 28] No space left on device"
