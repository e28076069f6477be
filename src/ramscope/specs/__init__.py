r"""Spec adapters: every kind of spec document becomes one :class:`SpecIndex`.

::

    kind  = detect_kind(body, media_type)                 # from the content, never the URL
    index = build_index(fetched, load_ref=store_loader)   # one pass, no full validation
    index = load_index(url, store)                        # cached by the body's SHA-256

Adding a spec kind means one module with an :class:`Adapter` and one entry in
:data:`ADAPTERS`; detection asks each adapter in turn to ``sniff`` the parsed
document. Kinds that are neither JSON nor YAML (GraphQL SDL, Dropbox's Stone) are
:class:`TextAdapter`\ s: before a body that does not open with ``{`` or ``[`` is read as
YAML, each is asked whether its first characters (and, where those are ambiguous, the
URL's extension) are of its kind, and the one that says so gets the text as a
:class:`~ramscope.specs._doc.TextDocument`. MCP "specs" are ramscope's captures of a server conversation
(:mod:`ramscope.specs.mcp`), A2A specs are agent cards (:mod:`ramscope.specs.a2a`).
Raw spec dicts never leave this package.
"""

from __future__ import annotations

import bisect
import gc
import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol, runtime_checkable

from ..diagnostics import Diagnostic
from ..documents import FetchedSpec
from ..errors import SpecError
from ._doc import TEXT_HEAD_CHARS, TextDocument, decode_text, describe_document, parse_spec_body
from .a2a import A2AAdapter
from .cache import INDEX_NAMESPACE, SpecSource, index_cache_key, load_index
from .discovery import DiscoveryAdapter
from .graphql import GraphQLAdapter
from .mcp import MCPAdapter
from .model import (
    INDEX_FORMAT_VERSION,
    FlowKind,
    OAuthFlow,
    OperationEntry,
    Requirement,
    Requirements,
    SchemeRequirement,
    SchemeType,
    SecurityScheme,
    SpecIndex,
    SpecKind,
    normalize_path,
)
from .openapi import OpenAPIAdapter
from .refs import RefLoader
from .stone import StoneAdapter

__all__ = [
    "ADAPTERS",
    "INDEX_FORMAT_VERSION",
    "INDEX_NAMESPACE",
    "Adapter",
    "FlowKind",
    "OAuthFlow",
    "OperationEntry",
    "RefLoader",
    "Requirement",
    "Requirements",
    "SchemeRequirement",
    "SchemeType",
    "SecurityScheme",
    "SpecIndex",
    "SpecKind",
    "SpecSource",
    "TextAdapter",
    "TextDocument",
    "build_index",
    "detect_kind",
    "index_cache_key",
    "index_document",
    "load_index",
    "normalize_path",
    "relevant_diagnostics",
]


class Adapter(Protocol):
    """Turns one kind of parsed spec document into a :class:`SpecIndex`."""

    @property
    def kind(self) -> SpecKind: ...

    def sniff(self, doc: Any) -> str | None:
        """The spec-format version if ``doc`` is of this kind, else ``None``.

        Raises :class:`SpecError` ("unsupported spec: ...") for a document that is
        of this family but in a version ramscope cannot read (Swagger 1.2 ...).
        """
        ...

    def build(
        self, doc: Any, spec: FetchedSpec, *, spec_version: str, load_ref: RefLoader | None = None
    ) -> SpecIndex: ...


@runtime_checkable
class TextAdapter(Adapter, Protocol):
    """An adapter of a kind that is neither JSON nor YAML: it recognises its text before any parse."""

    def sniff_text(self, head: str, url: str) -> bool:
        """Is a document whose first characters are ``head``, read at ``url``, of this kind?"""
        ...


#: Every adapter, by kind; detection tries them in this order.
ADAPTERS: dict[SpecKind, Adapter] = {
    SpecKind.OPENAPI: OpenAPIAdapter(),
    SpecKind.DISCOVERY: DiscoveryAdapter(),
    SpecKind.MCP: MCPAdapter(),
    SpecKind.A2A: A2AAdapter(),
    SpecKind.GRAPHQL: GraphQLAdapter(),
    SpecKind.STONE: StoneAdapter(),
}

