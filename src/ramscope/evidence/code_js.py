"""Calls read from JavaScript and TypeScript source, statically: never imported, run or installed.

::

    for call in read_js(source_bytes, "src/agent.ts", dialect="ts"):
        ...   # ObservedCall (fmt=CODE, source=label, entry=line) or UnresolvedCall

The source is parsed with tree-sitter's JavaScript / TypeScript grammars (a real parser, so strings,
comments and template literals are told apart from code), and each call expression is held against
the clients the file makes:

- Google APIs Node client: ``google.gmail({version: "v1"})`` then ``gmail.users.messages.list(...)``:
  the Discovery method id, and the Discovery document's URL as the spec.
- Microsoft Graph: the JavaScript client's ``client.api("/me/messages").get()`` (``METHOD /path``), and
  the TypeScript Kiota SDK's builder chains (:func:`._kiota.graph_call`).
- octokit: ``octokit.rest.issues.create``, ``octokit.request("GET /repos/{owner}/{repo}")``,
  ``octokit.paginate(...)``: the REST operationId, from octokit's own endpoint table
  (``data/octokit-endpoints.json``).
- Slack ``@slack/web-api`` / Bolt: ``client.chat.postMessage``: the Web API method, checked against the
  SDK's method table (``data/js-slack-methods.json``).
- Plain HTTP (fetch, axios, got, ky, node ``https``): the method and URL, template literals turned
  into path templates (``${id}`` → ``{id}``), module constants and a client's base URL folded in.
- Google Workspace client libraries (``@google-apps/chat``, ``@google-apps/meet``): each method's Discovery
  method, from a table joining their RPCs' HTTP rules to the Discovery documents.
- Stripe, Notion, Linear and Asana node SDKs, from method tables built from their packages.
- MCP's TypeScript client (``callTool({name})`` on a client connected to a URL), the AI SDK's MCP client
  (its server, no tool), and A2A JS clients (``A2AClient.fromCardUrl``).
- Request helpers of the agent's own (``githubRequest(`https://api.github.com/...`, {method: "POST"})``),
  told by their name and an absolute URL argument, and Bolt's ``say()`` (``chat.postMessage``).

Names are looked up in the scope the use sees (the innermost declaring scope, and the assignments inside
it); local factories and helpers are followed to what their ``return`` statements agree on; a client
another module makes is read by its variable's name only where that name and the method together name
one SDK method.

What cannot be told statically (a URL from a variable that cannot be traced, a computed method name)
is an :class:`UnresolvedCall` with its line and reason: never dropped, never guessed. A comment
``// ramscope: gmail.users.messages.send`` or ``// ramscope: POST https://api.example.com/v1/items``
on the call's line or the line above names such a call's operation.

Bounded for hostile input: the file's bytes, the parse time, the tree's nodes, the depth followed
when folding values and the calls read; a file past a bound yields one :class:`UnresolvedCall` saying
so, and so does anything else that stops the reading of a file. A file that names no client, HTTP
library, URL or marker is not parsed. tree-sitter is imported on first use only (``ramscope --version``
does not load it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from .._text import one_line
from ._js_eval import HTTP_LIBS, Bindings, Chain, Cli, Evaluator, Fn, Free, Obj, Source, Str, Sym, Unknown, Value
from ._kiota import graph_call
from .model import EvidenceFormat, ObservedCall, UnresolvedCall, strip_url

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = ["DIALECTS", "JsLimits", "read_js"]

DIALECTS = frozenset({"js", "jsx", "ts", "tsx"})


@dataclass(frozen=True, slots=True)
class JsLimits:
    #: Bytes of one source file; a bigger one (a bundle, a minified vendor file) is not read.
    max_bytes: int = 4 * 1024**2
    #: Wall-clock seconds for parsing one file.
    parse_seconds: float = 5.0
    #: Syntax tree nodes of one file.
    max_nodes: int = 3_000_000
    #: How deep values are folded (nested expressions, names bound to names).
    max_depth: int = 48
    #: Call sites reported from one file at most.
    max_calls: int = 20_000


DEFAULT_LIMITS = JsLimits()

_NO_OPTIONS = Unknown("no options")
#: A function of the agent's own is read as a request helper when its name says so (and its first
#: argument is an absolute URL); URL builders, validators and loggers are not.
_HELPER_WORDS = ("request", "fetch", "http", "api", "call", "get", "post", "put", "patch", "delete", "send")
_NOT_HELPER_WORDS = ("url", "uri", "link", "parse", "valid", "log", "print", "open", "redirect", "navigate")
#: A callback argument (``https.get(url, (res) => ...)``) is no options object.
_FUNCTION_NODES = frozenset({"arrow_function", "function_expression", "function"})
_VERBS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
_HTTP_METHODS = ("get", "post", "put", "patch", "delete", "head", "options")
#: Every call the reader yields needs one of these in the file's bytes: a client library's name, an HTTP
#: client's, a URL scheme (request helpers), a client variable's word (Workspace clients made elsewhere)
#: or a marker. A file with none is not parsed (most of a dependency tree).
_PREFILTER = (
    b"http",
    b"fetch",
    b"axios",
    b"got",
    b"ky",
    b"undici",
    b"superagent",
    b"octokit",
    b"github",
    b"slack",
    b"google",
    b"graph",
    b"stripe",
    b"notion",
    b"linear",
    b"asana",
    b"modelcontextprotocol",
    b"a2a",
    b"chat",
    b"meet",
    b"space",
    b"conference",
    b"record",
    b"ramscope:",
)
_MARKER = "ramscope:"
_MARKER_BYTES = _MARKER.encode()
_GRAPH_BASE = "https://graph.microsoft.com"
_SLACK_BASE = "https://slack.com/api/"
_GITHUB_BASE = "https://api.github.com"


def read_js(
    data: bytes, label: str, *, dialect: str, limits: JsLimits = DEFAULT_LIMITS
) -> Iterator[ObservedCall | UnresolvedCall]:
    """The calls of one JavaScript/TypeScript file, in source order. Never raises for bad source."""
    if dialect not in DIALECTS:
        raise ValueError(f"dialect must be one of {sorted(DIALECTS)}, not {dialect!r}")
    if len(data) > limits.max_bytes:
        yield UnresolvedCall(label, 1, "", f"file larger than {limits.max_bytes} bytes: not read")
        return
    if not any(w in data for w in _PREFILTER):
        return  # names no client, library or marker the reader knows: nothing it could find
    if label.endswith((".d.ts", ".d.mts", ".d.cts")):
        return  # a TypeScript declaration file declares types only: no call runs from it
    tree_root = _parse(data, dialect, limits)
    if isinstance(tree_root, str):
        yield UnresolvedCall(label, 1, "", tree_root)
        return
    line = 1
    try:
        for found in _Reader(tree_root, data, label, dialect, limits).calls():
            line = found.entry if isinstance(found, ObservedCall) else found.line
            yield found
    except RecursionError:
        yield UnresolvedCall(label, line, "", "the code is nested too deeply to read further")
    except Exception as exc:  # the contract: hostile source never raises; say where the reading stopped
        yield UnresolvedCall(label, line, "", f"the reader could not finish this file ({type(exc).__name__})")


@cache
def _parser(dialect: str) -> Parser:
    # Imported here, not at module level: start-up (``ramscope --version``) must not load tree-sitter.
    from tree_sitter import Language, Parser  # noqa: PLC0415

    if dialect in ("ts", "tsx"):
        import tree_sitter_typescript as tst  # noqa: PLC0415

        lang = Language(tst.language_tsx() if dialect == "tsx" else tst.language_typescript())
    else:
        import tree_sitter_javascript as tsj  # noqa: PLC0415

        lang = Language(tsj.language())
    return Parser(lang)


#: The node kinds the reader looks at (those a grammar lacks are left out of its query).
_KINDS = (
    "call_expression",
    "new_expression",
    "comment",
    "variable_declarator",
    "assignment_expression",
    "public_field_definition",
    "field_definition",
    "required_parameter",
    "optional_parameter",
    "import_statement",
    "function_declaration",
    "generator_function_declaration",
    "method_definition",
    "formal_parameters",
    "arrow_function",
)
#: Nodes that open a scope for the names declared in them.
_SCOPES = frozenset(
    {
        "program",
        "statement_block",
        "class_body",
        "arrow_function",
        "function_declaration",
        "function_expression",
        "function",
        "generator_function_declaration",
        "method_definition",
        "for_statement",
        "for_in_statement",
        "catch_clause",
    }
)
_WHOLE = (0, 1 << 62)
#: Plain names whose call may be a request (``fetch(...)``, ``axios(...)``, Bolt's ``say(...)``).
_CALLABLE_NAMES = frozenset({"fetch", "say", "axios", "got", "ky", "superagent", "require"})
#: Module prefixes of the clients the reader knows (a plain-name call imported from one is folded).
_KNOWN_MODULES = (
    "googleapis",
    "@googleapis/",
    "@google-apps/",
    "@octokit/",
    "octokit",
    "@actions/github",
    "@slack/",
    "@microsoft/",
    "@modelcontextprotocol/",
    "@a2a-js/",
    "stripe",
    "@notionhq/",
    "@linear/",
    "asana",
    "ai",
    "@ai-sdk/",
    ".",
)
#: Modules of the SDKs read from method tables (besides octokit and Slack).
_TABLE_SDKS = ("stripe", "@notionhq/", "@linear/", "asana", "@google-apps/")
_WRAPPERS = frozenset(
    {"await_expression", "parenthesized_expression", "non_null_expression", "as_expression", "subscript_expression"}
)


def _scope(node: Node) -> tuple[int, int]:
    """The byte range of the scope ``node`` is in (a parameter's is its function's)."""
    p = node.parent
    for _ in range(10_000):
        if p is None:
            break
        if p.type in _SCOPES:
            return p.start_byte, p.end_byte
        p = p.parent
    return _WHOLE


@cache
def _query(dialect: str, comments: bool) -> Any:
    from tree_sitter import Query  # noqa: PLC0415 - loaded with the first file read

    lang = _parser(dialect).language
    assert lang is not None
    kinds = [k for k in _KINDS if lang.id_for_node_kind(k, True) and (comments or k != "comment")]
    return Query(lang, " ".join(f"({k}) @n" for k in kinds))


def _parse(data: bytes, dialect: str, limits: JsLimits) -> Node | str:
    """The tree's root, or why the file is not read."""
    try:
        parser = _parser(dialect)
    except ImportError:
        return "the tree-sitter JavaScript/TypeScript grammars are not installed"
    deadline = time.monotonic() + limits.parse_seconds

    def read(offset: int, _point: Any) -> bytes:
        return data[offset : offset + 65536]

    def progress(_offset: int, _has_error: bool) -> bool:
        return time.monotonic() > deadline  # True cancels the parse

    try:
        tree = parser.parse(read, progress_callback=progress)
    except ValueError:
        return f"parsing took longer than {limits.parse_seconds} s: not read"
    finally:
        parser.reset()
    root = tree.root_node
    if root.descendant_count > limits.max_nodes:
        return f"syntax tree larger than {limits.max_nodes} nodes: not read"
    return root


