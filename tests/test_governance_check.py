"""`check`: an organisation's rules over permission reports, each rule kind on a real report of the
example agent (mutated copies stage each case), with findings placed on the card's lines."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from ramscope import load_card
from ramscope.errors import InputError
from ramscope.governance.check import (
    EXIT_INCOMPLETE,
    EXIT_OK,
    EXIT_RULES_FAILED,
    CardResult,
    check_report,
)
from ramscope.governance.facts import Effect, access_effect
from ramscope.governance.locate import Locator
from ramscope.governance.rules import RuleSet, parse_rules
from tests.support.reports import CORPORATE, HOLIDAYS, PERSONAL, TRAVEL, WEATHER, access, derive_offline

CALENDAR_EVENTS = "https://www.googleapis.com/auth/calendar.events"


@pytest.fixture(scope="module")
def base_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return derive_offline(TRAVEL, tmp_path_factory.mktemp("cache"))


@pytest.fixture
def report(base_report: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(base_report)


@pytest.fixture(scope="module")
def locator() -> Locator:
    return Locator.for_card(load_card(TRAVEL))


def rules(*tables: dict[str, Any], waivers: tuple[dict[str, Any], ...] = ()) -> RuleSet:
    return parse_rules({"version": 1, "rule": list(tables), "waiver": list(waivers)}, source="rules.toml")


def run(report: dict[str, Any], rs: RuleSet, locator: Locator | None = None) -> CardResult:
    return check_report(report, rs, locator)


def ids(result: CardResult) -> list[tuple[str, str | None]]:
    return [(f.rule, f.access) for f in result.findings if not f.suppressed]


def line_of(path: Path, line: int) -> str:
    return path.read_text("utf-8").splitlines()[line - 1]


# --------------------------------------------------------------------------- the rules file


@pytest.mark.parametrize(
    ("doc", "pointer", "fragment"),
    [
        ({"rule": [{"kind": "no-such-kind"}]}, "/rule/0/kind", "unknown rule kind"),
        ({"rule": [{"kind": "forbidden-scopes"}]}, "/rule/0/scopes", "needs 'scopes'"),
        ({"rule": [{"kind": "forbidden-scopes", "scopes": "x"}]}, "/rule/0/scopes", "must be a list"),
        ({"rule": [{"kind": "forbidden-scopes", "scopes": [1]}]}, "/rule/0/scopes", "list of strings"),
        ({"rule": [{"kind": "max-blast-radius", "max": True}]}, "/rule/0/max", "not a boolean"),
        ({"rule": [{"kind": "max-blast-radius", "max": 1, "tier": "SOME"}]}, "/rule/0/tier", "expected one of"),
        ({"rule": [{"kind": "complete-derivation", "severity": "fatal"}]}, "/rule/0/severity", "severity"),
        ({"rule": [{"kind": "complete-derivation", "max": 3}]}, "/rule/0/max", "has no parameter"),
        ({"rule": [{"kind": "universe-scopes"}]}, "/rule/0", "'scopes' (globs) or 'min_operations'"),
        ({"rule": [{"kind": "complete-derivation"}, {"kind": "complete-derivation"}]}, "/rule/1/id", "used twice"),
        ({"rule": []}, "/rule", "at least one"),
        ({"rules": []}, "/rules", "unknown key"),
        ({"version": 2, "rule": [{"kind": "complete-derivation"}]}, "/version", "not supported"),
        (
            {"rule": [{"kind": "complete-derivation"}], "waiver": [{"rule": "complete-derivation"}]},
            "/waiver/0/justification",
            "needs a justification",
        ),
        (
            {"rule": [{"kind": "complete-derivation"}], "waiver": [{"rule": "other", "justification": "x"}]},
            "/waiver/0/rule",
            "does not define",
        ),
    ],
)
def test_a_bad_rules_file_is_an_error_naming_the_key(doc: dict[str, Any], pointer: str, fragment: str) -> None:
    """Every mistake in a rules file names the file, the key and what was expected; none is ignored."""
    with pytest.raises(InputError) as err:
        parse_rules(doc, source="org.rules.toml")
    assert err.value.pointer == pointer
    assert fragment in str(err.value)
    assert "org.rules.toml" in str(err.value)


def test_defaults_and_aliases() -> None:
    rs = rules({"kind": "confirm-writes", "severity": "info", "identities": ["end_user"]})
    r = rs.rules[0]
    assert (r.id, r.severity, r["identities"], r["unknown_as_write"]) == ("confirm-writes", "note", ["END_USER"], True)


# --------------------------------------------------------------------------- rule kinds


def test_forbidden_scopes_flags_each_access_on_its_line(report: dict[str, Any], locator: Locator) -> None:
    result = run(report, rules({"kind": "forbidden-scopes", "scopes": ["*/auth/calendar.events"]}), locator)
    assert ids(result) == [("forbidden-scopes", PERSONAL), ("forbidden-scopes", CORPORATE)]
    assert result.exit_code == EXIT_RULES_FAILED
    f = result.findings[0]
    assert f.position.pointer == "/resourceAccessManifest/resource_accesses/0"
    assert f.position.line is not None
    # The access object starts on that line; its id follows on the next.
    assert f.position.column is not None
    assert PERSONAL in line_of(TRAVEL, f.position.line) + line_of(TRAVEL, f.position.line + 1)


def test_forbidden_scopes_per_provider(report: dict[str, Any]) -> None:
    """A provider glob is matched against the scope's canonical authorization server, which the report
    names (``scope_servers``); a report without it falls back to the hosts the spec came from."""
    rule = {"kind": "forbidden-scopes", "scopes": ["*calendar*"], "providers": ["*.example.com"]}
    assert ids(run(report, rules(rule))) == []
    rule["providers"] = ["https://accounts.google.com"]
    assert access(report, PERSONAL)["scope_servers"] == {CALENDAR_EVENTS: "https://accounts.google.com"}
    assert len(ids(run(report, rules(rule)))) == 2
    # The named authorization server wins over the spec's host ...
    rule["providers"] = ["www.googleapis.com"]
    assert ids(run(report, rules(rule))) == []
    # ... which is what an older report, without scope_servers, is judged by.
    for aid in (PERSONAL, CORPORATE):
        del access(report, aid)["scope_servers"]
    assert len(ids(run(report, rules(rule)))) == 2


def test_forbidden_credentials_by_scheme_name(report: dict[str, Any]) -> None:
    """Permissions that are not OAuth scopes (an API key scheme) are matched by scheme name too."""
    result = run(report, rules({"kind": "forbidden-scopes", "scopes": ["mcp-api-key"]}))
    assert ids(result) == [("forbidden-scopes", WEATHER)]


def test_max_blast_radius_per_tier_and_identity(report: dict[str, Any]) -> None:
    rule = {"kind": "max-blast-radius", "max": 11, "tier": "OPTIONAL", "identity": "END_USER"}
    result = run(report, rules(rule))
    # The tier's total is the tier's: it names the widest access but is attributed to none (issue 22).
    assert ids(result) == [("max-blast-radius", None)]
    assert (result.findings[0].tier, result.findings[0].details["widest"]) == ("OPTIONAL", PERSONAL)
    assert result.findings[0].details["blast_radius"] == 12
    assert ids(run(report, rules({**rule, "max": 12}))) == []
    # RECOMMENDED holds no END_USER access: nothing granted.
    assert ids(run(report, rules({**rule, "tier": "RECOMMENDED", "max": 0}))) == []
    assert ids(run(report, rules({**rule, "identity": "AGENT", "max": 0}))) == []


def test_max_blast_radius_per_access_prefers_the_universe(report: dict[str, Any]) -> None:
    rule = {"kind": "max-blast-radius", "max": 1000, "max_per_access": 100}
    assert ids(run(report, rules(rule))) == []
    access(report, PERSONAL)["blast_radius"]["universe_operations"] = 13218
    result = run(report, rules(rule))
    assert ids(result) == [("max-blast-radius", PERSONAL)]
    assert result.findings[0].details["measure"] == "universe"


def test_universe_scopes_need_a_justification(report: dict[str, Any]) -> None:
    cloud = "https://www.googleapis.com/auth/cloud-platform"
    a = access(report, PERSONAL)
    a["scopes"] = [cloud]
    a["blast_radius"]["universe_operations"] = 13218
    rule = {"kind": "universe-scopes", "scopes": ["*/auth/cloud-platform"]}
    result = run(report, rules(rule))
    assert ids(result) == [("universe-scopes", PERSONAL)]
    waiver = {"rule": "universe-scopes", "access": PERSONAL, "scope": cloud, "justification": "SEC-1: ops agent"}
    waived = run(report, rules(rule, waivers=(waiver,)))
    assert ids(waived) == []
    assert waived.findings[0].suppressed == "SEC-1: ops agent"
    assert waived.exit_code == EXIT_OK
    # By size instead of by name: calendar.events' 12 operations are not a universe at 1000.
    by_size = {"kind": "universe-scopes", "min_operations": 1000}
    assert ids(run(report, rules(by_size))) == [("universe-scopes", PERSONAL)]
    # When the organisation accepts the card's own justification of some length.
    lenient = {**rule, "card_justification_min_chars": 20}
    assert ids(run(report, rules(lenient))) == []
    a["justification"] = "ops"
    assert ids(run(report, rules(lenient))) == [("universe-scopes", PERSONAL)]


def test_confirm_writes_passes_the_example(report: dict[str, Any]) -> None:
    """The calendar inserts (END_USER POSTs) ask first; the weather tool is the agent's own."""
    assert ids(run(report, rules({"kind": "confirm-writes"}))) == []


