"""Costs as provider data: each class read from the provider's page by scripts/build_costs.py, and
cost_of answering per permission, unclassified where no page classes it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest

from ramscope.providers import snapshot_versions
from ramscope.providers.costs import TRIGGERS, cost_of, cost_table_version, field_cost

ROOT = Path(__file__).resolve().parent.parent
AUTH = "https://www.googleapis.com/auth/"
VENDOR = ROOT / "vendor" / "costs"


@pytest.fixture(scope="module")
def build() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_costs", ROOT / "scripts" / "build_costs.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["build_costs"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_gmail_readonly_is_restricted_and_needs_the_security_assessment() -> None:
    """Google's Gmail page and its restricted list class gmail.readonly restricted."""
    c = cost_of("https://oauth2.googleapis.com/token", AUTH + "gmail.readonly")
    assert c is not None
    assert (c.provider, c.cls) == ("google", "restricted")
    assert c.triggers == ("google-verification", "google-security-assessment")
    assert c.source == "https://developers.google.com/workspace/gmail/api/auth/scopes"
    assert "store restricted scope data on servers" in c.condition


def test_one_server_whatever_url_spelling() -> None:
    for server in ("google", "https://accounts.google.com", "https://accounts.google.com/o/oauth2/auth"):
        c = cost_of(server, AUTH + "drive.file")
        assert c is not None
        assert c.cls == "non-sensitive"
        assert c.triggers == ()


def test_calendar_events_is_sensitive_by_the_reviewed_exception() -> None:
    c = cost_of("google", AUTH + "calendar.events")
    assert c is not None
    assert (c.cls, c.triggers, c.basis) == ("sensitive", ("google-verification",), "exception")
    assert "sensitive-scope-verification" in c.source


def test_what_no_page_classes_is_unclassified_not_free() -> None:
    assert cost_of("google", AUTH + "cloud-platform") is None
    assert cost_of("google", AUTH + "calendar.freebusy") is None
    assert cost_of("https://example.com", "read") is None


def test_graph_application_permission_needs_admin_consent_delegated_does_not() -> None:
    app = cost_of("https://login.microsoftonline.com", "https://graph.microsoft.com/Mail.Read",
                  scheme="microsoft-graph-application")  # fmt: skip
    user = cost_of("microsoft-graph", "https://graph.microsoft.com/Mail.Read", scheme="microsoft-graph-delegated-work")
    assert app is not None
    assert app.triggers == ("admin-consent",)
    assert app.cls == "admin-consent"
    assert user is not None
    assert user.triggers == ()
    assert user.cls == "user-consent"
    assert app.basis.startswith("catalog:microsoft-graph@")


def test_slack_user_token_history_is_marketplace_ineligible_a_bot_token_is_not() -> None:
    c = cost_of("slack", "channels:history", token="user")
    assert c is not None
    assert c.triggers == ("marketplace-ineligible",)
    assert c.source == "https://api.slack.com/slack-marketplace/guidelines"
    assert cost_of("slack", "channels:history", token="bot") is None
    unknown = cost_of("https://slack.com/oauth/v2/authorize", "im:history")
    assert unknown is not None
    assert unknown.condition == "on a user token"
    admin = cost_of("slack", "admin.users:write", token="user")
    assert admin is not None
    assert admin.cls == "marketplace-ineligible"


def test_shopify_field_reading_customer_data_has_its_level() -> None:
    """The shipped Admin schema's requiredAccess says Level 2 for shopifyqlQuery."""
    c = field_cost("shopify", "QueryRoot.shopifyqlQuery")
    assert c is not None
    assert (c.cls, c.triggers) == ("protected-customer-data-level-2", ("review-required",))
    text = "`read_customers` access scope. Also: Level 1 access to Customer data."
    assert (lvl := field_cost("shopify", "QueryRoot.x", text)) is not None
    assert lvl.cls.endswith("level-1")
    assert field_cost("shopify", "QueryRoot.products", "`read_products` access scope.") is None


def test_every_trigger_is_named() -> None:
    doc = orjson.loads((ROOT / "src/ramscope/providers/data/costs.json").read_bytes())
    for prov in doc["providers"].values():
        for e in [*prov["permissions"].values(), *prov.get("patterns", []), *prov.get("fields", {}).values()]:
            assert set(e["triggers"]) <= set(TRIGGERS)


def test_compiled_file_is_what_the_snapshots_give(build: ModuleType) -> None:
    assert build.build() == (ROOT / "src/ramscope/providers/data/costs.json").read_bytes()


def test_every_scope_a_snapshot_classes_has_that_class_compiled(build: ModuleType) -> None:
    """No scope a Google page classes is lost or changed on the way into the compiled data."""
    read = build.google_page_classes()
    assert len(read) >= 35
    for scope, found in read.items():
        c = cost_of("google", scope)
        assert c is not None, scope
        assert {cls for cls, _ in found} == {c.cls}, scope


