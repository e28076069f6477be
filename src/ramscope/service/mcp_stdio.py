"""The MCP server's stdio transport, bounded: each message is a line of stdin, read no further than
the bound and checked for nesting before any parser sees it.

The SDK's own stdio transport reads a whole line, however long, and parses it whole: a 20 MiB
argument, refused afterwards by the 1 MiB bound, cost 1.4 GB; a ``card`` nested 200 levels failed
in the SDK's parser, which answers nothing, and the client waited for ever (issue 30 items 17 and
18). Here a line longer than ``max_line`` is dropped while it streams (its first bytes kept, for the
request's ``id``), a line nested deeper than ``max_depth`` or that is not JSON is not parsed by the
SDK, and each gets a JSON-RPC error answer with the request's ``id`` when one can be read before its
``params``. Every other line goes to the SDK's transport as it would have from stdin.

While serving, fd 0 reads the null device and fd 1 writes to stderr (as the SDK's transport does),
so nothing a handler prints reaches the wire; both are restored at the end.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import orjson

from .._parse import json_nodes_at_most

__all__ = ["BoundedLines", "WireOut", "answer_for", "bounded_stdio_streams", "nesting_depth"]

#: Bytes of an over-long line kept to find its ``id``.
_PREFIX = 4096
#: A string, or an unterminated one to the end of the line: never a match that scans on and fails
#: (which made a line of unterminated escaped quotes cost quadratic time).
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,256}")')
_PARAMS = re.compile(rb'"params"\s*:')
#: JSON-RPC's codes: not JSON; not a valid request (too large, too deep).
PARSE_ERROR, INVALID_REQUEST = -32700, -32600


def nesting_depth(line: bytes, *, stop_at: int) -> int:
    """How deep ``line`` nests (brackets outside strings), counted no further than ``stop_at``."""
    if line.count(b"[") + line.count(b"{") <= stop_at:
        return 0  # cannot nest deeper than its brackets
    depth = deepest = 0
    for m in _BRACKET.finditer(_STRING.sub(b'""', line)):
        if m.group() in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_at:
                    return deepest
        else:
            depth -= 1
    return deepest


def _request_id(head: bytes) -> Any:
    """The ``id`` of a JSON-RPC message from its first bytes, if it comes before ``params`` (as the
    SDKs write it); else ``None`` (JSON-RPC's id for an unreadable request)."""
    params = _PARAMS.search(head)
    found = _ID.search(head, 0, params.start() if params else len(head))
    if found is None:
        return None
    try:
        return orjson.loads(found.group(1))
    except orjson.JSONDecodeError:
        return None


def _error(req_id: Any, code: int, message: str) -> str:
    return orjson.dumps({"jsonrpc": "2.0", "id": req_id, "error": {"code": code, "message": message}}).decode()


def answer_for(line: bytes, *, max_depth: int, max_nodes: int) -> str | None:
    """A JSON-RPC error answer for a line the SDK must not parse, or ``None`` for one it may."""
    if not line.strip():
        return None
    if nesting_depth(line, stop_at=max_depth) > max_depth:
        return _error(_request_id(line[:_PREFIX]), INVALID_REQUEST, f"the message nests deeper than {max_depth} levels")
    if json_nodes_at_most(line) > max_nodes:
        return _error(_request_id(line[:_PREFIX]), INVALID_REQUEST, "the message has too many JSON values")
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return _error(_request_id(line[:_PREFIX]), PARSE_ERROR, f"not JSON: {exc}")
    return None


class WireOut:
    """The wire's write side: whole lines, one at a time, to a private duplicate of stdout."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()

    def _write_all(self, data: bytes) -> None:
        with self._lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]

    async def write(self, text: str) -> None:
        await anyio.to_thread.run_sync(self._write_all, text.encode("utf-8"))

    async def flush(self) -> None:
        return None


class BoundedLines:
    """The wire's read side as the lines the SDK may parse; every other line is answered here."""

    def __init__(self, fd: int, out: WireOut, *, max_line: int, max_depth: int, max_nodes: int) -> None:
        self._fd = fd
        self._out = out
        self.max_line = max_line
        self.max_depth = max_depth
        self.max_nodes = max_nodes

    async def _lines(self) -> AsyncIterator[bytes | tuple[bytes, int]]:
        """Each line, or ``(its first bytes, its length)`` for one over ``max_line``."""
        pending = bytearray()
        dropping: tuple[bytes, int] | None = None
        while True:
            chunk = await anyio.to_thread.run_sync(os.read, self._fd, 65536)
            if not chunk:
                if dropping is not None:
                    yield dropping
                elif pending:
                    yield bytes(pending)
                return
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                if dropping is not None:
                    dropping = (dropping[0], dropping[1] + len(piece))
                elif len(pending) + len(piece) > self.max_line:
                    # Over the bound: what has come is dropped now, what is still to come as it comes.
                    head = bytes((pending + piece)[:_PREFIX])
                    dropping = (head, len(pending) + len(piece))
                    pending = bytearray()
                else:
                    pending += piece
                if end < 0:
                    break
                if dropping is not None:
                    yield dropping
                    dropping = None
                else:
                    yield bytes(pending)
                    pending = bytearray()
                start = end + 1

    async def __aiter__(self) -> AsyncIterator[str]:
        async for item in self._lines():
            if isinstance(item, tuple):
                head, size = item
                refusal = _error(
                    _request_id(head),
                    INVALID_REQUEST,
                    f"the message is {size:,} bytes, over the limit of {self.max_line:,}",
                )
            else:
                found = answer_for(item, max_depth=self.max_depth, max_nodes=self.max_nodes)
                if found is None:
                    if item.strip():
                        yield item.decode("utf-8", "replace")
                    continue
                refusal = found
            await self._out.write(refusal + "\n")


@asynccontextmanager
async def bounded_stdio_streams(*, max_line: int, max_depth: int, max_nodes: int) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio transport over :class:`BoundedLines` and :class:`WireOut` on private duplicates
    of fds 0 and 1 (pointed at the null device and stderr while serving)."""
    from mcp.server.stdio import stdio_server  # noqa: PLC0415

    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    saved_in, saved_out = os.dup(0), os.dup(1)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        out = WireOut(wire_out)
        lines = BoundedLines(wire_in, out, max_line=max_line, max_depth=max_depth, max_nodes=max_nodes)
        async with stdio_server(stdin=lines, stdout=out) as streams:  # type: ignore[arg-type]
            yield streams
    finally:
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (null, saved_in, saved_out, wire_in, wire_out):
            os.close(fd)
