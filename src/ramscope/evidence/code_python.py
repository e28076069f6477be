"""Python source read with :mod:`ast` for the calls an agent makes: never imported, compiled to run or executed.

A small abstract interpreter over one module: each expression is given a value from a handful of kinds
(a string or URL template, an imported name, a Google API service and its resource chain, a Graph request
builder, a PyGithub object of a known class, a githubkit namespace, a Slack client, an HTTP client with its
``base_url``, an MCP session with its server URL). Names, ``self.`` attributes, parameters passed by callers,
factory functions' return values and ``with ... as`` targets carry values; a call of a client method is a
call site. Two passes over the module: the first learns bindings (what a factory returns, what callers pass,
what ``__init__`` keeps), the second reports.

What cannot be told statically (a URL built at run time, a method from a variable, a Google chain several
Discovery APIs have) is an :class:`UnresolvedCall`; a ``# ramscope: OPERATION`` comment on (or just above)
the line names the operation for the reader.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .._text import one_line
from ._kiota import GRAPH_METHODS, graph_call
from ._sdk_tables import DISCOVERY_URL, GITHUB_API, Tables, kebab, tables
from .model import EvidenceFormat, ObservedCall, UnresolvedCall, strip_url

__all__ = ["PREFILTER", "parse_marker", "read_python"]

#: A file none of whose bytes name one of these is no client of anything the reader knows (skipped unparsed).
PREFILTER = (
    b"googleapiclient",
    b"apiclient",
    b".execute",
    b"msgraph",
    b"github",
    b"slack",
    b"requests",
    b"httpx",
    b"aiohttp",
    b"urllib",
    b"mcp",
    b"ramscope:",
    b"google.adk",
    b"google.apps",
    b"google.cloud",
    b"langchain",
    b"a2a",
    b"A2a",
    b"notion_client",
    b"stripe",
    b"asana",
)
#: Modules whose names the reader follows; a method of anything else imported is a method of an unknown object.
_KNOWN_ROOTS = frozenset(
    {
        "googleapiclient",
        "apiclient",
        "google",
        "google_auth_oauthlib",
        "oauth2client",
        "azure",
        "msgraph",
        "msgraph_beta",
        "github",
        "githubkit",
        "slack_sdk",
        "slack",
        "slack_bolt",
        "requests",
        "httpx",
        "httpx2",
        "aiohttp",
        "urllib",
        "urllib2",
        "mcp",
        "fastmcp",
        "a2a",
        "notion_client",
        "stripe",
        "asana",
    }
)
_GRAPH_USER = frozenset(
    {
        "InteractiveBrowserCredential",
        "DeviceCodeCredential",
        "AuthorizationCodeCredential",
        "OnBehalfOfCredential",
        "UsernamePasswordCredential",
    }
)
_HTTP_VERBS = {"get", "post", "put", "patch", "delete", "head", "options"}
_MAX_DEPTH = 200
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


# ------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class _Str:
    text: str


@dataclass(frozen=True, slots=True)
class _List:
    items: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class _Mod:
    """An imported name, by its dotted path (``googleapiclient.discovery.build``)."""

    path: str


@dataclass(frozen=True, slots=True)
class _GSvc:
    api: str | None
    version: str | None


@dataclass(frozen=True, slots=True)
class _GRes:
    svc: _GSvc | None
    chain: tuple[str, ...]
    line: int


@dataclass(frozen=True, slots=True)
class _Gapic:
    """A Google Cloud / Workspace GAPIC client (``chat_v1.ChatServiceClient()``), by its table key."""

    key: str


@dataclass(frozen=True, slots=True)
class _GBatch:
    pass


@dataclass(frozen=True, slots=True)
class _Graph:
    version: str
    chain: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True, slots=True)
class _GH:
    """A PyGithub object of class ``cls`` (``Github``, ``Repository`` ...)."""

    cls: str


@dataclass(frozen=True, slots=True)
class _GHKit:
    chain: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Notion:
    """notion-client's ``Client`` / ``AsyncClient`` and the endpoint chain below it (``blocks.children``)."""

    chain: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Stripe:
    """stripe-python's ``StripeClient`` and the service chain below it (``checkout.sessions``)."""

    chain: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Asana:
    """A python-asana API class instance (``asana.TasksApi(api_client)``)."""

    cls: str


@dataclass(frozen=True, slots=True)
class _Slack:
    pass


@dataclass(frozen=True, slots=True)
class _Http:
    lib: str
    base: str | None = None


@dataclass(frozen=True, slots=True)
class _UrlReq:
    """``urllib.request.Request(url, method=...)``."""

    method: str | None
    url: Any


@dataclass(frozen=True, slots=True)
class _Mcp:
    """MCP client streams or session; ``url`` "" for a stdio server, ``None`` when it cannot be told."""

    url: str | None


@dataclass(frozen=True, slots=True)
class _File:
    """``open("spec.yaml")`` of a literal path (relative to the source file), and its ``.read()`` (``text``)."""

    path: str
    read: bool = False


@dataclass(frozen=True, slots=True)
class _Fn:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    cls: str | None


_Value = Any  # one of the classes above, a tuple of values, or None (unknown)

#: ADK's Google API toolsets (google.adk.tools.google_api_tool) and the Discovery API each wraps.
_ADK_GOOGLE = {
    "CalendarToolset": ("calendar", "v3"),
    "GmailToolset": ("gmail", "v1"),
    "YoutubeToolset": ("youtube", "v3"),
    "SlidesToolset": ("slides", "v1"),
    "SheetsToolset": ("sheets", "v4"),
    "DocsToolset": ("docs", "v1"),
}
#: Where an A2A agent serves its card (A2A 0.3 and 1.0: ``/.well-known/agent-card.json``).
_A2A_CARD_PATH = "/.well-known/agent-card.json"
#: An OpenAPI spec a toolset reads from the agent's tree is read up to this size.
_MAX_SPEC = 8 * 1024 * 1024
OpenFile = Callable[[str], "bytes | None"]


# ------------------------------------------------------------------------- markers


