"""Crashes and contract breaks the fuzzer found, each kept as a plain test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from ramscope.config import Settings
from ramscope.derive import Engine
from ramscope.schema import load_schema
from ramscope.specs import SpecKind, build_index
from tests._specs import make_spec
from tests.support.httpserver import LocalHTTPServer

from .hostile import a2a_card, card_doc, discovery, manifest
from .measure import TRACEBACK, run_ramscope

ROOT = Path(__file__).resolve().parents[2]


def test_travel_example_report_is_valid_against_the_report_schema(tmp_path: Path) -> None:
    """Fuzzing finding 1: the example's MCP access (Google's Maps server lists tools only to authenticated
    clients) is matched_by "tool_name_unverified", which `ramscope schema report` did not allow."""
    settings = Settings(cache_dir=tmp_path, offline=True, cassette=ROOT / "cassettes" / "travel-agent.yaml")
    with Engine(settings) as engine:
        doc = engine.derive(ROOT / "examples" / "travel-agent.card.json").to_dict()
    assert "tool_name_unverified" in {a["target"]["matched_by"] for a in doc["accesses"] if a.get("target")}
    jsonschema.Draft202012Validator(load_schema("report")).validate(doc)


@pytest.mark.parametrize("scopes", [[["x"]], [{"a": 1}], [1, 2], "https://www.googleapis.com/auth/drive", {"a": 1}, 7])
def test_discovery_scopes_that_are_not_a_list_of_strings_are_unknown_not_nothing(scopes: Any) -> None:
    """Fuzzing finding 2: a Discovery method whose `scopes` held a list crashed the adapter (TypeError:
    unhashable); one holding only non-strings, or a string instead of a list, became "needs nothing"."""
    doc = discovery()
    doc["resources"]["items"]["methods"]["list"]["scopes"] = scopes
    index = build_index(make_spec(doc))
    entry = index.operations[0]
    assert entry.requirements is None
    assert "invalid-security" in [d.code for d in index.diagnostics]


def test_discovery_non_string_scopes_beside_strings_are_dropped_and_reported() -> None:
    doc = discovery()
    doc["resources"]["items"]["methods"]["list"]["scopes"] = ["https://items.example.com/auth/items", 3, None]
    index = build_index(make_spec(doc))
    assert [alt[0].scopes for alt in index.operations[0].requirements or ()] == [
        ("https://items.example.com/auth/items",)
    ]
    assert "invalid-security" in [d.code for d in index.diagnostics]


def test_an_error_quoting_a_7_mib_key_stays_one_short_line(tmp_path: Path) -> None:
    """A duplicate key of 7 MiB: the error names it, on one line of at most a few thousand characters."""
    key = "k" * (7 * 1024 * 1024)  # twice in the file: under the 16 MiB card limit
    card = tmp_path / "dup.json"
    card.write_text('{"%s": 1, "%s": 2}' % (key, key), "utf-8")  # noqa: UP031
    run = run_ramscope(["validate", str(card)])
    assert run.returncode == 2
    assert run.err.startswith("ramscope: error: ")
    assert "duplicate key" in run.err
    assert run.err.count("\n") == 1
    assert len(run.err) < 3_000


def test_an_a2a_card_in_yaml_with_a_huge_integer_is_derived_not_a_crash(tmp_path: Path) -> None:
    """Fuzzing finding 3 (long run): a remote A2A card served as YAML holding an integer beyond 64 bits
    crashed derive with TypeError from the index cache's orjson encoder; the index is now used uncached."""
    doc = a2a_card()
    doc["x-big"] = 10**25
    with LocalHTTPServer() as srv:
        srv.route("/agent-card.json", body=yaml.safe_dump(doc).encode(), content_type="application/yaml")
        m = manifest(srv.url("/agent-card.json"), protocol="A2A", resource_path="listItems", operation_id=None)
        settings = Settings(cache_dir=tmp_path / "c", allow_private_network=True, timeout=10)
        for _ in range(2):  # the second run finds no cached index and builds it again
            with Engine(settings) as engine:
                report = engine.derive(card_doc(m))
            assert report.accesses[0].complete
            assert report.accesses[0].scopes == ["items.read"]


@pytest.mark.parametrize(
    "damage",
    [
        {"tools": 7},
        {"auth": {"challenges": True}},
        {"auth": {"protected_resource_metadata": {"tried": 3}}},
        {"auth": {"protected_resource_metadata": {"tried": False}}},
    ],
)
def test_an_mcp_capture_with_mistyped_lists_is_read_not_a_crash(damage: dict[str, Any]) -> None:
    """Fuzzing finding 4 (long run): a capture whose `tried`, `challenges` or `tools` was a number or a
    boolean crashed the MCP adapter (TypeError: not iterable). A capture is ramscope's own format, but a
    REST spec URL can serve one (kinds are detected from content), so it is stranger's data too."""
    capture: dict[str, Any] = {
        "format": "ramscope-mcp-capture/1",
        "endpoint": "https://mcp.example.com/mcp",
        "tools_listed": True,
        "tools": [{"name": "t"}],
        "auth": {"status": None, "challenges": [], "protected_resource_metadata": {"tried": []}},
    }
    for key, value in damage.items():
        if isinstance(value, dict) and isinstance(capture.get(key), dict):
            for k, v in value.items():
                if isinstance(v, dict):
                    capture[key][k].update(v)
                else:
                    capture[key][k] = v
        else:
            capture[key] = value
    index = build_index(make_spec(capture, "https://mcp.example.com/mcp"), kind_hint=SpecKind.MCP)
    assert index.kind is SpecKind.MCP


@pytest.mark.parametrize(
    "saved",
    [
        {"report_version": 1, "tiers": 5},
        {"report_version": 1, "tiers": {"REQUIRED": {}}, "accesses": 3, "card": {}},
        {"report_version": 1, "tiers": {}, "accesses": [], "card": {}},
        {"report_version": "x", "tiers": [], "card": []},
    ],
)
def test_diff_of_a_malformed_saved_report_is_a_clear_error(saved: dict[str, Any], tmp_path: Path) -> None:
    """Found reviewing the CLI's inputs: `diff` takes a saved report for either side, and a malformed one
    crashed diff_reports with KeyError/TypeError (a traceback). It is now exit 2 naming the file and place."""
    bad = tmp_path / "saved.json"
    bad.write_text(json.dumps(saved), "utf-8")
    run = run_ramscope(["diff", str(bad), str(bad)])
    assert run.returncode == 2, run.err
    assert TRACEBACK not in run.err
    assert run.err.startswith(f"ramscope: error: {bad}")
    assert "not a ramscope report" in run.err
