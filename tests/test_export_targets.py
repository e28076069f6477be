"""`export --format entra-app|google-oauth|slack-manifest|github-app|allowlist|oauth-client`: our own cards
(Microsoft Graph, GitHub, Slack, Google, an MCP server) derived offline and exported to each target's own
shape, checked field by field as the targets document them (Entra's ids against Microsoft's data)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from ramscope.cli import main
from ramscope.cli.governance import TARGET_FORMATS as CLI_FORMATS
from ramscope.errors import InputError
from ramscope.governance import export as export_pkg
from ramscope.governance.export import NotExpressible, export_report, read_report
from ramscope.governance.export.google import scope_class
from ramscope.providers import catalog
from ramscope.providers.github import CLASSIC
from ramscope.providers.graph_ids import GRAPH_APP_ID, compile_ids, graph_ids
from tests.support.exportcards import derive_all
from tests.support.reports import TRAVEL, cli_globals

ROOT = Path(__file__).resolve().parents[1]
GUID = re.compile(r"\A[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
G = "https://www.googleapis.com/auth/"


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return derive_all(tmp_path_factory.mktemp("export-cache"))


def doc(reports: dict[str, dict[str, Any]], name: str, fmt: str, **kw: Any) -> Any:
    return json.loads(export_report(reports[name], fmt, **kw).text)


def test_the_cli_offers_exactly_the_exporters_formats() -> None:
    assert CLI_FORMATS == export_pkg.TARGET_FORMATS


def test_every_card_is_derived_complete(reports: dict[str, dict[str, Any]]) -> None:
    for name, r in reports.items():
        assert r["card"]["valid"], name
        assert r["complete"], name


# --------------------------------------------------------------------------- Entra


def test_shipped_graph_ids_are_microsofts() -> None:
    ids = graph_ids()
    assert ids.get("Mail.Read").scope == "570282fd-fa5c-430d-a7fd-fc8dc98a9dca"  # type: ignore[union-attr]
    assert ids.get("Mail.Send").scope == "e383f46e-2787-4529-855e-0e479a3ffac0"  # type: ignore[union-attr]
    assert ids.get("User.Read").scope == "e1fe6dd8-ba31-4d61-89e7-88639da4683d"  # type: ignore[union-attr]
    assert ids.get("User.Read").role is None  # type: ignore[union-attr]  # delegated only
    assert ids.source["commit"] == "6cbd6bbd665a877560fdefbad74f3bdb5b57af88"
    assert ids.source["license"] == "MIT"
    assert all(GUID.match(v) for p in ids.ids.values() for v in (p.scope, p.role) if v)


def test_ids_cover_the_shipped_graph_catalog_almost_whole() -> None:
    """The catalog's permissions without an id in Microsoft's data are few (not exported, said)."""
    cat = catalog("microsoft-graph")
    assert cat is not None
    names = {p.short for p in cat.permissions.values()}
    missing = names - set(graph_ids().ids)
    assert len(missing) < 0.06 * len(names), sorted(missing)[:20]


def test_compile_ids_keeps_only_enabled_public_deployments_with_an_id() -> None:
    info = {
        "permissionDeployments": {
            "A.Read": [
                {"id": "11111111-1111-1111-1111-111111111111", "scheme": "DelegatedWork", "environment": "public",
                 "isHidden": False, "isEnabled": True, "resourceAppId": ""},
                {"id": "22222222-2222-2222-2222-222222222222", "scheme": "Application", "environment": "PPE;public",
                 "isHidden": True, "isEnabled": True, "resourceAppId": "9c31bd49-9f18-4580-84a0-e6e6dbd13640"},
            ],
            "B.Disabled": [
                {"id": "a1b2c3d4-1111-2222-3333-444455557777", "scheme": "Application", "environment": "public",
                 "isHidden": True, "isEnabled": False, "resourceAppId": ""}
            ],
            "C.NoId": [{"id": "", "scheme": "DelegatedWork", "environment": "public", "isEnabled": True}],
            "D.PPE": [{"id": "33333333-3333-3333-3333-333333333333", "scheme": "DelegatedWork", "environment": "PPE",
                       "isEnabled": True}],
        }
    }  # fmt: skip
    out = compile_ids(info, {"commit": "abcdef0123", "date": "2026-08-07"})
    assert out["ids"] == {
        "A.Read": ["11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222", True]
    }
    assert out["version"] == "2026-08-07+abcdef01"
    with pytest.raises(ValueError, match="permissionDeployments"):
        compile_ids({"permissions": {}}, {})


def test_the_shipped_ids_are_what_the_script_builds_from_the_recorded_source() -> None:
    """The snapshot names its source file's sha256; rebuilt from a file with that digest it is byte-identical
    (checked where the upstream file is at hand: the script's input is not vendored whole)."""
    shipped = ROOT / "src" / "ramscope" / "providers" / "data" / "microsoft-graph.ids.json.gz"
    data = orjson.loads(gzip.decompress(shipped.read_bytes()))
    assert data["source"]["sha256"] == "745a49a00a895ed27d935f5f278eb4501fce717746723f6c496c9b5f4f19b480"
    assert data["source"]["path"] == "permissions/new/provisioningInfo.json"
    assert gzip.decompress(shipped.read_bytes()) == orjson.dumps(data, option=orjson.OPT_SORT_KEYS)


def test_entra_required_resource_access(reports: dict[str, dict[str, Any]]) -> None:
    out = doc(reports, "graph", "entra-app")
    (graph,) = out["manifest"]["requiredResourceAccess"]
    assert graph["resourceAppId"] == GRAPH_APP_ID == "00000003-0000-0000-c000-000000000000"
    assert set(graph) == {"resourceAppId", "resourceAccess"}
    got = {(a["id"], a["type"]) for a in graph["resourceAccess"]}
    assert got == {
        ("570282fd-fa5c-430d-a7fd-fc8dc98a9dca", "Scope"),  # Mail.Read, delegated
        ("e1fe6dd8-ba31-4d61-89e7-88639da4683d", "Scope"),  # User.Read
        ("e383f46e-2787-4529-855e-0e479a3ffac0", "Scope"),  # Mail.Send
        ("810c84a8-4a9e-49e6-bf7d-12d183f40d01", "Role"),  # Mail.Read, application (the shared mailbox scan)
    }
    assert all(set(a) == {"id", "type"} for a in graph["resourceAccess"])
    # Application permissions always need an administrator; these delegated ones do not.
    assert [(c["permission"], c["type"]) for c in out["admin_consent"]] == [("Mail.Read", "Role")]
    assert out["tiers"]["required"] == ["Mail.Read (Scope)", "User.Read (Scope)"]
    assert out["tiers"]["optional"] == ["Mail.Read (Role)", "Mail.Send (Scope)"]
    assert out["data"]["graph_ids"] == graph_ids().version
    assert out["not_exported"] == []


def test_entra_required_tier_and_one_identity(reports: dict[str, dict[str, Any]]) -> None:
    out = doc(reports, "graph", "entra-app", tier="REQUIRED")
    ids = {a["id"] for a in out["manifest"]["requiredResourceAccess"][0]["resourceAccess"]}
    assert ids == {"570282fd-fa5c-430d-a7fd-fc8dc98a9dca", "e1fe6dd8-ba31-4d61-89e7-88639da4683d"}
    agent = doc(reports, "graph", "entra-app", identity="AGENT")
    assert agent["manifest"]["requiredResourceAccess"][0]["resourceAccess"] == [
        {"id": "810c84a8-4a9e-49e6-bf7d-12d183f40d01", "type": "Role"}
    ]


def test_entra_permission_without_an_id_is_said_not_dropped(reports: dict[str, dict[str, Any]]) -> None:
    r = json.loads(json.dumps(reports["graph"]))
    for t in r["tiers"].values():
        for p in t["END_USER"]["permissions"]:
            if p["name"] == "User.Read":
                p["name"] = "Nothing.Such"
    out = doc({"g": r}, "g", "entra-app")
    assert {a["id"] for a in out["manifest"]["requiredResourceAccess"][0]["resourceAccess"]} == {
        "570282fd-fa5c-430d-a7fd-fc8dc98a9dca",
        "e383f46e-2787-4529-855e-0e479a3ffac0",
        "810c84a8-4a9e-49e6-bf7d-12d183f40d01",
    }
    (left,) = out["not_exported"]
    assert left["permission"] == "Nothing.Such"
    assert "no Scope id" in left["reason"]


# --------------------------------------------------------------------------- Google


def test_google_consent_screen_and_verification_drafts(reports: dict[str, dict[str, Any]]) -> None:
    out = doc(reports, "travel", "google-oauth")
    assert out["consent_screen"] == {"scopes": [G + "calendar.events"]}
    (scope,) = out["scopes"]
    # Google's class from ramscope.providers.costs (calendar.events: sensitive, by the reviewed exception).
    assert scope["class"] == scope_class(G + "calendar.events") == "sensitive"
    assert scope["tier"] == "OPTIONAL"
    assert scope["required"] is False
    (draft,) = out["verification"]
    assert {u["access"] for u in draft["uses"]} == {
        "create-personal-calendar-event-for-flight-reservation",
        "create-corporate-calendar-event-for-flight-reservation",
    }
    # Why each narrower scope would not do: the derivation's own narrower options and their conditions.
    narrower = {(n["scope"], n["condition"]) for n in draft["narrower"]}
    assert (G + "calendar.app.created", "only secondary calendars this app created, and their events") in narrower
    assert (G + "calendar.events.owned", "only calendars the user owns (not calendars shared with them)") in narrower
    assert "To create flight travel event on user's personal calendar." in draft["draft"]
    assert "`calendar.events.owned` reaches only calendars the user owns" in draft["draft"]
    # The Maps API key is no consent-screen scope: said, not dropped.
    assert [(n["permission"], n["kind"]) for n in out["not_exported"]] == [("mcp-api-key", "credential")]


def test_google_classes_are_read_through_one_function(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    costs = types.ModuleType("ramscope.providers.costs")
    costs.google_scope_class = lambda s: "sensitive" if s.endswith("calendar.events") else None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ramscope.providers.costs", costs)
    assert scope_class(G + "calendar.events") == "sensitive"
    assert scope_class(G + "calendar.readonly") == "unclassified"


# --------------------------------------------------------------------------- Slack

#: oauth_config.scopes keys Slack documents (slack-cli's manifest types carry the same four).
SLACK_SCOPE_KEYS = {"bot", "user", "bot_optional", "user_optional"}
SLACK_SCOPE = re.compile(r"\A[a-z_]+(:[a-z_.]+)+\Z")


def check_slack_manifest(m: dict[str, Any]) -> None:
    """Field by field, as Slack's app manifest reference lists them."""
    assert set(m) <= {"_metadata", "display_information", "features", "oauth_config", "settings", "functions"}
    assert m["_metadata"] == {"major_version": 1, "minor_version": 1}
    name = m["display_information"]["name"]
    assert isinstance(name, str)
    assert 0 < len(name) <= 35
    scopes = m["oauth_config"]["scopes"]
    assert set(scopes) <= SLACK_SCOPE_KEYS
    for values in scopes.values():
        assert values
        assert values == sorted(set(values))
        assert all(SLACK_SCOPE.match(v) for v in values)
    for kind in ("bot", "user"):
        assert not set(scopes.get(kind, [])) & set(scopes.get(f"{kind}_optional", []))
    if scopes.get("bot") or scopes.get("bot_optional"):
        bot = m["features"]["bot_user"]
        assert isinstance(bot["display_name"], str)
        assert 0 < len(bot["display_name"]) <= 80
        assert isinstance(bot["always_online"], bool)


def test_slack_manifest_bot_and_user_scopes_by_token_type_and_tier(reports: dict[str, dict[str, Any]]) -> None:
    out = doc(reports, "slack", "slack-manifest")
    check_slack_manifest(out["manifest"])
    assert out["manifest"]["oauth_config"]["scopes"] == {
        "bot": ["chat:write"],  # AGENT, REQUIRED: a bot token
        "bot_optional": ["channels:join"],  # AGENT, OPTIONAL
        "user_optional": ["channels:history"],  # END_USER, RECOMMENDED: a user token
    }
    required = doc(reports, "slack", "slack-manifest", tier="REQUIRED")
    check_slack_manifest(required["manifest"])
    assert required["manifest"]["oauth_config"]["scopes"] == {"bot": ["chat:write"]}
    user = doc(reports, "slack", "slack-manifest", identity="END_USER")
    assert "features" not in user["manifest"]
    check_slack_manifest(user["manifest"])


# --------------------------------------------------------------------------- GitHub

GITHUB_MANIFEST_KEYS = {
    "name", "url", "hook_attributes", "redirect_url", "callback_urls", "setup_url", "description", "public",
    "default_events", "default_permissions", "request_oauth_on_install", "setup_on_update",
}  # fmt: skip


def test_github_app_manifest_and_classic_scopes(reports: dict[str, dict[str, Any]]) -> None:
    out = doc(reports, "github", "github-app")
    m = out["manifest"]
    assert set(m) <= GITHUB_MANIFEST_KEYS
    assert isinstance(m["name"], str)
    assert m["name"]
    assert m["url"].startswith("<")  # required: the author's homepage, a placeholder until filled
    assert "hook_attributes" not in m  # its url is required: left to the author
    cat = catalog("github")
    assert cat is not None
    names = {p.scope.split(":")[0] for p in cat.permissions.values() if p.scheme != CLASSIC}
    assert set(m["default_permissions"]) <= names
    assert set(m["default_permissions"].values()) <= {"read", "write", "admin"}
    # issues:write (required, a user's), contents:read (the installation's) and contents:write (optional merge).
    assert m["default_permissions"] == {"contents": "write", "issues": "write"}
    assert out["tiers"]["required"] == {"issues": "write"}
    assert out["tiers"]["optional"] == {"contents": "write"}
    assert out["oauth_app"]["scopes"] == ["repo"]
    required = doc(reports, "github", "github-app", tier="REQUIRED")
    assert required["manifest"]["default_permissions"] == {"issues": "write"}


# --------------------------------------------------------------------------- allowlist, oauth-client


def test_scope_allowlist_per_identity_and_server(reports: dict[str, dict[str, Any]]) -> None:
    out = doc(reports, "graph", "allowlist")
    assert out["default"] == "deny"
    assert out["agent"] == "sha256:" + reports["graph"]["card"]["sha256"]
    by = {(g["identity"], g["authorization_server"]): g for g in out["grants"]}
    user = by[("END_USER", "https://login.microsoftonline.com")]
    assert user["required"] == ["https://graph.microsoft.com/Mail.Read", "https://graph.microsoft.com/User.Read"]
    assert user["optional"] == ["https://graph.microsoft.com/Mail.Send"]
    assert user["resources"] == ["https://graph.microsoft.com/v1.0"]
    app = by[("AGENT", "https://login.microsoftonline.com")]
    assert app["namespace"].endswith("#app-roles")
    assert app["optional"] == ["https://graph.microsoft.com/Mail.Read"]
    travel = doc(reports, "travel", "allowlist")
    assert [c["scheme"] for c in travel["credentials"]] == ["mcp-api-key"]


def test_the_operations_allowlist_is_still_format_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([*cli_globals(tmp_path), "export", "--format", "json", str(TRAVEL)])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["allowlist_version"] == 1


def test_oauth_client_metadata_document(reports: dict[str, dict[str, Any]]) -> None:
    e = export_report(reports["mcp"], "oauth-client")
    d = json.loads(e.text)
    assert d["scope"] == "search.read"  # the REQUIRED tier; docs.write comes by step-up
    assert any("docs.write" in n for n in e.notes)
    assert d["grant_types"] == ["authorization_code", "refresh_token"]
    assert d["response_types"] == ["code"]
    # No shared secret: the client ID metadata document draft forbids it.
    assert d["token_endpoint_auth_method"] in ("none", "private_key_jwt")
    assert not {"client_secret", "client_secret_expires_at"} & set(d)
    assert set(d) <= {
        "client_id", "client_name", "client_uri", "redirect_uris", "grant_types", "response_types",
        "token_endpoint_auth_method", "scope", "software_version", "jwks_uri", "logo_uri", "contacts",
    }  # fmt: skip
    assert "offline_access" not in d["scope"].split()
    assert "openid" not in d["scope"].split()


# --------------------------------------------------------------------------- what a format cannot express


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("travel", "entra-app"),
        ("graph", "google-oauth"),
        ("github", "slack-manifest"),
        ("slack", "github-app"),
        ("graph", "toolhive"),
        ("slack", "agentgateway"),
        ("travel", "oauth-client"),  # Maps takes an API key: no OAuth scope for a client to ask for
    ],
)
def test_a_format_that_cannot_express_the_card_says_what_it_can(
    reports: dict[str, dict[str, Any]], name: str, fmt: str
) -> None:
    with pytest.raises(NotExpressible, match=f"--format {fmt} expresses .*; the card's tiers up to OPTIONAL need"):
        export_report(reports[name], fmt)