#: Requirement sources that mean "inherited from the spec as a whole" (OpenAPI root security,
#: an MCP server's authorization, an A2A card's requirements): root-level findings bear on them.
_INHERITED = frozenset({"root", "server", "server-baseline", "card"})


def _detect(doc: Any, source: str) -> tuple[SpecKind, str]:
    for kind, adapter in ADAPTERS.items():
        version = adapter.sniff(doc)
        if version is not None:
            return kind, version
    if isinstance(doc, dict) and doc.get("kind") == "discovery#directoryList":
        raise SpecError(
            "unsupported spec: a Google Discovery directory (the list of APIs), not one API's description; "
            "use the API's discoveryRestUrl",
            url=source,
        )
    known = ", ".join(k.value for k in ADAPTERS)
    raise SpecError(
        f"unsupported spec: {describe_document(doc)}; expected one of: {known} "
        "(an 'openapi' or 'swagger' field, Discovery's kind discovery#restDescription, a GraphQL "
        "introspection result or SDL, a Stone file)",
        url=source,
    )


def parse_document(body: bytes, *, source: str, media_type: str | None = None, url: str = "") -> Any:
    """The parsed document: JSON or YAML, or a :class:`TextDocument` that a :class:`TextAdapter` recognises.

    ``url`` (the spec's URL) only breaks ties a text's first characters leave open (a ``.stone`` file).
    """
    head = body[: TEXT_HEAD_CHARS * 4].removeprefix(b"\xef\xbb\xbf").lstrip()
    if head and head[:1] not in (b"{", b"[", b"<"):
        text_head = head.decode("utf-8", "replace")[:TEXT_HEAD_CHARS]
        for adapter in ADAPTERS.values():
            if isinstance(adapter, TextAdapter) and adapter.sniff_text(text_head, url):
                return TextDocument(decode_text(body, source=source), url)
    return parse_spec_body(body, source=source, media_type=media_type)


def detect_kind(body: bytes, media_type: str | None = None, *, url: str = "") -> SpecKind:
    """The kind of spec ``body`` holds, judged from its content (JSON, YAML, GraphQL SDL or Stone text).

    ``url`` is consulted only where the content leaves the kind open (a ``.stone`` extension).
    Raises :class:`SpecError` ("unsupported spec: ...") describing what was found instead.
    """
    doc = parse_document(body, source="", media_type=media_type, url=url)
    return _detect(doc, "")[0]


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large spec is parsed and indexed.

    Parsing allocates millions of containers, and every allocation threshold
    reached triggers a collection that walks the growing tree: measured, orjson
    on Graph beta (47 MB) takes 0.66 s with the collector on and 0.22 s with it
    off. A parsed JSON/YAML tree holds no reference cycles, so it is freed by
    reference counting the moment it is dropped; nothing leaks. The collector is
    process-wide, so other threads see it paused too, for the length of one parse.

    Drop the parsed tree before leaving the block: the allocation counter keeps counting
    while the collector is paused, so a tree still alive when it resumes is walked whole
    by the next collection, which gives back most of what pausing saved.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build_index(
    spec: FetchedSpec, *, kind_hint: SpecKind | None = None, load_ref: RefLoader | None = None
) -> SpecIndex:
    """Parse ``spec`` once and index it with the adapter of its kind.

    ``kind_hint`` (e.g. MCP for an MCP resource's capture) picks the adapter
    instead of detection; the document must still be of that kind. ``load_ref``
    fetches sibling documents named by external ``$ref``\\ s (after the checks in
    :mod:`ramscope.specs.refs`); without it they are reported, not followed.
    """
    source = spec.final_url or spec.url
    with _gc_paused():
        doc = parse_document(spec.body, source=source, media_type=spec.media_type, url=source)
        index = index_document(doc, spec, kind_hint=kind_hint, load_ref=load_ref)
        # Freed while the collector is still paused. Alive when it resumes, the tree would be
        # walked by the first collection (it counts as millions of new objects): measured on
        # Graph beta, 0.15 to 0.25 s, as long as parsing it.
        del doc
    return index