def test_a_contradiction_between_pages_stops_the_build(build: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:  # fmt: skip
    import shutil

    shutil.copytree(VENDOR, tmp_path / "costs")
    page = tmp_path / "costs" / "google" / "docs.md"
    page.write_text(page.read_text().replace("| Restricted |", "| Sensitive |", 1))
    monkeypatch.setattr(build, "VENDOR", tmp_path / "costs")
    with pytest.raises(build.BuildError, match="drive"):
        build.build()


def test_parsers_read_both_markdown_layouts(build: ModuleType) -> None:
    usage = "| Scope | Usage |\n| --- | --- |\n| `https://www.googleapis.com/auth/a.b` | Sensitive |"
    tables = "### Restricted scopes\n\n| Scope code | Description |\n| --- | --- |\n| `https://mail.google.com/` | x |"
    assert list(build.parse_markdown(usage)) == [(AUTH + "a.b", "sensitive")]
    assert list(build.parse_markdown(tables)) == [("https://mail.google.com/", "restricted")]


def test_reports_and_reuse_keys_name_the_cost_snapshot() -> None:
    assert snapshot_versions()["costs"] == cost_table_version()
    assert cost_table_version().startswith("2026-12-02+")


# --------------------------------------------------------------------------- cost after reach


def _alt(*scopes: str) -> Any:
    from ramscope.derive.privilege import Alternative, Atom

    return Alternative(frozenset(Atom("https://accounts.google.com", AUTH + s) for s in scopes), ())


def test_among_rivals_reach_cannot_order_the_cheaper_wins_and_the_pick_becomes_a_rival() -> None:
    """drive.readonly (restricted) picked by |G|, spreadsheets.readonly (sensitive) an incomparable rival."""
    from ramscope.derive.costing import cost_after_reach
    from ramscope.derive.privilege import Choice

    restricted, sensitive = _alt("drive.readonly"), _alt("spreadsheets.readonly")
    choice, note = cost_after_reach(Choice(restricted, 0b0011, ((sensitive, 0b1100),)), None, "END_USER")
    assert choice.alternative is sensitive
    assert [r for r, _ in choice.rivals] == [restricted]
    assert note is not None
    assert note["over"] == [[AUTH + "drive.readonly"]]
    assert "google-verification against google-security-assessment, google-verification" in note["why"]


def test_a_cost_never_overrides_reach_nor_an_unknown_cost() -> None:
    from ramscope.derive.costing import cost_after_reach
    from ramscope.derive.privilege import Choice
    from ramscope.derive.reach import Ranked
    from ramscope.providers.reach import Level, Reach

    restricted, sensitive = _alt("gmail.readonly"), _alt("gmail.send")
    # A rival of another level (a write against a read) is no competitor, however cheap.
    classes = {
        AUTH + "gmail.readonly": Reach(AUTH + "gmail.readonly", Level.READ),
        AUTH + "gmail.send": Reach(AUTH + "gmail.send", Level.WRITE),
    }
    ranked = Ranked((restricted, sensitive), classes=classes)
    choice, note = cost_after_reach(Choice(restricted, 1, ((sensitive, 2),)), ranked, "END_USER")
    assert (choice.alternative, note) == (restricted, None)
    # An unclassified rival never wins on cost; an unclassified pick is never displaced.
    unknown = _alt("cloud-platform")
    assert cost_after_reach(Choice(restricted, 1, ((unknown, 2),)), None, "END_USER")[1] is None
    assert cost_after_reach(Choice(unknown, 1, ((sensitive, 2),)), None, "END_USER")[1] is None


def test_hubspot_sensitive_and_highly_sensitive_scopes_need_review() -> None:
    c = cost_of("https://api.hubapi.com/oauth/v1/token", "crm.objects.contacts.highly_sensitive.read")
    assert c is not None
    assert (c.provider, c.cls) == ("hubspot", "highly-sensitive")
    assert c.triggers == ("review-required", "admin-consent")
    s = cost_of("https://app.hubspot.com/oauth/authorize", "tickets.sensitive")
    assert s is not None
    assert s.cls == "sensitive"
    # HubSpot's page classes only its sensitive scopes: the others are unclassified, not free.
    assert cost_of("hubspot", "crm.objects.contacts.read") is None


def test_an_unclassified_google_scope_says_which_api_lacks_its_page() -> None:
    from ramscope.providers.costs import unclassified_reason

    why = unclassified_reason("google", AUTH + "chat.messages.readonly")
    assert "of the chat API are classed" in why
    assert unclassified_reason(None, "x") == "ramscope has no cost data for this provider"


def test_google_scope_class_is_the_exports_interface() -> None:
    from ramscope.providers.costs import google_scope_class

    assert google_scope_class(AUTH + "gmail.readonly") == "restricted"
    assert google_scope_class(AUTH + "calendar.events") == "sensitive"
    assert google_scope_class(AUTH + "drive.file") == "non-sensitive"
    assert google_scope_class(AUTH + "cloud-platform") is None


def test_a_graph_permission_of_a_self_declared_scheme_is_read_by_identity() -> None:
    """A Graph spec declaring its own scheme: an agent's Mail.Read is the application permission."""
    from ramscope.derive.costing import scope_cost
    from ramscope.derive.privilege import Atom

    atom = Atom("https://login.microsoftonline.com", "https://graph.microsoft.com/Mail.Read", scheme="own")
    assert scope_cost(atom, "AGENT")["class"] == "admin-consent"
    assert scope_cost(atom, "END_USER")["class"] == "user-consent"


def test_every_provider_with_cost_data_has_a_sources_entry_and_every_snapshot_is_named() -> None:
    sources = (VENDOR / "SOURCES.md").read_text("utf-8")
    rows = [line for line in sources.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    doc = orjson.loads((ROOT / "src/ramscope/providers/data/costs.json").read_bytes())
    names = {"google": "Google", "slack": "Slack", "shopify": "Shopify", "hubspot": "HubSpot"}
    for provider in [*doc["providers"], "microsoft-graph"]:
        label = names.get(provider, "Microsoft Graph")
        assert any(row.startswith(f"| {label} |") for row in rows), provider
    for prov in doc["providers"].values():
        for page in prov["pages"]:
            assert (ROOT / page["file"]).is_file(), page["file"]
            assert page["file"].removeprefix("vendor/costs/") in sources, page["file"]