# -- SDK tables (data, built by scripts/build_js_tables.py) -------------------------------------------


@cache
def _table(name: str) -> dict[str, Any]:
    f = resources.files(__package__).joinpath("data").joinpath(name)
    if not f.is_file():
        return {}
    doc = json.loads(f.read_bytes())
    return doc if isinstance(doc, dict) else {}


def _octokit_methods() -> dict[str, list[str]]:
    return _table("octokit-endpoints.json").get("methods", {})  # type: ignore[no-any-return]


def _octokit_routes() -> dict[str, str]:
    return _table("octokit-endpoints.json").get("routes", {})  # type: ignore[no-any-return]


def _slack_methods() -> dict[str, str]:
    return _table("js-slack-methods.json").get("methods", {})  # type: ignore[no-any-return]


def _sdk_methods(sdk: str) -> dict[str, list[str]]:
    return _table(f"js-{sdk}-methods.json").get("methods", {})  # type: ignore[no-any-return]


@cache
def _terminals() -> frozenset[str]:
    """Every name a client call the reader reads ends in (the SDK tables' methods, HTTP verbs, MCP/A2A)."""
    names = {k.rsplit(".", 1)[-1] for k in _octokit_methods()} | {k.rsplit(".", 1)[-1] for k in _slack_methods()}
    for sdk in _SDK_VIA:
        names |= {k.rsplit(".", 1)[-1] for k in _sdk_methods(sdk)}
    names |= set(_HTTP_METHODS) | {"del", "getStream", "putStream", "request", "fetch", "paginate", "iterator"}
    names |= {"graphql", "apiCall", "uploadV2", "filesUploadV2", "callTool", "tools", *_A2A_METHODS}
    return frozenset(names)


@cache
def _gapic_names() -> frozenset[str]:
    return frozenset(k.rsplit(".", 1)[1] for k in _sdk_methods("gapic"))


@cache
def _google_bases() -> dict[str, str]:
    """Discovery document URL -> the API's base URL, from the shipped host index."""
    from .hosts import _shipped  # noqa: PLC0415 - the index is read only for a Google call

    out: dict[str, str] = {}
    for prefix, specs in _shipped().items():
        for s in specs:
            if s.startswith("https://www.googleapis.com/discovery/"):
                out.setdefault(s, prefix)
    return out


def _route_key(method: str, path: str) -> str:
    """``GET /repos/{owner}/{repo}`` with parameter names dropped: routes match whatever names them."""
    segs = ["{}" if s.startswith("{") and s.endswith("}") else s for s in path.split("/")]
    return f"{method.upper()} {'/'.join(segs)}"


# -- the reader -----------------------------------------------------------------------------------


