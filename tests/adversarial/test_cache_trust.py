"""Issue 14, item 8: a repository that ships a crafted `specs_cache/` beside its cards decided what
ramscope reported there (a sealed spec in which an operation needs nothing, fresh for ten years: complete,
no scopes, exit 0, no flags). The default cache is now the user's cache directory, and an entry fresh
beyond the configured maximum is distrusted even when that directory is chosen with --cache-dir."""

from __future__ import annotations

import json
from pathlib import Path

from ramscope.config import Settings
from ramscope.store import SpecStore
from tests.support.httpserver import LocalHTTPServer

from .hostile import card_doc, dumps, manifest, openapi
from .measure import TRACEBACK, child_env, run_ramscope

TEN_YEARS = 10 * 365 * 86400


def test_a_crafted_specs_cache_beside_the_card_decides_nothing(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    honest = openapi()  # GET /items needs items.read
    forged = openapi(security=[])  # ... and in the forged copy, nothing
    with LocalHTTPServer() as srv:
        srv.route("/spec.json", body=dumps(forged), headers={"cache-control": f"max-age={TEN_YEARS}"})
        url = srv.url("/spec.json")
        settings = Settings(
            cache_dir=repo / "specs_cache", allow_private_network=True, timeout=10, cache_max_ttl=float(TEN_YEARS)
        )
        with SpecStore(settings) as store:
            store.get(url)  # the attacker's cache, sealed like any other
        srv.route("/spec.json", body=dumps(honest))
        (repo / "card.json").write_bytes(dumps(card_doc(manifest(url))))
        env = child_env(XDG_CACHE_HOME=str(tmp_path / "xdg"))
        plain = run_ramscope(["--allow-private-network", "derive", "card.json"], cwd=repo, env=env)
        chosen = run_ramscope(
            ["--allow-private-network", "--cache-dir", "specs_cache", "derive", "card.json"], cwd=repo, env=env
        )
    for run in (plain, chosen):
        assert TRACEBACK not in run.err
        assert run.returncode == 0, run.err
        (a,) = json.loads(run.out)["accesses"]
        assert a["scopes"] == ["items.read"]  # from the server, not the forged cache
    assert (tmp_path / "xdg" / "ramscope").is_dir()
    assert "cache-entry-distrusted" in chosen.out
