"""Remote A2A agent cards: v0.3 and v1.0 shapes and both merged, skill narrowing, the well-known fallbacks, and
a real a2a-sdk 1.x server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import a2a_pb2 as pb
from starlette.applications import Starlette

from ramscope.config import Settings
from ramscope.derive.resolve import Target, Unresolved, resolve
from ramscope.errors import FetchError
from ramscope.specs import FlowKind, SchemeRequirement, SchemeType, SpecIndex, SpecKind, build_index, load_index
from ramscope.specs.a2a import CARD_KEY
from ramscope.store import Origin, SpecStore
from tests._specs import make_spec, rest_operation
from tests.support.asgi import ASGIServer
from tests.support.httpserver import LocalHTTPServer

MakeSettings = Callable[..., Settings]
CASSETTES = Path(__file__).parent / "fixtures" / "cassettes"


def _index(settings: Settings, url: str) -> SpecIndex:
    with SpecStore(settings) as store:
        return load_index(url, store, kind_hint=SpecKind.A2A)


def _resolve(index: SpecIndex, path: str) -> Target | Unresolved:
    return resolve(*rest_operation(path=path, spec_url=index.url), index)


def _target(index: SpecIndex, path: str) -> Target:
    got = _resolve(index, path)
    assert isinstance(got, Target), got
    return got


def _req(scheme: str, *scopes: str) -> SchemeRequirement:
    return SchemeRequirement.of(scheme, scopes)


# --------------------------------------------------------------------------- v0.3 and v1.0 from cassettes


def test_v03_card_from_its_base_url(make_settings: MakeSettings) -> None:
    """Base URL answers HTML, the well-known card is used; 0.3 schemes, several flows, card and skill security."""
    settings = make_settings(cassette=CASSETTES / "a2a-v03.yaml", allow_private_network=False)
    with SpecStore(settings) as store:
        spec = store.get("https://files.example.com", kind_hint=SpecKind.A2A)
        index = build_index(spec, kind_hint=SpecKind.A2A)
    assert spec.origin is Origin.CASSETTE
    assert spec.final_url == "https://files.example.com/.well-known/agent-card.json"
    assert [a["outcome"] for a in spec.provenance["a2a_attempts"]] == ["not JSON (text/html)", "card"]
    assert (index.kind, index.title, index.version, index.spec_version) == (
        SpecKind.A2A,
        "Files Agent",
        "0.9.2",
        "0.3.0",
    )
    assert index.extra["card_url"] == "https://files.example.com/.well-known/agent-card.json"
    oauth = index.scheme_map["oauth"]
    assert [f.kind for f in oauth.flows] == [FlowKind.AUTHORIZATION_CODE, FlowKind.CLIENT_CREDENTIALS]
    assert oauth.scope_description("files:write") == "Change your files"
    key = index.scheme_map["key"]
    assert (key.type, key.api_key_in, key.api_key_name) == (SchemeType.API_KEY, "header", "X-Files-Key")

    card = _target(index, "")
    assert (card.matched_by, card.entry.key) == ("agent_card", CARD_KEY)
    assert card.entry.requirements == ((_req("oauth", "files:read"),),)
    read = _target(index, "read-file")
    assert (read.matched_by, read.entry.security_source) == ("skill", "card")
    assert read.entry.requirements == ((_req("oauth", "files:read"),),)
    assert read.entry.extra == {"tags": ["files"], "examples": ["show me notes.txt"]}
    write = _target(index, "write-file")
    assert write.entry.security_source == "skill"
    assert write.entry.requirements == ((_req("oauth", "files:write"),), (_req("key"),))  # in the card's order
    assert index.diagnostics == ()


def test_v10_card_protojson(make_settings: MakeSettings) -> None:
    """1.0 oneof wrappers for every scheme kind, securityRequirements with list, {} for no scopes, skill override."""
    settings = make_settings(cassette=CASSETTES / "a2a-v10.yaml", allow_private_network=False)
    index = _index(settings, "https://travel.example.com/.well-known/agent-card.json")
    assert (index.title, index.spec_version) == ("Booking Agent", "1.0")
    types = {s.name: s.type for s in index.schemes}
    assert types == {
        "oauth": SchemeType.OAUTH2,
        "partner": SchemeType.API_KEY,
        "oidc": SchemeType.OPENID_CONNECT,
        "mtls": SchemeType.MUTUAL_TLS,
        "bearer": SchemeType.HTTP,
    }
    oauth = index.scheme_map["oauth"]
    assert oauth.flows[0].token_url == "https://id.travel.example.com/token"
    assert oauth.scope_description("payments:charge") == "Charge your saved card"
    assert "oauth-authorization-server" in oauth.description
    assert (index.scheme_map["bearer"].http_scheme, index.scheme_map["bearer"].bearer_format) == ("bearer", "JWT")

    assert _target(index, "").entry.requirements == ((_req("oauth", "trips:read"),), (_req("partner"),))
    assert _target(index, "search-trips").entry.security_source == "card"
    book = _target(index, "book-trip").entry
    assert book.requirements == ((_req("oauth", "payments:charge", "trips:write"),),)
    assert book.security_source == "skill"
    assert _target(index, "partner-feed").entry.requirements == ((_req("mtls"), _req("partner")),)
    assert index.extra["interfaces"] == [
        {"url": "https://travel.example.com/a2a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ]
    assert index.extra["card"]["name"] == "Booking Agent"
    assert index.extra["has_manifest"] is False


def test_skill_by_name_with_a_warning_and_unknown_skill_suggestions(make_settings: MakeSettings) -> None:
    """An exact skill name resolves with a warning; an unknown skill is unresolved with the nearest skills."""
    index = _index(
        make_settings(cassette=CASSETTES / "a2a-v10.yaml", allow_private_network=False),
        "https://travel.example.com/.well-known/agent-card.json",
    )
    by_name = _target(index, "Book a trip")
    assert by_name.entry.operation_id == "book-trip"
    assert [d.code for d in by_name.diagnostics] == ["skill-matched-by-name"]
    missing = _resolve(index, "book-trips")
    assert isinstance(missing, Unresolved)
    assert missing.reason == "operation-not-found"
    assert missing.suggestions[0] == "book-trip (Book a trip)"


# --------------------------------------------------------------------------- shapes, pure


def _card(**fields: Any) -> dict[str, Any]:
    return {
        "name": "Agent",
        "supportedInterfaces": [{"url": "https://a.example/rpc", "protocolVersion": "1.0"}],
        **fields,
    }


def _build(doc: dict[str, Any]) -> SpecIndex:
    return build_index(make_spec(doc, "https://a.example/.well-known/agent-card.json"), kind_hint=SpecKind.A2A)


def test_both_shapes_agreeing_give_no_finding() -> None:
    """The a2a-sdk serves a card with a 0.3 interface in both shapes merged; when they agree, nothing is said."""
    oauth10 = {"flows": {"authorizationCode": {"tokenUrl": "https://t", "scopes": {"r": "Read"}}}}
    doc = _card(
        securitySchemes={"o": {"oauth2SecurityScheme": oauth10, "type": "oauth2", "flows": oauth10["flows"]}},
        securityRequirements=[{"schemes": {"o": {"list": ["r"]}}}],
        security=[{"o": ["r"]}],
        skills=[{"id": "s", "name": "S", "securityRequirements": [{"schemes": {"o": {}}}], "security": [{"o": []}]}],
    )
    index = _build(doc)
    assert index.diagnostics == ()
    assert index.operation("s") is not None
    assert index.operation("s").requirements == ((_req("o"),),)  # type: ignore[union-attr]


def test_both_shapes_disagreeing_prefer_v10_and_say_so() -> None:
    """A merged card whose 0.3 fields disagree with its 1.0 fields: the 1.0 fields win, with a warning each."""
    doc = _card(
        securitySchemes={
            "o": {
                "oauth2SecurityScheme": {
                    "flows": {"authorizationCode": {"tokenUrl": "https://t", "scopes": {"r": ""}}}
                },
                "type": "oauth2",
                "flows": {"clientCredentials": {"tokenUrl": "https://other", "scopes": {"r": ""}}},
            }
        },
        securityRequirements=[{"schemes": {"o": {"list": ["r"]}}}],
        security=[{"o": []}],
    )
    index = _build(doc)
    assert [d.code for d in index.diagnostics] == ["a2a-shapes-disagree", "a2a-shapes-disagree"]
    assert index.scheme_map["o"].flows[0].kind is FlowKind.AUTHORIZATION_CODE
    assert index.operation(CARD_KEY).requirements == ((_req("o", "r"),),)  # type: ignore[union-attr]


def test_snake_case_protojson_is_read_too() -> None:
    """ProtoJSON parsers accept proto field names; so does the adapter."""
    doc = {
        "name": "Agent",
        "supported_interfaces": [{"url": "https://a.example/rpc", "protocol_version": "1.0"}],
        "security_schemes": {"k": {"api_key_security_scheme": {"location": "query", "name": "key"}}},
        "security_requirements": [{"schemes": {"k": {}}}],
    }
    index = _build(doc)
    assert index.spec_version == "1.0"
    assert index.scheme_map["k"].api_key_in == "query"
    assert index.operation(CARD_KEY).requirements == ((_req("k"),),)  # type: ignore[union-attr]


def test_a_card_that_requires_nothing_anywhere_is_unknown_not_open() -> None:
    """No requirements anywhere: requirements None, security_declared False, a warning naming unused schemes."""
    index = _build(_card(securitySchemes={"k": {"type": "apiKey", "in": "header", "name": "K"}}, skills=[{"id": "s"}]))
    assert not index.security_declared
    assert all(e.requirements is None for e in index.operations)
    (diag,) = index.diagnostics
    assert diag.code == "security-undeclared"
    assert "defines the scheme(s) k but never requires them" in diag.message


def test_skill_requirements_without_card_requirements() -> None:
    """Skills declaring their own while the card declares none: the card and other skills are unknown."""
    index = _build(
        _card(
            securitySchemes={"k": {"apiKeySecurityScheme": {"location": "header", "name": "K"}}},
            skills=[{"id": "a", "securityRequirements": [{"schemes": {"k": {}}}]}, {"id": "b"}],
        )
    )
    assert index.operation("a").requirements == ((_req("k"),),)  # type: ignore[union-attr]
    assert index.operation("b").requirements is None  # type: ignore[union-attr]
    got = _target(index, "b")
    assert [d.code for d in got.diagnostics] == ["a2a-card-requirements-absent"]


def test_undefined_schemes_and_undeclared_scopes_are_reported() -> None:
    """A requirement naming an undefined scheme is kept and reported; a scope the flows do not list is noted."""
    index = _build(
        _card(
            securitySchemes={"o": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {"scopes": {"a": "A"}}}}}},
            securityRequirements=[{"schemes": {"o": {"list": ["a", "b"]}}}, {"schemes": {"ghost": {}}}],
        )
    )
    assert sorted(d.code for d in index.diagnostics) == ["undeclared-scope", "undefined-security-scheme"]
    assert index.operation(CARD_KEY).requirements == ((_req("o", "a", "b"),), (_req("ghost"),))  # type: ignore[union-attr]


def test_an_empty_requirement_list_means_anonymous() -> None:
    """security: [] (written out) is "no authorization"; [{}] / {"schemes": {}} is an anonymous alternative."""
    assert _build(_card(security=[])).operation(CARD_KEY).requirements == ()  # type: ignore[union-attr]
    anon = _build(_card(securityRequirements=[{"schemes": {}}])).operation(CARD_KEY)
    assert anon is not None
    assert anon.requirements == ((),)


def test_index_round_trips_through_json() -> None:
    """The index (card included) is JSON-serialisable and comes back equal."""
    index = _build(_card(security=[{"k": []}], securitySchemes={"k": {"type": "apiKey", "in": "header", "name": "K"}}))
    back = SpecIndex.from_json(index.to_json())
    assert back.operations == index.operations
    assert back.extra["card"] == index.extra["card"]


# --------------------------------------------------------------------------- the well-known fallbacks


def test_well_known_fallback_order(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """Base URL, then <url>/.well-known/agent-card.json, <origin>/..., <url>/.well-known/agent.json, <origin>/..."""
    card = {"name": "Old Agent", "url": server.url("/rpc"), "protocolVersion": "0.2.5", "skills": []}
    server.route("/.well-known/agent.json", body=json.dumps(card).encode())
    with SpecStore(make_settings()) as store:
        spec = store.get(server.url("/agents/old/"), kind_hint=SpecKind.A2A)
    assert [r.path for r in server.requests] == [
        "/agents/old/",
        "/agents/old/.well-known/agent-card.json",
        "/.well-known/agent-card.json",
        "/agents/old/.well-known/agent.json",
        "/.well-known/agent.json",
    ]
    assert spec.final_url == server.url("/.well-known/agent.json")
    assert build_index(spec, kind_hint=SpecKind.A2A).extra["card_url"] == server.url("/.well-known/agent.json")


def test_no_card_anywhere_lists_what_was_tried(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """Nothing looks like a card: a FetchError naming every URL tried and why it was not a card."""
    server.route("/agent", body=b'{"hello": "world"}')
    with SpecStore(make_settings()) as store, pytest.raises(FetchError, match="no A2A agent card found") as err:
        store.get(server.url("/agent"), kind_hint=SpecKind.A2A)
    message = str(err.value)
    assert "/agent: JSON, but not an agent card" in message
    assert "/.well-known/agent.json: HTTP 404" in message


# --------------------------------------------------------------------------- a real a2a-sdk 1.x server


class _Echo(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


def _sdk_card(base: str) -> pb.AgentCard:
    card = pb.AgentCard(
        name="Files Agent",
        description="Reads and writes your files.",
        version="2.0.0",
        supported_interfaces=[
            pb.AgentInterface(url=f"{base}/a2a", protocol_binding="JSONRPC", protocol_version="1.0"),
            pb.AgentInterface(url=f"{base}/a2a", protocol_binding="JSONRPC", protocol_version="0.3"),
        ],
        capabilities=pb.AgentCapabilities(streaming=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
    )
    flow = card.security_schemes["files_oauth"].oauth2_security_scheme.flows.authorization_code
    flow.authorization_url = "https://auth.files.example/authorize"
    flow.token_url = "https://auth.files.example/token"
    flow.scopes["files:read"] = "See your files"
    flow.scopes["files:write"] = "Change your files"
    flow.pkce_required = True
    card.security_requirements.add().schemes["files_oauth"].list.append("files:read")
    read = card.skills.add(id="read-file", name="Read a file", description="Shows a file.", tags=["files"])
    read.examples.append("show me notes.txt")
    write = card.skills.add(id="write-file", name="Write a file", description="Changes a file.", tags=["files"])
    write.security_requirements.add().schemes["files_oauth"].list.extend(["files:read", "files:write"])
    return card


@pytest.fixture(scope="module")
def a2a_server() -> Iterator[ASGIServer]:
    def app(base: str) -> Starlette:
        card = _sdk_card(base)
        handler = DefaultRequestHandler(agent_executor=_Echo(), task_store=InMemoryTaskStore(), agent_card=card)
        return Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/a2a")])

    with ASGIServer(app) as srv:  # type: ignore[arg-type]  # Starlette is an ASGI app
        yield srv


def test_a2a_sdk_server_card_with_oauth2_and_per_skill_requirements(
    a2a_server: ASGIServer, make_settings: MakeSettings
) -> None:
    """The SDK serves 1.0 and 0.3 shapes merged; the index reads them without disagreement, the skill narrows."""
    with SpecStore(make_settings()) as store:
        spec = store.get(a2a_server.base_url, kind_hint=SpecKind.A2A)
        index = build_index(spec, kind_hint=SpecKind.A2A)
    served = orjson.loads(spec.body)
    assert "oauth2SecurityScheme" in served["securitySchemes"]["files_oauth"]
    assert served["securitySchemes"]["files_oauth"]["type"] == "oauth2"  # the 0.3 shape, merged in
    assert spec.final_url == a2a_server.url("/.well-known/agent-card.json")
    assert spec.headers.get("etag", "").startswith('W/"')
    assert index.diagnostics == ()
    assert index.extra["protocol_versions"] == ["1.0", "0.3"]
    scheme = index.scheme_map["files_oauth"]
    assert scheme.flows[0].kind is FlowKind.AUTHORIZATION_CODE
    assert scheme.scope_description("files:write") == "Change your files"
    assert _target(index, "").entry.requirements == ((_req("files_oauth", "files:read"),),)
    assert _target(index, "read-file").entry.security_source == "card"
    write = _target(index, "write-file").entry
    assert (write.security_source, write.requirements) == (
        "skill",
        ((_req("files_oauth", "files:read", "files:write"),),),
    )
    assert [p for m, p, _ in a2a_server.requests[:2]] == ["/", "/.well-known/agent-card.json"]
