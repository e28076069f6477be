"""OpenAPI 2.0 / 3.x -> SpecIndex: security semantics, schemes, base paths, keys."""

from __future__ import annotations

from typing import Any

import pytest

from ramscope.specs import (
    FlowKind,
    SchemeRequirement,
    SchemeType,
    SpecIndex,
    SpecKind,
    build_index,
)
from tests._specs import fixture_spec, make_spec

R = SchemeRequirement.of


def ops(index: SpecIndex) -> dict[str, Any]:
    return {o.key: o for o in index.operations}


def oas3(paths: dict[str, Any], **root: Any) -> dict[str, Any]:
    return {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": paths, **root}


def get(op_id: str, **extra: Any) -> dict[str, Any]:
    return {"get": {"operationId": op_id, "responses": {"200": {"description": "ok"}}, **extra}}


# --------------------------------------------------------------------------- Swagger 2.0


@pytest.fixture(params=["swagger2-security.json", "swagger2-security.yaml"])
def swagger2(request: pytest.FixtureRequest) -> SpecIndex:
    return build_index(fixture_spec(request.param))


def test_swagger2_schemes_cover_every_form(swagger2: SpecIndex) -> None:
    """basic, apiKey (header, query) and oauth2 with each of the four 2.0 flows become typed schemes."""
    s = swagger2.scheme_map
    assert s["basic_auth"].type is SchemeType.HTTP
    assert s["basic_auth"].http_scheme == "basic"
    assert (s["api_key"].type, s["api_key"].api_key_in, s["api_key"].api_key_name) == (
        SchemeType.API_KEY,
        "header",
        "X-API-Key",
    )
    assert (s["api_key_query"].api_key_in, s["api_key_query"].api_key_name) == ("query", "api_key")
    flows = {name: s[name].flows[0] for name in s if s[name].type is SchemeType.OAUTH2}
    assert {n: f.kind for n, f in flows.items()} == {
        "petstore_implicit": FlowKind.IMPLICIT,
        "petstore_password": FlowKind.PASSWORD,
        "petstore_application": FlowKind.CLIENT_CREDENTIALS,
        "petstore_access_code": FlowKind.AUTHORIZATION_CODE,
    }
    assert flows["petstore_implicit"].authorization_url == "https://petstore.example.com/oauth/authorize"
    assert flows["petstore_access_code"].token_url == "https://petstore.example.com/oauth/token"
    # Scope descriptions in spec order, for consent screens.
    assert flows["petstore_implicit"].scopes == (
        ("write:pets", "modify pets in your account"),
        ("read:pets", "read your pets"),
    )
    assert s["petstore_password"].scope_description("read:pets") == "read your pets"


def test_swagger2_requirements(swagger2: SpecIndex) -> None:
    """Root inheritance, override, OR of alternatives, AND within one, and security: [] as none."""
    o = ops(swagger2)
    assert (o["listPets"].requirements, o["listPets"].security_source) == (((R("api_key"),),), "root")
    assert o["addPet"].requirements == ((R("petstore_implicit", ["read:pets", "write:pets"]),),)
    assert o["getPet"].requirements == ((R("basic_auth"),), (R("api_key_query"),))
    assert o["deletePet"].requirements == (
        (R("petstore_access_code", ["admin"]),),
        (R("petstore_application", ["admin"]),),
    )
    assert o["getInventory"].requirements == ((R("petstore_password", ["read:pets"]), R("api_key")),)
    assert (o["health"].requirements, o["health"].security_source) == ((), "operation")
    assert swagger2.security_declared is True
    assert swagger2.diagnostics == ()


def test_swagger2_base_path(swagger2: SpecIndex) -> None:
    """basePath (trailing slash dropped) prefixes full_path and is listed in base_paths."""
    assert swagger2.base_paths == ("/v2",)
    assert ops(swagger2)["getPet"].full_path == "/v2/pets/{petId}"
    assert ops(swagger2)["getPet"].path == "/pets/{petId}"
    assert swagger2.spec_version == "2.0"
    assert swagger2.kind is SpecKind.OPENAPI


def test_swagger2_yaml_and_json_index_alike() -> None:
    """The YAML fixture (anchors, integer response codes) indexes exactly like the JSON one."""
    a = build_index(fixture_spec("swagger2-security.json")).to_dict()
    b = build_index(fixture_spec("swagger2-security.yaml")).to_dict()
    for d in (a, b):
        d.pop("url"), d.pop("sha256")
    assert a == b


def test_swagger2_unknown_flow_records_no_flow() -> None:
    """An unknown Swagger flow is diagnosed and no flow is invented for it."""
    doc = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "securityDefinitions": {"o": {"type": "oauth2", "flow": "magic", "scopes": {"a": "A"}}},
        "paths": {"/x": {"get": {"operationId": "x", "security": [{"o": ["a"]}], "responses": {}}}},
    }
    index = build_index(make_spec(doc))
    assert index.scheme_map["o"].flows == ()
    assert "invalid-security-scheme" in {d.code for d in index.diagnostics}


