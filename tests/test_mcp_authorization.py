"""How an MCP server's authorization is discovered, and what is concluded when discovery fails (issue 14).

Against the official ``mcp`` SDK's MCPServer on 127.0.0.1, run end to end through
``ramscope derive``:

* item 1: a metadata look-up that fails other than by 404/410 (a 5xx, a timeout,
  a refusal, a redirect loop) is *unknown*: the access is incomplete (exit 3), and
  the failure is not cached, so the next run after the repair sees the truth;
* item 2: a 2025-03-26 server (no protected-resource metadata, its own
  authorization server's RFC 8414 metadata on its origin, as python-sdk's
  ``simple-auth-legacy`` serves) is derived from that metadata: END_USER gets the
  authorization-code scope ``user``, AGENT has no compatible alternative;
* item 4: a challenge's ``scope=`` without any metadata makes an OAuth scheme that
  says it was inferred, with no flow invented.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer

from ramscope.cli import EXIT_INCOMPLETE, EXIT_OK, main
from ramscope.specs import SpecKind, build_index
from ramscope.specs.mcp import OAUTH_SCHEME
from ramscope.store import SpecStore
from tests.support.asgi import ASGIApp, ASGIServer, Receive, Scope, Send
from tests.support.httpserver import LocalHTTPServer, Reply, Request
from tests.support.mcpcards import write_mcp_card

MakeSettings = Callable[..., Any]


def _weather_server(**kwargs: Any) -> MCPServer:
    server: MCPServer = MCPServer("weather", version="1.0", **kwargs)

    @server.tool()
    def lookup_weather(city: str) -> str:
        """Current conditions for a city."""
        return f"sunny in {city}"

    return server


class _WellKnown:
    """An ASGI front for the well-known URLs of the server behind it; ``mode`` decides what they answer."""

    def __init__(self, inner: ASGIApp) -> None:
        self.inner = inner
        self.mode = "404"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/.well-known/"):
            await self.inner(scope, receive, send)
            return
        status, headers, body = 404, [(b"content-type", b"application/json")], b'{"error": "not found"}'
        if self.mode == "500":
            status, body = 500, b'{"error": "metadata service down"}'
        elif self.mode == "503-gone":
            status, body = 503, b""
        elif self.mode == "403":
            status, body = 403, b'{"error": "forbidden"}'
        elif self.mode == "loop":
            status, headers, body = 302, [(b"location", scope["path"].encode())], b""
        elif self.mode == "stall":
            await asyncio.sleep(3)
        elif self.mode == "410":
            status = 410
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


@pytest.fixture(scope="module")
def anonymous() -> Iterator[tuple[ASGIServer, _WellKnown]]:
    front = _WellKnown(_weather_server().streamable_http_app(json_response=True))
    with ASGIServer(lambda base: front) as srv:
        yield srv, front


def _derive(tmp_path: Path, card: Path, *extra: str, cache: str = "cache") -> tuple[int, dict[str, Any]]:
    out = tmp_path / "report.json"
    code = main(
        [
            "--allow-private-network",
            "--cache-dir",
            str(tmp_path / cache),
            "--timeout",
            "1.5",
            "--no-progress",
            *extra,
            "derive",
            str(card),
            "-o",
            str(out),
        ]
    )
    return code, json.loads(out.read_text("utf-8"))


def _codes(report: dict[str, Any]) -> set[str]:
    return {d["code"] for d in report["diagnostics"]}


# --------------------------------------------------------------------------- item 1


@pytest.mark.parametrize("mode", ["500", "503-gone", "403", "loop", "stall"])
def test_a_failed_metadata_lookup_is_unknown_not_none(
    anonymous: tuple[ASGIServer, _WellKnown], tmp_path: Path, mode: str
) -> None:
    """Tools listed anonymously, the metadata look-up failing: incomplete (exit 3), never "needs nothing"."""
    srv, front = anonymous
    front.mode = mode
    try:
        card = write_mcp_card(tmp_path / "card.json", srv.url("/mcp"), "lookup_weather")
        code, report = _derive(tmp_path, card)
    finally:
        front.mode = "404"
    assert code == EXIT_INCOMPLETE
    (access,) = report["accesses"]
    assert access["complete"] is False
    assert access["reason"] == "security-undeclared"
    assert (access["requirements"], access["scopes"]) == (None, None)
    assert "mcp-metadata-unavailable" in _codes(report)
    assert "mcp-no-authorization" not in _codes(report)


def test_a_failure_is_not_cached_as_an_answer(anonymous: tuple[ASGIServer, _WellKnown], tmp_path: Path) -> None:
    """A 500 today, a 404 after the repair: the second run asks again and gets the true answer."""
    srv, front = anonymous
    card = write_mcp_card(tmp_path / "card.json", srv.url("/mcp"), "lookup_weather")
    front.mode = "500"
    try:
        code, _ = _derive(tmp_path, card)
    finally:
        front.mode = "404"
    assert code == EXIT_INCOMPLETE
    code, report = _derive(tmp_path, card)
    assert code == EXIT_OK
    assert report["accesses"][0]["requirements"] == []
    assert "mcp-no-authorization" in _codes(report)


@pytest.mark.parametrize("mode", ["404", "410"])
def test_404_or_410_everywhere_means_none_published(
    anonymous: tuple[ASGIServer, _WellKnown], tmp_path: Path, mode: str
) -> None:
    """Only "not found" at every well-known location (both PRM URLs and the origin's AS URL) means no metadata."""
    srv, front = anonymous
    front.mode = mode
    try:
        card = write_mcp_card(tmp_path / "card.json", srv.url("/mcp"), "lookup_weather")
        code, report = _derive(tmp_path, card)
    finally:
        front.mode = "404"
    assert code == EXIT_OK
    assert report["accesses"][0]["requirements"] == []
    wk = sorted({p for m, p, _ in srv.requests if p.startswith("/.well-known/")})
    assert wk == [
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ]


# --------------------------------------------------------------------------- item 2


class _LegacyProvider:
    """The authorization server half of a 2025-03-26 server; no token is ever issued to ramscope."""

    async def get_client(self, client_id: str) -> None:
        return None

    async def register_client(self, client_info: Any) -> None:
        return None

    async def authorize(self, client: Any, params: Any) -> str:
        raise NotImplementedError

    async def load_authorization_code(self, client: Any, code: str) -> None:
        return None

    async def exchange_authorization_code(self, client: Any, code: Any) -> Any:
        raise NotImplementedError

    async def load_refresh_token(self, client: Any, token: str) -> None:
        return None

    async def exchange_refresh_token(self, client: Any, token: Any, scopes: list[str]) -> Any:
        raise NotImplementedError

    async def load_access_token(self, token: str) -> AccessToken | None:
        return None

    async def revoke_token(self, token: Any) -> None:
        return None


@pytest.fixture(scope="module")
def legacy() -> Iterator[ASGIServer]:
    """python-sdk's simple-auth-legacy shape: MCP server and authorization server on one origin, no PRM."""

    def app(base: str) -> ASGIApp:
        auth = AuthSettings(
            issuer_url=base,  # type: ignore[arg-type]  # pydantic coerces the string
            resource_server_url=None,
            required_scopes=["user"],
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["user"], default_scopes=["user"]
            ),
        )
        server = _weather_server(auth=auth, auth_server_provider=_LegacyProvider())
        return server.streamable_http_app(json_response=True)

    with ASGIServer(app) as srv:
        yield srv