class _Reader:
    def __init__(self, root: Node, data: bytes, label: str, dialect: str, limits: JsLimits) -> None:
        self.root, self.label, self.limits, self.dialect = root, label, limits, dialect
        self.text = Source(data)
        self.nodes: dict[int, Node] = {}
        self.bindings = Bindings()
        self.calls_found: list[Node] = []
        self.comments: dict[int, str] = {}
        self.modules: set[str] = set()
        #: Binding nodes not read yet (see _ensure_bindings).
        self._pending: list[Node] = []
        self._collect()
        self.ev = Evaluator(self.text, self.nodes, self.bindings, limits.max_depth)
        #: MCP client binding -> the server URL its transport names (``client.connect(transport)``).
        self.connected: dict[str, str] = {}
        self._fam: frozenset[str] | None = None
        self._defined: set[str] | None = None

    # -- one pass over the tree: bindings, calls, comments ----------------------------------------

    def _collect(self) -> None:
        # The grammar's query engine picks the few node kinds read (in C); walking every node in Python
        # cost twice the parse.
        from tree_sitter import QueryCursor  # noqa: PLC0415 - tree-sitter loads with the first file

        # Comments matter only for markers: a file without one is queried without them.
        marked = _MARKER_BYTES in self.text.data
        found = QueryCursor(_query(self.dialect, marked)).captures(self.root).get("n", [])
        found.sort(key=lambda n: (n.start_byte, -n.end_byte))  # source order, outer before inner
        for node in found:
            t = node.type
            if t in ("call_expression", "new_expression", "comment", "import_statement"):
                self._visit(node)
            else:
                self._pending.append(node)

    def _ensure_bindings(self) -> None:
        """The file's bindings, read when a call is first worth folding (most files have none)."""
        if self._pending:
            pending, self._pending = self._pending, []
            for node in pending:
                self._visit(node)

    def _visit(self, node: Node) -> None:
        t = node.type
        if t in ("call_expression", "new_expression"):
            self.calls_found.append(node)
        elif t == "comment":
            if self.text.data.find(_MARKER_BYTES, node.start_byte, node.end_byte) < 0:
                return  # most comments: not decoded
            body = self.text(node)
            if _MARKER in body:
                self.comments[node.end_point[0] + 1] = body
                self.comments.setdefault(node.start_point[0] + 1, body)
        elif t == "variable_declarator":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None and value is not None:
                self._bind_pattern(name, value, _scope(node))
            elif name is not None and name.type == "identifier":
                self.bindings.add(self.text(name), ("none",), _scope(node))  # ``let client;``: assigned later
        elif t == "assignment_expression":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and right is not None:
                key = self._target(left)
                if key:
                    self._bind(key, right, _scope(node), decl=False)
        elif t in ("public_field_definition", "field_definition"):
            name = node.child_by_field_name("name") or node.child_by_field_name("property")
            value = node.child_by_field_name("value")
            if name is not None and value is not None:
                self._bind("this." + self.text(name).lstrip("#"), value)
        elif t in ("required_parameter", "optional_parameter"):
            pattern, typ = node.child_by_field_name("pattern"), node.child_by_field_name("type")
            scope = _scope(node)
            if pattern is not None and pattern.type == "identifier" and typ is not None:
                self.nodes[typ.id] = typ
                self.bindings.add(self.text(pattern), ("type", str(typ.id)), scope)
                if any(c.type in {"accessibility_modifier", "readonly"} for c in node.children):
                    self.bindings.add("this." + self.text(pattern), ("type", str(typ.id)))
            elif pattern is not None:
                self._params(pattern, scope)
        elif t == "formal_parameters":
            scope = _scope(node)
            for c in node.named_children:
                if c.type not in ("required_parameter", "optional_parameter"):
                    self._params(c, scope)
        elif t == "arrow_function":
            param = node.child_by_field_name("parameter")  # ``client => ...``
            if param is not None:
                self._params(param, (node.start_byte, node.end_byte))
        elif t == "import_statement":
            self._import(node)
        elif t in ("function_declaration", "generator_function_declaration"):
            name = node.child_by_field_name("name")
            if name is not None:
                self._bind(self.text(name), node, _scope(node.parent) if node.parent is not None else _WHOLE)
        elif t == "method_definition":
            name = node.child_by_field_name("name")
            if name is not None and self.text(name) != "constructor":
                self._bind("this." + self.text(name).lstrip("#"), node)

    def _params(self, pattern: Node, scope: tuple[int, int]) -> None:
        """A function's parameter names (``url``, ``{ client, say }``, ``x = 1``, ``...rest``)."""
        if pattern.type in ("identifier", "shorthand_property_identifier_pattern"):
            self.bindings.add(self.text(pattern), ("param",), scope)
        elif pattern.type in ("object_pattern", "array_pattern", "rest_pattern"):
            for c in pattern.named_children:
                if c.type == "pair_pattern":
                    v = c.child_by_field_name("value")
                    if v is not None:
                        self._params(v, scope)
                else:
                    self._params(c, scope)
        elif pattern.type in ("assignment_pattern", "object_assignment_pattern"):
            left = pattern.child_by_field_name("left")
            if left is not None:
                self._params(left, scope)

    def _target(self, left: Node) -> str:
        if left.type == "identifier":
            return self.text(left)
        if left.type == "member_expression":
            obj, prop = left.child_by_field_name("object"), left.child_by_field_name("property")
            if obj is not None and prop is not None and obj.type == "this":
                return "this." + self.text(prop).lstrip("#")
        return ""

    def _bind(self, key: str, value: Node, scope: tuple[int, int] | None = None, decl: bool = True) -> None:
        self.nodes[value.id] = value
        self.bindings.add(key, ("expr", str(value.id)), scope or _WHOLE, decl)

    def _bind_pattern(self, name: Node, value: Node, scope: tuple[int, int]) -> None:
        if name.type == "identifier":
            self._bind(self.text(name), value, scope)
            return
        if name.type != "object_pattern":
            return
        self.nodes[value.id] = value
        for c in name.named_children:
            if c.type == "shorthand_property_identifier_pattern":
                self.bindings.add(self.text(c), ("member", str(value.id), self.text(c)), scope)
            elif c.type == "pair_pattern":
                k, v = c.child_by_field_name("key"), c.child_by_field_name("value")
                if k is not None and v is not None and v.type == "identifier":
                    self.bindings.add(self.text(v), ("member", str(value.id), self.text(k)), scope)

    def _import(self, node: Node) -> None:
        source = node.child_by_field_name("source")
        if source is None:
            return
        mod = "".join(self.text(c) for c in source.named_children if c.type == "string_fragment")
        self.modules.add(mod)
        for clause in node.named_children:
            if clause.type == "import_require_clause":
                ident = next((c for c in clause.named_children if c.type == "identifier"), None)
                if ident is not None:
                    self.bindings.add(self.text(ident), ("import", mod, ""))
            if clause.type != "import_clause":
                continue
            for c in clause.named_children:
                if c.type == "identifier":  # default import
                    self.bindings.add(self.text(c), ("import", mod, ""))
                elif c.type == "namespace_import":
                    ident = next((i for i in c.named_children if i.type == "identifier"), None)
                    if ident is not None:
                        self.bindings.add(self.text(ident), ("import", mod, ""))
                elif c.type == "named_imports":
                    for spec in c.named_children:
                        if spec.type != "import_specifier":
                            continue
                        name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
                        if name is not None:
                            local = alias if alias is not None else name
                            self.bindings.add(self.text(local), ("import", mod, self.text(name)))

    # -- calls ----------------------------------------------------------------------------------

    def calls(self) -> Iterator[ObservedCall | UnresolvedCall]:
        self._note_requires()
        self._note_connects()
        n = 0
        #: Lines whose marker a call used; a marker left over names the first call at it (below).
        claimed: set[int] = set()
        for node in self.calls_found:
            if node.type != "call_expression":
                continue
            try:
                found = self._call(node)
            except RecursionError:
                found = self._unresolved(node, "", "the expression is nested too deeply to read")
            if found is None:
                found = self._marked(node, claimed)
                if found is None:
                    continue
            else:
                line = node.start_point[0] + 1
                claimed.update(at for at in (line, line - 1) if at in self.comments)
            n += 1
            if n > self.limits.max_calls:
                yield UnresolvedCall(
                    self.label,
                    node.start_point[0] + 1,
                    "",
                    f"more than {self.limits.max_calls} calls: the rest not read",
                )
                return
            yield found

    def _note_requires(self) -> None:
        for node in self.calls_found:
            fn = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            if fn is not None and fn.type == "identifier" and self.text(fn) == "require" and args is not None:
                first = next(iter(args.named_children), None)
                if first is not None and first.type == "string":
                    self.modules.add("".join(self.text(c) for c in first.named_children))

    def _note_connects(self) -> None:
        for node in self.calls_found:
            fn = node.child_by_field_name("function")
            if fn is None or fn.type != "member_expression":
                continue
            prop = fn.child_by_field_name("property")
            if prop is None or self.text(prop) != "connect":
                continue
            client = self._value(fn.child_by_field_name("object"))
            args = self._args(node)
            if isinstance(client, Cli) and client.kind == "mcp" and client.key and args:
                transport = self._value(args[0])
                if isinstance(transport, Cli) and transport.kind == "mcp-transport":
                    url = transport.get("url")
                    if transport.get("transport") == "StdioClientTransport":
                        url = "stdio:"
                    self.connected.setdefault(client.key, url)

    def _value(self, node: Node | None) -> Value:
        if node is None:
            return Unknown()
        self._ensure_bindings()
        try:
            return self.ev.eval(node)
        except RecursionError:
            return Unknown("the expression is nested too deeply to read")

    def _args(self, node: Node) -> tuple[Node, ...]:
        args = node.child_by_field_name("arguments")
        if args is None or args.type != "arguments":
            return ()
        out = tuple(a for a in args.named_children if a.type != "comment")
        for a in out:
            self.nodes[a.id] = a
        return out

    def _call(self, node: Node) -> ObservedCall | UnresolvedCall | None:
        fn = node.child_by_field_name("function")
        if fn is None:
            return None
        if fn.type == "member_expression" and not self._skip_ok(node, fn):
            return None
        if fn.type == "identifier" and not self._named_ok(node, self.text(fn)):
            return None
        callee = self._value(fn)
        args = self._args(node)
        if isinstance(callee, Chain):
            return self._chain_call(node, callee, args)
        if isinstance(callee, Sym):
            lib = HTTP_LIBS.get(callee.path[0])
            if lib is not None:
                return self._http_lib(node, lib, callee.path[1:], args, "")
            if callee.path[0].startswith(".") and args:  # a helper of the agent's own, in another module
                return self._helper(node, callee.path[-1], args)
            return None
        if isinstance(callee, Free):
            if callee.name == "fetch":
                return self._fetch(node, args, "fetch", "")
            if callee.name == "say" and callee.why == "param" and "bolt" in self._families():
                # Bolt's ``say`` (a listener's argument) posts to the event's channel: chat.postMessage.
                return self._observed(
                    node, "POST", _SLACK_BASE + "chat.postMessage", operation="chat.postMessage", via="slack-bolt"
                )
            if callee.name in ("axios", "got", "ky") and callee.name not in self.bindings.names:
                return self._http_lib(node, callee.name, (), args, "")
            return None
        if isinstance(callee, Cli) and callee.kind == "http":
            return self._http_lib(node, callee.get("lib"), (), args, callee.get("base"))
        if isinstance(callee, Free | Sym | Fn) and args:
            return self._helper(node, self.ev._callee_name(callee), args)
        if isinstance(callee, Unknown) and fn.type == "subscript_expression":
            base = self._value(fn.child_by_field_name("object"))
            if isinstance(base, Cli | Chain):
                return self._unresolved(node, _via(base), "the method called is computed at run time")
        return None

    # -- SDK chains -------------------------------------------------------------------------------

    def _chain_call(self, node: Node, chain: Chain, args: tuple[Node, ...]) -> ObservedCall | UnresolvedCall | None:
        base = chain.base
        names = chain.plain()
        # A call inside the chain is a result read on (``create(...).then``, ``post(...).json``), but for
        # Kiota's builders, where ``byUserId(id)`` is a path segment.
        results = any(called for _, called in chain.names[:-1])
        if isinstance(base, Free):
            return self._free_chain(node, base.name, chain, args, results)
        kind = base.kind
        if results and kind != "kiota":
            return None
        if kind == "google":
            return self._google(node, base.get("api"), base.get("version"), names)
        if kind == "octokit":
            return self._octokit(node, names, args, base.get("base") or _GITHUB_BASE)
        if kind == "slack":
            return self._slack(node, names, args)
        if kind == "graph-request":
            return self._graph_js(node, base, names)
        if kind == "kiota":
            return self._kiota(node, chain)
        if kind == "http":
            return self._http_lib(node, base.get("lib"), names, args, base.get("base"))
        if kind == "mcp":
            return self._mcp(node, base, names, args)
        if kind == "a2a":
            return self._a2a(node, base, names)
        if kind in _SDK_VIA:
            return self._sdk(node, base, names)
        if kind == "ai-mcp" and names == ("tools",):
            # The model picks which of the server's tools to call, at run time: the server is named, no tool.
            where = f"MCP server {base.get('url')}" if base.get("url") else "an MCP server whose URL cannot be told"
            return self._unresolved(node, "ai-sdk", f"the model calls {where}'s tools, chosen at run time")
        return None

    def _free_chain(
        self, node: Node, root: str, chain: Chain, args: tuple[Node, ...], results: bool
    ) -> ObservedCall | UnresolvedCall | None:
        """A chain on a name the file never binds: an injected client (github-script's ``github``, a Bolt
        handler's ``client``, a helper's parameter). Read only where the chain itself names one SDK."""
        names = chain.plain()
        fam = self._families()
        if results:
            if "kiota" in fam and names and names[0] in _GRAPH_ROOTS:
                return self._kiota(node, chain)
            return None
        if root in ("axios", "got", "ky") and len(names) == 1:
            return self._http_lib(node, root, names, args, "")
        if len(names) >= 3 and names[0] == "rest" and ".".join(names[1:3]) in _octokit_methods():
            return self._octokit(node, names, args, _GITHUB_BASE)
        if ("octokit" in fam or root in ("octokit", "github")) and (
            names in (("request",), ("paginate",), ("paginate", "iterator"))
            or (len(names) == 2 and ".".join(names) in _octokit_methods())
        ):
            return self._octokit(node, names, args, _GITHUB_BASE)
        if "slack" in fam and len(names) >= 2 and ".".join(names) in _slack_methods():
            return self._slack(node, names, args)
        if "google" in fam and len(names) >= 2:
            api = _google_api_named(root)
            if api:
                return self._google(node, api, "", names)
            if any(w in root.lower() for w in ("google", "service", "svc", "client", "api")):
                return self._unresolved(node, "googleapis", f"a Google API client ({root}) whose API cannot be told")
            return None
        if "kiota" in fam and names and names[0] in _GRAPH_ROOTS:
            return self._kiota(node, chain)
        if len(names) == 1 and names[0] in _gapic_names():
            return self._gapic_named(node, root, names[0])
        return None

    def _skip_ok(self, node: Node, fn: Node) -> bool:
        """Whether a method call is worth folding: its name is one some client's call ends in (most are
        ``.push``, ``.map``, ``.log``). A Google client's methods are any name, so a googleapis file is
        folded whole; so is a call a marker names."""
        prop = fn.child_by_field_name("property")
        if prop is None or "google" in self._families():
            return True
        name = self.text(prop)
        if name in _terminals() or any(w in name.lower() for w in _HELPER_WORDS):
            return True
        line = node.start_point[0] + 1
        if line in self.comments or line - 1 in self.comments:
            return True
        # Any method on a client of a table-read SDK is read (an unknown one is an unresolved call, not
        # dropped); only a file that imports such an SDK has such clients.
        if "tables" not in self._families():
            return False
        root = self._root(fn)
        return root is not None and isinstance(self._value(root), Cli | Sym | Fn | Chain)

    def _named_ok(self, node: Node, name: str) -> bool:
        """Whether a call of a plain name is worth folding: fetch and the HTTP libraries, Bolt's say, a
        request or URL helper, a name the file imports or defines (a library function, a factory), a call a
        marker names."""
        if name in _CALLABLE_NAMES or any(w in name.lower() for w in _HELPER_WORDS):
            return True
        line = node.start_point[0] + 1
        if line in self.comments or line - 1 in self.comments:
            return True
        return self._imported_or_defined(name)

    def _imported_or_defined(self, name: str) -> bool:
        """``name`` is imported from a module the reader knows, or made by a client factory
        (``const api = axios.create({...})``, called as ``api("/x")``): told without reading the bindings."""
        if self._defined is None:
            self._defined = {
                k
                for k, bs in self.bindings.names.items()  # imports are read already
                if any(b[0][0] == "import" and _known_module(b[0][1]) for b in bs)
            }
            for node in self._pending:
                if node.type == "variable_declarator":
                    value, n = node.child_by_field_name("value"), node.child_by_field_name("name")
                    if (
                        value is not None
                        and n is not None
                        and ("create(" in self.text(value) or "extend(" in self.text(value))
                    ):
                        self._defined.add(self.text(n))
        return name in self._defined

    def _root(self, fn: Node) -> Node | None:
        """The name a member chain starts from (``client`` of ``client.api("/me").select("x").get``)."""
        n: Node | None = fn
        for _ in range(256):
            if n is None:
                return None
            if n.type == "identifier":
                return n
            if n.type == "member_expression":
                obj = n.child_by_field_name("object")
                if obj is not None and obj.type == "this":
                    return n
                n = obj
            elif n.type == "call_expression":
                n = n.child_by_field_name("function")
            elif n.type in _WRAPPERS:
                n = n.named_children[0] if n.named_children else None
            else:
                return None
        return None

    def _families(self) -> frozenset[str]:
        """The SDK families the file imports (or requires), once per file."""
        if self._fam is None:
            mods = self.modules
            fam = set()
            if any(m == "@actions/github" or m.startswith("@octokit/") or m == "octokit" for m in mods):
                fam.add("octokit")
            if any(m.startswith("@slack/") for m in mods):
                fam.add("slack")
            if "@slack/bolt" in mods:
                fam.add("bolt")
            if any(m == "googleapis" or m.startswith("@googleapis/") for m in mods):
                fam.add("google")
            if any(m.startswith("@microsoft/msgraph-sdk") for m in mods):
                fam.add("kiota")
            if fam & {"octokit", "slack"} or any(m.startswith(_TABLE_SDKS) for m in mods):
                fam.add("tables")
            self._fam = frozenset(fam)
        return self._fam

    def _gapic_named(self, node: Node, root: str, method: str) -> ObservedCall | UnresolvedCall | None:
        """``chatClient.createMessage(...)`` on a client another module made: the variable's name and the
        method together name one Workspace client library method."""
        low = root.lower()
        table = _sdk_methods("gapic")
        hits = [c for c, stems in _GAPIC_STEMS.items() if any(s in low for s in stems) and f"{c}.{method}" in table]
        if len(hits) != 1:
            return None
        return self._sdk(node, Cli("gapic", (("api", hits[0]),)), (method,))

    def _google(
        self, node: Node, api: str, version: str, names: tuple[str, ...]
    ) -> ObservedCall | UnresolvedCall | None:
        if len(names) < 2:
            return None
        if not api:
            return self._unresolved(node, "googleapis", "a Google API client whose API cannot be told")
        spec = f"https://www.googleapis.com/discovery/v1/apis/{api}/{version}/rest" if version else ""
        url = _google_bases().get(spec, "") if spec else ""
        return self._observed(node, "", url, operation=".".join((api, *names)), via="googleapis", spec=spec)

    def _octokit(
        self, node: Node, names: tuple[str, ...], args: tuple[Node, ...], base: str
    ) -> ObservedCall | UnresolvedCall | None:
        if names and names[0] == "rest":
            names = names[1:]
        if names in (("paginate",), ("paginate", "iterator")):
            if not args:
                return self._unresolved(node, "octokit", "octokit.paginate without a route")
            first = self._value(args[0])
            if isinstance(first, Chain) and isinstance(first.base, Cli | Free):
                inner = first.plain()
                inner = inner[1:] if inner and inner[0] == "rest" else inner
                return self._octokit_method(node, inner, base)
            return self._octokit_route(node, first, base)
        if names == ("request",):
            return self._octokit_route(node, self._value(args[0]) if args else Unknown(), base)
        if names == ("graphql",):
            return self._observed(node, "POST", base.rstrip("/") + "/graphql", via="octokit")
        if len(names) == 2:
            return self._octokit_method(node, names, base)
        return None

    def _octokit_method(self, node: Node, names: tuple[str, ...], base: str) -> ObservedCall | UnresolvedCall:
        entry = _octokit_methods().get(".".join(names))
        if entry is None:
            return self._unresolved(node, "octokit", f"{'.'.join(names)} is not in octokit's endpoint table")
        method, path, op = entry[0], entry[1], entry[2] if len(entry) > 2 else ""
        return self._observed(node, method, base.rstrip("/") + path, operation=op, via="octokit")

    def _octokit_route(self, node: Node, route: Value, base: str) -> ObservedCall | UnresolvedCall:
        if not isinstance(route, Str) or not route.literal:
            return self._unresolved(node, "octokit", "the route is built at run time")
        method, _, path = route.text.strip().partition(" ")
        if not path:
            method, path = "GET", method
        if not method.isalpha():
            return self._unresolved(node, "octokit", "the route names no HTTP method")
        path = path.strip()
        if path.startswith(("https://", "http://")):
            url = path
            path = "/" + path.split("://", 1)[1].partition("/")[2]
        else:
            url = base.rstrip("/") + path
        op = _octokit_routes().get(_route_key(method, path.partition("?")[0]), "")
        return self._observed(node, method.upper(), url, operation=op, via="octokit")

    def _slack(
        self, node: Node, names: tuple[str, ...], args: tuple[Node, ...]
    ) -> ObservedCall | UnresolvedCall | None:
        if names == ("apiCall",):
            m = self._value(args[0]) if args else Unknown()
            if not isinstance(m, Str) or not m.literal:
                return self._unresolved(node, "slack-web-api", "the Slack method name is computed at run time")
            method = m.text
        else:
            if len(names) < 2:
                return None
            table = _slack_methods()
            method = table.get(".".join(names), "") if table else ".".join(names)
            helper = _SLACK_HELPERS.get(".".join(names))
            if helper is not None:
                # One call site, two Web API calls (the SDK's own upload flow); the second is yielded here.
                return self._observed(node, "POST", _SLACK_BASE + helper, operation=helper, via="slack-web-api")
            if not method:
                return self._unresolved(node, "slack-web-api", f"{'.'.join(names)} is not a Slack Web API method")
        return self._observed(node, "POST", _SLACK_BASE + method, operation=method, via="slack-web-api")

    def _graph_js(self, node: Node, req: Cli, names: tuple[str, ...]) -> ObservedCall | UnresolvedCall | None:
        if len(names) != 1:
            return None
        verb = {"get": "GET", "post": "POST", "put": "PUT", "patch": "PATCH", "delete": "DELETE", "del": "DELETE"}.get(
            names[0].removesuffix("Stream")
        )
        if verb is None:
            return None
        path, version = req.get("path"), req.get("version")
        if not path or version == "?":
            what = "the request path" if not path else "the API version"
            return self._unresolved(node, "microsoft-graph-client", f"{what} is built at run time")
        if path.startswith("https://"):
            rest = path.split("://", 1)[1].partition("/")[2]
            version, _, tail = rest.partition("/")
            path = "/" + tail
        path = "/" + path.lstrip("/").partition("?")[0]
        return self._observed(
            node, verb, f"{_GRAPH_BASE}/{version}{path}", operation=f"{verb} {path}", via="microsoft-graph-client"
        )

    def _kiota(self, node: Node, chain: Chain) -> ObservedCall | UnresolvedCall | None:
        names = (*chain.names[:-1], (chain.names[-1][0], True))
        found = graph_call(names)
        if found is None:
            return None
        verb, path = found
        return self._observed(node, verb, f"{_GRAPH_BASE}/v1.0{path}", operation=f"{verb} {path}", via="msgraph-sdk")

    def _mcp(
        self, node: Node, client: Cli, names: tuple[str, ...], args: tuple[Node, ...]
    ) -> ObservedCall | UnresolvedCall | None:
        if names != ("callTool",):
            return None
        params = self._value(args[0]) if args else Unknown()
        tool = ""
        if isinstance(params, Obj):
            nid = params.node_id("name")
            v = self._value(self.nodes.get(nid)) if nid is not None else Unknown()
            tool = v.text if isinstance(v, Str) and v.literal else ""
        if not tool:
            return self._unresolved(node, "mcp-sdk", "the MCP tool name is computed at run time")
        server = self.connected.get(client.key, "")
        if server == "stdio:":
            return self._unresolved(node, "mcp-sdk", f"MCP tool {tool!r} on a stdio server (no URL)", tool)
        url = strip_url(server) if server else None
        if url is None:
            return self._unresolved(node, "mcp-sdk", f"MCP tool {tool!r} on a server whose URL cannot be told", tool)
        return self._observed(node, "tools/call", url, via="mcp-sdk", tool=tool)

    def _a2a(self, node: Node, client: Cli, names: tuple[str, ...]) -> ObservedCall | UnresolvedCall | None:
        method = _A2A_METHODS.get(names[-1]) if len(names) == 1 else None
        if method is None:
            return None
        url = strip_url(client.get("url")) if client.get("url") else None
        if url is None:
            return self._unresolved(node, "a2a-js", "an A2A agent whose card URL cannot be told")
        return self._observed(node, "POST", url, operation=method, via="a2a-js")

    def _sdk(self, node: Node, client: Cli, names: tuple[str, ...]) -> ObservedCall | UnresolvedCall | None:
        """An SDK whose method names map one-to-one to operations, read from its shipped table."""
        sdk = client.kind
        table = _sdk_methods(sdk)
        key = ".".join((client.get("api"), *names) if client.get("api") else names)
        entry = table.get(key)
        if entry is None:
            if (len(names) == 1 and sdk in ("stripe", "notion")) or sdk == "gapic":
                # A member of the client itself (stripe.setTimeout; a gapic client's path helpers,
                # close(), initialize()): no resource method.
                return None
            return self._unresolved(node, _SDK_VIA[sdk], f"{key} is not in the {sdk} SDK's method table")
        method, url = entry[0], entry[1]
        op, spec = (entry[2] if len(entry) > 2 else ""), (entry[3] if len(entry) > 3 else "")
        return self._observed(node, method, url, operation=op, via=_SDK_VIA[sdk], spec=spec)

    # -- plain HTTP -------------------------------------------------------------------------------

    def _http_lib(
        self, node: Node, lib: str, names: tuple[str, ...], args: tuple[Node, ...], base: str
    ) -> ObservedCall | UnresolvedCall | None:
        if lib == "fetch":
            if names in ((), ("fetch",), ("request",)):  # fetch(), undici's fetch() and request()
                return self._fetch(node, args, "fetch" if names != ("request",) else "undici", base)
            return None
        if lib in ("https", "http"):
            if names not in (("request",), ("get",)):
                return None
            return self._node_http(node, lib, names[0], args)
        if not names:  # axios(url | config), got(url, opts), ky(url, opts)
            if not args:
                return None
            first = self._value(args[0])
            if isinstance(first, Obj):
                return self._from_config(node, lib, first, base, default="GET")
            opts = self._value(args[1]) if len(args) > 1 else _NO_OPTIONS
            method = self._method_of(opts, "GET")
            return self._http(node, lib, method, first, base)
        if len(names) != 1:
            return None
        verb = names[0]
        if verb == "request" and lib == "axios" and args:
            cfg = self._value(args[0])
            return (
                self._from_config(node, lib, cfg, base, default="GET")
                if isinstance(cfg, Obj)
                else (self._unresolved(node, lib, "the request config is built at run time"))
            )
        if verb not in _HTTP_METHODS:
            return None
        if not args:
            return self._unresolved(node, lib, "a request with no URL")
        return self._http(node, lib, verb.upper(), self._value(args[0]), base)

    def _helper(self, node: Node, name: str, args: tuple[Node, ...]) -> ObservedCall | UnresolvedCall | None:
        """A request helper of the agent's own (``githubRequest(`https://api.github.com/repos/${o}/${r}`,
        {method: "POST"})``), told by its name and an absolute URL as its first argument. The method is
        the options' ``method``, else the verb the name says, else GET (what such helpers default to)."""
        low = name.lower()
        if not any(w in low for w in _HELPER_WORDS) or any(w in low for w in _NOT_HELPER_WORDS):
            return None
        first = self._value(args[0])
        if isinstance(first, Cli) and first.kind == "url":
            first = Str(first.get("url"), first.get("literal") == "1")
        if not isinstance(first, Str) or not first.text.lower().startswith(("https://", "http://")):
            return None
        verb = next((v.upper() for v in ("post", "put", "patch", "delete") if v in low), "GET")
        method = self._method_of(self._value(args[1]), verb) if len(args) > 1 else verb
        return self._http(node, f"{name} (a request helper)", method, first, "")

    def _fetch(self, node: Node, args: tuple[Node, ...], via: str, base: str) -> ObservedCall | UnresolvedCall:
        if not args:
            return self._unresolved(node, via, "fetch with no URL")
        target = self._value(args[0])
        opts = self._value(args[1]) if len(args) > 1 else _NO_OPTIONS
        method = self._method_of(opts, "GET")
        return self._http(node, via, method, target, base)

    def _node_http(self, node: Node, lib: str, verb: str, args: tuple[Node, ...]) -> ObservedCall | UnresolvedCall:
        if not args:
            return self._unresolved(node, lib, "a request with no URL")
        first = self._value(args[0])
        default = "GET"
        if isinstance(first, Obj):
            host = self._prop_str(first, "hostname") or self._prop_str(first, "host")
            path = self._prop_str(first, "path") or Str("/")
            method = self._method_of(first, default) if verb == "request" else "GET"
            if host is None or not host.literal:
                return self._unresolved(node, lib, "the host is built at run time")
            scheme = "https" if lib == "https" else "http"
            return self._http(node, lib, method, Str(f"{scheme}://{host.text}{path.text}", path.literal), "")
        opts = self._value(args[1]) if len(args) > 1 and args[1].type not in _FUNCTION_NODES else _NO_OPTIONS
        method = self._method_of(opts, default) if verb == "request" else "GET"
        return self._http(node, lib, method, first, "")

    def _from_config(self, node: Node, lib: str, cfg: Obj, base: str, default: str) -> ObservedCall | UnresolvedCall:
        target = self._prop(cfg, "url")
        own_base = self._prop(cfg, "baseURL")
        if isinstance(own_base, Str):
            base = own_base.text
        return self._http(node, lib, self._method_of(cfg, default), target, base)

    def _prop(self, obj: Obj, name: str) -> Value:
        nid = obj.node_id(name)
        n = self.nodes.get(nid) if nid is not None else None
        return self._value(n) if n is not None else Unknown(f"no {name}")

    def _prop_str(self, obj: Obj, name: str) -> Str | None:
        v = self._prop(obj, name)
        return v if isinstance(v, Str) else None

    def _method_of(self, opts: Value, default: str) -> str:
        """The ``method`` of an options object: upper-case, "" when it is computed (or the options are,
        or a spread may bring one), the default when the options say none."""
        if isinstance(opts, Unknown) and opts.reason == "no options":
            return default
        if not isinstance(opts, Obj):
            return ""
        if opts.node_id("method") is None:
            return "" if opts.node_id("...") is not None else default
        v = self._prop(opts, "method")
        if isinstance(v, Str) and v.literal and v.text.isalpha():
            return v.text.upper()
        return ""

    def _http(self, node: Node, via: str, method: str, target: Value, base: str) -> ObservedCall | UnresolvedCall:
        if isinstance(target, Cli) and target.kind == "url":
            target = Str(target.get("url"), target.get("literal") == "1")
        if not isinstance(target, Str):
            reason = target.reason if isinstance(target, Unknown) and target.reason else "the URL is built at run time"
            if isinstance(target, Free):
                reason = f"the URL comes from {target.name}, " + (
                    "a parameter" if target.why == "param" else "which cannot be traced in this file"
                )
            return self._unresolved(node, via, _url_reason(reason))
        url = target.text
        if not url.lower().startswith(("http://", "https://")):
            if not base or base == "?":
                why = (
                    "a relative URL and no base URL the code names" if not base else "the base URL is built at run time"
                )
                if url.startswith("{"):
                    why = "the URL's scheme and host are built at run time"
                return self._unresolved(node, via, why)
            url = base.rstrip("/") + "/" + url.lstrip("/")
        scheme_host = url.split("://", 1)[1].partition("/")[0] if "://" in url else ""
        if "{" in scheme_host or not scheme_host:
            return self._unresolved(node, via, "the URL's host is built at run time")
        whole = _whole_path(url)
        if whole:
            # ``${BASE}${path}`` in a request helper: the placeholder stands for a path, not a segment.
            return self._unresolved(node, via, f"the path comes from {whole}, built at run time")
        stripped = strip_url(url)
        if stripped is None:
            return self._unresolved(node, via, "not an http(s) URL")
        if not method:
            return self._unresolved(node, via, "the HTTP method is computed at run time")
        return self._observed(node, method, stripped, via=via)

    # -- results ----------------------------------------------------------------------------------

    def _observed(
        self, node: Node, method: str, url: str, *, operation: str = "", via: str = "", spec: str = "", tool: str = ""
    ) -> ObservedCall:
        return ObservedCall(
            time="",
            method=method,
            url=url,
            tool=tool,
            fmt=EvidenceFormat.CODE,
            source=self.label,
            entry=node.start_point[0] + 1,
            operation=operation,
            via=via,
            spec=spec,
        )

    def _unresolved(self, node: Node, via: str, reason: str, operation: str = "") -> ObservedCall | UnresolvedCall:
        line = node.start_point[0] + 1
        marked = self._marker_call(line, via or "marker")
        if marked is not None:
            return marked
        return UnresolvedCall(
            self.label, line, via, reason, one_line(self.text(node), max_len=160), operation=operation
        )

    def _marked(self, node: Node, claimed: set[int]) -> ObservedCall | None:
        """A call the reader sees no client in, named by a marker on its line or the line above that no
        other call used: the author says what it is (``client[method](...)``)."""
        line = node.start_point[0] + 1
        for at in (line, line - 1):
            if at in self.comments and at not in claimed:
                marked = self._marker_call(line, "marker")
                if marked is not None:
                    claimed.add(at)
                return marked
        return None

    def _marker_call(self, line: int, via: str) -> ObservedCall | None:
        """The call a marker on ``line`` (or the one above) names, as the reader yields it."""
        named = self._marker(line)
        if named is None:
            return None
        method, url, operation, tool = named
        return ObservedCall(
            time="",
            method=method,
            url=url,
            tool=tool,
            fmt=EvidenceFormat.CODE,
            source=self.label,
            entry=line,
            operation=operation,
            via=via,
        )

    def _marker(self, line: int) -> tuple[str, str, str, str] | None:
        """(method, url, operation, tool) of ``// ramscope: OPERATION``, ``// ramscope: METHOD URL`` or
        ``// ramscope: tool NAME @ URL`` on the line or the one above."""
        for at in (line, line - 1):
            body = self.comments.get(at)
            if body is None:
                continue
            said = body.split(_MARKER, 1)[1].strip().removesuffix("*/").strip()
            parts = said.split()
            if len(parts) == 4 and parts[0] == "tool" and parts[2] == "@":  # the Python reader's form too
                url = strip_url(parts[3])
                return ("tools/call", url, "", parts[1]) if url is not None else None
            if len(parts) == 2 and parts[0].upper() in _VERBS:
                verb = parts[0].upper()
                url = strip_url(parts[1])
                if url is not None:
                    return verb, url, "", ""
                if parts[1].startswith("/"):
                    return verb, "", f"{verb} {parts[1]}", ""
            if len(parts) == 1 and len(parts[0]) <= 200:
                return "", "", parts[0], ""
        return None