def parse_marker(text: str, label: str, line: int, t: Tables | None = None) -> ObservedCall | None:
    """The call a ``# ramscope:`` marker names, or ``None`` when it names nothing ramscope knows.

    ``gmail.users.messages.send`` (a Discovery method id), ``chat.postMessage`` (a Slack method),
    ``issues/create`` (a GitHub operationId), ``POST https://host/path/{id}``, ``tool NAME @ URL``."""
    t = t or tables()
    words = text.split()
    if not words:
        return None
    site = {"time": "", "fmt": EvidenceFormat.CODE, "source": label, "entry": line, "via": "marker"}
    if words[0] == "tool" and len(words) >= 4 and words[2] == "@":
        url = strip_url(words[3])
        return ObservedCall(method="tools/call", url=url, tool=words[1], **site) if url else None  # type: ignore[arg-type]
    if len(words) >= 2 and words[0].lower() in _HTTP_VERBS:
        url = strip_url(words[1])
        return ObservedCall(method=words[0].upper(), url=url, **site) if url else None  # type: ignore[arg-type]
    op = words[0]
    if op in t.github_ops:
        m, p = t.github_ops[op]
        return ObservedCall(method=m, url=GITHUB_API + p, operation=op, **site)  # type: ignore[arg-type]
    found = t.google_by_id(op)
    if found is not None:
        api, version, _chain = found
        base = t.google_apis.get(api, {}).get(version, "")
        spec = DISCOVERY_URL.format(name=api, version=version)
        return ObservedCall(method="", url=base, operation=op, spec=spec, **site)  # type: ignore[arg-type]
    if op in t.slack_methods:
        return ObservedCall(method="POST", url=f"https://slack.com/api/{op}", operation=op, **site)  # type: ignore[arg-type]
    return None


def _markers(data: bytes) -> dict[int, str]:
    """Line -> the text after ``# ramscope:`` of a comment on it (a comment alone on its line names the next)."""
    out: dict[int, str] = {}
    try:
        for tok in tokenize.tokenize(io.BytesIO(data).readline):
            if tok.type != tokenize.COMMENT:
                continue
            body = tok.string.lstrip("#").strip()
            if not body.startswith("ramscope:"):
                continue
            line = tok.start[0]
            alone = not tok.line[: tok.start[1]].strip()
            out[line + 1 if alone else line] = body[len("ramscope:") :].strip()
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        pass
    return out


# ------------------------------------------------------------------------- the reader


@dataclass
class _Scope:
    names: dict[str, _Value] = field(default_factory=dict)
    cls: str | None = None


