"""Bounds found missing by the adversarial suite, checked in the library where they live: nearest-operation
suggestions over huge specs and huge names, skill lookup by name, the per-tier optimiser on adversarial
alternatives. Time assertions are generous ceilings, not benchmarks, on this process's CPU time
(``time.process_time``), which other processes loading the machine do not change (issue 22)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from ramscope.config import Settings
from ramscope.derive import Engine
from ramscope.derive.resolution import MAX_SUGGESTED_ACCESSES
from ramscope.derive.resolve import SUGGEST_MAX_CHARS, resolve
from ramscope.specs import SpecKind, build_index
from tests._specs import make_spec, rest_operation
from tests.support.httpserver import LocalHTTPServer

from .hostile import a2a_card, card_doc, dumps, manifest, openapi


def _many_ops(n: int) -> dict[str, Any]:
    return openapi({f"/p{i}/x": {"get": {"operationId": f"operation{i}", "responses": {}}} for i in range(n)})


def test_suggestions_for_a_huge_name_over_many_operations_are_bounded() -> None:
    """A 1 MB operation id against 50,000 operations: suggestions in well under a second each, from the
    candidates nearest in length; unbounded, difflib compared the whole id with every operation."""
    index = build_index(make_spec(dumps(_many_ops(50_000))))
    res, op = rest_operation("x" * 1_000_000, "GET", "/nope" + "y" * 1_000_000)
    start = time.process_time()
    for _ in range(3):
        found = resolve(res, op, index)
    elapsed = time.process_time() - start
    assert elapsed < 15, elapsed
    assert found.suggestions  # type: ignore[union-attr]
    assert all(len(s) < SUGGEST_MAX_CHARS * 2 for s in found.suggestions)  # type: ignore[union-attr]


def test_resolve_without_suggestions_says_nothing_near() -> None:
    index = build_index(make_spec(dumps(_many_ops(10))))
    res, op = rest_operation("operation1x", "GET", "/p1/y")
    assert resolve(res, op, index).suggestions  # type: ignore[union-attr]
    assert resolve(res, op, index, suggest=False).suggestions == ()  # type: ignore[union-attr]


def test_a_card_gets_suggestions_for_a_bounded_number_of_accesses(tmp_path: Path) -> None:
    """400 accesses naming operations a 20,000-operation spec lacks: all unresolved, the first
    MAX_SUGGESTED_ACCESSES with suggestions, the rest without, in bounded time."""
    with LocalHTTPServer() as srv:
        srv.route("/openapi.json", body=dumps(_many_ops(20_000)))
        m = manifest(srv.url("/openapi.json"))
        op, acc = m["operations"][0], m["resource_accesses"][0]
        m["operations"] = [
            dict(op, id=f"o{i}", api_operation_spec={"operation_id": f"nope{i}", "http_method": "GET"})
            for i in range(400)
        ]
        m["resource_accesses"] = [dict(acc, id=f"a{i}", operation=f"o{i}") for i in range(400)]
        settings = Settings(cache_dir=tmp_path / "c", allow_private_network=True, timeout=10)
        start = time.process_time()
        with Engine(settings) as engine:
            report = engine.derive(card_doc(m))
        elapsed = time.process_time() - start
    assert all(not a.complete for a in report.accesses)
    with_suggestions = [a for a in report.accesses if a.suggestions]
    assert len(with_suggestions) == MAX_SUGGESTED_ACCESSES
    assert elapsed < 60, elapsed


def test_skills_are_found_by_id_and_name_without_a_scan_per_access() -> None:
    """100,000 skills, 2,000 lookups by id and by name: a table lookup each, not a scan of every skill."""
    skills = [{"id": f"s{i}", "name": f"Skill {i}", "description": "d", "tags": []} for i in range(100_000)]
    index = build_index(make_spec(dumps(a2a_card(skills))), kind_hint=SpecKind.A2A)
    start = time.process_time()
    for i in range(0, 100_000, 100):
        for name in (f"s{i}", f"Skill {i}"):
            res, op = rest_operation(path=name)
            found = resolve(res, op, index)
            assert found.entry.operation_id == f"s{i}"  # type: ignore[union-attr]
    assert time.process_time() - start < 10


def test_a_card_of_25000_resources_derives_in_bounded_time(tmp_path: Path) -> None:
    """Manifest lookups by id were scans: 25,000 resources, operations and accesses took 65 s (each access
    looks its operation and resource up several times). Now a table per manifest: a few seconds."""
    m = manifest("https://x.example/s.json")
    r, o, a = m["resources"][0], m["operations"][0], m["resource_accesses"][0]
    n = 25_000
    m["resources"] = [dict(r, id=f"r{i}") for i in range(n)]
    m["operations"] = [dict(o, id=f"o{i}", resource=f"r{i}") for i in range(n)]
    m["resource_accesses"] = [dict(a, id=f"a{i}", operation=f"o{i}") for i in range(n)]
    settings = Settings(cache_dir=tmp_path / "c", offline=True)
    start = time.process_time()
    with Engine(settings) as engine:
        report = engine.derive(card_doc(m))
    assert len(report.accesses) == n
    assert report.accesses[-1].resource == f"r{n - 1}"
    assert time.process_time() - start < 40


def test_a2a_footprints_are_derived_once_per_agent_not_per_access(tmp_path: Path) -> None:
    """Breadth x depth: 60 accesses to an agent whose manifest has 60 accesses to another ... 3 levels
    deep was 60**3 nested derivations, each embedded in full (10 accesses already gave a 17 MB report in
    1.7 s). Now each agent is derived once per card and later accesses refer to the first."""
    k, levels = 60, 4

    def fan(url: str) -> dict[str, Any]:
        m = manifest(url, protocol="A2A", resource_path="listItems", operation_id=None, http_method=None)
        m["resource_accesses"] = [dict(m["resource_accesses"][0], id=f"a{i}") for i in range(k)]
        return m

    with LocalHTTPServer() as srv:
        for lvl in range(levels):
            doc = a2a_card()
            if lvl + 1 < levels:
                doc["resourceAccessManifest"] = fan(srv.url(f"/agent{lvl + 1}.json"))
            srv.route(f"/agent{lvl}.json", body=dumps(doc))
        settings = Settings(cache_dir=tmp_path / "c", allow_private_network=True, timeout=10)
        start = time.process_time()
        with Engine(settings) as engine:
            report = engine.derive(card_doc(fan(srv.url("/agent0.json"))))
        elapsed = time.process_time() - start
    doc = report.to_dict()
    size = len(json.dumps(doc))
    assert elapsed < 20, elapsed
    assert size < 5_000_000, size
    first, *rest = (a["footprint"] for a in doc["accesses"])
    assert first["report"]["accesses"][0]["footprint"]["report"]  # level 2 embedded once, inside level 1
    assert all(f["same_as"] == "a0" and "report" not in f for f in rest)
    assert all(a["complete"] for a in doc["accesses"])


# --------------------------------------------------------------------------- $ref fan-out (issue 14, item 11)


def _fan_out(paths: int, ops: int) -> dict[str, Any]:
    """OpenAPI 3.2: ``paths`` path items that all $ref one shared item of ``ops`` additionalOperations."""
    doc = openapi({f"/p{i}": {"$ref": "#/components/pathItems/shared"} for i in range(paths)})
    doc["openapi"] = "3.2.0"
    doc["components"]["pathItems"] = {
        "shared": {"additionalOperations": {f"M{j}": {"operationId": f"op{j}", "responses": {}} for j in range(ops)}}
    }
    return doc


def test_ref_fan_out_past_the_operation_bound_is_a_clear_error() -> None:
    """1,000 path items x 1,000 additionalOperations from a ~60 KB spec used to index 1,000,000 operations
    (48 s, 750 MB). The count is known before any operation is built: past MAX_OPERATIONS, a SpecError."""
    from ramscope.errors import SpecError
    from ramscope.specs._doc import MAX_OPERATIONS

    body = dumps(_fan_out(1000, 1000))
    assert len(body) < 110_000  # the was 59 KB with shorter names
    with pytest.raises(SpecError, match=r"1,000,000 operations.*more than 250,000") as info:
        build_index(make_spec(body))
    assert "#/components/pathItems/shared" in str(info.value)
    assert MAX_OPERATIONS == 250_000


def test_ref_fan_out_through_the_cli_is_spec_invalid_not_a_crash(tmp_path: Path) -> None:
    from .measure import TRACEBACK, run_ramscope

    with LocalHTTPServer() as srv:
        srv.route("/spec.json", body=dumps(_fan_out(1000, 1000)))
        card = tmp_path / "card.json"
        card.write_bytes(dumps(card_doc(manifest(srv.url("/spec.json"), operation_id="op1", resource_path="/p1"))))
        run = run_ramscope(["--allow-private-network", "--cache-dir", str(tmp_path / "c"), "derive", str(card)])
    assert TRACEBACK not in run.err
    assert run.returncode == 3
    (a,) = json.loads(run.out)["accesses"]
    assert (a["status"], a["reason"]) == ("unresolved", "spec-invalid")
    assert "operations" in a["reason_message"]


def test_a_shared_path_item_is_indexed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Within the bound, each path still gets its operations, but the shared item's own findings (here an
    operationId that is not a string) are reported once, not once per path that refers to it."""
    doc = _fan_out(50, 3)
    doc["components"]["pathItems"]["shared"]["additionalOperations"]["M0"]["operationId"] = 7
    index = build_index(make_spec(doc))
    assert len(index.operations) == 150
    bad = [d for d in index.diagnostics if d.code == "invalid-operation"]
    assert len(bad) == 1


def test_the_operation_bound_counts_every_path_item(monkeypatch: pytest.MonkeyPatch) -> None:
    from ramscope.errors import SpecError
    from ramscope.specs import _doc

    monkeypatch.setattr(_doc, "MAX_OPERATIONS", 10)
    assert len(build_index(make_spec(_fan_out(5, 2))).operations) == 10
    with pytest.raises(SpecError, match="11 operations"):
        build_index(make_spec(_fan_out(11, 1)))
