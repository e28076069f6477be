"""MCP authorization as the 2026-07-28 specification reads it (issue 32, items 1-3), end to end through
``ramscope derive`` against the official SDK's MCPServer on 127.0.0.1.

* a server whose only word is its protected-resource metadata ``scopes_supported`` (its baseline):
  the floor is stated, the access is incomplete (exit 3), the tier gives the step-up plan;
* the same server whose challenge names the scope: complete with that scope;
* ``offline_access`` in the metadata: in no permission set and no blast radius, listed apart;
* a ``private`` tools/list seen anonymously: a warning, and a tool it lacks stays unverified;
* ``ttlMs`` is the capture's freshness in the cache.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import MCPServer

from ramscope.cli import EXIT_INCOMPLETE, EXIT_OK, main
from ramscope.specs import SpecKind
from ramscope.store import SpecStore
from tests.support.asgi import ASGIApp, ASGIServer, Receive, Scope, Send
from tests.support.httpserver import LocalHTTPServer
from tests.support.mcpcards import write_mcp_card

MakeSettings = Callable[..., Any]


def _notes_server(**kwargs: Any) -> MCPServer:
    server: MCPServer = MCPServer("notes", version="2.0", **kwargs)

    @server.tool()
    def read_note(note_id: str) -> str:
        """Read one note."""
        return "a note"

    @server.tool()
    def write_note(note_id: str, text: str) -> str:
        """Write one note."""
        return "written"

    return server


class _Verifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        return None  # ramscope never sends a token: every request is refused with 401


@dataclass
class _Front:
    """What the server says beyond the SDK's defaults: a challenge's ``scope``, extra metadata scopes."""

    challenge_scope: str = ""
    extra_scopes: list[str] = field(default_factory=list)

    def wrap(self, inner: ASGIApp) -> ASGIApp:
        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await inner(scope, receive, send)
                return
            is_prm = scope["path"].startswith("/.well-known/oauth-protected-resource")
            body_parts: list[bytes] = []
            start: dict[str, Any] = {}

            async def edit(message: Any) -> None:
                if message["type"] == "http.response.start":
                    headers = []
                    for k, v in message["headers"]:
                        if k == b"content-length" and is_prm and self.extra_scopes:
                            continue
                        extra = f', scope="{self.challenge_scope}"' if k == b"www-authenticate" else ""
                        headers.append((k, v + extra.encode() if self.challenge_scope else v))
                    message = {**message, "headers": headers}
                    if is_prm and self.extra_scopes:
                        start.update(message)
                        return
                    await send(message)
                    return
                if is_prm and self.extra_scopes and message["type"] == "http.response.body":
                    body_parts.append(message.get("body", b""))
                    if message.get("more_body"):
                        return
                    doc = json.loads(b"".join(body_parts))
                    doc["scopes_supported"] = [*doc.get("scopes_supported", []), *self.extra_scopes]
                    await send(start)
                    await send({"type": "http.response.body", "body": json.dumps(doc).encode()})
                    return
                await send(message)

            await inner(scope, receive, edit)

        return app


@pytest.fixture(scope="module")
def issuer() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        srv.route(
            "/.well-known/oauth-authorization-server",
            body=json.dumps(
                {
                    "issuer": srv.base_url,
                    "authorization_endpoint": srv.url("/authorize"),
                    "token_endpoint": srv.url("/token"),
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "response_types_supported": ["code"],
                    "code_challenge_methods_supported": ["S256"],
                }
            ).encode(),
        )
        yield srv


@pytest.fixture(scope="module")
def baseline(issuer: LocalHTTPServer) -> Iterator[tuple[ASGIServer, _Front]]:
    """The SDK's OAuth resource server: 401 ``Bearer resource_metadata=...`` (no scope), PRM with
    ``scopes_supported: ["notes.read"]`` (its baseline), the authorization server's metadata."""
    front = _Front()

    def app(base: str) -> ASGIApp:
        auth = AuthSettings(
            issuer_url=issuer.base_url,  # type: ignore[arg-type]  # pydantic coerces the string
            resource_server_url=f"{base}/mcp",  # type: ignore[arg-type]
            required_scopes=["notes.read"],
            validate_token_resource=False,
        )
        return front.wrap(_notes_server(auth=auth, token_verifier=_Verifier()).streamable_http_app(json_response=True))

    with ASGIServer(app) as srv:
        yield srv, front


