"""Security scheme objects are read by one reader: an OpenAPI spec, an A2A 0.3 card and an A2A 1.0
card's oneof wrappers saying the same give the same scheme, and the same findings."""

from __future__ import annotations

from typing import Any

import pytest

from ramscope.specs import FlowKind, SchemeType, SecurityScheme, SpecIndex, SpecKind, build_index
from tests._specs import make_spec

OAUTH: dict[str, Any] = {
    "description": "Sign in",
    "flows": {
        "authorizationCode": {
            "authorizationUrl": "https://id.example/authorize",
            "tokenUrl": "https://id.example/token",
            "refreshUrl": "https://id.example/refresh",
            "scopes": {"files:read": "See your files", "files:write": "Change your files"},
        },
        "clientCredentials": {"tokenUrl": "https://id.example/token", "scopes": {"files:read": ""}},
    },
}
#: (OpenAPI / A2A 0.3 object, A2A 1.0 wrapper and its object) for each kind of scheme.
SHAPES: dict[str, tuple[dict[str, Any], str, dict[str, Any]]] = {
    "oauth2": ({"type": "oauth2", **OAUTH}, "oauth2SecurityScheme", OAUTH),
    "apiKey": (
        {"type": "apiKey", "in": "header", "name": "X-Key"},
        "apiKeySecurityScheme",
        {"location": "header", "name": "X-Key"},
    ),
    "http": (
        {"type": "http", "scheme": "Bearer", "bearerFormat": "JWT"},
        "httpAuthSecurityScheme",
        {"scheme": "Bearer", "bearerFormat": "JWT"},
    ),
    "openIdConnect": (
        {"type": "openIdConnect", "openIdConnectUrl": "https://id.example/.well-known/openid-configuration"},
        "openIdConnectSecurityScheme",
        {"openIdConnectUrl": "https://id.example/.well-known/openid-configuration"},
    ),
    "mutualTLS": ({"type": "mutualTLS"}, "mtlsSecurityScheme", {}),
}


def _openapi(scheme: dict[str, Any]) -> SpecIndex:
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "components": {"securitySchemes": {"s": scheme}},
        "security": [{"s": []}],
        "paths": {"/x": {"get": {"operationId": "x", "responses": {"200": {"description": "ok"}}}}},
    }
    return build_index(make_spec(doc), kind_hint=SpecKind.OPENAPI)


def _card(schemes: dict[str, Any], **fields: Any) -> SpecIndex:
    doc = {
        "name": "Agent",
        "supportedInterfaces": [{"url": "https://a.example/rpc", "protocolVersion": "1.0"}],
        "securitySchemes": schemes,
        "security": [{"s": []}],
        **fields,
    }
    return build_index(make_spec(doc, "https://a.example/.well-known/agent-card.json"), kind_hint=SpecKind.A2A)


def _scheme(index: SpecIndex) -> SecurityScheme:
    return index.scheme_map["s"]


def _findings(index: SpecIndex) -> list[tuple[str, str]]:
    return [(d.code, d.path) for d in index.diagnostics if d.code == "invalid-security-scheme"]


@pytest.mark.parametrize("kind", SHAPES)
def test_every_shape_of_a_scheme_reads_the_same(kind: str) -> None:
    """OpenAPI, A2A 0.3 and A2A 1.0 (ProtoJSON and proto names) give one scheme for one declaration."""
    plain, wrapper, inner = SHAPES[kind]
    want = _scheme(_openapi(plain))
    assert want.type is not SchemeType.UNKNOWN
    assert _scheme(_card({"s": plain})) == want
    assert _scheme(_card({"s": {wrapper: inner}})) == want
    snake = {"api_key_security_scheme" if kind == "apiKey" else wrapper: inner}
    assert _scheme(_card({"s": snake})) == want


