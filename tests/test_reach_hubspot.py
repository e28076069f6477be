"""HubSpot: the CRM object services of HubSpot's spec collection (HubSpot/HubSpot-public-api-spec-collection,
PublicApiSpecs, e.g. CRM/Contacts 2026-09-beta) give every operation one list of about 80 alternatives,
every object type's scopes; the path names the type, and HubSpot's scopes page names its scopes.

HubSpot's collection is not licensed for external use, so the spec here is built in its exact shape
(server, the ``oauth2`` scheme, one ``{oauth2: [scope]}`` alternative per scope, ``<method>-<path>_<path>``
operation ids), with a subset of the real list in its order."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest

from ramscope.outputs.report import Report
from tests.support.httpserver import LocalHTTPServer
from tests.test_derive import card
from tests.test_reach_derive import codes, derive

__all__ = ["derive"]  # the fixture, shared with the other reach tests

BASE = "/crm/objects/2026-09-beta"
#: A subset, in order, of the list every operation of the real CRM/Contacts 2026-09-beta file carries.
LISTED = [
    "oauth",
    "crm.objects.deals.read",
    "crm.objects.companies.write",
    "crm.objects.companies.read",
    "crm.objects.contacts.highly_sensitive.read.v2",
    "crm.objects.contacts.highly_sensitive.write.v2",
    "crm.objects.contacts.sensitive.write.v2",
    "crm.objects.calls.read",
    "tickets",
    "crm.objects.contacts.read",
    "crm.objects.deals.write",
    "crm.objects.appointments.read",
    "crm.objects.contacts.write",
    "crm.objects.notes.read",
    "crm.objects.contacts.sensitive.read.v2",
]


def _op(method: str, path: str) -> dict[str, Any]:
    return {
        "operationId": f"{method}-{path}_{path}",
        "responses": {"200": {"description": "trimmed"}},
        "security": [{"oauth2": [s]} for s in LISTED],
    }


def _spec() -> bytes:
    paths: dict[str, dict[str, Any]] = {}
    for method, path in [
        ("get", f"{BASE}/contacts"),
        ("post", f"{BASE}/contacts"),
        ("post", f"{BASE}/contacts/batch/read"),
        ("post", f"{BASE}/contacts/search"),
        ("patch", f"{BASE}/contacts/{{contactId}}"),
        ("get", f"{BASE}/0-3"),
        ("post", f"{BASE}/0-3/batch/archive"),
        ("get", f"{BASE}/tickets/{{ticketId}}"),
        ("get", f"{BASE}/notes"),
        ("get", f"{BASE}/{{objectType}}/{{objectId}}"),
    ]:
        paths.setdefault(path, {})[method] = _op(method, path)
    return orjson.dumps(
        {
            "openapi": "3.0.1",
            "info": {"title": "Contacts", "version": "2026-09-beta"},
            "servers": [{"url": "https://api.hubapi.com"}],
            "components": {
                "securitySchemes": {
                    "oauth2": {
                        "type": "oauth2",
                        "flows": {
                            "authorizationCode": {
                                "authorizationUrl": "https://app.hubspot.com/oauth/authorize",
                                "tokenUrl": "https://api.hubapi.com/oauth/v1/token",
                                "scopes": {s: "" for s in LISTED},
                            }
                        },
                    }
                }
            },
            "paths": paths,
        }
    )


@pytest.fixture(scope="module")
def server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        srv.route("/hubspot.json", body=_spec())
        yield srv


def _one(derive: Callable[..., Report], server: LocalHTTPServer, method: str, path: str) -> tuple[Report, Any]:
    report = derive(card(server, ("/hubspot.json", path, {"http_method": method}, {"identity": "END_USER"})))
    return report, report.accesses[0]


@pytest.mark.parametrize(
    ("method", "path", "scopes"),
    [
        ("GET", f"{BASE}/contacts", ["crm.objects.contacts.read"]),
        ("POST", f"{BASE}/contacts/search", ["crm.objects.contacts.read"]),
        ("POST", f"{BASE}/contacts/batch/read", ["crm.objects.contacts.read"]),
        ("POST", f"{BASE}/contacts", ["crm.objects.contacts.write"]),
        ("PATCH", f"{BASE}/contacts/{{contactId}}", ["crm.objects.contacts.write"]),
        ("GET", f"{BASE}/0-3", ["crm.objects.deals.read"]),
        ("POST", f"{BASE}/0-3/batch/archive", ["crm.objects.deals.write"]),
        ("GET", f"{BASE}/tickets/{{ticketId}}", ["tickets"]),
    ],
)
def test_the_object_type_in_the_path_picks_its_scope(
    derive: Callable[..., Report], server: LocalHTTPServer, method: str, path: str, scopes: list[str]
) -> None:
    """Contacts take crm.objects.contacts.read / .write (reads by POST too), deals (0-3) the deals scopes,
    tickets the tickets scope: never another object's scope from the shared list, and not ambiguous."""
    report, a = _one(derive, server, method, path)
    assert a.scopes == scopes
    assert a.choice is not None
    assert a.choice["ambiguous"] is False
    assert a.requirements_source.startswith("quirk:hubspot")
    assert "ambiguous-scope-choice" not in codes(report)


@pytest.mark.parametrize("path", [f"{BASE}/{{objectType}}/{{objectId}}", f"{BASE}/notes"])
def test_a_type_the_path_does_not_settle_stays_ambiguous(
    derive: Callable[..., Report], server: LocalHTTPServer, path: str
) -> None:
    """{objectType} (the data addressed decides) and a type whose write scope HubSpot's list lacks (notes)
    keep the spec's whole list: the choice is ambiguous, said so."""
    report, a = _one(derive, server, "GET", path)
    assert a.choice is not None
    assert a.choice["ambiguous"] is True
    assert a.requirements_source == "spec"
    assert "ambiguous-scope-choice" in codes(report)
