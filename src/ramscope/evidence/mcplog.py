"""MCP sessions as JSON Lines of JSON-RPC messages, each with the server's URL.

What MCP proxies and inspectors log, one message a line::

    {"time": "2026-12-01T10:00:00Z", "server": "https://mcp.example.com/mcp", "direction": "send",
     "headers": {"Authorization": "Bearer ..."}, "message": {"jsonrpc": "2.0", "id": 3,
     "method": "tools/call", "params": {"name": "search", "arguments": {...}}}}

The message may also be the line itself (``jsonrpc`` at the top) or a batch (a list). The server
URL is read from ``server`` / ``server_url`` / ``serverUrl`` / ``url`` / ``endpoint``; ``headers``
(the request's, optional) tell the credential kind, then go. Each ``tools/call`` request is one
call; a ``tools/list`` result seen earlier supplies the tool's ``destructiveHint``. The answer to a
call (by JSON-RPC id, or a bare HTTP answer line to the server's latest call) gives its ``status``
and what a step-up said the tool needs (:mod:`.stepup`). Arguments and results are never kept.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, BinaryIO

from . import stepup
from ._auth import Credentials
from ._lines import json_documents
from ._source import DEFAULT_LIMITS, EvidenceLimits
from .model import EvidenceFormat, ObservedCall, origin_of, strip_url
from .stats import ReadStats

__all__ = ["read_mcp_log"]

_SERVER_KEYS = ("server", "server_url", "serverUrl", "url", "endpoint")
_MESSAGE_KEYS = ("message", "payload", "data", "msg")
_TIME_KEYS = ("time", "timestamp", "ts")


def read_mcp_log(
    stream: BinaryIO, label: str, stats: ReadStats, limits: EvidenceLimits = DEFAULT_LIMITS
) -> Iterator[ObservedCall]:
    #: server -> tool -> destructiveHint, from tools/list results seen so far.
    hints: dict[str, dict[str, bool]] = {}
    room = [MAX_HINTS]
    n = 0
    answers = _Answers()
    for line in json_documents(stream, label, stats, limits):
        n += 1
        if not isinstance(line, dict):
            stats.skip("line is not an object")
            continue
        server, server_long = _server(line, limits)
        messages = _messages(line)
        if messages is None:
            if not answers.answer(line, None, server):
                stats.skip("no JSON-RPC message")
            yield from answers.ready()
            continue
        for msg in messages:
            if not isinstance(msg, dict):
                stats.skip("JSON-RPC message is not an object")
                continue
            if msg.get("method") == "tools/call":
                call = _call(line, msg, server, server_long, hints, label, n, stats, limits)
                if call is not None:
                    answers.wait(call, msg.get("id"))
            elif "method" not in msg:
                answers.answer(line, msg, server)
                if server and not server_long and isinstance(msg.get("result"), dict):
                    _note_tools(msg["result"], hints.setdefault(server, {}), limits, room)
        yield from answers.ready()
    yield from answers.ready(final=True)


class _Answers:
    """Calls waiting for their answer (a step-up challenge or ``_meta["mcp/www_authenticate"]`` says what the
    tool needs), yielded in the log's order: a call leaves once answered, or when too many wait."""

    _MAX_WAITING = 10_000

    def __init__(self) -> None:
        self.queue: deque[list[Any]] = deque()
        self.by_id: dict[tuple[str, str], list[Any]] = {}

    def wait(self, call: ObservedCall, rid: Any) -> None:
        item: list[Any] = [call, False]
        self.queue.append(item)
        if isinstance(rid, str | int) and not isinstance(rid, bool):
            self.by_id[(call.url, str(rid))] = item
        else:
            item[1] = True  # no id: no answer can be matched to it

    def answer(self, line: Mapping[str, Any], msg: Mapping[str, Any] | None, server: str | None) -> bool:
        """Match an answer to its call (by id; a bare HTTP answer to the server's latest call); False if none."""
        if server is None:
            return False
        rid = msg.get("id") if msg is not None else None
        item = self.by_id.pop((server, str(rid)), None) if isinstance(rid, str | int) else None
        if item is None and msg is None:
            item = next((i for i in reversed(self.queue) if not i[1] and i[0].url == server), None)
        if item is None:
            return False
        step, status = stepup.from_log_line(line, msg)
        call: ObservedCall = item[0]
        item[0] = replace(call, status=status if status is not None else call.status, step_up=step or call.step_up)
        item[1] = True
        return True

    def ready(self, *, final: bool = False) -> Iterator[ObservedCall]:
        while self.queue and (final or self.queue[0][1] or len(self.queue) > self._MAX_WAITING):
            yield self.queue.popleft()[0]


