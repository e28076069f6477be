"""Rebuild the JavaScript SDK tables the code reader ships (src/ramscope/evidence/data/).

Each table is read, as data, from the SDK's published npm package (``npm pack``: the tarball only,
nothing installed, no install script run), parsed with the same tree-sitter grammar the reader uses:

- ``octokit-endpoints.json``: ``@octokit/plugin-rest-endpoint-methods``'s generated
  ``dist-src/generated/endpoints.js`` (namespace → method → ``"METHOD /path"``), each route's
  operationId from GitHub's REST description in ``@octokit/openapi``
  (``generated/api.github.com.json``). Both MIT.
- ``js-slack-methods.json``: ``@slack/web-api``'s ``dist/methods.js``, each ``bindApiCall(this,
  'chat.postMessage')`` under its member chain (``chat.postMessage``). MIT.
- ``js-stripe-methods.json``: ``stripe``'s ``cjs/resources.js`` (resource and namespace names, as the
  client names its members) and each resource class's ``_makeRequest('POST', `/v1/...`)``. MIT.
- ``js-notion-methods.json``: ``@notionhq/client``'s ``build/src/Client.js`` (``notion.pages.create`` →
  the endpoint it sends) and ``build/src/api-endpoints/*.js`` (each endpoint's method and path). MIT.
- ``js-linear-methods.json``: ``@linear/sdk``'s ``dist/index.mjs``: each top-level GraphQL document
  (``mutation createIssue(...) { issueCreate(...) }``) is the client method of its name; the operation
  is the root field (``Mutation.issueCreate``). MIT.
- ``js-asana-methods.json``: ``asana``'s ``src/api/*Api.js``: each ``<name>WithHttpInfo`` method's
  ``callApi(path, METHOD)``; the method name is Asana's operationId. MIT (package.json: Apache 2.0).
- ``js-gapic-methods.json``: the Google Workspace client libraries ``@google-apps/chat`` and
  ``@google-apps/meet`` (Apache-2.0): ``gapic_metadata.json`` (client method → RPC) and
  ``build/protos/protos.json`` (each RPC's ``google.api.http`` method and path), joined by method and
  path to the Discovery method (id, ``flatPath``) of the same API in google-api-python-client's bundled
  Discovery documents (Apache-2.0; the installed package, ``pip install google-api-python-client``).

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
    "stripe": "stripe@23.1.0",
    "notion": "@notionhq/client@5.26.0",
    # 2.x still has what 5.x moved (databases.query became dataSources.query): agents written for it call it.
    "notion-2": "@notionhq/client@2.3.0",
    "linear": "@linear/sdk@98.0.0",
    "asana": "asana@3.2.0",
    "chat": "@google-apps/chat@0.32.0",
    "meet": "@google-apps/meet@0.7.2",
}
#: The Google Workspace client libraries (gapic, over gRPC or REST) whose RPCs are joined to Discovery
#: methods: (package key, proto package, version directory, Discovery document).
GAPIC = (("chat", "google.chat.v1", "v1", "chat.v1.json"), ("meet", "google.apps.meet.v2", "v2", "meet.v2.json"))


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


def _placeholder_path(node: Node) -> str:
    """A template literal's text with each substitution as ``{name}`` (its last identifier)."""
    if node.type == "string":
        return _string(node) or ""
    out: list[str] = []
    for c in node.named_children:
        if c.type == "string_fragment":
            out.append(_text(c))
        elif c.type == "template_substitution":
            idents = [n for n in _walk(c) if n.type in ("identifier", "property_identifier")]
            name = _text(idents[-1]) if idents else "param"
            out.append("{" + name + "}")
    return "".join(out)


def _camel(name: str) -> str:
    # stripe-node's pascalToCamelCase, as its client names a resource member
    return "oauth" if name == "OAuth" else name[:1].lower() + name[1:]