# --------------------------------------------------------------------------- OAS 3.1


@pytest.fixture
def oas31() -> SpecIndex:
    return build_index(fixture_spec("oas31-security.yaml"))


def test_oas31_mutual_tls_and_scheme_types(oas31: SpecIndex) -> None:
    """mutualTLS, http bearer, openIdConnect, cookie apiKey via $ref and multi-flow oauth2 are all read."""
    s = oas31.scheme_map
    assert s["mtls"].type is SchemeType.MUTUAL_TLS
    assert s["mtls"].description == "client certificate"
    assert (s["bearer"].type, s["bearer"].http_scheme, s["bearer"].bearer_format) == (SchemeType.HTTP, "bearer", "JWT")
    assert s["oidc"].open_id_connect_url == "https://auth.example.com/.well-known/openid-configuration"
    assert (s["session"].type, s["session"].api_key_in, s["session"].api_key_name) == (
        SchemeType.API_KEY,
        "cookie",
        "SESSION",
    )
    oauth = s["oauth"]
    assert oauth.flow_kinds == {FlowKind.AUTHORIZATION_CODE, FlowKind.CLIENT_CREDENTIALS}
    code = next(f for f in oauth.flows if f.kind is FlowKind.AUTHORIZATION_CODE)
    assert code.refresh_url == "https://auth.example.com/refresh"
    assert [name for name, _ in code.scopes] == ["items.read", "items.write", "items.admin"]


def test_oas31_anonymous_alternatives(oas31: SpecIndex) -> None:
    """{} in a security list is an empty alternative (anonymous allowed), distinct from security: []."""
    o = ops(oas31)
    assert o["listItems"].requirements == ((R("oauth", ["items.read"]),), ())
    assert o["listItems"].security_source == "root"
    assert o["getItem"].requirements == ((),)
    assert o["publicInfo"].requirements == ()
    assert o["createItem"].requirements == ((R("mtls"),), (R("oauth", ["items.write"]),))
    assert o["deleteItem"].requirements == ((R("oauth", ["items.admin"]), R("mtls")),)


def test_oas31_path_item_ref_and_webhooks(oas31: SpecIndex) -> None:
    """A path item $ref to components.pathItems is followed; webhooks are not operations one calls."""
    o = ops(oas31)
    assert o["getItemHistory"].path == "/items/{id}/history"
    assert o["getItemHistory"].requirements == ((R("oidc", ["openid", "profile"]),),)
    assert o["getItemHistory"].pointer == "/paths/~1items~1{id}~1history/get"
    assert "itemChangedHook" not in o


def test_oas31_servers(oas31: SpecIndex) -> None:
    """Server variables take their defaults; other servers give alt paths; operation servers win."""
    o = ops(oas31)
    assert oas31.base_paths == ("/api/v1", "/sandbox", "/admin")
    assert o["listItems"].full_path == "/api/v1/items"
    assert o["listItems"].alt_paths == ("/sandbox/items",)
    assert o["deleteItem"].full_path == "/admin/items/{id}"


