"""The manifest model: parsing both naming styles and all enum spellings, exact dumping, round trips."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ramscope.manifest import (
    AccessNecessity,
    ApiOperationSpec,
    IdentityType,
    InteractionProtocol,
    Operation,
    Resource,
    ResourceAccess,
    ResourceAccessManifest,
    ResourceOwner,
    ResourceSpec,
    camel_name,
    enum_from_json,
    parse_manifest,
)


def test_seed_parses_without_diagnostics(seed_manifest: dict[str, Any]) -> None:
    """The proposal's own example parses cleanly into the typed model."""
    m, diags = parse_manifest(seed_manifest)
    assert diags == []
    assert [r.id for r in m.resources] == [
        "google-calendar-events-v3",
        "openholidaysapi-publicholidays-v1",
        "google-maps-lookup-weather",
    ]
    cal = m.resources[0]
    assert cal.interaction_protocol is InteractionProtocol.REST
    assert cal.owner is ResourceOwner.CONSUMER
    assert cal.spec == ResourceSpec(
        spec_url="https://www.googleapis.com/discovery/v1/apis/calendar/v3/rest",
        resource_path="/calendar/v3/calendars/{calendarId}/events",
    )
    assert m.operations[0].api_operation_spec == ApiOperationSpec(
        operation_id="calendar.events.insert", http_method="POST"
    )
    assert m.operations[2].api_operation_spec is None
    assert m.operations[0].developer_documentation_url == (
        "https://developers.google.com/workspace/calendar/api/v3/reference/events/insert",
    )
    acc = m.resource_accesses[2]
    assert acc.identity_used is IdentityType.AGENT
    assert acc.necessity is AccessNecessity.RECOMMENDED
    assert acc.confirmation_required is False


def test_model_is_immutable(seed_manifest: dict[str, Any]) -> None:
    """Stages share the model; nobody can change it under another's feet."""
    m, _ = parse_manifest(seed_manifest)
    with pytest.raises(AttributeError):
        m.resources[0].id = "x"  # type: ignore[misc]
    assert isinstance(m.resources, tuple)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("MCP", InteractionProtocol.MCP),
        ("INTERACTION_PROTOCOL_MCP", InteractionProtocol.MCP),
        (3, InteractionProtocol.MCP),
        ("INTERACTION_PROTOCOL_UNSPECIFIED", InteractionProtocol.INTERACTION_PROTOCOL_UNSPECIFIED),
        (0, InteractionProtocol.INTERACTION_PROTOCOL_UNSPECIFIED),
        ("mcp", None),
        (True, None),
        (7, None),
        ("RESOURCE_OWNER_MCP", None),
        (3.0, None),
    ],
)
def test_enum_spellings(raw: object, expected: InteractionProtocol | None) -> None:
    """Enums accept the name, the proto-prefixed name and the number; nothing else."""
    assert enum_from_json(InteractionProtocol, raw) is expected


def test_prefixed_names_for_every_enum() -> None:
    """Every enum's short names also parse with the enum's proto prefix."""
    assert enum_from_json(ResourceOwner, "RESOURCE_OWNER_THIRD_PARTY") is ResourceOwner.THIRD_PARTY
    assert enum_from_json(IdentityType, "IDENTITY_TYPE_END_USER") is IdentityType.END_USER
    assert enum_from_json(AccessNecessity, "ACCESS_NECESSITY_OPTIONAL") is AccessNecessity.OPTIONAL


def test_camel_case_input_equals_snake_case_input(seed_manifest: dict[str, Any]) -> None:
    """ProtoJSON lowerCamelCase and proto snake_case describe the same manifest."""
    snake, _ = parse_manifest(seed_manifest)
    camel, diags = parse_manifest(snake.to_dict("camel"))
    assert diags == []
    assert camel == snake
    assert "resourceAccesses" in snake.to_dict("camel")
    assert camel.resource_accesses[0].loc.of("access_justification") == "/resourceAccesses/0/accessJustification"


def test_dump_follows_proto3_json(seed_manifest: dict[str, Any]) -> None:
    """Defaults are omitted, enums by name, keys in proto field order."""
    m, _ = parse_manifest(seed_manifest)
    d = m.to_dict()
    assert list(d) == ["resources", "operations", "resource_accesses"]
    assert list(d["resources"][0]) == [
        "id",
        "interaction_protocol",
        "owner",
        "display_name",
        "description",
        "developer_documentation_url",
        "spec",
    ]
    # confirmation_required: false is the default, so it is not written.
    assert "confirmation_required" not in d["resource_accesses"][2]
    assert d["resource_accesses"][0]["confirmation_required"] is True
    assert d["resources"][1]["owner"] == "THIRD_PARTY"
    assert ResourceAccessManifest().to_dict() == {}


def test_dump_is_stable_text(seed_manifest: dict[str, Any]) -> None:
    """Dumping twice gives byte-identical JSON (stable key order)."""
    m, _ = parse_manifest(seed_manifest)
    assert m.to_json() == parse_manifest(json.loads(m.to_json()))[0].to_json()


