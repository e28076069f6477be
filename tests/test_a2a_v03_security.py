"""A2A agent cards' security in the v0.3 shape (OpenAPI's scheme objects under ``securitySchemes``, OpenAPI's
requirement objects under ``security``) and the malformed shapes a stranger's card can take in either
version: every kind of scheme is read, every malformed scheme or requirement is reported where it is and
dropped, and a card whose requirements cannot be read needs what is unknown, never nothing."""

from __future__ import annotations

from typing import Any

import pytest

from ramscope.specs import FlowKind, SchemeRequirement, SchemeType, SpecIndex, SpecKind, build_index
from ramscope.specs.a2a import CARD_KEY
from tests._specs import make_spec

URL = "https://a.example/.well-known/agent-card.json"


def _card(**fields: Any) -> dict[str, Any]:
    """A v0.3 card: ``url`` and ``protocolVersion`` at the top, no ``supportedInterfaces``."""
    return {"name": "Agent", "url": "https://a.example/rpc", "protocolVersion": "0.3.0", **fields}


def _build(doc: dict[str, Any]) -> SpecIndex:
    return build_index(make_spec(doc, URL), kind_hint=SpecKind.A2A)


def _req(scheme: str, *scopes: str) -> SchemeRequirement:
    return SchemeRequirement.of(scheme, scopes)


def _diags(index: SpecIndex) -> list[tuple[str, str, str]]:
    return [(d.code, d.path, d.message) for d in index.diagnostics]


V03_SCHEMES: dict[str, Any] = {
    "key": {"type": "apiKey", "in": "header", "name": "X-Key", "description": "a key"},
    "KEY2": {"type": "APIKEY", "in": "query", "name": "k"},
    "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
    "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://id.example/.well-known/openid-configuration"},
    "mtls": {"type": "mutualTLS"},
    "oauth": {
        "type": "oauth2",
        "flows": {
            "authorizationCode": {
                "authorizationUrl": "https://id.example/authorize",
                "tokenUrl": "https://id.example/token",
                "scopes": {"files.read": "Read your files", "files.write": "Change your files"},
            },
            "clientCredentials": {"tokenUrl": "https://id.example/token", "scopes": {"admin": "Everything"}},
        },
    },
}


def test_every_v03_scheme_kind_is_read() -> None:
    """apiKey (any case), http, openIdConnect, mutualTLS and oauth2 with its flows, as OpenAPI writes them."""
    index = _build(_card(securitySchemes=V03_SCHEMES, security=[{"oauth": ["files.read"]}]))
    assert index.spec_version == "0.3.0"
    assert index.diagnostics == ()
    s = index.scheme_map
    assert (s["key"].type, s["key"].api_key_in, s["key"].api_key_name) == (SchemeType.API_KEY, "header", "X-Key")
    assert (s["KEY2"].type, s["KEY2"].api_key_in, s["KEY2"].api_key_name) == (SchemeType.API_KEY, "query", "k")
    assert (s["bearer"].type, s["bearer"].http_scheme) == (SchemeType.HTTP, "bearer")
    assert (s["oidc"].type, s["oidc"].open_id_connect_url) == (
        SchemeType.OPENID_CONNECT,
        "https://id.example/.well-known/openid-configuration",
    )
    assert s["mtls"].type is SchemeType.MUTUAL_TLS
    flows = {f.kind: f for f in s["oauth"].flows}
    assert set(flows) == {FlowKind.AUTHORIZATION_CODE, FlowKind.CLIENT_CREDENTIALS}
    assert flows[FlowKind.AUTHORIZATION_CODE].token_url == "https://id.example/token"
    assert sorted(n for n, _ in flows[FlowKind.AUTHORIZATION_CODE].scopes) == ["files.read", "files.write"]
    assert index.operation(CARD_KEY).requirements == ((_req("oauth", "files.read"),),)  # type: ignore[union-attr]


def test_v03_requirements_or_alternatives_and_terms_dedup() -> None:
    """`security` is OR of objects, each an AND of schemes: terms sorted, repeated alternatives kept once."""
    index = _build(
        _card(
            securitySchemes=V03_SCHEMES,
            security=[{"oauth": ["files.read"], "key": []}, {"bearer": []}, {"key": [], "oauth": ["files.read"]}],
            skills=[{"id": "s", "security": [{"mtls": []}, {}]}],
        )
    )
    assert index.diagnostics == ()
    card = index.operation(CARD_KEY)
    assert card is not None
    assert card.requirements == ((_req("key"), _req("oauth", "files.read")), (_req("bearer"),))
    skill = index.operation("s")
    assert skill is not None
    assert (skill.requirements, skill.security_source) == (((_req("mtls"),), ()), "skill")


