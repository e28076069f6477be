"""Batches are derived as a stream: a chunk of cards in memory at a time, reports written as they come."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from ramscope.cli import main
from ramscope.config import Settings
from ramscope.derive import Engine
from tests.support.httpserver import LocalHTTPServer

SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "t", "version": "1"},
    "components": {
        "securitySchemes": {
            "o": {
                "type": "oauth2",
                "flows": {"clientCredentials": {"tokenUrl": "https://a.example.com/t", "scopes": {"r": "read"}}},
            }
        }
    },
    "paths": {"/x": {"get": {"operationId": "getX", "security": [{"o": ["r"]}]}}},
}


def _card(url: str, i: int) -> dict[str, Any]:
    return {
        "resources": [{"id": "r", "interaction_protocol": "REST", "owner": "CONSUMER", "spec": {"spec_url": url}}],
        "operations": [{"id": "o", "resource": "r", "api_operation_spec": {"operation_id": "getX"}}],
        "resource_accesses": [
            {
                "id": f"a{i}",
                "operation": "o",
                "identity_used": "AGENT",
                "necessity": "REQUIRED",
                "access_justification": "test",
            }
        ],
    }


@pytest.fixture
def cards(tmp_path: Path, server: LocalHTTPServer) -> Callable[[int], Path]:
    server.route("/spec.json", body=orjson.dumps(SPEC))

    def make(n: int) -> Path:
        d = tmp_path / f"cards{n}"
        d.mkdir()
        for i in range(n):
            (d / f"c{i:04d}.json").write_bytes(orjson.dumps(_card(server.url("/spec.json"), i)))
        return d

    return make


def test_derive_many_loads_cards_a_chunk_at_a_time(
    cards: Callable[[int], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first report comes before the cards past the first chunk are even read."""
    # (``ramscope.derive`` the attribute is the function; the module is in sys.modules)
    monkeypatch.setattr(sys.modules["ramscope.derive.engine"], "_CHUNK", 4)
    paths = sorted(cards(10).iterdir())
    taken: list[Path] = []

    def lazily() -> Iterator[Path]:
        for p in paths:
            taken.append(p)
            yield p

    settings = Settings(cache_dir=tmp_path / "cache", allow_private_network=True)
    with Engine(settings) as engine:
        reports = engine.derive_many(lazily())
        first = next(reports)
        assert len(taken) == 4
        rest = list(reports)
    assert [r.accesses[0].id for r in [first, *rest]] == [f"a{i}" for i in range(10)]


def test_batch_output_is_written_as_derived_and_atomically(
    cards: Callable[[int], Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """JSON Lines on stdout and in -o FILE are the same reports, in order; -o appears whole."""
    d = cards(5)
    common = ["--cache-dir", str(tmp_path / "cache"), "--allow-private-network", "--no-progress"]
    assert main([*common, "derive", str(d)]) == 0
    lines = capsys.readouterr().out.splitlines()
    out = tmp_path / "reports.jsonl"
    assert main([*common, "derive", str(d), "-o", str(out)]) == 0
    assert [json.loads(x)["accesses"][0]["id"] for x in lines] == [f"a{i}" for i in range(5)]
    assert [json.loads(x)["accesses"] for x in out.read_text().splitlines()] == [
        json.loads(x)["accesses"] for x in lines
    ]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".reports")) == []


def test_no_output_file_when_every_card_is_unreadable(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    out = tmp_path / "out.jsonl"
    code = main(["--cache-dir", str(tmp_path / "cache"), "derive", str(bad), str(bad), "-o", str(out)])
    assert code == 2
    assert not out.exists()


def test_a_report_in_a_batch_is_the_report_of_that_card_alone(
    cards: Callable[[int], Path], tmp_path: Path, server: LocalHTTPServer
) -> None:
    """A card's report does not depend on the cards derived before it in the same run: a spec an
    earlier card loaded is not listed for a later card that names it but derives nothing from it."""
    url = server.url("/spec.json")
    user = _card(url, 0)
    bystander = _card(url, 1)
    # Its only access goes elsewhere; its operation on the shared spec is declared but unused.
    bystander["resources"].append(
        {"id": "other", "interaction_protocol": "REST", "owner": "CONSUMER", "spec": {"spec_url": url + "?v=2"}}
    )
    bystander["operations"].append({"id": "o2", "resource": "other", "api_operation_spec": {"operation_id": "getX"}})
    bystander["resource_accesses"][0]["operation"] = "o2"
    # Each run with a cache of its own, so that both fetch from the network.
    with Engine(Settings(cache_dir=tmp_path / "c1", allow_private_network=True)) as engine:
        _, in_batch = list(engine.derive_many([_as_file(tmp_path, "u", user), _as_file(tmp_path, "b", bystander)]))
    with Engine(Settings(cache_dir=tmp_path / "c2", allow_private_network=True)) as engine:
        alone = engine.derive(_as_file(tmp_path, "b", bystander))
    assert [s.url for s in alone.specs] == [url + "?v=2"]
    assert _timeless(in_batch.to_dict()) == _timeless(alone.to_dict())


def _timeless(report: dict[str, Any]) -> dict[str, Any]:
    for spec in report["specs"]:
        spec.pop("fetched_at")
        spec["provenance"].pop("fetched_at", None)
    return report


def _as_file(tmp_path: Path, name: str, doc: dict[str, Any]) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_bytes(orjson.dumps(doc))
    return path
