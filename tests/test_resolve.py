"""Resolving manifest operations against a SpecIndex: order, matching rules, failures and their diagnostics."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ramscope.card import load_card
from ramscope.derive.resolve import Target, Unresolved, resolve, spec_url_for, unresolved_for_error
from ramscope.errors import FetchError, OfflineMissError, SpecError
from ramscope.specs import SpecIndex, SpecKind, build_index
from tests._specs import make_spec, rest_operation

EXAMPLE_CARD = Path(__file__).resolve().parent.parent / "examples" / "travel-agent.card.json"


@pytest.fixture
def index() -> SpecIndex:
    doc: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {"title": "Holidays", "version": "1"},
        "servers": [{"url": "https://openholidaysapi.org/api"}],
        "components": {"securitySchemes": {"k": {"type": "apiKey", "in": "header", "name": "K"}}},
        "security": [{"k": []}],
        "paths": {
            "/PublicHolidays": {
                "get": {"operationId": "getPublicHolidays", "responses": {}},
                "post": {"operationId": "addPublicHoliday", "responses": {}},
            },
            "/PublicHolidays/{id}": {"get": {"operationId": "getPublicHoliday", "responses": {}}},
            "/SchoolHolidays/{countryIsoCode}": {"get": {"operationId": "getSchoolHolidays", "responses": {}}},
            "/Countries/": {"get": {"responses": {}}},
            "/dup/{a}": {"get": {"operationId": "dupA", "responses": {}}},
            "/dup/{b}": {"get": {"operationId": "dupB", "responses": {}}},
        },
    }
    return build_index(make_spec(doc, "https://openholidaysapi.org/swagger/v1/swagger.json"))


def test_operation_id_first(index: SpecIndex) -> None:
    """operation_id is matched first, and says so in matched_by; path + method naming the same
    operation (or none) agree with it."""
    got = resolve(*rest_operation("getPublicHoliday", "GET", "/PublicHolidays/{id}"), index)
    assert isinstance(got, Target)
    assert (got.entry.key, got.matched_by, got.diagnostics) == ("getPublicHoliday", "operation_id", ())
    got = resolve(*rest_operation("getPublicHoliday", "GET", "/Nowhere"), index)
    assert isinstance(got, Target)
    assert got.entry.key == "getPublicHoliday"


def test_path_and_method_naming_another_operation_is_an_error(index: SpecIndex) -> None:
    """operation_id and resource_path + http_method naming two operations: a contradiction (issue 22)."""
    got = resolve(*rest_operation("getPublicHoliday", "GET", "/PublicHolidays"), index)
    assert isinstance(got, Unresolved)
    assert got.reason == "selector-contradiction"
    assert "names operation 'getPublicHolidays'" in got.message


@pytest.mark.parametrize(
    "path",
    [
        "/PublicHolidays",
        "/api/PublicHolidays",
        "/PublicHolidays/",
        "PublicHolidays",
        "https://openholidaysapi.org/api/PublicHolidays",
    ],
)
def test_path_and_method_spellings(index: SpecIndex, path: str) -> None:
    """Paths match with or without the base path, with a trailing slash, without a leading one, or as a full URL."""
    got = resolve(*rest_operation("", "get", path), index)
    assert isinstance(got, Target)
    assert got.entry.key == "getPublicHolidays"
    assert got.matched_by == "path_method"


def test_parameter_names_do_not_matter(index: SpecIndex) -> None:
    """{countryIsoCode} = {country} = {+x}: only the template's shape counts."""
    for path in ("/SchoolHolidays/{country}", "/api/SchoolHolidays/{+x}"):
        got = resolve(*rest_operation("", "GET", path), index)
        assert isinstance(got, Target)
        assert got.entry.key == "getSchoolHolidays"


