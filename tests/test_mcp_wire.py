"""MCP conversations replayed from hand-written cassettes: legacy-only, modern-only, SSE corner cases,
pagination, per-tool security schemes, an API-key server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from ramscope.config import Settings
from ramscope.derive.resolve import Target, resolve
from ramscope.errors import CassetteMissError
from ramscope.specs import SchemeRequirement, SchemeType, SpecIndex, SpecKind, build_index
from ramscope.specs.mcp import API_KEY_SCHEME, OAUTH_SCHEME
from ramscope.store import Origin, SpecStore
from tests._specs import rest_operation

MakeSettings = Callable[..., Settings]
CASSETTES = Path(__file__).parent / "fixtures" / "cassettes"


def _replay(make_settings: MakeSettings, name: str, url: str) -> tuple[dict[str, Any], SpecIndex]:
    with SpecStore(make_settings(cassette=CASSETTES / name, allow_private_network=False)) as store:
        spec = store.get(url, kind_hint=SpecKind.MCP)
    assert spec.origin is Origin.CASSETTE
    return orjson.loads(spec.body), build_index(spec, kind_hint=SpecKind.MCP)


def _tool(index: SpecIndex, name: str) -> Target:
    got = resolve(*rest_operation(path=name, spec_url=index.url), index)
    assert isinstance(got, Target), got
    return got


def test_legacy_only_server_falls_back_to_the_handshake(make_settings: MakeSettings) -> None:
    """400 "Server not initialized" → initialize; the echoed older version is accepted; LF SSE with priming."""
    capture, index = _replay(make_settings, "mcp-legacy-only.yaml", "https://legacy.example.com/mcp")
    assert (capture["era"], capture["protocol_version"]) == ("handshake", "2025-06-18")
    assert capture["steps"][0]["outcome"].startswith("not a stateless server (JSON-RPC error -32000")
    assert capture["session"] is True
    assert capture["session_ended"] == 200
    assert capture["server_info"]["name"] == "example-servers/everything"
    echo = _tool(index, "echo").entry
    assert echo.title == "Echo Tool"
    assert echo.extra["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
        "title": "Echo Tool",
    }
    assert echo.requirements == ()
    assert index.spec_version == "2025-06-18"


def test_modern_only_server_never_sees_initialize(make_settings: MakeSettings) -> None:
    """A stateless server is listed without a handshake (the cassette has no initialize to replay)."""
    capture, index = _replay(make_settings, "mcp-modern-only.yaml", "https://modern.example.com/mcp")
    assert (capture["era"], capture["protocol_version"]) == ("stateless", "2026-07-28")
    assert capture["list_meta"] == {"cacheScope": "public", "ttlMs": 60000}
    assert index.title == "Calendar Tools"
    assert [e.key for e in index.operations] == ["create_event", "list_events"]
    assert _tool(index, "create_event").entry.extra["annotations"]["destructiveHint"] is False
    assert _tool(index, "list_events").entry.extra["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": True,
    }


def test_sse_crlf_priming_and_events_before_the_result(make_settings: MakeSettings) -> None:
    """CRLF, priming events, retry, comments, a notification, a server ping with id "1", multi-line data."""
    capture, index = _replay(make_settings, "mcp-sse-crlf-priming.yaml", "https://sse.example.com/v1/mcp")
    assert (capture["era"], capture["protocol_version"]) == ("handshake", "2025-03-26")
    assert capture["server_info"] == {"name": "sse-corner-cases", "version": "0.9"}
    assert [e.key for e in index.operations] == ["summarize"]
    assert capture["session_ended"] == 405  # refused; not an error
    prm = capture["auth"]["protected_resource_metadata"]["tried"]
    assert prm[0]["url"] == "https://sse.example.com/.well-known/oauth-protected-resource/v1/mcp"


def test_a_server_ping_with_a_string_id_is_not_taken_for_the_response() -> None:
    """The server's own request with id "1" is a request (it has a method), not our response."""
    from ramscope.store.mcp import _find_response

    assert _find_response({"jsonrpc": "2.0", "id": "1", "method": "ping"}, 1) is None
    assert _find_response({"jsonrpc": "2.0", "id": "1", "result": {}}, 1) is not None
    assert _find_response({"jsonrpc": "2.0", "id": True, "result": {}}, 1) is None


def test_three_pages_of_tools(make_settings: MakeSettings) -> None:
    """nextCursor is followed (ids 2, 3, 4, each with the cursor it was given) until a page has none."""
    capture, index = _replay(make_settings, "mcp-pagination.yaml", "https://pages.example.com/mcp")
    assert capture["pages"] == 3
    assert [e.key for e in index.operations] == ["a_one", "a_two", "b_one", "c_one"]
    assert [s["step"] for s in capture["steps"]] == [
        "server/discover",
        "tools/list",
        "tools/list (page 2)",
        "tools/list (page 3)",
    ]
    assert index.extra["pages"] == 3