def test_the_fields_of_each_kind_are_read() -> None:
    """The values themselves, from the OpenAPI shape."""
    oauth = _scheme(_openapi(SHAPES["oauth2"][0]))
    assert [f.kind for f in oauth.flows] == [FlowKind.AUTHORIZATION_CODE, FlowKind.CLIENT_CREDENTIALS]
    assert oauth.flows[0].authorization_url == "https://id.example/authorize"
    assert oauth.flows[0].refresh_url == "https://id.example/refresh"
    assert oauth.scope_description("files:write") == "Change your files"
    key = _scheme(_openapi(SHAPES["apiKey"][0]))
    assert (key.api_key_in, key.api_key_name) == ("header", "X-Key")
    http = _scheme(_openapi(SHAPES["http"][0]))
    assert (http.http_scheme, http.bearer_format) == ("bearer", "JWT")


def test_a2a_reads_proto_names_inside_a_wrapper_and_the_device_flow() -> None:
    """``token_url``, ``device_code`` and ``device_authorization_url`` are ProtoJSON-accepted proto names."""
    inner = {
        "flows": {"device_code": {"device_authorization_url": "https://id.example/device", "token_url": "https://t"}}
    }
    flow = _scheme(_card({"s": {"oauth2_security_scheme": inner}})).flows[0]
    assert (flow.kind, flow.authorization_url, flow.token_url) == (
        FlowKind.DEVICE_CODE,
        "https://id.example/device",
        "https://t",
    )


def test_the_oas32_device_flow_reads_its_device_url() -> None:
    flows = {"deviceAuthorization": {"deviceAuthorizationUrl": "https://id.example/device", "tokenUrl": "https://t"}}
    flow = _scheme(_openapi({"type": "oauth2", "flows": flows})).flows[0]
    assert (flow.kind, flow.authorization_url) == (FlowKind.DEVICE_CODE, "https://id.example/device")


def test_the_authorization_server_metadata_url_is_kept_in_the_description() -> None:
    inner = {**OAUTH, "oauth2MetadataUrl": "https://id.example/.well-known/oauth-authorization-server"}
    assert _scheme(_card({"s": {"oauth2SecurityScheme": inner}})).description == (
        "Sign in (authorization server metadata: https://id.example/.well-known/oauth-authorization-server)"
    )


def test_an_oauth2_scheme_without_a_usable_flow_is_said_alike() -> None:
    """An unknown flow is left out and said; a scheme left with none is said too, in every format."""
    scheme = {"type": "oauth2", "flows": {"magic": {"tokenUrl": "https://t"}, "x-vendor": {}}}
    want = [
        ("invalid-security-scheme", "/components/securitySchemes/s/flows/magic"),
        ("invalid-security-scheme", "/components/securitySchemes/s/flows"),
    ]
    assert _findings(_openapi(scheme)) == want
    assert _findings(_card({"s": scheme})) == [(c, p.replace("/components", "")) for c, p in want]
    wrapped = _card({"s": {"oauth2SecurityScheme": {"flows": scheme["flows"]}}})
    assert _findings(wrapped) == [
        (c, p.replace("/components/securitySchemes/s", "/securitySchemes/s/oauth2SecurityScheme")) for c, p in want
    ]
    assert _scheme(_openapi(scheme)).flows == ()


def test_a_flow_name_is_escaped_in_its_pointer() -> None:
    assert _findings(_card({"s": {"type": "oauth2", "flows": {"a/b": {}, "implicit": {"scopes": {}}}}})) == [
        ("invalid-security-scheme", "/securitySchemes/s/flows/a~1b")
    ]


def test_a_cards_texts_are_bounded_and_a_specs_are_kept() -> None:
    """A stranger's card gets its descriptions cut (scheme 4096, scope 1024 characters); OpenAPI keeps them."""
    long = {"type": "oauth2", "description": "d" * 5000, "flows": {"implicit": {"scopes": {"r": "s" * 2000}}}}
    card = _scheme(_card({"s": long}))
    assert (len(card.description), card.description[-1]) == (4096, "…")
    assert len(card.scope_description("r") or "") == 1024
    spec = _scheme(_openapi(long))
    assert (len(spec.description), len(spec.scope_description("r") or "")) == (5000, 2000)
