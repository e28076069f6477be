"""`export --format toolhive|agentgateway`: the declared MCP tools, and nothing else, as each gateway's own
engine decides. ToolHive's policies are validated by the Cedar engine (cedarpy) against ToolHive's entity
model as its policy reference documents it, and its authorizer's requests are decided; agentgateway's
rules are evaluated by a CEL implementation (cel-python) on allowed and denied calls."""

from __future__ import annotations

import copy
import json
from typing import Any

import cedarpy
import celpy
import pytest
import yaml

from ramscope.governance.export import export_report
from ramscope.governance.export.agentgateway import cel_string
from ramscope.governance.export.toolhive import TOOLHIVE_SCHEMA
from tests.support.exportcards import derive_all

MAPS = "https://mapstools.googleapis.com/mcp"


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return derive_all(tmp_path_factory.mktemp("gateway-cache"))


def two_servers(report: dict[str, Any]) -> dict[str, Any]:
    """The MCP card's report with its optional tool moved to a second server (a second resource)."""
    r = copy.deepcopy(report)
    a = next(a for a in r["accesses"] if a["id"] == "create-doc")
    a["spec_url"] = "https://other.example.com/mcp"
    return r


# --------------------------------------------------------------------------- ToolHive (Cedar)


def toolhive(report: dict[str, Any], **kw: Any) -> tuple[dict[str, Any], str]:
    text = export_report(report, "toolhive", **kw).text
    config = yaml.safe_load(text)
    return config, "\n".join(config["cedar"]["policies"])


def allowed(policies: str, tool: str, *, server: str | None = None, annotations: dict[str, bool] | None = None) -> bool:
    """ToolHive's request for tools/call of ``tool`` by client alice, decided by Cedar with the schema."""
    attrs: dict[str, Any] = {"name": tool, "operation": "call", "feature": "tool", **(annotations or {})}
    parents = [{"type": "MCP", "id": server}] if server else []
    entities = [
        {"uid": {"type": "Client", "id": "alice"}, "attrs": {"claim_sub": "alice"}, "parents": []},
        {"uid": {"type": "Tool", "id": tool}, "attrs": attrs, "parents": parents},
    ]
    if server:
        entities.append({"uid": {"type": "MCP", "id": server}, "attrs": {}, "parents": []})
    request = {
        "principal": {"type": "Client", "id": "alice"},
        "action": {"type": "Action", "id": "call_tool"},
        "resource": {"type": "Tool", "id": tool},
        "context": {},
    }
    result = cedarpy.is_authorized(request, policies, entities, schema=TOOLHIVE_SCHEMA)
    assert not result.diagnostics.errors, result.diagnostics.errors
    return result.decision == cedarpy.Decision.Allow


def test_toolhive_config_shape_and_policies_valid_against_its_schema(reports: dict[str, dict[str, Any]]) -> None:
    config, policies = toolhive(reports["mcp"])
    assert config["version"] == "1.0"
    assert config["type"] == "cedarv1"
    assert set(config["cedar"]) == {"policies", "entities_json"}
    assert json.loads(config["cedar"]["entities_json"]) == []
    assert len(config["cedar"]["policies"]) == 2  # one permit per declared tool
    result = cedarpy.validate_policies(policies, TOOLHIVE_SCHEMA)
    assert result.validation_passed, result.errors
    assert '@confirmation_required("true")' in config["cedar"]["policies"][1]
    assert "create_doc" in config["cedar"]["policies"][1]


def test_toolhive_allows_exactly_the_declared_tools(reports: dict[str, dict[str, Any]]) -> None:
    _, policies = toolhive(reports["mcp"])
    assert allowed(policies, "search")
    assert allowed(policies, "create_doc", annotations={"destructiveHint": True})
    for other in ("admin_purge", "conflicted", "odd", "Search", "search ", ""):
        assert not allowed(policies, other), other


def test_toolhive_required_tier_leaves_the_optional_tool_denied(reports: dict[str, dict[str, Any]]) -> None:
    _, policies = toolhive(reports["mcp"], tier="REQUIRED")
    assert allowed(policies, "search")
    assert not allowed(policies, "create_doc")