class _Reader:
    def __init__(
        self, tree: ast.Module, label: str, t: Tables, hints: set[str] | None, open_file: OpenFile | None = None
    ) -> None:
        self.tree, self.label, self.t = tree, label, t
        self.open_file = open_file
        self.hints = hints if hints is not None else set()
        self.imports: dict[str, str] = {}
        self.module: dict[str, _Value] = {}
        self.funcs: dict[str, _Fn] = {}
        #: (class, attr) -> value kept in ``self.attr``.
        self.attrs: dict[tuple[str | None, str], _Value] = {}
        #: function key -> param -> value a caller passed.
        self.params: dict[str, dict[str, _Value]] = {}
        self.returns: dict[str, _Value] = {}
        self.report = False
        self.out: dict[tuple[int, int, str], ObservedCall | UnresolvedCall] = {}
        self.imported_roots: set[str] = set()

    # -- driving

    def run(self) -> list[ObservedCall | UnresolvedCall]:
        self._collect(self.tree.body, None)
        for self.report in (False, True):
            top = _Scope()
            self._block(self.tree.body, top, 0)
            self.module = top.names
            for key, fn in self.funcs.items():
                self._function(key, fn)
        return list(self.out.values())

    def _collect(self, body: list[ast.stmt], cls: str | None) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.imports[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                    self.imported_roots.add(a.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                self.imported_roots.add(node.module.split(".")[0])
                for a in node.names:
                    self.imports[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.ImportFrom) and node.level:
                for a in node.names:
                    self.imports.setdefault(a.asname or a.name, f".{node.module or ''}.{a.name}")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                key = f"{cls}.{node.name}" if cls else node.name
                self.funcs[key] = _Fn(node, cls)
                self._collect(node.body, cls)  # imports inside functions count too
            elif isinstance(node, ast.ClassDef):
                self._collect(node.body, node.name)
            elif isinstance(node, ast.If | ast.Try | ast.With | ast.AsyncWith):
                for sub in ("body", "orelse", "finalbody"):
                    self._collect(getattr(node, sub, []) or [], cls)
                for h in getattr(node, "handlers", []) or []:
                    self._collect(h.body, cls)

    def _function(self, key: str, fn: _Fn) -> None:
        scope = _Scope(cls=fn.cls)
        args = fn.node.args
        passed = self.params.get(key, {})
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            v = passed.get(a.arg)
            if v is None and a.annotation is not None:
                v = self._instance(self._eval(a.annotation, scope, 0, quiet=True))
            if v is None and a.arg in {"say"} and "slack_bolt" in self.imported_roots:
                v = _Mod("slack_bolt.say")
            scope.names[a.arg] = v
        # Defaults (def f(service=build(...))) evaluated too.
        for d in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self._eval(d, scope, 0)
        for dec in fn.node.decorator_list:
            self._eval(dec, scope, 0)
        ret = self._block(fn.node.body, scope, 0)
        if ret is not None and self.returns.get(key) is None:
            self.returns[key] = ret

    def _instance(self, v: _Value) -> _Value:
        """What a parameter annotated with a known class holds (``client: GraphServiceClient``)."""
        if isinstance(v, _Mod):
            made = self._construct(v.path, None, [], {})
            return None if isinstance(made, _Mod) else made
        return None

    # -- statements

    def _block(self, body: list[ast.stmt], scope: _Scope, depth: int) -> _Value:
        ret: _Value = None
        for node in body:
            r = self._stmt(node, scope, depth)
            if r is not None and ret is None:
                ret = r
        return ret

    def _stmt(self, node: ast.stmt, scope: _Scope, depth: int) -> _Value:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import | ast.ImportFrom):
            if isinstance(node, ast.ClassDef):
                for b in node.bases:
                    self._eval(b, scope, depth)
            return None  # functions are read on their own (self._function)
        if isinstance(node, ast.Assign):
            v = self._eval(node.value, scope, depth)
            for target in node.targets:
                self._bind(target, v, scope, depth)
            return None
        if isinstance(node, ast.AnnAssign):
            v = self._eval(node.value, scope, depth) if node.value is not None else None
            if v is None and node.value is None:
                v = self._instance(self._eval(node.annotation, scope, depth, quiet=True))
            self._bind(node.target, v, scope, depth)
            return None
        if isinstance(node, ast.Return):
            return self._eval(node.value, scope, depth) if node.value is not None else None
        if isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                v = self._eval(item.context_expr, scope, depth)
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, v, scope, depth)
            return self._block(node.body, scope, depth)
        if isinstance(node, ast.For | ast.AsyncFor):
            v = self._eval(node.iter, scope, depth)
            self._bind(node.target, v if isinstance(v, _GH) else None, scope, depth)
            r = self._block(node.body, scope, depth)
            return self._block(node.orelse, scope, depth) or r
        if isinstance(node, ast.AugAssign):
            self._eval(node.value, scope, depth)
            return None
        ret: _Value = None
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self._eval(child, scope, depth)
            elif isinstance(child, ast.stmt):
                r = self._stmt(child, scope, depth)
                ret = ret if ret is not None else r
            elif isinstance(child, ast.excepthandler | ast.match_case):
                for sub in ast.iter_child_nodes(child):
                    if isinstance(sub, ast.stmt):
                        r = self._stmt(sub, scope, depth)
                        ret = ret if ret is not None else r
                    elif isinstance(sub, ast.expr):
                        self._eval(sub, scope, depth)
        return ret

    def _bind(self, target: ast.expr, v: _Value, scope: _Scope, depth: int) -> None:
        if isinstance(target, ast.Name):
            scope.names[target.id] = v
        elif isinstance(target, ast.Attribute):
            if isinstance(target.value, ast.Name) and target.value.id in {"self", "cls"}:
                if v is not None and self.attrs.get((scope.cls, target.attr)) is None:
                    self.attrs[(scope.cls, target.attr)] = v
            else:
                self._eval(target.value, scope, depth)
        elif isinstance(target, ast.Tuple | ast.List):
            for i, elt in enumerate(target.elts):
                if isinstance(v, tuple) and i < len(v):
                    self._bind(elt, v[i], scope, depth)
                else:
                    # ``async with streamablehttp_client(URL) as (read, write, _)``: each stream knows the server.
                    self._bind(elt, v if isinstance(v, _Mcp) else None, scope, depth)
        elif isinstance(target, ast.Subscript):
            self._eval(target.value, scope, depth)
            self._eval(target.slice, scope, depth)

    # -- expressions

    def _eval(self, node: ast.expr | None, scope: _Scope, depth: int, *, quiet: bool = False) -> _Value:
        if node is None or depth > _MAX_DEPTH:
            return None
        d = depth + 1
        if isinstance(node, ast.Constant):
            return _Str(node.value) if isinstance(node.value, str) else None
        if isinstance(node, ast.Name):
            return self._name(node.id, scope)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}:
                v = self.attrs.get((scope.cls, node.attr))
                if v is None and f"{scope.cls}.{node.attr}" in self.funcs:
                    return self.funcs[f"{scope.cls}.{node.attr}"]
                return v
            base = self._eval(node.value, scope, d)
            if node.attr == "execute":
                # ``request.execute`` handed on uncalled (``asyncio.to_thread(req.execute)``,
                # ``loop.run_in_executor(None, req.execute)``): the request is sent all the same.
                self._execute_reference(base, node)
            return self._attr(base, node.attr)
        if isinstance(node, ast.Call):
            return self._call(node, scope, d)
        if isinstance(node, ast.Await):
            return self._eval(node.value, scope, d)
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node, scope, d)
        if isinstance(node, ast.BinOp):
            left, right = self._eval(node.left, scope, d), self._eval(node.right, scope, d)
            if isinstance(node.op, ast.Add) and isinstance(left, _Str) and isinstance(right, _Str):
                return _Str(left.text + right.text)
            if isinstance(node.op, ast.Add) and isinstance(left, _Str):
                return _Str(left.text + "{" + _name_of(node.right) + "}")
            return None
        if isinstance(node, ast.Tuple):
            return tuple(self._eval(e, scope, d) for e in node.elts)
        if isinstance(node, ast.List):
            return _List(tuple(self._eval(e, scope, d) for e in node.elts))
        if isinstance(node, ast.NamedExpr):
            v = self._eval(node.value, scope, d)
            self._bind(node.target, v, scope, d)
            return v
        if isinstance(node, ast.IfExp):
            self._eval(node.test, scope, d)
            a, b = self._eval(node.body, scope, d), self._eval(node.orelse, scope, d)
            return a if a is not None else b
        if isinstance(node, ast.Lambda):
            return None
        # Anything else: its parts are read for calls; it has no value the reader follows.
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self._eval(child, scope, d)
            elif isinstance(child, ast.comprehension):
                self._eval(child.iter, scope, d)
                for cond in child.ifs:
                    self._eval(cond, scope, d)
            elif isinstance(child, ast.keyword):
                self._eval(child.value, scope, d)
        return None

    def _name(self, name: str, scope: _Scope) -> _Value:
        if name in scope.names:
            return scope.names[name]
        if name in self.module:
            return self.module[name]
        if name in self.imports:
            return _Mod(self.imports[name])
        if name in self.funcs:
            return self.funcs[name]
        return None

    def _fstring(self, node: ast.JoinedStr, scope: _Scope, depth: int) -> _Str:
        parts: list[str] = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                parts.append(v.value)
            elif isinstance(v, ast.FormattedValue):
                val = self._eval(v.value, scope, depth)
                parts.append(val.text if isinstance(val, _Str) else "{" + _name_of(v.value) + "}")
        return _Str("".join(parts))

    def _attr(self, base: _Value, name: str) -> _Value:
        if isinstance(base, _Mod):
            return _Mod(f"{base.path}.{name}")
        if isinstance(base, _Graph):
            return _Graph(base.version, (*base.chain, (name, False)))
        if isinstance(base, _GHKit):
            return _GHKit((*base.chain, name))
        if isinstance(base, _Notion):
            return _Notion((*base.chain, name))
        if isinstance(base, _Stripe):
            return _Stripe((*base.chain, name))
        if isinstance(base, _GSvc | _GRes):
            return base  # a method is looked up when it is called
        if isinstance(base, _Mod | _Slack | _Http | _Mcp | _GH | _GBatch):
            return base
        return None

    def _args(self, node: ast.Call, scope: _Scope, depth: int) -> tuple[list[_Value], dict[str, _Value]]:
        pos = [self._eval(a.value if isinstance(a, ast.Starred) else a, scope, depth) for a in node.args]
        kw = {k.arg or "**": self._eval(k.value, scope, depth) for k in node.keywords}
        return pos, kw

    def _call(self, node: ast.Call, scope: _Scope, depth: int) -> _Value:
        func = node.func
        if isinstance(func, ast.Attribute):
            if isinstance(func.value, ast.Name) and func.value.id in {"self", "cls"}:
                recv: _Value = self.attrs.get((scope.cls, func.attr))
                method = f"{scope.cls}.{func.attr}"
                if recv is None and method in self.funcs:
                    pos, kw = self._args(node, scope, depth)
                    return self._call_fn(method, self.funcs[method], pos, kw, skip_self=True)
                pos, kw = self._args(node, scope, depth)
                return self._construct_call(recv, pos, kw, node)
            recv = self._eval(func.value, scope, depth)
            pos, kw = self._args(node, scope, depth)
            return self._method(recv, func.attr, pos, kw, node, func.value)
        callee = self._eval(func, scope, depth)
        pos, kw = self._args(node, scope, depth)
        if isinstance(func, ast.Name) and func.id == "open" and pos and isinstance(pos[0], _Str):
            return _File(self._relative(pos[0].text))
        if isinstance(callee, _Fn):
            key = f"{callee.cls}.{callee.node.name}" if callee.cls else callee.node.name
            return self._call_fn(key, callee, pos, kw, skip_self=False)
        return self._construct_call(callee, pos, kw, node)

    def _call_fn(self, key: str, fn: _Fn, pos: list[_Value], kw: dict[str, _Value], *, skip_self: bool) -> _Value:
        args = fn.node.args
        names = [a.arg for a in [*args.posonlyargs, *args.args]]
        if skip_self or (fn.cls and names and names[0] in {"self", "cls"}):
            names = names[1:]
        bound = self.params.setdefault(key, {})
        for name, v in [*zip(names, pos, strict=False), *kw.items()]:
            if v is not None and bound.get(name) is None:
                bound[name] = v
        return self.returns.get(key)

    def _construct_call(self, callee: _Value, pos: list[_Value], kw: dict[str, _Value], node: ast.Call) -> _Value:
        if isinstance(callee, _Mod):
            return self._construct(callee.path, node, pos, kw)
        if isinstance(callee, _Graph):
            return callee  # a builder called without a member: nothing to add
        return None

    # -- constructors and module functions

    def _construct(self, path: str, node: ast.Call | None, pos: list[_Value], kw: dict[str, _Value]) -> _Value:
        last = path.rpartition(".")[2]
        root = path.partition(".")[0]
        if root in {"googleapiclient", "apiclient"} and last in {"build", "build_from_document"}:
            api = _text(kw.get("serviceName", pos[0] if pos else None))
            version = _text(kw.get("version", pos[1] if len(pos) > 1 else None))
            return _GSvc(api, version)
        if root == "google" and last.endswith("Client") and (key := self.t.gapic_client(path)) is not None:
            return _Gapic(key)
        if root in {"googleapiclient", "apiclient"} and last == "BatchHttpRequest":
            return _GBatch()
        if root in {"googleapiclient", "apiclient"} and last in {"MediaIoBaseDownload", "MediaDownloadProgress"}:
            request = kw.get("request", pos[1] if len(pos) > 1 else None)
            if isinstance(request, _GRes) and node is not None:
                self._emit_google(request, node)  # the download executes the request chunk by chunk
            return None
        if root in {"msgraph", "msgraph_beta"} and last == "GraphServiceClient":
            return _Graph("beta" if root == "msgraph_beta" else "v1.0")
        if root == "github" and last in {"Github", "GithubIntegration"}:
            return _GH(last)
        if root == "github" and last in self.t.pygithub and node is None:
            return _GH(last)  # an annotation: ``repo: Repository``
        if root == "githubkit" and last == "GitHub":
            return _GHKit()
        if root == "notion_client" and last in {"Client", "AsyncClient"}:
            return _Notion()
        if root == "asana" and last in self.t.asana:
            return _Asana(last)
        if root == "stripe":
            if last == "StripeClient":
                return _Stripe()
            route = self.t.stripe_resources.get(path.partition(".")[2].removesuffix("_async"))
            if route is not None and node is not None:
                self._emit_route("https://api.stripe.com", route, node, "stripe")
                return None
        if root in {"slack_sdk", "slack"} and last in {"WebClient", "AsyncWebClient"}:
            return _Slack()
        if root == "slack_bolt" and last in {"App", "AsyncApp"}:
            return _Mod("slack_bolt.App")
        if root in {"requests", "httpx", "httpx2", "aiohttp"}:
            if last in {"Session", "session", "Client", "AsyncClient", "ClientSession"}:
                return _Http(root, _text(kw.get("base_url", pos[0] if pos and root == "aiohttp" else None)))
            if node is not None and (last in _HTTP_VERBS or last == "request"):
                self._http(root, last, pos, kw, None, node)
            return None
        if path.startswith("urllib.request") or path == "urllib2.urlopen":
            if last == "Request":
                return _UrlReq(_text(kw.get("method")), kw.get("url", pos[0] if pos else None))
            if last == "urlopen" and node is not None:
                target = kw.get("url", pos[0] if pos else None)
                if isinstance(target, _UrlReq):
                    self._http("urllib", target.method or "get", [target.url], {}, None, node)
                else:
                    self._http("urllib", "post" if (len(pos) > 1 or "data" in kw) else "get", [target], {}, None, node)
            return None
        if root in {"mcp", "fastmcp"}:
            if last in {"streamablehttp_client", "streamable_http_client", "sse_client", "websocket_client"}:
                url = kw.get("url", pos[0] if pos else None)
                return _Mcp(_text(url) if isinstance(url, _Str) else None)
            if last == "stdio_client":
                return _Mcp("")
            if last == "ClientSession":
                first = pos[0] if pos else kw.get("read_stream")
                return first if isinstance(first, _Mcp) else _Mcp(None)
            if last == "Client":  # fastmcp's Client(url), mcp 2.x's mcp.client.Client(target)
                src = pos[0] if pos else kw.get("transport")
                return _Mcp(src.text if isinstance(src, _Str) and src.text.startswith("http") else None)
        if node is not None and (root == "a2a" or last == "RemoteA2aAgent"):
            made = self._a2a(last, pos, kw, node)
            if made is not None:
                return made
        if root == "google" and ".adk." in path + "." and node is not None:
            made = self._adk(last, pos, kw, node)
            if made is not None:
                return made
        self._identity_hint(path)
        if node is not None and path == "slack_bolt.say":
            self._emit_slack("chat.postMessage", node, "slack_bolt")
        return _Mod(path)

    def _adk(self, last: str, pos: list[_Value], kw: dict[str, _Value], node: ast.Call) -> _Value:
        """Google ADK: connection parameters name an MCP server; a toolset's ``tool_filter`` names the tools the
        agent may call on it (without one, every tool the server lists: unresolved)."""
        if last in {"StreamableHTTPConnectionParams", "SseConnectionParams", "SseServerParams"}:
            url = kw.get("url", pos[0] if pos else None)
            return _Mcp(url.text if isinstance(url, _Str) else None)
        if last in {"StdioConnectionParams", "StdioServerParameters"}:
            return _Mcp("")
        if last in _ADK_GOOGLE:
            self._adk_google(last, kw, node)
            return None
        if last == "OpenAPIToolset":
            self._adk_openapi(kw, node)
            return None
        if last in {"McpToolset", "MCPToolset"}:
            server = kw.get("connection_params", pos[0] if pos else None)
            session = server if isinstance(server, _Mcp) else _Mcp(None)
            names = kw.get("tool_filter")
            if isinstance(names, _List) and names.items and all(isinstance(n, _Str) for n in names.items):
                for n in names.items:
                    self._emit_tool(session, [n], {}, node)
            else:
                self._unresolved(
                    node, "adk", "an MCP toolset without a literal tool_filter exposes every tool its server lists"
                )
            return None
        return None

    def _a2a(self, last: str, pos: list[_Value], kw: dict[str, _Value], node: ast.Call) -> _Value:
        """Another agent called over A2A by its card: a2a-sdk's ``A2ACardResolver(base_url=...)`` (the card at the
        well-known path under it), ADK's ``RemoteA2aAgent(agent_card=URL)``."""
        if last == "A2ACardResolver":
            base = _text(kw.get("base_url", pos[1] if len(pos) > 1 else None))
            path = _text(kw.get("agent_card_path")) or _A2A_CARD_PATH
            card = base.rstrip("/") + "/" + path.lstrip("/") if base else None
        elif last == "RemoteA2aAgent":
            card = _text(kw.get("agent_card"))
        else:
            return None
        url = strip_url(card) if card else None
        if url is None or "{" in url:
            self._unresolved(node, "a2a", "the remote agent's card URL cannot be told statically")
            return None
        self._put(node, f"a2a {url}", self._call_at(node.lineno, method="POST", url=url, via="a2a"))
        return None

    def _adk_google(self, cls: str, kw: dict[str, _Value], node: ast.Call) -> None:
        """``CalendarToolset(tool_filter=["calendar_events_list"])``: each tool is the Discovery method whose id,
        snake-cased with dots as underscores, is its name (ADK's naming)."""
        api, version = _ADK_GOOGLE[cls]
        names = kw.get("tool_filter")
        if not (isinstance(names, _List) and names.items and all(isinstance(n, _Str) for n in names.items)):
            self._unresolved(
                node, "adk", f"{cls} without a literal tool_filter exposes every method of {api} {version}"
            )
            return
        by_tool: dict[str, str] = {}
        for chain, keys in self.t.google_chains.items():
            if f"{api}:{version}" in keys:
                mid = self.t.google_method_id(api, version, chain)
                by_tool[_snake(mid.replace(".", "_"))] = mid
        base = self.t.google_apis.get(api, {}).get(version, "")
        for n in names.items:
            found = by_tool.get(n.text)
            if found is None:
                self._unresolved(node, "adk", f"{cls} has no tool {n.text!r}", n.text)
                continue
            mid = found
            self._put(
                node,
                mid,
                self._call_at(
                    node.lineno,
                    method="",
                    url=strip_url(base) or base,
                    operation=mid,
                    via="adk",
                    spec=DISCOVERY_URL.format(name=api, version=version),
                ),
            )

    def _adk_openapi(self, kw: dict[str, _Value], node: ast.Call) -> None:
        """``OpenAPIToolset(spec_str=..., spec_str_type="json"|"yaml")``: each operation of the spec (or of its
        ``tool_filter``) is a call to the spec's server."""
        if not self.report:
            return  # the spec is read once, in the pass that reports
        spec = kw.get("spec_str")
        text: bytes | None = None
        if isinstance(spec, _Str):
            text = spec.text.encode()
        elif isinstance(spec, _File) and spec.read and self.open_file is not None:
            text = self.open_file(spec.path)
        if text is None:
            self._unresolved(node, "adk", "the OpenAPI toolset's spec is not a literal or a file of the tree")
            return
        from .._parse import Limits, parse_bytes  # noqa: PLC0415 - only for a toolset's spec
        from ..errors import InputError  # noqa: PLC0415

        try:
            doc = parse_bytes(
                text[:_MAX_SPEC],
                source=self.label,
                limits=Limits(max_bytes=_MAX_SPEC, strict_keys=False, positions=False),
            ).value
        except InputError:
            self._unresolved(node, "adk", "the OpenAPI toolset's spec does not parse")
            return
        servers = doc.get("servers") if isinstance(doc, dict) else None
        server = (
            servers[0].get("url") if isinstance(servers, list) and servers and isinstance(servers[0], dict) else None
        )
        if not isinstance(server, str) or strip_url(server) is None:
            self._unresolved(node, "adk", "the OpenAPI toolset's spec names no absolute server URL")
            return
        names = kw.get("tool_filter")
        wanted = {n.text for n in names.items if isinstance(n, _Str)} if isinstance(names, _List) else None
        paths = doc.get("paths") if isinstance(doc, dict) else None
        for path, item in (paths or {}).items() if isinstance(paths, dict) else ():
            if not isinstance(item, dict):
                continue
            for method, op in item.items():
                if method.lower() not in _HTTP_VERBS or not isinstance(op, dict):
                    continue
                op_id = op.get("operationId") if isinstance(op.get("operationId"), str) else ""
                if wanted is not None and _snake(str(op_id)) not in wanted and op_id not in wanted:
                    continue
                url = strip_url(server.rstrip("/") + "/" + str(path).lstrip("/"))
                if url:
                    self._put(
                        node,
                        f"{method.upper()} {url}",
                        self._call_at(node.lineno, method=method.upper(), url=url, operation="", via="adk-openapi"),
                    )

    def _identity_hint(self, path: str) -> None:
        parts = path.split(".")
        last = next((p for p in parts if p[:1].isupper()), parts[-1])
        if "service_account" in path or last in {"ServiceAccountCredentials"}:
            self.hints.add("google:app")
        elif last in {"InstalledAppFlow", "Flow", "from_authorized_user_file", "from_authorized_user_info"}:
            if "oauth" in path or "google" in path:
                self.hints.add("google:user")
        elif path.startswith("google.oauth2.credentials"):
            self.hints.add("google:user")
        elif last in _GRAPH_USER:
            self.hints.add("graph:user")
        elif last in {"ClientSecretCredential", "CertificateCredential", "ManagedIdentityCredential"}:
            self.hints.add("graph:app")
        elif path.startswith("github") and last in {"AppAuth", "AppInstallationAuth", "GithubIntegration"}:
            self.hints.add("github:app")

    # -- methods

    def _method(
        self, recv: _Value, name: str, pos: list[_Value], kw: dict[str, _Value], node: ast.Call, base: ast.expr
    ) -> _Value:
        if isinstance(recv, _Mod):
            if recv.path.partition(".")[0] not in _KNOWN_ROOTS:
                # Another module's object (``from .auth import service``): as unknown as a parameter.
                return self._unknown_receiver(name, pos, kw, node, base)
            return self._construct(f"{recv.path}.{name}", node, pos, kw)
        if isinstance(recv, _GSvc | _GRes):
            return self._google(recv, name, pos, node)
        if isinstance(recv, _Gapic):
            self._emit_gapic(recv.key, name, node)
            return None
        if isinstance(recv, _GBatch):
            if name == "add" and pos and isinstance(pos[0], _GRes):
                self._emit_google(pos[0], node)
            return recv
        if isinstance(recv, _Graph):
            if name in GRAPH_METHODS:
                self._emit_graph(_Graph(recv.version, (*recv.chain, (name, True))), node)
                return None
            return _Graph(recv.version, (*recv.chain, (name, True)))
        if isinstance(recv, _GH):
            return self._pygithub(recv.cls, name, node)
        if isinstance(recv, _GHKit):
            return self._githubkit(recv.chain, name, pos, kw, node)
        if isinstance(recv, _Slack):
            self._slack_method(name, pos, kw, node)
            return None
        if isinstance(recv, _Asana):
            route = self.t.asana.get(recv.cls, {}).get(name)
            if route is not None:
                self._emit_route("https://app.asana.com/api/1.0", route, node, "asana")
            return None
        if isinstance(recv, _Stripe):
            chain = [*recv.chain, name.removesuffix("_async")]
            route = self.t.stripe_chains.get(".".join(chain[1:] if chain[0] == "v1" else chain))
            if route is not None:
                self._emit_route("https://api.stripe.com", route, node, "stripe")
            return None
        if isinstance(recv, _Notion):
            route = self.t.notion.get(".".join((*recv.chain, name)))
            if route is not None:
                url = strip_url("https://api.notion.com" + route[1])
                if url:
                    self._put(
                        node,
                        f"{route[0]} {url}",
                        self._call_at(node.lineno, method=route[0], url=url, via="notion-client"),
                    )
            return None
        if isinstance(recv, _Http):
            if name in _HTTP_VERBS or name in {"request", "stream"}:
                self._http(recv.lib, name, pos, kw, recv.base, node)
            return None
        if isinstance(recv, _Mcp):
            if name == "call_tool":
                self._emit_tool(recv, pos, kw, node)
            return recv
        if isinstance(recv, _Fn):
            return None
        if isinstance(recv, _File):
            return _File(recv.path, read=True) if name in {"read", "read_text"} else None
        return self._unknown_receiver(name, pos, kw, node, base)

    def _relative(self, path: str) -> str:
        """A path the code opens, as a label under the root (relative to the source file's directory)."""
        import posixpath  # noqa: PLC0415

        return posixpath.normpath(posixpath.join(posixpath.dirname(self.label), path))

    def _unknown_receiver(
        self, name: str, pos: list[_Value], kw: dict[str, _Value], node: ast.Call, base: ast.expr
    ) -> _Value:
        """A method of something the reader cannot follow (a parameter, another module's object)."""
        if name == "execute" and isinstance(base, ast.Call):
            chain = _chain(base)
            if chain is not None and len(chain) >= 2:
                self._emit_google(_GRes(None, chain, base.lineno), node)
            return None
        gapic = [k for p, k in self.t.gapic_packages() if name in self.t.gapic[k]["methods"] and self._imports(p)]
        if len(gapic) == 1:
            self._emit_gapic(gapic[0], name, node)
            return None
        if name in self.t.slack and ("slack_sdk" in self.imported_roots or "slack_bolt" in self.imported_roots):
            self._emit_slack(self.t.slack[name], node, "slack_sdk")
            return None
        if name == "call_tool" and "mcp" in self.imported_roots | {"fastmcp"} & self.imported_roots:
            self._emit_tool(_Mcp(None), pos, kw, node)
            return None
        if "github" in self.imported_roots:
            calls = {tuple(map(tuple, m["calls"])) for m in (c.get(name) for c in self.t.pygithub.values()) if m}
            calls.discard(())
            if len(calls) == 1:
                cls = next(c for c, ms in self.t.pygithub.items() if ms.get(name) and ms[name]["calls"])
                return self._pygithub(cls, name, node)
        return None

    def _google(self, recv: _GSvc | _GRes, name: str, pos: list[_Value], node: ast.Call) -> _Value:
        svc = recv if isinstance(recv, _GSvc) else recv.svc
        chain = () if isinstance(recv, _GSvc) else recv.chain
        if name == "execute" and isinstance(recv, _GRes):
            self._emit_google(recv, node)
            return None
        if name == "new_batch_http_request":
            return _GBatch()
        if name.endswith("_next") and chain:
            return _GRes(svc, (*chain, name[: -len("_next")]), node.lineno)
        if name.endswith("_media") and chain:
            # googleapiclient's media download of a method (``files().get_media``): that method, sent with alt=media.
            return _GRes(svc, (*chain, name[: -len("_media")]), node.lineno)
        if name.startswith("_"):
            return None
        return _GRes(svc, (*chain, name), node.lineno)

    # -- emitting

    def _key(self, node: ast.AST, what: str) -> tuple[int, int, str]:
        return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0), what)

    def _put(self, node: ast.AST, what: str, item: ObservedCall | UnresolvedCall) -> None:
        if self.report:
            self.out.setdefault(self._key(node, what), item)

    def _call_at(self, line: int, **kw: Any) -> ObservedCall:
        return ObservedCall(time="", fmt=EvidenceFormat.CODE, source=self.label, entry=line, **kw)

    def _unresolved(self, node: ast.AST, via: str, reason: str, operation: str = "") -> None:
        text = one_line(ast.unparse(node), max_len=160) if self.report else ""
        line = getattr(node, "lineno", 0)
        self._put(node, f"? {operation}", UnresolvedCall(self.label, line, via, reason, text, operation))

    def _execute_reference(self, base: _Value, node: ast.Attribute) -> None:
        """A Discovery request's ``execute`` named without a call: emitted as the call it will be."""
        if isinstance(base, _GRes):
            self._emit_google(base, node)
        elif base is None and isinstance(node.value, ast.Call):
            chain = _chain(node.value)
            if chain is not None and len(chain) >= 2:
                self._emit_google(_GRes(None, chain, node.value.lineno), node)

    def _emit_google(self, res: _GRes, node: ast.Call | ast.Attribute) -> None:
        chain = ".".join(res.chain)
        svc = res.svc
        if svc is not None and svc.api is None:
            self._unresolved(node, "googleapiclient", "the Google API the service is built for is not a literal")
            return
        if svc is not None and svc.api is not None:
            api = svc.api
            version = self.t.google_version(api, chain, svc.version)
            if version is None:
                self._unresolved(
                    node,
                    "googleapiclient",
                    f"no Discovery document of {api} {svc.version or ''} has the method {chain}".replace("  ", " "),
                )
                return
        else:
            apis = self.t.google_apis_of(chain)
            if len(apis) != 1:
                if apis:
                    self._unresolved(
                        node,
                        "googleapiclient",
                        f"the service is not known, and {len(apis)} Discovery APIs have {chain} "
                        f"({', '.join(sorted(apis)[:5])})",
                    )
                return  # not a Discovery chain at all (another library's .execute())
            api = next(iter(apis))
            found = self.t.google_version(api, chain)
            if found is None:
                self._unresolved(node, "googleapiclient", f"several versions of {api} have {chain}")
                return
            version = found
        base = self.t.google_apis.get(api, {}).get(version, "")
        method_id = self.t.google_method_id(api, version, chain)
        self._put(
            node,
            method_id,
            self._call_at(
                res.line,
                method="",
                url=strip_url(base) or base,
                operation=method_id,
                via="googleapiclient",
                spec=DISCOVERY_URL.format(name=api, version=version),
            ),
        )

    def _emit_graph(self, g: _Graph, node: ast.Call) -> None:
        found = graph_call(g.chain)
        if found is None:
            self._unresolved(node, "msgraph-sdk", "the request builder chain names no path")
            return
        method, path = found
        self._put(
            node,
            f"{method} {path}",
            self._call_at(
                node.lineno,
                method=method,
                url=f"https://graph.microsoft.com/{g.version}{path}",
                operation=f"{method} {path}",
                via="msgraph-sdk",
            ),
        )

    def _emit_route(self, base: str, route: list[str], node: ast.Call, via: str) -> None:
        url = strip_url(base + route[1])
        if url:
            self._put(node, f"{route[0]} {url}", self._call_at(node.lineno, method=route[0], url=url, via=via))

    def _imports(self, package: str) -> bool:
        """Whether the module imports ``package`` (``google.apps.chat``), any version of it."""
        bare = [re.sub(r"_v\d+\w*", "", p) for p in self.imports.values()]
        return any(b == package or b.startswith(package + ".") for b in bare)

    def _emit_gapic(self, key: str, name: str, node: ast.Call) -> None:
        entry = self.t.gapic[key]
        method_id = entry["methods"].get(name)
        if method_id is None:
            return  # a helper of the client (``common_project_path``, ``close``), no RPC
        api, version = entry["api"], entry["version"]
        base = self.t.google_apis.get(api, {}).get(version, "")
        self._put(
            node,
            method_id,
            self._call_at(
                node.lineno,
                method="",
                url=strip_url(base) or base,
                operation=method_id,
                via=key.rpartition(".")[0].replace(".", "-").replace("_", "-"),
                spec=DISCOVERY_URL.format(name=api, version=version),
            ),
        )

    def _pygithub(self, cls: str, name: str, node: ast.Call) -> _Value:
        m = self.t.pygithub.get(cls, {}).get(name)
        if not m:
            return None
        for method, path, op in m["calls"]:
            self._put(
                node,
                f"{method} {path}",
                self._call_at(
                    node.lineno,
                    method=method,
                    url=GITHUB_API + path,
                    operation=op or f"{method} {path}",
                    via="PyGithub",
                ),
            )
        ret = m.get("returns") or ""
        return _GH(ret) if ret in self.t.pygithub else None

    def _githubkit(
        self, chain: tuple[str, ...], name: str, pos: list[_Value], kw: dict[str, _Value], node: ast.Call
    ) -> _Value:
        if name in {"request", "arequest"} and not chain:
            method, url = _text(pos[0] if pos else kw.get("method")), pos[1] if len(pos) > 1 else kw.get("url")
            if method and isinstance(url, _Str):
                self._http("githubkit", method.lower(), [url], {}, GITHUB_API, node)
            else:
                self._unresolved(node, "githubkit", "the method or URL of the request is not a literal")
            return None
        if len(chain) >= 2 and chain[0] == "rest":
            verb = name[len("async_") :] if name.startswith("async_") else name
            op = f"{kebab(chain[1])}/{kebab(verb)}"
            found = self.t.github_ops.get(op)
            if found is None:
                self._unresolved(node, "githubkit", f"no GitHub REST operation {op}")
                return None
            self._put(
                node,
                op,
                self._call_at(node.lineno, method=found[0], url=GITHUB_API + found[1], operation=op, via="githubkit"),
            )
        return None

    def _slack_method(self, name: str, pos: list[_Value], kw: dict[str, _Value], node: ast.Call) -> None:
        if name in {"api_call", "apiCall"}:
            m = _text(pos[0] if pos else kw.get("api_method"))
            if m:
                self._emit_slack(m, node, "slack_sdk")
            else:
                self._unresolved(node, "slack_sdk", "the Web API method is not a literal")
            return
        if name in self.t.slack:
            self._emit_slack(self.t.slack[name], node, "slack_sdk")

    def _emit_slack(self, method: str, node: ast.Call, via: str) -> None:
        self._put(
            node,
            method,
            self._call_at(node.lineno, method="POST", url=f"https://slack.com/api/{method}", operation=method, via=via),
        )

    def _emit_tool(self, session: _Mcp, pos: list[_Value], kw: dict[str, _Value], node: ast.Call) -> None:
        tool = _text(pos[0] if pos else kw.get("name"))
        if not tool:
            self._unresolved(node, "mcp", "the tool name is not a literal")
            return
        if session.url == "":
            self._unresolved(node, "mcp", f"tool {tool!r} of an MCP server run locally over stdio (no URL)", tool)
            return
        url = strip_url(session.url) if session.url else None
        if url is None or "{" in url:
            self._unresolved(node, "mcp", f"tool {tool!r}: the MCP server's URL cannot be told statically", tool)
            return
        self._put(node, f"tool {tool}", self._call_at(node.lineno, method="tools/call", url=url, tool=tool, via="mcp"))

    def _http(
        self, lib: str, verb: str, pos: list[_Value], kw: dict[str, _Value], base: str | None, node: ast.Call
    ) -> None:
        if verb in {"request", "stream"}:
            method = _text(kw.get("method", pos[0] if pos else None))
            target = kw.get("url", pos[1] if len(pos) > 1 else None)
        else:
            method = verb
            target = kw.get("url", pos[0] if pos else None)
        if not method:
            self._unresolved(node, lib, "the HTTP method is not a literal")
            return
        raw = _text(target)
        if raw is None:
            self._unresolved(node, lib, "the URL is built at run time")
            return
        if base is not None and not raw.startswith(("http://", "https://")):
            raw = base.rstrip("/") + "/" + raw.lstrip("/") if raw else base
        raw = raw.partition("?")[0].partition("#")[0]
        if raw.startswith("{"):
            self._unresolved(node, lib, "the URL's scheme and host are built at run time")
            return
        url = strip_url(raw)
        if url is None or "{" in (url.split("://", 1)[1].partition("/")[0]):
            self._unresolved(node, lib, "the URL is not an absolute http(s) URL the code names")
            return
        self._put(node, f"{method.upper()} {url}", self._call_at(node.lineno, method=method.upper(), url=url, via=lib))


