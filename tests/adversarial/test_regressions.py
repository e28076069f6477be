"""Crashes and contract breaks the fuzzer found, each kept as a plain test."""

from __future__ import annotations

from pathlib import Path

import jsonschema

from ramscope.config import Settings
from ramscope.derive import Engine
from ramscope.schema import load_schema

ROOT = Path(__file__).resolve().parents[2]


def test_travel_example_report_is_valid_against_the_report_schema(tmp_path: Path) -> None:
    """Fuzzing finding 1: the example's MCP access (Google's Maps server lists tools only to authenticated
    clients) is matched_by "tool_name_unverified", which `ramscope schema report` did not allow."""
    settings = Settings(cache_dir=tmp_path, offline=True, cassette=ROOT / "cassettes" / "travel-agent.yaml")
    with Engine(settings) as engine:
        doc = engine.derive(ROOT / "examples" / "travel-agent.card.json").to_dict()
    assert "tool_name_unverified" in {a["target"]["matched_by"] for a in doc["accesses"] if a.get("target")}
    jsonschema.Draft202012Validator(load_schema("report")).validate(doc)
