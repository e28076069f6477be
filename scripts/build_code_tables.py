"""Rebuild the SDK tables the code reader uses (src/ramscope/evidence/data/code_*.json.gz).

    python scripts/build_code_tables.py --pygithub WHEEL --slack-sdk WHEEL [--gapic WHEEL]... [--github-spec FILE]

* ``code_google.json.gz``: per Discovery API and version the base URL (``rootUrl`` + ``servicePath``), and
  per resource/method chain (``users.messages.list``) the APIs whose Discovery document has that method,
  from the Discovery documents bundled with google-api-python-client (installed in the venv).
  GAPIC clients (``--gapic``: google-apps-chat, google-apps-meet wheels): each client method's Discovery method id,
  by its REST rule's HTTP method and path.
* ``code_github.json.gz``: GitHub REST operationId -> (method, path) from ``@octokit/openapi``'s
  ``api.github.com.json`` (``.corpora``, ``npm install @octokit/openapi``), and PyGithub's classes: each
  method's documented ``:calls:`` endpoints (read as text from its wheel's docstrings, matched to
  operationIds) and its return class (from the annotation), so ``g.get_repo(...).create_issue(...)`` is
  ``issues/create``.
* ``code_slack.json.gz``: slack_sdk ``WebClient`` method name -> Web API method (its ``self.api_call("...")``),
  notion-client's endpoint chains (``blocks.children.list``) -> method and path (``--notion-client``), and
  stripe-python's service routes by ``StripeClient`` chain and classic resource method (``--stripe``), python-asana's
  ``XxxApi`` methods (``--asana``).

The wheels are read as zip files with ``ast``: nothing of them is imported or run. Get them with ``pip download
--no-deps PyGithub slack_sdk google-apps-chat google-apps-meet notion-client "notion-client==2.2.1" stripe asana``.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "src" / "ramscope" / "evidence" / "data"
GITHUB_SPEC = ROOT / ".corpora" / "node_modules" / "@octokit" / "openapi" / "generated" / "api.github.com.json"
_CALLS = re.compile(r":calls:\s*`(GET|POST|PUT|PATCH|DELETE|HEAD)\s+([^\s`<]+)")


def _write(name: str, doc: Any) -> None:
    raw = json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()
    packed = gzip.compress(raw, mtime=0, compresslevel=9)
    (DATA / name).write_bytes(packed)
    print(f"{name}: {len(raw)} bytes, {len(packed)} gzipped", file=sys.stderr)


def google() -> dict[str, Any]:
    import googleapiclient  # the documents only: read as JSON

    docs = Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"
    apis: dict[str, dict[str, str]] = {}
    chains: dict[str, list[str]] = {}
    #: api:version -> chain -> method id, where the id is not ``name.chain`` (Admin SDK's ``directory.users.list``).
    ids: dict[str, dict[str, str]] = {}

    def walk(node: dict[str, Any], prefix: str, key: str) -> None:
        name = key.partition(":")[0]
        for mname, m in (node.get("methods") or {}).items():
            if isinstance(m, dict) and isinstance(m.get("id"), str):
                chains.setdefault(prefix + mname, []).append(key)
                if m["id"] != f"{name}.{prefix}{mname}":
                    ids.setdefault(key, {})[prefix + mname] = m["id"]
        for rname, r in (node.get("resources") or {}).items():
            if isinstance(r, dict):
                walk(r, prefix + rname + ".", key)

    for path in sorted(docs.glob("*.json")):
        doc = json.loads(path.read_text("utf-8"))
        name, version = doc.get("name"), doc.get("version")
        if not isinstance(name, str) or not isinstance(version, str):
            continue
        apis.setdefault(name, {})[version] = str(doc.get("rootUrl", "")) + str(doc.get("servicePath", ""))
        walk(doc, "", f"{name}:{version}")
    return {
        "source": f"google-api-python-client {_version('googleapiclient')}",
        "apis": apis,
        "chains": chains,
        "ids": ids,
    }


def _version(module: str) -> str:
    from importlib.metadata import version

    return version({"googleapiclient": "google-api-python-client"}.get(module, module))


def _norm(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path.rstrip("/") or "/")


def _returns(node: ast.expr | None) -> str:
    """The class a PyGithub method returns (``PaginatedList[Issue]`` -> ``Issue``), or ""."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _returns(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return ""
    if isinstance(node, ast.BinOp):  # X | None
        return _returns(node.left) or _returns(node.right)
    if isinstance(node, ast.Subscript):
        base = _returns(node.value)
        return _returns(node.slice) if base in {"PaginatedList", "list", "Iterator", "Optional"} else base
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return "" if node.id in {"None", "str", "int", "bool", "dict", "Any", "bytes"} else node.id
    return ""


