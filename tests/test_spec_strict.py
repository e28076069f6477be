"""Opt-in strict validation: real findings, and a sandbox that lets the validator do no I/O."""

from __future__ import annotations

from typing import Any

import pytest

from ramscope.specs.strict import external_refs, validate_spec
from tests._spec_fixtures import IOAudit
from tests._specs import fixture_spec, make_spec

pytest.importorskip("openapi_spec_validator")


def minimal(**extra: Any) -> dict[str, Any]:
    return {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {}, **extra}


@pytest.fixture
def warm() -> None:
    """Run the validator once so its own lazy imports and bundled meta-schemas are loaded before auditing."""
    validate_spec(make_spec(minimal()))
    validate_spec(make_spec({**minimal(), "openapi": "3.1.0"}))


def test_valid_spec_has_no_findings(warm: None) -> None:
    """A well-formed spec gives no diagnostics."""
    assert validate_spec(make_spec(minimal())) == ()


def test_invalid_spec_findings_point_into_the_spec(warm: None) -> None:
    """Violations become spec-validation-failed warnings at the offending JSON pointer."""
    bad = {"openapi": "3.0.3", "paths": {"/a": {"get": {"responses": {"200": {"description": 1}}}}}}
    found = validate_spec(make_spec(bad))
    assert {d.code for d in found} == {"spec-validation-failed"}
    assert "/paths/~1a/get/responses/200" in {d.path for d in found}
    assert any("'info' is a required property" in d.message for d in found)


def test_specs_with_external_refs_are_not_handed_to_the_validator(io_audit: IOAudit, warm: None) -> None:
    """Any $ref leaving the document: refused before validation, with no file or socket touched."""
    spec = fixture_spec("hostile-refs.json")
    with io_audit:
        found = validate_spec(spec)
    assert io_audit.events == []
    (d,) = found
    assert d.code == "spec-validation-refused"
    assert "file:///etc/passwd#/x" in d.data["refs"]


@pytest.mark.parametrize(
    "components",
    [
        {"schemas": {"A": {"$id": "https://evil.example/x.json", "properties": {"b": {"$ref": "#/definitions/c"}}}}},
        {"schemas": {"A": {"$schema": "http://127.0.0.1:9/schema", "type": "object"}}},
    ],
    ids=["id-rebased-ref", "remote-schema-dialect"],
)
def test_in_document_tricks_do_no_io(io_audit: IOAudit, warm: None, components: dict[str, Any]) -> None:
    """Refs rebased by $id, or a remote $schema, still make the validator open nothing and connect nowhere."""
    spec = make_spec({**minimal(), "openapi": "3.1.0", "components": components})
    with io_audit:
        validate_spec(spec)
    assert io_audit.events == []


def test_only_openapi_is_validated() -> None:
    """Discovery documents are not OpenAPI: an info diagnostic says strict validation does not apply."""
    (d,) = validate_spec(make_spec({"kind": "discovery#restDescription"}))
    assert (d.code, d.severity.value) == ("spec-validation-unavailable", "info")


def test_external_refs_walk() -> None:
    """external_refs lists every $ref that is not a same-document fragment, with its pointer."""
    doc = {"a": [{"$ref": "#/x"}, {"$ref": "other.json"}], "b~/c": {"$ref": 3}}
    assert sorted(external_refs(doc)) == [("/a/1/$ref", "other.json"), ("/b~0~1c/$ref", "3")]


def test_the_unsandboxed_validator_does_read_files(io_audit: IOAudit, warm: None, tmp_path: Any) -> None:
    """Control: openapi-spec-validator on its own follows a file: ref (which is why the sandbox exists)."""
    from openapi_spec_validator import validate

    target = tmp_path / "elsewhere.json"
    target.write_text('{"type": "string"}')
    doc = minimal(components={"schemas": {"A": {"$ref": target.as_uri()}}})
    with io_audit:
        validate(doc)
    assert any(event == "open" and str(target) in args for event, args in io_audit.events)
