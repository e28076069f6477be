"""Rebuild the JavaScript SDK tables the code reader ships (src/ramscope/evidence/data/).

Each table is read, as data, from the SDK's published npm package (``npm pack``: the tarball only,
nothing installed, no install script run), parsed with the same tree-sitter grammar the reader uses:

- ``octokit-endpoints.json``: ``@octokit/plugin-rest-endpoint-methods``'s generated
  ``dist-src/generated/endpoints.js`` (namespace → method → ``"METHOD /path"``), each route's
  operationId from GitHub's REST description in ``@octokit/openapi``
  (``generated/api.github.com.json``). Both MIT.
- ``js-slack-methods.json``: ``@slack/web-api``'s ``dist/methods.js``, each ``bindApiCall(this,
  'chat.postMessage')`` under its member chain (``chat.postMessage``). MIT.

Usage: ``python scripts/build_js_tables.py [--from DIR]`` where DIR holds the unpacked packages (as
``DIR/<tarball name without .tgz>/package``); without it the script runs ``npm pack`` into a temp dir.
Record the versions it prints in src/ramscope/evidence/data/NOTICE.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tarfile
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

from tree_sitter import Language, Node, Parser
from tree_sitter_javascript import language

OUT = Path(__file__).resolve().parents[1] / "src" / "ramscope" / "evidence" / "data"
PACKAGES = {
    "octokit": "@octokit/plugin-rest-endpoint-methods@18.0.0",
    "openapi": "@octokit/openapi@23.0.2",
    "slack": "@slack/web-api@8.2.0",
}


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8")


def _string(node: Node) -> str | None:
    if node.type != "string":
        return None
    return "".join(_text(c) for c in node.named_children if c.type == "string_fragment")


def _parse(path: Path) -> Node:
    return Parser(Language(language())).parse(path.read_bytes()).root_node


def _walk(node: Node) -> Any:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _unpack(spec: str, into: Path) -> Path:
    name = (
        subprocess.run(
            ["npm", "pack", spec, "--silent", "--ignore-scripts"], cwd=into, check=True, capture_output=True, text=True
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    target = into / name.removesuffix(".tgz")
    with tarfile.open(into / name) as tar:
        tar.extractall(target, filter="data")
    return target / "package"


def _route_key(method: str, path: str) -> str:
    segs = ["{}" if s.startswith("{") and s.endswith("}") else s for s in path.split("/")]
    return f"{method.upper()} {'/'.join(segs)}"


def octokit_table(endpoints_pkg: Path, openapi_pkg: Path) -> dict[str, Any]:
    spec = json.loads((openapi_pkg / "generated" / "api.github.com.json").read_bytes())
    routes: dict[str, str] = {}
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if isinstance(op, dict) and "operationId" in op:
                routes[_route_key(method, path)] = op["operationId"]
    root = _parse(endpoints_pkg / "dist-src" / "generated" / "endpoints.js")
    decl = next(
        n
        for n in _walk(root)
        if n.type == "variable_declarator" and _text(n.child_by_field_name("name")) == "Endpoints"
    )  # type: ignore[arg-type]
    methods: dict[str, list[str]] = {}
    value = decl.child_by_field_name("value")
    assert value is not None
    assert value.type == "object"
    for ns in value.named_children:
        if ns.type != "pair":
            continue
        ns_name = _text(ns.child_by_field_name("key"))  # type: ignore[arg-type]
        body = ns.child_by_field_name("value")
        assert body is not None
        for m in body.named_children:
            if m.type != "pair":
                continue
            arr = m.child_by_field_name("value")
            assert arr is not None
            assert arr.type == "array"
            route = _string(arr.named_children[0])
            assert route is not None
            verb, _, path = route.partition(" ")
            path = path.split("{?", 1)[0]  # RFC 6570 query expansions are no path
            op = routes.get(_route_key(verb, path), "")
            methods[f"{ns_name}.{_text(m.child_by_field_name('key'))}"] = [verb, path, op]  # type: ignore[arg-type]
    # The routes octokit.request() may name: every route of the REST description.
    return {"routes": dict(sorted(routes.items())), "methods": dict(sorted(methods.items()))}


def slack_table(pkg: Path) -> dict[str, Any]:
    root = _parse(pkg / "dist" / "methods.js")
    methods: dict[str, str] = {}
    for n in _walk(root):
        if n.type != "call_expression":
            continue
        fn = n.child_by_field_name("function")
        if fn is None or _text(fn) not in ("bindApiCall", "bindApiCallWithOptionalArgument"):
            continue
        args = n.child_by_field_name("arguments")
        name = _string(args.named_children[1]) if args is not None and len(args.named_children) > 1 else None
        if name is None:
            continue
        chain: list[str] = []
        p: Node | None = n
        while p is not None:
            if p.type == "pair":
                chain.append(_text(p.child_by_field_name("key")))  # type: ignore[arg-type]
            elif p.type == "field_definition":
                chain.append(_text(p.child_by_field_name("property")))  # type: ignore[arg-type]
            p = p.parent
        methods[".".join(reversed(chain))] = name
    return {"methods": dict(sorted(methods.items()))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--from", dest="src", type=Path, help="a directory with the unpacked packages")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        if args.src:
            found = {
                k: next(args.src.glob(v.lstrip("@").replace("/", "-").replace("@", "-") + "/package"))
                for k, v in PACKAGES.items()
            }
        else:
            found = {k: _unpack(v, base) for k, v in PACKAGES.items()}
        today = date.today().isoformat()
        octo = octokit_table(found["octokit"], found["openapi"])
        octo = {"source": [PACKAGES["octokit"], PACKAGES["openapi"]], "license": "MIT", "built": today, **octo}
        (OUT / "octokit-endpoints.json").write_text(json.dumps(octo, indent=0, sort_keys=False) + "\n", "utf-8")
        slack = {"source": [PACKAGES["slack"]], "license": "MIT", "built": today, **slack_table(found["slack"])}
        (OUT / "js-slack-methods.json").write_text(json.dumps(slack, indent=0) + "\n", "utf-8")
        print(f"octokit: {len(octo['methods'])} methods, {len(octo['routes'])} routes; slack: {len(slack['methods'])}")


if __name__ == "__main__":
    main()
