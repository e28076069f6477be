"""Every method of every Discovery document bundled in google-api-python-client resolves, with its scopes.

The expected values are read here straight from the JSON, by a separate walk,
not through the adapter. Runs in the default test run (about ten seconds).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from ramscope.derive.resolve import Target, Unresolved, resolve
from ramscope.specs import SpecKind, build_index
from tests._specs import make_spec, rest_operation

#: Measured on google-api-python-client 2.202.0 (pinned in pyproject).
DOCUMENTS = 610
METHODS = 28_137
#: Methods whose (HTTP method, servicePath + path) another method of the same document shares: all
#: ``{+name}``-style templates (``v1/{+name}``). Every one of them has a flatPath that is unique.
PATH_SHARED = 12_091


def _methods(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    todo = [doc]
    while todo:
        node = todo.pop()
        out.extend((node.get("methods") or {}).values())
        todo.extend((node.get("resources") or {}).values())
    return out


def _shape(path: str) -> str:
    return "/" + re.sub(r"\{[^}]*\}", "{}", path).strip("/")


def test_every_discovery_method_resolves(discovery_documents: Path) -> None:
    """By id, by servicePath + path (or an ambiguity that names it) and by flatPath, with the document's scopes."""
    docs = methods = ambiguous = by_flat = 0
    failures: list[str] = []
    for file in sorted(discovery_documents.glob("*.json")):
        body = file.read_bytes()
        doc = orjson.loads(body)
        if doc.get("kind") != "discovery#restDescription":
            assert file.name == "index.json"  # the directory list of APIs, not an API
            continue
        docs += 1
        index = build_index(make_spec(body, f"https://discovery.test/{file.name}"))
        assert index.kind is SpecKind.DISCOVERY
        service = doc.get("servicePath", "")
        ms = _methods(doc)
        shapes = Counter((m["httpMethod"], _shape(service + m["path"])) for m in ms)
        for m in ms:
            methods += 1
            mid, http = m["id"], m["httpMethod"]
            got = resolve(*rest_operation(mid), index)
            if not isinstance(got, Target) or got.entry.operation_id != mid:
                failures.append(f"{mid}: by id: {got}")
                continue
            scopes = [alt[0].scopes[0] for alt in got.entry.requirements or ()] if m.get("scopes") else []
            if scopes != m.get("scopes", []):
                failures.append(f"{mid}: scopes {scopes} != {m.get('scopes')}")
            got = resolve(*rest_operation("", http, "/" + service + m["path"]), index)
            if isinstance(got, Target):
                if got.entry.operation_id != mid:
                    failures.append(f"{mid}: by path: {got.entry.operation_id}")
            elif isinstance(got, Unresolved) and got.reason == "ambiguous-operation":
                ambiguous += 1
                if shapes[(http, _shape(service + m["path"]))] < 2 and "flatPath" not in m:
                    failures.append(f"{mid}: ambiguous by path without a reason: {got.message}")
                if not any(s.startswith(mid + " (") for s in got.suggestions):
                    failures.append(f"{mid}: ambiguity does not list it: {got.message}")
            else:
                failures.append(f"{mid}: by path: {got}")
            if "flatPath" in m:
                by_flat += 1
                got = resolve(*rest_operation("", http.lower(), service + m["flatPath"]), index)
                if not isinstance(got, Target) or got.entry.operation_id != mid:
                    failures.append(f"{mid}: by flatPath: {getattr(got, 'message', got)}")
    assert failures == []
    assert (docs, methods, ambiguous) == (DOCUMENTS, METHODS, PATH_SHARED)
    assert by_flat == 27_783