def stripe_table(pkg: Path) -> dict[str, Any]:
    cjs = pkg / "cjs"
    root = _parse(cjs / "resources.js")
    files: dict[str, str] = {}  # require variable -> resource file
    for n in _walk(root):
        if n.type == "variable_declarator":
            v = n.child_by_field_name("value")
            if v is not None and v.type == "call_expression" and _text(v.child_by_field_name("function")) == "require":  # type: ignore[arg-type]
                arg = _string(v.child_by_field_name("arguments").named_children[0])  # type: ignore[union-attr]
                if arg and arg.startswith("./resources/"):
                    files[_text(n.child_by_field_name("name"))] = arg  # type: ignore[arg-type]
    chains: dict[str, str] = {}  # member chain prefix -> resource file

    def member_file(expr: Node) -> str | None:
        ids = [_text(c) for c in _walk(expr) if c.type == "identifier"]
        return next((files[i] for i in ids if i in files), None)

    def namespace(call: Node, prefix: str) -> None:
        args = call.child_by_field_name("arguments")
        assert args is not None
        ns_name, body = _string(args.named_children[0]), args.named_children[1]
        here = f"{prefix}{ns_name}."
        for pair in body.named_children:
            if pair.type != "pair":
                continue
            key, val = _text(pair.child_by_field_name("key")), pair.child_by_field_name("value")  # type: ignore[arg-type]
            assert val is not None
            if val.type == "call_expression" and "resourceNamespace" in _text(val.child_by_field_name("function")):  # type: ignore[arg-type]
                namespace(val, here)
            elif (f := member_file(val)) is not None:
                chains[here + _camel(key)] = f

    for n in _walk(root):
        if n.type == "call_expression" and _text(n.child_by_field_name("function")) == "Object.defineProperty":  # type: ignore[arg-type]
            a = n.child_by_field_name("arguments").named_children  # type: ignore[union-attr]
            if len(a) == 3 and _text(a[0]) == "exports" and (name := _string(a[1])) and (f := member_file(a[2])):
                chains[_camel(name.removesuffix("Resource"))] = f
        elif n.type == "assignment_expression":
            right = n.child_by_field_name("right")
            if (
                right is not None
                and right.type == "call_expression"
                and "resourceNamespace" in _text(right.child_by_field_name("function"))
            ):  # type: ignore[arg-type]
                namespace(right, "")
    methods: dict[str, list[str]] = {}
    for prefix, f in chains.items():
        rroot = _parse(cjs / f.removeprefix("./"))
        for m in _walk(rroot):
            if m.type != "method_definition":
                continue
            for c in _walk(m):
                fn = c.child_by_field_name("function") if c.type == "call_expression" else None
                if fn is not None and _text(fn) == "this._makeRequest":
                    a = c.child_by_field_name("arguments").named_children  # type: ignore[union-attr]
                    verb, path = _string(a[0]), _placeholder_path(a[1])
                    if verb and path.startswith("/v"):
                        methods[f"{prefix}.{_text(m.child_by_field_name('name'))}"] = [
                            verb,
                            "https://api.stripe.com" + path,
                        ]  # type: ignore[arg-type]
                    break
    return {"methods": dict(sorted(methods.items()))}


