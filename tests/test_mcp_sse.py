"""The event-stream decoder: real MCP servers' framings, the standard's corner cases, a round-trip property."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ramscope._sse import SSEDecoder, SSEEvent, parse_sse

RESULT = '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}'


def test_python_sdk_framing_crlf() -> None:
    """The Python SDK's framing: event + data lines ending in CRLF."""
    body = f"event: message\r\ndata: {RESULT}\r\n\r\n".encode()
    assert parse_sse(body) == [SSEEvent(data=RESULT)]


def test_node_framing_priming_event_and_ids() -> None:
    """The Node server's framing: LF, an id on every event, a priming event with empty data first."""
    body = f"id: 0\ndata:\n\nevent: message\nid: 1\ndata: {RESULT}\n\n".encode()
    assert parse_sse(body) == [SSEEvent(data="", id="0"), SSEEvent(data=RESULT, id="1")]


def test_several_events_before_the_result() -> None:
    """Notifications and server requests may come first; each is its own event."""
    note = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}'
    ping = '{"jsonrpc":"2.0","id":"s1","method":"ping"}'
    body = f"data: {note}\n\ndata: {ping}\n\ndata: {RESULT}\n\n".encode()
    assert [e.data for e in parse_sse(body)] == [note, ping, RESULT]


def test_multi_line_data_is_joined_with_newlines() -> None:
    """Several data lines of one event are joined with LF; one leading space is dropped, more are kept."""
    assert parse_sse(b"data: a\ndata:  b\ndata:c\n\n") == [SSEEvent(data="a\n b\nc")]


def test_comments_bom_cr_and_unknown_fields() -> None:
    """A leading BOM, comments, bare CR line ends and unknown fields are handled per the standard."""
    body = b"\xef\xbb\xbf: keep-alive\rfoo: bar\rdata\rdata: x\r\r"
    assert parse_sse(body) == [SSEEvent(data="\nx")]


def test_retry_and_id_rules() -> None:
    """retry takes ASCII digits only; an id with NUL is ignored; the last id persists across events."""
    dec = SSEDecoder()
    events = dec.feed(b"retry: 1500\nid: a\ndata: 1\n\nretry: x1\nid: b\x00c\ndata: 2\n\n")
    assert dec.retry == 1500
    assert events == [SSEEvent(data="1", id="a"), SSEEvent(data="2", id="a")]


def test_an_event_without_data_is_not_dispatched() -> None:
    """An event with only an id or type (no data line) is dropped, but its id is remembered."""
    assert parse_sse(b"event: ping\nid: 7\n\ndata: x\n\n") == [SSEEvent(data="x", id="7")]


def test_an_unterminated_event_at_the_end_is_discarded() -> None:
    """An event cut off before its blank line (a stream stopped early) is not dispatched."""
    assert parse_sse(f"data: {RESULT}\n\ndata: partial".encode()) == [SSEEvent(data=RESULT)]


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    """A CR at the end of one chunk and the LF at the start of the next make one line end, not two."""
    dec = SSEDecoder()
    got = dec.feed(b"data: a\r") + dec.feed(b"\ndata: b\r") + dec.feed(b"\n\r") + dec.feed(b"\n")
    assert got == [SSEEvent(data="a\nb")]


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    """Undecodable bytes become U+FFFD; the stream goes on."""
    assert parse_sse(b"data: \xff\xfe\n\n") == [SSEEvent(data="\ufffd\ufffd")]


def test_a_long_line_in_many_small_chunks_is_linear() -> None:
    """A 4 MB line fed 1 KiB at a time decodes once (no quadratic re-joining)."""
    payload = b"x" * (4 * 1024 * 1024)
    dec = SSEDecoder()
    body = b"data: " + payload + b"\n\n"
    events: list[SSEEvent] = []
    for i in range(0, len(body), 1024):
        events += dec.feed(body[i : i + 1024])
    assert len(events) == 1
    assert len(events[0].data) == len(payload)


# --------------------------------------------------------------------------- property

_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=20)
_EOLS = st.sampled_from([b"\r\n", b"\n", b"\r"])


@st.composite
def _stream(draw: st.DrawFn) -> tuple[bytes, list[SSEEvent]]:
    """Random events framed with random line ends and interleaved comments, and the events expected back."""
    out = bytearray()
    expected: list[SSEEvent] = []
    last_id: str | None = None
    for _ in range(draw(st.integers(0, 6))):
        event_type = draw(st.one_of(st.none(), _TEXT))
        data = draw(st.lists(_TEXT, min_size=0, max_size=4))
        event_id = draw(st.one_of(st.none(), _TEXT.filter(lambda s: "\0" not in s)))
        fields: list[bytes] = []
        if draw(st.booleans()):
            fields.append(b": " + draw(_TEXT).encode())
        if event_type is not None:
            fields.append(b"event: " + event_type.encode())
        if event_id is not None:
            fields.append(b"id: " + event_id.encode())
            last_id = event_id
        fields += [b"data: " + line.encode() for line in data]
        eol = b""
        for f in fields:
            eol = draw(_EOLS)
            out += f + eol
        # After a bare CR, an LF would join it into one CRLF line end: the blank line must be a CR too.
        out += b"\r" if eol == b"\r" else draw(_EOLS)
        if data:
            expected.append(SSEEvent(data="\n".join(data), event=event_type or "message", id=last_id))
    return bytes(out), expected


@settings(max_examples=300, deadline=None)
@given(_stream(), st.lists(st.integers(min_value=1, max_value=64), max_size=40))
def test_round_trip_with_random_line_ends_and_chunk_splits(
    stream: tuple[bytes, list[SSEEvent]], cuts: list[int]
) -> None:
    """Framed events come back unchanged, whatever the line endings and however the bytes are chunked."""
    body, expected = stream
    dec = SSEDecoder()
    got: list[SSEEvent] = []
    pos = 0
    for size in cuts:
        got += dec.feed(body[pos : pos + size])
        pos += size
    got += dec.feed(body[pos:])
    assert got == expected
    assert parse_sse(body) == expected