def _text(v: _Value) -> str | None:
    return v.text if isinstance(v, _Str) else None


def _snake(name: str) -> str:
    """ADK's tool names: ``calendar_events_quickAdd`` -> ``calendar_events_quick_add``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _name_of(node: ast.expr) -> str:
    """A placeholder's name: the variable or attribute an f-string interpolates."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return _name_of(node.func)
    if isinstance(node, ast.Subscript):
        return _name_of(node.value)
    return "value"


def _chain(node: ast.expr) -> tuple[str, ...] | None:
    """``x.users().messages().list(...)`` -> ("users", "messages", "list"): the method-call chain on a plain
    receiver, or ``None``."""
    out: list[str] = []
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        name = node.func.attr
        if not out and name.endswith(("_next", "_media")):
            name = name.rpartition("_")[0]
        out.append(name)
        node = node.func.value
    if not isinstance(node, ast.Name | ast.Attribute):
        return None
    return tuple(reversed(out))


def _same(a: ObservedCall | UnresolvedCall, b: ObservedCall) -> bool:
    if not isinstance(a, ObservedCall):
        return False
    return (a.operation, a.tool, a.method if not a.operation else "", a.url if not a.operation else "") == (
        b.operation,
        b.tool,
        b.method if not b.operation else "",
        b.url if not b.operation else "",
    )


