"""Issue 30 item 2 (and 14's odd saved reports): `check`, `diff`, `export` and `compare` judge a saved report only
once it is shown to be what its card derives now. A report with its scopes removed, its card path and sha256
kept, passed `check` (exit 0 where the card gives 5) and `diff`; an odd one (`credentials: 5` in an access) was
a traceback. Each is now refused, exit 2, with the first field that differs."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from ramscope.outputs.diff import report_difference
from tests.support.reports import TRAVEL, cli_globals, derive_offline

RULES = (
    'version = 1\n[[rule]]\nkind = "forbidden-scopes"\nscopes = ["https://www.googleapis.com/auth/calendar.events"]\n'
)


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    report = derive_offline(TRAVEL, tmp_path_factory.mktemp("cache"))
    report["card"]["source"] = str(TRAVEL)
    return report


def _forge(report: dict[str, Any]) -> dict[str, Any]:
    """What a forger does: every scope removed, the card's path and sha256 kept."""
    forged = copy.deepcopy(report)
    for tier in forged["tiers"].values():
        for ident in ("END_USER", "AGENT"):
            tier[ident]["scopes"], tier[ident]["grants"] = [], []
    for a in forged["accesses"]:
        a["scopes"], a["requirements"] = [], [[]]
    return forged


def _save(tmp_path: Path, report: dict[str, Any], name: str = "saved.report.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(report), "utf-8")
    return path


def _run(tmp_path: Path, *args: str) -> int:
    from ramscope.cli import main

    return main([*cli_globals(tmp_path / "cache"), *args])


def test_check_judges_an_honest_saved_report_as_its_card(
    honest: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "r.toml"
    rules.write_text(RULES)
    assert _run(tmp_path, "check", "--rules", str(rules), str(TRAVEL)) == 5
    assert _run(tmp_path, "check", "--rules", str(rules), str(_save(tmp_path, honest))) == 5
    capsys.readouterr()


def test_check_refuses_a_forged_saved_report(
    honest: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: exit 0 (the forged report asks for nothing). Now: exit 2, naming the first field that differs."""
    rules = tmp_path / "r.toml"
    rules.write_text(RULES)
    assert _run(tmp_path, "check", "--rules", str(rules), str(_save(tmp_path, _forge(honest)))) == 2
    err = capsys.readouterr().err
    assert "the report is not what its card" in err
    assert "(they differ at /accesses/0/" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("side", ["old", "new"])
def test_diff_refuses_a_forged_saved_report(
    honest: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], side: str
) -> None:
    """Before: a forged NEW gave 0 where the card gives 4 against a card without the calendar access, and a
    forged OLD hid what the new card adds. Now: exit 2, either side."""
    forged = str(_save(tmp_path, _forge(honest)))
    args = [forged, str(TRAVEL)] if side == "old" else [str(TRAVEL), forged]
    assert _run(tmp_path, "diff", *args) == 2
    assert "the report is not what its card" in capsys.readouterr().err


def test_diff_of_an_honest_saved_report_is_that_of_its_card(
    honest: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(tmp_path, "diff", str(_save(tmp_path, honest)), str(TRAVEL)) == 0
    capsys.readouterr()


@pytest.mark.parametrize(
    ("where", "odd", "command"),
    [
        ("/accesses/0/credentials", 5, "check"),  # the traceback
        ("/accesses/0/credentials", 5, "diff"),
        ("/accesses/0/credentials", 5, "export"),
        ("/accesses/0/credentials", 5, "compare"),
        ("/accesses/0/blast_radius", 5, "check"),
        ("/specs", 5, "check"),
        ("/complete", 1, "diff"),
        ("/accesses/0/complete", "yes", "export"),
    ],
)
def test_an_odd_saved_report_is_a_clear_error(
    honest: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, odd: Any, command: str
) -> None:
    """Item 14: `credentials: 5` in an access was a traceback (exit 1) in check; every odd value is now exit 2,
    one line, never a traceback."""
    report = copy.deepcopy(honest)
    parts = where.strip("/").split("/")
    node: Any = report
    for part in parts[:-1]:
        node = node[int(part)] if part.isdigit() else node[part]
    node[parts[-1]] = odd
    path = str(_save(tmp_path, report))
    rules = tmp_path / "r.toml"
    rules.write_text(RULES)
    args = {"check": ["--rules", str(rules), path], "diff": [path, str(TRAVEL)], "export": [path], "compare": [path]}
    assert _run(tmp_path, command, *args[command]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.count("\n") == 1


def test_a_report_derived_with_another_policy_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The policy is part of what a report claims: judged without it, the report is not what the card derives."""
    from ramscope.cli import main

    report = derive_offline(TRAVEL, tmp_path / "c", policy=False)
    report["card"]["source"] = str(TRAVEL)
    path = str(_save(tmp_path, report))
    assert _run(tmp_path, "export", "--format", "json", path) == 2  # run with the example policy
    assert "the report is not what its card" in capsys.readouterr().err
    without = cli_globals(tmp_path / "cache")[:-2]  # the same options but --policy
    assert "--policy" not in without
    assert main([*without, "export", "--format", "json", path]) == 3  # as derived: undetermined
    capsys.readouterr()


def test_report_difference_is_exact_but_for_the_volatile_fields(honest: dict[str, Any]) -> None:
    fresh = copy.deepcopy(honest)
    fresh["generator"] = "ramscope 0.0"
    fresh["diagnostics"] = []
    fresh["card"]["source"] = "elsewhere/card.json"
    for spec in fresh["specs"]:
        spec["fetched_at"], spec["origin"], spec["provenance"] = "2000-01-01T00:00:00Z", "network", None
    assert report_difference(honest, fresh) is None
    fresh["complete"] = 1 if honest["complete"] else 0  # an int is not a bool
    assert report_difference(honest, fresh) == "/complete"
    fresh = copy.deepcopy(honest)
    fresh["accesses"][0]["scopes"] = [*fresh["accesses"][0]["scopes"], "extra"]
    assert report_difference(honest, fresh) == "/accesses/0/scopes"
    fresh = copy.deepcopy(honest)
    fresh["specs"][0]["sha256"] = "0" * 64
    assert report_difference(honest, fresh) == "/specs/0/sha256"
