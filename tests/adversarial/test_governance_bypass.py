"""Governance as a hostile card author attacks it (issue 22): rules that judged an access's own pick
but not what its tier requests, waivers matched against the name a card gives itself, a tier's
finding waived by one access's waiver, rules files that nest or grow without bound."""

from __future__ import annotations

import copy
import fnmatch
import json
from pathlib import Path
from typing import Any

import pytest

from ramscope.derive.policy import load_policy
from ramscope.errors import InputError, PolicyError
from ramscope.governance.check import EXIT_OK, EXIT_RULES_FAILED, CardResult, check_report
from ramscope.governance.globs import GlobSet
from ramscope.governance.rules import RuleSet, load_rules, parse_rules
from tests.support.reports import HOLIDAYS, PERSONAL, TRAVEL, WEATHER, cli_globals, derive_offline

ADMIN = "https://www.googleapis.com/auth/calendar.admin"


@pytest.fixture(scope="module")
def base_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return derive_offline(TRAVEL, tmp_path_factory.mktemp("cache"))


@pytest.fixture
def report(base_report: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(base_report)


def rules(*tables: dict[str, Any], waivers: tuple[dict[str, Any], ...] = (), base: Path | None = None) -> RuleSet:
    doc = {"version": 1, "rule": list(tables), "waiver": list(waivers)}
    return parse_rules(doc, source="rules.toml", base_dir=str(base) if base else None)


def found(result: CardResult) -> list[tuple[str, str | None, str | None, bool]]:
    return [(f.rule, f.access, f.tier, f.suppressed is not None) for f in result.findings]


def widen_tier(report: dict[str, Any], scope: str, *, admin: bool | None = False) -> None:
    """The OPTIONAL END_USER tier requests ``scope``, which no access picked itself (a shared wider scope)."""
    it = report["tiers"]["OPTIONAL"]["END_USER"]
    it["scopes"] = [scope]
    it["permissions"] = [
        {
            "scope": scope,
            "namespace": "https://accounts.google.com",
            "scheme": "Oauth2",
            "type": "oauth2",
            "description": "",
            "accesses": list(it["accesses"]),
            "name": None,
            "admin_consent": admin,
        }
    ]


# ---------------------------------------------------------------- item 1: the tier's request is judged


def test_forbidden_scopes_judges_what_the_tier_requests(report: dict[str, Any]) -> None:
    """A scope the cumulative tier requests but no access picked alone is forbidden too (was exit 0)."""
    widen_tier(report, ADMIN)
    result = check_report(report, rules({"kind": "forbidden-scopes", "scopes": ["*.admin"]}))
    assert found(result) == [("forbidden-scopes", None, "OPTIONAL", False)]
    assert result.findings[0].details["identity"] == "END_USER"
    assert result.exit_code == EXIT_RULES_FAILED


def test_forbidden_credentials_the_tier_requests(report: dict[str, Any]) -> None:
    """A credential scheme only the tier requests is judged by its scheme name."""
    report["tiers"]["REQUIRED"]["AGENT"]["credentials"] = [{"namespace": "x", "scheme": "root-key", "type": "apiKey"}]
    result = check_report(report, rules({"kind": "forbidden-scopes", "scopes": ["root-*"]}))
    assert found(result) == [("forbidden-scopes", None, "REQUIRED", False)]
    assert result.findings[0].details["kind"] == "credential"


def test_universe_scopes_judges_what_the_tier_requests(report: dict[str, Any]) -> None:
    """A tier's universe scope needs a justification like an access's (glob and operation count)."""
    widen_tier(report, "https://www.googleapis.com/auth/calendar")
    by_glob = check_report(report, rules({"kind": "universe-scopes", "scopes": ["*/auth/calendar"]}))
    assert found(by_glob) == [("universe-scopes", None, "OPTIONAL", False)]
    it = report["tiers"]["OPTIONAL"]["END_USER"]
    for c in it["choices"]:
        c["scopes"], c["same_as_access"] = ["https://www.googleapis.com/auth/calendar"], False
    by_count = check_report(report, rules({"kind": "universe-scopes", "min_operations": 30}))
    assert found(by_count) == [("universe-scopes", None, "OPTIONAL", False)]
    assert by_count.findings[0].details["operations"] == 38


def test_no_admin_consent_judges_what_the_tier_requests(report: dict[str, Any]) -> None:
    """A tier's scope needing an administrator fails no-admin-consent; not knowing is on_unknown."""
    widen_tier(report, ADMIN, admin=True)
    result = check_report(report, rules({"kind": "no-admin-consent"}))
    assert found(result) == [("no-admin-consent", None, "OPTIONAL", False)]
    assert result.exit_code == EXIT_RULES_FAILED
    widen_tier(report, ADMIN, admin=None)
    unknown = check_report(report, rules({"kind": "no-admin-consent"}))
    assert [(f.severity, f.tier) for f in unknown.findings] == [("warning", "OPTIONAL")]


def test_the_tier_repeating_an_access_pick_is_judged_once(report: dict[str, Any]) -> None:
    """What the accesses picked themselves is judged on the accesses, not again on each tier."""
    result = check_report(report, rules({"kind": "forbidden-scopes", "scopes": ["*calendar.events"]}))
    assert {f.tier for f in result.findings} == {None}
    assert len(result.findings) == 2


# ---------------------------------------------------------------- item 12: tier findings are the tier's


def test_an_access_waiver_does_not_waive_the_tier(report: dict[str, Any]) -> None:
    """max-blast-radius's tier total is waived only by a tier waiver, not by its widest access's."""
    rule = {"kind": "max-blast-radius", "max": 11, "identity": "END_USER"}
    by_access = {"rule": "max-blast-radius", "access": PERSONAL, "justification": "the widest access only"}
    result = check_report(report, rules(rule, waivers=(by_access,)))
    assert found(result) == [("max-blast-radius", None, "OPTIONAL", False)]
    assert result.exit_code == EXIT_RULES_FAILED
    by_tier = {"rule": "max-blast-radius", "tier": "OPTIONAL", "justification": "SEC-9: the tier"}
    waived = check_report(report, rules(rule, waivers=(by_tier,)))
    assert found(waived) == [("max-blast-radius", None, "OPTIONAL", True)]
    assert waived.exit_code == EXIT_OK
    other_tier = {"rule": "max-blast-radius", "tier": "REQUIRED", "justification": "another tier"}
    assert found(check_report(report, rules(rule, waivers=(other_tier,))))[0][3] is False


def test_a_waiver_naming_both_a_tier_and_an_access_is_an_error() -> None:
    """It would waive nothing: said, with the key, instead of silently ignored."""
    waiver = {"rule": "forbidden-scopes", "tier": "OPTIONAL", "access": "x", "justification": "both"}
    with pytest.raises(InputError, match="a tier or an access, not both") as exc:
        rules({"kind": "forbidden-scopes", "scopes": ["*"]}, waivers=(waiver,))
    assert exc.value.pointer == "/waiver/0/tier"


def test_a_tier_waiver_does_not_waive_an_access(report: dict[str, Any]) -> None:
    """A waiver naming a tier waives that tier's findings only, not an access's."""
    waiver = {"rule": "forbidden-scopes", "tier": "*", "justification": "tiers only"}
    by_tier = {**waiver, "tier": "OPTIONAL"}
    result = check_report(report, rules({"kind": "forbidden-scopes", "scopes": ["*"]}, waivers=(by_tier,)))
    assert {(f.access is not None, f.suppressed is None) for f in result.findings} == {(True, True)}


# ---------------------------------------------------------------- item 2: waivers match the card's path


def test_a_card_naming_itself_after_a_waived_path_is_not_waived(report: dict[str, Any], tmp_path: Path) -> None:
    """A card at agents/marketing.json naming itself agents/ops-marketing.json does not inherit ops-* waivers."""
    (tmp_path / "agents").mkdir()
    report["card"]["source"] = str(tmp_path / "agents" / "marketing.json")
    report["card"]["name"] = "agents/ops-marketing.json"
    rule = {"kind": "forbidden-scopes", "scopes": ["*calendar*"]}
    waiver = {"rule": "forbidden-scopes", "card": "agents/ops-*.json", "justification": "ops agents only"}
    result = check_report(report, rules(rule, waivers=(waiver,), base=tmp_path))
    assert [f.suppressed for f in result.findings] == [None, None]
    report["card"]["source"] = str(tmp_path / "agents" / "ops-marketing.json")
    assert all(f.suppressed for f in check_report(report, rules(rule, waivers=(waiver,), base=tmp_path)).findings)


def test_waiver_paths_are_normalised_relative_to_the_rules_file(report: dict[str, Any], tmp_path: Path) -> None:
    """``..`` cannot walk a card into a waived directory: the path is normalised before matching."""
    report["card"]["source"] = str(tmp_path / "agents" / "ops-x" / ".." / ".." / "evil.json")
    rule = {"kind": "forbidden-scopes", "scopes": ["*calendar*"]}
    waiver = {"rule": "forbidden-scopes", "card": "agents/ops-*", "justification": "ops agents only"}
    assert [f.suppressed for f in check_report(report, rules(rule, waivers=(waiver,), base=tmp_path)).findings] == [
        None,
        None,
    ]


def test_load_rules_matches_waivers_relative_to_its_file(report: dict[str, Any], tmp_path: Path) -> None:
    """A rules file read from disk matches card globs relative to its own directory."""
    (tmp_path / "agents").mkdir()
    path = tmp_path / "org.rules.toml"
    path.write_text(
        '[[rule]]\nkind = "forbidden-scopes"\nscopes = ["*calendar*"]\n'
        '[[waiver]]\nrule = "forbidden-scopes"\ncard = "agents/ops-*.json"\njustification = "ok"\n'
    )
    report["card"]["source"] = str(tmp_path / "agents" / "ops-a.json")
    assert all(f.suppressed for f in check_report(report, load_rules(path)).findings)


# ---------------------------------------------------------------- item 16: nesting


@pytest.mark.parametrize("nested", ["a = " + "[" * 5000 + "]" * 5000, "a = " + "{b = " * 3000 + "1" + "}" * 3000])
def test_deeply_nested_toml_is_an_input_error(tmp_path: Path, nested: str) -> None:
    """Deeply nested TOML in --rules or --policy is an InputError (exit 2, one line), not a RecursionError."""
    path = tmp_path / "deep.toml"
    path.write_text(nested + "\n")
    with pytest.raises(InputError, match="nested too deeply"):
        load_rules(path)
    with pytest.raises(PolicyError, match="nested too deeply"):
        load_policy(path)


def test_deeply_nested_rules_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`check --rules deep.toml` and `--policy deep.toml` are exit 2 with one line on stderr."""
    from ramscope.cli import main

    path = tmp_path / "deep.toml"
    path.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    assert main(["check", "--rules", str(path), str(TRAVEL)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "nested too deeply" in err
    assert main(["--offline", "--cache-dir", str(tmp_path / "c"), "--policy", str(path), "derive", str(TRAVEL)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "nested too deeply" in err


# ---------------------------------------------------------------- item 18: 200,000 globs


def test_globs_are_compiled_once_and_only_when_their_literal_text_fits(
    report: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """200,000 globs: a value runs only the globs whose literal prefix, suffix or run it holds, each
    compiled at most once (fnmatch recompiled every glob per value: ~15 s per card)."""
    globs = [f"https://x/{i:06d}*" for i in range(100_000)] + [f"*o{i:06d}*" for i in range(100_000)]
    rule = rules({"kind": "forbidden-scopes", "scopes": [*globs, "*calendar.events"]})
    calls: list[str] = []
    translate = fnmatch.translate
    monkeypatch.setattr(fnmatch, "translate", lambda g: calls.append(g) or translate(g))
    first = check_report(report, rule)
    again = check_report(report, rule)
    assert [f.details["glob"] for f in first.findings] == ["*calendar.events"] * 2
    assert found(again) == found(first)
    assert calls == ["*calendar.events"]


@pytest.mark.parametrize(
    ("glob", "value", "matches"),
    [
        ("a*b", "axxb", True),
        ("*[ab]", "xa", True),
        ("*[ab]", "xc", False),
        ("*x]", "ax]", True),
        ("*[abc", "z[abc", True),
        ("?bc", "abc", True),
        ("*o1*", "zo1z", True),
        ("*o1*", "zo2z", False),
        ("exact", "exact", True),
        ("exact", "exactly", False),
        ("*", "", True),
    ],
)
def test_glob_set_matches_as_fnmatchcase(glob: str, value: str, matches: bool) -> None:
    """GlobSet answers exactly what fnmatchcase answers."""
    assert fnmatch.fnmatchcase(value, glob) is matches
    assert (GlobSet([glob]).first(value) == glob) is matches


def test_glob_set_names_the_first_glob_in_file_order() -> None:
    """With several matching globs, the first in the file is named (messages quote it)."""
    assert GlobSet(["*z", "a*", "ab", "*b*"]).first("ab") == "a*"


# ---------------------------------------------------------------- item 14: where the data goes


def third_party(report: dict[str, Any], access_id: str) -> dict[str, Any]:
    a = next(a for a in report["accesses"] if a["id"] == access_id)
    a["owner"] = "THIRD_PARTY"
    return a


def test_a_spec_on_an_allowed_host_sending_data_elsewhere_fails(report: dict[str, Any]) -> None:
    """The spec is on an allowed host but its servers are https://collector.evil.example: a finding."""
    third_party(report, HOLIDAYS)["target"]["servers"] = ["https://collector.evil.example/v1"]
    result = check_report(report, rules({"kind": "allowed-third-parties", "hosts": ["openholidaysapi.org"]}))
    assert found(result) == [("allowed-third-parties", HOLIDAYS, None, False)]
    assert result.findings[0].details["hosts"] == ["collector.evil.example"]


def test_every_server_of_the_api_is_judged(report: dict[str, Any]) -> None:
    """Two servers, one allowed: the other is named."""
    third_party(report, HOLIDAYS)["target"]["servers"] = ["https://openholidaysapi.org", "https://eu.evil.example"]
    result = check_report(report, rules({"kind": "allowed-third-parties", "hosts": ["openholidaysapi.org"]}))
    assert "eu.evil.example" in result.findings[0].message
    assert "openholidaysapi.org," not in result.findings[0].message


def test_an_operation_level_server_is_judged(tmp_path: Path) -> None:
    """Root servers on an allowed host, the operation's own servers elsewhere: the operation's are judged."""
    from ramscope.derive.records import _target_dict
    from ramscope.derive.resolve import Target
    from ramscope.specs import build_index
    from tests._specs import make_spec

    op = {"operationId": "op", "servers": [{"url": "https://collector.evil.example"}], "responses": {}}
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://ok.example"}],
        "paths": {"/x": {"post": op}},
    }
    index = build_index(make_spec(doc, "https://ok.example/openapi.json"))
    (entry,) = index.by_operation_id["op"]
    a = {
        "id": "a",
        "owner": "THIRD_PARTY",
        "resource": "r",
        "spec_url": "https://ok.example/openapi.json",
        "target": _target_dict(Target(index, entry, "operation_id", ())),
    }
    result = check_report(
        {"card": {}, "accesses": [a]}, rules({"kind": "allowed-third-parties", "hosts": ["ok.example"]})
    )
    assert [f.details["hosts"] for f in result.findings] == [["collector.evil.example"]]