def test_confirm_writes_http_method(report: dict[str, Any], locator: Locator) -> None:
    access(report, PERSONAL)["confirmation_required"] = False
    result = run(report, rules({"kind": "confirm-writes"}), locator)
    assert ids(result) == [("confirm-writes", PERSONAL)]
    f = result.findings[0]
    assert f.details == {"effect": "write", "evidence": "HTTP POST"}
    # Placed on the field the card author must change.
    assert f.position.pointer == "/resourceAccessManifest/resource_accesses/0/confirmation_required"
    assert f.position.line is not None
    assert "confirmation_required" in line_of(TRAVEL, f.position.line)


@pytest.mark.parametrize(
    ("annotations", "effect"),
    [
        ({"readOnlyHint": True, "destructiveHint": True}, Effect.READ),
        ({"readOnlyHint": False, "destructiveHint": True}, Effect.DESTRUCTIVE),
        ({"readOnlyHint": False, "destructiveHint": False}, Effect.WRITE),
        (None, Effect.UNKNOWN),
    ],
)
def test_confirm_writes_mcp_annotations(report: dict[str, Any], annotations: Any, effect: Effect) -> None:
    """MCP tools: readOnlyHint, else destructiveHint (default true); unknown annotations fail closed."""
    a = access(report, WEATHER)
    a["identity"] = "END_USER"
    a["target"]["hints"] = {"verified": True, "annotations": annotations} if annotations else {"verified": False}
    assert access_effect(a)[0] is effect
    result = run(report, rules({"kind": "confirm-writes"}))
    assert ids(result) == ([] if effect is Effect.READ else [("confirm-writes", WEATHER)])
    only_destructive = rules({"kind": "confirm-writes", "effects": ["destructive"], "unknown_as_write": False})
    assert ids(run(report, only_destructive)) == ([("confirm-writes", WEATHER)] if effect is Effect.DESTRUCTIVE else [])


