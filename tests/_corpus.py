"""Helpers shared by the corpus tests: an independent reading of OpenAPI security, and checking.

The reading here deliberately shares no code with ``ramscope.specs``: it follows
``$ref`` by splitting the pointer naively, computes base paths from the first
server with its own string handling, and builds requirements as plain lists.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import orjson

from ramscope.derive.resolve import Target, Unresolved, resolve
from ramscope.specs import build_index
from ramscope.store.model import FetchedSpec
from tests._specs import make_spec, rest_operation

METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]


def fetched(path: Path, url: str) -> FetchedSpec:
    return make_spec(path.read_bytes(), url)


def _naive_ref(doc: dict[str, Any], node: Any) -> Any:
    seen = 0
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        cur: Any = doc
        for part in node["$ref"][2:].split("/"):
            cur = cur[part.replace("~1", "/").replace("~0", "~")]
        node = cur
        seen += 1
        assert seen < 50
    return node


def _first_base(servers: Any, spec_url: str) -> str:
    servers = servers or [{"url": "/"}]
    url = servers[0].get("url", "/")
    for name, var in (servers[0].get("variables") or {}).items():
        url = url.replace("{" + name + "}", str(var.get("default", "")))
    if "://" in url or url.startswith("//"):
        rest = url.split("//", 1)[1]
        path = rest[rest.index("/") :] if "/" in rest else ""
    elif url.startswith("/") or not url:
        path = url
    else:  # relative to the document's own location
        path = posixpath.join(posixpath.dirname(urlparse(spec_url).path), url)
    return "" if path.strip("/") == "" else "/" + path.strip("/")


def expected_requirements(doc: dict[str, Any], op: dict[str, Any], declared: bool) -> Any:
    if not declared:
        return None
    sec = op["security"] if "security" in op else doc.get("security")
    if sec is None:
        return []
    return [[(name, sorted(set(scopes))) for name, scopes in alt.items()] for alt in sec]


def as_lists(reqs: Any) -> Any:
    if reqs is None:
        return None
    return [[(t.scheme, list(t.scopes)) for t in alt] for alt in reqs]


@dataclass
class CorpusResult:
    specs: int = 0
    operations: int = 0
    with_id: int = 0
    by_id_ok: int = 0
    by_path_ok: int = 0
    by_raw_path_ok: int = 0
    ambiguous_ids: int = 0
    ambiguous_paths: int = 0
    requirements_ok: int = 0
    not_indexed: dict[str, str] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    diag_codes: Counter[str] = field(default_factory=Counter)
    ambiguous_examples: list[str] = field(default_factory=list)


def check_openapi_spec(path: Path, name: str, result: CorpusResult) -> None:
    """Index one spec and check every operation with an operationId against the naive reading."""
    spec = fetched(path, f"https://corpus.test/{name}")
    try:
        index = build_index(spec)
    except Exception as exc:  # reported, counted and asserted on by the caller
        result.not_indexed[name] = f"{type(exc).__name__}: {exc}"
        return
    result.specs += 1
    result.diag_codes.update(d.code for d in index.diagnostics)
    doc = orjson.loads(spec.body)
    items: list[tuple[str, str, dict[str, Any]]] = []
    item_servers: dict[str, Any] = {}
    for p, raw_item in (doc.get("paths") or {}).items():
        if p.startswith("x-"):
            continue
        item = _naive_ref(doc, raw_item)
        item_servers[p] = item.get("servers")
        for m in METHODS:
            if isinstance(item.get(m), dict):
                items.append((p, m, item[m]))
    declared = "security" in doc or any("security" in op for _, _, op in items)
    ids = Counter(op["operationId"] for _, _, op in items if isinstance(op.get("operationId"), str))
    paths_seen = Counter((m, re.sub(r"\{[^}]*\}", "{}", p.rstrip("/") or "/")) for p, m, _ in items)
    for p, m, op in items:
        result.operations += 1
        op_id = op.get("operationId")
        if not isinstance(op_id, str) or not op_id:
            continue
        result.with_id += 1
        resource, operation = rest_operation(op_id)
        got = resolve(resource, operation, index)
        if ids[op_id] > 1:
            if isinstance(got, Unresolved) and got.reason == "ambiguous-operation":
                result.ambiguous_ids += 1
            else:
                result.failures.append(f"{name}: {op_id}: duplicate id not reported ambiguous: {got}")
            continue
        if not (isinstance(got, Target) and got.entry.method == m.upper() and got.entry.path == p):
            result.failures.append(f"{name}: {op_id}: by id -> {getattr(got, 'message', got)}")
            continue
        result.by_id_ok += 1
        want = expected_requirements(doc, op, declared)
        if as_lists(got.entry.requirements) == want:
            result.requirements_ok += 1
        else:
            result.failures.append(f"{name}: {op_id}: requirements {as_lists(got.entry.requirements)} != {want}")
        base = _first_base(op.get("servers") or item_servers[p] or doc.get("servers"), spec.url)
        for full, counter_attr in ((base + p, "by_path_ok"), (p, "by_raw_path_ok")):
            resource, operation = rest_operation("", m.upper(), full)
            got = resolve(resource, operation, index)
            if isinstance(got, Target) and got.entry.method == m.upper() and got.entry.path == p:
                setattr(result, counter_attr, getattr(result, counter_attr) + 1)
            elif (
                isinstance(got, Unresolved)
                and got.reason == "ambiguous-operation"
                and any(s.startswith(f"{op_id} (") for s in got.suggestions)
            ):
                # Genuinely ambiguous in the spec: two paths that differ only in parameter names,
                # or a path that equals another one with the base path in front.
                if counter_attr == "by_path_ok":
                    result.ambiguous_paths += 1
                    result.ambiguous_examples.append(f"{name}: {got.message}")
                    assert paths_seen[(m, re.sub(r"\{[^}]*\}", "{}", p.rstrip("/") or "/"))] >= 1
            else:
                result.failures.append(f"{name}: {op_id}: {m.upper()} {full} -> {getattr(got, 'message', got)}")
