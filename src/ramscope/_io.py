"""Writing outputs safely, and expanding card arguments."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from pathlib import Path

    from _typeshed import ReadableBuffer

from .errors import InputError, OutputError

__all__ = [
    "CARD_SUFFIXES",
    "CheckedWriter",
    "OutputTarget",
    "atomic_write",
    "atomic_writer",
    "check_output",
    "checked_stdio",
    "expand_card_args",
]

CARD_SUFFIXES = (".json", ".yaml", ".yml")


# --------------------------------------------------------------------------- checked writes
#
# Python's buffered file objects can lose the end of an output without a word: with the file size
# limit reached (RLIMIT_FSIZE, SIGXFSZ ignored) write(2) takes part of a large write and the rest
# is dropped, and the run exits 0 (issue 22). Every byte ramscope writes to stdout or an output file
# goes through :class:`CheckedWriter`: a write is whole, or an ``OSError`` naming why (ENOSPC, EFBIG,
# or a write that took nothing), which the command line reports as exit 2.


class CheckedWriter(io.RawIOBase):
    """A raw writer on a file descriptor whose ``write`` writes everything it is given or raises."""

    def __init__(self, fd: int, name: str = "the output", *, closefd: bool = True) -> None:
        super().__init__()
        self._fd = fd
        self._name = name
        self._closefd = closefd

    def close(self) -> None:
        if not self.closed and self._closefd:
            try:
                os.close(self._fd)
            finally:
                super().close()
            return
        super().close()

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def write(self, data: ReadableBuffer, /) -> int:
        view = memoryview(data).cast("B")
        total = len(view)
        while view:
            n = os.write(self._fd, view)
            if n <= 0:
                raise OSError(errno.EIO, f"{self._name} took no more bytes: short write")
            view = view[n:]
        return total


def checked_file(fd: int, name: str = "the output", *, closefd: bool = True) -> io.BufferedWriter:
    """A buffered binary file on ``fd`` whose writes and flushes are whole or raise; closing it
    closes ``fd`` unless ``closefd`` is false."""
    return io.BufferedWriter(CheckedWriter(fd, name, closefd=closefd))


class _ClosedOutput(io.TextIOBase):
    """What stdout is when ramscope was started with it closed (``>&-``): writing is an error."""

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        pass


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def checked_stdio() -> None:
    """For ramscope's own process: stdout writes are checked (:class:`CheckedWriter`), and a standard
    stream it was started without (``>&-``) is an error to write to, not a crash.

    A closed descriptor 0, 1 or 2 is first taken by ``/dev/null``: else the next file opened (the
    cache, an output's temporary file) would get it, and "stdout" would write into that file.
    """
    closed = {fd: not _is_open(fd) for fd in (0, 1, 2)}
    for fd in (0, 1, 2):
        if closed[fd]:
            got = os.open(os.devnull, os.O_RDWR)
            if got != fd:
                os.dup2(got, fd)
                os.close(got)
    if closed[2]:
        sys.stderr = io.TextIOWrapper(
            checked_file(2, "standard error", closefd=False), encoding="utf-8", errors="replace"
        )
    if closed[1]:
        sys.stdout = _ClosedOutput()
        return
    old = sys.stdout
    if old is not sys.__stdout__ or old is None:
        return  # replaced by whoever runs ramscope in-process: theirs to check
    encoding = getattr(old, "encoding", None) or "utf-8"
    errors = getattr(old, "errors", None) or "strict"
    line_buffering = bool(getattr(old, "line_buffering", False))
    with contextlib.suppress(OSError, ValueError, AttributeError):
        old.flush()
    sys.stdout = io.TextIOWrapper(
        checked_file(1, "standard output", closefd=False),
        encoding=encoding,
        errors=errors,
        line_buffering=line_buffering,
    )


def atomic_write(
    path: str | os.PathLike[str] | OutputTarget,
    data: str | bytes,
    *,
    protect: Iterable[str | os.PathLike[str]] = (),
) -> None:
    """Write via a temporary file in the same directory and rename: a reader (or an
    interrupted run) never sees a half-written report. See :func:`atomic_writer`."""
    with atomic_writer(path, protect=protect) as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


class OutputTarget(NamedTuple):
    """Where ``-o PATH`` writes, decided before any work: a regular file (new or existing, a symlink
    followed to it) replaced atomically, or a FIFO (process substitution) streamed to. (A named tuple,
    not a dataclass: ``ramscope --version`` imports this module, and dataclasses costs start-up.)"""

    path: Path
    #: The file actually replaced: ``path`` with symlinks resolved.
    real: Path
    stream: bool = False
    #: Mode, uid and gid of the file being replaced; ``None`` for a new file.
    existing: os.stat_result | None = None


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def check_output(path: str | os.PathLike[str], *, protect: Iterable[str | os.PathLike[str]] = ()) -> OutputTarget:
    """Decide where ``path`` is written, or raise :class:`OutputError` (before anything is derived).

    Refused: a missing directory, a directory, a device (``/dev/stdout`` on a terminal, ``/dev/null``,
    a symlink to one), a socket, and any of the files in ``protect`` (the cards being read, also through
    a symlink or a hard link). A FIFO is written to as a stream: replacing it with a regular file would
    hand the reader nothing (and, as root, ``-o /dev/stdout`` used to turn that symlink into a file).
    """
    from pathlib import Path  # noqa: PLC0415 - not on the start-up path (issue 36)

    target = Path(path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(f"cannot use it as the output: {exc.strerror or exc}", path=str(target)) from None
    if st is None:
        real = Path(os.path.realpath(target))
        if not real.parent.is_dir():
            raise OutputError(
                f"cannot write the output: the directory {str(real.parent)!r} does not exist", path=str(target)
            )
        return OutputTarget(target, real)
    for is_kind, what in _KINDS:
        if is_kind(st.st_mode):
            hint = "; omit -o to write to stdout" if what == "a character device" else ""
            raise OutputError(f"is {what}, not a regular file: refusing to replace it{hint}", path=str(target))
    for card in protect:
        if card == "-":
            continue
        with contextlib.suppress(OSError):
            other = os.stat(card)
            if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
                raise OutputError(f"is an input of this run ({card}): refusing to overwrite it", path=str(target))
    if stat.S_ISFIFO(st.st_mode):
        return OutputTarget(target, target, stream=True)
    return OutputTarget(target, Path(os.path.realpath(target)), existing=st)


@contextmanager
def atomic_writer(
    path: str | os.PathLike[str] | OutputTarget, *, protect: Iterable[str | os.PathLike[str]] = ()
) -> Iterator[IO[bytes]]:
    """:func:`atomic_write`, written piece by piece: the file appears, whole, when the block ends
    without an exception (a batch of reports need not be held in memory to be written atomically).

    The target is checked first (:func:`check_output`). A file being replaced keeps its mode (and, when
    run as root, its owner); a new file gets the mode a shell redirection would give it (0666 less the
    umask). A symlink to a regular file stays a symlink: the file it points to is replaced. A FIFO is
    written to directly.
    """
    import tempfile  # noqa: PLC0415 - only when writing a file
    from pathlib import Path  # noqa: PLC0415 - not on the start-up path (issue 36)

    out = path if isinstance(path, OutputTarget) else check_output(path, protect=protect)
    if out.stream:
        try:
            stream_fd = os.open(out.path, os.O_WRONLY)
        except OSError as exc:
            raise OutputError(f"cannot open it for writing: {exc.strerror or exc}", path=str(out.path)) from None
        with checked_file(stream_fd, str(out.path)) as fh:
            yield fh
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out.real.name}.", suffix=".tmp", dir=out.real.parent)
    except OSError as exc:
        raise OutputError(f"cannot write the output: {exc.strerror or exc}", path=str(out.path)) from None
    try:
        with checked_file(fd, str(out.path)) as fh:
            _take_mode(fd, out.existing)
            yield fh
            fh.flush()
            os.fsync(fd)
        os.replace(tmp, out.real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _take_mode(fd: int, existing: os.stat_result | None) -> None:
    """Give the temporary file (0600 from mkstemp) the mode the written file should have."""
    if existing is None:
        os.fchmod(fd, 0o666 & ~_umask())
        return
    os.fchmod(fd, stat.S_IMODE(existing.st_mode))
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        with contextlib.suppress(OSError):
            os.fchown(fd, existing.st_uid, existing.st_gid)


def _umask() -> int:
    """The process umask, read without setting it (os.umask() sets it: racy with threads writing the cache)."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022


def _has_magic(arg: str) -> bool:
    """``glob.has_magic`` without importing glob at start-up."""
    return any(c in arg for c in "*?[")


def expand_card_args(args: Iterable[str]) -> list[str]:
    """Files as given; directories become the cards inside them (recursively); globs are expanded.

    Duplicates are dropped, first occurrence kept, so a card named twice is derived once.
    """
    out: list[str] = []
    for arg in args:
        # os.path for the files most runs name (pathlib costs start-up, issue 36); Path's spelling of a
        # directory (no trailing "/", no "./") for the cards found in it.
        if arg == "-" or os.path.isfile(arg):
            out.append(arg)
        elif os.path.isdir(arg):
            from pathlib import Path  # noqa: PLC0415

            found = sorted(_cards_in(str(Path(arg))))
            if not found:
                raise InputError("directory holds no .json, .yaml or .yml files", source=arg)
            out.extend(found)
        elif _has_magic(arg):
            import glob  # noqa: PLC0415

            matches = sorted(m for m in glob.glob(arg, recursive=True) if os.path.isfile(m))
            if not matches:
                raise InputError("no file matches this pattern", source=arg)
            out.extend(matches)
        else:
            out.append(arg)  # the loader reports it as missing
    return list(dict.fromkeys(out))


def _cards_in(directory: str) -> Iterator[str]:
    """The card files under ``directory``, as ``Path.rglob`` found them (symlinked directories not
    entered, symlinked files taken), but from the directory entries' own types: rglob plus
    ``is_file()`` made a stat call per file, a third of the time of reusing a stored report."""
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                yield from _cards_in(entry.path)
            elif os.path.splitext(entry.name)[1].lower() in CARD_SUFFIXES and entry.is_file():
                yield entry.path
