"""`export --format hubspot-app|atlassian-app`: our HubSpot and Atlassian (Jira beside Confluence) cards derived
offline and exported, checked field by field as HubSpot's developer platform (app-hsmeta.json's ``auth``,
https://developers.hubspot.com/docs/apps/developer-platform/build-apps/authentication/scopes) and Atlassian
(Forge's manifest ``permissions``, the 3LO authorization URL) document them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from ramscope.cli import main
from ramscope.governance.export import TARGET_FORMATS, NotExpressible, export_report
from ramscope.governance.export.atlassian import product_of
from ramscope.outputs.diff import admin_diff
from tests.support.exportcards_saas import derive_saas
from tests.support.reports import cli_globals

#: app-hsmeta.json's ``config.auth`` fields (HubSpot's app configuration reference and its templates).
HUBSPOT_AUTH_KEYS = {"type", "redirectUrls", "requiredScopes", "optionalScopes", "conditionallyRequiredScopes"}
HUBSPOT_SCOPE = re.compile(r"\A[a-z0-9_-]+(\.[a-z0-9_-]+)*\Z")
#: Atlassian's scope syntax: classic ``action:name``, granular ``action:resource:product``.
ATLASSIAN_SCOPE = re.compile(r"\A[a-z]+:[a-z0-9.-]+(:[a-z-]+)?\Z")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return derive_saas(tmp_path_factory.mktemp("saas-cache"))


def doc(reports: dict[str, dict[str, Any]], name: str, fmt: str, **kw: Any) -> Any:
    return json.loads(export_report(reports[name], fmt, **kw).text)


def test_both_cards_are_derived_complete(reports: dict[str, dict[str, Any]]) -> None:
    for name, r in reports.items():
        assert r["card"]["valid"], name
        assert r["complete"], name


# --------------------------------------------------------------------------- HubSpot


def check_hubspot_auth(auth: dict[str, Any]) -> None:
    """Field by field, as app-hsmeta.json's ``auth`` is documented."""
    assert set(auth) == HUBSPOT_AUTH_KEYS
    assert auth["type"] in ("oauth", "static")
    assert isinstance(auth["redirectUrls"], list)
    assert all(isinstance(u, str) for u in auth["redirectUrls"])
    lists = [auth["requiredScopes"], auth["conditionallyRequiredScopes"], auth["optionalScopes"]]
    for scopes in lists:
        assert scopes == sorted(set(scopes))
        assert all(HUBSPOT_SCOPE.match(s) for s in scopes), scopes
    # A scope is of one type only.
    assert sum(len(x) for x in lists) == len({s for x in lists for s in x})
    if auth["type"] == "static":
        assert not auth["conditionallyRequiredScopes"]
        assert not auth["optionalScopes"]


def test_hubspot_scope_types_are_the_cards_tiers(reports: dict[str, dict[str, Any]]) -> None:
    out = doc(reports, "hubspot", "hubspot-app")
    check_hubspot_auth(out["auth"])
    assert out["format"] == "hubspot-app"
    assert out["auth"]["type"] == "oauth"
    assert out["auth"]["requiredScopes"] == ["crm.objects.contacts.read"]  # list-contacts, REQUIRED
    assert out["auth"]["conditionallyRequiredScopes"] == ["crm.objects.deals.read"]  # list-deals, RECOMMENDED
    assert out["auth"]["optionalScopes"] == ["tickets"]  # read-ticket, OPTIONAL
    # Two install URLs: without and with the recommended features; optional scopes on both.
    assert [(i["tier"], i["scope"], i["optional_scope"]) for i in out["install"]] == [
        ("REQUIRED", ["crm.objects.contacts.read"], ["tickets"]),
        ("RECOMMENDED", ["crm.objects.contacts.read", "crm.objects.deals.read"], ["tickets"]),
    ]
    assert out["not_exported"] == []
    assert out["complete"] is True


def test_hubspot_tiers_are_cumulative_up_to_tier(reports: dict[str, dict[str, Any]]) -> None:
    required = doc(reports, "hubspot", "hubspot-app", tier="REQUIRED")
    check_hubspot_auth(required["auth"])
    assert required["auth"]["requiredScopes"] == ["crm.objects.contacts.read"]
    assert required["auth"]["conditionallyRequiredScopes"] == required["auth"]["optionalScopes"] == []
    assert len(required["install"]) == 1
    recommended = doc(reports, "hubspot", "hubspot-app", tier="RECOMMENDED")
    assert recommended["auth"]["conditionallyRequiredScopes"] == ["crm.objects.deals.read"]
    assert recommended["auth"]["optionalScopes"] == []


