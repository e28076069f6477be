"""Catalog facts (admin consent, short name) belong to a grant, not to a scope string: a card using Graph's
Mail.Read both delegated (END_USER) and as an application permission (AGENT) must not have its delegated
Mail.Read marked as needing an administrator in the tiers, the consent screen or `check`."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from ramscope import Settings, derive, load_card
from ramscope.governance.check import check_report
from ramscope.governance.rules import parse_rules
from ramscope.outputs.consent import consent_data
from ramscope.providers import catalog
from tests.support.exportcards import FIXTURES, GRAPH, rest_card
from tests.support.httpserver import LocalHTTPServer

MAIL_READ = "https://graph.microsoft.com/Mail.Read"


@pytest.fixture(scope="module")
def derived(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with LocalHTTPServer() as srv:
        srv.route("/graph.json", body=(FIXTURES / "export" / "graph.json").read_bytes())
        cache = Path(tmp_path_factory.mktemp("graph-cache"))
        settings = Settings(cache_dir=cache, allow_private_network=True, reuse=False)
        card = rest_card(srv, "Graph Agent", "/graph.json", copy.deepcopy(GRAPH))
        return derive(load_card(card, name="graph.card.json"), settings=settings)


def _perms(report: dict[str, Any], tier: str, ident: str) -> dict[str, dict[str, Any]]:
    return {p["scope"]: p for p in report["tiers"][tier][ident]["permissions"]}


def test_the_delegated_mail_read_needs_no_administrator_its_application_twin_does(derived: Any) -> None:
    report = derived.to_dict()
    delegated = _perms(report, "REQUIRED", "END_USER")[MAIL_READ]
    assert delegated["scheme"] == "microsoft-graph-delegated-work"
    assert (delegated["name"], delegated["admin_consent"]) == ("Mail.Read", False)
    assert _perms(report, "OPTIONAL", "END_USER")[MAIL_READ]["admin_consent"] is False
    application = _perms(report, "OPTIONAL", "AGENT")[MAIL_READ]
    assert application["scheme"] == "microsoft-graph-application"
    assert (application["name"], application["admin_consent"]) == ("Mail.Read", True)


def test_every_tier_permission_carries_its_own_schemes_catalog_facts(derived: Any) -> None:
    """Field by field against the shipped Graph catalog: the flag and name of the tier's scheme's permission."""
    cat = catalog("microsoft-graph")
    assert cat is not None
    report = derived.to_dict()
    seen = 0
    for tier in report["tiers"].values():
        for ident in ("END_USER", "AGENT"):
            for p in tier[ident]["permissions"]:
                perm = cat.permission(p["scheme"], p["scope"])
                assert perm is not None, p
                assert (p["name"], p["admin_consent"]) == (perm.short, perm.admin_consent), p
                seen += 1
    assert seen >= 6


def test_the_consent_screen_shows_the_two_mail_reads_apart(derived: Any) -> None:
    data = consent_data(derived)
    mail = [p for r in data["resources"] for p in r["permissions"] if p["scope"] == MAIL_READ]
    got = sorted((p["identities"], p["admin_consent"], p["namespace"]) for p in mail)
    assert got == [
        (["AGENT"], True, "https://login.microsoftonline.com#app-roles"),
        (["END_USER"], False, "https://login.microsoftonline.com"),
    ]


def test_check_no_admin_consent_names_only_the_application_permission(derived: Any) -> None:
    rules = parse_rules({"version": 1, "rule": [{"kind": "no-admin-consent"}]}, source="rules.toml")
    result = check_report(derived.to_dict(), rules)
    assert [(f.access, f.tier, f.details.get("scope")) for f in result.findings] == [
        ("scan-shared-mailbox", None, MAIL_READ)
    ]
