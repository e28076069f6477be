"""Microsoft Graph permission ids (GUIDs), as an app registration's ``requiredResourceAccess`` names them.

An Entra app registration lists each permission it requests by the id Microsoft Graph's service
principal gives it: a delegated permission's id among ``oauth2PermissionScopes`` (``type: Scope``),
an application permission's among ``appRoles`` (``type: Role``). Names alone are not accepted there.

The ids come from Microsoft's own published data, microsoftgraph/microsoft-graph-devx-content
``permissions/new/provisioningInfo.json`` (MIT), compiled by :func:`compile_ids` into the shipped
``data/microsoft-graph.ids.json.gz`` (``scripts/build_graph_ids.py`` rebuilds it). Only deployments
that are enabled, in the public cloud and
carrying a GUID are kept: the file also lists disabled placeholders and deployments without an id.
``resourceAppId`` there names the first-party service that owns a permission (empty for most), not
the resource it is requested from: every permission of ``permissions.json`` is requested from Graph.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import orjson

__all__ = ["GRAPH_APP_ID", "GraphIds", "PermissionIds", "compile_ids", "decode_ids", "graph_ids"]

#: Microsoft Graph's application id: ``requiredResourceAccess[].resourceAppId`` for Graph.
GRAPH_APP_ID = "00000003-0000-0000-c000-000000000000"
DATA_FILE = "microsoft-graph.ids.json.gz"
_GUID = re.compile(r"\A[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")


@dataclass(frozen=True)
class PermissionIds:
    #: The delegated permission's id (``Scope``), or ``None`` when Graph has no delegated form.
    scope: str | None
    #: The application permission's id (``Role``), or ``None``.
    role: str | None
    hidden: bool


@dataclass(frozen=True)
class GraphIds:
    version: str
    source: Mapping[str, str]
    ids: Mapping[str, PermissionIds]

    def get(self, name: str) -> PermissionIds | None:
        return self.ids.get(name)


def _public(environment: Any) -> bool:
    # "public", "PPE;public", "public;FairFax" ...: deployed in the public cloud; "" and "PPE" are not said to be.
    return isinstance(environment, str) and "public" in environment.lower().split(";")


def compile_ids(doc: Mapping[str, Any], source: Mapping[str, str]) -> dict[str, Any]:
    """The shipped form of ``provisioningInfo.json``: ``{version, source, ids: {name: [scope, role, hidden]}}``.

    Raises ``ValueError`` when the document is not shaped as Microsoft publishes it.
    """
    deployments = doc.get("permissionDeployments")
    if not isinstance(deployments, Mapping):
        raise ValueError("not a provisioningInfo.json: no 'permissionDeployments' object")
    out: dict[str, list[Any]] = {}
    for name, entries in sorted(deployments.items()):
        if not isinstance(name, str) or not isinstance(entries, list):
            raise ValueError(f"permissionDeployments/{name}: not a list of deployments")
        scope: str | None = None
        role: str | None = None
        hidden = False
        for e in entries:
            if not isinstance(e, Mapping):
                continue
            pid = e.get("id")
            if e.get("isEnabled") is not True or not _public(e.get("environment")):
                continue
            if not isinstance(pid, str) or not _GUID.match(pid.lower()):
                continue
            # One delegated id serves work and personal accounts alike (the service principal's scope);
            # the DelegatedWork deployment is that scope's.
            if e.get("scheme") == "DelegatedWork" and scope is None:
                scope = pid.lower()
                hidden = hidden or e.get("isHidden") is True
            elif e.get("scheme") == "Application" and role is None:
                role = pid.lower()
                hidden = hidden or e.get("isHidden") is True
        if scope or role:
            out[name] = [scope, role, hidden]
    # The upstream commit names the data; a refreshed copy has none, and its content hash names it instead.
    tag = source.get("commit", "")[:8] or source.get("sha256", "")[:8]
    return {"version": f"{source.get('date', '')}+{tag}", "source": dict(source), "ids": out}


@cache
def graph_ids() -> GraphIds:
    """The shipped ids (decoded once)."""
    raw = resources.files(__package__).joinpath("data", DATA_FILE).read_bytes()
    return decode_ids(gzip.decompress(raw))


def decode_ids(data: bytes) -> GraphIds:
    """Ids from their compiled JSON (the shipped snapshot, or one ``universe refresh microsoft-graph`` stored)."""
    doc = orjson.loads(data)
    ids = {
        name: PermissionIds(scope=v[0], role=v[1], hidden=bool(v[2]))
        for name, v in doc["ids"].items()
        if isinstance(v, list) and len(v) == 3
    }
    return GraphIds(version=str(doc["version"]), source=dict(doc["source"]), ids=ids)