def test_hubspot_a_scope_of_two_tiers_takes_the_stronger_type(reports: dict[str, dict[str, Any]]) -> None:
    r = json.loads(json.dumps(reports["hubspot"]))
    # The OPTIONAL access now needs the REQUIRED tier's scope too (for AGENT: the same app's install).
    ticket = next(p for p in r["tiers"]["OPTIONAL"]["END_USER"]["permissions"] if p["scope"] == "tickets")
    r["tiers"]["OPTIONAL"]["AGENT"]["permissions"] = [{**ticket, "scope": "crm.objects.contacts.read"}]
    out = doc({"h": r}, "h", "hubspot-app")
    check_hubspot_auth(out["auth"])
    assert out["auth"]["requiredScopes"] == ["crm.objects.contacts.read"]
    assert "crm.objects.contacts.read" not in out["auth"]["optionalScopes"]


def test_hubspot_leaves_other_providers_out_and_names_their_format(reports: dict[str, dict[str, Any]]) -> None:
    r = json.loads(json.dumps(reports["hubspot"]))
    jira = reports["atlassian"]["tiers"]["REQUIRED"]["END_USER"]["permissions"][0]
    r["tiers"]["OPTIONAL"]["END_USER"]["permissions"].append(jira)
    out = doc({"h": r}, "h", "hubspot-app")
    (left,) = out["not_exported"]
    assert left["provider"] == "atlassian"
    assert "see `ramscope export --format atlassian-app`" in left["reason"]
    assert jira["scope"] not in json.dumps(out["auth"])


# --------------------------------------------------------------------------- Atlassian


@pytest.mark.parametrize(
    ("scope", "product"),
    [
        # Scope names as Atlassian's "scopes for OAuth 2.0 (3LO) and Forge apps" pages list them.
        ("read:jira-work", "jira"),
        ("manage:jira-configuration", "jira"),
        ("read:issue:jira", "jira"),
        ("read:board-scope.admin:jira-software", "jira-software"),
        ("write:ops-config:jira-service-management", "jira-service-management"),
        ("read:servicedesk-request", "jira-service-management"),
        ("read:confluence-content.summary", "confluence"),
        ("read:page:confluence", "confluence"),
        ("read:me", "identity"),
        ("offline_access", None),
        ("storage:app", None),
    ],
)
def test_atlassian_product_of_a_scope(scope: str, product: str | None) -> None:
    assert product_of(scope) == product


def test_atlassian_forge_manifest_and_3lo_scopes_per_product(reports: dict[str, dict[str, Any]]) -> None:
    out = doc(reports, "atlassian", "atlassian-app")
    every = ["read:jira-work", "read:page:confluence", "write:jira-work", "write:page:confluence"]
    # Forge: manifest.yml's permissions section, scopes a list.
    assert out["manifest"] == {"permissions": {"scopes": every}}
    assert all(ATLASSIAN_SCOPE.match(s) for s in every)
    app = out["oauth_app"]
    assert app["products"] == {
        "confluence": ["read:page:confluence", "write:page:confluence"],
        "jira": ["read:jira-work", "write:jira-work"],
    }
    assert "unclassified" not in app
    assert out["tiers"]["required"] == ["read:page:confluence", "write:jira-work"]
    assert out["tiers"]["optional"] == ["read:jira-work", "write:page:confluence"]
    assert out["not_exported"] == []


def test_atlassian_authorization_url_as_atlassian_documents_it(reports: dict[str, dict[str, Any]]) -> None:
    out = doc(reports, "atlassian", "atlassian-app")
    for key, scopes in (("required", out["tiers"]["required"]), ("all", out["manifest"]["permissions"]["scopes"])):
        url = urlsplit(out["oauth_app"]["authorization_url"][key])
        assert (url.scheme, url.netloc, url.path) == ("https", "auth.atlassian.com", "/authorize")
        q = parse_qs(url.query)
        assert set(q) == {"audience", "client_id", "scope", "redirect_uri", "state", "response_type", "prompt"}
        assert q["audience"] == ["api.atlassian.com"]
        assert q["response_type"] == ["code"]
        assert q["prompt"] == ["consent"]
        assert q["scope"][0].split(" ") == scopes
        assert "offline_access" not in q["scope"][0]


def test_atlassian_required_tier_only(reports: dict[str, dict[str, Any]]) -> None:
    out = doc(reports, "atlassian", "atlassian-app", tier="REQUIRED")
    assert out["manifest"]["permissions"]["scopes"] == ["read:page:confluence", "write:jira-work"]
    assert out["tiers"]["optional"] == []


