"""Deriving cards whose REST resources are a GraphQL schema or a Stone file, end to end (local server)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.outputs.report import Report
from ramscope.schema import load_schema
from tests._specs import FIXTURES
from tests.support.httpserver import LocalHTTPServer
from tests.support.shopify import shopify_served_by

_TEXT = {"Content-Type": "text/plain; charset=utf-8"}


@pytest.fixture(scope="module")
def server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        srv.route("/shopify.json", body=(FIXTURES / "graphql" / "shopify-admin-2026-10.trimmed.json").read_bytes())
        for name in ("files.trimmed.stone", "team.trimmed.stone"):
            srv.route(f"/{name}", body=(FIXTURES / "stone" / name).read_bytes(), content_type=None, headers=_TEXT)
        yield srv


@pytest.fixture(autouse=True)
def _shopify_is_served_here(server: LocalHTTPServer) -> Iterator[None]:
    """The local server stands in for shopify.dev (:mod:`tests.support.shopify`)."""
    with shopify_served_by(server):
        yield


def _derive(server: LocalHTTPServer, tmp_path: Path, *entries: tuple[str, str, dict[str, Any], str]) -> Report:
    resources, operations, accesses = [], [], []
    for i, (route, path, op_spec, identity) in enumerate(entries):
        resources.append(
            {
                "id": f"r{i}",
                "interaction_protocol": "REST",
                "owner": "CONSUMER",
                "display_name": f"resource {i}",
                "spec": {"spec_url": server.url(route), "resource_path": path},
            }
        )
        operations.append({"id": f"o{i}", "resource": f"r{i}", "api_operation_spec": op_spec})
        accesses.append(
            {
                "id": f"a{i}",
                "operation": f"o{i}",
                "identity_used": identity,
                "necessity": "REQUIRED",
                "access_justification": "because the test says so",
            }
        )
    settings = Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=20)
    with Engine(settings) as engine:
        return engine.derive(
            {
                "name": "test agent",
                "resourceAccessManifest": {
                    "resources": resources,
                    "operations": operations,
                    "resource_accesses": accesses,
                },
            }
        )


def test_shopify_operations(server: LocalHTTPServer, tmp_path: Path) -> None:
    """productCreate -> write_products; orders (bare name) -> read_orders, its slices offered; app -> undetermined."""
    r = _derive(
        server,
        tmp_path,
        ("/shopify.json", "", {"operation_id": "Mutation.productCreate", "http_method": "POST"}, "END_USER"),
        ("/shopify.json", "", {"operation_id": "orders"}, "END_USER"),
        ("/shopify.json", "", {"operation_id": "QueryRoot.app"}, "AGENT"),
    )
    create, orders, app = r.accesses
    assert (create.complete, create.scopes) == (True, ["write_products"])
    assert create.target is not None
    assert {k: create.target[k] for k in ("kind", "key", "method", "matched_by", "security_source")} == {
        "kind": "graphql",
        "key": "Mutation.productCreate",
        "method": "POST",
        "matched_by": "operation_id",
        "security_source": "field",
    }
    assert (orders.complete, orders.scopes) == (True, ["read_orders"])
    assert orders.target is not None
    assert orders.target["security_source"] == "return-type"
    assert (app.complete, app.reason) == (False, "security-undeclared")
    assert r.exit_code == 3


def test_graphql_needs_an_operation_id(server: LocalHTTPServer, tmp_path: Path) -> None:
    """One endpoint serves every root field: a path and method alone select none, and say so."""
    r = _derive(
        server, tmp_path, ("/shopify.json", "/admin/api/2026-10/graphql.json", {"http_method": "POST"}, "END_USER")
    )
    (a,) = r.accesses
    assert (a.complete, a.reason) == (False, "no-selector")


def test_dropbox_routes(server: LocalHTTPServer, tmp_path: Path) -> None:
    """files/download -> files.content.read; copy_v2 by URL path; a team route for END_USER, with its admin note."""
    r = _derive(
        server,
        tmp_path,
        ("/files.trimmed.stone", "", {"operation_id": "files/download"}, "END_USER"),
        ("/files.trimmed.stone", "/2/files/copy_v2", {"http_method": "POST"}, "END_USER"),
        ("/files.trimmed.stone", "", {"operation_id": "files/copy_v2"}, "END_USER"),
        ("/team.trimmed.stone", "", {"operation_id": "team/members/list:2"}, "END_USER"),
    )
    download, copy_path, copy_id, members = r.accesses
    assert (download.complete, download.scopes) == (True, ["files.content.read"])
    assert download.target is not None
    assert download.target["kind"] == "stone"
    assert (copy_path.scopes, copy_path.target["matched_by"]) == (["files.content.write"], "path_method")  # type: ignore[index]
    assert (copy_id.scopes, copy_id.target["key"]) == (["files.content.write"], "files/copy:2")  # type: ignore[index]
    assert (members.complete, members.scopes) == (True, ["members.read"])
    assert members.target is not None
    assert members.target["hints"]["principal"] == "admin"
    team_notes = [d for d, _ in r.diagnostics if d.code == "stone-team-route"]
    assert [d.path for d in team_notes] == ["/resourceAccessManifest/resources/3/spec/spec_url"]
    # A team token's scope is an administrator's: the pick says so, as for Google's Admin SDK.
    assert members.choice is not None
    assert members.choice["reach"]["members.read"]["principal"] == "admin"
    assert members.choice["fallback"] == "admin"
    assert [d.path for d, _ in r.diagnostics if d.code == "administrator-permission"] == [
        "/resourceAccessManifest/resource_accesses/3"
    ]


def test_reports_match_their_schema(server: LocalHTTPServer, tmp_path: Path) -> None:
    """GraphQL and Stone targets (kinds, hints) validate against `ramscope schema report`."""
    r = _derive(
        server,
        tmp_path,
        ("/shopify.json", "", {"operation_id": "orders"}, "END_USER"),
        ("/shopify.json", "", {"operation_id": "Query.app"}, "AGENT"),
        ("/files.trimmed.stone", "", {"operation_id": "files/get_thumbnail:2"}, "AGENT"),
        ("/team.trimmed.stone", "", {"operation_id": "team/members/list:2"}, "END_USER"),
    )
    doc = json.loads(json.dumps(r.to_dict()))
    jsonschema.Draft202012Validator(load_schema("report"), format_checker=jsonschema.FormatChecker()).validate(doc)
    assert [s["kind"] for s in doc["specs"]] == ["graphql", "stone", "stone"]
    assert [a["scopes"] for a in doc["accesses"]] == [["read_orders"], None, [], ["members.read"]]


def test_shopify_prose_readings_end_to_end(server: LocalHTTPServer, tmp_path: Path) -> None:
    """Scope families, the theme exemption and a connection's edge node derive; argument-bound access does not."""
    r = _derive(
        server,
        tmp_path,
        ("/shopify.json", "", {"operation_id": "Mutation.deliveryProfileCreate"}, "END_USER"),
        ("/shopify.json", "", {"operation_id": "Mutation.refundCreate"}, "END_USER"),
        ("/shopify.json", "", {"operation_id": "Mutation.themeFilesUpsert"}, "END_USER"),
        ("/shopify.json", "", {"operation_id": "Query.customerSegmentMembers"}, "END_USER"),
        ("/shopify.json", "", {"operation_id": "Query.availableCarrierServices"}, "END_USER"),
        ("/shopify.json", "", {"operation_id": "Mutation.metafieldsSet"}, "END_USER"),
    )
    delivery, refund, theme, members, carriers, metafields = r.accesses
    assert (delivery.complete, delivery.scopes) == (True, ["write_shipping"])
    assert (refund.complete, refund.scopes) == (True, ["write_orders"])
    assert (theme.complete, theme.scopes) == (True, ["write_themes"])
    assert theme.target is not None
    assert theme.target["hints"]["also"].startswith("and an exemption from Shopify to modify theme files")
    assert (members.complete, members.scopes) == (True, ["read_customers"])
    assert members.target is not None
    assert members.target["hints"]["access_from_type"] == "CustomerSegmentMember"
    # read_orders or read_shipping: read_shipping grants the fewer of this schema's fields.
    assert (carriers.complete, carriers.scopes) == (True, ["read_shipping"])
    assert [a["scopes"] for a in carriers.alternatives] == [["read_orders"], ["read_shipping"]]
    assert (metafields.complete, metafields.scopes) == (False, None)
