"""`ramscope mcp`, driven by the official `mcp` client over stdio: its tools, their honest annotations,
derive_card on the example card giving calendar.events, explanations read from the report, and cards
read by path only inside a root the client granted."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
CARD = ROOT / "examples" / "travel-agent.card.json"
CASSETTE = ROOT / "cassettes" / "travel-agent.yaml"
POLICY = ROOT / "examples" / "travel-agent.policy.toml"
EVENTS = "https://www.googleapis.com/auth/calendar.events"
PERSONAL = "create-personal-calendar-event-for-flight-reservation"

Session = Callable[[ClientSession], Awaitable[Any]]


def _with_server(cache: Path, work: Session, *, roots: list[Path] | None = None) -> Any:
    """Start `ramscope ... mcp` as a client would (offline, the example's cassette and policy) and run
    ``work`` in an initialised session; ``roots``: the client grants these directories."""
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "ramscope",
            "--offline",
            "--cassette",
            str(CASSETTE),
            "--policy",
            str(POLICY),
            "--cache-dir",
            str(cache),
            "mcp",
            "--policy-card",
            str(CARD),
        ],
        env={"PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH")) if p)},
        cwd=str(ROOT),
    )

    async def list_roots(_: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=p.resolve().as_uri(), name=p.name) for p in roots or []])

    async def main() -> Any:
        with (cache.parent / "mcp-stderr.log").open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, list_roots_callback=list_roots if roots is not None else None) as session,
            ):
                await session.initialize()
                with anyio.fail_after(120):  # a hung server fails the test instead of hanging it
                    return await work(session)

    return anyio.run(main)


def _card() -> dict[str, Any]:
    return json.loads(CARD.read_text("utf-8"))  # type: ignore[no-any-return]


def _structured(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is False, result.content
    assert isinstance(result.structured_content, dict)
    # The same document as text, for clients that read only the content.
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert json.loads(text.text) == result.structured_content
    return result.structured_content


def _error_text(result: types.CallToolResult) -> str:
    assert result.is_error is True
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    return text.text


def test_lists_its_tools_with_honest_annotations(tmp_path: Path) -> None:
    """Five tools, each taking the card as `card` but draft_card (which makes one); all read-only, and only
    validation stays off the network."""

    async def work(session: ClientSession) -> types.ListToolsResult:
        return await session.list_tools()

    listed = _with_server(tmp_path / "cache", work)
    tools = {t.name: t for t in listed.tools}
    assert sorted(tools) == ["card_scopes", "derive_card", "draft_card", "explain_access", "validate_card"]
    for name, tool in tools.items():
        if name == "draft_card":  # it makes a card, from evidence files
            assert tool.input_schema["required"] == ["evidence"]
            continue
        assert "card" in tool.input_schema["properties"], name
        assert "path" in tool.input_schema["properties"], name
        a = tool.annotations
        assert a is not None
        assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint) == (True, False, True), name
        assert a.open_world_hint is (name != "validate_card"), name


def test_derive_card_on_the_example_gives_calendar_events(tmp_path: Path) -> None:
    """derive_card answers the report; the user's optional tier asks for calendar.events."""

    async def work(session: ClientSession) -> types.CallToolResult:
        return await session.call_tool("derive_card", {"card": _card()})

    report = _structured(_with_server(tmp_path / "cache", work))
    assert report["card"]["valid"] is True
    assert report["complete"] is True
    assert report["tiers"]["OPTIONAL"]["END_USER"]["scopes"] == [EVENTS]


def test_card_scopes_validate_and_explain(tmp_path: Path) -> None:
    """card_scopes gives a tier's scopes; validate_card an invalid card's errors (not a tool error);
    explain_access the chosen scope, its alternatives, rivals, reach and source, from the report."""
    invalid = _card()
    invalid["resourceAccessManifest"]["resource_accesses"][0]["operation"] = "nope"

    async def work(session: ClientSession) -> list[types.CallToolResult]:
        return [
            await session.call_tool("card_scopes", {"card": _card(), "tier": "optional", "identity": "end_user"}),
            await session.call_tool("card_scopes", {"card": _card(), "tier": "required"}),
            await session.call_tool("validate_card", {"card": invalid}),
            await session.call_tool("explain_access", {"card": _card(), "access": PERSONAL}),
            await session.call_tool("explain_access", {"card": _card(), "access": "no-such-access"}),
        ]

    optional, required, validated, explained, unknown = _with_server(tmp_path / "cache", work)
    assert _structured(optional)["scopes"] == [EVENTS]
    assert _structured(required)["scopes"] == []
    v = _structured(validated)
    assert v["valid"] is False
    assert [d["path"] for d in v["diagnostics"] if d["severity"] == "error"] == [
        "/resourceAccessManifest/resource_accesses/0/operation"
    ]
    (one,) = _structured(explained)["accesses"]
    assert one["id"] == PERSONAL
    assert one["permission"]["scopes"] == [EVENTS]
    assert [alt["scopes"] for alt in one["alternatives"]] == [
        ["https://www.googleapis.com/auth/calendar"],
        ["https://www.googleapis.com/auth/calendar.app.created"],
        [EVENTS],
        ["https://www.googleapis.com/auth/calendar.events.owned"],
    ]
    assert one["rivals"] == []
    assert one["reach"]["chosen"][EVENTS]["level"] == "write"
    assert [x["scopes"] for x in one["reach"]["narrower"]] == [
        ["https://www.googleapis.com/auth/calendar.app.created"],
        ["https://www.googleapis.com/auth/calendar.events.owned"],
    ]
    assert one["reach"]["blast_radius"]["universe_operations"] == 12
    assert one["why"].startswith(f"{EVENTS} (least-privilege) among 4 compatible of 4 alternatives")
    assert one["source"]["requirements_source"] == "spec"
    assert one["source"]["spec"]["url"] == "https://www.googleapis.com/discovery/v1/apis/calendar/v3/rest"
    assert "unknown-access" in _error_text(unknown)


def test_a_card_path_is_read_only_inside_a_granted_root(tmp_path: Path) -> None:
    """`path` reads a card inside a root the client granted; outside one (a symbolic link out included),
    or with no roots, nothing is read and the tool says why."""
    granted = tmp_path / "project"
    granted.mkdir()
    (granted / "agent.card.json").write_bytes(CARD.read_bytes())
    outside = tmp_path / "elsewhere.card.json"
    outside.write_bytes(CARD.read_bytes())
    (granted / "link.card.json").symlink_to(outside)

    async def work(session: ClientSession) -> list[types.CallToolResult]:
        return [
            await session.call_tool("card_scopes", {"path": "agent.card.json", "identity": "end_user"}),
            await session.call_tool("card_scopes", {"path": str(granted / "agent.card.json")}),
            await session.call_tool("derive_card", {"path": str(outside)}),
            await session.call_tool("derive_card", {"path": str(granted / "link.card.json")}),
            await session.call_tool("derive_card", {"path": "../elsewhere.card.json"}),
            await session.call_tool("derive_card", {"card": _card(), "path": "agent.card.json"}),
            await session.call_tool("derive_card", {}),
        ]

    relative, absolute, out, link, dotdot, both, neither = _with_server(tmp_path / "cache", work, roots=[granted])
    assert _structured(relative)["scopes"] == [EVENTS]
    assert _structured(relative)["card"]["source"] == "agent.card.json"
    assert EVENTS in _structured(absolute)["scopes"]
    for refused in (out, link, dotdot):
        assert "outside the roots the client granted" in _error_text(refused)
    for refused in (both, neither):
        assert "one of them" in _error_text(refused)


def test_no_roots_no_path(tmp_path: Path) -> None:
    """A client that grants no roots cannot have a card read by path."""
    (tmp_path / "agent.card.json").write_bytes(CARD.read_bytes())

    async def work(session: ClientSession) -> types.CallToolResult:
        return await session.call_tool("derive_card", {"path": str(tmp_path / "agent.card.json")})

    assert "grant roots" in _error_text(_with_server(tmp_path / "cache", work))


def test_a_card_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    """`card` must be a JSON object: an array, a string or a number is a tool error before any work."""

    async def work(session: ClientSession) -> list[types.CallToolResult]:
        return [await session.call_tool("derive_card", {"card": bad}) for bad in ([1, 2], "a card", 3)]

    assert [r.is_error for r in _with_server(tmp_path / "cache", work)] == [True, True, True]


def test_draft_card_from_a_har_inside_a_granted_root(tmp_path: Path) -> None:
    """draft_card drafts a card from a HAR the client's root holds (Calendar's events.insert, its spec
    from the cassette), and reads no evidence outside the roots."""
    granted = tmp_path / "project"
    granted.mkdir()
    entry = {
        "startedDateTime": "2026-12-01T10:00:00Z",
        "request": {
            "method": "POST",
            "url": "https://www.googleapis.com/calendar/v3/calendars/primary/events",
            "headers": [{"name": "Authorization", "value": "Bearer not-a-real-token"}],
            "queryString": [],
        },
        "response": {"status": 200, "content": {}},
    }
    har = json.dumps({"log": {"version": "1.2", "creator": {"name": "t"}, "entries": [entry]}})
    (granted / "session.har").write_text(har)
    (tmp_path / "outside.har").write_text(har)

    async def work(session: ClientSession) -> list[types.CallToolResult]:
        return [
            await session.call_tool("draft_card", {"evidence": ["session.har"]}),
            await session.call_tool("draft_card", {"evidence": [str(tmp_path / "outside.har")]}),
        ]

    drafted, outside = _with_server(tmp_path / "cache", work, roots=[granted])
    doc = _structured(drafted)
    ops = [op["api_operation_spec"]["operation_id"] for op in doc["card"]["operations"]]
    assert ops == ["calendar.events.insert"]
    assert (doc["report"]["calls"], doc["report"]["matched"]) == (1, 1)
    assert "not-a-real-token" not in json.dumps(doc)
    assert "outside the roots the client granted" in _error_text(outside)
