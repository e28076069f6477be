"""Opening an evidence file: bounded, gzip-aware, and sniffed for its format.

Evidence comes from strangers: a file may be huge, a gzip bomb, truncated or something else
entirely. Everything that goes wrong is an :class:`InputError` naming the file, with a message
of ramscope's own (a parser's message may quote the input, and the input holds secrets).
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO, cast

from ..errors import InputError, LimitError
from .model import EvidenceFormat

__all__ = ["EvidenceLimits", "open_evidence", "sniff"]


@dataclass(frozen=True, slots=True)
class EvidenceLimits:
    #: Decompressed bytes read from one file at most (a 1 GB HAR is fine, streamed).
    max_bytes: int = 8 * 1024**3
    #: A gzip file may expand this many times at most once past ``ratio_after`` bytes (bombs expand 1000x).
    max_ratio: int = 200
    ratio_after: int = 64 * 1024**2
    #: One line of a JSON Lines file (an OTLP export request, an MCP message), decompressed.
    max_line: int = 64 * 1024**2
    #: One URL, header value or tool name kept long enough to classify; longer ones are unreadable entries.
    max_field: int = 64 * 1024
    #: Values and keys one JSON Lines line (or a whole pretty-printed document) may build, counted before
    #: any is built, as for specs (``_parse.check_json_nodes``): a 61 KB gzip of ``{},`` would build ~2 GB.
    #: A collector's largest batch (8,192 spans of ~100 values each) is a fifth of it.
    max_nodes: int = 4_000_000


DEFAULT_LIMITS = EvidenceLimits()


class _Bounded(io.RawIOBase):
    """A decompressing reader that stops at the byte and ratio bounds."""

    def __init__(self, inner: BinaryIO, raw: BinaryIO, label: str, limits: EvidenceLimits, compressed: bool) -> None:
        self._inner, self._raw, self._label, self._limits, self._compressed = inner, raw, label, limits, compressed
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        try:
            data = self._inner.read(len(buffer))
        except (OSError, EOFError, zlib.error) as exc:
            what = "a corrupt or truncated gzip stream" if self._compressed else f"a read error ({type(exc).__name__})"
            raise InputError(f"not readable evidence: {what}", source=self._label) from None
        n = len(data)
        buffer[:n] = data
        self.count += n
        lim = self._limits
        if self.count > lim.max_bytes:
            raise LimitError(f"evidence larger than {lim.max_bytes} bytes", source=self._label)
        if self._compressed and self.count > lim.ratio_after:
            packed = max(self._raw.tell(), 1)
            if self.count > packed * lim.max_ratio:
                raise LimitError(
                    f"gzip expands more than {lim.max_ratio}x ({packed} bytes to over {self.count}): refused as a bomb",
                    source=self._label,
                )
        return n


def sniff(head: bytes) -> EvidenceFormat | None:
    """The format of evidence whose first bytes are ``head``, or ``None``."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(b"{"):
        return None
    if b'"resourceSpans"' in text or b'"resource_spans"' in text:
        return EvidenceFormat.OTLP
    if b'"log"' in text[:4096] and (b'"entries"' in text or b'"creator"' in text or b'"version"' in text):
        return EvidenceFormat.HAR
    if b'"jsonrpc"' in text:
        return EvidenceFormat.MCP
    return None


@contextmanager
def open_evidence(
    path: str | os.PathLike[str], limits: EvidenceLimits = DEFAULT_LIMITS
) -> Iterator[tuple[str, EvidenceFormat, BinaryIO]]:
    """(label, format, reader) of one evidence file, gzip or not; the reader enforces ``limits``."""
    label = os.fspath(path)
    try:
        raw: BinaryIO = open(label, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or type(exc).__name__}", source=label) from None
    try:
        if not os.path.isfile(label):
            raise InputError("not a regular file", source=label)
        magic = raw.read(2)
        raw.seek(0)
        compressed = magic == b"\x1f\x8b"
        inner: BinaryIO = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw  # type: ignore[assignment]
        bounded = _Bounded(inner, raw, label, limits, compressed)
        reader = io.BufferedReader(bounded, buffer_size=256 * 1024)
        head = reader.peek(64 * 1024)[: 64 * 1024]
        if not head.strip():
            raise InputError("empty evidence file", source=label)
        fmt = sniff(head)
        if fmt is None:
            raise InputError(
                "not evidence ramscope reads: expected a HAR file, an OTLP/JSON trace or JSON Lines of MCP JSON-RPC",
                source=label,
            )
        yield label, fmt, cast(BinaryIO, reader)
    finally:
        raw.close()
