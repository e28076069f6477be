"""Writing outputs safely, and expanding card arguments."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from .errors import InputError

__all__ = ["CARD_SUFFIXES", "atomic_write", "atomic_writer", "expand_card_args"]

CARD_SUFFIXES = (".json", ".yaml", ".yml")


def atomic_write(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write via a temporary file in the same directory and rename: a reader (or an
    interrupted run) never sees a half-written report."""
    with atomic_writer(path) as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


@contextmanager
def atomic_writer(path: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """:func:`atomic_write`, written piece by piece: the file appears, whole, when the block ends
    without an exception (a batch of reports need not be held in memory to be written atomically)."""
    import tempfile  # noqa: PLC0415 - only when writing a file

    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