def test_confirm_writes_catalog_write_permission_and_delete(report: dict[str, Any]) -> None:
    """A GET granted a catalog write permission (GitHub's contents:write) writes; DELETE destroys."""
    a = access(report, HOLIDAYS)
    a["identity"] = "END_USER"
    assert ids(run(report, rules({"kind": "confirm-writes"}))) == []
    a["scopes"] = ["contents:write"]
    a["requirements_source"] = "catalog:github@2026-11"
    assert access_effect(a) == (Effect.WRITE, "catalog write permission contents:write")
    assert ids(run(report, rules({"kind": "confirm-writes"}))) == [("confirm-writes", HOLIDAYS)]
    a["scopes"] = []
    a["target"]["method"] = "DELETE"
    assert access_effect(a)[0] is Effect.DESTRUCTIVE
    # Only END_USER accesses by default; AGENT ones when the rules say so.
    a["identity"] = "AGENT"
    assert ids(run(report, rules({"kind": "confirm-writes"}))) == []
    assert ids(run(report, rules({"kind": "confirm-writes", "identities": ["AGENT"]}))) == [
        ("confirm-writes", HOLIDAYS),
        ("confirm-writes", WEATHER),
    ]


def test_allowed_third_parties(report: dict[str, Any], locator: Locator) -> None:
    assert ids(run(report, rules({"kind": "allowed-third-parties", "hosts": ["openholidaysapi.org"]}))) == []
    result = run(report, rules({"kind": "allowed-third-parties", "hosts": ["*.example.org"]}), locator)
    assert ids(result) == [("allowed-third-parties", HOLIDAYS)]
    f = result.findings[0]
    assert f.details["hosts"] == ["openholidaysapi.org"]
    # Placed on the third-party resource itself.
    assert f.position.pointer == "/resourceAccessManifest/resources/1"


