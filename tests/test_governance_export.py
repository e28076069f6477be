"""`export`: the card's declared operations as Cedar policies (decided by the Cedar engine itself,
cedarpy) and as a JSON allowlist: every declared operation allowed with the right context, anything
else denied, and the policies valid against the emitted schema."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import cedarpy
import pytest

from ramscope.cli import main
from ramscope.governance import cedar
from tests.support.reports import HOLIDAYS, PERSONAL, TRAVEL, WEATHER, access, cli_globals, derive_offline

AGENT = "Travel Reservation Agent"
EVENTS = "/calendar/v3/calendars/primary/events"


@pytest.fixture(scope="module")
def base_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return derive_offline(TRAVEL, tmp_path_factory.mktemp("cache"))


@pytest.fixture
def report(base_report: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(base_report)


def decide(
    policies: str,
    action: str,
    resource: tuple[str, dict[str, str]],
    *,
    identity: str,
    confirmed: bool = False,
    principal: str | None = None,
) -> bool:
    """The Cedar engine's decision for one request, with the request validated against the schema
    (by default as the agent the policies name: its card's sha256)."""
    if principal is None:
        m = re.search(r'principal == Ramscope::Agent::"(sha256:[0-9a-f]{64})"', policies)
        principal = m.group(1) if m else AGENT
    rtype, attrs = resource
    entities = [
        {"uid": {"type": "Ramscope::Agent", "id": principal}, "attrs": {}, "parents": []},
        {"uid": {"type": f"Ramscope::{rtype}", "id": "request"}, "attrs": attrs, "parents": []},
    ]
    request = {
        "principal": {"type": "Ramscope::Agent", "id": principal},
        "action": {"type": "Ramscope::Action", "id": action},
        "resource": {"type": f"Ramscope::{rtype}", "id": "request"},
        "context": {"identity": identity, "confirmed": confirmed},
    }
    result = cedarpy.is_authorized(request, policies, entities, schema=cedar.cedar_schema())
    assert not result.diagnostics.errors, result.diagnostics.errors
    return result.decision == cedarpy.Decision.Allow


def http(host: str, path: str) -> tuple[str, dict[str, str]]:
    return "HttpEndpoint", {"host": host, "path": path}


def tool(server: str, name: str) -> tuple[str, dict[str, str]]:
    return "McpTool", {"server": server, "tool": name}


GOOGLE = "www.googleapis.com"
MAPS = "https://mapstools.googleapis.com/mcp"


def test_policies_validate_against_the_schema(report: dict[str, Any]) -> None:
    policies = cedar.cedar_policies(report)
    for schema in (cedar.cedar_schema(), json.dumps(cedar.cedar_schema_json())):
        result = cedarpy.validate_policies(policies, schema)
        assert result.validation_passed, result.errors
    assert policies.count("permit (") == 4
    assert '@id("access:' + PERSONAL + '")' in policies


def test_every_declared_operation_is_allowed_with_its_context(report: dict[str, Any]) -> None:
    p = cedar.cedar_policies(report)
    assert decide(p, "POST", http(GOOGLE, EVENTS), identity="END_USER", confirmed=True)
    assert decide(
        p, "POST", http(GOOGLE, "/calendar/v3/calendars/team%40example.com/events"), identity="END_USER", confirmed=True
    )
    assert decide(p, "GET", http("openholidaysapi.org", "/PublicHolidays"), identity="AGENT")
    assert decide(p, "mcp:tools/call", tool(MAPS, "lookup_weather"), identity="AGENT")


@pytest.mark.parametrize(
    ("action", "resource", "identity", "confirmed"),
    [
        # the calendar insert, unconfirmed: HITL is enforced
        ("POST", http(GOOGLE, EVENTS), "END_USER", False),
        # the calendar insert as the agent's own identity
        ("POST", http(GOOGLE, EVENTS), "AGENT", True),
        # undeclared operations on the same host and path: other methods
        ("GET", http(GOOGLE, EVENTS), "END_USER", True),
        ("DELETE", http(GOOGLE, EVENTS + "/abc"), "END_USER", True),
        # undeclared paths on the same host
        ("POST", http(GOOGLE, "/calendar/v3/users/me/calendarList"), "END_USER", True),
        ("POST", http(GOOGLE, "/calendar/v3/calendars/a/b/events"), "END_USER", True),
        ("POST", http(GOOGLE, "/calendar/v3/calendars/primary/events/x"), "END_USER", True),
        # the same path on another host
        ("POST", http("evil.example", EVENTS), "END_USER", True),
        # the holidays API: another method, another path, another identity
        ("POST", http("openholidaysapi.org", "/PublicHolidays"), "AGENT", False),
        ("GET", http("openholidaysapi.org", "/SchoolHolidays"), "AGENT", False),
        ("GET", http("openholidaysapi.org", "/PublicHolidays"), "END_USER", False),
        # other tools on the same server, the same tool elsewhere
        ("mcp:tools/call", tool(MAPS, "search_places"), "AGENT", False),
        ("mcp:tools/call", tool("https://evil.example/mcp", "lookup_weather"), "AGENT", False),
        ("mcp:tools/call", tool(MAPS, "lookup_weather"), "END_USER", True),
    ],
)
def test_everything_else_is_denied(
    report: dict[str, Any], action: str, resource: tuple[str, dict[str, str]], identity: str, confirmed: bool
) -> None:
    assert not decide(cedar.cedar_policies(report), action, resource, identity=identity, confirmed=confirmed)


def test_another_agent_gets_nothing(report: dict[str, Any]) -> None:
    p = cedar.cedar_policies(report)
    assert not decide(p, "GET", http("openholidaysapi.org", "/PublicHolidays"), identity="AGENT", principal="Other")


def test_unresolved_accesses_are_not_exported(report: dict[str, Any]) -> None:
    """Fail closed: no method or path to permit means nothing is permitted, and the export says so."""
    a = access(report, HOLIDAYS)
    a.update(status="unresolved", complete=False, target=None, reason="operation-not-found")
    p = cedar.cedar_policies(report)
    assert p.count("permit (") == 3
    assert f"// not exported (denied): access {HOLIDAYS}: the access did not resolve" in p
    assert not decide(p, "GET", http("openholidaysapi.org", "/PublicHolidays"), identity="AGENT")
    doc = cedar.allowlist(report)
    assert doc["not_exported"] == [
        {"access": HOLIDAYS, "reason": "the access did not resolve to an operation (operation-not-found)"}
    ]


def test_a2a_skills(report: dict[str, Any]) -> None:
    a = access(report, WEATHER)
    a["spec_url"] = "https://weather.example/.well-known/agent-card.json"
    a["target"] = {"kind": "a2a", "skill": "forecast", "method": None, "path": None, "tool": None}
    p = cedar.cedar_policies(report)
    assert cedarpy.validate_policies(p, cedar.cedar_schema()).validation_passed
    card = "https://weather.example/.well-known/agent-card.json"
    skill = ("A2aSkill", {"agent": card, "skill": "forecast"})
    assert decide(p, "a2a:SendMessage", skill, identity="AGENT")
    assert not decide(p, "a2a:SendMessage", ("A2aSkill", {"agent": card, "skill": "alerts"}), identity="AGENT")
    assert not decide(p, "mcp:tools/call", tool(MAPS, "lookup_weather"), identity="AGENT")


def test_strangers_strings_cannot_inject_policy_text(report: dict[str, Any]) -> None:
    """Card names, ids and paths come from strangers: quotes, newlines and wildcards stay data."""
    evil = 'x" };\npermit (principal, action, resource);\n// '
    report["card"]["name"] = evil
    report["card"]["source"] = "a\nb.json"
    a = access(report, HOLIDAYS)
    a["id"] = "id\n}; permit(principal,action,resource); //"
    a["target"]["path"] = "/Public*Holidays"
    p = cedar.cedar_policies(report)
    assert cedarpy.validate_policies(p, cedar.cedar_schema()).validation_passed
    parsed = json.loads(cedarpy.policies_to_json_str(p))["staticPolicies"]
    # Still one policy per access, each constrained to the agent and an action (nothing unconditional).
    assert len(parsed) == 4
    assert all(x["principal"]["op"] == "==" and x["action"]["op"] == "==" for x in parsed.values())
    assert {x["annotations"]["id"] for x in parsed.values()} >= {"access:" + a["id"]}
    assert decide(p, "GET", http("openholidaysapi.org", "/Public*Holidays"), identity="AGENT")
    # The literal star is not a wildcard.
    assert not decide(p, "GET", http("openholidaysapi.org", "/PublicXHolidays"), identity="AGENT")
    # The principal is the card's digest, not the name it chose.
    assert not decide(p, "GET", http("openholidaysapi.org", "/Public*Holidays"), identity="AGENT", principal=evil)


def test_json_allowlist(report: dict[str, Any]) -> None:
    doc = cedar.allowlist(report)
    assert doc["default"] == "deny"
    by_access = {e["access"]: e for e in doc["allow"]}
    e = by_access[PERSONAL]
    assert (e["kind"], e["host"], e["method"], e["path"], e["identity"], e["confirmation_required"]) == (
        "http",
        GOOGLE,
        "POST",
        "/calendar/v3/calendars/{calendarId}/events",
        "END_USER",
        True,
    )
    rx = re.compile(e["path_regex"])
    assert rx.match(EVENTS)
    assert not rx.match("/calendar/v3/calendars/a/b/events")
    assert by_access[WEATHER] == {
        "access": WEATHER,
        "identity": "AGENT",
        "confirmation_required": False,
        "kind": "mcp",
        "server": MAPS,
        "tool": "lookup_weather",
    }


def test_reserved_expansion_is_spelled_out_by_its_pattern() -> None:
    """Discovery's {+name} spans the segments its pattern names, each one segment; plain ones one."""
    target = {
        "kind": "google-discovery",
        "path": "/v1/{+name}/items/{id}",
        "hints": {"reserved_patterns": {"name": "^projects/[^/]+$"}},
    }
    t = cedar.path_template(target)
    assert isinstance(t, cedar.PathTemplate)
    assert t.text == "/v1/projects/{name.0}/items/{id}"
    assert cedar._like_conditions(t)[0] == 'resource.path like "/v1/projects/*/items/*"'
    assert re.fullmatch(cedar._regex(t), "/v1/projects/p/items/7")
    assert not re.fullmatch(cedar._regex(t), "/v1/projects/p/q/items/7")


def test_cli_export(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    g = cli_globals(tmp_path / "cache")
    schema = tmp_path / "ramscope.cedarschema"
    assert main([*g, "export", "--format", "cedar", "--schema", str(schema), str(TRAVEL)]) == 0
    policies = capsys.readouterr().out
    assert cedarpy.validate_policies(policies, schema.read_text("utf-8")).validation_passed
    assert main([*g, "export", "--format", "json", str(TRAVEL)]) == 0
    assert json.loads(capsys.readouterr().out)["allow"]
    assert main(["export", "--format", "cedar-schema", str(TRAVEL)]) == 0
    assert capsys.readouterr().out == cedar.cedar_schema()