def test_a_2025_03_26_server_is_derived_from_its_origins_metadata(legacy: ASGIServer, tmp_path: Path) -> None:
    """END_USER: authorization code with scope ``user``; AGENT: no compatible alternative (exit 3)."""
    card = write_mcp_card(tmp_path / "card.json", legacy.url("/mcp"), "lookup_weather", ("END_USER", "AGENT"))
    code, report = _derive(tmp_path, card)
    assert code == EXIT_INCOMPLETE
    user, agent = report["accesses"]
    assert user["complete"] is True
    assert user["scopes"] == ["user"]
    assert agent["complete"] is False
    assert agent["reason"] == "no-compatible-alternative"
    assert report["tiers"]["REQUIRED"]["END_USER"]["scopes"] == ["user"]
    assert "mcp-legacy-authorization" in _codes(report)
    assert "mcp-credential-inferred" not in _codes(report)


def test_the_2025_03_26_capture_names_where_the_metadata_came_from(
    legacy: ASGIServer, make_settings: MakeSettings
) -> None:
    """The capture keeps the 401 without resource_metadata, both PRM 404s, and the origin's RFC 8414 document."""
    with SpecStore(make_settings()) as store:
        spec = store.get(legacy.url("/mcp"), kind_hint=SpecKind.MCP)
        index = build_index(spec, kind_hint=SpecKind.MCP)
    auth = json.loads(spec.body)["auth"]
    assert auth["status"] == 401
    assert "resource_metadata" not in auth["challenges"][0]["params"]
    assert [t["status"] for t in auth["protected_resource_metadata"]["tried"]] == [404, 404]
    asm = auth["authorization_server"]
    assert asm["discovered_by"] == "origin (2025-03-26)"
    assert asm["document"]["grant_types_supported"] == ["authorization_code", "refresh_token"]
    scheme = index.scheme_map[OAUTH_SCHEME]
    assert [f.kind.value for f in scheme.flows] == ["authorizationCode"]
    assert scheme.flows[0].token_url == legacy.url("/token")
    assert index.extra["auth"]["authorization_server_discovered_by"] == "origin (2025-03-26)"


# --------------------------------------------------------------------------- item 4


