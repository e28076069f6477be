"""Per-tool scopes of widely used MCP servers, as data (``data/mcp-servers.json``), keyed by server URL.

Some servers publish what each tool needs only in their tool definitions or docs, not in
``tools/list`` (GitHub's MCP server lists each tool's Required and Accepted OAuth Scopes in its
README, with a scope hierarchy; its remote server lists tools only to authenticated clients).
``scripts/build_mcp_catalog.py`` compiles the vendored upstream files (``vendor/github-mcp-server``,
MIT) into the catalog; :func:`apply` reads an MCP index that way, as :mod:`.quirks` reads a spec:

* a server is matched by its URL: the catalog's host exactly, and a path that is its prefix or
  below it at a segment boundary (``/mcp``, ``/mcp/``, ``/mcp/x/issues``; never ``/mcpx``);
* a tool that declares nothing of its own (``security_source`` ``server`` / ``server-baseline``)
  takes the catalog's alternatives (``security_source`` ``catalog:<name>@<version>``);
* a tool's own ``securitySchemes`` always win; where they name other scopes than the catalog,
  that is a finding (``mcp-catalog-conflict``), not a silent choice;
* the catalog's tools are kept in ``extra["mcp_catalog"]`` so a tool the server did not list to
  ramscope (authenticated clients only) still gets the vendor's requirement
  (:func:`ramscope.specs.mcp.unlisted_tool`), with the source, both token families and the hierarchy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

import orjson

from ..diagnostics import Severity, rule
from ..specs.mcp import OAUTH_SCHEME
from ..specs.model import (
    FlowKind,
    OAuthFlow,
    OperationEntry,
    Requirements,
    SchemeRequirement,
    SchemeType,
    SecurityScheme,
    SpecIndex,
    SpecKind,
    reqs_to_json,
)

__all__ = ["MCP_CATALOG_CONFLICT", "apply", "data_version", "load", "match"]

MCP_CATALOG_CONFLICT = rule(
    "mcp-catalog-conflict",
    Severity.WARNING,
    "A tool's own securitySchemes name other scopes than its vendor's published tool definitions; the tool's own "
    "declaration is used.",
    stage="mcp",
)

_DATA = "mcp-servers.json"


@cache
def _raw() -> bytes:
    return (resources.files("ramscope.providers") / "data" / _DATA).read_bytes()


@cache
def load() -> tuple[Mapping[str, Any], ...]:
    """The shipped servers, each with its tools, hierarchy, token families and source."""
    doc = orjson.loads(_raw())
    servers = doc.get("servers") if isinstance(doc, dict) else None
    version = str(doc.get("version", "")) if isinstance(doc, dict) else ""
    return tuple({**s, "version": version} for s in servers or () if isinstance(s, dict))


def data_version() -> str:
    """The catalog's version and content hash: stored reports derived with another are not reused."""
    doc = orjson.loads(_raw())
    return f"{doc.get('version', '')}+{hashlib.sha256(_raw()).hexdigest()[:12]}"


def match(url: str) -> Mapping[str, Any] | None:
    """The catalog server ``url`` names: its host exactly, its path the prefix or below it at a ``/``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme != "https":
        return None
    host = (parts.hostname or "").lower()
    path = parts.path or "/"
    for server in load():
        prefix = str(server.get("path_prefix", "")).rstrip("/")
        if host in server.get("hosts", ()) and (path.rstrip("/") == prefix or path.startswith(prefix + "/")):
            return server
    return None


def _requirements(tool: Mapping[str, Any]) -> Requirements:
    alts = tool.get("alternatives") or [[]]
    return tuple((SchemeRequirement.of(OAUTH_SCHEME, [str(s) for s in alt]),) for alt in alts)


def _scheme(server: Mapping[str, Any]) -> SecurityScheme:
    """The server's OAuth scheme as its vendor documents it, for an index whose capture named none."""
    issuer = str(server.get("authorization_server", "")).rstrip("/")
    scopes = tuple((str(s), "") for s in server.get("scopes_supported") or ())
    return SecurityScheme(
        OAUTH_SCHEME,
        SchemeType.OAUTH2,
        description=f"OAuth per the vendor's published tool definitions ({server.get('source', {}).get('reference')}); "
        f"authorization server {issuer}",
        flows=(OAuthFlow(FlowKind.AUTHORIZATION_CODE, f"{issuer}/authorize", f"{issuer}/access_token", scopes=scopes),),
    )


