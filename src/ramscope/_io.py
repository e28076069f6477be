"""Writing outputs safely, and expanding card arguments."""

from __future__ import annotations

import contextlib
import glob
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .errors import InputError, OutputError

__all__ = ["CARD_SUFFIXES", "OutputTarget", "atomic_write", "atomic_writer", "check_output", "expand_card_args"]

CARD_SUFFIXES = (".json", ".yaml", ".yml")


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


@dataclass(frozen=True, slots=True)
class OutputTarget:
    """Where ``-o PATH`` writes, decided before any work: a regular file (new or existing, a symlink
    followed to it) replaced atomically, or a FIFO (process substitution) streamed to."""

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

    out = path if isinstance(path, OutputTarget) else check_output(path, protect=protect)
    if out.stream:
        try:
            fh = open(out.path, "wb")  # noqa: SIM115 - closed below, after the block
        except OSError as exc:
            raise OutputError(f"cannot open it for writing: {exc.strerror or exc}", path=str(out.path)) from None
        with fh:
            yield fh
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out.real.name}.", suffix=".tmp", dir=out.real.parent)
    except OSError as exc:
        raise OutputError(f"cannot write the output: {exc.strerror or exc}", path=str(out.path)) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            _take_mode(fh.fileno(), out.existing)
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
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


def expand_card_args(args: Iterable[str]) -> list[str]:
    """Files as given; directories become the cards inside them (recursively); globs are expanded.

    Duplicates are dropped, first occurrence kept, so a card named twice is derived once.
    """
    out: list[str] = []
    for arg in args:
        path = Path(arg)
        if arg == "-" or path.is_file():
            out.append(arg)
        elif path.is_dir():
            found = sorted(_cards_in(str(path)))
            if not found:
                raise InputError("directory holds no .json, .yaml or .yml files", source=arg)
            out.extend(found)
        elif glob.has_magic(arg):
            matches = sorted(m for m in glob.glob(arg, recursive=True) if Path(m).is_file())
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
