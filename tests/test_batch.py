"""Batches: ``ramscope derive DIR`` derives many cards sharing specs, and each card's report is the
report that card gets derived alone (whatever cards came before it, however the batch is split
over worker processes), in card order, with an unreadable card said in its place.

Real documents: Discovery documents from google-api-python-client's bundle (Google's universe
joins their grant spaces; kgsearch's one method needs no scope, so a card using only it has no
universe), and a small OpenAPI spec on GitHub's server declaring no security (GitHub's catalog
says), served on loopback.
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from ramscope import Settings
from ramscope.cli import main
from ramscope.derive import Engine, pool
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


# --------------------------------------------------------------------------- --jobs: worker processes


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers for small batches, whatever this machine's CPUs (the pool's rule is tested apart)."""
    if not hasattr(os, "fork") or sys.platform != "linux":
        pytest.skip("the pool forks on Linux only")
    monkeypatch.setattr(pool, "MIN_CARDS_PER_WORKER", 4)
    monkeypatch.setattr(pool, "room", lambda: 8)


def _cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["--cache-dir", str(tmp_path / "cache"), "--allow-private-network", "--no-progress", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_jobs_gives_the_output_of_one_process(
    batch: Callable[[int], tuple[Path, list[Path]]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    forking: None,
) -> None:
    d, paths = batch(40)
    (d / "card020b.json").write_text('{"resources": [')  # unreadable, between card020 and card021
    _cli(tmp_path, capsys, "derive", "--no-reuse", str(d))  # fills the cache
    one = _cli(tmp_path, capsys, "derive", "--no-reuse", "--jobs", "1", str(d))
    forks = []
    real_fork = os.fork

    def counting_fork() -> int:
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pool.os, "fork", counting_fork)
        many = _cli(tmp_path, capsys, "derive", "--no-reuse", "--jobs", "3", str(d))
    assert forks, "no worker was started"
    assert many == one
    code, out, err = one
    assert code == 2  # the unreadable card
    assert len(out.splitlines()) == 40
    sources = [orjson.loads(line)["card"]["source"] for line in out.splitlines()]
    assert sources == [str(p) for p in paths]
    assert "card020b.json:1:16: invalid JSON" in err  # said (as its chunk is read), the others derived


def test_a_card_a_worker_cannot_derive_is_derived_by_the_parent(
    batch: Callable[[int], tuple[Path, list[Path]]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    forking: None,
) -> None:
    """A worker has no spec store (an A2A agent's specs are met only while deriving): a card that
    wants it is handed back, as is every card of a worker that dies."""
    d, _ = batch(24)
    _cli(tmp_path, capsys, "derive", "--no-reuse", str(d))
    one = _cli(tmp_path, capsys, "derive", "--no-reuse", "--jobs", "1", str(d))
    parent = os.getpid()
    real_load = Engine.load

    def load(self: Engine, url: str, kind: Any) -> Any:
        if os.getpid() != parent and url.endswith("/gmail.json"):
            self.store.get(url)  # what a spec not loaded before the fork would do
        return real_load(self, url, kind)

    monkeypatch.setattr(Engine, "load", load)
    assert _cli(tmp_path, capsys, "derive", "--no-reuse", "--jobs", "3", str(d)) == one

    def dies(*args: Any, **kwargs: Any) -> bytes:
        os._exit(1)

    monkeypatch.setattr(pool.pickle, "dumps", dies)
    assert _cli(tmp_path, capsys, "derive", "--no-reuse", "--jobs", "3", str(d)) == one


def test_reports_derived_by_workers_are_stored_and_reused(
    batch: Callable[[int], tuple[Path, list[Path]]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    forking: None,
) -> None:
    d, _ = batch(24)
    _cli(tmp_path, capsys, "derive", "--no-reuse", str(d))  # the specs cached, no report stored
    first = _cli(tmp_path, capsys, "derive", "--jobs", "3", str(d))  # derived (in workers), stored
    derived: list[str] = []
    real_run = DERIVE.CardRun.run

    def run(self: Any) -> Any:
        derived.append(self.card.source)
        return real_run(self)

    monkeypatch.setattr(DERIVE.CardRun, "run", run)
    again = _cli(tmp_path, capsys, "derive", "--jobs", "1", str(d))
    assert again == first
    assert derived == []  # every report was stored by the first run, whichever process derived it


def test_how_many_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    assert pool.workers_for(1, 10_000, 8) == 1  # --jobs 1 never forks
    assert pool.workers_for(8, pool.MIN_CARDS_PER_WORKER - 1, 8) == 1  # too few cards to share
    if sys.platform == "linux":
        assert pool.workers_for(8, 10_000, 8) == 8
        assert pool.workers_for(2, 10_000, 8) == 2
        assert pool.workers_for(8, 10_000, 3) == 3
    # Room: this process, and one per CPU the load leaves idle.
    monkeypatch.setattr(pool, "usable_cpus", lambda: 4)
    for load, expected in ((0.0, 4), (1.0, 4), (1.5, 3), (3.2, 1), (9.0, 1)):
        monkeypatch.setattr(pool.os, "getloadavg", lambda load=load: (load, load, load))
        assert pool.room() == expected
