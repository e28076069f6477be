"""The MCP fetcher's protocol branches against scripted local servers: era negotiation, refusals, metadata
validation (RFC 9728 3.3, RFC 8414 3.3), the WWW-Authenticate parser and the well-known URL builders."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from ramscope.config import Settings
from ramscope.errors import FetchError
from ramscope.specs import SpecKind
from ramscope.store import SpecStore
from ramscope.store._challenge import Challenge, parse_www_authenticate
from ramscope.store.mcp import as_metadata_urls, prm_urls
from tests.support.httpserver import LocalHTTPServer, Reply, Request

MakeSettings = Callable[..., Settings]
Script = Callable[[dict[str, Any], Request], Reply]


def _json(status: int, doc: Any, **headers: str) -> Reply:
    return Reply(status, orjson.dumps(doc), {"content-type": "application/json", **headers})


def _result(msg: dict[str, Any], result: dict[str, Any]) -> Reply:
    return _json(200, {"jsonrpc": "2.0", "id": msg["id"], "result": result})


def _serve(server: LocalHTTPServer, script: Script) -> str:
    server.route("/mcp", method="POST", handler=lambda req: script(json.loads(req.body), req))
    server.route("/mcp", method="DELETE", handler=lambda req: Reply(204))
    return server.url("/mcp")


def _capture(settings: Settings, url: str) -> dict[str, Any]:
    with SpecStore(settings) as store:
        capture: dict[str, Any] = orjson.loads(store.get(url, kind_hint=SpecKind.MCP).body)
    return capture


def _handshake(version: str = "2025-06-18") -> Script:
    """A handshake server whose server/discover gets a -32022 naming handshake versions."""

    def script(msg: dict[str, Any], req: Request) -> Reply:
        method = msg.get("method")
        if method == "server/discover":
            error = {"code": -32022, "message": "Unsupported protocol version", "data": {"supported": [version]}}
            return _json(400, {"jsonrpc": "2.0", "id": msg["id"], "error": error})
        if method == "initialize":
            return _result(msg, {"protocolVersion": version, "capabilities": {}, "serverInfo": {"name": "s"}})
        if method == "notifications/initialized":
            return Reply(202)
        return _result(msg, {"tools": [{"name": "x"}]})

    return script


def test_unsupported_version_naming_handshake_versions_falls_back(
    server: LocalHTTPServer, make_settings: MakeSettings
) -> None:
    """-32022 with data.supported listing a handshake version: the handshake, at that version."""
    capture = _capture(make_settings(), _serve(server, _handshake()))
    assert (capture["era"], capture["protocol_version"]) == ("handshake", "2025-06-18")
    assert capture["session"] is False  # no Mcp-Session-Id given: nothing to end
    assert server.hits("/mcp", "DELETE") == 0


def test_a_modern_refusal_without_a_common_version_is_an_error(
    server: LocalHTTPServer, make_settings: MakeSettings
) -> None:
    """-32022 naming only unknown versions: the server is modern but speaks nothing ramscope does."""

    def script(msg: dict[str, Any], req: Request) -> Reply:
        error = {"code": -32022, "message": "Unsupported", "data": {"supported": ["2027-01-01"]}}
        return _json(400, {"jsonrpc": "2.0", "id": msg["id"], "error": error})

    with pytest.raises(FetchError, match=r"speaks the stateless protocol but refused.*2027-01-01"):
        _capture(make_settings(), _serve(server, script))
    assert server.hits("/mcp") == 1


def test_an_unknown_negotiated_version_is_refused_and_the_session_still_ended(
    server: LocalHTTPServer, make_settings: MakeSettings
) -> None:
    """initialize echoing a version ramscope does not know: an error, and the session is deleted anyway."""

    def script(msg: dict[str, Any], req: Request) -> Reply:
        if msg.get("method") == "server/discover":
            return Reply(404)
        return Reply(
            200,
            orjson.dumps({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2099-01-01", "capabilities": {}}}),
            {"content-type": "application/json", "mcp-session-id": "s-1"},
        )

    with pytest.raises(FetchError, match="chose protocol version '2099-01-01'"):
        _capture(make_settings(), _serve(server, script))
    assert server.hits("/mcp", "DELETE") == 1
    assert server.last("/mcp").headers["mcp-session-id"] == "s-1"


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (Reply(500, b"oops", {"content-type": "text/plain"}), "MCP server/discover: HTTP 500"),
        (Reply(200, b"<html>hi</html>", {"content-type": "text/html"}), "is this an MCP Streamable HTTP endpoint"),
    ],
)
def test_answers_that_are_not_mcp_are_errors(
    server: LocalHTTPServer, make_settings: MakeSettings, reply: Reply, words: str
) -> None:
    """A server error or a web page at the endpoint: a FetchError naming the step, no guessing."""
    with pytest.raises(FetchError, match=words):
        _capture(make_settings(), _serve(server, lambda msg, req: reply))


def test_initialize_error_is_reported_with_its_json_rpc_message(
    server: LocalHTTPServer, make_settings: MakeSettings
) -> None:
    """A JSON-RPC error to initialize: the error's code and message are in the FetchError."""

    def script(msg: dict[str, Any], req: Request) -> Reply:
        if msg.get("method") == "server/discover":
            return Reply(405)
        return _json(200, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad capabilities"}})

    with pytest.raises(FetchError, match=r"MCP initialize: JSON-RPC error -32602: bad capabilities"):
        _capture(make_settings(), _serve(server, script))


def test_tools_list_demanding_a_credential_after_initialize(
    server: LocalHTTPServer, make_settings: MakeSettings
) -> None:
    """Some servers initialize anonymously and demand a token for tools/list: that is a denial, not a failure."""

    def script(msg: dict[str, Any], req: Request) -> Reply:
        if msg.get("method") == "tools/list":
            return Reply(401, b"", {"www-authenticate": 'Bearer scope="tools.read"'})
        return _handshake("2025-11-25")(msg, req)

    capture = _capture(make_settings(), _serve(server, script))
    assert capture["tools_listed"] is False
    assert (capture["auth"]["status"], capture["auth"]["step"]) == (401, "tools/list")
    assert capture["auth"]["challenges"][0]["params"] == {"scope": "tools.read"}


def _denying(server: LocalHTTPServer) -> str:
    challenge = f'Bearer resource_metadata="{server.url("/meta/other")}"'
    return _serve(server, lambda msg, req: Reply(401, b"", {"www-authenticate": challenge}))


def test_metadata_for_another_resource_is_not_used(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """RFC 9728 3.3: metadata naming another resource is recorded as not used; the root's naming the origin is."""
    url = _denying(server)
    server.route(
        "/meta/other",
        body=json.dumps({"resource": "https://elsewhere.example/mcp", "scopes_supported": ["x"]}).encode(),
    )
    server.route(
        "/.well-known/oauth-protected-resource",
        body=json.dumps({"resource": server.base_url, "scopes_supported": ["y"]}).encode(),
    )
    prm = _capture(make_settings(), url)["auth"]["protected_resource_metadata"]
    outcomes = [(t["url"].removeprefix(server.base_url), t["outcome"][:40]) for t in prm["tried"]]
    assert outcomes == [
        ("/meta/other", "not used: it describes resource 'https:/"),
        ("/.well-known/oauth-protected-resource/mcp", "not found"),
        ("/.well-known/oauth-protected-resource", "used"),
    ]
    assert prm["document"]["scopes_supported"] == ["y"]


def test_authorization_server_metadata_of_another_issuer_is_not_used(
    server: LocalHTTPServer, make_settings: MakeSettings
) -> None:
    """RFC 8414 3.3: an issuer mismatch is recorded as not used; OpenID Connect Discovery is tried next."""
    url = _denying(server)
    issuer = server.url("/tenant")
    server.route("/meta/other", body=json.dumps({"resource": url, "authorization_servers": [issuer]}).encode())
    server.route("/.well-known/oauth-authorization-server/tenant", body=b'{"issuer": "https://evil.example"}')
    server.route(
        "/.well-known/openid-configuration/tenant",
        body=json.dumps({"issuer": issuer, "grant_types_supported": ["client_credentials"]}).encode(),
    )
    asm = _capture(make_settings(), url)["auth"]["authorization_server"]
    assert [t["outcome"][:30] for t in asm["tried"]] == ["not used: its issuer is 'https", "used"]
    assert asm["document"] == {"issuer": issuer, "grant_types_supported": ["client_credentials"]}


# --------------------------------------------------------------------------- pure helpers


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (
            'Bearer error="invalid_token", resource_metadata="https://x/.well-known/oauth-protected-resource/mcp"',
            [
                Challenge(
                    "Bearer",
                    {
                        "error": "invalid_token",
                        "resource_metadata": "https://x/.well-known/oauth-protected-resource/mcp",
                    },
                )
            ],
        ),
        (
            'Basic realm="a, b", Bearer scope="read write"',
            [Challenge("Basic", {"realm": "a, b"}), Challenge("Bearer", {"scope": "read write"})],
        ),
        ("Negotiate YWJj==, Bearer", [Challenge("Negotiate", {}, "YWJj=="), Challenge("Bearer")]),
        ('Bearer REALM="x", Error=invalid_token', [Challenge("Bearer", {"realm": "x", "error": "invalid_token"})]),
        ('Bearer realm="esc\\"aped"', [Challenge("Bearer", {"realm": 'esc"aped'})]),
        ('Bearer realm="unterminated', [Challenge("Bearer")]),
        ("\x1b[2J", []),
        ("", []),
    ],
)
def test_www_authenticate_parsing(header: str, expected: list[Challenge]) -> None:
    """Challenges and their parameters per RFC 9110 11.6.1; junk ends parsing without an exception."""
    assert parse_www_authenticate([header]) == expected