@pytest.mark.parametrize(
    ("scheme", "pointer", "message"),
    [
        (
            {"type": "kerberos"},
            "/securitySchemes/x/type",
            "scheme 'x' has type 'kerberos', which A2A 0.3 does not define",
        ),
        ({"type": 42}, "/securitySchemes/x/type", "scheme 'x' has type '42', which A2A 0.3 does not define"),
        (
            {"in": "header", "name": "K"},
            "/securitySchemes/x",
            "scheme 'x' has neither a v1.0 wrapper (oauth2SecurityScheme ...) nor a type",
        ),
        ("apiKey", "/securitySchemes/x", "scheme 'x' is not an object; it is ignored"),
    ],
    ids=["unknown-type", "number-type", "no-type", "not-an-object"],
)
def test_an_unreadable_v03_scheme_is_dropped_and_its_requirement_unknown(
    scheme: Any, pointer: str, message: str
) -> None:
    """A scheme of no known kind is reported where it is and not defined: the requirement naming it is
    kept, and reported as naming an undefined scheme (never read as "no credential needed")."""
    index = _build(_card(securitySchemes={"x": scheme}, security=[{"x": []}]))
    assert "x" not in index.scheme_map
    assert _diags(index)[0] == ("invalid-security-scheme", pointer, message)
    assert [d.code for d in index.diagnostics] == ["invalid-security-scheme", "undefined-security-scheme"]
    assert index.operation(CARD_KEY).requirements == ((_req("x"),),)  # type: ignore[union-attr]


def test_security_schemes_that_are_not_an_object_are_ignored() -> None:
    """`securitySchemes: [...]`: one finding, no scheme; the requirements still name what they name."""
    index = _build(_card(securitySchemes=[{"type": "apiKey"}], security=[{"k": []}]))
    assert index.scheme_map == {}
    assert _diags(index)[0] == (
        "invalid-security-scheme",
        "/securitySchemes",
        "securitySchemes is not an object; it is ignored",
    )


@pytest.mark.parametrize(
    ("security", "pointer", "message"),
    [
        ({"k": []}, "/security", "security is not an array; it is ignored"),
        ("k", "/security", "security is not an array; it is ignored"),
        ([{"k": []}, ["k"]], "/security/1", "a requirement that is not an object"),
        ([{"k": "read"}], "/security/0/k", "the scopes of 'k' are not a list of strings"),
        ([{"k": ["read", 7]}], "/security/0/k", "the scopes of 'k' are not a list of strings"),
        ([{"k": None}], "/security/0/k", "the scopes of 'k' are not a list of strings"),
    ],
    ids=["an-object", "a-string", "item-a-list", "scopes-a-string", "scopes-with-a-number", "scopes-null"],
)
def test_malformed_v03_requirements_make_the_card_unknown(security: Any, pointer: str, message: str) -> None:
    """`security` that is not a list of {scheme: [scope strings]}: reported, and the card's needs are unknown
    (requirements None, security not declared), since a half-read list could drop the strictest alternative."""
    index = _build(_card(securitySchemes={"k": {"type": "apiKey", "in": "header", "name": "K"}}, security=security))
    assert _diags(index)[0] == ("invalid-security", pointer, message)
    assert [d.code for d in index.diagnostics] == ["invalid-security", "security-undeclared"]
    assert index.operation(CARD_KEY).requirements is None  # type: ignore[union-attr]
    assert index.security_declared is False


@pytest.mark.parametrize(
    ("reqs", "pointer", "message"),
    [
        ({"schemes": {}}, "/securityRequirements", "securityRequirements is not an array; it is ignored"),
        (["k"], "/securityRequirements/0", "a requirement without a 'schemes' object"),
        ([{"schemes": ["k"]}], "/securityRequirements/0", "a requirement without a 'schemes' object"),
        (
            [{"schemes": {"k": {"list": "read"}}}],
            "/securityRequirements/0/schemes/k",
            "the scopes of 'k' are not a list of strings",
        ),
        (
            [{"schemes": {"k": 3}}],
            "/securityRequirements/0/schemes/k",
            "the scopes of 'k' are not a list of strings",
        ),
    ],
    ids=["an-object", "item-a-string", "schemes-a-list", "list-a-string", "scopes-a-number"],
)
def test_malformed_v10_requirements_make_the_card_unknown(reqs: Any, pointer: str, message: str) -> None:
    """The same for 1.0's `securityRequirements` ({schemes: {name: {list: [...]}}})."""
    index = _build(
        {
            "name": "Agent",
            "supportedInterfaces": [{"url": "https://a.example/rpc", "protocolVersion": "1.0"}],
            "securitySchemes": {"k": {"apiKeySecurityScheme": {"location": "header", "name": "K"}}},
            "securityRequirements": reqs,
        }
    )
    assert _diags(index)[0] == ("invalid-security", pointer, message)
    assert [d.code for d in index.diagnostics] == ["invalid-security", "security-undeclared"]
    assert index.operation(CARD_KEY).requirements is None  # type: ignore[union-attr]