def test_mcp_endpoint_is_judged(report: dict[str, Any]) -> None:
    """An MCP server's own endpoint is where the data goes."""
    third_party(report, WEATHER)
    result = check_report(report, rules({"kind": "allowed-third-parties", "hosts": ["openholidaysapi.org"]}))
    assert [f.details["hosts"] for f in result.findings] == [["mapstools.googleapis.com"]]


def test_a_report_without_servers_is_not_passed(report: dict[str, Any]) -> None:
    """An older report naming no API server: the host is unknown, and unknown is not allowed."""
    del third_party(report, HOLIDAYS)["target"]["servers"]
    result = check_report(report, rules({"kind": "allowed-third-parties", "hosts": ["openholidaysapi.org"]}))
    assert result.findings[0].details["hosts"] == ["(API host unknown)"]


# ---------------------------------------------------------------- item 19: a saved report is checked against its card


def saved_report(tmp_path: Path, report: dict[str, Any]) -> Path:
    path = tmp_path / "saved.report.json"
    path.write_text(json.dumps(report), "utf-8")
    return path


@pytest.mark.parametrize("command", ["check", "export", "compare"])
def test_a_saved_report_of_another_card_is_refused(
    report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """A saved report whose card's sha256 differs from the card on disk (edited, or another card): exit 2."""
    from ramscope.cli import main

    report["card"]["source"] = str(TRAVEL)
    report["card"]["sha256"] = "0" * 64
    path = saved_report(tmp_path, report)
    rules = tmp_path / "r.toml"
    rules.write_text('[[rule]]\nkind = "complete-derivation"\n')
    extra = ["--rules", str(rules)] if command == "check" else []
    assert main(["--offline", command, *extra, str(path)]) == 2
    assert "is not of the card" in capsys.readouterr().err


def test_a_saved_report_without_its_card_is_refused(
    report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A saved report naming a card that is not there (a self-chosen path for a waiver): exit 2."""
    from ramscope.cli import main

    report["card"]["source"] = "agents/ops-marketing.json"
    path = saved_report(tmp_path, report)
    assert main(["--offline", "export", str(path)]) == 2
    assert "is not readable" in capsys.readouterr().err


def test_a_saved_report_of_its_card_is_used(
    report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report of the card as it is, run with the options it was derived with: judged as before."""
    from ramscope.cli import main

    report["card"]["source"] = str(TRAVEL)
    path = saved_report(tmp_path, report)
    assert main([*cli_globals(tmp_path / "cache"), "export", "--format", "json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["allow"]
