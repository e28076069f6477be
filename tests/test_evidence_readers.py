"""The evidence readers: every format, streamed; secrets never kept; bad evidence is one line naming the
file (InputError), and entries that cannot be read are counted, nothing else lost."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ramscope.errors import InputError, LimitError
from ramscope.evidence import AuthKind, Principal, read_calls
from ramscope.evidence._source import EvidenceLimits
from tests.support.recorders import jwt

SECRETS = ("Sup3rSecretBearer", "pa55word-in-query", "body-pa55word", "cookie-s3cret", "k3y-value", "us3r:pa55")


def _har(entries: list[dict[str, object]]) -> str:
    return json.dumps({"log": {"version": "1.2", "creator": {"name": "t"}, "entries": entries}})


def _entry(method: str, url: str, headers: dict[str, str] | None = None, **extra: object) -> dict[str, object]:
    return {
        "startedDateTime": "2026-12-01T10:00:00Z",
        "request": {
            "method": method,
            "url": url,
            "headers": [{"name": k, "value": v} for k, v in (headers or {}).items()],
            "queryString": [],
            "postData": {"text": '{"password": "body-pa55word"}'},
        },
        "response": {"status": 201, "content": {"text": "Sup3rSecretBearer"}},
        **extra,
    }


def test_har_calls_keep_method_url_status_and_credential_kind_only(tmp_path: Path) -> None:
    """Query, user info, fragments, header values, cookies and bodies are dropped; only their kind is kept."""
    p = tmp_path / "s.har"
    p.write_text(
        _har(
            [
                _entry(
                    "get",
                    "https://us3r:pa55@api.example.com/v1/items?password=pa55word-in-query#frag",
                    {"Authorization": "Bearer Sup3rSecretBearer"},
                ),
                _entry("POST", "https://api.example.com/v1/items?key=k3y-value"),
                _entry("DELETE", "https://api.example.com/v1/items/7", {"Cookie": "sid=cookie-s3cret"}),
                _entry("GET", "https://api.example.com/v1/me", {"Authorization": "Basic dXNlcjpwYXNz"}),
                _entry("GET", "https://api.example.com/v1/ping"),
                _entry("GET", "https://api.github.com/app", {"Authorization": "token ghs_appTokenXYZ"}),
                _entry(
                    "GET",
                    "https://graph.example.com/me",
                    {"Authorization": "Bearer " + jwt({"sub": "u", "scp": "User.Read"})},
                ),
            ]
        )
    )
    calls, (summary,) = read_calls([p])
    assert [(c.method, c.url, c.status, c.auth, c.principal) for c in calls] == [
        ("GET", "https://api.example.com/v1/items", 201, AuthKind.BEARER, Principal.UNKNOWN),
        ("POST", "https://api.example.com/v1/items", 201, AuthKind.API_KEY, Principal.UNKNOWN),
        ("DELETE", "https://api.example.com/v1/items/7", 201, AuthKind.COOKIE, Principal.UNKNOWN),
        ("GET", "https://api.example.com/v1/me", 201, AuthKind.BASIC, Principal.UNKNOWN),
        ("GET", "https://api.example.com/v1/ping", 201, AuthKind.NONE, Principal.UNKNOWN),
        ("GET", "https://api.github.com/app", 201, AuthKind.BEARER, Principal.APP),
        ("GET", "https://graph.example.com/me", 201, AuthKind.BEARER, Principal.USER),
    ]
    assert (summary.calls, summary.skipped) == (7, 0)
    text = repr(calls)
    for secret in SECRETS:
        assert secret not in text


def test_otlp_reads_both_attribute_generations_and_skips_server_spans(tmp_path: Path) -> None:
    """Current and old HTTP attribute names; server spans are not calls; a redacted header is unknown."""

    def attr(k: str, v: object) -> dict[str, object]:
        return {"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}}

    spans = [
        {
            "kind": 3,
            "startTimeUnixNano": "1764583200000000000",
            "attributes": [
                attr("http.request.method", "GET"),
                attr("url.full", "https://api.example.com/a?token=pa55word-in-query"),
                attr("http.response.status_code", 200),
            ],
        },
        {
            "kind": "SPAN_KIND_CLIENT",
            "attributes": [
                attr("http.method", "POST"),
                attr("http.url", "https://api.example.com/b"),
                attr("http.status_code", 204),
                {
                    "key": "http.request.header.authorization",
                    "value": {"arrayValue": {"values": [{"stringValue": "Bearer Sup3rSecretBearer"}]}},
                },
            ],
        },
        {
            "kind": 3,
            "attributes": [
                attr("http.request.method", "PUT"),
                attr("server.address", "api.example.com"),
                attr("server.port", 8443),
                attr("url.path", "/c"),
                {"key": "http.request.header.authorization", "value": {"stringValue": "[REDACTED]"}},
            ],
        },
        {"kind": 2, "attributes": [attr("http.request.method", "GET"), attr("url.full", "https://me.example/x")]},
        {"kind": 3, "attributes": [attr("http.request.method", "GET")]},
    ]
    line = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]}
    p = tmp_path / "t.jsonl"
    p.write_text(json.dumps(line) + "\n" + "{not json\n")
    calls, (summary,) = read_calls([p])
    assert [(c.method, c.url, c.status, c.auth, c.time) for c in calls] == [
        ("GET", "https://api.example.com/a", 200, AuthKind.UNKNOWN, "2025-12-01T10:00:00Z"),
        ("POST", "https://api.example.com/b", 204, AuthKind.BEARER, ""),
        ("PUT", "https://api.example.com:8443/c", None, AuthKind.UNKNOWN, ""),
    ]
    assert (summary.calls, summary.skipped, summary.reasons) == (
        3,
        2,
        {"HTTP span without an absolute URL, no readable host": 1, "malformed JSON line": 1},
    )
    assert "Sup3rSecretBearer" not in repr(calls)


def test_mcp_log_yields_tool_calls_per_server_with_hints_from_tools_list(tmp_path: Path) -> None:
    """tools/call requests by name and server URL; a tools/list result seen before gives destructiveHint."""
    server = "https://mcp.example.com/mcp?apikey=k3y-value"
    lines = [
        {
            "server": server,
            "direction": "receive",
            "message": {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"tools": [{"name": "drop_table", "annotations": {"destructiveHint": True}}]},
            },
        },
        {
            "server": server,
            "headers": {"Authorization": "Bearer Sup3rSecretBearer"},
            "message": {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "drop_table", "arguments": {"password": "body-pa55word"}},
            },
        },
        {
            "server_url": "https://other.example/mcp",
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "search"},
        },
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "orphan"}},
        {"server": server, "message": {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {}}},
    ]
    p = tmp_path / "m.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    calls, (summary,) = read_calls([p])
    assert [(c.url, c.tool, c.auth, c.destructive, c.unreadable) for c in calls] == [
        ("https://mcp.example.com/mcp", "drop_table", AuthKind.BEARER, True, ""),
        ("https://other.example/mcp", "search", AuthKind.UNKNOWN, None, ""),
        # No tool name, but a server: still a call to it (read in part, never matched; issue 30).
        ("https://mcp.example.com/mcp", "", AuthKind.UNKNOWN, None, "tools/call without a tool name"),
    ]
    assert summary.reasons == {"tools/call without a readable server URL": 1, "tools/call without a tool name": 1}
    assert (summary.skipped, summary.partial) == (1, 1)
    for secret in SECRETS:
        assert secret not in repr(calls)


def test_a_gzipped_har_is_read_as_the_plain_one(tmp_path: Path) -> None:
    """gzip is recognised by its magic bytes, whatever the file is called."""
    p = tmp_path / "s.har.gz"
    p.write_bytes(gzip.compress(_har([_entry("GET", "https://api.example.com/x")]).encode()))
    calls, _ = read_calls([p])
    assert [c.url for c in calls] == ["https://api.example.com/x"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty evidence file"),
        (b"GET / HTTP/1.1\r\n", "not evidence ramscope reads"),
        (
            b'{"log": {"version": "1.2", "entries": [{"request": {"url": "https://a.example/Sup3rSecretBearer"',
            "truncated or malformed JSON after 0 entries",
        ),
        (
            b'{"log": {"version": "1.2", "entries": [{"request": {"url": Sup3rSecretBearer}}]}}',
            "malformed JSON after 0 entries",
        ),
        (b'{"log": {"version": "1.2", "creator": {}}}', "not a HAR file: no log.entries array"),
        (b"\x1f\x8b\x08\x00garbage-not-deflate", "not readable evidence: a corrupt or truncated gzip stream"),
    ],
)
def test_bad_evidence_is_one_line_naming_the_file_and_never_quoting_it(
    tmp_path: Path, content: bytes, message: str
) -> None:
    """Malformed, truncated, wrong-format or corrupt files: InputError with the file and ramscope's own words."""
    p = tmp_path / "bad.har"
    p.write_bytes(content)
    with pytest.raises(InputError) as info:
        read_calls([p])
    text = str(info.value)
    assert text.startswith(f"{p}: ")
    assert message in text
    assert "\n" not in text
    assert "Sup3rSecretBearer" not in text