def _scope_only(server: LocalHTTPServer) -> str:
    """fastmcp's StaticTokenVerifier shape: 401 ``Bearer scope="read"`` on every POST, no metadata anywhere."""

    def deny(req: Request) -> Reply:
        return Reply(401, b"", {"www-authenticate": 'Bearer error="invalid_token", scope="read"'})

    server.route("/mcp", method="POST", handler=deny)
    return server.url("/mcp")


def test_a_challenge_scope_without_metadata_is_an_inferred_oauth_scheme_of_unknown_flow(
    server: LocalHTTPServer, make_settings: MakeSettings
) -> None:
    """The scheme is OAuth with the challenge's scope, marked inferred, said in a diagnostic, with no flow."""
    url = _scope_only(server)
    with SpecStore(make_settings()) as store:
        index = build_index(store.get(url, kind_hint=SpecKind.MCP), kind_hint=SpecKind.MCP)
    scheme = index.scheme_map[OAUTH_SCHEME]
    assert scheme.inferred
    assert scheme.flows == ()  # no authorizationCode invented: privilege.compatible sees "unknown"
    inferred = [d for d in index.diagnostics if d.code == "mcp-oauth-inferred"]
    assert len(inferred) == 1
    assert "scope=" in inferred[0].message
    assert "read" in inferred[0].message
    assert index.extra["server_security_source"] == "challenge"


def test_a_challenge_scope_without_metadata_is_said_in_the_report(server: LocalHTTPServer, tmp_path: Path) -> None:
    """End to end: the report carries the inferred-scheme diagnostic for the access."""
    card = write_mcp_card(tmp_path / "card.json", _scope_only(server), "anything", ("END_USER", "AGENT"))
    _, report = _derive(tmp_path, card)
    assert "mcp-oauth-inferred" in _codes(report)
    # The scope is known from the challenge; the scheme's flows are not, so neither identity can be
    # shown to hold it: both accesses are undetermined, with the requirement the challenge named.
    assert [(a["id"], a["requirements"], a["reason"]) for a in report["accesses"]] == [
        (aid, [[{"scheme": OAUTH_SCHEME, "type": "oauth2", "scopes": ["read"]}]], "no-compatible-alternative")
        for aid in ("call-as-end-user", "call-as-agent")
    ]


@pytest.mark.parametrize(
    ("issuer_path", "known"),
    [("", True), ("/oauth", True), ("http://elsewhere.example/oauth", False)],
)
def test_the_origins_metadata_may_name_an_issuer_on_that_origin_only(
    server: LocalHTTPServer, make_settings: MakeSettings, issuer_path: str, known: bool
) -> None:
    """2025-03-26 servers put the issuer under a path (the conformance suite's ``/oauth``): accepted on the
    same origin; an issuer on another origin is not used, and the requirement is then unknown."""
    issuer = issuer_path if issuer_path.startswith("http") else server.base_url + issuer_path
    server.route("/mcp", method="POST", handler=lambda req: Reply(401, b"", {"www-authenticate": "Bearer"}))
    server.route(
        "/.well-known/oauth-authorization-server",
        body=json.dumps(
            {
                "issuer": issuer,
                "authorization_endpoint": server.url("/oauth/authorize"),
                "token_endpoint": server.url("/oauth/token"),
                "scopes_supported": ["mcp"],
            }
        ).encode(),
    )
    with SpecStore(make_settings()) as store:
        index = build_index(store.get(server.url("/mcp"), kind_hint=SpecKind.MCP), kind_hint=SpecKind.MCP)
    if known:
        assert index.extra["server_security_source"] == "authorization-server-metadata"
        assert [f.kind.value for f in index.scheme_map[OAUTH_SCHEME].flows] == ["authorizationCode"]
    else:
        assert index.extra["server_requirements"] is None
        assert "mcp-metadata-unavailable" in {d.code for d in index.diagnostics}


def test_a_bare_bearer_challenge_is_never_silently_an_agent_credential(server: LocalHTTPServer, tmp_path: Path) -> None:
    """401 ``Bearer`` and no metadata anywhere (conformance ``auth/2025-03-26-oauth-endpoint-fallback``): under
    2025-03-26 that is OAuth at /authorize and /token (user tokens); elsewhere a static token. Neither identity
    is taken to fit silently: each access is incomplete or carries identity-compatibility-unknown."""
    server.route("/mcp", method="POST", handler=lambda req: Reply(401, b"", {"www-authenticate": "Bearer"}))
    card = write_mcp_card(tmp_path / "card.json", server.url("/mcp"), "anything", ("END_USER", "AGENT"))
    _, report = _derive(tmp_path, card)
    for access in report["accesses"]:
        assert access["requirements"] == [[{"scheme": "mcp-bearer", "type": "unknown", "scopes": []}]]
        said = {d["code"] for d in report["diagnostics"] if repr(access["id"]) in d["message"]}
        assert not access["complete"] or "identity-compatibility-unknown" in said, access
