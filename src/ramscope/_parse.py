"""Bounded, safe parsing of JSON and YAML documents written by strangers.

Every document ramscope reads (cards, policies, specs) goes through here, so the
bounds live in one place:

* size is checked before parsing;
* text must be UTF-8 (an optional BOM is dropped); the offending byte is named;
* JSON nesting is bounded by the parser (stdlib: the recursion limit; orjson: 1024),
  and then by ``Limits.max_depth``;
* YAML is loaded only with the safe loaders (libyaml's ``CSafeLoader`` when
  present, which also caps nesting at 1000); aliases are counted on the node
  graph *before* construction, so an alias bomb is refused in linear time and a
  recursive alias never reaches code that would walk it forever;
* documents read without positions (specs, tens of MB) take rapidyaml first, a
  5x faster path that builds the same values or hands the document to libyaml
  (anchors, aliases, tags, duplicate keys, errors: see "YAML, fast path");
* YAML scalars that the safe loader would turn into dates or bytes (or cannot build: a plain
  ``=``) stay strings,
  and mapping keys are strings, so YAML and JSON inputs give the same values;
* duplicate mapping keys are an error where ``strict_keys`` is set: which of two
  values "wins" differs between parsers, and a manifest whose meaning depends on
  the parser is not one to grant permissions from.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import yaml

from .diagnostics import escape_pointer_token
from .errors import InputError, LimitError

__all__ = [
    "CARD_LIMITS",
    "Limits",
    "ParsedDocument",
    "check_depth",
    "check_json_nodes",
    "json_nodes_at_most",
    "parse_bytes",
    "read_bytes",
    "read_document",
]

DocFormat = Literal["json", "yaml"]

_MiB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    max_bytes: int = 16 * _MiB
    max_depth: int = 200
    #: Nodes of the parsed document: YAML's graph once aliases are expanded (bounds alias bombs),
    #: JSON's values and keys as :func:`json_nodes_at_most` counts them (bounds a small body that
    #: builds a large value: ``[{},{},...]`` costs ~100 bytes of memory per 3 bytes of text).
    max_yaml_nodes: int = 2_000_000
    #: Duplicate keys are an error (cards, policies). Specs relax this.
    strict_keys: bool = True
    #: Record line/column of values (cards: yes, for diagnostics; large specs: no).
    positions: bool = True


CARD_LIMITS = Limits()


@dataclass(slots=True)
class ParsedDocument:
    value: Any
    format: DocFormat
    source: str
    text: str = field(repr=False)
    _positions: dict[str, tuple[int, int]] | None = field(default=None, repr=False)

    def position(self, pointer: str) -> tuple[int, int] | None:
        """1-based (line, column) of the value at ``pointer``, or of its nearest ancestor."""
        if self._positions is None:
            self._positions = json_positions(self.text) if self.format == "json" else {}
        ptr = pointer
        while True:
            pos = self._positions.get(ptr)
            if pos is not None:
                return pos
            if not ptr:
                return None
            ptr = ptr[: ptr.rfind("/")]


# --------------------------------------------------------------------------- reading


def read_bytes(path: str | os.PathLike[str], *, max_bytes: int) -> tuple[bytes, str]:
    """Read a file (``-`` is standard input) without ever holding more than ``max_bytes + 1``."""
    name = str(path)
    if name == "-":
        data = sys.stdin.buffer.read(max_bytes + 1)
        source = "<stdin>"
    else:
        source = name
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                if stat.S_ISDIR(st.st_mode):
                    raise InputError("is a directory, not a file", source=source)
                if stat.S_ISREG(st.st_mode) and st.st_size > max_bytes:
                    raise LimitError(
                        f"file is {st.st_size:,} bytes, over the limit of {max_bytes:,} bytes",
                        source=source,
                    )
                data = fh.read(max_bytes + 1)
        except FileNotFoundError:
            raise InputError("no such file", source=source) from None
        except IsADirectoryError:
            raise InputError("is a directory, not a file", source=source) from None
        except PermissionError:
            raise InputError("permission denied", source=source) from None
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", source=source) from None
    if len(data) > max_bytes:
        raise LimitError(f"input is over the limit of {max_bytes:,} bytes", source=source)
    return data, source


def read_document(
    path: str | os.PathLike[str], *, limits: Limits = CARD_LIMITS, fmt: DocFormat | None = None
) -> ParsedDocument:
    data, source = read_bytes(path, max_bytes=limits.max_bytes)
    if fmt is None and source != "<stdin>":
        suffix = os.path.splitext(source)[1].lower()
        fmt = "yaml" if suffix in (".yaml", ".yml") else "json" if suffix == ".json" else None
    return parse_bytes(data, source=source, limits=limits, fmt=fmt)


# --------------------------------------------------------------------------- parsing


def parse_bytes(
    data: bytes, *, source: str, limits: Limits = CARD_LIMITS, fmt: DocFormat | None = None
) -> ParsedDocument:
    """Parse JSON or YAML. ``fmt=None`` sniffs: ``{``/``[`` first means JSON, else YAML."""
    if len(data) > limits.max_bytes:
        raise LimitError(f"input is over the limit of {limits.max_bytes:,} bytes", source=source)
    text = _decode(data, source)
    if fmt is None:
        head = text.lstrip(" \t\r\n")[:1]
        fmt = "json" if head in ("{", "[") else "yaml"
        if fmt == "json":
            try:
                return _parse_json(text, source, limits)
            except LimitError:
                # Past a bound as JSON is past it as YAML too: YAML must not be the way around it
                # (a card nested 70 deep was read as YAML flow style, with no depth bound).
                raise
            except InputError:
                # YAML flow style also starts with "{": give YAML a chance, but if it
                # fails too, the JSON error is the one that explains the file.
                try:
                    return _parse_yaml(text, source, limits)
                except LimitError:
                    raise
                except InputError:
                    pass
                return _parse_json(text, source, limits)
    if fmt == "json":
        return _parse_json(text, source, limits)
    # The bytes as decoded (no BOM), for rapidyaml: saves encoding the text again.
    return _parse_yaml(text, source, limits, data=None if data.startswith(b"\xef\xbb\xbf") else data)


def _decode(data: bytes, source: str) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError("is UTF-16 encoded; ramscope reads UTF-8 only", source=source)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            f"is not valid UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}",
            source=source,
            line=line,
            column=col,
        ) from None


def _parse_json(text: str, source: str, limits: Limits) -> ParsedDocument:
    check_json_nodes(text, limits.max_yaml_nodes, source)
    try:
        # Strict: the stdlib parser, which can report duplicate keys; else orjson, ~3x faster.
        if limits.strict_keys:
            value = json.loads(text, object_pairs_hook=_no_duplicate_keys)
        else:
            import orjson  # noqa: PLC0415 - cards are read by the stdlib (duplicate keys); orjson costs start-up

            value = orjson.loads(text)
    except _DuplicateKey as dup:
        pos = _find_json_key(text, dup.key)
        raise InputError(
            f"duplicate key {dup.key!r}: parsers disagree on which value wins, so it is refused",
            source=source,
            line=pos[0] if pos else None,
            column=pos[1] if pos else None,
        ) from None
    except RecursionError:
        raise LimitError("nesting is too deep to parse", source=source) from None
    except json.JSONDecodeError as exc:
        msg = exc.msg
        if "depth limit" in msg or "recursion" in msg:
            raise LimitError("nesting is too deep to parse", source=source) from None
        raise InputError(f"invalid JSON: {msg}", source=source, line=exc.lineno, column=exc.colno) from None
    except ValueError as exc:  # pragma: no cover - orjson raises JSONDecodeError subclasses
        raise InputError(f"invalid JSON: {exc}", source=source) from None
    # Nesting cannot be deeper than the brackets opened: most cards open fewer than the limit
    # allows, and counting them (in C) spares the walk.
    if text.count("{") + text.count("[") > limits.max_depth:
        check_depth(value, limits.max_depth, source)
    return ParsedDocument(value=value, format="json", source=source, text=text)


#: A JSON string, or an unterminated one up to the end: possessive, and unable to fail once it starts, so
#: stripping strings is linear. ``"[^"\\]*(?:\\.[^"\\]*)*"`` kept a backtracking entry per escape (10,000,000
#: escapes: 1.2 GB) and re-scanned an unterminated string from each escaped quote in it (``["\"\"…`` of
#: 80 KB: 40 s), issue 30.
_JSON_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_JSON_STRING_B = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.DOTALL)


def json_nodes_at_most(text: str | bytes) -> int:
    """An upper bound on the values and keys of a JSON document: ``1 + 2 × (commas + "{" + "[")``.

    Every value is the root, or the first of its container, or follows a comma; every key is
    followed by its value. Commas and brackets inside strings are counted too (it is a bound).
    """
    if isinstance(text, bytes):
        # One pass that keeps only the three marks (``translate`` deleting every other byte) is
        # about 3x faster than three ``count`` passes: 30 ms instead of 90 over Graph beta's 47 MB.
        return 1 + 2 * len(text.translate(None, _NOT_JSON_MARKS))
    return 1 + 2 * (text.count(",") + text.count("{") + text.count("["))


_NOT_JSON_MARKS = bytes(c for c in range(256) if c not in b",{[")
_NOT_YAML_MARKS = bytes(c for c in range(256) if c not in b"\n\r,[{-?:")


def yaml_nodes_at_most(data: bytes) -> int:
    """An upper bound on the nodes of a YAML document as written (aliases not expanded).

    Past the root, a node starts after a line break, a flow indicator or separator, or an
    indicator (``-``, ``?``, ``:``); at most two nodes start at one place (a collection and its
    first entry). Those characters in text are counted too: it is a bound.
    """
    return 1 + 2 * len(data.translate(None, _NOT_YAML_MARKS))


def check_json_nodes(text: str | bytes, max_nodes: int, source: str) -> None:
    """Refuse a JSON document that would build more than ``max_nodes`` values and keys, before
    building any (``LimitError``). Counting is a few passes of ``count`` over the text; only a
    document over the bound is counted again without its strings (prose full of commas)."""
    # Each mark is one character: a text shorter than half the bound cannot reach it, uncounted.
    if 1 + 2 * len(text) <= max_nodes or json_nodes_at_most(text) <= max_nodes:
        return
    if isinstance(text, bytes):
        bare: str | bytes = _JSON_STRING_B.sub(b'""', text)
    else:
        bare = _JSON_STRING.sub('""', text)
    if json_nodes_at_most(bare) > max_nodes:
        raise LimitError(
            f"the document builds more than {max_nodes:,} values and keys (a small text that parses large)",
            source=source,
        )


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Built by dict() in C; only an object that lost a key is walked again to name it.
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _DuplicateKey(k)
            seen.add(k)
    return out


_COLON = re.compile(r"[ \t\r\n]*:")


def _find_json_key(text: str, key: str) -> tuple[int, int] | None:
    """Position of the second occurrence of a key; good enough to point the user at it.

    A plain substring search: a regex compiled from a key of several megabytes took seconds.
    """
    needle = json.dumps(key)
    seen, start = 0, 0
    while (at := text.find(needle, start)) >= 0:
        start = at + 1
        if _COLON.match(text, at + len(needle)):
            seen += 1
            if seen == 2:
                return _line_col(text, at)
    return None


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def check_depth(value: Any, max_depth: int, source: str) -> None:
    """Raise :class:`LimitError` if ``value`` nests deeper than ``max_depth`` (an iterative walk)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if d > max_depth:
            raise LimitError(f"nesting is deeper than {max_depth} levels", source=source)
        if isinstance(v, dict):
            stack.extend((c, d + 1) for c in v.values() if isinstance(c, dict | list))
        elif isinstance(v, list):
            stack.extend((c, d + 1) for c in v if isinstance(c, dict | list))


# --------------------------------------------------------------------------- YAML

# PyYAML is imported on first use: JSON cards and specs (the common case) never need it.


@cache
def _loader_class() -> type[yaml.SafeLoader]:
    """The safe loader (libyaml's when present), with every scalar kept JSON-compatible."""
    import yaml  # noqa: PLC0415

    base: type[yaml.SafeLoader]
    try:
        base = yaml.CSafeLoader  # type: ignore[assignment]
    except AttributeError:  # pragma: no cover - wheels ship libyaml on the platforms we run on
        base = yaml.SafeLoader

    class _Loader(base):  # type: ignore[misc, valid-type]
        pass

    def as_string(loader: yaml.SafeLoader, node: yaml.Node) -> str:
        return str(loader.construct_scalar(node))  # type: ignore[arg-type]

    _Loader.add_constructor("tag:yaml.org,2002:timestamp", as_string)
    _Loader.add_constructor("tag:yaml.org,2002:binary", as_string)
    # YAML 1.1 resolves a plain ``=`` to its "value" key type, which the safe loader cannot build:
    # Zendesk's spec has ``change: =`` in its trigger examples. It is the string "=", as in JSON.
    _Loader.add_constructor("tag:yaml.org,2002:value", as_string)
    return _Loader


def _parse_yaml(text: str, source: str, limits: Limits, *, data: bytes | None = None) -> ParsedDocument:
    if not limits.positions:
        # rapidyaml's tree (~100 bytes a node, and a node can take 2 bytes of text) is built
        # before any count: a document that may have more nodes than allowed is counted first.
        if yaml_nodes_at_most(data if data is not None else text.encode("utf-8")) > limits.max_yaml_nodes:
            _count_yaml_events(text, source, limits)
        # Documents whose positions are not wanted (specs) take rapidyaml when it can give
        # exactly what the path below would; anything else falls through to it.
        fast = _fast_yaml(text, limits, data)
        if fast is not _FALLBACK:
            return ParsedDocument(value=fast, format="yaml", source=source, text=text, _positions={})
    parsed = _parse_yaml_libyaml(text, source, limits)
    if limits.positions:
        # Cards (the documents whose positions are kept): the same nesting bound as JSON cards
        # (libyaml's own is far deeper). Specs keep the parsers' bounds.
        check_depth(parsed.value, limits.max_depth, source)
    return parsed


#: Nodes the libyaml path builds at most, whatever ``max_yaml_nodes`` allows: its node graph costs
#: ~440 bytes a node (a million nodes: ~0.45 GB; SECURITY.md), the fast path's values ~60.
LIBYAML_MAX_NODES = 1_000_000


def _parse_yaml_libyaml(text: str, source: str, limits: Limits) -> ParsedDocument:
    import yaml  # noqa: PLC0415

    if limits.max_yaml_nodes > LIBYAML_MAX_NODES:
        limits = replace(limits, max_yaml_nodes=LIBYAML_MAX_NODES)
    if len(text) > limits.max_yaml_nodes:
        _count_yaml_events(text, source, limits)
    loader = _loader_class()(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise LimitError("nesting is too deep to parse", source=source) from None
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            problem = exc.problem or exc.context or "syntax error"
            if "maximum nesting depth" in str(exc):
                raise LimitError("nesting is too deep to parse", source=source) from None
            raise InputError(
                f"invalid YAML: {problem}",
                source=source,
                line=mark.line + 1 if mark else None,
                column=mark.column + 1 if mark else None,
            ) from None
        except yaml.YAMLError as exc:
            raise InputError(f"invalid YAML: {exc}", source=source) from None
        if node is None:
            raise InputError("is empty", source=source)
        positions = _inspect_yaml(node, source, limits)
        try:
            value = loader.construct_document(node)
        except yaml.constructor.ConstructorError as exc:
            mark = exc.problem_mark
            raise InputError(
                f"unsupported YAML: {exc.problem}",
                source=source,
                line=mark.line + 1 if mark else None,
                column=mark.column + 1 if mark else None,
            ) from None
        except RecursionError:
            raise LimitError("nesting is too deep to parse", source=source) from None
    finally:
        loader.dispose()
    value = _jsonify(value)
    return ParsedDocument(value=value, format="yaml", source=source, text=text, _positions=positions)


def _count_yaml_events(text: str, source: str, limits: Limits) -> None:
    """Refuse, before the node graph is built, a document of more than ``max_yaml_nodes`` nodes
    as written (aliases are counted once here, expanded later by :func:`_inspect_yaml`).

    libyaml's composer builds a Python object per node (hundreds of bytes each) before any bound
    applies; its event stream costs memory for one event at a time. Only documents longer than
    the bound in characters are scanned: a node takes at least one character.
    """
    import yaml  # noqa: PLC0415

    node_events = (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent, yaml.AliasEvent)
    loader = _loader_class()(text)
    nodes = 0
    try:
        while (event := loader.get_event()) is not None:  # type: ignore[no-untyped-call]
            if isinstance(event, node_events):
                nodes += 1
                if nodes > limits.max_yaml_nodes:
                    raise LimitError(f"YAML has more than {limits.max_yaml_nodes:,} nodes", source=source)
    except yaml.YAMLError:
        return  # the composer below reports it, with line and column
    finally:
        loader.dispose()


def _inspect_yaml(root: yaml.Node, source: str, limits: Limits) -> dict[str, tuple[int, int]]:
    """Bound the expanded size, refuse cycles and duplicate keys, collect positions.

    The expanded size of a node is computed once per node (memoised on identity), so
    a billion-laughs document costs time linear in its text, not in its expansion.
    """
    import yaml  # noqa: PLC0415

    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    # Iterative post-order walk: (node, children-done?)
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        nid = id(node)
        if done:
            on_path.discard(nid)
            total = 1
            for child in _children(node):
                total += sizes[id(child)]
            if total > limits.max_yaml_nodes:
                raise LimitError(
                    f"YAML expands to more than {limits.max_yaml_nodes:,} nodes (alias bomb?)",
                    source=source,
                    line=node.start_mark.line + 1,
                    column=node.start_mark.column + 1,
                )
            sizes[nid] = total
            continue
        if nid in sizes:
            continue
        if nid in on_path:
            raise InputError(
                "YAML alias refers to itself (recursive structure)",
                source=source,
                line=node.start_mark.line + 1,
                column=node.start_mark.column + 1,
            )
        on_path.add(nid)
        stack.append((node, True))
        if isinstance(node, yaml.MappingNode) and limits.strict_keys:
            seen: set[str] = set()
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    if key_node.value in seen:
                        raise InputError(
                            f"duplicate key {key_node.value!r}: parsers disagree on which value wins, so it is refused",
                            source=source,
                            line=key_node.start_mark.line + 1,
                            column=key_node.start_mark.column + 1,
                        )
                    seen.add(key_node.value)
        for child in _children(node):
            cid = id(child)
            if cid in on_path:
                raise InputError(
                    "YAML alias refers to itself (recursive structure)",
                    source=source,
                    line=child.start_mark.line + 1,
                    column=child.start_mark.column + 1,
                )
            if cid not in sizes:
                stack.append((child, False))
    return _yaml_positions(root) if limits.positions else {}


def _children(node: yaml.Node) -> Iterator[yaml.Node]:
    import yaml  # noqa: PLC0415

    if isinstance(node, yaml.SequenceNode):
        yield from node.value
    elif isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            yield k
            yield v


def _yaml_positions(root: yaml.Node, cap: int = 200_000) -> dict[str, tuple[int, int]]:
    import yaml  # noqa: PLC0415

    out: dict[str, tuple[int, int]] = {}
    stack: list[tuple[yaml.Node, str]] = [(root, "")]
    while stack and len(out) < cap:
        node, ptr = stack.pop()
        if ptr in out:
            continue
        out[ptr] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.SequenceNode):
            stack.extend((c, f"{ptr}/{i}") for i, c in enumerate(node.value))
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode):
                    stack.append((v, f"{ptr}/{escape_pointer_token(k.value)}"))
    return out


# --------------------------------------------------------------------------- YAML, fast path
#
# libyaml composes a Python node per value, then PyYAML's constructor walks them: ~3 MB/s, eight
# seconds for a 26 MB spec with the checks below. rapidyaml parses into a C++ tree at ~90 MB/s; one
# walk over it builds the values, ~20 MB/s in all (bench/README.md, "YAML parsers"). The walk
# gives exactly what ``_parse_yaml_libyaml`` gives, or gives up:
#
# * plain scalars are resolved with PyYAML's own implicit resolvers (YAML 1.1: ``yes`` is true,
#   ``012`` is octal, ``1e3`` is a string) and built by its own SafeConstructor functions, then
#   kept JSON-compatible as below (timestamps and binary stay their text, keys become strings);
#   quoted and block scalars are strings, as PyYAML reads them;
# * anchors, aliases, tags, merge keys, several documents, unfiltered scalars, a key seen twice
#   (after conversion to a string), nesting past libyaml's 1000 levels or more nodes than
#   ``max_yaml_nodes``: the libyaml path reads the document instead, so alias-bomb bounds,
#   duplicate-key errors, tag refusals and their line:col are those of one implementation;
# * a document rapidyaml refuses goes to libyaml too, whose error (with line:col) is the one
#   reported, or which reads it.
#
# Cards (``positions=True``) always take the libyaml path: its node graph gives the positions.

_FALLBACK: Any = object()
#: The other spelling of a key Python's dict takes for the same (``True == 1``), as strings.
_KEY_TWIN = {"true": "1", "1": "true", "false": "0", "0": "false"}
_LIBYAML_MAX_DEPTH = 1000


class _GiveUp(Exception):
    """The fast path cannot vouch for this document; the libyaml path reads it."""


_BLANK_OR_COMMENTS = re.compile(rb"(?:[ ]*(?:#[^\n]*)?\r?\n)*")
#: Printable ASCII and the two line breaks: removed, what is left must be printable non-ASCII.
_ASCII_PRINTABLE = bytes(range(0x20, 0x7F)) + b"\n\r"
_HIGH_BYTES = bytes(range(0x80, 0x100))
#: In UTF-8, of what is left: C1 controls (NEL among them), U+2028, U+2029, U+FFFE, U+FFFF. The
#: bytes of one character stay together once the ASCII bytes are removed, so these match exactly.
_UNPRINTABLE_UTF8 = re.compile(rb"\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]|\xef\xbf[\xbe\xbf]")


def _unprintable(data: bytes) -> bool:
    """Whether UTF-8 ``data`` holds a tab, or a character outside YAML's printable set, or NEL,
    U+2028 or U+2029 (line breaks to libyaml, not to rapidyaml)."""
    rest = data.translate(None, _ASCII_PRINTABLE)  # a C loop: 15 ms for 26 MB, where a regex takes 75
    return bool(rest) and (bool(rest.translate(None, _HIGH_BYTES)) or _UNPRINTABLE_UTF8.search(rest) is not None)


#: What libyaml reads otherwise than rapidyaml, found by the differential fuzz test
#: (tests/adversarial/test_yaml_differential.py): a lone CR, a line break to libyaml only; a BOM at
#: the start of a line, which libyaml skips; a plain scalar starting with ":" at the start of a line
#: (``? k\n:x: y``), a value indicator to rapidyaml; an explicit key whose node starts on the
#: next line (``?\n-:x``), which rapidyaml reads at any indentation and libyaml refuses at column 0.
_LONE_CR = re.compile(rb"\r(?!\n)")
_LINE_START_DOUBTS = re.compile(rb"[\n\r](?:[ ]*:[^ \t\r\n]|[ ]*\?[ ]*(?:[\r\n]|\Z))")


#: A block scalar header with an indentation digit and then text (``>+1yes~``): libyaml refuses
#: it, rapidyaml reads it. Matched after a space, where every header outside a scalar document is.
_BLOCK_HEADER_WITH_TEXT = re.compile(rb"[|>][-+]?[0-9][-+]?[^ \t\r\n#]")


def _block_header_with_text(data: bytes) -> bool:
    # Substring searches, then a match at each hit: a regex search alone takes seconds on a 25 MB
    # spec full of HTML and tables.
    for needle in (b" |", b" >"):
        at = data.find(needle)
        while at >= 0:
            if _BLOCK_HEADER_WITH_TEXT.match(data, at + 1) is not None:
                return True
            at = data.find(needle, at + 2)
    return False


def _ryml_doubts(data: bytes) -> bool:
    """A directive or a document end marker, or a start marker after more than blank lines and
    comments; or a line break, BOM or line-initial ``:`` that rapidyaml reads otherwise."""
    if data.startswith((b"...", b"%", b"\xef\xbb\xbf")) or b"\n..." in data or b"\n%" in data:
        return True
    if b"\r" in data and _LONE_CR.search(data) is not None:
        return True
    if b"\xef\xbb\xbf" in data and (b"\n\xef\xbb\xbf" in data or b"\r\xef\xbb\xbf" in data):
        return True
    # Both line-start cases need an explicit key ("?"), rare in specs; then a line starting with
    # ":" or "?" after its indentation is found in the text without spaces by substring searches
    # (the regex alone takes seconds on a 25 MB spec), and only then judged by the regex.
    if b"?" in data:
        unspaced = data.translate(None, b" ")
        if unspaced.startswith((b":", b"?")) or b"\n:" in unspaced or b"\n?" in unspaced or b"\r?" in unspaced:
            first_line = data[: data.find(b"\n") + 1] or data
            if _LINE_START_DOUBTS.match(b"\n" + first_line) or _LINE_START_DOUBTS.search(data):
                return True
    at = data.find(b"\n---")
    while at >= 0:
        if _BLANK_OR_COMMENTS.fullmatch(data, 0, at + 1) is None:
            return True
        at = data.find(b"\n---", at + 1)
    return False


@cache
def _fast_support() -> tuple[Any, Callable[[str], Any]] | None:
    """rapidyaml's module and the plain-scalar resolver, or None where rapidyaml is missing."""
    try:
        import ryml  # type: ignore[import-untyped]  # noqa: PLC0415
    except ImportError:  # pragma: no cover - a declared dependency; the libyaml path still works
        return None
    import yaml  # noqa: PLC0415

    loader_cls = _loader_class()
    implicit = loader_cls.yaml_implicit_resolvers
    wildcard: list[tuple[str, re.Pattern[str]]] = implicit.get(None) or []
    by_first: dict[str, list[tuple[str, re.Pattern[str]]]] = {
        ch: [*rs, *wildcard] for ch, rs in implicit.items() if ch is not None
    }
    constructor = yaml.constructor.SafeConstructor()
    str_tag = "tag:yaml.org,2002:str"
    as_text = {"tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:binary"}

    def resolve(value: str) -> Any:
        tag = next((t for t, regexp in by_first.get(value[:1], wildcard) if regexp.match(value)), None)
        if tag is None:
            return value
        if tag == str_tag or tag in as_text:
            return value
        build = loader_cls.yaml_constructors.get(tag)
        if build is None or tag == "tag:yaml.org,2002:merge":
            raise _GiveUp(tag)
        return build(constructor, yaml.ScalarNode(tag, value))

    return ryml, resolve


def _fast_yaml(text: str, limits: Limits, data: bytes | None = None) -> Any:
    """The document's value, or ``_FALLBACK``. ``data``: ``text`` encoded in UTF-8, if at hand."""
    support = _fast_support()
    if support is None:  # pragma: no cover
        return _FALLBACK
    ryml, resolve = support
    if data is None:
        data = text.encode("utf-8")
    # What libyaml refuses outright (characters outside YAML's printable set, e.g. NUL), the line
    # breaks only it knows, tabs, directives (``%YAML 1.2``, ``%TAG``) and document markers past
    # the start are left to it: there, rapidyaml reads some documents differently or reads
    # documents libyaml refuses (found by the property tests in tests/test_yaml_parser.py).
    if _unprintable(data) or _ryml_doubts(data):
        return _FALLBACK
    try:
        with _ryml_stderr_dropped():
            tree = ryml.parse_in_arena(data)
    except Exception:  # any refusal: libyaml gives the error, or reads it
        return _FALLBACK
    try:
        blocks: list[bool] = []
        value = _walk_ryml(ryml, tree, resolve, limits, ends_with_break=text.endswith(("\n", "\r")), blocks=blocks)
        return _FALLBACK if blocks and _block_header_with_text(data) else value
    except _GiveUp:
        return _FALLBACK
    finally:
        del tree


_RYML_MESSAGE = re.compile(rb"line=\d+ col=\d+ \(\d+B\): ERROR: .*\n(?:.*\(detected here\)\n)?")
_STDERR_LOCK = threading.Lock()


@contextmanager
def _ryml_stderr_dropped() -> Iterator[None]:
    """Keep rapidyaml's parse errors (C++ writes them to file descriptor 2) off the terminal.

    They would quote a stranger's document at the user, and libyaml's error is the one ramscope
    reports. Anything else written to the descriptor meanwhile is passed on afterwards.
    """
    import tempfile  # noqa: PLC0415 - only when rapidyaml parses: tempfile costs start-up (issue 36)

    with _STDERR_LOCK, tempfile.TemporaryFile() as sink:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
        finally:
            os.close(saved)
        sink.seek(0)
        rest = _RYML_MESSAGE.sub(b"", sink.read())
        if rest:
            os.write(2, rest)


def _walk_ryml(
    ryml: Any,
    tree: Any,
    resolve: Callable[[str], Any],
    limits: Limits,
    *,
    ends_with_break: bool = True,
    blocks: list[bool] | None = None,
) -> Any:
    """The document's value; raises ``_GiveUp``. ``blocks`` gets one entry if a block scalar was read."""
    # ryml's node type bits.
    map_b, seq_b, val_b, key_b = ryml.MAP, ryml.SEQ, ryml.VAL, ryml.KEY
    container_b = map_b | seq_b
    # Quoted or block scalars are strings; a nil one (``a:``) reads as an empty plain scalar.
    val_str = ryml.VALQUO | ryml.VAL_LITERAL | ryml.VAL_FOLDED
    key_str = ryml.KEYQUO | ryml.KEY_LITERAL | ryml.KEY_FOLDED
    block_b = ryml.VAL_LITERAL | ryml.VAL_FOLDED | ryml.KEY_LITERAL | ryml.KEY_FOLDED
    unsure = (
        ryml.KEYANCH
        | ryml.VALANCH
        | ryml.KEYREF
        | ryml.VALREF
        | ryml.KEYTAG
        | ryml.VALTAG
        | ryml.KEY_UNFILT
        | ryml.VAL_UNFILT
    )
    # The SWIG functions, given the tree's SwigPyObject (``tree.this``) rather than the proxy: SWIG
    # then skips an attribute lookup per call, 6x faster; the walk is mostly these calls. ``tree``
    # itself is held by the caller for as long as the walk runs.
    raw = ryml.ryml._ryml
    this = tree.this
    typ, first_child, next_sibling = raw.Tree_type, raw.Tree_first_child, raw.Tree_next_sibling
    key_of, val_of = raw.Tree_key, raw.Tree_val
    none_id = ryml.NONE
    # Plain scalars whose first character no resolver claims are strings: most of them.
    typed_first = frozenset(_loader_class().yaml_implicit_resolvers) - {None}
    if None in _loader_class().yaml_implicit_resolvers:  # pragma: no cover - PyYAML has none
        raise _GiveUp("wildcard resolver")
    # A plain scalar cannot start with an indicator, nor with "-", "?" or ":" before a blank:
    # libyaml refuses such a document, where rapidyaml reads some of them as text (``]: x``).
    # A plain scalar starting with ":" is text to both in block context, but rapidyaml also reads
    # ``? :x`` in a flow mapping, which libyaml refuses: no spec needs one, libyaml decides.
    indicator_first = frozenset(",[]{}#&*!|>'\"%@`?:")
    blank_after = frozenset("-?")
    special_first = typed_first | indicator_first | blank_after

    # Specs repeat their plain scalars ("string", "object", "true", "0"): resolve each once.
    # The values are immutable, so one object may stand in several places.
    memo: dict[str, Any] = {}

    def resolve_plain(text: str) -> Any:
        try:
            return memo[text]
        except KeyError:
            value = memo[text] = resolve(text)
            return value

    def plain(text: str) -> Any:
        first = text[:1]
        if first in indicator_first or (first in blank_after and text[1:2] in ("", " ")):
            raise _GiveUp("a plain scalar libyaml would refuse")
        return resolve_plain(text) if first in typed_first else text

    if tree.size() == 0:
        raise _GiveUp("empty")
    root = tree.root_id()
    rty = typ(this, root)
    if rty & ryml.STREAM == ryml.STREAM:  # STREAM's bits include SEQ's
        root = first_child(this, root)
        if root == none_id or next_sibling(this, root) != none_id:
            raise _GiveUp("not one document")
        rty = typ(this, root)
    if rty & unsure or not rty & (container_b | val_b):
        raise _GiveUp("root")
    if not rty & container_b:
        # No spec is a lone scalar, and rapidyaml reads a top-level block scalar's end otherwise.
        raise _GiveUp("scalar document")

    if not ends_with_break:
        # At the end of a text without a final line break, rapidyaml ends a block scalar with
        # "\n" and libyaml does not.
        node = root
        while typ(this, node) & container_b and (last := raw.Tree_last_child(this, node)) != none_id:
            node = last
        if typ(this, node) & (ryml.VAL_LITERAL | ryml.VAL_FOLDED | ryml.KEY_LITERAL | ryml.KEY_FOLDED):
            raise _GiveUp("block scalar at the end")

    # libyaml's path refuses duplicate keys (where strict) by their text as written: ``'yes'`` and
    # ``yes`` are one key there, though "yes" and "true" here.
    strict = limits.strict_keys
    max_nodes = limits.max_yaml_nodes
    nodes = 1  # counted as PyYAML's node graph has them: a key is a node of its own
    result: Any = {} if rty & map_b else []
    stack: list[tuple[int, Any, int]] = [(root, result, 1)]
    while stack:
        parent, container, depth = stack.pop()
        if depth >= _LIBYAML_MAX_DEPTH:
            raise _GiveUp("depth")
        is_map = type(container) is dict
        written: set[str] = set()
        child = first_child(this, parent)
        value: Any
        while child != none_id:
            ty = typ(this, child)
            if ty & unsure:
                raise _GiveUp("anchor, alias, tag or unfiltered scalar")
            if ty & container_b:
                value = {} if ty & map_b else []
                stack.append((child, value, depth + 1))
            else:
                mv = val_of(this, child)
                value = "" if mv is None else str(mv, "utf-8")
                if ty & block_b and blocks is not None and not blocks:
                    blocks.append(True)
                if not ty & val_str:
                    if " #" in value:  # a comment to libyaml, text to rapidyaml in a flow mapping
                        raise _GiveUp("comment in a plain scalar")
                    if value[:1] in special_first:  # "" (``a:``) is null
                        value = plain(value)
            if is_map:
                mv = key_of(this, child) if ty & key_b else None
                key = "" if mv is None else str(mv, "utf-8")
                if strict:
                    if key in written:
                        raise _GiveUp("key written twice")
                    written.add(key)
                if not ty & key_str:
                    if " #" in key:
                        raise _GiveUp("comment in a plain key")
                    if not key:  # rapidyaml reads ``: x`` as a null key, libyaml refuses it
                        raise _GiveUp("null key")
                    if key[:1] in special_first:
                        k = plain(key)
                        if not isinstance(k, str | int | bool | None):
                            raise _GiveUp("key")
                        key = _key_str(k)
                        # True == 1 and False == 0: one key in libyaml's dict, two strings here.
                        if (k is True or k is False or (type(k) is int and k in (0, 1))) and _KEY_TWIN[
                            key
                        ] in container:
                            raise _GiveUp("a bool key and an int key that Python takes for one")
                if key in container:
                    raise _GiveUp("key seen twice")
                container[key] = value
                nodes += 2
            else:
                container.append(value)
                nodes += 1
            child = next_sibling(this, child)
        if nodes > max_nodes:
            raise _GiveUp("size")
    return result


def _jsonify(value: Any) -> Any:
    """Make constructed YAML JSON-compatible: string keys, lists for sets and tuples."""
    # Iterative, since the structure was only bounded in size, not in our stack.
    if not isinstance(value, dict | list | set | tuple):
        return value
    root_box: list[Any] = [None]
    work: list[tuple[Any, Callable[[Any], None]]] = [(value, lambda v: root_box.__setitem__(0, v))]
    while work:
        v, put = work.pop()
        if isinstance(v, dict):
            new_d: dict[str, Any] = {}
            put(new_d)
            for k, child in v.items():
                key = _key_str(k)
                new_d[key] = None
                work.append((child, _setter(new_d, key)))
        elif isinstance(v, list | tuple | set):
            items = sorted(v, key=repr) if isinstance(v, set) else list(v)
            new_l: list[Any] = [None] * len(items)
            put(new_l)
            for i, child in enumerate(items):
                work.append((child, _setter(new_l, i)))
        else:
            put(v)
    return root_box[0]


def _setter(container: Any, key: Any) -> Callable[[Any], None]:
    def put(v: Any) -> None:
        container[key] = v

    return put


def _key_str(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, bool):
        return "true" if k else "false"
    if k is None:
        return "null"
    return str(k)


# --------------------------------------------------------------------------- JSON positions

#: One JSON token: a string (its loop unrolled: twice as fast), a punctuation mark, or a literal
#: (whitespace between them is skipped).
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.DOTALL)  # "?: see _JSON_STRING


