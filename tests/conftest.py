"""Shared fixtures and hooks: the seed and example cards, a card writer, spec corpora and the I/O audit."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests._spec_fixtures import (  # noqa: F401 - pytest finds hooks and fixtures by name here
    discovery_documents,
    io_audit,
    npm_corpora,
    pytest_collection_modifyitems,
)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_CARD = ROOT / "examples" / "travel-agent.card.json"


def _seed_manifest() -> dict[str, Any]:
    card = json.loads(EXAMPLE_CARD.read_text("utf-8"))
    manifest: dict[str, Any] = card["resourceAccessManifest"]
    return manifest


@pytest.fixture
def seed_manifest() -> dict[str, Any]:
    """A fresh copy of the travel agent's manifest (the proposal's example), snake_case."""
    return copy.deepcopy(_seed_manifest())


@pytest.fixture
def example_card() -> dict[str, Any]:
    return json.loads(EXAMPLE_CARD.read_text("utf-8"))  # type: ignore[no-any-return]


@pytest.fixture
def write_card(tmp_path: Path) -> Callable[..., Path]:
    """Write a document to a temporary file (JSON by default, or raw text/bytes)."""
    counter = iter(range(1_000_000))

    def write(doc: Any, *, suffix: str = ".json", raw: bool = False) -> Path:
        path = tmp_path / f"card{next(counter)}{suffix}"
        if raw:
            if isinstance(doc, bytes):
                path.write_bytes(doc)
            else:
                path.write_text(doc, "utf-8")
        else:
            path.write_text(json.dumps(doc, indent=2), "utf-8")
        return path

    return write