def test_atlassian_a_scope_no_product_claims_is_listed_apart(reports: dict[str, dict[str, Any]]) -> None:
    r = json.loads(json.dumps(reports["atlassian"]))
    page = r["tiers"]["REQUIRED"]["END_USER"]["permissions"][0]
    for t in ("REQUIRED", "RECOMMENDED", "OPTIONAL"):
        r["tiers"][t]["END_USER"]["permissions"].append({**page, "scope": "storage:app"})
    out = doc({"a": r}, "a", "atlassian-app")
    assert out["oauth_app"]["unclassified"]["scopes"] == ["storage:app"]
    assert "storage:app" in out["manifest"]["permissions"]["scopes"]  # never dropped


# --------------------------------------------------------------------------- both


@pytest.mark.parametrize(("name", "fmt", "needs"), [("hubspot", "atlassian-app", "HubSpot"),
                                                    ("atlassian", "hubspot-app", "Atlassian")])  # fmt: skip
def test_a_card_of_the_other_provider_is_not_expressible(
    reports: dict[str, dict[str, Any]], name: str, fmt: str, needs: str
) -> None:
    with pytest.raises(
        NotExpressible, match=f"--format {fmt} expresses .*; the card's tiers up to OPTIONAL need {needs}"
    ):
        export_report(reports[name], fmt)


def test_allowlist_names_the_providers(reports: dict[str, dict[str, Any]]) -> None:
    assert {g["provider"] for g in doc(reports, "hubspot", "allowlist")["grants"]} == {"hubspot"}
    assert {g["provider"] for g in doc(reports, "atlassian", "allowlist")["grants"]} == {"atlassian"}


def test_admin_diff_names_hubspot_and_atlassian(reports: dict[str, dict[str, Any]]) -> None:
    a = admin_diff(reports["atlassian"], reports["hubspot"])
    assert a["targets"]["hubspot"]["where"].startswith("HubSpot")
    assert [x["scope"] for x in a["targets"]["hubspot"]["approve"]] == [
        "crm.objects.contacts.read", "crm.objects.deals.read", "tickets"
    ]  # fmt: skip
    assert a["targets"]["hubspot"]["approve"][1]["action"] == (
        "add crm.objects.deals.read to the app's conditionallyRequiredScopes (app-hsmeta.json)"
    )
    back = admin_diff(reports["hubspot"], reports["atlassian"])
    assert back["targets"]["atlassian"]["where"].startswith("Atlassian")
    page = next(x for x in back["targets"]["atlassian"]["approve"] if x["scope"] == "read:page:confluence")
    assert "permissions.scopes" in page["action"]
    assert "confluence API scopes" in page["action"]


@pytest.mark.parametrize("fmt", TARGET_FORMATS)
def test_both_cards_through_every_format_export_or_say_why(reports: dict[str, dict[str, Any]], fmt: str) -> None:
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
    expected = {"hubspot-app": ["hubspot"], "atlassian-app": ["atlassian"], "allowlist": ["hubspot", "atlassian"]}
    assert done == expected.get(fmt, [])


def test_cli_exports_a_saved_report(
    reports: dict[str, dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = Path(reports["hubspot"]["card"]["source"]).with_suffix(".report.json")
    saved.write_text(json.dumps(reports["hubspot"]))
    out = tmp_path / "hubspot-app.json"
    # The options it was derived with (its specs now in that cache): a saved report is verified by deriving its
    # card again (issue 30).
    same = ["--offline", "--allow-private-network", "--cache-dir", str(saved.parent)]
    argv = [*same, "export", str(saved), "--format", "hubspot-app", "--tier", "recommended"]
    assert main([*argv, "-o", str(out)]) == 0
    auth = json.loads(out.read_text())["auth"]
    assert auth["conditionallyRequiredScopes"] == ["crm.objects.deals.read"]
    assert main([*cli_globals(tmp_path), "export", str(saved), "--format", "hubspot-app"]) == 2  # other options
    assert "the report is not what its card" in capsys.readouterr().err
    assert main([*same, "export", str(saved), "--format", "atlassian-app"]) == 2
    assert "expresses Atlassian scopes" in capsys.readouterr().err


# --------------------------------------------------------------------------- docs/governance.md

DOC = (Path(__file__).resolve().parents[1] / "docs" / "governance.md").read_text("utf-8")


def _blocks(title: str) -> list[Any]:
    start = DOC.index(f"### `{title}`")
    end = DOC.find("\n### ", start + 1)
    return [json.loads(b) for b in re.findall(r"```json\n(.*?)\n```", DOC[start:end], re.S)]


def test_the_docs_examples_are_the_exports(reports: dict[str, dict[str, Any]]) -> None:
    assert _blocks("hubspot-app") == [doc(reports, "hubspot", "hubspot-app")["auth"]]
    out = doc(reports, "atlassian", "atlassian-app")
    assert _blocks("atlassian-app") == [out["manifest"], out["oauth_app"]["products"]]