def index_document(
    doc: Any, spec: FetchedSpec, *, kind_hint: SpecKind | None = None, load_ref: RefLoader | None = None
) -> SpecIndex:
    """Index an already parsed document (``spec`` gives its URL and hash)."""
    source = spec.final_url or spec.url
    if kind_hint is not None:
        adapter = ADAPTERS.get(kind_hint)
        if adapter is None:
            raise SpecError(f"unsupported spec: no adapter for {kind_hint.value} specs yet", url=source)
        version = adapter.sniff(doc)
        if version is None:
            raise SpecError(
                f"unsupported spec: expected a {kind_hint.value} document, found {describe_document(doc)}",
                url=source,
            )
    else:
        kind, version = _detect(doc, source)
        adapter = ADAPTERS[kind]
    with _gc_paused():
        return adapter.build(doc, spec, spec_version=version, load_ref=load_ref)


class _DiagnosticIndex:
    """An index's diagnostics sorted by what they bear on, built once per index: looking up one
    operation's then costs what bears on it, not a scan of every diagnostic (800 accesses against a
    spec with 1,600 undeclared-scope findings scanned 1.3 M pairs, each testing every term)."""

    __slots__ = ("everywhere", "inherited", "paths", "scheme_wide", "scoped", "skipped")

    def __init__(self, diagnostics: tuple[Diagnostic, ...]) -> None:
        self.everywhere: list[int] = []
        self.inherited: list[int] = []
        self.skipped: list[int] = []
        self.scheme_wide: dict[str, list[int]] = {}
        self.scoped: dict[tuple[str, str], list[int]] = {}
        by_path: list[tuple[str, int]] = []
        for i, d in enumerate(diagnostics):
            data = d.data
            affects = data.get("affects")
            if affects == "all" or "skipped_path" in data:
                self.skipped.append(i)
            if affects == "all":
                self.everywhere.append(i)
                continue
            if affects == "root-security":
                # For an operation with security of its own it is still read as any other below.
                self.inherited.append(i)
            if "scheme" in data:
                if "scope" in data:
                    self.scoped.setdefault((data["scheme"], data["scope"]), []).append(i)
                else:
                    self.scheme_wide.setdefault(data["scheme"], []).append(i)
            elif "skipped_path" not in data and d.path:
                by_path.append((d.path, i))
        by_path.sort()
        self.paths = by_path

    def under(self, pointer: str) -> list[int]:
        """Diagnostics at ``pointer`` or below it."""
        lo = bisect.bisect_left(self.paths, (pointer, -1))
        out: list[int] = []
        prefix = pointer + "/"
        # Every path that starts with ``pointer`` sorts in one run from ``lo``.
        for path, i in itertools.islice(self.paths, lo, None):
            if not path.startswith(pointer):
                break
            if path == pointer or path.startswith(prefix):
                out.append(i)
        return out


def _diagnostic_index(index: SpecIndex) -> _DiagnosticIndex:
    # Kept on the index as its cached properties are (a frozen dataclass's instance dict): built
    # on the first look-up, gone with the index.
    found = index.__dict__.get("_diagnostic_index")
    if not isinstance(found, _DiagnosticIndex):
        found = index.__dict__["_diagnostic_index"] = _DiagnosticIndex(index.diagnostics)
    return found


def relevant_diagnostics(index: SpecIndex, entry: OperationEntry | None) -> tuple[Diagnostic, ...]:
    """The index's diagnostics that bear on ``entry`` (``None``: on an operation that was not found),
    in the index's order.

    Follows the ``data`` conventions described in :mod:`ramscope.specs._doc`.
    """
    if not index.diagnostics:
        return ()
    groups = _diagnostic_index(index)
    if entry is None:
        return tuple(index.diagnostics[i] for i in groups.skipped)
    picked: set[int] = set(groups.everywhere)
    if entry.security_source in _INHERITED:
        picked.update(groups.inherited)
    pairs = {(t.scheme, s) for alt in entry.requirements or () for t in alt for s in t.scopes}
    for scheme in {t.scheme for alt in entry.requirements or () for t in alt}:
        picked.update(groups.scheme_wide.get(scheme, ()))
    for pair in pairs:
        picked.update(groups.scoped.get(pair, ()))
    if entry.pointer:
        picked.update(groups.under(entry.pointer))
    return tuple(index.diagnostics[i] for i in sorted(picked))