def test_a_malformed_v03_form_beside_a_good_v10_form_leaves_the_v10_one() -> None:
    """A merged card whose 0.3 `security` is malformed: reported, and the 1.0 requirements are used."""
    index = _build(
        {
            "name": "Agent",
            "supportedInterfaces": [{"url": "https://a.example/rpc", "protocolVersion": "1.0"}],
            "securitySchemes": {"k": {"apiKeySecurityScheme": {"location": "header", "name": "K"}}},
            "securityRequirements": [{"schemes": {"k": {}}}],
            "security": "k",
        }
    )
    assert _diags(index) == [("invalid-security", "/security", "security is not an array; it is ignored")]
    assert index.operation(CARD_KEY).requirements == ((_req("k"),),)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("v10", "v03", "said"),
    [
        (
            {"apiKeySecurityScheme": {"location": "header", "name": "K"}},
            {"type": "apiKey", "in": "query", "name": "K"},
            "the v1.0 form says apiKey header K, the v0.3 form apiKey query K",
        ),
        (
            {"httpAuthSecurityScheme": {"scheme": "bearer"}},
            {"type": "http", "scheme": "basic"},
            "the v1.0 form says http bearer, the v0.3 form http basic",
        ),
        (
            {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://a/oidc"}},
            {"type": "openIdConnect", "openIdConnectUrl": "https://b/oidc"},
            "the v1.0 form says openIdConnect https://a/oidc, the v0.3 form openIdConnect https://b/oidc",
        ),
    ],
    ids=["api-key-location", "http-scheme", "openid-url"],
)
def test_the_two_forms_of_one_scheme_disagreeing_are_named(v10: dict[str, Any], v03: dict[str, Any], said: str) -> None:
    """A scheme in both forms that differ in what a client sends: the 1.0 form is used, the difference named."""
    index = _build(
        {
            "name": "Agent",
            "supportedInterfaces": [{"url": "https://a.example/rpc", "protocolVersion": "1.0"}],
            "securitySchemes": {"k": {**v10, **v03}},
            "securityRequirements": [{"schemes": {"k": {}}}],
        }
    )
    assert _diags(index) == [
        ("a2a-shapes-disagree", "/securitySchemes/k", f"scheme 'k': {said}; the v1.0 form is used")
    ]


def test_a_scheme_setting_two_oneof_wrappers_uses_the_first() -> None:
    """A 1.0 scheme that sets two oneof members is malformed: the first (in the proto's order) is used, said so."""
    index = _build(
        {
            "name": "Agent",
            "supportedInterfaces": [{"url": "https://a.example/rpc", "protocolVersion": "1.0"}],
            "securitySchemes": {
                "k": {
                    "apiKeySecurityScheme": {"location": "header", "name": "K"},
                    "mtlsSecurityScheme": {},
                }
            },
            "securityRequirements": [{"schemes": {"k": {}}}],
        }
    )
    assert index.scheme_map["k"].type is SchemeType.API_KEY
    assert _diags(index) == [
        (
            "invalid-security-scheme",
            "/securitySchemes/k",
            "scheme 'k' sets 2 of the oneof wrappers (apiKeySecurityScheme, mtlsSecurityScheme); "
            "the first, apiKeySecurityScheme, is used",
        )
    ]


def test_skills_without_an_id_and_repeated_ids_are_reported() -> None:
    """A skill without a string id is skipped; a repeated id keeps the first skill, both reported."""
    index = _build(
        _card(
            securitySchemes={"k": {"type": "apiKey", "in": "header", "name": "K"}},
            security=[{"k": []}],
            skills=[
                {"id": "a", "security": []},
                {"name": "no id"},
                {"id": 5},
                "a",
                {"id": "a", "security": [{"k": []}]},
            ],
        )
    )
    assert _diags(index) == [
        ("invalid-operation", "/skills/1", "a skill without an id (or not an object) was skipped"),
        ("invalid-operation", "/skills/2", "a skill without an id (or not an object) was skipped"),
        ("invalid-operation", "/skills/3", "a skill without an id (or not an object) was skipped"),
        ("duplicate-operation-id", "/skills/4", "skill id 'a' is used again (first at /skills/0); the first is used"),
    ]
    skill = index.operation("a")
    assert skill is not None
    assert skill.requirements == ()