def test_per_tool_security_schemes(make_settings: MakeSettings) -> None:
    """Tool-level schemes (on the tool or in _meta) override the server's; noauth is an anonymous alternative."""
    capture, index = _replay(make_settings, "mcp-tool-security.yaml", "https://docs.example.com/mcp")
    oauth = OAUTH_SCHEME

    search = _tool(index, "search")
    assert search.entry.security_source == "tool"
    assert search.entry.requirements == ((), (SchemeRequirement(oauth, ("search.read",)),))

    create = _tool(index, "create_doc").entry
    assert create.requirements == ((SchemeRequirement(oauth, ("docs.write",)),),)

    purge = _tool(index, "admin_purge")
    assert purge.entry.security_source == "server-baseline"  # scopes_supported: a floor (issue 32)
    assert purge.entry.requirements == ((SchemeRequirement(oauth, ("docs.admin", "docs.write", "search.read")),),)
    assert "mcp-anonymous-listing" in [d.code for d in purge.diagnostics]

    conflicted = _tool(index, "conflicted")
    assert conflicted.entry.requirements == ((),)
    assert [d.code for d in conflicted.diagnostics] == ["mcp-conflicting-tool-security"]

    odd = _tool(index, "odd")
    assert odd.entry.requirements is None
    assert {d.code for d in odd.diagnostics} == {"invalid-security-scheme", "invalid-security"}

    scheme = index.scheme_map[oauth]
    assert not scheme.inferred
    assert [(f.kind.value, f.authorization_url, f.token_url) for f in scheme.flows] == [
        ("authorizationCode", "https://auth.example.com/tenant1/authorize", "https://auth.example.com/tenant1/token"),
        ("deviceCode", "https://auth.example.com/tenant1/device", "https://auth.example.com/tenant1/token"),
    ]
    assert [s for s, _ in scheme.flows[0].scopes] == ["search.read", "docs.write", "docs.admin"]
    tried = capture["auth"]["authorization_server"]["tried"]
    assert [(t["url"], t["outcome"]) for t in tried] == [
        ("https://auth.example.com/.well-known/oauth-authorization-server/tenant1", "not found"),
        ("https://auth.example.com/.well-known/openid-configuration/tenant1", "used"),
    ]


def test_api_key_server_is_never_no_auth(make_settings: MakeSettings) -> None:
    """401 without a challenge or metadata, and a body naming the key: an apiKey requirement, with the evidence."""
    capture, index = _replay(make_settings, "mcp-api-key.yaml", "https://keyed.example.com/mcp")
    assert capture["tools_listed"] is False
    assert capture["auth"]["status"] == 401
    got = _tool(index, "anything")
    assert got.matched_by == "tool_name_unverified"
    assert got.entry.requirements == ((SchemeRequirement(API_KEY_SCHEME),),)
    scheme = index.scheme_map[API_KEY_SCHEME]
    assert (scheme.type, scheme.api_key_in, scheme.api_key_name, scheme.inferred) == (
        SchemeType.API_KEY,
        "header",
        "X-API-Key",
        True,
    )
    assert "Missing API key: send it in the X-API-Key header" in scheme.description
    assert "HTTP 401 at initialize" in scheme.description
    assert {d.code for d in got.diagnostics} == {"mcp-tool-unverified", "mcp-credential-inferred"}


def test_a_conversation_the_cassette_lacks_is_a_miss_not_a_guess(make_settings: MakeSettings) -> None:
    """Replaying a URL the cassette never saw fails with CassetteMissError naming the request."""
    with (
        SpecStore(make_settings(cassette=CASSETTES / "mcp-modern-only.yaml")) as store,
        pytest.raises(CassetteMissError, match="MCP server/discover: no recorded exchange for POST"),
    ):
        store.get("https://other.example.com/mcp", kind_hint=SpecKind.MCP)


def test_readme_maps_lookup_weather_from_the_synthesized_cassette(tmp_path: Path) -> None:
    """README's Maps access (synthesized from Google's docs): lookup_weather, unverified, needs an API key."""
    from ramscope import IdentityType, load_card
    from ramscope.specs import load_index

    repo = Path(__file__).resolve().parent.parent
    card = load_card(repo / "examples" / "travel-agent.card.json")
    manifest = card.manifest
    access = next(a for a in manifest.resource_accesses if a.id == "lookup-weather-for-destination-country")
    assert access.identity_used is IdentityType.AGENT
    operation = manifest.operation(access.operation)
    assert operation is not None
    resource = manifest.resource(operation.resource)
    assert resource is not None
    settings = Settings(cache_dir=tmp_path / "c", cassette=repo / "cassettes" / "travel-agent.yaml", offline=True)
    with SpecStore(settings) as store:
        spec = store.get(resource.spec_url, kind_hint=SpecKind.MCP)
        index = load_index(resource.spec_url, store, kind_hint=SpecKind.MCP)
    assert spec.provenance["synthesized"] is True
    got = resolve(resource, operation, index)
    assert isinstance(got, Target)
    assert (got.matched_by, got.entry.operation_id) == ("tool_name_unverified", "lookup_weather")
    assert got.entry.requirements == ((SchemeRequirement(API_KEY_SCHEME),),)
    assert [d.code for d in got.diagnostics] == ["mcp-tool-unverified", "mcp-credential-inferred"]
    assert got.diagnostics[0].path == "/resourceAccessManifest/resources/2/spec/resource_path"
    scheme = index.scheme_map[API_KEY_SCHEME]
    assert scheme.type is SchemeType.API_KEY
    assert "HTTP 403 at initialize" in scheme.description
    assert "The request is missing a valid API key." in scheme.description
