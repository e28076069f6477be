"""GitHub: both token families, classed, and the narrowest permission that does the job.

Fine-grained permissions (GitHub Apps, fine-grained tokens) come from github/docs' permission lists;
classic OAuth scopes (OAuth Apps, classic tokens) from GitHub's scope table and ramscope's reviewed
reading of the docs (``vendor/github/classic.json``). The derivation runs on @octokit/openapi's real
api.github.com.json, served from a loopback server through the real spec store.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.derive.policy import Policy, policy_from_dict
from ramscope.errors import PolicyError
from ramscope.outputs.report import Report
from ramscope.providers import catalog
from ramscope.providers.catalog import Catalog
from ramscope.providers.github import CLASSIC, INSTALLATION, USER
from ramscope.providers.reach import Level, Principal, classify
from tests.support.httpserver import LocalHTTPServer
from tests.test_derive import card

WORKFLOWS = "only when the change creates, updates or deletes a file under .github/workflows"


@pytest.fixture(scope="module")
def github() -> Catalog:
    cat = catalog("github")
    assert cat is not None
    return cat


def cls(scope: str, *, app: bool = False) -> Any:
    return classify(scope, "", provider="github", app_only=app)


# --------------------------------------------------------------------------- classes


def test_every_shipped_github_permission_and_classic_scope_has_a_class(github: Catalog) -> None:
    unknown = [
        (p.scheme, p.scope)
        for p in github.permissions.values()
        if classify(p.scope, p.description, provider="github", app_only=p.scheme == INSTALLATION).level
        is Level.UNKNOWN
    ]
    assert unknown == []
    classic = {p.scope for p in github.permissions.values() if p.scheme == CLASSIC}
    assert {"repo", "public_repo", "read:org", "admin:org", "notifications", "gist", "user", "read:user"} <= classic
    assert {"workflow", "project", "read:project", "delete_repo", "security_events"} <= classic


@pytest.mark.parametrize(
    ("scope", "level"),
    [
        ("contents:read", Level.READ),
        ("contents:write", Level.WRITE),
        ("organization_projects:admin", Level.MANAGE),
        ("administration:read", Level.READ),
        ("repo", Level.MANAGE),
        ("public_repo", Level.WRITE),
        ("read:org", Level.READ),
        ("write:org", Level.WRITE),
        ("admin:org", Level.MANAGE),
        ("notifications", Level.WRITE),
        ("user:email", Level.READ),
        ("delete_repo", Level.MANAGE),
    ],
)
def test_levels(scope: str, level: Level) -> None:
    assert cls(scope).level is level


def test_public_repo_is_a_slice_of_repo() -> None:
    r = cls("public_repo")
    assert (r.slice, r.condition) == ("public-repositories", "only public repositories")


def test_an_installation_token_is_the_app_itself() -> None:
    assert cls("contents:read", app=True).principal is Principal.APP
    assert cls("contents:read").principal is Principal.USER


def test_conditional_additional_permission_is_not_anded(github: Catalog) -> None:
    """PUT contents: GitHub lists contents twice (two permission sets) and workflows once."""
    e = github.lookup("PUT", "/repos/{owner}/{repo}/contents/{path}")
    assert e is not None
    fine = {frozenset(t.scopes) for alt in e.requirements for t in alt if t.scheme == USER}
    assert fine == {frozenset({"contents:write"})}
    assert e.conditional == (
        (USER, "workflows:write", WORKFLOWS),
        (INSTALLATION, "workflows:write", WORKFLOWS),
        (CLASSIC, "workflow", WORKFLOWS),
    )


def test_notifications_only_classic(github: Catalog) -> None:
    e = github.lookup("GET", "/notifications")
    assert e is not None
    assert {t.scheme for alt in e.requirements for t in alt} == {CLASSIC}
    assert any("does not work with GitHub App user access tokens" in n for n in e.notes)


# --------------------------------------------------------------------------- the real spec


@pytest.fixture(scope="module")
def spec_server(npm_corpora: Path) -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        spec = npm_corpora / "@octokit" / "openapi" / "generated" / "api.github.com.json"
        srv.route("/github.json", body=spec.read_bytes())
        yield srv


OPS = [
    ("repos/create-or-update-file-contents", "END_USER"),
    ("activity/list-notifications-for-authenticated-user", "END_USER"),
    ("search/code", "END_USER"),
    ("projects/list-for-org", "END_USER"),
    ("repos/get-content", "END_USER"),
    ("repos/delete", "END_USER"),
    ("repos/create-or-update-file-contents", "AGENT"),
    ("issues/list-labels-for-repo", "END_USER"),
    ("users/get-authenticated", "END_USER"),
]


def run(spec_server: LocalHTTPServer, cache: Path, policy: Policy | None = None) -> list[dict[str, Any]]:
    manifest = card(spec_server, *[("/github.json", "", {"operation_id": op}, {"identity": i}) for op, i in OPS])
    with Engine(Settings(cache_dir=cache, allow_private_network=True, timeout=60), policy=policy) as engine:
        report: Report = engine.derive({"name": "github reach", "resourceAccessManifest": manifest})
    out: list[dict[str, Any]] = report.to_dict()["accesses"]
    return out


@pytest.fixture(scope="module")
def fine(spec_server: LocalHTTPServer, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return run(spec_server, tmp_path_factory.mktemp("gh"))


@pytest.fixture(scope="module")
def classic(spec_server: LocalHTTPServer, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    policy = policy_from_dict({"catalogs": {"github": "classic"}})
    return run(spec_server, tmp_path_factory.mktemp("gh-classic"), policy)


def test_put_contents_is_contents_write_with_the_workflows_condition(fine: list[dict[str, Any]]) -> None:
    a = fine[0]
    assert a["scopes"] == ["contents:write"]
    assert a["choice"]["conditional"] == [{"scopes": ["workflows:write"], "condition": WORKFLOWS}]
    assert a["choice"]["token_family"] == {
        "picked": "fine-grained",
        "why": None,
        "other": {"family": "classic", "scopes": ["repo"], "why": None},
    }


def test_notifications_give_the_classic_scope_and_say_why(fine: list[dict[str, Any]]) -> None:
    a = fine[1]
    assert a["complete"]
    assert a["scopes"] == ["notifications"]
    family = a["choice"]["token_family"]
    assert family["picked"] == "classic"
    assert family["why"].startswith(
        "GitHub: this endpoint does not work with GitHub App user access tokens, GitHub App installation access "
        "tokens, or fine-grained personal access tokens"
    )
    assert family["other"] == {
        "family": "fine-grained",
        "scopes": None,
        "why": family["why"],
    }


def test_search_and_projects_are_covered_and_public_needs_nothing(fine: list[dict[str, Any]]) -> None:
    search, projects, content = fine[2], fine[3], fine[4]
    assert search["scopes"] == ["metadata:read"]
    assert projects["scopes"] == ["organization_projects:read"]
    assert projects["choice"]["token_family"]["other"]["scopes"] == ["read:project"]
    for a in (search, projects, content):
        assert a["choice"]["public"].startswith("none for public resources")
    assert fine[0]["choice"]["public"] is None


def test_deleting_a_repository_classic_is_delete_repo(fine: list[dict[str, Any]]) -> None:
    a = fine[5]
    assert a["scopes"] == ["administration:write"]
    assert a["choice"]["token_family"]["other"]["scopes"] == ["delete_repo"]


def test_an_installation_token_has_one_family(fine: list[dict[str, Any]]) -> None:
    a = fine[6]
    assert a["scopes"] == ["contents:write"]
    assert a["choice"]["token_family"] is None
    assert a["choice"]["conditional"] == [{"scopes": ["workflows:write"], "condition": WORKFLOWS}]


def test_the_classic_family_by_policy(classic: list[dict[str, Any]]) -> None:
    """repo for PUT contents, public_repo offered for public repositories, workflow under its condition."""
    a = classic[0]
    assert a["scopes"] == ["repo"]
    assert a["choice"]["conditional"] == [{"scopes": ["workflow"], "condition": WORKFLOWS}]
    assert a["choice"]["narrower"] == [
        {"scopes": ["public_repo"], "conditions": ["only public repositories"], "limits": []}
    ]
    assert a["choice"]["token_family"]["other"] == {"family": "fine-grained", "scopes": ["contents:write"], "why": None}
    assert classic[1]["scopes"] == ["notifications"]
    assert classic[1]["choice"]["token_family"]["why"] is None


def test_policy_family_is_checked() -> None:
    assert policy_from_dict({"catalogs": {"github": "classic"}}).github_family == "classic"
    assert policy_from_dict({}).github_family == "fine-grained"
    with pytest.raises(PolicyError, match='expected "fine-grained" or "classic"'):
        policy_from_dict({"catalogs": {"github": "oauth"}})


def test_issues_or_pull_requests_is_either_not_both(fine: list[dict[str, Any]]) -> None:
    """Labels belong to issues and pull requests: GitHub documents either permission set; not both ANDed."""
    assert fine[7]["scopes"] == ["issues:read"]


def test_the_authenticated_user_needs_a_token_but_no_permission(fine: list[dict[str, Any]]) -> None:
    a = fine[8]
    assert a["complete"]
    assert a["scopes"] == []
    # A classic token with no scope reads the public profile; read:user, its private one (the pick ranks a
    # token of unknown reach above a named read scope).
    assert a["choice"]["token_family"]["other"]["scopes"] == ["read:user"]