def test_no_admin_consent(report: dict[str, Any]) -> None:
    rule = {"kind": "no-admin-consent"}
    # Google's calendar.events needs no administrator: the report says so.
    assert [access(report, aid)["admin_consent"] for aid in (PERSONAL, CORPORATE)] == [[], []]
    assert run(report, rules(rule)).findings == ()
    # A report that does not say (an older one): an unknown is a warning by default, not a pass.
    older = copy.deepcopy(report)
    for a in older["accesses"]:
        del a["admin_consent"]
    result = run(older, rules(rule))
    assert [(f.access, f.severity) for f in result.findings] == [(PERSONAL, "warning"), (CORPORATE, "warning")]
    assert result.exit_code == EXIT_OK
    assert run(older, rules({**rule, "on_unknown": "ignore"})).findings == ()
    access(report, PERSONAL)["admin_consent"] = [CALENDAR_EVENTS]
    result = run(report, rules(rule))
    assert ids(result) == [("no-admin-consent", PERSONAL)]
    assert result.exit_code == EXIT_RULES_FAILED


def test_complete_derivation_and_the_exit_code_without_it(report: dict[str, Any]) -> None:
    a = access(report, HOLIDAYS)
    a.update(complete=False, reason="security-undeclared", reason_message="the spec declares no security")
    report["complete"] = False
    result = run(report, rules({"kind": "complete-derivation"}))
    assert ids(result) == [("complete-derivation", HOLIDAYS)]
    assert "security-undeclared" in result.findings[0].message
    assert result.exit_code == EXIT_RULES_FAILED
    # A warning-severity completeness rule is the organisation's decision: it passes.
    assert run(report, rules({"kind": "complete-derivation", "severity": "warning"})).exit_code == EXIT_OK
    # Rules that do not judge completeness passed on what is known only: exit 3, as derive says.
    assert run(report, rules({"kind": "confirm-writes"})).exit_code == EXIT_INCOMPLETE


def _delegate(report: dict[str, Any], depth: int, *, truncated_at: int | None = None, cycle: bool = False) -> None:
    """Make the holidays access delegate to a chain of agents ``depth`` deep."""
    footprint: dict[str, Any] | None = None
    for d in range(depth, 0, -1):
        url = f"https://agent{d}.example/.well-known/agent-card.json"
        inner = {"accesses": [{"id": f"call-{d + 1}", "footprint": footprint}]} if footprint else {"accesses": []}
        footprint = {"card_url": url, "depth": d, "complete": True, "report": inner}
    if truncated_at is not None:
        footprint = {"card_url": "https://deep.example/", "depth": truncated_at, "truncated": True}
    if cycle:
        footprint = {"card_url": "https://a.example/", "cycle": ["https://a.example/", "https://a.example/"]}
    access(report, HOLIDAYS)["footprint"] = footprint


def test_max_a2a_depth(report: dict[str, Any]) -> None:
    rule = {"kind": "max-a2a-depth", "max": 2}
    _delegate(report, 2)
    assert ids(run(report, rules(rule))) == []
    _delegate(report, 3)
    result = run(report, rules(rule))
    assert ids(result) == [("max-a2a-depth", HOLIDAYS)]
    assert result.findings[0].details["depth"] == 3
    _delegate(report, 0, truncated_at=2)
    assert "was not derived" in run(report, rules(rule)).findings[0].message
    _delegate(report, 0, cycle=True)
    assert "cycle" in run(report, rules(rule)).findings[0].message


def test_waivers_match_by_card_and_access(report: dict[str, Any]) -> None:
    rule = {"id": "no-calendar", "kind": "forbidden-scopes", "scopes": ["*calendar*"]}
    other_card = {"rule": "no-calendar", "card": "other/*.json", "justification": "not this card"}
    assert len(ids(run(report, rules(rule, waivers=(other_card,))))) == 2
    # The card glob matches the card's path (relative to the rules file's directory), never its name.
    by_name = {"rule": "no-calendar", "card": "Travel Reservation Agent", "justification": "its name"}
    assert len(ids(run(report, rules(rule, waivers=(by_name,))))) == 2
    report["card"]["source"] = str(TRAVEL)
    by_path = {"rule": "no-calendar", "card": "examples/*.json", "access": "*personal*", "justification": "ok"}
    doc = {"rule": [rule], "waiver": [by_path]}
    result = run(report, parse_rules(doc, source="rules.toml", base_dir=str(TRAVEL.parent.parent)))
    assert ids(result) == [("no-calendar", CORPORATE)]
    assert result.exit_code == EXIT_RULES_FAILED


def test_warnings_do_not_fail(report: dict[str, Any]) -> None:
    result = run(report, rules({"kind": "forbidden-scopes", "severity": "warning", "scopes": ["*"]}))
    assert result.findings
    assert result.exit_code == EXIT_OK
