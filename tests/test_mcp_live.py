"""The MCP fetcher against the official Python SDK's MCPServer (mcp 2.x) on 127.0.0.1: both eras, SSE and JSON, OAuth.

Three real servers, started once for the module: one in SSE mode, one in JSON
mode, one behind ``AuthSettings`` with a token verifier (its authorization
server's RFC 8414 metadata served by a second local server). The 2.x server
speaks the stateless 2026-07-28 protocol itself; to exercise the handshake era
against the same real server, ``/legacy/mcp`` puts it behind a shim that
refuses stateless requests the way the Node reference server does (400,
"Server not initialized"), so the fetcher must fall back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from starlette.responses import JSONResponse

from ramscope.config import Settings
from ramscope.derive.resolve import Target, resolve
from ramscope.errors import OfflineMissError
from ramscope.specs import SchemeRequirement, SchemeType, SpecIndex, SpecKind, build_index, load_index
from ramscope.specs.mcp import OAUTH_SCHEME
from ramscope.store import Origin, SpecStore
from tests._specs import rest_operation
from tests.support.asgi import ASGIApp, ASGIServer, Receive, Scope, Send
from tests.support.httpserver import LocalHTTPServer

MakeSettings = Callable[..., Settings]

_NODE_NOT_INITIALIZED = (
    b'{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}'
)


def _mcp_server(**kwargs: Any) -> MCPServer:
    server: MCPServer = MCPServer("weather-demo", version="3.1.4", **kwargs)

    @server.tool(
        title="Weather lookup",
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True),
    )
    def lookup_weather(city: str) -> str:
        """Current conditions and forecast for a city."""
        return f"sunny in {city}"

    @server.tool()
    def book_flight(origin: str, destination: str) -> str:
        """Book a flight (charges the traveller's card)."""
        return "booked"

    @server.tool(meta={"securitySchemes": [{"type": "noauth"}, {"type": "oauth2", "scopes": ["places.read"]}]})
    def search_places(query: str) -> list[str]:
        """Find places; signed-in users also get their saved places."""
        return []

    return server


def _with_legacy_shim(app: ASGIApp) -> ASGIApp:
    """``/legacy/mcp`` is ``/mcp`` behind a handshake-only front: stateless requests get the Node server's 400."""

    async def shim(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/legacy/mcp":
            headers = dict(scope["headers"])
            if headers.get(b"mcp-protocol-version") == b"2026-07-28":
                await send(
                    {
                        "type": "http.response.start",
                        "status": 400,
                        "headers": [(b"content-type", b"application/json")],
                    }
                )
                await send({"type": "http.response.body", "body": _NODE_NOT_INITIALIZED})
                return
            scope = {**scope, "path": "/mcp", "raw_path": b"/mcp"}
        await app(scope, receive, send)

    return shim


class _Verifier:
    """Accepts one token; the fetcher never sends any, so every request is refused with 401."""

    async def verify_token(self, token: str) -> AccessToken | None:
        if token == "valid-token":
            return AccessToken(token=token, client_id="demo", scopes=["weather.read"])
        return None


@pytest.fixture(scope="module")
def sse_server() -> Iterator[ASGIServer]:
    with ASGIServer(lambda base: _with_legacy_shim(_mcp_server().streamable_http_app(json_response=False))) as srv:
        yield srv


@pytest.fixture(scope="module")
def json_server() -> Iterator[ASGIServer]:
    with ASGIServer(lambda base: _with_legacy_shim(_mcp_server().streamable_http_app(json_response=True))) as srv:
        yield srv


@pytest.fixture(scope="module")
def auth_server() -> Iterator[tuple[ASGIServer, LocalHTTPServer]]:
    with LocalHTTPServer() as issuer:
        issuer.route(
            "/.well-known/oauth-authorization-server",
            body=json.dumps(
                {
                    "issuer": issuer.base_url,
                    "authorization_endpoint": issuer.url("/authorize"),
                    "token_endpoint": issuer.url("/token"),
                    "grant_types_supported": ["authorization_code", "client_credentials", "refresh_token"],
                    "response_types_supported": ["code"],
                    "code_challenge_methods_supported": ["S256"],
                }
            ).encode(),
        )

        def app(base: str) -> ASGIApp:
            auth = AuthSettings(
                issuer_url=issuer.base_url,  # type: ignore[arg-type]  # pydantic coerces the string
                resource_server_url=f"{base}/mcp",  # type: ignore[arg-type]
                required_scopes=["weather.read"],
                validate_token_resource=False,
            )
            return _mcp_server(auth=auth, token_verifier=_Verifier()).streamable_http_app(json_response=False)

        with ASGIServer(app) as srv:
            yield srv, issuer


def _capture(settings: Settings, url: str) -> tuple[dict[str, Any], SpecIndex, Origin]:
    with SpecStore(settings) as store:
        spec = store.get(url, kind_hint=SpecKind.MCP)
        index = build_index(spec, kind_hint=SpecKind.MCP)
    return orjson.loads(spec.body), index, spec.origin


def _tool(index: SpecIndex, name: str) -> Target:
    got = resolve(*rest_operation(path=name, spec_url=index.url), index)
    assert isinstance(got, Target), got
    return got


# --------------------------------------------------------------------------- SSE mode


def test_sse_server_is_listed_in_the_stateless_era(sse_server: ASGIServer, make_settings: MakeSettings) -> None:
    """The 2.x server answers server/discover: one stateless conversation, no session, no capabilities declared."""
    capture, index, origin = _capture(make_settings(), sse_server.url("/mcp"))
    assert origin is Origin.NETWORK
    assert (capture["era"], capture["protocol_version"]) == ("stateless", "2026-07-28")
    assert capture["client_capabilities"] == {}
    assert capture["server_info"] == {"name": "weather-demo", "version": "3.1.4"}
    assert capture["supported_versions"] == ["2026-07-28"]
    assert capture["list_meta"]["cacheScope"] in ("private", "public")
    assert [t["name"] for t in capture["tools"]] == ["lookup_weather", "book_flight", "search_places"]
    assert [s["step"] for s in capture["steps"]] == ["server/discover", "tools/list"]
    assert (index.kind, index.title, index.version, index.spec_version) == (
        SpecKind.MCP,
        "weather-demo",
        "3.1.4",
        "2026-07-28",
    )
    sent = [(m, h) for m, p, h in sse_server.requests if p == "/mcp"]
    assert all(h["accept"] == "application/json, text/event-stream" for _, h in sent)
    assert {h.get("mcp-method") for _, h in sent} == {"server/discover", "tools/list"}


def test_no_auth_and_no_metadata_means_no_requirement(sse_server: ASGIServer, make_settings: MakeSettings) -> None:
    """Tools listed without a credential, both PRM URLs 404: requirements () with an info finding."""
    capture, index, _ = _capture(make_settings(), sse_server.url("/mcp"))
    tried = capture["auth"]["protected_resource_metadata"]["tried"]
    assert [(t["url"], t["status"]) for t in tried] == [
        (sse_server.url("/.well-known/oauth-protected-resource/mcp"), 404),
        (sse_server.url("/.well-known/oauth-protected-resource"), 404),
    ]
    got = _tool(index, "lookup_weather")
    assert got.matched_by == "tool_name"
    assert got.entry.requirements == ()
    assert got.entry.security_source == "server"
    assert [d.code for d in got.diagnostics] == ["mcp-no-authorization"]
    assert index.extra["server_security_source"] == "none"


def test_annotations_are_server_hints_with_the_specs_defaults(
    sse_server: ASGIServer, make_settings: MakeSettings
) -> None:
    """Given hints are kept, missing ones take MCP's defaults (destructive, open-world), marked as server hints."""
    _, index, _ = _capture(make_settings(), sse_server.url("/mcp"))
    weather = _tool(index, "lookup_weather").entry
    assert weather.title == "Weather lookup"
    assert weather.description == "Current conditions and forecast for a city."
    assert weather.extra["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": True,
    }
    assert weather.extra["annotations_given"] == ["openWorldHint", "readOnlyHint"]
    assert weather.extra["annotations_source"] == "server"
    book = _tool(index, "book_flight").entry
    assert book.extra["annotations"]["destructiveHint"] is True
    assert book.extra["annotations_given"] == []


def test_per_tool_security_schemes_in_meta_override_the_server(
    sse_server: ASGIServer, make_settings: MakeSettings
) -> None:
    """search_places declares noauth OR oauth2[places.read] in _meta: that, not the server's (), applies."""
    _, index, _ = _capture(make_settings(), sse_server.url("/mcp"))
    entry = _tool(index, "search_places").entry
    assert entry.security_source == "tool"
    assert entry.requirements == ((), (SchemeRequirement(OAUTH_SCHEME, ("places.read",)),))
    scheme = index.scheme_map[OAUTH_SCHEME]
    assert scheme.inferred
    # No metadata names the grants: no flow is invented, so identity decisions say "unknown" (issue 14 item 4).
    assert scheme.flows == ()
    assert "mcp-oauth-inferred" in {d.code for d in index.diagnostics}


def test_unknown_tool_is_unresolved_with_suggestions(sse_server: ASGIServer, make_settings: MakeSettings) -> None:
    """A tool name the server does not list: operation-not-found, the nearest names suggested."""
    _, index, _ = _capture(make_settings(), sse_server.url("/mcp"))
    got = resolve(*rest_operation(path="lookup_wether", spec_url=index.url), index)
    assert not isinstance(got, Target)
    assert got.reason == "operation-not-found"
    assert got.suggestions[0] == "lookup_weather"
    (diag,) = got.diagnostics
    assert diag.hint is not None
    assert "declaring no client capabilities" in diag.hint


def test_handshake_fallback_over_sse(sse_server: ASGIServer, make_settings: MakeSettings) -> None:
    """A 400 "Server not initialized" to server/discover: initialize, initialized, tools/list over SSE, DELETE."""
    before = len(sse_server.requests)
    capture, index, _ = _capture(make_settings(), sse_server.url("/legacy/mcp"))
    assert (capture["era"], capture["protocol_version"]) == ("handshake", "2025-11-25")
    assert capture["session"] is True
    assert capture["session_ended"] == 200
    steps = [(s["step"], s["status"], s["media_type"]) for s in capture["steps"]]
    assert steps == [
        ("server/discover", 400, "application/json"),
        ("initialize", 200, "text/event-stream"),
        ("notifications/initialized", 202, "application/json"),
        ("tools/list", 200, "text/event-stream"),
        ("session end", 200, "application/json"),
    ]
    seen = [(m, h) for m, p, h in sse_server.requests[before:] if p == "/legacy/mcp"]
    session = seen[1][1].get("mcp-session-id")  # the initialize request carries none yet
    assert session is None
    later = seen[2:]
    assert [m for m, _ in later] == ["POST", "POST", "DELETE"]
    assert all(h.get("mcp-session-id") and h.get("mcp-protocol-version") == "2025-11-25" for _, h in later)
    assert "mcp-protocol-version" not in seen[1][1]  # initialize negotiates; it does not announce
    assert [e.key for e in index.operations] == ["lookup_weather", "book_flight", "search_places"]


# --------------------------------------------------------------------------- JSON mode


@pytest.mark.parametrize(("path", "era"), [("/mcp", "stateless"), ("/legacy/mcp", "handshake")])
def test_json_server_in_both_eras(json_server: ASGIServer, make_settings: MakeSettings, path: str, era: str) -> None:
    """JSON mode answers application/json in both eras; the tools and their requirements are the same."""
    capture, index, _ = _capture(make_settings(), json_server.url(path))
    assert capture["era"] == era
    assert {s["media_type"] for s in capture["steps"] if s["step"].startswith(("tools", "init"))} == {
        "application/json"
    }
    assert _tool(index, "book_flight").entry.requirements == ()
    assert _tool(index, "search_places").entry.security_source == "tool"


# --------------------------------------------------------------------------- OAuth (AuthSettings + token verifier)


def test_oauth_server_401_challenge_metadata_and_grants(
    auth_server: tuple[ASGIServer, LocalHTTPServer], make_settings: MakeSettings
) -> None:
    """401 Bearer with resource_metadata → PRM (path-suffixed) → AS metadata: scopes and grants are real."""
    srv, issuer = auth_server
    capture, index, _ = _capture(make_settings(), srv.url("/mcp"))
    auth = capture["auth"]
    assert capture["tools_listed"] is False
    assert [(s["step"], s["status"]) for s in capture["steps"]] == [("server/discover", 401), ("initialize", 401)]
    assert auth["status"] == 401
    assert auth["challenges"][0]["scheme"] == "Bearer"
    assert auth["challenges"][0]["params"]["error"] == "invalid_token"
    prm_url = srv.url("/.well-known/oauth-protected-resource/mcp")
    assert auth["challenges"][0]["params"]["resource_metadata"] == prm_url
    prm = auth["protected_resource_metadata"]
    assert prm["url"] == prm_url
    assert [t["outcome"] for t in prm["tried"]] == ["used"]
    assert prm["document"]["scopes_supported"] == ["weather.read"]
    assert auth["authorization_server"]["url"] == issuer.url("/.well-known/oauth-authorization-server")
    assert index.extra["server_security_source"] == "protected-resource-metadata"
    assert index.extra["auth"]["token_endpoint"] == issuer.url("/token")

    scheme = index.scheme_map[OAUTH_SCHEME]
    assert scheme.type is SchemeType.OAUTH2
    assert not scheme.inferred
    assert [(f.kind.value, f.token_url) for f in scheme.flows] == [
        ("authorizationCode", issuer.url("/token")),
        ("clientCredentials", issuer.url("/token")),
    ]
    assert scheme.flows[0].authorization_url == issuer.url("/authorize")


def test_oauth_server_tool_is_unverified_but_carries_the_credential(
    auth_server: tuple[ASGIServer, LocalHTTPServer], make_settings: MakeSettings
) -> None:
    """Tools are listed only to authenticated clients: the tool resolves unverified, with the server's scope."""
    srv, _ = auth_server
    _, index, _ = _capture(make_settings(), srv.url("/mcp"))
    assert index.operations == ()
    got = _tool(index, "lookup_weather")
    assert got.matched_by == "tool_name_unverified"
    assert got.entry.extra == {"verified": False}
    assert got.entry.requirements == ((SchemeRequirement(OAUTH_SCHEME, ("weather.read",)),),)
    assert [d.code for d in got.diagnostics] == ["mcp-tool-unverified"]


# --------------------------------------------------------------------------- cache and cassettes


def test_capture_replays_from_a_recording_and_does_not_outlive_it(
    sse_server: ASGIServer, make_settings: MakeSettings, tmp_path: Path
) -> None:
    """Recorded once, the conversation replays byte for byte; a cassette is the network of the run that
    names it, so its answers are not cached for a later run (issue 22 item 7)."""
    url = sse_server.url("/legacy/mcp")
    cassette = tmp_path / "mcp.yaml"
    recorded, _, _ = _capture(make_settings(cassette=cassette, record=True, cache_dir=tmp_path / "rec"), url)
    text = cassette.read_text("utf-8")
    assert "server/discover" in text
    assert "text/event-stream" in text
    # The session the server issued is a credential of that session: recorded as a placeholder.
    issued = {h["mcp-session-id"] for _, _, h in sse_server.requests if h.get("mcp-session-id")}
    assert issued
    assert not any(sid in text for sid in issued)
    assert "redacted-by-ramscope" in text
    before = len(sse_server.requests)
    replayed, _, origin = _capture(make_settings(cassette=cassette, cache_dir=tmp_path / "replay"), url)
    assert origin is Origin.CASSETTE
    assert replayed == recorded
    assert len(sse_server.requests) == before  # the replay asked the server nothing
    with (
        SpecStore(make_settings(cache_dir=tmp_path / "replay", offline=True)) as store,
        pytest.raises(OfflineMissError),
    ):
        load_index(url, store, kind_hint=SpecKind.MCP)


# --------------------------------------------------------------------------- tools hidden behind authorization


@pytest.fixture(scope="module")
def per_tool_auth_server() -> Iterator[ASGIServer]:
    """Lists tools anonymously but publishes protected-resource metadata: some tools need a token.

    fastmcp's ``require_scopes`` on a tool hides it from anonymous ``tools/list`` this way.
    """

    def app(base: str) -> ASGIApp:
        server = _mcp_server()

        @server.custom_route("/.well-known/oauth-protected-resource/mcp", methods=["GET"])
        async def prm(request: Any) -> Any:
            return JSONResponse({"resource": f"{base}/mcp", "scopes_supported": ["admin"]})

        return server.streamable_http_app(json_response=True)

    with ASGIServer(app) as srv:
        yield srv


def test_a_tool_missing_from_an_anonymous_list_may_exist_behind_authorization(
    per_tool_auth_server: ASGIServer, make_settings: MakeSettings
) -> None:
    """Issue 14 item 18: not "not an operation ..., nearest: ...", but "may exist behind authorization"."""
    _, index, _ = _capture(make_settings(), per_tool_auth_server.url("/mcp"))
    got = resolve(*rest_operation(path="purge_cache", spec_url=index.url), index)
    assert not isinstance(got, Target)
    assert got.reason == "mcp-tool-not-listed"
    assert "may exist behind it" in got.message
    assert "nearest" not in got.message
    assert "protected-resource-metadata" in got.message
    assert got.diagnostics[0].code == "mcp-tool-not-listed"
    # A listed tool still resolves, with the metadata's scope.
    assert _tool(index, "lookup_weather").entry.requirements == ((SchemeRequirement(OAUTH_SCHEME, ("admin",)),),)


def test_a_tool_offering_noauth_is_no_evidence_of_hidden_tools(
    sse_server: ASGIServer, make_settings: MakeSettings
) -> None:
    """search_places offers noauth: no evidence of hidden tools there, so a typo still gets suggestions."""
    _, index, _ = _capture(make_settings(), sse_server.url("/mcp"))
    got = resolve(*rest_operation(path="purge_cache", spec_url=index.url), index)
    assert not isinstance(got, Target)
    assert got.reason == "operation-not-found"
