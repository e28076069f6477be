"""Loading cards in every accepted shape, and keeping the rest of the card intact."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from ramscope import CardShape, InputError, load_card
from ramscope.manifest import InteractionProtocol

from .conftest import EXAMPLE_CARD, ROOT


def test_example_card_is_a_v1_agent_card() -> None:
    """The bundled example is a full v1.0 AgentCard with the manifest at the top level."""
    card = load_card(EXAMPLE_CARD)
    assert card.shape is CardShape.AGENT_CARD
    assert card.manifest_pointer == "/resourceAccessManifest"
    assert card.name == "Travel Reservation Agent"
    assert card.card_version == "1.0"
    assert len(card.manifest.resource_accesses) == 4
    assert card.load_diagnostics == ()
    assert [s["id"] for s in card.skills] == ["book-trip", "destination-brief"]
    assert "travel_oauth" in card.security_schemes


def test_example_card_is_a_valid_a2a_card() -> None:
    """Apart from the proposed field, the example is a card the official a2a-sdk accepts."""
    a2a_types = pytest.importorskip("a2a.types")
    json_format = pytest.importorskip("google.protobuf.json_format")
    doc = json.loads(EXAMPLE_CARD.read_text("utf-8"))
    del doc["resourceAccessManifest"]
    json_format.ParseDict(doc, a2a_types.AgentCard())


def test_bare_manifest_shape() -> None:
    """A file holding only the manifest is accepted as is."""
    card = load_card(ROOT / "examples" / "travel-agent.ram.json")
    assert card.shape is CardShape.MANIFEST
    assert card.manifest_pointer == ""
    assert card.name == ""
    assert card.card_version is None
    assert card.manifest == load_card(EXAMPLE_CARD).manifest


def test_extension_shape(example_card: dict[str, Any], write_card: Callable[..., Path]) -> None:
    """A manifest carried in capabilities.extensions[].params is found, with pointers into it."""
    ram = example_card.pop("resourceAccessManifest")
    example_card["capabilities"]["extensions"] = [
        {"uri": "https://example.com/other-extension", "params": {"x": 1}},
        {"uri": "https://example.com/ram", "params": {"resourceAccessManifest": ram}},
    ]
    card = load_card(write_card(example_card))
    assert card.shape is CardShape.EXTENSION
    assert card.manifest_pointer == "/capabilities/extensions/1/params/resourceAccessManifest"
    assert card.manifest.resources[2].interaction_protocol is InteractionProtocol.MCP
    assert card.manifest.resources[0].loc.pointer.startswith(card.manifest_pointer + "/resources/0")


def test_v03_card_with_snake_case_key(write_card: Callable[..., Path], seed_manifest: dict[str, Any]) -> None:
    """A v0.3 card (url, protocolVersion) carrying resource_access_manifest in proto naming."""
    doc = {
        "name": "Old agent",
        "url": "https://agent.example.com/a2a",
        "protocolVersion": "0.3.0",
        "version": "2.0",
        "capabilities": {},
        "skills": [],
        "resource_access_manifest": seed_manifest,
    }
    card = load_card(write_card(doc))
    assert card.shape is CardShape.AGENT_CARD
    assert card.card_version == "0.3.0"
    assert card.manifest_pointer == "/resource_access_manifest"


def test_yaml_card(example_card: dict[str, Any], write_card: Callable[..., Path]) -> None:
    """YAML and JSON cards load to the same manifest."""
    path = write_card(yaml.safe_dump(example_card, sort_keys=False), suffix=".yaml", raw=True)
    assert load_card(path).manifest == load_card(EXAMPLE_CARD).manifest


def test_document_is_kept_unmodified(example_card: dict[str, Any], write_card: Callable[..., Path]) -> None:
    """The rest of the card reaches later stages exactly as written."""
    original = copy.deepcopy(example_card)
    card = load_card(write_card(example_card))
    assert dict(card.document) == original
    with pytest.raises(TypeError):
        card.document["name"] = "x"  # type: ignore[index]


def test_loading_from_a_mapping_and_from_bytes(example_card: dict[str, Any]) -> None:
    """Library users may hand over a parsed dict or raw bytes instead of a path."""
    from_dict = load_card(example_card)
    from_bytes = load_card(json.dumps(example_card).encode(), name="card.json")
    assert from_dict.manifest == from_bytes.manifest
    assert from_bytes.source == "card.json"
    assert len(from_bytes.sha256) == 64


def test_no_manifest_is_a_diagnostic(write_card: Callable[..., Path]) -> None:
    """An AgentCard without a manifest is invalid (exit 1), not unreadable (exit 2)."""
    card = load_card(write_card({"name": "plain agent", "skills": []}))
    assert [d.code for d in card.load_diagnostics] == ["no-manifest"]


def test_two_different_manifests_are_an_error(example_card: dict[str, Any], write_card: Callable[..., Path]) -> None:
    """Top-level and extension manifests that differ: which applies is unclear, so it is an error."""
    other = copy.deepcopy(example_card["resourceAccessManifest"])
    other["resources"] = other["resources"][:1]
    example_card["capabilities"]["extensions"] = [{"uri": "u", "params": {"resourceAccessManifest": other}}]
    card = load_card(write_card(example_card))
    (diag,) = card.load_diagnostics
    assert diag.code == "multiple-manifests"
    assert diag.severity.value == "error"
    assert card.shape is CardShape.AGENT_CARD


def test_two_identical_manifests_are_a_warning(example_card: dict[str, Any], write_card: Callable[..., Path]) -> None:
    """Identical copies are harmless but worth a warning."""
    example_card["capabilities"]["extensions"] = [
        {"uri": "u", "params": {"resource_access_manifest": example_card["resourceAccessManifest"]}}
    ]
    (diag,) = load_card(write_card(example_card)).load_diagnostics
    assert (diag.code, diag.severity.value) == ("multiple-manifests", "warning")


def test_non_object_top_level_is_input_error(write_card: Callable[..., Path]) -> None:
    """A JSON array or scalar is not a card: one clear error naming the file."""
    path = write_card([1, 2])
    with pytest.raises(InputError, match=r"card\d\.json: top level is an array"):
        load_card(path)


def test_manifest_of_wrong_type(write_card: Callable[..., Path]) -> None:
    """A manifest field that is not an object is reported where it stands."""
    card = load_card(write_card({"name": "a", "resourceAccessManifest": ["nope"]}))
    (diag,) = card.load_diagnostics
    assert (diag.code, diag.path) == ("invalid-type", "/resourceAccessManifest")


def test_positions_are_line_and_column(write_card: Callable[..., Path]) -> None:
    """Diagnostics can point at the line and column of any value in the file."""
    card = load_card(EXAMPLE_CARD)
    text = EXAMPLE_CARD.read_text("utf-8").splitlines()
    line, col = card.position("/resourceAccessManifest/resource_accesses/1/id")  # type: ignore[misc]
    assert text[line - 1][col - 1 :].startswith('"create-corporate-calendar-event-for-flight-reservation"')