def _derive(tmp_path: Path, card: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "report.json"
    code = main(
        [
            "--allow-private-network",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--timeout",
            "5",
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


def test_a_baseline_only_server_states_the_floor_and_is_incomplete(
    baseline: tuple[ASGIServer, _Front], tmp_path: Path
) -> None:
    """scopes_supported alone: the floor ``notes.read`` is stated as such, never as the tool's answer; exit 3."""
    srv, _ = baseline
    card = write_mcp_card(tmp_path / "card.json", srv.url("/mcp"), "write_note")
    code, report = _derive(tmp_path, card)
    assert code == EXIT_INCOMPLETE
    (access,) = report["accesses"]
    assert access["complete"] is False
    assert access["reason"] == "server-baseline"
    assert access["scopes"] is None
    assert access["target"]["security_source"] == "server-baseline"
    floor = access["floor"]
    assert floor["source"] == "server-baseline"
    assert floor["scopes"] == ["notes.read"]
    assert floor["baseline"] == ["notes.read"]
    assert "step-up" in floor["review"]
    assert "[[pin]]" in floor["review"]
    assert "mcp-baseline-only" in _codes(report)
    tier = report["tiers"]["REQUIRED"]["END_USER"]
    assert tier["complete"] is False
    assert tier["scopes"] == []
    assert tier["step_up"] == [
        {
            "spec_url": srv.url("/mcp"),
            "baseline": ["notes.read"],
            "adds": [],
            "scopes": ["notes.read"],
            "floor_only": ["call-as-end-user"],
            "beyond_need": None,
        }
    ]


def test_the_same_server_with_a_challenge_naming_the_scope_is_complete(
    baseline: tuple[ASGIServer, _Front], tmp_path: Path
) -> None:
    """A challenge ``scope="notes.write"``: authoritative for the request (MCP 2026-07-28), so complete with it;
    the step-up plan is the baseline, then what the tier adds."""
    srv, front = baseline
    front.challenge_scope = "notes.write"
    try:
        card = write_mcp_card(tmp_path / "card.json", srv.url("/mcp"), "write_note")
        code, report = _derive(tmp_path, card)
    finally:
        front.challenge_scope = ""
    assert code == EXIT_OK, report["diagnostics"]
    (access,) = report["accesses"]
    assert access["complete"] is True
    assert access["scopes"] == ["notes.write"]
    assert access["floor"] is None
    assert access["target"]["security_source"] == "server"
    tier = report["tiers"]["REQUIRED"]["END_USER"]
    assert tier["scopes"] == ["notes.write"]
    (plan,) = tier["step_up"]
    assert (plan["baseline"], plan["adds"], plan["floor_only"]) == (["notes.read"], ["notes.write"], [])


def test_offline_access_in_metadata_is_no_permission_and_no_blast_radius(
    baseline: tuple[ASGIServer, _Front], tmp_path: Path
) -> None:
    """offline_access (and openid) beside the challenged scope: not in any scope set, tier or blast radius,
    listed apart with why; profile stays a permission."""
    srv, front = baseline
    front.challenge_scope = "notes.write offline_access openid profile"
    front.extra_scopes = ["offline_access", "openid"]
    try:
        card = write_mcp_card(tmp_path / "card.json", srv.url("/mcp"), "write_note")
        code, report = _derive(tmp_path, card)
    finally:
        front.challenge_scope, front.extra_scopes = "", []
    assert code == EXIT_OK, report["diagnostics"]
    (access,) = report["accesses"]
    assert access["scopes"] == ["notes.write", "profile"]
    assert [t["scope"] for t in access["token_scopes"]] == ["offline_access", "openid"]
    assert all(t["why"] for t in access["token_scopes"])
    tier = report["tiers"]["REQUIRED"]["END_USER"]
    assert tier["scopes"] == ["notes.write", "profile"]
    assert {g["scope"] for g in tier["grants"]} == {"notes.write", "profile"}
    assert {p["scope"] for p in tier["permissions"]} == {"notes.write", "profile"}
    assert [t["scope"] for t in tier["token_scopes"]] == ["offline_access", "openid"]
    assert "offline_access" not in json.dumps(access["blast_radius"])
    assert "mcp-token-scope-advertised" in _codes(report)


def test_a_tool_needing_only_a_token_scope_is_not_public(baseline: tuple[ASGIServer, _Front], tmp_path: Path) -> None:
    """A challenge naming only ``openid``: the tool still wants a token of that server (a credential), never
    "no authorization needed"."""
    srv, front = baseline
    front.challenge_scope = "openid"
    try:
        card = write_mcp_card(tmp_path / "card.json", srv.url("/mcp"), "read_note")
        _, report = _derive(tmp_path, card)
    finally:
        front.challenge_scope = ""
    (access,) = report["accesses"]
    assert access["choice"]["method"] != "none-required"
    assert access["scopes"] == []
    assert [c["type"] for c in access["credentials"]] == ["oauth2"]
    assert [t["scope"] for t in access["token_scopes"]] == ["openid"]


# --------------------------------------------------------------------------- listing hints (item 3)


def _with_prm(inner: ASGIApp, base: str) -> ASGIApp:
    """Protected-resource metadata beside an SDK server that lists its tools to anyone."""
    prm = json.dumps(
        {"resource": f"{base}/mcp", "authorization_servers": [base], "scopes_supported": ["notes.read"]}
    ).encode()

    asm = json.dumps(
        {
            "issuer": base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "grant_types_supported": ["authorization_code"],
        }
    ).encode()

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/.well-known/"):
            path = scope["path"]
            body = prm if path.startswith("/.well-known/oauth-protected-resource") else None
            body = asm if path == "/.well-known/oauth-authorization-server" else body
            await send(
                {
                    "type": "http.response.start",
                    "status": 404 if body is None else 200,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": body or b"{}"})
            return
        await inner(scope, receive, send)

    return app


@pytest.fixture(scope="module")
def private_listing() -> Iterator[ASGIServer]:
    """Tools listed anonymously with ``cacheScope: "private"`` and ``ttlMs: 60000``, metadata published."""
    server = _notes_server(cache_hints={"tools/list": CacheHint(ttl_ms=60_000, scope="private")})
    with ASGIServer(lambda base: _with_prm(server.streamable_http_app(json_response=True), base)) as srv:
        yield srv


@pytest.fixture(scope="module")
def public_listing() -> Iterator[ASGIServer]:
    """The same hints on a server with no authorization at all: one listing for every caller."""
    server = _notes_server(cache_hints={"tools/list": CacheHint(ttl_ms=0, scope="private")})
    with ASGIServer(lambda base: server.streamable_http_app(json_response=True)) as srv:
        yield srv


def test_a_private_anonymous_listing_warns_and_a_missing_tool_stays_unverified(
    private_listing: ASGIServer, tmp_path: Path
) -> None:
    """The listing may depend on the caller's token: a warning; a tool it lacks stays unverified with that
    reason (unresolved, never "not found" with suggestions)."""
    card = write_mcp_card(tmp_path / "card.json", private_listing.url("/mcp"), "delete_note")
    code, report = _derive(tmp_path, card)
    assert code == EXIT_INCOMPLETE
    assert "mcp-private-listing" in _codes(report)
    (access,) = report["accesses"]
    assert access["reason"] == "mcp-tool-not-listed"
    assert "could not be verified" in access["reason_message"]
    assert '"private"' in access["reason_message"]
    (note,) = [d for d in report["diagnostics"] if d["code"] == "mcp-tool-not-listed"]
    assert note["data"]["reason"] == "private-listing"


def test_a_listed_tool_of_a_private_listing_is_verified(private_listing: ASGIServer, tmp_path: Path) -> None:
    """Listed: verified; its requirement is still only the server's baseline, so a floor."""
    card = write_mcp_card(tmp_path / "card.json", private_listing.url("/mcp"), "read_note")
    code, report = _derive(tmp_path, card)
    assert code == EXIT_INCOMPLETE
    (access,) = report["accesses"]
    assert access["target"]["matched_by"] == "tool_name"
    assert (access["reason"], access["floor"]["scopes"]) == ("server-baseline", ["notes.read"])


def test_a_private_listing_of_a_server_without_authorization_is_not_suspect(
    public_listing: ASGIServer, tmp_path: Path
) -> None:
    """No metadata, no challenge, no tool's securitySchemes: every caller gets the same list, so no warning,
    and a tool it lacks is not found (never a stand-in needing nothing)."""
    card = write_mcp_card(tmp_path / "card.json", public_listing.url("/mcp"), "delete_note")
    code, report = _derive(tmp_path, card)
    assert code == EXIT_INCOMPLETE
    assert "mcp-private-listing" not in _codes(report)
    assert report["accesses"][0]["reason"] == "operation-not-found"


def test_ttl_ms_is_the_captures_freshness(private_listing: ASGIServer, make_settings: MakeSettings) -> None:
    """``ttlMs`` 60000 becomes max-age 60 on the capture, which the cache's freshness then follows."""
    with SpecStore(make_settings()) as store:
        spec = store.get(private_listing.url("/mcp"), kind_hint=SpecKind.MCP)
    assert spec.provenance["mcp_ttl_ms"] == 60_000
    assert dict(spec.headers)["cache-control"] == "max-age=60"


# --------------------------------------------------------------------------- the step-up plan across tiers


@pytest.fixture(scope="module")
def declared() -> Iterator[ASGIServer]:
    """Tools listed anonymously, each declaring its own scopes (SEP-1488 in _meta); baseline ``notes.read``."""
    server: MCPServer = MCPServer("notes", version="2.0")

    @server.tool(meta={"securitySchemes": [{"type": "oauth2", "scopes": ["notes.read"]}]})
    def read_note(note_id: str) -> str:
        """Read one note."""
        return "a note"

    @server.tool(meta={"securitySchemes": [{"type": "oauth2", "scopes": ["notes.write"]}]})
    def write_note(note_id: str, text: str) -> str:
        """Write one note."""
        return "written"

    @server.tool()
    def share_note(note_id: str, to: str) -> str:
        """Share a note (declares nothing)."""
        return "shared"

    with ASGIServer(lambda base: _with_prm(server.streamable_http_app(json_response=True), base)) as srv:
        yield srv


def test_the_step_up_plan_is_the_baseline_then_what_each_tier_adds(declared: ASGIServer, tmp_path: Path) -> None:
    """read_note REQUIRED (within the baseline), write_note RECOMMENDED (adds notes.write), share_note OPTIONAL
    (declares nothing: only its floor is known, so the OPTIONAL tier is incomplete and says so)."""
    card: dict[str, Any] = {
        "resources": [
            {
                "id": f"r-{tool}",
                "interaction_protocol": "MCP",
                "owner": "CONSUMER",
                "display_name": "Notes",
                "spec": {"spec_url": declared.url("/mcp"), "resource_path": tool},
            }
            for tool in ("read_note", "write_note", "share_note")
        ],
        "operations": [
            {"id": f"op-{tool}", "resource": f"r-{tool}", "description": f"Calls {tool}."}
            for tool in ("read_note", "write_note", "share_note")
        ],
        "resource_accesses": [
            {
                "id": tool,
                "operation": f"op-{tool}",
                "identity_used": "END_USER",
                "necessity": necessity,
                "access_justification": "To call the tool.",
            }
            for tool, necessity in (
                ("read_note", "REQUIRED"),
                ("write_note", "RECOMMENDED"),
                ("share_note", "OPTIONAL"),
            )
        ],
    }
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card), "utf-8")
    code, report = _derive(tmp_path, path)
    assert code == EXIT_INCOMPLETE
    plans = {tier: report["tiers"][tier]["END_USER"]["step_up"] for tier in ("REQUIRED", "RECOMMENDED", "OPTIONAL")}
    assert [(p["baseline"], p["adds"], p["floor_only"]) for (p,) in plans.values()] == [
        (["notes.read"], [], []),
        (["notes.read"], ["notes.write"], []),
        (["notes.read"], [], ["share_note"]),
    ]
    assert plans["RECOMMENDED"][0]["scopes"] == ["notes.read", "notes.write"]
    assert report["tiers"]["RECOMMENDED"]["complete"] is True
    assert report["tiers"]["OPTIONAL"]["complete"] is False
    share = next(a for a in report["accesses"] if a["id"] == "share_note")
    assert (share["reason"], share["floor"]["scopes"]) == ("server-baseline", ["notes.read"])


# --------------------------------------------------------------------------- token scopes for every provider (item 2)


def _openapi(server: LocalHTTPServer) -> str:
    """A REST API whose OIDC sign-in scopes sit beside its data scope, as many providers' specs write them."""
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "Profiles", "version": "1"},
        "servers": [{"url": server.url("/api")}],
        "components": {
            "securitySchemes": {
                "oauth": {
                    "type": "oauth2",
                    "flows": {
                        "authorizationCode": {
                            "authorizationUrl": server.url("/authorize"),
                            "tokenUrl": server.url("/token"),
                            "scopes": {"openid": "", "offline_access": "", "email": "", "profile.read": ""},
                        }
                    },
                }
            }
        },
        "paths": {
            "/me": {
                "get": {
                    "operationId": "getMe",
                    "security": [{"oauth": ["openid", "offline_access", "email"]}],
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/session": {
                "get": {
                    "operationId": "getSession",
                    "security": [{"oauth": ["openid"]}],
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/profiles": {
                "get": {
                    "operationId": "listProfiles",
                    "security": [{"oauth": ["profile.read"]}],
                    "responses": {"200": {"description": "ok"}},
                }
            },
        },
    }
    server.route("/openapi.json", body=json.dumps(spec).encode())
    return server.url("/openapi.json")


@pytest.mark.parametrize(("operation", "scopes", "token"), [("getMe", ["email"], ["offline_access", "openid"]),
                                                             ("getSession", [], ["openid"])])  # fmt: skip
def test_token_scopes_are_no_permission_for_a_rest_api_either(
    server: LocalHTTPServer, tmp_path: Path, operation: str, scopes: list[str], token: list[str]
) -> None:
    """Not only MCP: openid / offline_access never count, email stays a permission, and an operation needing only
    openid still needs a token of that server (a credential), never nothing."""
    url = _openapi(server)
    card = {
        "resources": [{"id": "api", "interaction_protocol": "REST", "owner": "CONSUMER", "display_name": "Profiles",
                       "spec": {"spec_url": url}}],
        "operations": [{"id": "op", "resource": "api", "description": "Reads.",
                        "api_operation_spec": {"operation_id": operation}}],
        "resource_accesses": [{"id": "a", "operation": "op", "identity_used": "END_USER", "necessity": "REQUIRED",
                               "access_justification": "To read."}],
    }  # fmt: skip
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card), "utf-8")
    code, report = _derive(tmp_path, path)
    assert code == EXIT_OK, report["diagnostics"]
    (access,) = report["accesses"]
    assert access["scopes"] == scopes
    assert [t["scope"] for t in access["token_scopes"]] == token
    assert access["choice"]["method"] == "least-privilege"
    assert access["credentials"] == (
        [] if scopes else [{"scheme": "oauth", "type": "oauth2", "namespace": server.url("/token")}]
    )
    # The blast radius counts data operations only: email opens getMe; openid alone opens getSession (its token).
    assert access["blast_radius"]["granted_operations"] == 1
    tier = report["tiers"]["REQUIRED"]["END_USER"]
    assert tier["scopes"] == scopes
    assert [t["scope"] for t in tier["token_scopes"]] == token