def _known_module(mod: str) -> bool:
    return mod in HTTP_LIBS or mod.startswith(_KNOWN_MODULES)


def _whole_path(url: str) -> str:
    """The name of a placeholder in ``url``'s path that stands for a whole path (``{path}``, ``{endpoint}``,
    ``{url}``), else ""."""
    path = "/" + url.split("://", 1)[1].partition("/")[2].partition("?")[0]
    at = 0
    while (i := path.find("{", at)) >= 0:
        name = path[i + 1 : path.find("}", i) if "}" in path[i:] else len(path)]
        low = name.lower()
        glued = path[i - 1] != "/" or i == 1  # ``/v1{path}``, or the whole path after the host
        if any(w in low for w in ("url", "endpoint", "route", "uri")) or ("path" in low and glued):
            return name
        at = i + 1
    return ""


def _via(v: Value) -> str:
    base = v.base if isinstance(v, Chain) else v
    if isinstance(base, Cli):
        return _VIA.get(base.kind, base.kind)
    return ""


def _url_reason(reason: str) -> str:
    if reason.startswith("the URL"):
        return reason
    if reason.startswith("the environment variable"):
        return f"the URL comes from {reason}"
    if reason == "the value is computed at run time":
        return "the URL is built at run time"
    if reason.endswith(", a parameter"):
        return f"the URL comes from {reason}"
    return reason


