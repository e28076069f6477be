"""Issue 35: where several documented scopes do the job, the narrowest by the provider's own resource
scoping is picked and the broader listed beside it: Shopify's ``locations`` gets ``read_locations`` (the
scope of the Location it returns), not ``read_markets_home`` or ``read_inventory``; HubSpot's legacy
``e-commerce`` (products and line items) yields to the object's own ``crm.objects.products.*``.
(Zendesk's resource scopes and Notion's user information without email: tests/test_reach_derive.py.)"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.derive.reach import INCLUDES
from ramscope.outputs.report import Report
from ramscope.providers.reach import classify
from tests._specs import FIXTURES
from tests.support.httpserver import LocalHTTPServer
from tests.support.shopify import shopify_served_by
from tests.test_derive import card

#: The scopes HubSpot's Products v3 service lists on every operation (one {oauth2: [scope]} each), in the
#: shape of HubSpot's spec collection (not licensed for external use, so not copied).
PRODUCT_SCOPES = ["e-commerce", "crm.objects.products.read", "crm.objects.products.write"]


def _hubspot_products() -> bytes:
    def op(method: str) -> dict[str, Any]:
        return {
            "operationId": f"{method}-/crm/v3/objects/products",
            "responses": {"200": {"description": "trimmed"}},
            "security": [{"oauth2": [s]} for s in PRODUCT_SCOPES],
        }

    return orjson.dumps(
        {
            "openapi": "3.0.1",
            "info": {"title": "Products", "version": "v3"},
            "servers": [{"url": "https://api.hubapi.com"}],
            "components": {
                "securitySchemes": {
                    "oauth2": {
                        "type": "oauth2",
                        "flows": {
                            "authorizationCode": {
                                "authorizationUrl": "https://app.hubspot.com/oauth/authorize",
                                "tokenUrl": "https://api.hubapi.com/oauth/v1/token",
                                "scopes": {s: "" for s in PRODUCT_SCOPES},
                            }
                        },
                    }
                }
            },
            "paths": {"/crm/v3/objects/products": {"get": op("get"), "post": op("post")}},
        }
    )


@pytest.fixture(scope="module")
def server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        srv.route("/shopify.json", body=(FIXTURES / "graphql" / "shopify-admin-2026-10.trimmed.json").read_bytes())
        srv.route("/hubspot-products.json", body=_hubspot_products())
        yield srv


@pytest.fixture(scope="module", autouse=True)
def _shopify_is_served_here(server: LocalHTTPServer) -> Iterator[None]:
    """The local server stands in for shopify.dev (:mod:`tests.support.shopify`)."""
    with shopify_served_by(server):
        yield


@pytest.fixture(scope="module")
def derive(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Report]:
    cache: Path = tmp_path_factory.mktemp("narrowest")

    def run(manifest: dict[str, Any]) -> Report:
        with Engine(Settings(cache_dir=cache, allow_private_network=True, timeout=30)) as engine:
            return engine.derive({"name": "narrowest", "resourceAccessManifest": manifest})

    return run


def _set_aside(a: Any) -> dict[tuple[str, ...], str | None]:
    return {tuple(x["scopes"]): x["set_aside"] for x in a.alternatives or [] if x.get("compatible", True)}


def test_shopify_locations_gets_the_scope_of_the_location(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """Location's requiredAccess: `read_locations`, `read_inventory` or `read_markets_home`; the access-scopes
    page pairs read_locations with Location: the others are other resources' scopes, listed beside it."""
    report = derive(card(server, ("/shopify.json", "", {"operation_id": "Query.locations"}, {"identity": "AGENT"})))
    (a,) = report.accesses
    assert a.scopes == ["read_locations"]
    why = _set_aside(a)
    for other in ("read_inventory", "read_markets_home"):
        assert why[(other,)] == (
            "a scope of another resource, where the scope of the Location the operation returns does the job"
        )


@pytest.mark.parametrize(
    ("method", "pick"), [("POST", "crm.objects.products.write"), ("GET", "crm.objects.products.read")]
)
def test_hubspot_legacy_e_commerce_yields_to_the_objects_own_scope(
    derive: Callable[..., Report], server: LocalHTTPServer, method: str, pick: str
) -> None:
    report = derive(card(server, ("/hubspot-products.json", "/crm/v3/objects/products", {"http_method": method}, {})))
    (a,) = report.accesses
    assert a.scopes == [pick]
    assert _set_aside(a)[("e-commerce",)].startswith(INCLUDES + "crm.objects.products.")


def test_e_commerce_is_a_write_permission_by_hubspots_words() -> None:
    """Its name says neither read nor write; the reviewed class says what HubSpot's page does."""
    r = classify("e-commerce", provider="hubspot")
    assert r.level.name == "WRITE"
    assert "crm.objects.line_items.write" in r.includes