def test_www_authenticate_is_bounded() -> None:
    """A header with thousands of challenges yields at most 32."""
    assert len(parse_www_authenticate([", ".join(["Bearer"] * 5000)])) == 32


@pytest.mark.parametrize(
    ("endpoint", "hint", "expected"),
    [
        (
            "https://h/mcp",
            None,
            ["https://h/.well-known/oauth-protected-resource/mcp", "https://h/.well-known/oauth-protected-resource"],
        ),
        ("https://h/", None, ["https://h/.well-known/oauth-protected-resource"]),
        (
            "https://h/a/mcp/?x=1",
            "https://meta/x",
            [
                "https://meta/x",
                "https://h/.well-known/oauth-protected-resource/a/mcp?x=1",
                "https://h/.well-known/oauth-protected-resource",
            ],
        ),
    ],
)
def test_protected_resource_metadata_urls(endpoint: str, hint: str | None, expected: list[str]) -> None:
    """The challenge's URL, then RFC 9728's path-suffixed URL (query kept, trailing slash dropped), then the root."""
    assert prm_urls(endpoint, hint) == expected


def test_authorization_server_metadata_urls() -> None:
    """The MCP spec's order: RFC 8414 path-inserted, OIDC path-inserted, OIDC path-appended; two at the root."""
    assert as_metadata_urls("https://as/tenant1/") == [
        "https://as/.well-known/oauth-authorization-server/tenant1",
        "https://as/.well-known/openid-configuration/tenant1",
        "https://as/tenant1/.well-known/openid-configuration",
    ]
    assert as_metadata_urls("https://as") == [
        "https://as/.well-known/oauth-authorization-server",
        "https://as/.well-known/openid-configuration",
    ]


@pytest.mark.parametrize("discovered", [{}, {"supportedVersions": "2026-07-28"}, {"supportedVersions": ["2099-01-01"]}])
def test_a_server_discover_result_without_this_revision_falls_back_to_the_handshake(
    server: LocalHTTPServer, make_settings: MakeSettings, discovered: dict[str, Any]
) -> None:
    """Issue 14 item 3: ``{}`` (the conformance mocks answer any method so) is no proof of 2026-07-28: initialize."""

    def script(msg: dict[str, Any], req: Request) -> Reply:
        if msg.get("method") == "server/discover":
            return _result(msg, discovered)
        return _handshake("2025-11-25")(msg, req)

    capture = _capture(make_settings(), _serve(server, script))
    assert (capture["era"], capture["protocol_version"]) == ("handshake", "2025-11-25")
    assert [s["step"] for s in capture["steps"]][:2] == ["server/discover", "initialize"]
    assert "not a server/discover result" in capture["steps"][0]["outcome"]