def test_operation_id_not_found_falls_back_with_a_warning(index: SpecIndex) -> None:
    """An unknown operation_id is a warning (pointing at it, with a suggestion), then path + method is tried."""
    got = resolve(*rest_operation("getPublicHolidayz", "POST", "/PublicHolidays"), index)
    assert isinstance(got, Target)
    assert got.entry.key == "addPublicHoliday"
    (warn,) = got.diagnostics
    assert (warn.code, warn.severity.value, warn.path) == (
        "operation-id-not-found",
        "warning",
        "/operations/0/api_operation_spec/operation_id",
    )
    assert warn.hint is not None
    assert warn.hint.startswith("did you mean getPublicHoliday")
    assert "getPublicHolidays (GET /api/PublicHolidays)" in warn.data["suggestions"]


def test_method_mismatch_is_an_error(index: SpecIndex) -> None:
    """operation_id found but http_method disagrees: the card contradicts itself, nothing is guessed (issue 22)."""
    got = resolve(*rest_operation("getPublicHolidays", "DELETE"), index)
    assert isinstance(got, Unresolved)
    assert got.reason == "selector-contradiction"
    assert [(d.code, d.severity.value, d.path) for d in got.diagnostics] == [
        ("http-method-mismatch", "error", "/operations/0/api_operation_spec/http_method")
    ]


def test_not_found_suggests_three_nearest(index: SpecIndex) -> None:
    """No match: unresolved, with the three nearest operations formatted "id (METHOD /full/path)"."""
    got = resolve(*rest_operation("", "DELETE", "/PublicHoliday/{x}"), index)
    assert isinstance(got, Unresolved)
    assert got.reason == "operation-not-found"
    assert len(got.suggestions) == 3
    assert got.suggestions[0] == "getPublicHoliday (GET /api/PublicHolidays/{id})"
    assert [d.code for d in got.diagnostics] == ["operation-not-found"]
    assert got.diagnostics[0].severity.value == "error"


def test_unknown_operation_id_alone_is_not_found(index: SpecIndex) -> None:
    """An unknown operation_id with no path to fall back on: not found, with id-based suggestions."""
    got = resolve(*rest_operation("addPublicHolidays"), index)
    assert isinstance(got, Unresolved)
    assert got.reason == "operation-not-found"
    assert got.suggestions[0] == "addPublicHoliday (POST /api/PublicHolidays)"
    assert [d.code for d in got.diagnostics] == ["operation-id-not-found", "operation-not-found"]


def test_several_matches_are_an_error_listing_them(index: SpecIndex) -> None:
    """Two paths differing only in parameter names: ambiguous, both listed."""
    got = resolve(*rest_operation("", "GET", "/dup/{z}"), index)
    assert isinstance(got, Unresolved)
    assert got.reason == "ambiguous-operation"
    assert got.suggestions == ("dupA (GET /api/dup/{a})", "dupB (GET /api/dup/{b})")
    assert "matches 2 operations" in got.message


def test_operation_without_id_is_found_by_path(index: SpecIndex) -> None:
    """An operation without operationId is still reachable by path + method."""
    got = resolve(*rest_operation("", "GET", "/Countries"), index)
    assert isinstance(got, Target)
    assert got.entry.key == "GET /Countries/"


@pytest.mark.parametrize(
    ("op_id", "method", "path", "words"),
    [
        ("", "", "", "no api_operation_spec.operation_id"),
        ("", "", "/PublicHolidays", "http_method is not"),
        ("", "GET", "", "no resource_path"),
    ],
)
def test_no_selector(index: SpecIndex, op_id: str, method: str, path: str, words: str) -> None:
    """Neither an operation_id nor path + method: "no-selector", with the operations on the path as hints."""
    got = resolve(*rest_operation(op_id, method, path), index)
    assert isinstance(got, Unresolved)
    assert got.reason == "no-selector"
    assert words in got.message
    if path:
        assert set(got.suggestions) == {
            "getPublicHolidays (GET /api/PublicHolidays)",
            "addPublicHoliday (POST /api/PublicHolidays)",
        }


def test_spec_url_override() -> None:
    """api_operation_spec.spec_url overrides the resource's spec_url."""
    assert spec_url_for(*rest_operation(spec_url="https://a/spec")) == "https://a/spec"
    assert spec_url_for(*rest_operation(spec_url="https://a/spec", operation_spec_url="https://b/spec")) == (
        "https://b/spec"
    )