# --------------------------------------------------------------------------- security semantics


def test_spec_without_any_security_is_unknown_not_none() -> None:
    """No root and no operation security anywhere: requirements None, security_declared False, a warning."""
    doc = oas3(
        {"/a": get("a"), "/b": get("b")},
        components={"securitySchemes": {"tok": {"type": "http", "scheme": "bearer"}}},
    )
    index = build_index(make_spec(doc))
    assert index.security_declared is False
    assert all(o.requirements is None and o.security_source == "undeclared" for o in index.operations)
    (warn,) = index.diagnostics
    assert warn.code == "security-undeclared"
    assert warn.severity.value == "warning"
    assert "tok" in warn.message
    assert "never requires" in warn.message


def test_operation_without_security_in_a_spec_that_declares_some_needs_none() -> None:
    """With no root security, an operation without its own security needs none (the spec says so elsewhere)."""
    doc = oas3(
        {"/open": get("open"), "/closed": get("closed", security=[{"k": []}])},
        components={"securitySchemes": {"k": {"type": "apiKey", "in": "header", "name": "K"}}},
    )
    o = ops(build_index(make_spec(doc)))
    assert (o["open"].requirements, o["open"].security_source) == ((), "none")
    assert o["closed"].requirements == ((R("k"),),)


def test_root_security_empty_list_declares_none() -> None:
    """security: [] at the root is a declaration: every inheriting operation needs nothing."""
    index = build_index(make_spec(oas3({"/a": get("a")}, security=[])))
    assert index.security_declared is True
    assert index.operations[0].requirements == ()
    assert index.operations[0].security_source == "root"


def test_undefined_scheme_is_kept_and_diagnosed() -> None:
    """A requirement naming an undefined scheme keeps its term; one diagnostic per scheme, with a count."""
    doc = oas3({"/a": get("a", security=[{"ghost": ["x"]}]), "/b": get("b", security=[{"ghost": ["y"]}])})
    index = build_index(make_spec(doc))
    assert ops(index)["a"].requirements == ((R("ghost", ["x"]),),)
    (d,) = [d for d in index.diagnostics if d.code == "undefined-security-scheme"]
    assert d.path == "/paths/~1a/get/security/0/ghost"
    assert "2 time(s)" in d.message
    assert d.data["scheme"] == "ghost"


@pytest.mark.parametrize(
    "security",
    [{"k": []}, [["k"]], [{"k": "read"}], [{"k": [1]}]],
    ids=["not-a-list", "item-not-object", "scopes-not-list", "scope-not-string"],
)
def test_malformed_security_makes_requirements_unknown(security: Any) -> None:
    """A malformed security list never loses alternatives: the requirements become unknown (None)."""
    doc = oas3(
        {"/a": get("a", security=security)},
        components={"securitySchemes": {"k": {"type": "apiKey", "in": "query", "name": "k"}}},
    )
    index = build_index(make_spec(doc))
    assert index.operations[0].requirements is None
    assert index.operations[0].security_source == "invalid"
    # The only declaration is malformed, so the spec declares nothing well-formed (issue 14, item 5).
    assert [d.code for d in index.diagnostics] == ["invalid-security", "security-undeclared"]


def test_undeclared_scope_is_an_info() -> None:
    """A scope the oauth2 scheme does not list is kept, with an info diagnostic (no description to show)."""
    doc = oas3(
        {"/a": get("a", security=[{"o": ["listed", "unlisted"]}])},
        components={
            "securitySchemes": {
                "o": {
                    "type": "oauth2",
                    "flows": {"implicit": {"authorizationUrl": "https://a", "scopes": {"listed": "L"}}},
                }
            }
        },
    )
    index = build_index(make_spec(doc))
    (d,) = index.diagnostics
    assert (d.code, d.severity.value, d.data["scope"]) == ("undeclared-scope", "info", "unlisted")