def test_a_gzip_bomb_is_refused_by_its_expansion_ratio(tmp_path: Path) -> None:
    """A file that expands more than the ratio bound is a LimitError, not a memory blow-up."""
    payload = b'{"log": {"version": "1.2", "entries": [' + b" " * (8 * 1024 * 1024) + b"]}}"
    p = tmp_path / "bomb.har"
    p.write_bytes(gzip.compress(payload, compresslevel=9))
    limits = EvidenceLimits(max_ratio=50, ratio_after=1024 * 1024)
    with pytest.raises(LimitError, match="refused as a bomb"):
        read_calls([p], limits=limits)


def test_huge_entries_and_bad_entries_are_counted_and_the_rest_read(tmp_path: Path) -> None:
    """An entry whose URL exceeds the field bound, or whose method is no HTTP token, is still a call to its host
    (read in part, issue 30); one without any host is skipped; an extension method (UPLOAD-V2) is a method."""
    p = tmp_path / "s.har"
    p.write_text(
        _har(
            [
                _entry("GET", "https://api.example.com/" + "a" * 70_000),
                _entry("GET", "/relative/only"),
                _entry("G E T", "https://api.example.com/x"),
                _entry("GET", "https://api.example.com/ok"),
                _entry("UPLOAD-V2", "https://api.example.com/up"),
            ]
        )
    )
    calls, (summary,) = read_calls([p])
    assert [(c.method, c.url, c.unreadable) for c in calls] == [
        ("GET", "https://api.example.com/", "URL over 65536 bytes"),
        ("", "https://api.example.com/x", "not an HTTP method"),
        ("GET", "https://api.example.com/ok", ""),
        ("UPLOAD-V2", "https://api.example.com/up", ""),
    ]
    assert summary.reasons == {
        "URL over 65536 bytes": 1,
        "no absolute URL, no readable host": 1,
        "not an HTTP method": 1,
    }
    assert (summary.calls, summary.skipped, summary.partial) == (4, 1, 2)


def test_a_missing_file_is_one_line_naming_it(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.har: cannot read"):
        read_calls([tmp_path / "nope.har"])