def _server(line: Mapping[str, Any], limits: EvidenceLimits) -> tuple[str | None, bool]:
    """The server's URL, and whether it was over the bound (then only its host is known)."""
    for key in _SERVER_KEYS:
        v = line.get(key)
        if isinstance(v, dict):
            v = v.get("url")
        if isinstance(v, str) and v:
            # A URL over the bound still names its server's host (read in part, never matched).
            if len(v) > limits.max_field:
                return origin_of(v, limits.max_field), True
            return strip_url(v), False
    return None, False


def _messages(line: Mapping[str, Any]) -> list[Any] | None:
    if "jsonrpc" in line:
        return [line]
    for key in _MESSAGE_KEYS:
        v = line.get(key)
        if isinstance(v, dict):
            return [v]
        if isinstance(v, list):
            return v
    return None


def _time(line: Mapping[str, Any]) -> str:
    for key in _TIME_KEYS:
        v = line.get(key)
        if isinstance(v, str):
            return v[:64]
        if isinstance(v, int | float) and not isinstance(v, bool) and 0 < v < 1e11:
            return datetime.fromtimestamp(v, UTC).isoformat().replace("+00:00", "Z")
    return ""


#: Tool hints kept across a whole log, and the longest tool name hinted: ``tools/list`` results of every
#: line accumulate, so without a bound an 8 GiB log of distinct 64 KiB names would be held whole (issue 30).
MAX_HINTS = 100_000
MAX_HINTED_NAME = 1024


def _note_tools(result: Mapping[str, Any], hints: dict[str, bool], limits: EvidenceLimits, room: list[int]) -> None:
    """Note each listed tool's ``destructiveHint``; ``room`` is how many more hints the whole log may hold."""
    tools = result.get("tools")
    if not isinstance(tools, list):
        return
    longest = min(limits.max_field, MAX_HINTED_NAME)
    for t in tools[:100_000]:
        if not isinstance(t, dict):
            continue
        name, ann = t.get("name"), t.get("annotations")
        if not isinstance(name, str) or len(name) > longest:
            continue
        if isinstance(ann, dict) and isinstance(ann.get("destructiveHint"), bool):
            if name not in hints:
                if room[0] <= 0:
                    return  # later calls get MCP's defaults (destructive unless annotated), as an unlisted tool does
                room[0] -= 1
            hints[name] = ann["destructiveHint"]


def _call(
    line: Mapping[str, Any],
    msg: Mapping[str, Any],
    server: str | None,
    server_long: bool,
    hints: Mapping[str, Mapping[str, bool]],
    label: str,
    n: int,
    stats: ReadStats,
    limits: EvidenceLimits,
) -> ObservedCall | None:
    params = msg.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    if server is None:
        stats.skip("tools/call without a readable server URL")
        return None
    unreadable = ""
    if not isinstance(name, str) or not name.strip():
        unreadable = "tools/call without a tool name"
    elif len(name) > limits.max_field:
        unreadable = f"tool name over {limits.max_field} bytes"
    elif server_long:
        unreadable = f"server URL over {limits.max_field} bytes"
    if unreadable:
        # Fail closed: a call to this server all the same, which no declared tool can explain.
        stats.part(unreadable)
        return ObservedCall(
            time=_time(line),
            method="tools/call",
            url=server,
            fmt=EvidenceFormat.MCP,
            source=label,
            entry=n,
            unreadable=unreadable,
        )
    if not isinstance(name, str):  # pragma: no cover - said above
        return None
    creds = Credentials()
    headers = line.get("headers")
    seen = isinstance(headers, dict | list)
    if isinstance(headers, dict):
        creds.headers((str(k), v) for k, v in headers.items() if isinstance(v, str))
    elif isinstance(headers, list):
        creds.headers(
            (str(p[0]), p[1]) for p in headers if isinstance(p, list) and len(p) == 2 and isinstance(p[1], str)
        )
    auth, principal = creds.result(seen=seen)
    stats.calls += 1
    return ObservedCall(
        time=_time(line),
        method="tools/call",
        url=server,
        auth=auth,
        principal=principal,
        tool=name,
        destructive=hints.get(server, {}).get(name),
        fmt=EvidenceFormat.MCP,
        source=label,
        entry=n,
    )
