"""`diff OLD NEW --format admin`: what an administrator must newly pre-approve between two versions of a card,
per target (Entra admin consent, Google's consent screen and verification, a Slack reinstall, GitHub App
permissions, MCP gateways), in words; exit 4 as `diff` does."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from ramscope.cli import main
from ramscope.outputs.diff import admin_diff, render_admin_text
from tests.support.exportcards import GITHUB, GRAPH, SLACK, derive_rest
from tests.support.reports import TRAVEL, cli_globals


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return derive_rest(
        tmp_path_factory.mktemp("admin-diff"),
        {
            "graph-1": ("/graph.json", GRAPH[:2]),
            "graph-2": ("/graph.json", GRAPH),
            "slack-1": ("/slack.json", SLACK[:1]),
            "slack-2": ("/slack.json", SLACK),
            "github-1": ("/github.json", GITHUB[:1]),
            "github-2": ("/github.json", GITHUB),
        },
    )


def test_entra_admin_consent_for_the_new_application_permission(reports: dict[str, dict[str, Any]]) -> None:
    a = admin_diff(reports["graph-1"], reports["graph-2"])
    graph = a["targets"]["microsoft-graph"]["approve"]
    by = {(e["permission"], e["identity"]): e for e in graph}
    assert set(by) == {("Mail.Send", "END_USER"), ("Mail.Read", "AGENT")}
    assert by[("Mail.Read", "AGENT")]["admin_consent"] is True
    assert by[("Mail.Read", "AGENT")]["action"] == "grant admin consent for Mail.Read (application permission)"
    assert by[("Mail.Send", "END_USER")]["admin_consent"] is False
    text = render_admin_text(a)
    assert "Microsoft Entra (the app registration's API permissions)" in text
    assert "grant admin consent for Mail.Read (application permission) [optional tier, AGENT" in text
    assert text.rstrip().endswith("approval needed")


def test_nothing_new_says_so(reports: dict[str, dict[str, Any]]) -> None:
    a = admin_diff(reports["graph-2"], reports["graph-2"])
    assert a["targets"] == {}
    assert render_admin_text(a).rstrip().endswith("nothing new to approve")
    back = admin_diff(reports["graph-2"], reports["graph-1"])
    assert back["targets"] == {}
    assert {r["permission"] for r in back["no_longer_needed"]} == {"Mail.Send", "Mail.Read"}


def test_slack_reinstall_by_token_type(reports: dict[str, dict[str, Any]]) -> None:
    a = admin_diff(reports["slack-1"], reports["slack-2"])
    actions = [e["action"] for e in a["targets"]["slack"]["approve"]]
    assert sorted(actions) == [
        "approve the optional bot scope channels:join: the app must be reinstalled (or re-approved) in each workspace",
        "approve the optional user scope channels:history: the app must be reinstalled (or re-approved) in each "
        "workspace",
    ]


def test_github_installations_accept_new_permissions(reports: dict[str, dict[str, Any]]) -> None:
    a = admin_diff(reports["github-1"], reports["github-2"])
    scopes = {e["scope"] for e in a["targets"]["github"]["approve"]}
    assert scopes == {"contents:read", "contents:write"}


def test_an_optional_scope_now_required_is_said(reports: dict[str, dict[str, Any]]) -> None:
    old = reports["graph-2"]
    new = copy.deepcopy(old)
    for t in ("REQUIRED",):
        new["tiers"][t]["END_USER"]["permissions"].append(
            next(p for p in old["tiers"]["RECOMMENDED"]["END_USER"]["permissions"] if p["name"] == "Mail.Send")
        )
    a = admin_diff(old, new)
    (e,) = a["targets"]["microsoft-graph"]["approve"]
    assert e["change"] == "now required"
    assert "(now required; was optional)" in render_admin_text(a)


def test_cli_admin_diff_google_and_gateway_exit_4(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    card = json.loads(TRAVEL.read_text("utf-8"))
    manifest = card.get("resourceAccessManifest") or next(
        e["params"]["resourceAccessManifest"] for e in card["capabilities"]["extensions"] if "params" in e
    )
    manifest["resource_accesses"] = [
        a for a in manifest["resource_accesses"] if "calendar" not in a["id"] and "weather" not in a["id"]
    ]
    old = tmp_path / "old.card.json"
    old.write_text(json.dumps(card), "utf-8")
    code = main([*cli_globals(tmp_path), "diff", str(old), str(TRAVEL), "--format", "admin"])
    out = capsys.readouterr().out
    assert code == 4
    assert "Google (the OAuth consent screen)" in out
    # Google's class from ramscope.providers.costs (calendar.events: sensitive, by the reviewed exception).
    assert "add https://www.googleapis.com/auth/calendar.events to the consent screen (sensitive" in out
    assert "MCP gateways (ToolHive, agentgateway): permit the new tools" in out
    assert "lookup_weather on https://mapstools.googleapis.com/mcp" in out
    assert "issue the agent its credential mcp-api-key (apiKey)" in out
    code = main([*cli_globals(tmp_path), "diff", str(TRAVEL), str(TRAVEL), "--format", "admin"])
    assert code == 0
    assert capsys.readouterr().out.rstrip().endswith("nothing new to approve")


def test_an_invalid_new_card_approves_nothing(reports: dict[str, dict[str, Any]]) -> None:
    bad = copy.deepcopy(reports["graph-2"])
    bad["card"]["valid"] = False
    a = admin_diff(reports["graph-1"], bad)
    assert a["targets"] == {}
    text = render_admin_text(a)
    assert "! the new card is invalid" in text
    assert text.rstrip().endswith("the new card is invalid: approve nothing derived from it")
    # An invalid old card counts as having approved nothing: all of the new one is new.
    old_bad = copy.deepcopy(reports["graph-1"])
    old_bad["card"]["valid"] = False
    names = {e["permission"] for e in admin_diff(old_bad, reports["graph-2"])["targets"]["microsoft-graph"]["approve"]}
    assert names == {"Mail.Read", "User.Read", "Mail.Send"}