def pygithub(wheel: Path, ops: dict[str, list[str]]) -> tuple[str, dict[str, Any]]:
    by_route = {(m, _norm(p)): op for op, (m, p) in ops.items()}
    classes: dict[str, Any] = {}
    with zipfile.ZipFile(wheel) as z:
        version = wheel.name.split("-")[1]
        for name in z.namelist():
            if not (name.startswith("github/") and name.endswith(".py")):
                continue
            tree = ast.parse(z.read(name))
            for cls in tree.body:
                if not isinstance(cls, ast.ClassDef):
                    continue
                methods: dict[str, Any] = {}
                for fn in cls.body:
                    if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or fn.name.startswith("_"):
                        continue
                    doc = ast.get_docstring(fn) or ""
                    calls = []
                    for m, p in _CALLS.findall(doc):
                        op = by_route.get((m, _norm(p.split("?")[0])))
                        calls.append([m, p.split("?")[0], op or ""])
                    ret = _returns(fn.returns)
                    if calls or ret:
                        methods[fn.name] = {"calls": calls, "returns": ret}
                if methods:
                    classes[cls.name] = methods
    return version, classes


def slack(wheel: Path) -> tuple[str, dict[str, str]]:
    out: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as z:
        version = wheel.name.split("-")[1]
        tree = ast.parse(z.read("slack_sdk/web/client.py"))
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef) and cls.name == "WebClient":
            for fn in cls.body:
                if not isinstance(fn, ast.FunctionDef):
                    continue
                for node in ast.walk(fn):
                    if (
                        isinstance(node, ast.Call)
                        and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "api_call"
                        and node.args
                        and isinstance(node.args[0], ast.Constant)
                        and isinstance(node.args[0].value, str)
                    ):
                        out.setdefault(fn.name, node.args[0].value)
    return version, out


def _route(path: str) -> str:
    """A URI template of google.api.http or a Discovery flatPath, with each variable as ``{}``:
    ``/v1/{parent=spaces/*}/members`` and ``v1/spaces/{spacesId}/members`` are both ``/v1/spaces/{}/members``."""
    path = "/" + path.lstrip("/")
    path = re.sub(r"\{[^}=]+=([^}]*)\}", lambda m: m.group(1), path)
    path = re.sub(r"\{[^}]*\}", "{}", path)
    return re.sub(r"\*\*?", "{}", path)