def test_unknown_scheme_type_is_kept_as_unknown() -> None:
    """A scheme of an unknown type stays in the index as type unknown, with a diagnostic."""
    doc = oas3({"/a": get("a", security=[{"w": []}])}, components={"securitySchemes": {"w": {"type": "weird"}}})
    index = build_index(make_spec(doc))
    assert index.scheme_map["w"].type is SchemeType.UNKNOWN
    assert [d.code for d in index.diagnostics] == ["invalid-security-scheme"]


def test_oas32_device_flow_and_query_method() -> None:
    """OAS 3.2's deviceAuthorization flow maps to deviceCode and its QUERY method is indexed."""
    doc = {
        "openapi": "3.2.0",
        "info": {"title": "t", "version": "1"},
        "components": {
            "securitySchemes": {
                "d": {
                    "type": "oauth2",
                    "flows": {
                        "deviceAuthorization": {
                            "deviceAuthorizationUrl": "https://a/device",
                            "tokenUrl": "https://a/token",
                            "scopes": {"s": "S"},
                        }
                    },
                }
            }
        },
        "security": [{"d": ["s"]}],
        "paths": {"/search": {"query": {"operationId": "search", "responses": {}}}},
    }
    index = build_index(make_spec(doc))
    assert index.scheme_map["d"].flows[0].kind is FlowKind.DEVICE_CODE
    assert ops(index)["search"].method == "QUERY"


# --------------------------------------------------------------------------- keys, paths, servers


def test_duplicate_operation_ids_get_method_path_keys() -> None:
    """Duplicate operationIds are diagnosed and keyed "METHOD /path", keeping keys unique."""
    doc = oas3({"/a": get("same"), "/b": get("same"), "/c": get("GET /a")})
    index = build_index(make_spec(doc))
    keys = [o.key for o in index.operations]
    assert len(set(keys)) == 3
    assert "GET /b" in keys
    assert [d.code for d in index.diagnostics if d.code == "duplicate-operation-id"] == ["duplicate-operation-id"]
    assert len(index.by_operation_id["same"]) == 2


def test_operations_without_id_are_keyed_by_method_and_path() -> None:
    """An operation without operationId is indexed with an empty id and a "METHOD /path" key."""
    index = build_index(make_spec(oas3({"/a/{x}": {"put": {"responses": {}}}})))
    (op,) = index.operations
    assert (op.key, op.operation_id, op.method) == ("PUT /a/{x}", "", "PUT")


def test_path_extensions_and_malformed_items_are_skipped() -> None:
    """x- keys under paths are extensions, not paths; a non-object path item is diagnosed and skipped."""
    doc = oas3({"x-codegen": "/root", "/bad": "nope", "/ok": get("ok")}, security=[])
    index = build_index(make_spec(doc))
    assert [o.key for o in index.operations] == ["ok"]
    assert [(d.code, d.data.get("skipped_path")) for d in index.diagnostics] == [("invalid-operation", "/bad")]


@pytest.mark.parametrize(
    ("url", "servers", "base"),
    [
        ("https://x.test/spec.json", None, ""),
        ("https://x.test/spec.json", [{"url": "https://api.x.test/v3/"}], "/v3"),
        ("https://x.test/spec.json", [{"url": "//api.x.test/v3"}], "/v3"),
        ("https://x.test/docs/spec.json", [{"url": "v1"}], "/docs/v1"),
        ("https://x.test/docs/spec.json", [{"url": "/v1"}], "/v1"),
        ("https://x.test/docs/spec.json", [{"url": ""}], ""),
        (
            "https://x.test/spec.json",
            [{"url": "https://{h}.x.test/{b}", "variables": {"b": {"default": "beta"}}}],
            "/beta",
        ),
    ],
    ids=["none", "absolute", "scheme-relative", "relative", "root-relative", "empty", "variables"],
)
def test_server_base_paths(url: str, servers: Any, base: str) -> None:
    """Server URLs give base paths: variables substituted, relative URLs resolved against the spec's URL."""
    doc = oas3({"/p": get("p")}, **({"servers": servers} if servers is not None else {}))
    index = build_index(make_spec(doc, url))
    assert index.operations[0].full_path == base + "/p"
    assert index.base_paths == ((base,) if base else ())