def read_python(
    data: bytes,
    label: str,
    *,
    hints: set[str] | None = None,
    t: Tables | None = None,
    open_file: OpenFile | None = None,
) -> Iterator[ObservedCall | UnresolvedCall]:
    """The calls of one Python file (``label`` names it in messages), in line order.

    ``hints``: filled with what the file shows of whose credential it uses (``google:user``, ``google:app``,
    ``graph:user`` ...). ``open_file``: the bytes of a file under the root by its label, or ``None`` (an OpenAPI
    toolset's spec file; the walk keeps it inside the root). Never raises for bad source: a file that does not
    parse is one UnresolvedCall."""
    t = t or tables()
    try:
        tree = ast.parse(data, filename=label)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        line = getattr(exc, "lineno", None) or 1
        yield UnresolvedCall(label, int(line), "python", "the file is not Python that parses (not read)")
        return
    reader = _Reader(tree, label, t, hints, open_file)
    try:
        found = reader.run()
    except RecursionError:
        yield UnresolvedCall(label, 1, "python", "the file nests too deeply to be read")
        return
    markers = _markers(data) if b"ramscope:" in data else {}
    lines: dict[int, list[ObservedCall | UnresolvedCall]] = {}
    for item in found:
        lines.setdefault(item.line if isinstance(item, UnresolvedCall) else item.entry, []).append(item)
    for line, text in markers.items():
        marked = parse_marker(text, label, line, t)
        here = lines.setdefault(line, [])
        if marked is None:
            shown = one_line(text, max_len=120)
            here.append(UnresolvedCall(label, line, "marker", f"the marker names no operation ramscope knows: {shown}"))
            continue
        here[:] = [c for c in here if not isinstance(c, UnresolvedCall)]
        if not any(_same(c, marked) for c in here):
            here.append(marked)
    for line in sorted(lines):
        yield from lines[line]
