"""Per-skill permission sets: the AgentCard extension (URI, frozen dataclasses, JSON Schema, round
trip), its validation, each skill's own cumulative tiers in the report, and --skill on derive,
consent and export. Cards without the extension behave as before."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ramscope import load_card, validate
from ramscope.cli import main
from ramscope.errors import InputError
from ramscope.governance.skills import (
    SKILLS_EXTENSION_URI,
    SkillAccesses,
    SkillPermissionSets,
    find_skill_extension,
)
from ramscope.schema import load_schema
from tests.support.reports import (
    CORPORATE,
    HOLIDAYS,
    PERSONAL,
    TRAVEL,
    TRAVEL_SKILLS,
    WEATHER,
    cli_globals,
    derive_offline,
)

EVENTS = "https://www.googleapis.com/auth/calendar.events"
EXT_PTR = "/capabilities/extensions/0/params"


def _skills_card() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(TRAVEL_SKILLS.read_text("utf-8"))
    return doc


# --------------------------------------------------------------------------- the model


def test_the_example_extension_parses_and_matches_the_schema() -> None:
    card = load_card(TRAVEL_SKILLS)
    sets, diags = find_skill_extension(card)
    assert diags == []
    assert sets == SkillPermissionSets(
        (
            SkillAccesses("book-trip", (PERSONAL, CORPORATE)),
            SkillAccesses("destination-brief", (HOLIDAYS, WEATHER)),
        )
    )
    ext = _skills_card()["capabilities"]["extensions"][0]
    jsonschema.Draft202012Validator(load_schema("skills-extension")).validate(ext)
    assert ext["uri"] == SKILLS_EXTENSION_URI
    # The dataclasses write back exactly what the card says.
    assert sets.to_extension(description=ext["description"]) == ext


_ids = st.text(min_size=1, max_size=12)


@given(st.lists(st.tuples(_ids, st.lists(_ids, max_size=4)), max_size=5))
def test_round_trip(entries: list[tuple[str, list[str]]]) -> None:
    sets = SkillPermissionSets(tuple(SkillAccesses(s, tuple(a)) for s, a in entries))
    ext = sets.to_extension()
    jsonschema.Draft202012Validator(load_schema("skills-extension")).validate(ext)
    again = SkillPermissionSets.from_params(json.loads(json.dumps(ext["params"])))
    assert again == sets
    snake = {"skills": [{"skill_id": s, "resource_accesses": a} for s, a in entries]}
    assert SkillPermissionSets.from_params(snake) == sets


@pytest.mark.parametrize(
    ("params", "pointer"),
    [
        ([], "/p"),
        ({"skills": {}}, "/p/skills"),
        ({"skills": ["x"]}, "/p/skills/0"),
        ({"skills": [{"resourceAccesses": []}]}, "/p/skills/0/skill_id"),
        ({"skills": [{"skillId": "a", "resourceAccesses": "b"}]}, "/p/skills/0/resourceAccesses"),
        ({"skills": [{"skillId": "a", "resourceAccesses": [1]}]}, "/p/skills/0/resourceAccesses"),
    ],
)
def test_malformed_params_name_the_pointer(params: Any, pointer: str) -> None:
    with pytest.raises(InputError) as err:
        SkillPermissionSets.from_params(params, pointer="/p")
    assert err.value.pointer == pointer


# --------------------------------------------------------------------------- validate


def _codes(path: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for d in validate(load_card(path)):
        out.setdefault(d.code, []).append(d.path)
    return out


def test_validate_checks_the_mapping(write_card: Callable[..., Path]) -> None:
    doc = _skills_card()
    skills = doc["capabilities"]["extensions"][0]["params"]["skills"]
    skills[0]["resourceAccesses"] = [PERSONAL, "no-such-access"]  # CORPORATE now used by no skill
    skills[1]["resourceAccesses"] = []  # destination-brief uses nothing: HOLIDAYS, WEATHER unused
    skills.append({"skillId": "ghost-skill", "resourceAccesses": [WEATHER]})
    skills.append({"skillId": "book-trip", "resourceAccesses": []})
    doc["skills"].append({"id": "unmapped-skill", "name": "x", "description": "x", "tags": []})
    codes = _codes(write_card(doc))
    assert codes["skill-access-unknown"] == [f"{EXT_PTR}/skills/0/resourceAccesses/1"]
    assert codes["skill-unknown"] == [f"{EXT_PTR}/skills/2/skillId"]
    assert codes["skill-duplicate"] == [f"{EXT_PTR}/skills/3"]
    assert codes["skill-uses-no-access"] == [f"{EXT_PTR}/skills/1", f"{EXT_PTR}/skills/3"]
    assert codes["skill-unmapped"] == ["/skills/2/id"]
    assert codes["access-in-no-skill"] == [
        "/resourceAccessManifest/resource_accesses/1",
        "/resourceAccessManifest/resource_accesses/2",
    ]


def test_validate_reports_a_malformed_extension_with_its_position(
    capsys: pytest.CaptureFixture[str], write_card: Callable[..., Path]
) -> None:
    doc = _skills_card()
    doc["capabilities"]["extensions"][0]["params"] = {"skills": "all of them"}
    path = write_card(doc)
    assert main(["validate", "--format", "json", str(path)]) == 1
    doc = json.loads(capsys.readouterr().out)  # one card: its object
    diag = doc["diagnostics"][0]
    assert (diag["code"], diag["path"]) == ("skill-extension-invalid", f"{EXT_PTR}/skills")
    assert isinstance(diag["line"], int)


def test_cards_without_the_extension_are_unchanged(tmp_path: Path) -> None:
    assert not [c for c in _codes(TRAVEL) if c.startswith(("skill", "access-in"))]
    report = derive_offline(TRAVEL, tmp_path)
    assert "skills" not in report
    assert "skill" not in report


# --------------------------------------------------------------------------- derive, consent, export


@pytest.fixture(scope="module")
def skills_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return derive_offline(TRAVEL_SKILLS, tmp_path_factory.mktemp("cache"))


def test_each_skill_gets_its_own_tiers(skills_report: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(load_schema("report")).validate(skills_report)
    book = skills_report["skills"]["book-trip"]
    brief = skills_report["skills"]["destination-brief"]
    assert book["accesses"] == [PERSONAL, CORPORATE]
    assert brief["accesses"] == [HOLIDAYS, WEATHER]
    assert book["tiers"]["OPTIONAL"]["END_USER"]["scopes"] == [EVENTS]
    assert book["tiers"]["OPTIONAL"]["AGENT"]["credentials"] == []
    assert book["tiers"]["OPTIONAL"]["acknowledgments"] == []
    assert book["tiers"]["RECOMMENDED"]["END_USER"]["scopes"] == []
    assert brief["tiers"]["OPTIONAL"]["END_USER"]["scopes"] == []
    assert [c["scheme"] for c in brief["tiers"]["OPTIONAL"]["AGENT"]["credentials"]] == ["mcp-api-key"]
    assert brief["tiers"]["RECOMMENDED"]["acknowledgments"] == ["openholidaysapi-publicholidays-v1"]
    # The card as a whole still asks for the union.
    assert skills_report["tiers"]["OPTIONAL"]["END_USER"]["scopes"] == [EVENTS]
    assert skills_report["tiers"]["OPTIONAL"]["acknowledgments"] == ["openholidaysapi-publicholidays-v1"]


def test_derive_skill(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    g = cli_globals(tmp_path / "cache")
    assert main([*g, "derive", "--skill", "book-trip", str(TRAVEL_SKILLS)]) == 0
    doc = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(load_schema("report")).validate(doc)
    assert doc["skill"] == "book-trip"
    assert [a["id"] for a in doc["accesses"]] == [PERSONAL, CORPORATE]
    assert doc["tiers"]["OPTIONAL"]["acknowledgments"] == []
    assert list(doc["skills"]) == ["book-trip"]
    assert main([*g, "derive", "--skill", "destination-brief", "--format", "text", str(TRAVEL_SKILLS)]) == 0
    out = capsys.readouterr().out
    assert "[skill destination-brief]" in out
    assert "lookup-weather" in out
    # Neither the other skill's accesses nor their findings (the calendar's narrower options).
    assert "create-personal" not in out
    assert main([*g, "derive", "--skill", "destination-brief", str(TRAVEL_SKILLS)]) == 0
    brief = json.loads(capsys.readouterr().out)
    assert not [d for d in brief["diagnostics"] if "resource_accesses/0" in d["path"] or PERSONAL in d["message"]]
    assert main([*g, "derive", str(TRAVEL_SKILLS)]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert [d for d in whole["diagnostics"] if d["code"] == "narrower-option"]


def test_unknown_skill_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    g = cli_globals(tmp_path / "cache")
    assert main([*g, "derive", "--skill", "nope", str(TRAVEL_SKILLS)]) == 2
    assert "known: book-trip, destination-brief" in capsys.readouterr().err
    assert main([*g, "consent", "--skill", "book-trip", str(TRAVEL)]) == 2
    assert "carries no per-skill permission sets" in capsys.readouterr().err


def test_consent_skill_asks_only_for_that_skill(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    g = cli_globals(tmp_path / "cache")
    assert main([*g, "consent", "--skill", "book-trip", str(TRAVEL_SKILLS)]) == 0
    data = json.loads(capsys.readouterr().out)
    text = json.dumps(data)
    assert "google-calendar-events-v3" in text
    assert "openholidaysapi" not in text
    assert "mapstools" not in text
    assert main([*g, "consent", "--skill", "destination-brief", str(TRAVEL_SKILLS)]) == 0
    text = capsys.readouterr().out
    assert "calendar.events" not in text
    assert "openholidaysapi" in text


def test_export_skill(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    g = cli_globals(tmp_path / "cache")
    assert main([*g, "export", "--format", "json", "--skill", "destination-brief", str(TRAVEL_SKILLS)]) == 0
    allow = json.loads(capsys.readouterr().out)["allow"]
    assert [e["access"] for e in allow] == [HOLIDAYS, WEATHER]


def test_skill_tiers_fail_closed_on_unknown_access_ids(tmp_path: Path) -> None:
    doc = copy.deepcopy(_skills_card())
    doc["capabilities"]["extensions"][0]["params"]["skills"][0]["resourceAccesses"].append("typo")
    report = derive_offline(doc, tmp_path)
    book = report["skills"]["book-trip"]
    assert book["unknown_accesses"] == ["typo"]
    assert book["complete"] is False
