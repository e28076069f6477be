"""`diff` compares what each access does, not only its scopes (issue 22, item 11): the same id and
scope with GET changed to DELETE, a new unconfirmed DELETE under an already-granted scope, another
tool or resource, an identity or confirmation change. A new or changed destructive operation run
without confirmation exits 4."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from ramscope.cli import main
from ramscope.outputs.diff import diff_reports, render_diff_text
from tests.support.reports import HOLIDAYS, PERSONAL, TRAVEL, WEATHER, access, derive_offline


@pytest.fixture(scope="module")
def base_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return derive_offline(TRAVEL, tmp_path_factory.mktemp("cache"))


@pytest.fixture
def pair(base_report: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    return copy.deepcopy(base_report), copy.deepcopy(base_report)


def kinds(d: dict[str, Any]) -> list[tuple[str, str]]:
    return [(r["kind"], r["item"]) for r in d["risks"]]


def test_get_changed_to_delete_is_a_risk(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """Same id, same scopes, GET became DELETE without confirmation: changed, and a risk (was 'no new permissions')."""
    old, new = pair
    access(new, HOLIDAYS)["target"]["method"] = "DELETE"
    d = diff_reports(old, new)
    (changed,) = d["accesses"]["changed"]
    assert changed["id"] == HOLIDAYS
    assert (changed["fields"]["target"]["old"]["method"], changed["fields"]["target"]["new"]["method"]) == (
        "GET",
        "DELETE",
    )
    assert changed["fields"]["target"]["new"]["effect"] == "destructive"
    assert kinds(d) == [("changed-destructive-operation", HOLIDAYS)]
    assert f"~ access {HOLIDAYS}: GET /PublicHolidays on" in render_diff_text(d)


def test_a_confirmed_change_is_reported_but_not_a_risk(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """Another path under the same method, still asking first: reported in changed, no risk."""
    old, new = pair
    access(new, PERSONAL)["target"]["path"] = "/calendar/v3/calendars/{calendarId}/events/import"
    d = diff_reports(old, new)
    assert [c["id"] for c in d["accesses"]["changed"]] == [PERSONAL]
    assert d["risks"] == []


def test_another_tool_or_resource_is_a_change(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """An MCP tool swapped for another, unannotated (may be destructive), unconfirmed: a risk."""
    old, new = pair
    access(new, WEATHER)["target"]["tool"] = "delete_places"
    d = diff_reports(old, new)
    (changed,) = d["accesses"]["changed"]
    assert changed["fields"]["target"]["new"]["tool"] == "delete_places"
    assert kinds(d) == [("changed-destructive-operation", WEATHER)]


def test_a_new_unconfirmed_delete_under_a_granted_scope_is_a_risk(
    pair: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """A new DELETE access needing no new scope: a new destructive operation, exit 4 territory."""
    old, new = pair
    extra = copy.deepcopy(access(new, HOLIDAYS))
    extra.update(id="wipe", confirmation_required=False)
    extra["target"]["method"] = "DELETE"
    new["accesses"].append(extra)
    d = diff_reports(old, new)
    assert d["new_permissions"] is False
    assert d["accesses"]["added"] == ["wipe"]
    assert d["accesses"]["added_operations"]["wipe"]["method"] == "DELETE"
    assert kinds(d) == [("new-destructive-operation", "wipe")]
    extra["confirmation_required"] = True
    assert diff_reports(old, new)["risks"] == []


def test_an_identity_change_is_a_risk(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """The same access now using the agent's own credentials instead of the user's."""
    old, new = pair
    access(new, PERSONAL)["identity"] = "AGENT"
    d = diff_reports(old, new)
    assert ("changed-identity", f"{PERSONAL}: AGENT") in kinds(d)
    assert f"~ access {PERSONAL}: identity END_USER -> AGENT" in render_diff_text(d)


def test_the_cli_exits_4_on_a_changed_destructive_operation(
    pair: tuple[dict[str, Any], dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ramscope diff old.json new.json` of saved reports: a report edited to say DELETE where its card derives GET
    is not judged as it claims (issue 30: saved reports are verified against their card first): exit 2. The
    risk itself is the library's (the tests above); the CLI says it for cards and verified reports."""
    old, new = pair
    access(new, HOLIDAYS)["target"]["method"] = "DELETE"
    paths = []
    for name, doc in (("old", old), ("new", new)):
        p = tmp_path / f"{name}.report.json"
        p.write_text(json.dumps(doc), "utf-8")
        paths.append(str(p))
    assert main(["--offline", "diff", *paths]) == 2
    assert "the report is not what its card" in capsys.readouterr().err
    assert "changed-destructive-operation" in render_diff_text(diff_reports(old, new))