def json_positions(text: str) -> dict[str, tuple[int, int]]:
    """Map JSON pointer -> (line, column) of the value it names, in one iterative pass.

    Used only to point diagnostics at lines; it tolerates what the real parser
    already accepted and stops quietly on anything else. Lines are counted from one
    recorded value to the next (``str.count``), not per character: a card's
    positions cost as much as its derivation when they were (issue 25).
    """
    out: dict[str, tuple[int, int]] = {}
    line, line_start, counted = 1, 0, 0

    def here(off: int) -> tuple[int, int]:
        nonlocal line, line_start, counted
        n = text.count("\n", counted, off)
        if n:
            line += n
            line_start = text.rindex("\n", counted, off) + 1
        counted = off
        return line, off - line_start + 1

    # Stack frames: [is_object, pointer, next index, expecting_key]
    stack: list[list[Any]] = []
    pending_ptr = ""
    expecting_value = True
    for m in _TOKEN.finditer(text):
        tok = m.group()
        first = tok[0]
        if first in "{[":
            if pending_ptr not in out:
                out[pending_ptr] = here(m.start())
            if first == "{":
                stack.append([True, pending_ptr, None, True])
                expecting_value = False
            else:
                stack.append([False, pending_ptr, 0, False])
                pending_ptr = f"{pending_ptr}/0"
                expecting_value = True
        elif first in "}]":
            if not stack:
                break
            stack.pop()
            expecting_value = False
        elif first == ":":
            expecting_value = True
        elif first == ",":
            if not stack:
                break
            top = stack[-1]
            if top[0]:
                top[3] = True
                expecting_value = False
            else:
                top[2] += 1
                pending_ptr = f"{top[1]}/{top[2]}"
                expecting_value = True
        elif stack and stack[-1][0] and stack[-1][3] and not expecting_value:
            # A key: most have no escapes, and need no decoding.
            if "\\" in tok:
                try:
                    key = json.loads(tok)
                except ValueError:
                    break
            else:
                key = tok[1:-1]
            stack[-1][3] = False
            pending_ptr = f"{stack[-1][1]}/{escape_pointer_token(key)}"
        else:
            # A string or a literal value.
            if pending_ptr not in out:
                out[pending_ptr] = here(m.start())
            expecting_value = False
    return out