def _google_api_named(name: str) -> str:
    """A client variable named for its API (``gmail``, ``calendarClient``, ``this.drive``)."""
    base = name.removeprefix("this.")
    for suffix in ("Client", "Service", "Api", "API", "client", "service"):
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
    base = base.lower()
    return base if base in _GOOGLE_API_NAMES else ""


#: SDKs read from a method table (``data/js-<kind>-methods.json``), and how a call names them.
_SDK_VIA = {
    "stripe": "stripe",
    "notion": "notionhq-client",
    "linear": "linear-sdk",
    "asana": "asana",
    "gapic": "google-apps",
}
#: Google Workspace client library classes, and the words a variable holding one is named with.
_GAPIC_STEMS = {
    "ChatServiceClient": ("chat",),
    "SpacesServiceClient": ("meet", "space"),
    "ConferenceRecordsServiceClient": ("meet", "conference", "record"),
}
_VIA = {
    "google": "googleapis",
    "octokit": "octokit",
    "slack": "slack-web-api",
    "graph": "microsoft-graph-client",
    "graph-request": "microsoft-graph-client",
    "kiota": "msgraph-sdk",
    "mcp": "mcp-sdk",
    "a2a": "a2a-js",
}
#: SDK helpers that are no Web API method themselves: what they end in. ``files.uploadV2`` gets an
#: upload URL (``files.getUploadURLExternal``) and completes it (``files.completeUploadExternal``);
#: both need ``files:write``, so the completing call stands for the site.
_SLACK_HELPERS = {"files.uploadV2": "files.completeUploadExternal", "filesUploadV2": "files.completeUploadExternal"}
_A2A_METHODS = {
    "sendMessage": "message/send",
    "sendMessageStream": "message/stream",
    "getTask": "tasks/get",
    "cancelTask": "tasks/cancel",
    "resubscribeTask": "tasks/resubscribe",
    "setTaskPushNotificationConfig": "tasks/pushNotificationConfig/set",
    "getTaskPushNotificationConfig": "tasks/pushNotificationConfig/get",
}
#: Google APIs a client variable is commonly named for (the names are the Discovery names).
_GOOGLE_API_NAMES = frozenset(
    {
        "gmail",
        "calendar",
        "drive",
        "sheets",
        "docs",
        "slides",
        "forms",
        "people",
        "tasks",
        "youtube",
        "admin",
        "chat",
        "classroom",
        "keep",
        "meet",
        "photoslibrary",
        "script",
        "storage",
        "bigquery",
        "analytics",
        "analyticsdata",
        "searchconsole",
        "webmasters",
        "blogger",
        "books",
        "licensing",
        "reseller",
        "groupssettings",
        "vault",
        "androidpublisher",
    }
)
#: Top-level Graph request builders (the first member of a Kiota chain below the client).
_GRAPH_ROOTS = frozenset(
    {
        "me",
        "users",
        "groups",
        "drives",
        "sites",
        "teams",
        "chats",
        "applications",
        "servicePrincipals",
        "devices",
        "directoryObjects",
        "communications",
        "solutions",
        "identity",
        "policies",
        "security",
        "planner",
        "subscriptions",
        "organization",
        "auditLogs",
        "reports",
        "search",
        "admin",
        "deviceManagement",
        "education",
        "print",
        "places",
        "shares",
        "contacts",
        "invitations",
    }
)
