"""JSON Lines, bounded: one document per line, or (a pretty-printed export) the whole file as one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

import orjson

from .._parse import check_json_nodes
from ..errors import InputError, LimitError
from ._source import EvidenceLimits
from .stats import ReadStats

__all__ = ["json_documents"]


def json_documents(stream: BinaryIO, label: str, stats: ReadStats, limits: EvidenceLimits) -> Iterator[Any]:
    """Each line's JSON value; a line too long or not JSON is counted in ``stats``, never shown."""
    first = True
    while True:
        line = stream.readline(limits.max_line + 1)
        if not line:
            return
        if len(line) > limits.max_line and not line.endswith(b"\n"):
            while (more := stream.readline(1024 * 1024)) and not more.endswith(b"\n"):
                pass
            stats.skip("line too long")
            first = False
            continue
        if not line.strip():
            continue
        try:
            check_json_nodes(line, limits.max_nodes, label)
        except LimitError:
            if first:
                raise  # the first line is the file's only hope of being read: one line naming it
            stats.skip(f"line builds more than {limits.max_nodes:,} values")
            continue
        try:
            doc = orjson.loads(line)
        except orjson.JSONDecodeError:
            if first:
                # Not JSON Lines: a pretty-printed document (or an array of them), read whole but bounded.
                yield from _whole(line, stream, label, limits)
                return
            stats.skip("malformed JSON line")
            continue
        first = False
        yield doc


def _whole(head: bytes, stream: BinaryIO, label: str, limits: EvidenceLimits) -> Iterator[Any]:
    rest = stream.read(limits.max_line + 1 - len(head))
    data = head + rest
    if len(data) > limits.max_line:
        raise InputError(f"neither JSON Lines nor one JSON document of at most {limits.max_line} bytes", source=label)
    check_json_nodes(data, limits.max_nodes, label)
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"malformed or truncated JSON at byte {exc.pos}", source=label) from None
    if isinstance(doc, list):
        yield from doc
    else:
        yield doc
