"""The MCP server's `draft_card` takes `code`: source files or directories inside a root the client granted,
read statically as `draft --code`; a directory outside the roots is refused."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
from mcp import ClientSession

from tests.test_service_mcp import _error_text, _structured, _with_server

AGENT = """\
from googleapiclient.discovery import build


def add_event(creds, event):
    service = build("calendar", "v3", credentials=creds)
    return service.events().insert(calendarId="primary", body=event).execute()
"""


def test_draft_card_reads_code_inside_a_granted_root_and_refuses_code_outside(tmp_path: Path) -> None:
    granted = tmp_path / "project"
    (granted / "agent").mkdir(parents=True)
    (granted / "agent" / "calendar_tool.py").write_text(AGENT, "utf-8")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.py").write_text(AGENT, "utf-8")

    async def work(session: ClientSession) -> list[types.CallToolResult]:
        return [
            await session.call_tool("draft_card", {"evidence": [], "code": ["agent"]}),
            await session.call_tool("draft_card", {"evidence": [], "code": [str(outside)]}),
            await session.call_tool("draft_card", {"evidence": []}),
        ]

    drafted, refused, empty = _with_server(tmp_path / "cache", work, roots=[granted])
    doc = _structured(drafted)
    ops = [op["api_operation_spec"]["operation_id"] for op in doc["card"]["operations"]]
    assert ops == ["calendar.events.insert"]
    sites = [s["site"] for s in doc["report"]["call_sites"]]
    assert sites == ["calendar_tool.py:6"]
    assert "outside the roots the client granted" in _error_text(refused)
    assert "code" in _error_text(empty)
