"""Issue 30, items 5 and 15: provider data applies only on the provider's own hosts, anchored.

5: a non-Slack API whose spec named Slack's OAuth endpoints got Slack's any-of reading
(`[channels:history AND chat:write]` read as `channels:history` alone) and no `provider-scope-borrowed`
warning (last round's fix covered Google and Graph only).
15: quirk host patterns lacked a label boundary (Sentry's matched `api.notsentry.io`) and an end
anchor (Salesforce's matched `login.salesforce.com.evil.example`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.outputs.report import Report
from ramscope.providers import normalise_url, quirks
from tests.support.httpserver import LocalHTTPServer
from tests.test_derive import card

SLACK_OAUTH = {
    "type": "oauth2",
    "flows": {
        "authorizationCode": {
            "authorizationUrl": "https://slack.com/oauth/v2/authorize",
            "tokenUrl": "https://slack.com/api/oauth.v2.access",
            "scopes": {"channels:history": "Read the weather", "chat:write": "Post forecasts"},
        }
    },
}
GITHUB_OAUTH = {
    "type": "oauth2",
    "flows": {
        "authorizationCode": {
            "authorizationUrl": "https://github.com/login/oauth/authorize",
            "tokenUrl": "https://github.com/login/oauth/access_token",
            "scopes": {"repo": "See your weather stations"},
        }
    },
}


def _spec(server_url: str, scheme: dict[str, Any], scopes: list[str]) -> bytes:
    return orjson.dumps(
        {
            "openapi": "3.0.3",
            "info": {"title": "Weather", "version": "1"},
            "servers": [{"url": server_url}],
            "components": {"securitySchemes": {"oauth": scheme}},
            "paths": {"/forecast.post": {"post": {"operationId": "post", "security": [{"oauth": scopes}]}}},
        }
    )


@pytest.fixture(scope="module")
def server() -> Iterator[LocalHTTPServer]:
    both = ["channels:history", "chat:write"]
    with LocalHTTPServer() as srv:
        srv.route("/foreign-slack.json", body=_spec("https://api.weather.example", SLACK_OAUTH, both))
        srv.route("/own-slack.json", body=_spec("https://slack.com/api", SLACK_OAUTH, both))
        srv.route("/foreign-github.json", body=_spec("https://api.weather.example", GITHUB_OAUTH, ["repo"]))
        srv.route("/own-github.json", body=_spec("https://api.github.com", GITHUB_OAUTH, ["repo"]))
        yield srv


def _derive(server: LocalHTTPServer, route: str, tmp_path: Path) -> Report:
    settings = Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=20)
    manifest = card(server, (route, "", {"operation_id": "post"}, {}))
    with Engine(settings) as engine:
        return engine.derive({"name": "weather agent", "resourceAccessManifest": manifest})


def _borrowed(report: Report) -> list[str]:
    return [d.message for d, _ in report.diagnostics if d.code == "provider-scope-borrowed"]


def test_a_foreign_spec_naming_slacks_oauth_gets_no_slack_reading(server: LocalHTTPServer, tmp_path: Path) -> None:
    """All of [channels:history AND chat:write] is needed (the spec's own words), and the borrowing is flagged."""
    report = _derive(server, "/foreign-slack.json", tmp_path)
    (a,) = report.accesses
    assert sorted(a.scopes or ()) == ["channels:history", "chat:write"]
    assert "quirk" not in (a.requirements_source or "")
    msgs = _borrowed(report)
    assert len(msgs) == 2
    assert all("Slack" in m and "api.weather.example" in m for m in msgs)
    # The consent screen does not show the borrower's words ("Read the weather") as what Slack's scope means.
    perms = report.to_dict()["tiers"]["REQUIRED"]["END_USER"]["permissions"]
    assert {p["scope"]: p["description"] for p in perms} == {"channels:history": None, "chat:write": None}
    assert all(p.get("warning") for p in perms)


def test_slacks_own_api_keeps_its_reading(server: LocalHTTPServer, tmp_path: Path) -> None:
    """The control: the same spec on Slack's own API host is read Slack's way (one of the two), unflagged."""
    report = _derive(server, "/own-slack.json", tmp_path)
    (a,) = report.accesses
    assert "quirk:slack" in (a.requirements_source or "")
    assert len(a.scopes or ()) == 1
    assert _borrowed(report) == []


def test_a_borrowed_github_scope_is_flagged(server: LocalHTTPServer, tmp_path: Path) -> None:
    assert any("GitHub" in m and "repo" in m for m in _borrowed(_derive(server, "/foreign-github.json", tmp_path)))
    assert _borrowed(_derive(server, "/own-github.json", tmp_path)) == []


def _match_server(url: str) -> str | None:
    for q in quirks.load()[0]:
        if any(p.search(normalise_url(url)) for p in q.servers):
            return q.name
    return None


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("https://sentry.io", "sentry"),
        ("https://us.sentry.io", "sentry"),
        ("https://api.notsentry.io", None),
        ("https://sentry.io.evil.example", None),
        ("https://acme.my.salesforce.com", "salesforce"),
        ("https://login.salesforce.com.evil.example", None),
        ("https://evilsalesforce.com", None),
        ("https://acme.atlassian.net", "atlassian"),
        ("https://acme.atlassian.net.evil.example", None),
        ("https://acme.zendesk.com/api/v2", "zendesk"),
        ("https://acme.zendesk.com.evil.example/api/v2", None),
    ],
)
def test_quirk_server_patterns_are_anchored(url: str, name: str | None) -> None:
    if name == "salesforce":
        nope = quirks.load()[1]
        assert any(any(p.search(normalise_url(url)) for p in n.servers) for n in nope if n.name == name)
        return
    if name is None:
        nope = quirks.load()[1]
        assert not any(any(p.search(normalise_url(url)) for p in n.servers) for n in nope)
    assert _match_server(url) == name


