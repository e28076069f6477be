"""Server-sent events, decoded as the WHATWG HTML standard says (section 9.2.6), incrementally.

MCP's Streamable HTTP transport may answer a POST with ``text/event-stream``
instead of JSON, and servers frame it differently: the Python SDK writes one
``event: message`` and one ``data:`` line with CRLF line ends; the Node
reference server uses LF, puts an ``id:`` on every event and sends a priming
event with empty ``data`` first; servers interleave progress notifications and
requests of their own before the response. So the decoder follows the standard
rather than any one server:

* lines end with CRLF, LF or CR, and a CRLF split across two chunks is one end;
* a leading UTF-8 BOM is dropped; lines starting with ``:`` are comments;
* ``data:`` lines of one event are joined with "\\n"; one space after the colon
  is dropped; an event with no ``data`` line at all is not dispatched, an event
  with an empty ``data:`` line is (with empty data);
* ``id:`` sets the last event id (ignored if it contains NUL), which every later
  event carries; ``retry:`` (ASCII digits only) sets the reconnection time;
* an event not terminated by a blank line when the stream ends is discarded.

:class:`SSEDecoder` is fed pieces as they arrive (so a reader can stop as soon as
the message it waits for is complete) and does linear work in the total size,
however the stream is cut: an incomplete line is kept as a list of pieces, never
re-joined and re-scanned per chunk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SSEDecoder", "SSEEvent", "parse_sse"]

_EOL = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event."""

    data: str
    #: The event type; "message" when the event named none.
    event: str = "message"
    #: The last event id when this event was dispatched (it persists across events).
    id: str | None = None


class SSEDecoder:
    """Incremental event-stream decoder: ``feed`` bytes, get the events they complete."""

    def __init__(self) -> None:
        self._partial: list[bytes] = []
        self._skip_lf = False
        self._first_line = True
        self._data: list[str] = []
        self._event = ""
        self._last_id: str | None = None
        #: The reconnection time the stream asked for (ms), if any.
        self.retry: int | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        out: list[SSEEvent] = []
        if not chunk:
            return out
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        start = 0
        for m in _EOL.finditer(chunk):
            if self._partial:
                self._partial.append(chunk[start : m.start()])
                line = b"".join(self._partial)
                self._partial = []
            else:
                line = chunk[start : m.start()]
            start = m.end()
            if m.group() == b"\r" and start == len(chunk):
                # A CR at the end of a piece: if the next piece starts with LF, the two are one line end.
                self._skip_lf = True
            event = self._line(line)
            if event is not None:
                out.append(event)
        if start < len(chunk):
            self._partial.append(chunk[start:])
        return out

    def _line(self, raw: bytes) -> SSEEvent | None:
        if self._first_line:
            self._first_line = False
            raw = raw.removeprefix(_BOM)
        if not raw:
            return self._dispatch()
        if raw[:1] == b":":
            return None
        line = raw.decode("utf-8", "replace")
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry = int(value)
        return None

    def _dispatch(self) -> SSEEvent | None:
        data, event = self._data, self._event
        self._data, self._event = [], ""
        if not data:
            return None
        return SSEEvent(data="\n".join(data), event=event or "message", id=self._last_id)


def parse_sse(body: bytes) -> list[SSEEvent]:
    """Every complete event of a whole event-stream body."""
    return SSEDecoder().feed(body)