def notion_table(pkg: Path) -> dict[str, Any]:
    src = pkg / "build" / "src"
    endpoints: dict[str, tuple[str, str]] = {}
    for f in [
        *sorted((src / "api-endpoints").glob("*.js")),
        *[src / "api-endpoints.js"][: (src / "api-endpoints.js").is_file()],
    ]:
        for n in _walk(_parse(f)):
            if n.type != "assignment_expression":
                continue
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            if left is None or right is None or right.type != "object" or not _text(left).startswith("exports."):
                continue
            props = {
                _text(p.child_by_field_name("key")): p.child_by_field_name("value")
                for p in right.named_children
                if p.type == "pair"
            }  # type: ignore[arg-type]
            verb, path = props.get("method"), props.get("path")
            if verb is None or path is None:
                continue
            body = path.child_by_field_name("body")
            if body is None or (v := _string(verb)) is None:
                continue
            endpoints[_text(left).removeprefix("exports.")] = (v.upper(), _placeholder_path(body))
    methods: dict[str, list[str]] = {}
    for n in _walk(_parse(src / "Client.js")):
        if n.type != "member_expression" or _text(n.child_by_field_name("property")) != "path":  # type: ignore[arg-type]
            continue
        ep = _text(n.child_by_field_name("object")).rsplit(".", 1)[-1]  # type: ignore[arg-type]
        if ep not in endpoints:
            continue
        chain: list[str] = []
        p: Node | None = n
        # The member chain starts at the arrow function that sends the request: pairs inside it are the
        # request's own fields (path, method).
        while p is not None and p.type != "arrow_function":
            p = p.parent
        while p is not None:
            if p.type == "pair":
                chain.append(_text(p.child_by_field_name("key")))  # type: ignore[arg-type]
            elif p.type == "assignment_expression" and _text(p.child_by_field_name("left")).startswith("this."):  # type: ignore[arg-type]
                chain.append(_text(p.child_by_field_name("left")).removeprefix("this."))  # type: ignore[arg-type]
                break
            elif p.type == "method_definition":
                chain.append(_text(p.child_by_field_name("name")))  # type: ignore[arg-type]
                break
            p = p.parent
        verb, path = endpoints[ep]
        methods.setdefault(".".join(reversed(chain)), [verb, "https://api.notion.com/v1/" + path])
    return {"methods": dict(sorted(methods.items()))}


def _graphql_root(doc: str) -> tuple[str, str, str] | None:
    """(kind, name, root field) of a GraphQL document's first operation, read from its tokens (GraphQL
    text, not JavaScript): ``mutation createIssue($input: ...) { issueCreate(...`` → mutation,
    createIssue, issueCreate."""
    head: list[str] = []  # words before the selection set: kind and name
    cur, parens, braces = "", 0, 0
    for ch in doc:
        if ch.isalnum() or ch == "_":
            cur += ch
            continue
        if cur and parens == 0:
            if braces == 0:
                head.append(cur)
            elif braces == 1:
                return (head[0], head[1], cur) if len(head) >= 2 and head[0] in ("query", "mutation") else None
        cur = ""
        parens += {"(": 1, ")": -1}.get(ch, 0)
        braces += {"{": 1, "}": -1}.get(ch, 0) if parens == 0 else 0
    return None


def linear_table(pkg: Path) -> dict[str, Any]:
    methods: dict[str, list[str]] = {}
    for n in _walk(_parse(pkg / "dist" / "index.mjs")):
        if n.type != "new_expression" or _text(n.child_by_field_name("constructor")) != "TypedDocumentString":  # type: ignore[arg-type]
            continue
        arg = n.child_by_field_name("arguments").named_children[0]  # type: ignore[union-attr]
        doc = "".join(_text(c) for c in arg.named_children if c.type == "string_fragment")
        found = _graphql_root(doc)
        if found is None or "_" in found[1]:
            continue  # a nested query (customView_issues): reached through a model, not the client
        kind, name, field = found
        methods.setdefault(name, ["POST", "https://api.linear.app/graphql", f"{kind.capitalize()}.{field}"])
    return {"methods": dict(sorted(methods.items()))}


def asana_table(pkg: Path) -> dict[str, Any]:
    methods: dict[str, list[str]] = {}
    for f in sorted((pkg / "src" / "api").glob("*Api.js")):
        for m in _walk(_parse(f)):
            if m.type != "method_definition":
                continue
            name = _text(m.child_by_field_name("name"))  # type: ignore[arg-type]
            if not name.endswith("WithHttpInfo"):
                continue
            for c in _walk(m):
                fn = c.child_by_field_name("function") if c.type == "call_expression" else None
                if fn is not None and _text(fn) == "this.apiClient.callApi":
                    a = c.child_by_field_name("arguments").named_children  # type: ignore[union-attr]
                    path, verb = _string(a[0]), _string(a[1])
                    if path and verb:
                        op = name.removesuffix("WithHttpInfo")
                        methods[f"{f.stem}.{op}"] = [verb, "https://app.asana.com/api/1.0" + path, op]
                    break
    return {"methods": dict(sorted(methods.items()))}


