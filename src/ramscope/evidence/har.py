"""HAR 1.2 (browsers, Dev Proxy, mitmproxy, Charles): streamed, one entry at a time.

The file is walked as parser events (ijson, its C backend): only the fields a call needs are
kept, bodies and response headers are passed over without being built (but the few a step-up is
read from, :mod:`.stepup`), so a 1 GB HAR costs the memory of one entry's small fields. Header
values reach :mod:`._auth` to be classified, and go.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

import ijson

from ..errors import InputError
from . import stepup
from ._auth import Credentials
from ._source import DEFAULT_LIMITS, EvidenceLimits
from .model import AuthKind, EvidenceFormat, ObservedCall, Principal, http_method, origin_of, strip_url
from .stats import ReadStats

__all__ = ["read_har"]

_ENTRY = "log.entries.item"
_REQ = _ENTRY + ".request"


class _Entry:
    __slots__ = (
        "answer",
        "creds",
        "hidden",
        "hname",
        "host",
        "hvalue",
        "in_cookies",
        "mcp",
        "method",
        "qname",
        "qvalue",
        "rname",
        "rvalue",
        "started",
        "status",
        "url",
        "url_long",
    )

    def __init__(self) -> None:
        self.creds = Credentials()
        self.method = ""
        self.url = ""
        self.started = ""
        self.status: int | None = None
        self.hname = self.hvalue = self.qname = self.qvalue = ""
        #: The request's ``Host`` / ``:authority`` header: the host of an entry without an absolute URL.
        self.host = ""
        #: The URL was over the field bound: only its first characters are kept (for the host).
        self.url_long = False
        #: A header or query name was over the bound: what credential the request carried is unknown.
        self.hidden = False
        self.in_cookies = False
        #: Response headers a step-up is read from (stepup.INTERESTING_HEADERS), and the MCP request headers.
        self.rname = self.rvalue = ""
        self.answer: dict[str, list[str]] = {}
        self.mcp: dict[str, str] = {}


def read_har(
    stream: BinaryIO, label: str, stats: ReadStats, limits: EvidenceLimits = DEFAULT_LIMITS
) -> Iterator[ObservedCall]:
    """The calls of a HAR file; unreadable entries are counted in ``stats``."""
    entry: _Entry | None = None
    saw_log = False
    n = 0
    cap = limits.max_field
    act = _ACTIONS
    try:
        for prefix, event, value in _events(stream):
            # Most events (bodies, response headers, timings) are of no interest: one dict look-up each.
            code = act.get(prefix)
            if code is None:
                continue
            if entry is None:
                if code == _BOUNDARY and event == "start_map":
                    entry = _Entry()
                    n += 1
                elif code == _LOG and event == "start_array":
                    saw_log = True
                continue
            if code == _BOUNDARY:
                if event == "end_map":
                    call = _finish(entry, label, n, stats, cap)
                    entry = None
                    if call is not None:
                        yield call
                continue
            if event == "string":
                if len(value) > cap and code in _CAPPED:
                    # Not kept whole, but not a reason to lose the call: the URL keeps its head (the host),
                    # a method its head (then no HTTP token), a name makes the credential unknown.
                    if code == _URL:
                        entry.url, entry.url_long = value[: cap + 1], True
                    elif code == _METHOD:
                        entry.method = value[:64]
                    else:
                        entry.hidden = True
                elif code == _METHOD:
                    entry.method = value
                elif code == _URL:
                    entry.url = value
                elif code == _STARTED:
                    entry.started = value[:64]
                elif code == _HNAME:
                    entry.hname = value
                elif code == _HVALUE:
                    entry.hvalue = value
                elif code == _QNAME:
                    entry.qname = value
                elif code == _QVALUE:
                    entry.qvalue = value
                elif code == _RNAME:
                    entry.rname = value
                elif code == _RVALUE:
                    entry.rvalue = value
            elif event == "end_map":
                if code == _HEADER:
                    if entry.hname.lower() in {"host", ":authority"} and len(entry.hvalue) <= 1024:
                        entry.host = entry.hvalue
                    entry.creds.header(entry.hname, entry.hvalue)
                    if entry.hname.lower() in _MCP_HEADERS and len(entry.hvalue) <= cap:
                        entry.mcp[entry.hname.lower()] = entry.hvalue
                    entry.hname = entry.hvalue = ""
                elif code == _RHEADER:
                    name = entry.rname.lower()
                    if name in stepup.INTERESTING_HEADERS and len(entry.answer.get(name, ())) < 8:
                        entry.answer.setdefault(name, []).append(entry.rvalue[:4096])
                    entry.rname = entry.rvalue = ""
                elif code == _QUERY:
                    entry.creds.query(entry.qname, entry.qvalue)
                    entry.qname = entry.qvalue = ""
                elif code == _COOKIE:
                    entry.creds.cookie()
            elif event == "number" and code == _STATUS:
                entry.status = int(value) if 0 <= value < 1000 else None
    except ijson.IncompleteJSONError:
        # ijson's own messages quote the input around the error: never shown (secrets).
        raise InputError(
            f"truncated or malformed JSON after {stats.calls + stats.skipped} entries", source=label
        ) from None
    except ijson.JSONError:
        raise InputError(f"malformed JSON after {stats.calls + stats.skipped} entries", source=label) from None
    if not saw_log:
        raise InputError("not a HAR file: no log.entries array", source=label)


#: Containers deeper than this hold nothing a call is made of (``log.entries.item.request.headers.item``
#: is 6 deep): their events are passed over by a counter, never given a prefix.
_KEEP = 8
_OPEN = frozenset({"start_map", "start_array"})
_CLOSE = frozenset({"end_map", "end_array"})


def _events(stream: BinaryIO) -> Iterator[tuple[str, str, Any]]:
    """``ijson.parse``'s (prefix, event, value), from its ``basic_parse``, with nothing past :data:`_KEEP`.

    ``ijson.parse`` builds each event's prefix from the whole path: ``[[[…`` 40,000 deep in one entry (an
    80 KB file) built 40,000 ever longer prefixes, 3.8 GB (issue 30). Here a prefix is at most ``_KEEP``
    names long and deeper containers only count their own nesting.
    """
    stack: list[str] = []  # the prefix of each open container, outermost first
    here = ""  # the prefix of the next value
    deep = 0  # open containers below the kept ones
    for event, value in ijson.basic_parse(stream, use_float=True):
        if deep:
            if event in _OPEN:
                deep += 1
            elif event in _CLOSE:
                deep -= 1
            continue
        if event == "map_key":
            top = stack[-1]
            here = f"{top}.{value}" if top else str(value)
            yield top, event, value
        elif event in _OPEN:
            if len(stack) >= _KEEP:
                deep = 1
                continue
            yield here, event, value
            stack.append(here)
            if event == "start_array":
                here = f"{here}.item" if here else "item"
        elif event in _CLOSE:
            here = stack.pop()
            yield here, event, value
        else:
            yield here, event, value


(_LOG, _BOUNDARY, _METHOD, _URL, _STARTED, _STATUS, _HNAME, _HVALUE, _HEADER, _QNAME, _QVALUE, _QUERY, _COOKIE) = range(
    13
)
_RNAME, _RVALUE, _RHEADER = range(13, 16)
#: MCP Streamable HTTP (2026-07-28) names the JSON-RPC method and the tool in request headers.
_MCP_HEADERS = frozenset({"mcp-method", "mcp-name"})
#: The parser prefixes a call is made of, and what each is.
_ACTIONS = {
    "log.entries": _LOG,
    _ENTRY: _BOUNDARY,
    _REQ + ".method": _METHOD,
    _REQ + ".url": _URL,
    _ENTRY + ".startedDateTime": _STARTED,
    _ENTRY + ".response.status": _STATUS,
    _REQ + ".headers.item.name": _HNAME,
    _REQ + ".headers.item.value": _HVALUE,
    _REQ + ".headers.item": _HEADER,
    _REQ + ".queryString.item.name": _QNAME,
    _REQ + ".queryString.item.value": _QVALUE,
    _REQ + ".queryString.item": _QUERY,
    _REQ + ".cookies.item": _COOKIE,
    _ENTRY + ".response.headers.item.name": _RNAME,
    _ENTRY + ".response.headers.item.value": _RVALUE,
    _ENTRY + ".response.headers.item": _RHEADER,
}
#: Strings longer than the field bound are not kept whole (a header value is only classified).
_CAPPED = frozenset({_METHOD, _URL, _HNAME, _QNAME})


def _finish(e: _Entry, label: str, n: int, stats: ReadStats, cap: int) -> ObservedCall | None:
    method = http_method(e.method)
    url = None if e.url_long else strip_url(e.url) if e.url else None
    unreadable = ""
    if e.url_long:
        unreadable = f"URL over {cap} bytes"
    elif url is None:
        unreadable = "no absolute URL"
    elif method is None:
        unreadable = "not an HTTP method"
    if unreadable:
        # Fail closed: an entry not read whole is still a call to its host, when the host can be read.
        origin = url or (origin_of(e.url, cap) if e.url else None)
        if origin is None and e.host and not e.url_long:
            origin = strip_url(f"https://{e.host.strip()}/")
        if origin is None:
            stats.skip(f"{unreadable}, no readable host")
            return None
        if method is None and not unreadable.startswith("not an HTTP"):
            unreadable += ", not an HTTP method"
        stats.part(unreadable)
        return ObservedCall(
            time=e.started,
            method=method or "",
            url=origin,
            status=e.status,
            auth=AuthKind.UNKNOWN,
            fmt=EvidenceFormat.HAR,
            source=label,
            entry=n,
            unreadable=unreadable,
        )
    if url is None or method is None:  # pragma: no cover - said above
        return None
    # The query string as the URL carries it, for HARs whose queryString list is empty.
    if "?" in e.url:
        for part in e.url.split("?", 1)[1].split("#", 1)[0].split("&"):
            name, _, value = part.partition("=")
            e.creds.query(name, value)
    auth, principal = e.creds.result(seen=True)
    if e.hidden:
        auth, principal = AuthKind.UNKNOWN, Principal.UNKNOWN
    stats.calls += 1
    # An MCP tools/call over Streamable HTTP names its tool in Mcp-Name: a call of that tool on that server.
    tool = e.mcp.get("mcp-name", "").strip() if e.mcp.get("mcp-method") == "tools/call" else ""
    return ObservedCall(
        time=e.started,
        method="tools/call" if tool else method,
        url=url,
        status=e.status,
        auth=auth,
        principal=principal,
        tool=tool,
        fmt=EvidenceFormat.HAR,
        source=label,
        entry=n,
        step_up=stepup.from_headers(e.answer, e.status) if e.answer else None,
    )
