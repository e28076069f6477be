"""Issue 30, item 10: the bounds the spec readers have hold for evidence.

A 58 KB gzip OTLP line of `{},` × 20,000,000 built 20 million dicts (1.8 GB peak RSS) before the reader
noticed it was no trace; an MCP log line likewise; and a HAR entry nested 40,000 deep (an 80 KB file)
cost 3.8 GB through ijson's ever longer prefixes (1,000,000 deep: killed). Now a JSON Lines line (or a
whole pretty-printed document) is counted before it is built (`EvidenceLimits.max_nodes`, as for specs)
and a HAR's events past the depth a call is made of are passed over by a counter. Gzip bombs were
already bounded by decompressed size (`max_ratio`, `max_bytes`). Peak RSS is measured in a child
process (`ru_maxrss`), each case's growth over the peak before it.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ramscope.errors import LimitError
from ramscope.evidence import read_calls

_CHILD = r"""
import json, resource, sys
from ramscope.errors import InputError
from ramscope.evidence import read_calls
out = []
for path in sys.argv[1:]:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        calls, (summary,) = read_calls([path])
        got = {"calls": len(calls), "reasons": summary.reasons}
    except InputError as exc:
        got = {"error": str(exc)}
    got["grew_mib"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    out.append(got)
print(json.dumps(out))
"""

N = 3_000_000
OK_OTLP = b'{"resourceSpans":[]}\n'


def _gz(path: Path, body: bytes) -> Path:
    path.write_bytes(gzip.compress(body, 6))
    assert path.stat().st_size < 100 * 1024  # a small download
    return path


def test_evidence_bombs_are_refused_before_they_are_built(tmp_path: Path) -> None:
    cases = [
        # (file, expected: a reason counted, or an error)
        (_gz(tmp_path / "otlp.jsonl.gz", OK_OTLP + b'{"resourceSpans":[' + b"{}," * N + b"{}]}\n"), "values"),
        (
            _gz(
                tmp_path / "mcp.jsonl.gz", b'{"jsonrpc":"2.0","id":1}\n{"jsonrpc":"2.0","x":[' + b"[]," * N + b"[]]}\n"
            ),
            "values",
        ),
        (_gz(tmp_path / "whole.json.gz", b'{\n"resourceSpans":[' + b"{}," * N + b"{}]}\n"), "error"),
        (
            _gz(
                tmp_path / "deep.har.gz",
                b'{"log":{"version":"1.2","entries":[{"request":{"method":"GET","url":"https://a.example/","x":'
                + b"[" * 200_000
                + b"]" * 200_000
                + b"}}]}}",
            ),
            "call",
        ),
    ]
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, *(str(p) for p, _ in cases)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    results = json.loads(run.stdout)
    for (path, expect), got in zip(cases, results, strict=True):
        if expect == "values":
            assert got["reasons"] == {"line builds more than 4,000,000 values": 1}, (path.name, got)
        elif expect == "error":
            assert "builds more than 4,000,000 values and keys" in got["error"], got
        else:
            assert got["calls"] == 1, got
        # The 9 MB line itself is read (as every line up to 64 MiB is); nothing is built from it.
        assert got["grew_mib"] < 64, (path.name, got)  # were ~300 MiB here (1,800 at 20M), HAR: killed


def test_the_first_line_over_the_bound_is_one_error_naming_the_file(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_bytes(b'{"resourceSpans":[' + b"{}," * 2_100_000 + b"{}]}\n")
    with pytest.raises(LimitError, match=r"t\.jsonl: the document builds more than 4,000,000"):
        read_calls([p])


def test_har_prefixes_are_ijsons_where_a_call_is_read() -> None:
    """The counter-based prefixes are ijson.parse's own, to the depth kept."""
    import io

    import ijson

    from ramscope.evidence.har import _events

    doc = {
        "log": {
            "entries": [
                {"request": {"method": "GET", "url": "u", "headers": [{"name": "a", "value": "b"}], "x": [[1, {}]]}},
                {"a": {}},
            ],
            "v": [],
        },
        "z": 1,
    }
    raw = json.dumps(doc).encode()
    assert list(_events(io.BytesIO(raw))) == list(ijson.parse(io.BytesIO(raw), use_float=True))


def test_counting_values_outside_strings_is_linear() -> None:
    """The node count strips strings before counting again (`_parse.check_json_nodes`, specs, cards and
    evidence): an unterminated string of escaped quotes was re-scanned from each of them (40,000 of them,
    80 KB past the commas: 25-40 CPU seconds), and each escape held a backtracking entry (10,000,000
    escapes: 1.2 GB). Both are now one possessive pass."""
    import time

    from ramscope._parse import check_json_nodes

    start = time.process_time()
    with pytest.raises(LimitError):
        check_json_nodes(b"," * 4_000_001 + b'["' + b'\\"' * 40_000, 4_000_000, "x.json")
    check_json_nodes(b'["' + b"\\\\" * 1_000_000 + b'",' * 3_000_000, 4_000_000, "y.json")
    assert time.process_time() - start < 5  # CPU seconds (were 44 on main at 4cba8a4)


def test_mcp_tool_hints_are_bounded_across_a_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tools/list results accumulate over a log: at most MAX_HINTS hints are held (here 3), names of at most
    MAX_HINTED_NAME characters; a call past them gets MCP's default (unknown, so destructive when drafted)."""
    from ramscope.evidence import mcplog

    monkeypatch.setattr(mcplog, "MAX_HINTS", 3)
    server = "https://mcp.example.com/mcp"
    tools = [{"name": f"t{i}", "annotations": {"destructiveHint": False}} for i in range(5)]
    tools.append({"name": "x" * 2000, "annotations": {"destructiveHint": False}})
    lines = [
        {"server": server, "message": {"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}}},
        *(
            {"server": server, "message": {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": t}}}
            for t in ("t0", "t2", "t3", "x" * 2000)
        ),
    ]
    p = tmp_path / "m.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    calls, _ = read_calls([p])
    assert [c.destructive for c in calls] == [False, False, None, None]