def test_rest_resolution_does_not_apply_to_mcp_indexes(index: SpecIndex) -> None:
    """An MCP index resolves by tool name (resource_path), not by REST operation ids."""
    got = resolve(*rest_operation("getPublicHolidays"), replace(index, kind=SpecKind.MCP))
    assert isinstance(got, Target)  # operation_id stands in as the tool name when resource_path is empty
    assert got.matched_by == "tool_name"
    got = resolve(*rest_operation("", "GET", "/PublicHolidays"), replace(index, kind=SpecKind.MCP))
    assert isinstance(got, Unresolved)
    assert got.reason == "operation-not-found"


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (FetchError("boom", url="u"), "spec-unavailable"),
        (OfflineMissError("not cached", url="u"), "spec-unavailable"),
        (SpecError("unsupported spec: an HTML page"), "unsupported-spec"),
        (SpecError("bad thing"), "spec-invalid"),
    ],
)
def test_unresolved_for_errors(error: Exception, reason: str) -> None:
    """Fetch and spec errors become Unresolved with a stable reason and a diagnostic at the card's spec_url."""
    got = unresolved_for_error(error, *rest_operation(spec_url="https://x/spec"))  # type: ignore[arg-type]
    assert got.reason == reason
    assert got.diagnostics[0].path == "/resources/0/spec/spec_url"


def test_undeclared_security_travels_with_the_target() -> None:
    """A spec that declares no security: the target carries the warning, pointed at the card's spec_url."""
    doc = {"openapi": "3.0.3", "info": {}, "paths": {"/repos": {"get": {"operationId": "list", "responses": {}}}}}
    got = resolve(*rest_operation("list"), build_index(make_spec(doc, "https://gh.test/spec.json")))
    assert isinstance(got, Target)
    assert got.entry.requirements is None
    (d,) = got.diagnostics
    assert (d.code, d.path, d.data["spec_pointer"]) == ("security-undeclared", "/resources/0/spec/spec_url", "")
    assert d.message.startswith("spec https://gh.test/spec.json: ")


def test_undefined_scheme_travels_only_with_operations_naming_it() -> None:
    """Scheme-specific findings reach only the accesses whose requirements name that scheme."""
    doc = {
        "openapi": "3.0.3",
        "info": {},
        "paths": {
            "/a": {"get": {"operationId": "a", "security": [{"ghost": []}], "responses": {}}},
            "/b": {"get": {"operationId": "b", "security": [], "responses": {}}},
        },
    }
    index = build_index(make_spec(doc))
    a, b = (resolve(*rest_operation(x), index) for x in "ab")
    assert isinstance(a, Target)
    assert [d.code for d in a.diagnostics] == ["undefined-security-scheme"]
    assert isinstance(b, Target)
    assert b.diagnostics == ()


def test_seed_manifest_operations(discovery_documents: Path) -> None:
    """The seed card's calendar operation resolves by operation_id and by path against Calendar's Discovery doc."""
    manifest = load_card(EXAMPLE_CARD).manifest
    resource = next(r for r in manifest.resources if r.id == "google-calendar-events-v3")
    operation = next(o for o in manifest.operations if o.resource == resource.id)
    body = (discovery_documents / "calendar.v3.json").read_bytes()
    index = build_index(make_spec(body, spec_url_for(resource, operation)))
    got = resolve(resource, operation, index)
    assert isinstance(got, Target)
    assert got.entry.operation_id == "calendar.events.insert"
    assert got.matched_by == "operation_id"
    assert got.entry.method == "POST"
    assert operation.api_operation_spec is not None
    by_path = replace(operation, api_operation_spec=replace(operation.api_operation_spec, operation_id=""))
    got = resolve(resource, by_path, index)
    assert isinstance(got, Target)
    assert got.entry.operation_id == "calendar.events.insert"
    assert got.matched_by == "path_method"
