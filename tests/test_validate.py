"""Every validation rule, triggered from a small card, with its code, severity and path."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from ramscope import Severity, all_rules, load_card, validate

from .conftest import EXAMPLE_CARD

Mutation = Callable[[dict[str, Any]], None]
P = "/resourceAccessManifest"


def _set(path: str, value: Any) -> Mutation:
    """Set a value at a slash path inside the manifest (list indexes as numbers)."""

    def mutate(m: dict[str, Any]) -> None:
        *parents, last = path.strip("/").split("/")
        node: Any = m
        for tok in parents:
            node = node[int(tok)] if isinstance(node, list) else node[tok]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


def _delete(path: str) -> Mutation:
    def mutate(m: dict[str, Any]) -> None:
        *parents, last = path.strip("/").split("/")
        node: Any = m
        for tok in parents:
            node = node[int(tok)] if isinstance(node, list) else node[tok]
        del node[last]

    return mutate


def _append_access(**fields: Any) -> Mutation:
    def mutate(m: dict[str, Any]) -> None:
        acc = {
            "id": "extra",
            "operation": "google-calendar-events-v3-insert",
            "identity_used": "END_USER",
            "access_justification": "because",
            "necessity": "OPTIONAL",
        }
        acc.update(fields)
        m["resource_accesses"].append(acc)

    return mutate


def _seq(*ms: Mutation) -> Mutation:
    def mutate(m: dict[str, Any]) -> None:
        for f in ms:
            f(m)

    return mutate


def _drop_accesses(m: dict[str, Any]) -> None:
    m["resource_accesses"] = []


def _add_unused_resource(m: dict[str, Any]) -> None:
    m["resources"].append(
        {
            "id": "spare",
            "interaction_protocol": "REST",
            "owner": "CONSUMER",
            "spec": {"spec_url": "https://example.com/openapi.json"},
        }
    )


def _add_unused_operation(m: dict[str, Any]) -> None:
    m["operations"].append({"id": "spare-op", "resource": "google-calendar-events-v3"})


CASES: list[tuple[str, Mutation, str, str, str]] = [
    # (test id, mutation, code, severity, pointer)
    ("invalid-type", _set("resources/0/id", 7), "invalid-type", "error", f"{P}/resources/0/id"),
    ("unknown-field", _set("resources/0/colour", "red"), "unknown-field", "warning", f"{P}/resources/0/colour"),
    (
        "unknown-enum-value",
        _set("resources/1/owner", "SECOND_PARTY"),
        "unknown-enum-value",
        "error",
        f"{P}/resources/1/owner",
    ),
    (
        "duplicate-field",
        _set("resources/0/displayName", "X"),
        "duplicate-field",
        "error",
        f"{P}/resources/0/displayName",
    ),
    ("missing-id", _set("operations/1/id", ""), "missing-id", "error", f"{P}/operations/1/id"),
    (
        "duplicate-id",
        _set("resource_accesses/1/id", "create-personal-calendar-event-for-flight-reservation"),
        "duplicate-id",
        "error",
        f"{P}/resource_accesses/1/id",
    ),
    (
        "dangling-resource",
        _set("operations/0/resource", "google-calendar-event-v3"),
        "dangling-reference",
        "error",
        f"{P}/operations/0/resource",
    ),
    (
        "dangling-operation",
        _set("resource_accesses/3/operation", "google-maps-lookup-weather-cal"),
        "dangling-reference",
        "error",
        f"{P}/resource_accesses/3/operation",
    ),
    (
        "unspecified-enum",
        _set("resource_accesses/0/necessity", "ACCESS_NECESSITY_UNSPECIFIED"),
        "unspecified-enum",
        "error",
        f"{P}/resource_accesses/0/necessity",
    ),
    ("unspecified-missing", _delete("resources/2/owner"), "unspecified-enum", "error", f"{P}/resources/2"),
    ("missing-spec-url", _delete("resources/1/spec/spec_url"), "missing-spec-url", "error", f"{P}/resources/1/spec"),
    ("missing-spec", _delete("resources/1/spec"), "missing-spec-url", "error", f"{P}/resources/1"),
    (
        "invalid-spec-url-scheme",
        _set("resources/0/spec/spec_url", "file:///etc/passwd"),
        "invalid-spec-url",
        "error",
        f"{P}/resources/0/spec/spec_url",
    ),
    (
        "invalid-spec-url-userinfo",
        _set("resources/0/spec/spec_url", "https://user:pw@example.com/spec"),
        "invalid-spec-url",
        "error",
        f"{P}/resources/0/spec/spec_url",
    ),
    (
        "invalid-spec-url-port",
        _set("resources/0/spec/spec_url", "https://example.com:99999/spec"),
        "invalid-spec-url",
        "error",
        f"{P}/resources/0/spec/spec_url",
    ),
    (
        "invalid-op-spec-url",
        _set("operations/0/api_operation_spec/spec_url", "gopher://x"),
        "invalid-spec-url",
        "error",
        f"{P}/operations/0/api_operation_spec/spec_url",
    ),
    (
        "insecure-spec-url",
        _set("resources/1/spec/spec_url", "http://openholidaysapi.org/swagger/v1/swagger.json"),
        "insecure-spec-url",
        "warning",
        f"{P}/resources/1/spec/spec_url",
    ),
    (
        "missing-operation-selector",
        _set("operations/1/api_operation_spec", {}),
        "missing-operation-selector",
        "error",
        f"{P}/operations/1/api_operation_spec",
    ),
    (
        "invalid-http-method",
        _set("operations/1/api_operation_spec/http_method", "FETCH"),
        "invalid-http-method",
        "error",
        f"{P}/operations/1/api_operation_spec/http_method",
    ),
    (
        "missing-resource-path",
        _delete("resources/1/spec/resource_path"),
        "missing-resource-path",
        "error",
        f"{P}/operations/1/api_operation_spec",
    ),
    (
        "missing-tool-name",
        _delete("resources/2/spec/resource_path"),
        "missing-tool-name",
        "error",
        f"{P}/resources/2/spec/resource_path",
    ),
    (
        "ignored-api-operation-spec",
        _set("operations/2/api_operation_spec", {"http_method": "POST"}),
        "ignored-api-operation-spec",
        "warning",
        f"{P}/operations/2/api_operation_spec",
    ),
    ("unused-resource", _add_unused_resource, "unused-resource", "warning", f"{P}/resources/3"),
    ("unused-operation", _add_unused_operation, "unused-operation", "warning", f"{P}/operations/3"),
    (
        "empty-justification",
        _set("resource_accesses/2/access_justification", "   "),
        "empty-justification",
        "warning",
        f"{P}/resource_accesses/2/access_justification",
    ),
    (
        "draft-placeholder",
        _set("resource_accesses/2/access_justification", "TODO(ramscope draft): say why the agent needs this access"),
        "draft-placeholder",
        "warning",
        f"{P}/resource_accesses/2/access_justification",
    ),
    ("empty-manifest", _drop_accesses, "empty-manifest", "warning", P),
]


def _card_with(mutation: Mutation) -> dict[str, Any]:
    import json

    doc = json.loads(EXAMPLE_CARD.read_text("utf-8"))
    mutation(doc["resourceAccessManifest"])
    return doc


@pytest.mark.parametrize(("mutation", "code", "severity", "path"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule_fires_with_code_severity_and_path(mutation: Mutation, code: str, severity: str, path: str) -> None:
    """The mutation produces exactly this diagnostic at exactly this place."""
    diags = validate(_card_with(mutation))
    hits = [d for d in diags if d.code == code and d.path == path]
    assert hits, f"no {code} at {path}; got {[(d.code, d.path) for d in diags]}"
    assert all(d.severity is Severity(severity) for d in hits)


def test_example_validates_clean() -> None:
    """The bundled example has no diagnostics at all."""
    assert validate(EXAMPLE_CARD) == []


def test_did_you_mean_on_dangling_reference() -> None:
    """A near-miss reference suggests the id the author probably meant."""
    diags = validate(_card_with(_set("operations/0/resource", "google-calendar-event-v3")))
    (d,) = [d for d in diags if d.code == "dangling-reference"]
    assert d.hint == "did you mean 'google-calendar-events-v3'?"
    assert d.data["suggestions"] == ["google-calendar-events-v3"]


def test_unknown_enum_hint_suggests_only_valid_values() -> None:
    """A misspelt value gets the valid one it resembles; UNSPECIFIED, itself an error, is never suggested."""
    (typo,) = [d for d in validate(_card_with(_set("resources/0/owner", "CONSUMR"))) if d.code == "unknown-enum-value"]
    assert typo.hint == "did you mean 'CONSUMER'?"
    diags = validate(_card_with(_set("resource_accesses/0/necessity", "NECESSITY_UNSPECIFIED")))
    (d,) = [d for d in diags if d.code == "unknown-enum-value"]
    assert "UNSPECIFIED" not in (d.hint or "")
    assert d.message.endswith("expected one of REQUIRED, RECOMMENDED, OPTIONAL")


def test_unknown_enum_is_not_reported_twice() -> None:
    """A rejected enum value gets unknown-enum-value only, not also unspecified-enum."""
    codes = [d.code for d in validate(_card_with(_set("resource_accesses/0/identity_used", "ROBOT")))]
    assert "unknown-enum-value" in codes
    assert "unspecified-enum" not in codes


def test_no_manifest_and_multiple_manifests_rules() -> None:
    """Card-level rules come through validate as well."""
    assert [d.code for d in validate({"name": "x"})] == ["no-manifest"]
    doc = _card_with(lambda m: None)
    doc["capabilities"]["extensions"] = [{"uri": "u", "params": {"resourceAccessManifest": {"resources": []}}}]
    assert "multiple-manifests" in [d.code for d in validate(doc)]


def test_every_parse_and_validate_rule_has_a_case() -> None:
    """No rule of the card stages goes untested."""
    tested = {c[2] for c in CASES} | {"no-manifest", "multiple-manifests"}
    declared = {r.code for r in all_rules() if r.stage in ("parse", "validate")}
    assert declared <= tested, f"untested rules: {sorted(declared - tested)}"


def test_loading_does_not_mutate_input() -> None:
    """Validation reads the card; the caller's dict is untouched."""
    doc = _card_with(lambda m: None)
    before = copy.deepcopy(doc)
    validate(doc)
    assert doc == before
    assert load_card(doc).manifest is not None