def _discovery_routes(name: str, version: str) -> dict[tuple[str, str], str]:
    import googleapiclient

    doc = json.loads(
        (Path(googleapiclient.__file__).parent / "discovery_cache" / "documents" / f"{name}.{version}.json").read_text()
    )
    out: dict[tuple[str, str], str] = {}

    def walk(node: dict[str, Any]) -> None:
        for m in (node.get("methods") or {}).values():
            if isinstance(m, dict) and isinstance(m.get("id"), str):
                route = _route(str(m.get("flatPath") or m.get("path", "")))
                out[(str(m.get("httpMethod", "")).upper(), route)] = m["id"]
        for r in (node.get("resources") or {}).values():
            if isinstance(r, dict):
                walk(r)

    walk(doc)
    return out


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def gapic(wheel: Path) -> tuple[str, dict[str, Any]]:
    """A Google Cloud / Workspace GAPIC client's methods -> Discovery method ids: each RPC's ``google.api.http``
    rule (its REST transport's ``_get_http_options``, read as text with ast) matched to the Discovery method
    with that HTTP method and path."""
    out: dict[str, Any] = {}
    with zipfile.ZipFile(wheel) as z:
        version = wheel.name.split("-")[1]
        for name in z.namelist():
            m = re.match(r"(google/(?:apps|cloud)/(\w+?)_(v\d+\w*))/services/(\w+)/transports/rest_base\.py$", name)
            if not m:
                continue
            package, api, api_version, service = m.group(1).replace("/", "."), m.group(2), m.group(3), m.group(4)
            try:
                routes = _discovery_routes(api, api_version)
            except FileNotFoundError:
                continue
            client = "".join(p.title() for p in service.split("_")) + "Client"
            methods: dict[str, str] = {}
            for cls in ast.walk(ast.parse(z.read(name))):
                if not (isinstance(cls, ast.ClassDef) and cls.name.startswith("_Base")):
                    continue
                rule = next(
                    (f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "_get_http_options"), None
                )
                if rule is None:
                    continue
                for node in ast.walk(rule):
                    if isinstance(node, ast.Dict):
                        d = {
                            k.value: v.value
                            for k, v in zip(node.keys, node.values, strict=False)
                            if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
                        }
                        if "method" in d and "uri" in d:
                            mid = routes.get((str(d["method"]).upper(), _route(str(d["uri"]))))
                            if mid:
                                methods.setdefault(_snake(cls.name[len("_Base") :]), mid)
                            break
            if methods:
                out[f"{package}.{client}"] = {"api": api, "version": api_version, "methods": methods}
    return version, out


