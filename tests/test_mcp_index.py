"""The MCP adapter, purely: captures in, requirements out (challenge scope, PRM scopes, inferred credentials,
authorization-server grants), and malformed tool lists reported, not fatal."""

from __future__ import annotations

from typing import Any

import pytest

from ramscope.derive.resolve import Unresolved, resolve
from ramscope.errors import SpecError
from ramscope.specs import FlowKind, SchemeRequirement, SchemeType, SpecIndex, SpecKind, build_index
from ramscope.specs.mcp import (
    API_KEY_SCHEME,
    BEARER_SCHEME,
    CAPTURE_FORMAT,
    CREDENTIAL_SCHEME,
    OAUTH_SCHEME,
    server_requirements,
)
from tests._specs import make_spec, rest_operation

URL = "https://mcp.example.com/mcp"


def _capture(*, tools: list[Any] | None = None, listed: bool = True, **auth: Any) -> dict[str, Any]:
    block: dict[str, Any] = {
        "status": None,
        "challenges": [],
        "error_body": None,
        "protected_resource_metadata": {"tried": [], "url": None, "document": None},
        "authorization_server": None,
    }
    block.update(auth)
    return {
        "format": CAPTURE_FORMAT,
        "endpoint": URL,
        "era": "handshake" if listed else None,
        "protocol_version": "2025-11-25" if listed else None,
        "client_capabilities": {},
        "server_info": {"name": "srv", "version": "1"},
        "tools_listed": listed,
        "tools": tools if tools is not None else ([{"name": "t"}] if listed else []),
        "pages": 1 if listed else 0,
        "steps": [],
        "auth": block,
    }


def _index(capture: dict[str, Any]) -> SpecIndex:
    return build_index(make_spec(capture, URL), kind_hint=SpecKind.MCP)


def _prm(scopes: list[str] | None, issuer: str | None = "https://as.example.com") -> dict[str, Any]:
    doc: dict[str, Any] = {"resource": URL}
    if issuer:
        doc["authorization_servers"] = [issuer]
    if scopes is not None:
        doc["scopes_supported"] = scopes
    return {"tried": [], "url": "https://mcp.example.com/.well-known/oauth-protected-resource/mcp", "document": doc}


def _bearer(**params: str) -> list[dict[str, Any]]:
    return [{"scheme": "Bearer", "params": params, "token68": None}]


def test_the_challenge_scope_wins_over_scopes_supported() -> None:
    """MCP authorization: the 401's scope is what the client requests; scopes_supported only describes."""
    index = _index(
        _capture(
            listed=False,
            status=401,
            challenges=_bearer(scope="read write"),
            protected_resource_metadata=_prm(["read", "write", "admin"]),
        )
    )
    assert server_requirements(index) == ((SchemeRequirement(OAUTH_SCHEME, ("read", "write")),),)
    assert index.extra["server_security_source"] == "challenge"
    # The PRM names an issuer but no AS metadata was obtained: no grant, so no flow, is invented.
    assert index.scheme_map[OAUTH_SCHEME].flows == ()


def test_scopes_supported_when_the_challenge_names_none() -> None:
    """No scope in the challenge: all of scopes_supported are requested, as the MCP spec tells clients."""
    index = _index(
        _capture(listed=False, status=401, challenges=_bearer(), protected_resource_metadata=_prm(["a", "b"]))
    )
    assert server_requirements(index) == ((SchemeRequirement(OAUTH_SCHEME, ("a", "b")),),)
    assert index.extra["server_security_source"] == "protected-resource-metadata"


def test_unreachable_authorization_server_metadata_leaves_the_grants_unknown() -> None:
    """Without AS metadata: OAuth inferred with no flow (which identity can use it is unknown), a warning.

    Issue 14 item 4: an invented authorization-code flow made AGENT "incompatible" and END_USER "compatible"
    on no evidence."""
    index = _index(
        _capture(
            listed=False,
            status=401,
            challenges=_bearer(),
            protected_resource_metadata=_prm(["a"]),
            authorization_server={"issuer": "https://as.example.com", "tried": [], "url": None, "document": None},
        )
    )
    scheme = index.scheme_map[OAUTH_SCHEME]
    assert scheme.inferred
    assert scheme.flows == ()
    assert "mcp-as-metadata-unavailable" in [d.code for d in index.diagnostics]


@pytest.mark.parametrize(
    ("grants", "kinds"),
    [
        (None, [FlowKind.AUTHORIZATION_CODE]),  # RFC 8414 default, minus implicit (not in OAuth 2.1)
        (["client_credentials"], [FlowKind.CLIENT_CREDENTIALS]),
        (
            ["authorization_code", "urn:ietf:params:oauth:grant-type:device_code", "refresh_token"],
            [FlowKind.AUTHORIZATION_CODE, FlowKind.DEVICE_CODE],
        ),
    ],
)
def test_grants_become_flows(grants: list[str] | None, kinds: list[FlowKind]) -> None:
    """grant_types_supported decides the flows, hence whether an agent identity can use client credentials."""
    doc: dict[str, Any] = {"issuer": "https://as.example.com", "token_endpoint": "https://as.example.com/token"}
    if grants is not None:
        doc["grant_types_supported"] = grants
    index = _index(
        _capture(
            listed=False,
            status=401,
            challenges=_bearer(),
            protected_resource_metadata=_prm(["a"]),
            authorization_server={"issuer": "https://as.example.com", "tried": [], "url": "u", "document": doc},
        )
    )
    scheme = index.scheme_map[OAUTH_SCHEME]
    assert [f.kind for f in scheme.flows] == kinds
    assert {f.token_url for f in scheme.flows} == {"https://as.example.com/token"}
    assert not scheme.inferred