def test_null_means_default() -> None:
    """ProtoJSON null is the field's default, not an error."""
    m, diags = parse_manifest({"resources": [{"id": "r", "description": None, "spec": None}]})
    assert diags == []
    assert m.resources[0] == Resource(id="r")


def test_loc_points_into_the_input() -> None:
    """Parsed objects remember their JSON pointer, with the keys as the input wrote them."""
    m, _ = parse_manifest(
        {"resourceAccesses": [{"id": "a", "identityUsed": "AGENT"}]}, pointer="/resourceAccessManifest"
    )
    acc = m.resource_accesses[0]
    assert acc.loc.pointer == "/resourceAccessManifest/resourceAccesses/0"
    assert acc.loc.of("identity_used") == "/resourceAccessManifest/resourceAccesses/0/identityUsed"
    # A field that was not written is addressed in the object's own style.
    assert acc.loc.of("necessity") == "/resourceAccessManifest/resourceAccesses/0/necessity"


def test_from_dict_strict_raises_on_errors() -> None:
    """The strict constructor refuses a manifest with parse errors, listing them."""
    with pytest.raises(ValueError, match="/resources/0/owner"):
        ResourceAccessManifest.from_dict({"resources": [{"id": "r", "owner": "NOBODY"}]})


def test_camel_name() -> None:
    """ProtoJSON names are lowerCamelCase of the proto names."""
    assert camel_name("developer_documentation_url") == "developerDocumentationUrl"
    assert camel_name("id") == "id"


# --------------------------------------------------------------------------- properties

_text = st.text(max_size=20)
_ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-0123456789", min_size=1, max_size=12)


def _enum(cls: Any) -> st.SearchStrategy[Any]:
    return st.sampled_from(list(cls))


_resource_spec = st.builds(ResourceSpec, spec_url=_text, resource_path=_text)
_api_spec = st.builds(ApiOperationSpec, spec_url=_text, operation_id=_text, http_method=_text)
_resource = st.builds(
    Resource,
    id=_ids,
    interaction_protocol=_enum(InteractionProtocol),
    owner=_enum(ResourceOwner),
    display_name=_text,
    description=_text,
    developer_documentation_url=_text,
    spec=st.none() | _resource_spec,
)
_operation = st.builds(
    Operation,
    id=_ids,
    resource=_ids,
    description=_text,
    developer_documentation_url=st.lists(_text, max_size=3).map(tuple),
    api_operation_spec=st.none() | _api_spec,
)
_access = st.builds(
    ResourceAccess,
    id=_ids,
    operation=_ids,
    identity_used=_enum(IdentityType),
    confirmation_required=st.booleans(),
    access_justification=_text,
    necessity=_enum(AccessNecessity),
)
manifests = st.builds(
    ResourceAccessManifest,
    resources=st.lists(_resource, max_size=4).map(tuple),
    operations=st.lists(_operation, max_size=4).map(tuple),
    resource_accesses=st.lists(_access, max_size=4).map(tuple),
)


@given(manifests, st.sampled_from(["snake", "camel"]))
@settings(max_examples=200)
def test_round_trip_through_json(m: ResourceAccessManifest, style: str) -> None:
    """Any manifest survives dump -> JSON text -> parse unchanged, in either naming style."""
    text = orjson.dumps(m.to_dict(style))  # type: ignore[arg-type]
    back, diags = parse_manifest(orjson.loads(text))
    assert diags == []
    assert back == m


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=30,
)


@given(json_values)
@settings(max_examples=300)
def test_arbitrary_json_never_raises(value: Any) -> None:
    """Whatever JSON value is given, parsing yields a model plus diagnostics, never an exception."""
    m, diags = parse_manifest(value)
    assert isinstance(m, ResourceAccessManifest)
    if not isinstance(value, dict):
        assert [d.code for d in diags] == ["invalid-type"]


@given(manifests, st.data())
@settings(max_examples=200)
def test_mutated_manifests_never_raise(m: ResourceAccessManifest, data: st.DataObject) -> None:
    """Replacing any field of a valid manifest with any JSON value gives diagnostics, not exceptions."""
    doc = m.to_dict("snake")
    # Walk to a random object in the document and overwrite a random key in it.
    node: Any = doc
    for _ in range(data.draw(st.integers(0, 3))):
        if isinstance(node, dict) and node:
            node = node[data.draw(st.sampled_from(sorted(node)))]
        elif isinstance(node, list) and node:
            node = node[data.draw(st.integers(0, len(node) - 1))]
    if isinstance(node, dict):
        key = data.draw(st.sampled_from([*sorted(node), "id", "specUrl", "necessity", "bogus"]))
        node[key] = data.draw(json_values)
    parsed, diags = parse_manifest(doc)
    assert isinstance(parsed, ResourceAccessManifest)
    assert all(d.path.startswith("/") or d.path == "" for d in diags)