def test_cli_exit_2_one_line_for_a_format_the_card_cannot_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([*cli_globals(tmp_path), "export", "--format", "entra-app", str(TRAVEL)])
    err = capsys.readouterr()
    assert code == 2
    assert err.out == ""
    lines = [x for x in err.err.splitlines() if x.startswith("ramscope: error:")]
    assert len(lines) == 1
    assert "expresses Microsoft Graph permissions" in lines[0]
    assert "need Google" in lines[0]


def test_cli_google_export_of_the_readme_example_to_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "google.json"
    argv = [*cli_globals(tmp_path), "export", str(TRAVEL), "--format", "google-oauth", "--tier", "optional"]
    code = main([*argv, "--identity", "end_user", "-o", str(out)])
    assert code == 0
    assert json.loads(out.read_text())["consent_screen"]["scopes"] == [G + "calendar.events"]
    assert "not exported: mcp-api-key" not in capsys.readouterr().err  # END_USER only: the AGENT's key is not asked


def test_an_invalid_card_exports_nothing(reports: dict[str, dict[str, Any]]) -> None:
    bad = json.loads(json.dumps(reports["graph"]))
    bad["card"]["valid"] = False
    with pytest.raises(InputError, match="invalid"):
        read_report(bad)


def test_an_incomplete_access_is_never_exported(reports: dict[str, dict[str, Any]]) -> None:
    r = json.loads(json.dumps(reports["graph"]))
    a = next(a for a in r["accesses"] if a["id"] == "send-mail")
    a.update(complete=False, scopes=None, reason="spec-unavailable")
    for t in ("RECOMMENDED", "OPTIONAL"):
        eu = r["tiers"][t]["END_USER"]
        eu["permissions"] = [p for p in eu["permissions"] if p["name"] != "Mail.Send"]
    out = doc({"g": r}, "g", "entra-app")
    assert "e383f46e-2787-4529-855e-0e479a3ffac0" not in json.dumps(out["manifest"])
    assert out["complete"] is False
    assert {"access": "send-mail", "identity": "END_USER", "tier": "RECOMMENDED"}.items() <= out["not_exported"][
        0
    ].items()


