"""Issue 30 items 17 and 18: `ramscope mcp` bounds every message before it is parsed. A tool call whose `card`
nests 200+ levels got no JSON-RPC answer at all (the client waited for ever); a refused 20 MiB argument cost
1.4 GB, parsed whole before the 1 MiB bound was checked. Spoken to as a client would, line by line on stdio;
every wait is for the server's answer (a reader thread and a queue), never a sleep."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types
import pytest

from ramscope.service.mcp_stdio import answer_for, nesting_depth

ROOT = Path(__file__).resolve().parent.parent
CARD = ROOT / "examples" / "travel-agent.card.json"
GUARD = 120.0  # seconds only a hung server reaches


class Client:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, raw: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def ask(self, raw: bytes) -> dict[str, Any]:
        self.send(raw)
        return json.loads(self.lines.get(timeout=GUARD))  # type: ignore[no-any-return]

    def call(self, req_id: int, tool: str, arguments: Any) -> bytes:
        params = {"name": tool, "arguments": arguments}
        return json.dumps({"jsonrpc": "2.0", "id": req_id, "method": "tools/call", "params": params}).encode()


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    """One server for the module (its start costs seconds): each test leaves it serving."""
    tmp_path = tmp_path_factory.mktemp("mcp")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "ramscope", "--offline", "--cache-dir", str(tmp_path / "cache"), "mcp"]
    with (tmp_path / "stderr.log").open("wb") as err:
        proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
    c = Client(proc)
    init = {
        "protocolVersion": mcp_types.LATEST_PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    }
    hello = c.ask(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}).encode())
    assert "result" in hello, hello
    c.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    try:
        yield c
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(GUARD)


def _deep_call(req_id: int, levels: int) -> bytes:
    """A derive_card call whose card (the example's) has a member nesting ``levels`` arrays, written as
    bytes (deeper than any JSON encoder would write)."""
    card = (
        json.dumps(json.loads(CARD.read_text("utf-8"))).encode()[:-1]
        + b', "x-deep": '
        + b"[" * levels
        + b"]" * levels
        + b"}"
    )
    head = json.dumps({"jsonrpc": "2.0", "id": req_id, "method": "tools/call"}).encode()[:-1]
    return head + b', "params": {"name": "derive_card", "arguments": {"card": ' + card + b"}}}"


def _still_serves(c: Client, req_id: int) -> None:
    ok = c.ask(c.call(req_id, "validate_card", {"card": json.loads(CARD.read_text("utf-8"))}))
    assert ok["id"] == req_id
    assert ok["result"]["structuredContent"]["valid"] is True


@pytest.mark.parametrize("levels", [70, 200, 3000])
def test_a_deeply_nested_card_gets_an_answer(client: Client, levels: int) -> None:
    """Before: no answer at 200+ levels. Now a JSON-RPC error (or a tool error, within the envelope's levels)
    carrying the request's id, and the server goes on serving."""
    answer = client.ask(_deep_call(7, levels))
    assert answer["id"] == 7
    said = json.dumps(answer)
    assert "deeper than" in said
    _still_serves(client, 8)


def _vm_hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak RSS is read from /proc (Linux)")
def test_a_20_mib_argument_is_refused_before_it_is_parsed(client: Client) -> None:
    """Before: parsed whole (1.4 GB) and then refused. Now dropped as it streams: a JSON-RPC error with the
    request's id, and the server's peak RSS grows by a few MiB at most."""
    _still_serves(client, 1)  # the tool paths loaded before the baseline
    base = _vm_hwm_kib(client.proc.pid)
    big = {"card": {"description": "x" * (20 * 1024 * 1024)}}
    answer = client.ask(client.call(9, "validate_card", big))
    assert answer["id"] == 9
    assert answer["error"]["code"] == -32600
    assert "over the limit of" in answer["error"]["message"]
    grown = _vm_hwm_kib(client.proc.pid) - base
    print(f"peak RSS grew {grown / 1024:.1f} MiB for a refused 20 MiB argument")
    assert grown < 16 * 1024
    _still_serves(client, 10)


def test_a_line_that_is_not_json_gets_a_parse_error(client: Client) -> None:
    """The SDK answered nothing to a line it could not parse either."""
    answer = client.ask(b'{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {')
    assert (answer["id"], answer["error"]["code"]) == (11, -32700)
    _still_serves(client, 12)


def test_the_checks_themselves() -> None:
    assert nesting_depth(b'{"a": "[[[[[[[[[[[[[[[[["}', stop_at=2) == 1  # brackets in strings do not count
    assert nesting_depth(b"[" * 10 + b"]" * 10, stop_at=5) == 6  # counted no further than needed
    assert answer_for(b'{"id": 1}', max_depth=4, max_nodes=100) is None
    deep = answer_for(b'{"id": 3, "params": {"id": 4, "x": [[[[[[]]]]]]}}', max_depth=4, max_nodes=100)
    assert deep is not None
    assert json.loads(deep)["id"] == 3  # the request's id, not one inside its params
    hidden = answer_for(b'{"params": {"id": 4, "x": [[[[[[]]]]]]}, "id": 3}', max_depth=4, max_nodes=100)
    assert hidden is not None
    assert json.loads(hidden)["id"] is None  # after params: not read (it could be anyone's)