def test_long_descriptions_are_cut() -> None:
    """Operation descriptions are display text: long ones are cut so the cached index stays small."""
    index = build_index(make_spec(oas3({"/a": get("a", description="word " * 200, summary="Sum")})))
    op = index.operations[0]
    assert op.title == "Sum"
    assert len(op.description) == 400
    assert op.description.endswith("…")


def test_index_round_trips_through_json(oas31: SpecIndex) -> None:
    """The index serialises and loads back equal (the cache relies on it)."""
    again = SpecIndex.from_json(oas31.to_json())
    assert again == oas31
    assert again.operations == oas31.operations


# --------------------------------------------------------------------------- malformed security (issue 14, item 5)

_KEY_SCHEME = {"securitySchemes": {"k": {"type": "apiKey", "in": "query", "name": "k"}}}


@pytest.mark.parametrize(
    "bad", [None, "k", 7, {"k": []}, [["k"]]], ids=["null", "string", "number", "object", "nested"]
)
def test_malformed_security_on_one_operation_does_not_declare_the_spec(bad: Any) -> None:
    """`security: null` on one operation used to mark the whole spec as declared, so an unrelated operation
    without security became "needs nothing". Only well-formed declarations declare; both stay unknown."""
    doc = oas3({"/a": get("a", security=bad), "/b": get("b")}, components=_KEY_SCHEME)
    index = build_index(make_spec(doc))
    o = ops(index)
    assert (o["a"].requirements, o["a"].security_source) == (None, "invalid")
    assert (o["b"].requirements, o["b"].security_source) == (None, "undeclared")
    assert index.security_declared is False
    assert {d.code for d in index.diagnostics} == {"invalid-security", "security-undeclared"}


def test_malformed_root_security_does_not_declare_the_spec() -> None:
    """A malformed root `security` makes its inheritors unknown, and declares nothing for the others."""
    doc = oas3({"/a": get("a")}, security="k", components=_KEY_SCHEME)
    index = build_index(make_spec(doc))
    assert (index.operations[0].requirements, index.operations[0].security_source) == (None, "invalid")
    assert index.security_declared is False


def test_a_well_formed_declaration_elsewhere_still_declares_the_spec() -> None:
    """Beside a malformed one, a well-formed operation `security` declares: only the malformed one is unknown."""
    doc = oas3(
        {"/a": get("a", security=None), "/b": get("b"), "/c": get("c", security=[{"k": []}])}, components=_KEY_SCHEME
    )
    o = ops(index := build_index(make_spec(doc)))
    assert index.security_declared is True
    assert o["a"].requirements is None
    assert (o["b"].requirements, o["b"].security_source) == ((), "none")
    assert o["c"].requirements == ((R("k"),),)


def test_security_on_a_path_item_is_diagnosed_and_its_operations_are_unknown() -> None:
    """`security` on a path item is not OpenAPI: not silently ignored. Its operations without their own
    `security` are unknown (what the writer meant cannot be told); those with their own keep theirs."""
    item = {**get("a"), "post": {"operationId": "p", "security": [{"k": []}]}, "security": [{"k": []}]}
    doc = oas3({"/a": item, "/b": get("b", security=[])}, components=_KEY_SCHEME)
    index = build_index(make_spec(doc))
    o = ops(index)
    assert (o["a"].requirements, o["a"].security_source) == (None, "invalid")
    assert o["p"].requirements == ((R("k"),),)
    assert o["b"].requirements == ()
    (d,) = [d for d in index.diagnostics if d.code == "misplaced-security"]
    assert d.path == "/paths/~1a/get"
    assert "path item" in d.message


def test_security_on_a_path_item_whose_operations_all_declare_is_still_reported() -> None:
    item = {"get": {"operationId": "a", "security": []}, "security": [{"k": []}]}
    index = build_index(make_spec(oas3({"/a": item}, components=_KEY_SCHEME)))
    assert index.operations[0].requirements == ()
    assert [(d.code, d.path) for d in index.diagnostics] == [("misplaced-security", "/paths/~1a/security")]