def _gapic_key(method: str, path: str) -> str:
    """``POST /v1/{parent=spaces/*}/messages`` and Discovery's ``v1/spaces/{spacesId}/messages`` → one key."""
    # A bound variable's pattern stands in its place (``{parent=spaces/*}`` → ``spaces/*``) before splitting.
    flat, i = "", 0
    while (j := path.find("{", i)) >= 0:
        k = path.index("}", j)
        _name, eq, pattern = path[j + 1 : k].partition("=")
        flat += path[i:j] + (pattern if eq else "*")
        i = k + 1
    flat += path[i:]
    out = ["{}" if seg in ("*", "**") else seg for seg in flat.strip("/").split("/")]
    return f"{method.upper()} /" + "/".join(out)


def _discovery_methods(doc: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    """key -> (method id, HTTP method, flatPath) of every method of a Discovery document."""
    out: dict[str, tuple[str, str, str]] = {}
    stack = [doc]
    while stack:
        node = stack.pop()
        for m in node.get("methods", {}).values():
            flat = m.get("flatPath") or m["path"]
            out[_gapic_key(m["httpMethod"], "/" + flat)] = (m["id"], m["httpMethod"], flat)
        stack.extend(node.get("resources", {}).values())
    return out


def gapic_table(found: dict[str, Path]) -> dict[str, Any]:
    import googleapiclient

    docs = Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"
    methods: dict[str, list[str]] = {}
    for key, proto_pkg, version, doc_name in GAPIC:
        pkg = found[key]
        doc = json.loads((docs / doc_name).read_bytes())
        by_route = _discovery_methods(doc)
        spec = f"https://www.googleapis.com/discovery/v1/apis/{doc['name']}/{doc['version']}/rest"
        meta = json.loads((pkg / "build" / "src" / version / "gapic_metadata.json").read_bytes())
        protos = json.loads((pkg / "build" / "protos" / "protos.json").read_bytes())
        ns: Any = protos
        for part in proto_pkg.split("."):
            ns = ns["nested"][part]
        for svc_name, svc in meta["services"].items():
            client = svc["clients"]["grpc"]["libraryClient"]
            rpcs = ns["nested"][svc_name]["methods"]
            for rpc, names in svc["clients"]["grpc"]["rpcs"].items():
                opts = rpcs[rpc].get("options", {})
                http = next(
                    (
                        (v, p)
                        for v in ("get", "post", "patch", "put", "delete")
                        if (p := opts.get(f"(google.api.http).{v}"))
                    ),
                    None,
                )
                if http is None:
                    continue
                hit = by_route.get(_gapic_key(http[0], http[1]))
                if hit is None:
                    continue
                mid, verb, flat = hit
                for name in names["methods"]:
                    for form in (name, name + "Async", name + "Stream"):
                        methods[f"{client}.{form}"] = [verb, doc["rootUrl"] + doc["servicePath"] + flat, mid, spec]
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
        builders = {"stripe": stripe_table, "notion": notion_table, "linear": linear_table, "asana": asana_table}
        for name, build in builders.items():
            lic = "MIT (package.json says Apache 2.0)" if name == "asana" else "MIT"
            table = build(found[name])
            sources = [PACKAGES[name]]
            if name == "notion":  # the newer SDK's methods first; the older one's only where the newer has none
                older = build(found["notion-2"])["methods"]
                table["methods"] = dict(sorted({**older, **table["methods"]}.items()))
                sources.append(PACKAGES["notion-2"])
            doc = {"source": sources, "license": lic, "built": today, **table}
            (OUT / f"js-{name}-methods.json").write_text(json.dumps(doc, indent=0) + "\n", "utf-8")
            print(f"{name}: {len(doc['methods'])} methods")
        from importlib.metadata import version

        discovery = f"google-api-python-client@{version('google-api-python-client')} (Discovery documents)"
        gapic = {"source": [PACKAGES["chat"], PACKAGES["meet"], discovery], "license": "Apache-2.0", "built": today}
        gapic.update(gapic_table(found))
        (OUT / "js-gapic-methods.json").write_text(json.dumps(gapic, indent=0) + "\n", "utf-8")
        print(f"gapic: {len(gapic['methods'])} methods")


if __name__ == "__main__":
    main()
