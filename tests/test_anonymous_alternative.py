"""An operation whose security lists an anonymous alternative (`{}`) beside credentials: the least privilege is
no credential at all for the agent's own identity, said as `anonymous-allowed` (not `none-required`, which is
`security: []`); an access on a user's behalf needs a user's delegation, so not the anonymous alternative;
without that alternative, an agent that cannot use the offered credential stays unknown."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.outputs.report import Report
from tests.support.httpserver import LocalHTTPServer

AUTH_CODE = {
    "authorizationCode": {
        "authorizationUrl": "https://id.example/authorize",
        "tokenUrl": "https://id.example/token",
        "scopes": {"items.read": "See your items"},
    }
}
CLIENT = {"clientCredentials": {"tokenUrl": "https://id.example/token", "scopes": {"items.read": "See items"}}}


def _spec(security: list[dict[str, list[str]]], flows: dict[str, Any]) -> bytes:
    return json.dumps(
        {
            "openapi": "3.0.3",
            "info": {"title": "Items", "version": "1"},
            "components": {"securitySchemes": {"oauth": {"type": "oauth2", "flows": flows}}},
            "paths": {
                "/items": {
                    "get": {
                        "operationId": "listItems",
                        "security": security,
                        "responses": {"200": {"description": "ok"}},
                    }
                }
            },
        }
    ).encode()


@pytest.fixture
def server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        srv.route("/code-or-anonymous.json", body=_spec([{"oauth": ["items.read"]}, {}], AUTH_CODE))
        srv.route("/client-or-anonymous.json", body=_spec([{"oauth": ["items.read"]}, {}], CLIENT))
        srv.route("/anonymous-only.json", body=_spec([{}], AUTH_CODE))
        srv.route("/code-only.json", body=_spec([{"oauth": ["items.read"]}], AUTH_CODE))
        yield srv


def _derive(server: LocalHTTPServer, tmp_path: Path, spec: str, identity: str) -> Report:
    manifest = {
        "resources": [
            {
                "id": "r",
                "interaction_protocol": "REST",
                "owner": "CONSUMER",
                "spec": {"spec_url": server.url(spec), "resource_path": "/items"},
            }
        ],
        "operations": [{"id": "o", "resource": "r", "api_operation_spec": {"operation_id": "listItems"}}],
        "resource_accesses": [
            {
                "id": "a",
                "operation": "o",
                "identity_used": identity,
                "necessity": "REQUIRED",
                "access_justification": "x",
            }
        ],
    }
    settings = Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=10)
    with Engine(settings) as engine:
        return engine.derive({"name": "test agent", "resourceAccessManifest": manifest})


@pytest.mark.parametrize(
    ("spec", "identity", "compatible"),
    [
        ("/code-or-anonymous.json", "AGENT", [False, True]),
        ("/client-or-anonymous.json", "AGENT", [True, True]),
        ("/anonymous-only.json", "AGENT", [True]),
    ],
    ids=["agent-beside-user-oauth", "agent-beside-client-credentials", "agent-anonymous-only"],
)
def test_an_anonymous_alternative_is_the_least_privilege(
    server: LocalHTTPServer, tmp_path: Path, spec: str, identity: str, compatible: list[bool]
) -> None:
    """The anonymous alternative is picked, as anonymous-allowed: no scope, no credential, complete, exit 0."""
    report = _derive(server, tmp_path, spec, identity)
    (a,) = report.to_dict()["accesses"]
    assert (a["complete"], a["scopes"], a["reason"]) == (True, [], None)
    assert a["choice"]["method"] == "anonymous-allowed"
    assert [alt["compatible"] for alt in a["alternatives"]] == compatible
    assert a["alternatives"][-1]["scopes"] == []
    tier = report.to_dict()["tiers"]["REQUIRED"][identity]
    assert (tier["scopes"], tier["credentials"], tier["complete"]) == ([], [], True)
    assert report.exit_code == 0


def test_an_agent_beside_user_oauth_says_why_that_alternative_is_not_its_own(
    server: LocalHTTPServer, tmp_path: Path
) -> None:
    """The authorization-code alternative the agent cannot use is listed, with why, beside the pick."""
    (a,) = _derive(server, tmp_path, "/code-or-anonymous.json", "AGENT").to_dict()["accesses"]
    oauth = a["alternatives"][0]
    assert (oauth["scopes"], oauth["why_not"]) == (["items.read"], "scheme 'oauth' needs a user's delegation")


def test_a_user_access_does_not_take_the_anonymous_alternative(server: LocalHTTPServer, tmp_path: Path) -> None:
    """END_USER acts with the user's delegation: the anonymous alternative delegates nothing, the scope is picked."""
    report = _derive(server, tmp_path, "/code-or-anonymous.json", "END_USER")
    (a,) = report.to_dict()["accesses"]
    assert (a["complete"], a["scopes"], a["choice"]["method"]) == (True, ["items.read"], "least-privilege")
    assert [(alt["compatible"], alt.get("why_not")) for alt in a["alternatives"]] == [
        (True, None),
        (False, "no term is delegated by the user"),
    ]
    assert report.to_dict()["tiers"]["REQUIRED"]["END_USER"]["scopes"] == ["items.read"]


def test_without_the_anonymous_alternative_the_agent_is_unknown(server: LocalHTTPServer, tmp_path: Path) -> None:
    """The same operation without `{}`: the agent has no usable alternative, never "needs nothing"."""
    report = _derive(server, tmp_path, "/code-only.json", "AGENT")
    (a,) = report.to_dict()["accesses"]
    assert (a["complete"], a["scopes"], a["reason"]) == (False, None, "no-compatible-alternative")
    assert report.exit_code == 3