def _scopes_of(reqs: Requirements | None) -> set[frozenset[str]]:
    return {frozenset(s for t in alt for s in t.scopes) for alt in reqs or ()}


def apply(index: SpecIndex) -> SpecIndex:
    """``index`` read with its vendor's per-tool data, when the catalog knows its server (else unchanged)."""
    if index.kind is not SpecKind.MCP:
        return index
    server = match(index.url)
    if server is None:
        return index
    label = f"catalog:{server.get('name')}@{server.get('version')}"
    tools: Mapping[str, Any] = server.get("tools") or {}
    source = dict(server.get("source") or {})
    catalog_tools: dict[str, dict[str, Any]] = {}
    for name, tool in tools.items():
        catalog_tools[name] = {
            "requirements": reqs_to_json(_requirements(tool)),
            "required": list(tool.get("required") or ()),
            "accepted": list(tool.get("accepted") or ()),
            "mode": tool.get("mode"),
            "toolsets": list(tool.get("toolsets") or ()),
            "title": tool.get("title"),
            "source": source.get("reference"),
        }
    diags = list(index.diagnostics)
    ops: list[OperationEntry] = []
    for op in index.operations:
        tool = tools.get(op.key)
        if tool is None:
            ops.append(op)
            continue
        reqs = _requirements(tool)
        if op.security_source == "tool":
            if _scopes_of(op.requirements) - {frozenset()} != _scopes_of(reqs) - {frozenset()}:
                own = sorted(" ".join(sorted(s)) or "(none)" for s in _scopes_of(op.requirements))
                theirs = sorted(" ".join(sorted(s)) or "(token)" for s in _scopes_of(reqs))
                diags.append(
                    MCP_CATALOG_CONFLICT(
                        op.pointer,
                        f"tool {op.key!r} declares securitySchemes with scopes {own}, but {label} "
                        f"({source.get('reference')}) documents {theirs}; the tool's own declaration is used",
                        data={"tool": op.key, "catalog": label, "declared": own, "documented": theirs},
                    )
                )
            ops.append(op)
            continue
        ops.append(
            replace(
                op, requirements=reqs, security_source=label, extra={**op.extra, "mcp_catalog": catalog_tools[op.key]}
            )
        )
    if index.extra.get("tools_listed") is False and not ops:
        # Listed to authenticated clients only: the vendor's published tools stand in for the listing, so a
        # scope's blast radius counts the tools it opens (each unverified, the catalog its source).
        ops = [
            OperationEntry(
                key=name,
                operation_id=name,
                requirements=_requirements(tool),
                security_source=label,
                title=str(tool.get("title") or ""),
                extra={"verified": False, "listed_by": label, "mcp_catalog": catalog_tools[name]},
                pointer="",
            )
            for name, tool in sorted(tools.items())
        ]
    schemes = index.schemes
    if OAUTH_SCHEME not in index.scheme_map:
        schemes = (*schemes, _scheme(server))
    extra = {
        **index.extra,
        "mcp_catalog": {
            "label": label,
            "name": server.get("name"),
            "provider": server.get("provider"),
            "version": server.get("version"),
            "source": source,
            "hierarchy": dict(server.get("hierarchy") or {}),
            "token_families": dict(server.get("token_families") or {}),
            "scopes_supported": list(server.get("scopes_supported") or ()),
            "tools": catalog_tools,
        },
    }
    return replace(
        index, operations=tuple(ops), schemes=schemes, diagnostics=tuple(diags), extra=extra, security_declared=True
    )
