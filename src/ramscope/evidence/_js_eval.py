"""What a JavaScript / TypeScript expression statically stands for, read from a tree-sitter tree.

The code reader (:mod:`.code_js`) asks what a call's callee and arguments are: a string (a URL, a
route), an imported module's member, an SDK client made by a known constructor or factory, a member
chain on such a client, or something that cannot be told. Nothing here runs the code: values are
folded from the tree alone, one file at a time, names looked up in a flat table of the file's own
bindings (imports, ``const``/``let``/``var``, assignments, class fields, typed parameters). Every
walk is bounded in depth, and a name bound to itself (``url = url + "/x"``) is cut, not followed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urljoin

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = [
    "OPAQUE",
    "Binding",
    "Bindings",
    "Chain",
    "Cli",
    "Evaluator",
    "Fn",
    "Free",
    "Obj",
    "Source",
    "Str",
    "Sym",
    "Unknown",
    "Value",
    "placeholder",
    "string_value",
]

#: Wrappers that leave the value as it is (``await x``, ``(x)``, ``x!``, ``x as T``).
_TRANSPARENT = frozenset(
    {
        "await_expression",
        "parenthesized_expression",
        "non_null_expression",
        "as_expression",
        "satisfies_expression",
        "type_assertion",
    }
)


@dataclass(frozen=True, slots=True)
class Str:
    """A string whose unknown parts are ``{name}`` placeholders (a template literal's ``${id}``)."""

    text: str
    #: False once any part is a placeholder.
    literal: bool = True


@dataclass(frozen=True, slots=True)
class Sym:
    """An imported module or a member of one: ``("googleapis", "google")``, ``("axios",)``."""

    path: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Cli:
    """An SDK client or HTTP client instance the code made: its family and what the maker said."""

    kind: str
    attrs: tuple[tuple[str, str], ...] = ()
    #: The binding it was read through (``client``, ``this.client``): MCP's ``connect`` is keyed by it.
    key: str = ""

    def get(self, name: str) -> str:
        return next((v for k, v in self.attrs if k == name), "")


@dataclass(frozen=True, slots=True)
class Free:
    """A name the file never binds: a global (``fetch``), an injected parameter (``github`` in
    github-script), a destructured handler argument (``({ client }) => ...``)."""

    name: str
    #: "param" for a parameter of a function in the file, else "" (a global, another module's result).
    why: str = ""


@dataclass(frozen=True, slots=True)
class Chain:
    """Members read (and maybe called) below a client or a free name: ``users.byUserId(x).messages``."""

    base: Cli | Free
    #: (member, called) pairs, in order; ``args`` are the last call's argument nodes.
    names: tuple[tuple[str, bool], ...]
    args: tuple[int, ...] = ()

    def plain(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.names)


@dataclass(frozen=True, slots=True)
class Obj:
    """An object literal: its properties read on demand (``{version: "v1", auth}``)."""

    props: tuple[tuple[str, int], ...]

    def node_id(self, name: str) -> int | None:
        return next((v for k, v in self.props if k == name), None)


@dataclass(frozen=True, slots=True)
class Fn:
    """A function the file defines: calling it gives what its ``return`` statements agree on (a factory
    ``function gmailFor(auth) { return google.gmail({version: "v1", auth}); }``)."""

    node: int


@dataclass(frozen=True, slots=True)
class Unknown:
    """What cannot be told statically, and why (in words for the finding)."""

    reason: str = "the value is computed at run time"


Value = Str | Sym | Cli | Free | Chain | Obj | Fn | Unknown

#: The result of calling what the file cannot see into: a global, or a function of another module.
OPAQUE = Unknown("the result of a function this file does not define")


class Source:
    """A node's text, sliced from the file's bytes. (``Node.text`` of a tree parsed through a read
    callback, as :mod:`.code_js` parses to bound the time, asks the callback again for every node.)"""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __call__(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def string_value(text: Source, node: Node) -> str:
    """A string literal's value, escapes of the common kinds decoded."""
    out: list[str] = []
    for c in node.named_children:
        if c.type == "string_fragment":
            out.append(text(c))
        elif c.type == "escape_sequence":
            out.append(_unescape(text(c)))
    return "".join(out)


def _unescape(esc: str) -> str:
    simple = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "b": "\b", "f": "\f", "v": "\v"}
    if len(esc) == 2:
        return simple.get(esc[1], esc[1])
    if esc.startswith(("\\u{", "\\u", "\\x")):
        digits = esc[2:].strip("{}")
        try:
            return chr(int(digits, 16))
        except (ValueError, OverflowError):
            return "?"
    return esc[1:]


#: One binding: what it is bound to, the byte range of the scope it lives in, and whether it declares
#: the name there (``const``/``let``/a parameter/an import) or assigns an outer one (``x = ...``).
Binding = tuple[tuple[str, ...], int, int, bool]


@dataclass
class Bindings:
    """The file's own names, each with the scope it is bound in (a name in one function is not the
    same name in another)."""

    #: name (or ``this.name``) -> bindings, whose entries are ("expr", node id) | ("member", node id,
    #: prop) | ("type", node id) | ("import", module, member or "") | ("param",) | ("none",).
    names: dict[str, list[Binding]] = field(default_factory=dict)

    def add(self, name: str, entry: tuple[str, ...], scope: tuple[int, int] = (0, 1 << 62), decl: bool = True) -> None:
        entries = self.names.setdefault(name, [])
        b = (entry, scope[0], scope[1], decl)
        if len(entries) < 64 and b not in entries:
            entries.append(b)

    def visible(self, name: str, at: int | None) -> tuple[tuple[int, int], list[tuple[str, ...]]] | None:
        """The bindings of ``name`` that a use at byte ``at`` sees: the declarations of the innermost
        scope around it that declares the name, and the assignments inside that scope (``let c;
        function init() { c = make(); }``); ``None`` when no binding is in sight."""
        found = self.names.get(name)
        if not found:
            return None
        if at is None or name.startswith("this."):
            return (0, 0), [b[0] for b in found]
        decls = [b for b in found if b[3] and b[1] <= at < b[2]]
        if not decls:
            assigns = [b for b in found if not b[3] and b[1] <= at < b[2]]
            return ((0, 0), [b[0] for b in assigns]) if assigns else None
        start = max(b[1] for b in decls)
        end = min(b[2] for b in decls if b[1] == start)
        chosen = [b[0] for b in decls if b[1] == start and b[2] == end]
        chosen += [b[0] for b in found if not b[3] and start <= b[1] and b[2] <= end]
        return (start, end), chosen


class Evaluator:
    """Folds expressions to :data:`Value` with memo and bounds."""

    def __init__(self, text: Source, nodes: dict[int, Node], bindings: Bindings, max_depth: int) -> None:
        self.text = text
        self.nodes = nodes
        self.bindings = bindings
        self.max_depth = max_depth
        self._memo: dict[int, Value] = {}
        self._names: dict[tuple[str, int, int], Value] = {}
        self._visiting: set[tuple[str, int, int]] = set()

    # -- names -----------------------------------------------------------------------------------

    def name(self, key: str, depth: int = 0, at: int | None = None) -> Value:
        seen = self.bindings.visible(key, at)
        if seen is None:
            return Free(key) if "." not in key else Unknown(f"{key} is never assigned in this file")
        scope, entries = seen
        memo = (key, *scope)
        if memo in self._names:
            return self._names[memo]
        if memo in self._visiting or depth > self.max_depth:
            return Unknown(f"{key} is built from itself")
        self._visiting.add(memo)
        try:
            values = [self._entry(e, key, depth + 1) for e in entries if e[0] != "none"]
        finally:
            self._visiting.discard(memo)
        known = [v for v in values if not isinstance(v, Unknown)]
        if not values:
            out: Value = Unknown(f"{key} is never assigned in this file")
        elif all(v == OPAQUE for v in values):
            # What a function of another module (or a global one) returns: as unknown as an injected
            # name, and read as one (``const chatClient = await createClient()``).
            out = Free(key)
        elif not known and all(e[0] == "type" for e in entries):
            out = Unknown(f"{key.removeprefix('this.')}, a parameter")
        elif not known:
            out = values[0]
        elif _agree(known, len(values)):
            out = known[0]
        else:
            out = Unknown(f"{key} is bound to several different values")
        if isinstance(out, Cli) and not out.key:
            out = Cli(out.kind, out.attrs, key)
        self._names[memo] = out
        return out

    def _entry(self, entry: tuple[str, ...], key: str, depth: int) -> Value:
        kind = entry[0]
        if kind == "param":
            return Free(key, "param")
        if kind == "import":
            return Sym((entry[1], entry[2])) if entry[2] else Sym((entry[1],))
        node = self.nodes.get(int(entry[1]))
        if node is None:
            return Unknown()
        if kind == "expr":
            return self.eval(node, depth)
        if kind == "member":
            return self.member(self.eval(node, depth), entry[2], node, depth)
        if kind == "type":
            return self._type(node, depth)
        return Unknown()

    def _type(self, node: Node, depth: int) -> Value:
        """A parameter's type annotation as the client it declares (``gmail: gmail_v1.Gmail``)."""
        t = node.named_children[0] if node.type == "type_annotation" and node.named_children else node
        if t.type == "nested_type_identifier":
            module = t.child_by_field_name("module")
            name = t.child_by_field_name("name")
            if module is not None and name is not None:
                mod = self.text(module)
                api, sep, version = mod.partition("_")
                base = self.name(mod.split(".")[0], depth + 1, t.start_byte)
                if (
                    sep
                    and isinstance(base, Sym)
                    and (base.path[0] == "googleapis" or base.path[0].startswith("@googleapis/"))
                ):
                    return Cli("google", (("api", api), ("version", version)))
                if isinstance(base, Sym):
                    return self.construct(Sym((*base.path, *mod.split(".")[1:], self.text(name))), depth)
            return Unknown("a type the reader does not know")
        if t.type == "type_identifier":
            base = self.name(self.text(t), depth + 1, t.start_byte)
            if isinstance(base, Sym):
                return self.construct(base, depth)
            return Unknown("a type the reader does not know")
        if t.type == "generic_type":
            # ReturnType<typeof github.getOctokit>, InstanceType<typeof Octokit>
            name = t.child_by_field_name("name")
            targs = t.child_by_field_name("type_arguments")
            if name is not None and targs is not None and self.text(name) in ("ReturnType", "InstanceType"):
                for q in targs.named_children:
                    if q.type == "type_query" and q.named_children:
                        target = self.eval(q.named_children[0], depth + 1)
                        if isinstance(target, Sym):
                            return (
                                self.construct(target, depth)
                                if self.text(name) == "InstanceType"
                                else self.call_sym(target, (), depth)
                            )
        return Unknown("a type the reader does not know")

    # -- expressions -----------------------------------------------------------------------------

    def eval(self, node: Node, depth: int = 0) -> Value:
        if depth > self.max_depth:
            return Unknown("the expression is nested too deeply to follow")
        got = self._memo.get(node.id)
        if got is not None:
            return got
        out = self._eval(node, depth + 1)
        if not (isinstance(out, Unknown) and "too deeply" in out.reason):
            self._memo[node.id] = out
        return out

    def _eval(self, node: Node, depth: int) -> Value:
        t = node.type
        while t in _TRANSPARENT:
            inner = next((c for c in node.named_children if c.type not in ("type_annotation",)), None)
            if inner is None:
                return Unknown()
            node, t = inner, inner.type
            if t not in _TRANSPARENT:
                return self.eval(node, depth)
        if t == "string":
            return Str(string_value(self.text, node))
        if t == "template_string":
            return self._template(node, depth)
        if t == "identifier":
            return self.name(self.text(node), depth, node.start_byte)
        if t == "this":
            return Unknown("this")
        if t == "binary_expression":
            return self._binary(node, depth)
        if t == "member_expression":
            obj = node.child_by_field_name("object")
            prop = node.child_by_field_name("property")
            if obj is None or prop is None:
                return Unknown()
            if obj.type == "this":
                return self.name("this." + self.text(prop).lstrip("#"), depth)
            return self.member(self.eval(obj, depth), self.text(prop), obj, depth)
        if t == "subscript_expression":
            obj = node.child_by_field_name("object")
            idx = node.child_by_field_name("index")
            if obj is None or idx is None:
                return Unknown()
            key = self.eval(idx, depth)
            if isinstance(key, Str) and key.literal:
                return self.member(self.eval(obj, depth), key.text, obj, depth)
            base = self.eval(obj, depth)
            if isinstance(base, Cli | Chain):
                return Unknown("the member called is computed at run time")
            return Unknown()
        if t == "call_expression":
            fn = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            if fn is None:
                return Unknown()
            arg_nodes = tuple(a for a in args.named_children if a.type != "comment") if args is not None else ()
            if fn.type == "import":
                return Unknown()
            return self.call(self.eval(fn, depth), arg_nodes, depth)
        if t == "new_expression":
            ctor = node.child_by_field_name("constructor")
            args = node.child_by_field_name("arguments")
            if ctor is None:
                return Unknown()
            arg_nodes = tuple(a for a in args.named_children if a.type != "comment") if args is not None else ()
            return self.new(self.eval(ctor, depth), arg_nodes, depth)
        if t in _FUNCTIONS:
            self.nodes[node.id] = node
            return Fn(node.id)
        if t == "object":
            props: list[tuple[str, int]] = []
            for c in node.named_children:
                if c.type == "pair":
                    k = c.child_by_field_name("key")
                    v = c.child_by_field_name("value")
                    if k is not None and v is not None:
                        props.append((string_value(self.text, k) if k.type == "string" else self.text(k), v.id))
                        self.nodes[v.id] = v
                elif c.type == "shorthand_property_identifier":
                    props.append((self.text(c), c.id))
                    self.nodes[c.id] = c
                elif c.type == "spread_element":
                    props.append(("...", c.id))  # any key may come from it
            return Obj(tuple(props))
        if t == "shorthand_property_identifier":
            return self.name(self.text(node), depth, node.start_byte)
        if t == "ternary_expression":
            a = node.child_by_field_name("consequence")
            b = node.child_by_field_name("alternative")
            if a is not None and b is not None:
                va, vb = self.eval(a, depth), self.eval(b, depth)
                if va == vb:
                    return va
                if isinstance(va, Str) and isinstance(vb, Str) and va.text.split("?")[0] == vb.text.split("?")[0]:
                    # ``org ? `${base}/forks?organization=${org}` : `${base}/forks` ``: the query differs
                    return Str(va.text.split("?")[0], va.literal and vb.literal)
            return Unknown("the value depends on a condition")
        return Unknown()

    def _template(self, node: Node, depth: int) -> Value:
        parts: list[str] = []
        literal = True
        for c in node.named_children:
            if c.type == "string_fragment":
                parts.append(self.text(c))
            elif c.type == "escape_sequence":
                parts.append(_unescape(self.text(c)))
            elif c.type == "template_substitution":
                inner = c.named_children[0] if c.named_children else None
                v = self.eval(inner, depth) if inner is not None else Unknown()
                if isinstance(v, Str):
                    parts.append(v.text)
                    literal = literal and v.literal
                else:
                    parts.append("{" + (placeholder(self.text, inner) if inner is not None else "param") + "}")
                    literal = False
        return Str("".join(parts), literal)

    def _binary(self, node: Node, depth: int) -> Value:
        op = node.child_by_field_name("operator")
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        if op is None or left is None or right is None:
            return Unknown()
        if self.text(op) in ("||", "??"):
            a = self.eval(left, depth)
            if not isinstance(a, Unknown | Free):
                return a
            # ``process.env.GITLAB_API_URL || "https://gitlab.com/api/v4"``: what the code calls unless
            # configured otherwise is the default it names; read as that, a literal only.
            b = self.eval(right, depth)
            if isinstance(a, Unknown) and a.reason.startswith("the environment variable") and isinstance(b, Str):
                return b
            return Unknown("the value may come from the environment or a default")
        if self.text(op) != "+":
            return Unknown()
        a, b = self.eval(left, depth), self.eval(right, depth)
        if not isinstance(a, Str) and not isinstance(b, Str):
            return Unknown()
        sa = a if isinstance(a, Str) else Str("{" + placeholder(self.text, left) + "}", False)
        sb = b if isinstance(b, Str) else Str("{" + placeholder(self.text, right) + "}", False)
        return Str(sa.text + sb.text, sa.literal and sb.literal)

    # -- members and calls -----------------------------------------------------------------------

    def member(self, base: Value, prop: str, obj_node: Node, depth: int) -> Value:
        if isinstance(base, Sym):
            if len(base.path) == 1 and prop == "default":
                return base
            return Sym((*base.path, prop))
        if isinstance(base, Cli):
            if base.kind == "bolt" and prop == "client":
                return Cli("slack")
            if base.kind == "url" and prop == "href":
                return Str(base.get("url"), base.get("literal") == "1")
            return Chain(base, ((prop, False),))
        if isinstance(base, Free):
            if base.name == "process" and prop == "env":
                return Unknown("process.env")
            if base.name in ("globalThis", "window", "self", "global") and prop in _GLOBAL_HTTP:
                return Free(prop)
            return Chain(base, ((prop, False),))
        if isinstance(base, Chain):
            return Chain(base.base, (*base.names, (prop, False)))
        if isinstance(base, Obj):
            nid = base.node_id(prop)
            if nid is not None and nid in self.nodes:
                return self.eval(self.nodes[nid], depth)
            return Unknown()
        if isinstance(base, Unknown) and base.reason == "process.env":
            return Unknown(f"the environment variable {prop}")
        if isinstance(base, Str) and prop in ("toString", "trim"):
            # ``url.toString()``: called below (Chain on a URL), the string itself
            url = Cli("url", (("url", base.text), ("literal", "1" if base.literal else "")))
            return Chain(url, (("toString", False),))
        return Unknown()

    def call(self, callee: Value, args: tuple[Node, ...], depth: int) -> Value:
        for a in args:
            self.nodes[a.id] = a
        ids = tuple(a.id for a in args)
        local = isinstance(callee, Fn | Free) or (isinstance(callee, Sym) and callee.path[0].startswith("."))
        if local and args and "url" in self._callee_name(callee).lower():
            # ``buildUrl("https://api.github.com/search/code", params)``: a URL helper of the agent's own
            # given an absolute URL keeps its scheme, host and path (it adds the query, not kept).
            first = self.eval(args[0], depth)
            if isinstance(first, Str) and first.text.lower().startswith(("https://", "http://")):
                return Str(first.text, first.literal)
        if isinstance(callee, Sym):
            return self.call_sym(callee, args, depth)
        if isinstance(callee, Free) and callee.name == "require" and args:
            mod = self.eval(args[0], depth)
            if isinstance(mod, Str) and mod.literal:
                return Sym((mod.text,))
            return Unknown()
        if isinstance(callee, Chain):
            *head, (last, _) = callee.names
            if isinstance(callee.base, Cli) and callee.base.kind == "url" and last == "toString":
                return Str(callee.base.get("url"), callee.base.get("literal") == "1")
            made = self._factory(callee, args, depth)
            if made is not None:
                return made
            return Chain(callee.base, (*head, (last, True)), ids)
        if isinstance(callee, Fn):
            return self._returns(callee, depth)
        if isinstance(callee, Free | Sym):
            return OPAQUE
        return Unknown()

    def _callee_name(self, callee: Value) -> str:
        if isinstance(callee, Free):
            return callee.name
        if isinstance(callee, Sym):
            return callee.path[-1]
        if isinstance(callee, Fn):
            node = self.nodes.get(callee.node)
            name = node.child_by_field_name("name") if node is not None else None
            if (
                name is None
                and node is not None
                and node.parent is not None
                and node.parent.type == "variable_declarator"
            ):
                name = node.parent.child_by_field_name("name")
            return self.text(name) if name is not None else ""
        return ""

    def _returns(self, fn: Fn, depth: int) -> Value:
        node = self.nodes.get(fn.node)
        body = node.child_by_field_name("body") if node is not None else None
        if body is None:
            return Unknown()
        if body.type != "statement_block":  # an arrow function's expression body
            return self.eval(body, depth)
        found: list[Value] = []
        stack = list(reversed(body.named_children))
        seen = 0
        while stack and seen < 4096 and len(found) < 16:
            n = stack.pop()
            seen += 1
            if n.type in _FUNCTIONS or n.type == "class_declaration":
                continue  # a nested function's returns are its own
            if n.type == "return_statement":
                if n.named_children:
                    found.append(self.eval(n.named_children[0], depth))
                continue
            stack.extend(reversed(n.named_children))
        known = [v for v in found if not isinstance(v, Unknown)]
        if known and _agree(known, len(found)):
            return known[0]
        return Unknown("the function's result is computed at run time")

    def _factory(self, chain: Chain, args: tuple[Node, ...], depth: int) -> Value | None:
        """Clients that clients make: ``axios.create`` is a Sym call; these are members of instances."""
        base, names = chain.base, chain.plain()
        if not isinstance(base, Cli):
            return None
        if base.kind == "http" and names in (("create",), ("extend",)):
            cfg = self.eval(args[0], depth) if args else Unknown()
            prefix = self._base_url(cfg, depth) or base.get("base")
            return Cli("http", (("lib", base.get("lib")), ("base", prefix)))
        if base.kind == "a2a-factory" and names and names[-1] in ("createFromUrl", "createFromAgentCardUrl"):
            return Cli("a2a", (("url", self._url_arg(args, depth)),))
        if base.kind == "graph" and names == ("api",):
            path = self.eval(args[0], depth) if args else Unknown()
            if isinstance(path, Str):
                return Cli("graph-request", (("path", path.text), ("version", base.get("version") or "v1.0")))
            return Cli("graph-request", (("path", ""), ("version", base.get("version") or "v1.0")))
        if base.kind == "graph-request" and len(names) == 1:
            if names[0] in _GRAPH_MODIFIERS:
                return base
            if names[0] == "version" and args:
                v = self.eval(args[0], depth)
                ver = v.text if isinstance(v, Str) and v.literal else "?"
                return Cli("graph-request", (("path", base.get("path")), ("version", ver)))
        return None

    def _url_arg(self, args: tuple[Node, ...], depth: int) -> str:
        if not args:
            return ""
        v = self.eval(args[0], depth)
        if isinstance(v, Cli) and v.kind == "url":
            return v.get("url") if v.get("literal") == "1" else ""
        return v.text if isinstance(v, Str) and v.literal else ""

    def _base_url_key(self, obj: Obj, key: str, depth: int) -> str:
        nid = obj.node_id(key)
        if nid is None or nid not in self.nodes:
            return ""
        v = self.eval(self.nodes[nid], depth)
        if isinstance(v, Cli) and v.kind == "url":
            return v.get("url") if v.get("literal") == "1" else ""
        return v.text if isinstance(v, Str) and v.literal else ""

    def _base_url(self, cfg: Value, depth: int) -> str:
        if not isinstance(cfg, Obj):
            return ""
        for key in ("baseURL", "baseUrl", "prefixUrl", "prefixURL"):
            nid = cfg.node_id(key)
            if nid is not None and nid in self.nodes:
                v = self.eval(self.nodes[nid], depth)
                if isinstance(v, Str):
                    return v.text
                if isinstance(v, Cli) and v.kind == "url":
                    return v.get("url")
                return "?"
        return ""

    def call_sym(self, sym: Sym, args: tuple[Node, ...], depth: int) -> Value:
        mod, rest = sym.path[0], sym.path[1:]
        for a in args:
            self.nodes[a.id] = a
        if mod == "googleapis" and len(rest) == 2 and rest[0] == "google" and rest[1] not in _GOOGLE_NOT_APIS:
            return Cli("google", (("api", rest[1]), ("version", self._google_version(args, depth))))
        if mod.startswith("@googleapis/") and len(rest) == 1 and rest[0] == mod.split("/", 1)[1]:
            return Cli("google", (("api", rest[0]), ("version", self._google_version(args, depth))))
        if mod == "@actions/github" and rest == ("getOctokit",):
            return Cli("octokit")
        if _is_octokit_class(sym) and rest and rest[-1] == "plugin":
            return Sym(sym.path[:-1])
        if mod == "@microsoft/microsoft-graph-client" and rest in (
            ("Client", "init"),
            ("Client", "initWithMiddleware"),
        ):
            return Cli("graph", (("version", "v1.0"),))
        if mod.startswith("@microsoft/msgraph-sdk") and rest in (
            ("createGraphServiceClient",),
            ("GraphServiceClient", "init"),
        ):
            return Cli("kiota")
        if mod.startswith("@a2a-js/sdk") and rest in (("A2AClient", "fromCardUrl"),):
            return Cli("a2a", (("url", self._url_arg(args, depth)),))
        if mod == "stripe" and not rest:
            return Cli("stripe")
        if (
            (mod == "ai" or mod.startswith("@ai-sdk/"))
            and rest
            and rest[-1] in ("experimental_createMCPClient", "createMCPClient")
        ):
            # The AI SDK's MCP client: ``{ transport: { type: "sse", url } }`` (or a transport object)
            cfg = self.eval(args[0], depth) if args else Unknown()
            url = ""
            if isinstance(cfg, Obj) and (nid := cfg.node_id("transport")) is not None and nid in self.nodes:
                t = self.eval(self.nodes[nid], depth)
                url = (
                    self._base_url_key(t, "url", depth)
                    if isinstance(t, Obj)
                    else t.get("url")
                    if isinstance(t, Cli)
                    else ""
                )
            return Cli("ai-mcp", (("url", url),))
        lib = _HTTP_LIBS.get(mod)
        if lib is not None and rest in (("create",), ("extend",)) and lib in ("axios", "got", "ky"):
            cfg = self.eval(args[0], depth) if args else Unknown()
            return Cli("http", (("lib", lib), ("base", self._base_url(cfg, depth))))
        return OPAQUE if mod.startswith(".") else Unknown()

    def _google_version(self, args: tuple[Node, ...], depth: int) -> str:
        if not args:
            return ""
        v = self.eval(args[0], depth)
        if isinstance(v, Str) and v.literal:
            return v.text
        if isinstance(v, Obj):
            nid = v.node_id("version")
            if nid is not None and nid in self.nodes:
                ver = self.eval(self.nodes[nid], depth)
                if isinstance(ver, Str) and ver.literal:
                    return ver.text
        return ""

    def new(self, ctor: Value, args: tuple[Node, ...], depth: int) -> Value:
        for a in args:
            self.nodes[a.id] = a
        if isinstance(ctor, Free) and ctor.name == "URL":
            return self._new_url(args, depth)
        if isinstance(ctor, Sym):
            return self.construct(ctor, depth, args)
        return Unknown()

    def _new_url(self, args: tuple[Node, ...], depth: int) -> Value:
        if not args:
            return Unknown()
        first = self.eval(args[0], depth)
        if not isinstance(first, Str):
            return Unknown("the URL is built at run time")
        url, literal = first.text, first.literal
        if len(args) > 1:
            base = self.eval(args[1], depth)
            if isinstance(base, Cli) and base.kind == "url":
                base = Str(base.get("url"), base.get("literal") == "1")
            if not isinstance(base, Str):
                return Unknown("the base URL is built at run time")
            url, literal = urljoin(base.text, first.text), literal and base.literal
        return Cli("url", (("url", url), ("literal", "1" if literal else "")))

    def construct(self, sym: Sym, depth: int, args: tuple[Node, ...] = ()) -> Value:
        """``new X(...)`` (or a parameter typed ``X``) for the SDK classes the reader knows."""
        mod, rest = sym.path[0], sym.path[1:]
        if _is_octokit_class(sym):
            cfg = self.eval(args[0], depth) if args else Unknown()
            base = self._base_url(cfg, depth)
            return Cli("octokit", (("base", base),) if base else ())
        if mod == "@slack/web-api" and rest == ("WebClient",):
            return Cli("slack")
        if mod == "@slack/bolt" and rest == ("App",):
            return Cli("bolt")
        if mod == "@microsoft/microsoft-graph-client" and rest == ("Client",):
            return Cli("graph", (("version", "v1.0"),))
        if mod.startswith("@microsoft/msgraph-sdk") and rest == ("GraphServiceClient",):
            return Cli("kiota")
        if mod.startswith("@modelcontextprotocol/") and rest == ("Client",):
            return Cli("mcp")
        if mod.startswith("@modelcontextprotocol/") and len(rest) == 1 and rest[0] in _MCP_TRANSPORTS:
            url = self._url_arg(args, depth) if rest[0] != "StdioClientTransport" else ""
            return Cli("mcp-transport", (("url", url), ("transport", rest[0])))
        if mod.startswith("@a2a-js/sdk") and rest == ("A2AClient",):
            return Cli("a2a", (("url", self._url_arg(args, depth)),))
        if mod.startswith("@a2a-js/sdk") and rest == ("ClientFactory",):
            return Cli("a2a-factory")
        if mod == "stripe" and not rest:
            return Cli("stripe")
        if mod == "@notionhq/client" and rest == ("Client",):
            return Cli("notion")
        if mod == "@linear/sdk" and rest == ("LinearClient",):
            return Cli("linear")
        if mod.startswith("@google-apps/") and rest and rest[-1].endswith("ServiceClient"):
            return Cli("gapic", (("api", rest[-1]),))
        if mod == "asana" and len(rest) == 1 and rest[0].endswith("Api"):
            return Cli("asana", (("api", rest[0]),))
        return Unknown()

    def walk_args(self, ids: tuple[int, ...]) -> Iterator[Node]:
        for i in ids:
            n = self.nodes.get(i)
            if n is not None:
                yield n


def _agree(known: Sequence[Value], total: int) -> bool:
    """Several bindings of one name tell one value: all equal (and none unknown, unless it is a client
    or a module), or all clients of one family."""
    first = known[0]
    if all(v == first for v in known) and (len(known) == total or isinstance(first, Cli | Sym)):
        return True
    return isinstance(first, Cli) and all(isinstance(v, Cli) and v.kind == first.kind for v in known)


def placeholder(text: Source, node: Node) -> str:
    """The path parameter a substitution stands for: ``${owner}`` → owner, ``${user.id}`` → id,
    ``${encodeURIComponent(name)}`` → name."""
    n: Node | None = node
    for _ in range(16):
        if n is None:
            break
        if n.type in ("identifier", "property_identifier", "shorthand_property_identifier"):
            name = text(n)
            return name if name.isidentifier() and len(name) <= 64 else "param"
        if n.type == "member_expression":
            n = n.child_by_field_name("property")
        elif n.type == "call_expression":
            fn = n.child_by_field_name("function")
            if fn is not None and fn.type == "member_expression":  # ``${lat.toFixed(4)}`` → lat
                n = fn.child_by_field_name("object")
                continue
            args = n.child_by_field_name("arguments")
            n = args.named_children[0] if args is not None and args.named_children else None
        elif n.type in _TRANSPARENT:
            n = n.named_children[0] if n.named_children else None
        else:
            break
    return "param"


def _is_octokit_class(sym: Sym) -> bool:
    mod = sym.path[0]
    return (mod in ("@octokit/rest", "@octokit/core", "octokit", "@octokit/action") and "Octokit" in sym.path[1:2]) or (
        mod == "@actions/github" and sym.path[1:2] == ("GitHub",)
    )


_GLOBAL_HTTP = frozenset({"fetch", "axios"})
_FUNCTIONS = frozenset(
    {
        "arrow_function",
        "function_expression",
        "function",
        "function_declaration",
        "generator_function_declaration",
        "method_definition",
    }
)
_GOOGLE_NOT_APIS = frozenset({"auth", "options", "discover", "discoverAPI", "GoogleApis", "AuthPlus", "common"})
_GRAPH_MODIFIERS = frozenset(
    {
        "select",
        "expand",
        "filter",
        "orderby",
        "top",
        "skip",
        "skipToken",
        "count",
        "search",
        "query",
        "header",
        "headers",
        "option",
        "options",
        "middlewareOptions",
        "responseType",
    }
)
_MCP_TRANSPORTS = frozenset(
    {"StreamableHTTPClientTransport", "SSEClientTransport", "WebSocketClientTransport", "StdioClientTransport"}
)
#: Module specifier -> the HTTP library it is.
_HTTP_LIBS = {
    "axios": "axios",
    "got": "got",
    "ky": "ky",
    "node-fetch": "fetch",
    "undici": "fetch",
    "superagent": "superagent",
    "cross-fetch": "fetch",
    "isomorphic-fetch": "fetch",
    "https": "https",
    "http": "http",
    "node:https": "https",
    "node:http": "http",
}
HTTP_LIBS = _HTTP_LIBS
