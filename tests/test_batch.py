"""Batches: ``ramscope derive DIR`` derives many cards sharing specs, and each card's report is the
report that card gets derived alone (whatever cards came before it), in card order, with an
unreadable card said in its place.

Real documents: Discovery documents from google-api-python-client's bundle (Google's universe
joins their grant spaces; kgsearch's one method needs no scope, so a card using only it has no
universe), and a small OpenAPI spec on GitHub's server declaring no security (GitHub's catalog
says), served on loopback.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.errors import InputError
from tests.support.httpserver import LocalHTTPServer

DERIVE = sys.modules["ramscope.derive.run"]  # one card's derivation

DISCOVERY = {
    "/sheets.json": "sheets.v4.json",
    "/gmail.json": "gmail.v1.json",
    "/calendar.json": "calendar.v3.json",
    "/kgsearch.json": "kgsearch.v1.json",
}

#: GitHub's own spec declares no security: its catalog says what each endpoint needs.
GITHUB_LIKE = {
    "openapi": "3.0.3",
    "info": {"title": "repos", "version": "1"},
    "servers": [{"url": "https://api.github.com"}],
    "paths": {
        "/repos/{owner}/{repo}": {"get": {"operationId": "repos/get"}, "delete": {"operationId": "repos/delete"}},
        "/orgs/{org}": {"get": {"operationId": "orgs/get"}},
        # Not in the catalog: its access stays undetermined, on the spec's own (scheme-less) index.
        "/not/in/the/catalog": {"get": {"operationId": "uncatalogued"}},
    },
}


def _method_ids(doc: dict[str, Any]) -> list[str]:
    out: list[str] = []

    def walk(r: dict[str, Any]) -> None:
        out.extend(m["id"] for m in r.get("methods", {}).values())
        for sub in r.get("resources", {}).values():
            walk(sub)

    walk(doc)
    return out


@pytest.fixture(scope="module")
def specs(discovery_documents: Path) -> Iterator[tuple[LocalHTTPServer, list[tuple[str, list[str]]]]]:
    """The served specs, as (route, operation ids a card may name)."""
    with LocalHTTPServer() as srv:
        specs: list[tuple[str, list[str]]] = []
        for route, name in DISCOVERY.items():
            body = (discovery_documents / name).read_bytes()
            srv.route(route, body=body)
            specs.append((route, _method_ids(orjson.loads(body))[:12]))
        srv.route("/repos.json", body=orjson.dumps(GITHUB_LIKE))
        specs.append(("/repos.json", ["repos/get", "repos/delete", "orgs/get", "uncatalogued", "no/such-operation"]))
        specs.append(("/gone.json", ["anything"]))  # 404: spec-unavailable
        yield srv, specs


def _manifest(server: LocalHTTPServer, accesses: list[tuple[str, str, str, str]]) -> dict[str, Any]:
    resources: dict[str, str] = {}
    ops, grants = [], []
    for i, (route, op, identity, necessity) in enumerate(accesses):
        rid = resources.setdefault(route, f"r{len(resources)}")
        ops.append({"id": f"o{i}", "resource": rid, "api_operation_spec": {"operation_id": op}})
        grants.append(
            {
                "id": f"a{i}",
                "operation": f"o{i}",
                "identity_used": identity,
                "necessity": necessity,
                "access_justification": "batch test",
            }
        )
    return {
        "resources": [
            {
                "id": rid,
                "interaction_protocol": "REST",
                "owner": "CONSUMER",
                "display_name": f"resource {rid}",
                "spec": {"spec_url": server.url(route)},
            }
            for route, rid in resources.items()
        ],
        "operations": ops,
        "resource_accesses": grants,
    }


@pytest.fixture
def batch(
    specs: tuple[LocalHTTPServer, list[tuple[str, list[str]]]], tmp_path: Path
) -> Callable[[int], tuple[Path, list[Path]]]:
    """``make(n)``: a directory of ``n`` seeded cards, 1 to 4 accesses each, drawn from the pool."""
    server, pool_specs = specs

    def make(n: int) -> tuple[Path, list[Path]]:
        rng = random.Random(17)
        d = tmp_path / f"cards{n}"
        d.mkdir()
        paths = []
        for i in range(n):
            accesses = []
            for _ in range(rng.randint(1, 4)):
                route, ops = pool_specs[rng.randrange(len(pool_specs))]
                accesses.append(
                    (
                        route,
                        ops[rng.randrange(len(ops))],
                        rng.choice(("END_USER", "END_USER", "AGENT")),
                        rng.choice(("REQUIRED", "RECOMMENDED", "OPTIONAL")),
                    )
                )
            p = d / f"card{i:03d}.json"
            p.write_bytes(orjson.dumps(_manifest(server, accesses)))
            paths.append(p)
        return d, paths

    return make


def _settings(tmp_path: Path, **kw: Any) -> Settings:
    return Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=20, **kw)


def _derive_files(settings: Settings, paths: list[Path]) -> list[bytes]:
    def unreadable(exc: InputError) -> None:
        raise AssertionError(str(exc))

    with Engine(settings) as engine:
        return [r.to_json() for r in engine.derive_files(paths, on_unreadable=unreadable)]


def test_each_report_of_a_batch_is_the_card_derived_alone(
    batch: Callable[[int], tuple[Path, list[Path]]], tmp_path: Path
) -> None:
    _, paths = batch(24)
    settings = _settings(tmp_path, reuse=False)
    _derive_files(settings, paths)  # the cache filled: each spec's "origin" is then "cache" in every run
    together = _derive_files(settings, paths)
    alone = []
    for p in paths:
        with Engine(settings) as engine:  # a fresh engine: nothing kept from another card
            alone.append(engine.derive(p).to_json())
    assert together == alone
    # Nor does a report depend on the cards before it (the grant spaces and memos are shared).
    assert _derive_files(settings, paths[::-1]) == together[::-1]
    reports = [orjson.loads(r) for r in together]
    universes = {u["server"] for r in reports for u in r["providers"]["universes"]}
    reasons = {a.get("reason") for r in reports for a in r["accesses"]}
    # The batch covers what it is meant to: Google's universe, a catalog, and failures.
    assert "https://accounts.google.com" in universes
    assert any(r["providers"]["catalogs"] for r in reports)
    assert {"spec-unavailable", "operation-not-found"} <= reasons
    assert any(not r["providers"]["universes"] for r in reports)