def test_every_shipped_host_pattern_is_anchored_at_a_label_boundary_and_the_end() -> None:
    """Structurally, for every pattern of quirks.json: `^https://`, no wildcard run straight into a host label
    (`[^/]*sentry`), and the host ends in `$`, `/` or `(?:/|$)`-like alternatives."""
    data = json.loads(resources.files("ramscope.providers").joinpath("data", "quirks.json").read_bytes())
    patterns = [
        (p["name"], pat)
        for p in (*data["providers"], *data["not_expressible"])
        for key in ("servers", "authorization_servers")
        for pat in p["match"].get(key, ())
    ]
    assert len(patterns) > 20
    for name, pat in patterns:
        assert pat.startswith("^https://"), (name, pat)
        assert not re.search(r"\[\^/\][*+]\(?[a-z]", pat), (name, pat)
        # Whatever the host part is, appending a label must not match any more.
        assert not re.search(pat, "https://a.b.c.d.evil.example"), (name, pat)
        for host in ("slack.com", "sentry.io", "salesforce.com", "atlassian.net", "zendesk.com", "docusign.net"):
            assert not re.search(pat, f"https://x.{host}.evil.example/api"), (name, pat)
            assert not re.search(pat, f"https://not{host}"), (name, pat)


# --------------------------------------------------------------------------- item 13: Shopify by host


def _introspection() -> dict[str, Any]:
    """A foreign API's introspection result with one stray Shopify-shaped requiredAccess string."""

    def field(name: str, returns: str, access: str = "") -> dict[str, Any]:
        f: dict[str, Any] = {"name": name, "args": [], "type": {"kind": "OBJECT", "name": returns, "ofType": None}}
        if access:
            f["requiredAccess"] = access
        return f

    types = [
        {"kind": "OBJECT", "name": "Query", "fields": [field("stations", "Station"), field("secret", "Station")]},
        {"kind": "OBJECT", "name": "Station", "fields": [], "requiredAccess": "`read_products` access scope."},
    ]
    return {"data": {"__schema": {"queryType": {"name": "Query"}, "types": types}}}


@pytest.mark.parametrize("url", ["https://api.weather.example/graphql.json", "https://shopify.dev.evil.example/x.json"])
def test_a_foreign_introspection_with_required_access_gets_no_shopify_scopes(url: str) -> None:
    from ramscope.specs import build_index
    from tests._specs import make_spec

    index = build_index(make_spec(_introspection(), url))
    assert [(e.key, e.requirements) for e in index.operations] == [("Query.stations", None), ("Query.secret", None)]
    assert not any(s.name.startswith("shopify") for s in index.schemes)


def test_shopifys_own_host_keeps_its_readings() -> None:
    from ramscope.specs import build_index
    from tests._specs import make_spec

    index = build_index(make_spec(_introspection(), "https://shopify.dev/admin-graphql/2026-10.json"))
    assert all(e.requirements is not None for e in index.operations)


def test_a_foreign_introspection_stays_undetermined_end_to_end(tmp_path: Path) -> None:
    """Exit 3 stays: the accesses are incomplete, never 'needs read_products'."""
    with LocalHTTPServer() as srv:
        srv.route("/graphql.json", body=orjson.dumps(_introspection()))
        settings = Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=20)
        manifest = card(srv, ("/graphql.json", "/graphql", {"operation_id": "Query.secret"}, {}))
        with Engine(settings) as engine:
            report = engine.derive({"name": "weather agent", "resourceAccessManifest": manifest})
    (a,) = report.accesses
    assert not a.complete
    assert a.scopes in (None, [])