def test_toolhive_several_servers_name_each_permits_server(reports: dict[str, dict[str, Any]]) -> None:
    _config, policies = toolhive(two_servers(reports["mcp"]))
    assert cedarpy.validate_policies(policies, TOOLHIVE_SCHEMA).validation_passed
    assert allowed(policies, "search", server="docs-search")
    assert allowed(policies, "create_doc", server="docs-create_doc")
    assert not allowed(policies, "create_doc", server="docs-search")  # the tool on the other server
    assert not allowed(policies, "search")  # no server named: fail closed


def test_toolhive_readme_example_permits_the_weather_tool_and_says_the_rest(
    reports: dict[str, dict[str, Any]],
) -> None:
    text = export_report(reports["travel"], "toolhive").text
    config = yaml.safe_load(text)
    policies = "\n".join(config["cedar"]["policies"])
    assert allowed(policies, "lookup_weather")
    assert not allowed(policies, "search_places")
    assert "# not exported: access fetch-holidays-for-destination-country: not an MCP tool call" in text


def test_toolhive_hostile_tool_name_stays_one_literal(reports: dict[str, dict[str, Any]]) -> None:
    r = copy.deepcopy(reports["mcp"])
    evil = 'x"); permit(principal, action, resource);\n// '
    next(a for a in r["accesses"] if a["id"] == "search-docs")["target"]["tool"] = evil
    _, policies = toolhive(r)
    assert cedarpy.validate_policies(policies, TOOLHIVE_SCHEMA).validation_passed
    assert [line for line in policies.splitlines() if line.startswith("permit(")].__len__() == 2
    assert allowed(policies, evil)
    assert not allowed(policies, "anything")


# --------------------------------------------------------------------------- agentgateway (CEL)


def gateway_rules(report: dict[str, Any], **kw: Any) -> list[str]:
    text = export_report(report, "agentgateway", **kw).text
    doc = yaml.safe_load(text)
    assert set(doc) == {"mcpAuthorization"}
    assert set(doc["mcpAuthorization"]) == {"rules"}
    rules = doc["mcpAuthorization"]["rules"]
    assert all(isinstance(r, str) for r in rules)
    return rules


def cel_allows(rules: list[str], tool: str, target: str = "docs", sub: str = "alice") -> bool:
    """agentgateway's decision: allowed when any rule is true."""
    env = celpy.Environment()
    activation = {
        "mcp": celpy.json_to_cel({"tool": {"name": tool, "target": target}}),
        "jwt": celpy.json_to_cel({"sub": sub}),
    }
    return any(bool(env.program(env.compile(rule)).evaluate(activation)) for rule in rules)


def test_agentgateway_allows_exactly_the_declared_tools(reports: dict[str, dict[str, Any]]) -> None:
    rules = gateway_rules(reports["mcp"])
    assert rules == ['mcp.tool.name == "search"', 'mcp.tool.name == "create_doc"']
    assert cel_allows(rules, "search")
    assert cel_allows(rules, "create_doc")
    for other in ("admin_purge", "odd", "SEARCH", "search\n"):
        assert not cel_allows(rules, other), other
    assert gateway_rules(reports["mcp"], tier="REQUIRED") == ['mcp.tool.name == "search"']


def test_agentgateway_several_servers_name_the_target(reports: dict[str, dict[str, Any]]) -> None:
    rules = gateway_rules(two_servers(reports["mcp"]))
    assert cel_allows(rules, "search", target="docs-search")
    assert cel_allows(rules, "create_doc", target="docs-create_doc")
    assert not cel_allows(rules, "create_doc", target="docs-search")
    assert not cel_allows(rules, "search", target="elsewhere")


def test_agentgateway_readme_example(reports: dict[str, dict[str, Any]]) -> None:
    rules = gateway_rules(reports["travel"])
    assert rules == ['mcp.tool.name == "lookup_weather"']
    assert cel_allows(rules, "lookup_weather", target="maps")
    assert not cel_allows(rules, "compute_routes")


@pytest.mark.parametrize("name", ['a"b', "a\\b", "it's", "naïve", "tab\tnew\nline", "\u202eevil"])
def test_cel_string_is_one_literal_equal_to_the_name(name: str) -> None:
    env = celpy.Environment()
    assert env.program(env.compile(cel_string(name))).evaluate({}) == celpy.celtypes.StringType(name)
    rules = [f"mcp.tool.name == {cel_string(name)}"]
    assert cel_allows(rules, name)
    assert not cel_allows(rules, name + "x")
    text_rule = "'" + rules[0].replace("'", "''") + "'"
    assert yaml.safe_load(f"- {text_rule}") == rules  # the YAML quoting round-trips