def test_grants_ramscope_cannot_map_leave_the_flow_unknown_with_a_finding() -> None:
    """An AS offering only grants outside OAuth 2.1's useful set: no flow assumed, reported."""
    index = _index(
        _capture(
            listed=False,
            status=401,
            challenges=_bearer(),
            protected_resource_metadata=_prm(["a"]),
            authorization_server={
                "issuer": "https://as.example.com",
                "tried": [],
                "url": "u",
                "document": {"issuer": "https://as.example.com", "grant_types_supported": ["implicit", "password"]},
            },
        )
    )
    assert index.scheme_map[OAUTH_SCHEME].inferred
    assert index.scheme_map[OAUTH_SCHEME].flows == ()
    assert "mcp-as-metadata-unavailable" in [d.code for d in index.diagnostics]


@pytest.mark.parametrize(
    ("status", "challenges", "body", "name", "kind", "detail"),
    [
        # 2025-03-26 OAuth with default endpoints, or a static token: which identity can obtain it is unknown.
        (401, _bearer(error="invalid_token"), None, BEARER_SCHEME, SchemeType.UNKNOWN, "bearer"),
        (401, [{"scheme": "Basic", "params": {"realm": "mcp"}}], None, "mcp-http-basic", SchemeType.HTTP, "basic"),
        (401, [{"scheme": "ApiKey", "params": {"header": "X-Key"}}], None, API_KEY_SCHEME, SchemeType.API_KEY, "X-Key"),
        (403, [], '{"error": "Invalid api_key"}', API_KEY_SCHEME, SchemeType.API_KEY, ""),
        (403, [], '{"error": "forbidden"}', CREDENTIAL_SCHEME, SchemeType.UNKNOWN, ""),
        (401, [], None, CREDENTIAL_SCHEME, SchemeType.UNKNOWN, ""),
    ],
)
def test_a_demanded_credential_without_metadata_is_never_nothing(
    status: int, challenges: list[Any], body: str | None, name: str, kind: SchemeType, detail: str
) -> None:
    """401/403 without OAuth metadata: the credential the evidence shows (bearer, HTTP auth, API key, unknown)."""
    index = _index(_capture(listed=False, status=status, challenges=challenges, error_body=body, step="initialize"))
    assert server_requirements(index) == ((SchemeRequirement(name),),)
    scheme = index.scheme_map[name]
    assert scheme.type is kind
    assert scheme.inferred
    assert detail in (scheme.http_scheme or scheme.api_key_name or "")
    assert f"HTTP {status} at initialize" in scheme.description
    assert [d.code for d in index.diagnostics] == ["mcp-credential-inferred"]


def test_anonymous_listing_without_metadata_needs_nothing_and_says_so() -> None:
    """Listed without a credential, no PRM: () with an info finding that bears on every server-wide tool."""
    index = _index(
        _capture(protected_resource_metadata={"tried": [{"url": "u", "status": 404}], "url": None, "document": None})
    )
    assert index.operations[0].requirements == ()
    assert index.security_declared
    (diag,) = index.diagnostics
    assert (diag.code, diag.severity.value) == ("mcp-no-authorization", "info")
    assert server_requirements(index) == ()


def test_malformed_tools_are_skipped_and_reported() -> None:
    """A non-object, a nameless tool and a repeated name are findings; the rest is indexed."""
    index = _index(
        _capture(tools=["junk", {"description": "no name"}, {"name": "ok"}, {"name": "ok", "title": "again"}])
    )
    assert [e.key for e in index.operations] == ["ok"]
    assert [d.code for d in index.diagnostics if d.severity.value == "warning"] == [
        "invalid-operation",
        "invalid-operation",
        "duplicate-operation-id",
    ]


def test_tool_security_schemes_malformed_is_unknown() -> None:
    """securitySchemes that is not an array, or with non-string scopes: the tool's requirements are unknown."""
    index = _index(
        _capture(
            tools=[
                {"name": "a", "securitySchemes": {"type": "noauth"}},
                {"name": "b", "securitySchemes": [{"type": "oauth2", "scopes": "x"}]},
            ]
        )
    )
    assert [e.requirements for e in index.operations] == [None, None]
    assert [d.code for d in index.diagnostics if d.code == "invalid-security"] == ["invalid-security"] * 2


def test_capture_of_another_format_is_refused() -> None:
    """A capture of a future format is an unsupported spec, not misread."""
    capture = _capture()
    capture["format"] = "ramscope-mcp-capture/2"
    with pytest.raises(SpecError, match="ramscope-mcp-capture/2"):
        _index(capture)


def test_index_round_trips_through_json() -> None:
    """The index, annotations and server-wide requirement included, survives to_json/from_json."""
    index = _index(_capture(listed=False, status=401, challenges=_bearer(scope="s")))
    back = SpecIndex.from_json(index.to_json())
    assert server_requirements(back) == server_requirements(index) == ((SchemeRequirement(OAUTH_SCHEME, ("s",)),),)
    assert back.extra["tools_listed"] is False


def test_a_listed_tool_that_needs_a_token_means_others_may_be_hidden() -> None:
    """Issue 14 item 18: one tool declaring oauth2 without noauth: a missing tool may exist behind authorization."""
    tools = [{"name": "read_notes", "securitySchemes": [{"type": "oauth2", "scopes": ["notes.read"]}]}]
    index = _index(_capture(tools=tools))
    got = resolve(*rest_operation(path="delete_notes", spec_url=URL), index)
    assert isinstance(got, Unresolved)
    assert got.reason == "mcp-tool-not-listed"
    assert "read_notes" in got.message
