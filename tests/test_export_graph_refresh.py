"""`universe refresh microsoft-graph` also refreshes the permission GUIDs `export --format entra-app` uses,
from provisioningInfo.json beside permissions.json; without it the refresh still stands and the shipped ids
stay. Served from loopback: Microsoft's real files cut to the mail permissions."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import orjson
import pytest

from ramscope import Settings
from ramscope.cli import main
from ramscope.providers.refresh import refresh_catalog
from ramscope.store import SpecStore
from tests.support.exportcards import FIXTURES, GRAPH, rest_card
from tests.support.httpserver import LocalHTTPServer

ROOT = Path(__file__).resolve().parent.parent
MAIL = {"Mail.Read", "Mail.Send"}


def _permissions() -> bytes:
    doc = orjson.loads((ROOT / "vendor" / "microsoft-graph" / "permissions.json").read_bytes())
    doc["permissions"] = {k: v for k, v in doc["permissions"].items() if k in MAIL | {"User.Read"}}
    return orjson.dumps(doc)


def _provisioning() -> bytes:
    """Microsoft's deployments of the two mail permissions (as provisioningInfo.json lists them); User.Read
    is left out, so an export that uses these ids cannot give it one."""
    return orjson.dumps(
        {
            "permissionDeployments": {
                "Mail.Read": [
                    {"id": "570282fd-fa5c-430d-a7fd-fc8dc98a9dca", "scheme": "DelegatedWork", "environment": "public",
                     "isHidden": False, "isEnabled": True, "resourceAppId": ""},
                    {"id": "810c84a8-4a9e-49e6-bf7d-12d183f40d01", "scheme": "Application", "environment": "public",
                     "isHidden": False, "isEnabled": True, "resourceAppId": ""},
                ],
                "Mail.Send": [
                    {"id": "e383f46e-2787-4529-855e-0e479a3ffac0", "scheme": "DelegatedWork", "environment": "public",
                     "isHidden": False, "isEnabled": True, "resourceAppId": ""},
                ],
            }
        }
    )  # fmt: skip


def test_refresh_stores_ids_and_entra_export_uses_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    with LocalHTTPServer() as srv:
        srv.route("/new/permissions.json", body=_permissions())
        srv.route("/new/provisioningInfo.json", body=_provisioning())
        srv.route("/graph.json", body=(FIXTURES / "export" / "graph.json").read_bytes())
        with SpecStore(Settings(cache_dir=cache, allow_private_network=True)) as store:
            result = refresh_catalog(store, "microsoft-graph", url=srv.url("/new/permissions.json"))
        assert result.ids_version is not None
        # A refreshed copy has no commit: its content hash names it.
        assert result.ids_version.endswith("+" + hashlib.sha256(_provisioning()).hexdigest()[:8])
        card = tmp_path / "graph.card.json"
        card.write_text(json.dumps(rest_card(srv, "Graph Agent", "/graph.json", [GRAPH[0], GRAPH[1]])), "utf-8")
        monkeypatch.chdir(tmp_path)
        argv = ["--cache-dir", str(cache), "--allow-private-network", "--no-progress", "export", "graph.card.json"]
        code = main([*argv, "--format", "entra-app"])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    assert doc["data"]["graph_ids"] == result.ids_version
    assert doc["manifest"]["requiredResourceAccess"][0]["resourceAccess"] == [
        {"id": "570282fd-fa5c-430d-a7fd-fc8dc98a9dca", "type": "Scope"}
    ]
    # User.Read has no id in the refreshed data: said, not dropped (and not filled from elsewhere).
    assert [n["permission"] for n in doc["not_exported"]] == ["User.Read"]
    assert "not exported: User.Read" in out.err


def test_refresh_without_provisioning_info_keeps_the_shipped_ids(tmp_path: Path) -> None:
    with LocalHTTPServer() as srv:
        srv.route("/new/permissions.json", body=_permissions())
        with SpecStore(Settings(cache_dir=tmp_path / "cache", allow_private_network=True)) as store:
            result = refresh_catalog(store, "microsoft-graph", url=srv.url("/new/permissions.json"))
            assert store.get_artifact("catalog", "microsoft-graph-ids") is None
    assert result.ids_version is None
    assert result.entries > 0
