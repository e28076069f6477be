"""Issue 30, item 16: the GitHub catalog's GHES pattern served any API whose base path was `/api/v3`,
on any host, plain http too. Now it serves an `/api/v3` server only for a spec that says it is GitHub's
Enterprise Server description (`info.x-github-plan: ghes`, GitHub's own marker), and never over plain
http (but GitHub's unfilled `{protocol}://{hostname}` template, which names no host)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.outputs.report import Report
from tests.support.httpserver import LocalHTTPServer
from tests.test_derive import card

#: As GitHub's GHES descriptions give them (@octokit/openapi generated/ghes-3.19.json).
VARIABLES = {
    "hostname": {"description": "Self-hosted Enterprise Server hostname", "default": "HOSTNAME"},
    "protocol": {"description": "Self-hosted Enterprise Server protocol", "default": "http"},
}


def _spec(server: str, plan: str | None) -> bytes:
    info: dict[str, Any] = {"title": "Repository service", "version": "1"}
    if plan is not None:
        info["x-github-plan"] = plan
    # Declares no security: only a catalog can say what the operation needs.
    return orjson.dumps(
        {
            "openapi": "3.0.3",
            "info": info,
            "servers": [{"url": server, "variables": VARIABLES} if "{" in server else {"url": server}],
            "paths": {
                "/repos/{owner}/{repo}/issues": {"post": {"operationId": "issues/create", "responses": {}}},
            },
        }
    )


@pytest.fixture(scope="module")
def server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        srv.route("/stranger.json", body=_spec("https://api.stranger.example/api/v3", None))
        srv.route("/stranger-http.json", body=_spec("http://api.stranger.example/api/v3", "ghes"))
        srv.route("/ghes.json", body=_spec("https://ghe.corp.example/api/v3", "ghes"))
        srv.route("/ghes-template.json", body=_spec("{protocol}://{hostname}/api/v3", "ghes"))
        yield srv


def _derive(server: LocalHTTPServer, route: str, tmp_path: Path) -> Report:
    settings = Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=20)
    manifest = card(server, (route, "", {"operation_id": "issues/create"}, {}))
    with Engine(settings) as engine:
        return engine.derive({"name": "repo agent", "resourceAccessManifest": manifest})


@pytest.mark.parametrize("route", ["/stranger.json", "/stranger-http.json"])
def test_an_api_v3_base_path_alone_gets_no_github_scopes(server: LocalHTTPServer, tmp_path: Path, route: str) -> None:
    report = _derive(server, route, tmp_path)
    (a,) = report.accesses
    assert a.requirements is None  # undetermined (exit 3), never GitHub's permissions
    assert not a.complete
    assert "catalog" not in (a.requirements_source or "")


def test_a_ghes_description_gets_the_github_catalog(server: LocalHTTPServer, tmp_path: Path) -> None:
    (a,) = _derive(server, "/ghes.json", tmp_path).accesses
    assert "catalog:github" in (a.requirements_source or "")
    assert a.complete


def test_githubs_own_template_keeps_the_catalog(server: LocalHTTPServer, tmp_path: Path) -> None:
    """GitHub's published GHES descriptions say `{protocol}://{hostname}/api/v3`, defaults http and HOSTNAME."""
    (a,) = _derive(server, "/ghes-template.json", tmp_path).accesses
    assert "catalog:github" in (a.requirements_source or "")