def test_github_optional_tier_lists_only_what_raises_the_required_level(reports: dict[str, dict[str, Any]]) -> None:
    r = json.loads(json.dumps(reports["github"]))
    # A required access now needs contents:write too: the optional merge adds nothing to ask for.
    required = r["tiers"]["REQUIRED"]["END_USER"]["permissions"]
    required.append({**required[0], "scope": "contents:write", "name": None, "accesses": ["file-issue"]})
    for t in ("RECOMMENDED", "OPTIONAL"):
        eu = r["tiers"][t]["END_USER"]["permissions"]
        eu.append({**required[0], "scope": "contents:write", "name": None, "accesses": ["file-issue"]})
    out = doc({"g": r}, "g", "github-app")
    assert out["tiers"]["required"] == {"contents": "write", "issues": "write"}
    assert out["tiers"]["optional"] == {}
    assert out["manifest"]["default_permissions"] == {"contents": "write", "issues": "write"}


def test_cli_skill_and_capitalised_tier(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    skills = ROOT / "examples" / "travel-agent-skills.card.json"
    argv = [*cli_globals(tmp_path), "export", str(skills), "--skill", "destination-brief", "--format", "toolhive"]
    assert main([*argv, "--tier", "RECOMMENDED"]) == 0
    text = capsys.readouterr().out
    assert 'Tool::"lookup_weather"' in text
    assert "calendar" not in text.split("version:")[1]
    assert main([*cli_globals(tmp_path), "export", str(skills), "--skill", "destination-brief", "--format",
                 "google-oauth"]) == 2  # fmt: skip
    assert "expresses Google OAuth scopes" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", export_pkg.TARGET_FORMATS)
def test_every_card_through_every_format_exports_or_says_why(reports: dict[str, dict[str, Any]], fmt: str) -> None:
    """Our own cards through each format: a document in the target's syntax, or the one refusal; never a crash."""
    import yaml

    done = []
    for name, report in reports.items():
        try:
            out = export_report(report, fmt)
        except NotExpressible:
            continue
        parsed = yaml.safe_load(out.text) if fmt in ("toolhive", "agentgateway") else json.loads(out.text)
        assert isinstance(parsed, dict), (name, fmt)
        done.append(name)
    expected = {
        "entra-app": ["graph"],
        "google-oauth": ["travel"],
        "slack-manifest": ["slack"],
        "github-app": ["github"],
        "toolhive": ["travel", "mcp"],
        "agentgateway": ["travel", "mcp"],
        "allowlist": ["graph", "github", "slack", "travel", "mcp"],
        "oauth-client": ["mcp"],
        "hubspot-app": [],  # tests/test_export_saas.py: a HubSpot and an Atlassian card
        "atlassian-app": [],
    }
    assert done == expected[fmt]


def test_schema_with_a_target_format_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = tmp_path / "x.cedarschema"
    code = main([*cli_globals(tmp_path), "export", str(TRAVEL), "--format", "toolhive", "--schema", str(schema)])
    assert code == 2
    assert "--schema FILE goes with --format cedar" in capsys.readouterr().err
    assert not schema.exists()