def _template(node: ast.expr) -> str | None:
    """A path argument, literal or f-string, with its placeholders as ``{name}``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                out.append(str(v.value))
            elif isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name):
                out.append("{" + v.value.id + "}")
            else:
                return None
        return "".join(out)
    return None


def notion(wheel: Path) -> tuple[str, dict[str, list[str]]]:
    """notion-client: each endpoint method's attribute chain (``blocks.children.list``) -> [METHOD, path], from its
    ``self.parent.request(path=..., method=...)`` calls and the endpoints each ``__init__`` attaches."""
    with zipfile.ZipFile(wheel) as z:
        version = wheel.name.split("-")[1]
        trees = [ast.parse(z.read(n)) for n in ("notion_client/api_endpoints.py", "notion_client/client.py")]
    methods: dict[str, dict[str, list[str]]] = {}
    children: dict[str, dict[str, str]] = {}
    for tree in trees:
        for cls in tree.body:
            if not isinstance(cls, ast.ClassDef):
                continue
            for fn in cls.body:
                if not isinstance(fn, ast.FunctionDef):
                    continue
                for node in ast.walk(fn):
                    if fn.name == "__init__" and isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                        target, call = node.targets[0], node.value
                        if (
                            isinstance(target, ast.Attribute)
                            and isinstance(call.func, ast.Name)
                            and call.func.id.endswith("Endpoint")
                        ):
                            children.setdefault(cls.name, {})[target.attr] = call.func.id
                    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                        continue
                    if node.func.attr == "request":
                        kw = {k.arg: k.value for k in node.keywords}
                        path = _template(kw["path"]) if "path" in kw else None
                        method = kw.get("method")
                        if path is not None and isinstance(method, ast.Constant):
                            methods.setdefault(cls.name, {})[fn.name] = [str(method.value), "/v1/" + path.lstrip("/")]
    out: dict[str, list[str]] = {}

    def walk(cls: str, prefix: str, depth: int) -> None:
        for name, route in methods.get(cls, {}).items():
            out[prefix + ("" if name == "__call__" else name)] = route
        for attr, sub in children.get(cls, {}).items():
            if depth < 5:
                walk(sub, f"{prefix}{attr}.", depth + 1)

    walk("BaseClient", "", 0)
    return version, {k.rstrip("."): v for k, v in out.items()}


def stripe(wheel: Path) -> tuple[str, dict[str, Any]]:
    """stripe-python: each service method's ``self._request("verb", "/v1/...")`` -> [METHOD, path], keyed by the
    ``StripeClient`` attribute chain (``customers.create``, ``checkout.sessions.create``) and by the resource class
    the classic API calls it on (``Customer.create``, ``checkout.Session.create``; ``modify`` is the service's
    ``update``)."""
    services: dict[str, dict[str, list[str]]] = {}  # "checkout.SessionService" -> method -> route
    subs: dict[str, dict[str, str]] = {}  # "checkout.CheckoutService" / "V1Services" -> attr -> service key
    with zipfile.ZipFile(wheel) as z:
        version = wheel.name.split("-")[1]
        for name in z.namelist():
            m = re.match(r"stripe/(?:(\w+)/)?_(\w+?)_services?\.py$", name)
            if not m:
                continue
            ns = m.group(1) or ""
            tree = ast.parse(z.read(name))
            for node in tree.body:
                if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "_subservices":
                    owner = next((c.name for c in tree.body if isinstance(c, ast.ClassDef)), "")
                    if isinstance(node.value, ast.Dict):
                        for k, v in zip(node.value.keys, node.value.values, strict=False):
                            if isinstance(k, ast.Constant) and isinstance(v, ast.List) and len(v.elts) == 2:
                                mod, cls = (e.value for e in v.elts if isinstance(e, ast.Constant))
                                sub_ns = str(mod).split(".")[1] if str(mod).count(".") == 2 else ""
                                subs.setdefault(f"{ns}.{owner}", {})[str(k.value)] = f"{sub_ns}.{cls}"
                if not isinstance(node, ast.ClassDef):
                    continue
                for fn in node.body:
                    if not isinstance(fn, ast.FunctionDef) or fn.name.startswith("_"):
                        continue
                    for call in ast.walk(fn):
                        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                            continue
                        if call.func.attr != "_request" or len(call.args) < 2:
                            continue
                        verb, target = call.args[0], call.args[1]
                        if isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute):
                            target = target.func.value  # "/v1/customers/{customer}".format(...)
                        if isinstance(verb, ast.Constant) and isinstance(target, ast.Constant):
                            services.setdefault(f"{ns}.{node.name}", {})[fn.name] = [
                                str(verb.value).upper(),
                                str(target.value),
                            ]
                            break
    chains: dict[str, list[str]] = {}

    def walk(key: str, prefix: str, depth: int) -> None:
        for method, route in services.get(key, {}).items():
            chains[prefix + method] = route
        for attr, sub in subs.get(key, {}).items():
            if depth < 4:
                walk(sub, f"{prefix}{attr}.", depth + 1)

    walk(".V1Services", "", 0)
    resources: dict[str, list[str]] = {}
    for key, methods in services.items():
        ns, _, cls = key.partition(".")
        if not cls.endswith("Service"):
            continue
        res = (f"{ns}." if ns else "") + cls[: -len("Service")]
        for method, route in methods.items():
            resources[f"{res}.{'modify' if method == 'update' else method}"] = route
    return version, {"base": "https://api.stripe.com", "chains": chains, "resources": resources}


def asana(wheel: Path) -> tuple[str, dict[str, dict[str, list[str]]]]:
    """python-asana (v5, generated from Asana's OpenAPI): ``TasksApi.create_task`` -> [METHOD, path], from each
    ``*_with_http_info`` method's ``self.api_client.call_api('/tasks', 'POST', ...)``."""
    out: dict[str, dict[str, list[str]]] = {}
    with zipfile.ZipFile(wheel) as z:
        version = wheel.name.split("-")[1]
        for name in z.namelist():
            if not re.match(r"asana/api/\w+_api\.py$", name):
                continue
            for cls in ast.parse(z.read(name)).body:
                if not isinstance(cls, ast.ClassDef):
                    continue
                for fn in cls.body:
                    if not (isinstance(fn, ast.FunctionDef) and fn.name.endswith("_with_http_info")):
                        continue
                    for call in ast.walk(fn):
                        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                            continue
                        args = call.args
                        if (
                            call.func.attr == "call_api"
                            and len(args) >= 2
                            and all(isinstance(a, ast.Constant) for a in args[:2])
                        ):
                            route = [str(args[1].value).upper(), str(args[0].value)]  # type: ignore[attr-defined]
                            out.setdefault(cls.name, {})[fn.name[: -len("_with_http_info")]] = route
                            break
    return version, out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pygithub", type=Path, required=True, help="PyGithub wheel (pip download --no-deps PyGithub)")
    p.add_argument("--slack-sdk", type=Path, required=True, help="slack_sdk wheel (pip download --no-deps slack_sdk)")
    p.add_argument("--github-spec", type=Path, default=GITHUB_SPEC)
    p.add_argument(
        "--gapic", type=Path, action="append", default=[], help="a GAPIC wheel (google-apps-chat ...), repeatable"
    )
    p.add_argument(
        "--notion-client", type=Path, action="append", default=[], help="notion-client wheels (several versions)"
    )
    p.add_argument("--stripe", type=Path, help="the stripe wheel (pip download --no-deps stripe)")
    p.add_argument("--asana", type=Path, help="the asana wheel (pip download --no-deps asana)")
    args = p.parse_args(argv)
    g = google()
    clients: dict[str, Any] = {}
    versions = []
    for wheel in args.gapic:
        v, found = gapic(wheel)
        clients.update(found)
        versions.append(f"{wheel.name.split('-')[0]} {v}")
    g["gapic"] = clients
    g["source"] += "; " + ", ".join(versions) if versions else ""
    _write("code_google.json.gz", g)
    spec = json.loads(args.github_spec.read_text("utf-8"))
    ops: dict[str, list[str]] = {}
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if isinstance(op, dict) and isinstance(op.get("operationId"), str):
                ops[op["operationId"]] = [method.upper(), path]
    gh_version, classes = pygithub(args.pygithub, ops)
    _write(
        "code_github.json.gz",
        {
            "source": f"@octokit/openapi {spec['info'].get('version', '')}; PyGithub {gh_version}",
            "operations": ops,
            "pygithub": classes,
        },
    )
    sl_version, methods = slack(args.slack_sdk)
    doc: dict[str, Any] = {"source": f"slack_sdk {sl_version}", "methods": methods}
    if args.notion_client:
        # Oldest first: a later version's route wins, an endpoint only older versions have (2.x's
        # databases.query) stays, since agents written against them still call it.
        routes: dict[str, list[str]] = {}
        seen = []
        for wheel in sorted(args.notion_client, key=lambda w: [int(x) for x in w.name.split("-")[1].split(".")]):
            n_version, found = notion(wheel)
            routes.update(found)
            seen.append(n_version)
        doc["notion"] = {"base": "https://api.notion.com", "routes": routes}
        doc["source"] += f"; notion-client {', '.join(seen)}"
    if args.stripe:
        st_version, tables_ = stripe(args.stripe)
        doc["stripe"] = tables_
        doc["source"] += f"; stripe {st_version}"
    if args.asana:
        as_version, classes = asana(args.asana)
        doc["asana"] = {"base": "https://app.asana.com/api/1.0", "classes": classes}
        doc["source"] += f"; asana {as_version}"
    _write("code_slack.json.gz", doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
