"""Resolving a RAM operation to the spec operation it names: ``resolve(...) -> Target | Unresolved``.

For REST specs (OpenAPI, Google Discovery) the order is:

1. ``api_operation_spec.operation_id`` (OpenAPI operationId, Discovery method id);
2. if it is absent, or not in the spec (a warning), the resource's
   ``resource_path`` with ``api_operation_spec.http_method``. Paths match with
   template parameter names erased (``{calendarId}`` = ``{id}`` = ``{+id}``), a
   trailing slash ignored, and with or without the spec's base path (server URL
   path, ``basePath``, ``servicePath``).

A GraphQL schema's operations are its root fields, all served by one ``POST`` endpoint, so only
``operation_id`` selects one: ``Mutation.productCreate``, ``Query.orders`` (or the schema's own root
type name, ``QueryRoot.orders``), or the bare field name where one root type alone has it. A Stone
(Dropbox) route is a REST operation: ``operation_id`` ``files/download`` (versions ``files/copy:2``
or ``files/copy_v2``), or ``POST`` with its URL path (``/2/files/download``).

For an MCP server the resource's ``resource_path`` is the tool name, matched
exactly (``matched_by="tool_name"``). A server that lists tools only to
authenticated clients cannot confirm the name: the result is then an
unverified stand-in carrying the server-wide requirement
(``matched_by="tool_name_unverified"``, with a warning), so the credential is
still reported. For an A2A agent an empty ``resource_path`` means the agent as
a whole (``matched_by="agent_card"``), else it names a skill by id (or, with a
warning, by its exact name; ``matched_by="skill"``). Both fall back to
``api_operation_spec.operation_id`` when ``resource_path`` is empty.

Nothing is guessed: no match gives :class:`Unresolved` with the three nearest
operations as suggestions, several matches give an ambiguity listing them. The
spec's own findings that bear on the operation (undeclared security, an
undefined scheme, a refused ``$ref``) travel with the result, re-pointed at the
card so the reader sees them next to the access.
"""

from __future__ import annotations

import difflib
import heapq
import re
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from ..diagnostics import Diagnostic, Severity, rule
from ..errors import FetchError, RamscopeError, SpecError
from ..manifest import Operation, Resource
from ..specs import SpecIndex, SpecKind, normalize_path, relevant_diagnostics
from ..specs.a2a import CARD_KEY
from ..specs.mcp import unlisted_tool
from ..specs.model import OperationEntry

__all__ = [
    "SUGGEST_MAX_CANDIDATES",
    "SUGGEST_MAX_CHARS",
    "Target",
    "Unresolved",
    "resolve",
    "spec_url_for",
    "unresolved_for_error",
]

_S = "resolve"
OPERATION_ID_NOT_FOUND = rule(
    "operation-id-not-found",
    Severity.WARNING,
    "The operation_id is not in the spec; the resource path and HTTP method are tried instead.",
    stage=_S,
)
HTTP_METHOD_MISMATCH = rule(
    "http-method-mismatch",
    Severity.ERROR,
    "The operation found by operation_id has another HTTP method or path than the manifest's "
    "http_method and resource_path say: the card contradicts itself, and nothing is derived from it.",
    stage=_S,
)
OPERATION_NOT_FOUND = rule(
    "operation-not-found", Severity.ERROR, "No operation of the spec matches the manifest's operation.", stage=_S
)
AMBIGUOUS_OPERATION = rule(
    "ambiguous-operation", Severity.ERROR, "Several operations of the spec match the manifest's operation.", stage=_S
)
PATH_SPELLING = rule(
    "operation-path-spelling",
    Severity.INFO,
    "The resource path matched the spec's operation under another documented spelling of the same endpoint "
    "(an OData action without its namespace, Graph's /me for /users/{id}).",
    stage=_S,
)
NO_SELECTOR = rule(
    "no-selector",
    Severity.ERROR,
    "The operation names neither an operation_id nor a resource path with an HTTP method.",
    stage=_S,
)
UNSUPPORTED_SPEC = rule(
    "unsupported-spec", Severity.ERROR, "The spec is of a kind ramscope cannot resolve operations in.", stage=_S
)
SPEC_UNAVAILABLE = rule("spec-unavailable", Severity.ERROR, "The spec could not be obtained.", stage=_S)
SPEC_INVALID = rule("spec-invalid", Severity.ERROR, "The spec was obtained but cannot be read.", stage=_S)
MCP_TOOL_UNVERIFIED = rule(
    "mcp-tool-unverified",
    Severity.WARNING,
    "The MCP server lists its tools only to authenticated clients, so the tool name could not be verified; "
    "the server-wide requirement applies.",
    stage=_S,
)
MCP_TOOL_NOT_LISTED = rule(
    "mcp-tool-not-listed",
    Severity.ERROR,
    "The MCP server does not list the tool to anonymous clients but demands authorization for some tools: the tool "
    "may exist behind that authorization, so its requirements are unknown.",
    stage=_S,
)
SKILL_MATCHED_BY_NAME = rule(
    "skill-matched-by-name",
    Severity.WARNING,
    "The resource path names an A2A skill by its display name rather than its id.",
    stage=_S,
)

_URL_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*")
_REST_KINDS = frozenset({SpecKind.OPENAPI, SpecKind.DISCOVERY, SpecKind.STONE})
#: Stone's URL spelling of a route version (``copy_v2``), read as its id spelling (``copy:2``).
_STONE_VERSION = re.compile(r"^(?P<route>.+)_v(?P<version>[2-9][0-9]{0,3}|1[0-9]{1,3})$")


@dataclass(frozen=True, slots=True)
class Target:
    index: SpecIndex
    entry: OperationEntry
    #: "operation_id" | "path_method" | "tool_name" | "tool_name_unverified" | "agent_card" | "skill"
    matched_by: str
    diagnostics: tuple[Diagnostic, ...] = ()


@dataclass(frozen=True, slots=True)
class Unresolved:
    reason: str  # "operation-not-found", "ambiguous-operation", "no-selector", "unsupported-spec", ...
    message: str
    suggestions: tuple[str, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()


def spec_url_for(resource: Resource, operation: Operation) -> str:
    """The spec an operation is resolved in: its own ``spec_url`` if given, else its resource's."""
    aos = operation.api_operation_spec
    if aos is not None and aos.spec_url:
        return aos.spec_url
    return resource.spec_url


def _spec_pointer(resource: Resource, operation: Operation) -> str:
    """Where the card names the spec of this operation (diagnostics about the spec point there)."""
    aos = operation.api_operation_spec
    if aos is not None and aos.spec_url:
        return aos.loc.of("spec_url")
    if resource.spec is not None:
        return resource.spec.loc.of("spec_url")
    return operation.loc.pointer


def unresolved_for_error(error: RamscopeError, resource: Resource, operation: Operation) -> Unresolved:
    """The :class:`Unresolved` for an access whose spec could not be fetched or read."""
    ptr = _spec_pointer(resource, operation)
    url = spec_url_for(resource, operation)
    if isinstance(error, FetchError):
        reason, r = "spec-unavailable", SPEC_UNAVAILABLE
    elif isinstance(error, SpecError) and error.detail.startswith("unsupported spec"):
        # A document of a kind ramscope does not read; one that cannot be parsed at all ("unreadable
        # spec: invalid JSON ...", too deep, bad UTF-8) was obtained but is invalid.
        reason, r = "unsupported-spec", UNSUPPORTED_SPEC
    else:
        reason, r = "spec-invalid", SPEC_INVALID
    message = f"spec {url}: {getattr(error, 'detail', str(error))}"
    return Unresolved(reason, message, diagnostics=(r(ptr, message, data={"spec_url": url, "error": error.code}),))


#: Suggestions ("did you mean ...") are a courtesy, so their cost is bounded: a name is compared
#: clipped to this many characters, with at most this many candidates (those nearest in length).
#: Unbounded, difflib over a 200,000-operation spec and a 5 MB operation id ran for minutes.
SUGGEST_MAX_CHARS = 200
SUGGEST_MAX_CANDIDATES = 2_000
_SUGGEST: ContextVar[bool] = ContextVar("ramscope_suggest", default=True)


def resolve(resource: Resource, operation: Operation, index: SpecIndex, *, suggest: bool = True) -> Target | Unresolved:
    """The operation of ``index`` that ``operation`` (of ``resource``) names, or why there is none.

    ``suggest=False`` leaves out the nearest-operation suggestions of an unresolved result (a caller
    resolving many hostile accesses bounds how many it pays for).
    """
    token = _SUGGEST.set(suggest)
    try:
        return _resolve(resource, operation, index)
    finally:
        _SUGGEST.reset(token)


def _resolve(resource: Resource, operation: Operation, index: SpecIndex) -> Target | Unresolved:
    op_ptr = operation.loc.pointer
    if index.kind is SpecKind.MCP:
        return _resolve_tool(resource, operation, index)
    if index.kind is SpecKind.A2A:
        return _resolve_skill(resource, operation, index)
    if index.kind is SpecKind.GRAPHQL:
        return _resolve_graphql(resource, operation, index)
    if index.kind not in _REST_KINDS:
        message = f"resolving operations in {index.kind.value} specs is not implemented ({index.url})"
        return Unresolved("unsupported-spec", message, diagnostics=(UNSUPPORTED_SPEC(op_ptr, message),))
    spec_ptr = _spec_pointer(resource, operation)
    aos = operation.api_operation_spec
    op_id = aos.operation_id if aos else ""
    method = aos.http_method.strip().upper() if aos else ""
    raw_path = resource.resource_path.strip()
    path = _request_path(raw_path)
    aos_ptr = operation.loc.of("api_operation_spec")
    notes: list[Diagnostic] = []

    if op_id:
        # Exact first: real ids carry stray spaces ("Get Card Type Information ").
        hits = index.by_operation_id.get(op_id) or index.by_operation_id.get(op_id.strip(), [])
        if not hits and index.kind is SpecKind.STONE:
            hits = index.by_operation_id.get(_stone_id(op_id.strip()), [])
        if len(hits) == 1:
            entry = hits[0]
            by_path = index.by_method_path.get((method, normalize_path(path)), []) if path and method else []
            other = (
                next((e for e in by_path if e is not entry and e.key != entry.key), None) if len(by_path) == 1 else None
            )
            if (method and method != entry.method) or other is not None:
                # Which one the card means cannot be told: the method (what a gateway permits, what
                # confirm-writes judges) or the id. Neither is guessed (issue 22).
                assert aos is not None
                said = f"{method} {raw_path}" if other is not None else f"http_method {method}"
                message = (
                    f"operation_id {op_id!r} is {entry.method} {entry.full_path or entry.path} in the spec, but "
                    f"{said} names {'operation ' + repr(other.key) if other is not None else 'another method'}: "
                    "the card contradicts itself"
                )
                ptr = aos.loc.of("http_method")
                return Unresolved("selector-contradiction", message, (), (*notes, HTTP_METHOD_MISMATCH(ptr, message)))
            return _target(index, entry, "operation_id", notes, spec_ptr)
        assert aos is not None
        if len(hits) > 1:
            return _ambiguous(index, hits, f"operation_id {op_id!r}", aos.loc.of("operation_id"), spec_ptr)
        suggestions = _suggest(index, op_id, "", "")
        notes.append(
            OPERATION_ID_NOT_FOUND(
                aos.loc.of("operation_id"),
                f"operation_id {op_id!r} is not in {index.url}"
                + ("; trying resource_path + http_method" if path and method else ""),
                hint=f"did you mean {suggestions[0]}?" if suggestions else None,
                data={"suggestions": list(suggestions)},
            )
        )

    if path and method:
        hits = index.by_method_path.get((method, normalize_path(path)), [])
        if not hits:
            hits, why = _other_spelling(index, method, path)
            if len(hits) == 1:
                e = hits[0]
                notes.append(
                    PATH_SPELLING(
                        aos_ptr,
                        f"{method} {raw_path} is spelled {e.method} {e.path} in {index.url} ({why})",
                        data={"path": e.path},
                    )
                )
        if len(hits) == 1:
            return _target(index, hits[0], "path_method", notes, spec_ptr)
        if len(hits) > 1:
            return _ambiguous(index, hits, f"{method} {raw_path}", aos_ptr, spec_ptr, notes)
        what = f"{method} {raw_path}" + (f" (nor operation_id {op_id!r})" if op_id else "")
        return _not_found(index, what, _suggest(index, op_id, method, path), aos_ptr, spec_ptr, notes)

    if op_id:
        missing = (
            "http_method" if path else "the resource's resource_path" if method else "resource_path and http_method"
        )
        what = f"operation_id {op_id!r} (and {missing} is not given to match by path)"
        return _not_found(index, what, _suggest(index, op_id, method, path), aos_ptr, spec_ptr, notes)

    if path:
        message = f"resource_path {raw_path!r} is given but api_operation_spec.http_method is not"
        on_path = [e for (_, p), es in index.by_method_path.items() if p == normalize_path(path) for e in es]
        suggestions = tuple(dict.fromkeys(_label(e) for e in on_path))[:3] or _suggest(index, "", "", path)
    elif method:
        message = f"http_method {method} is given but the resource has no resource_path"
        suggestions = ()
    else:
        message = "the operation gives no api_operation_spec.operation_id and no resource_path + http_method"
        suggestions = ()
    return Unresolved(
        "no-selector",
        message,
        suggestions,
        (*notes, NO_SELECTOR(aos_ptr if aos else op_ptr, message, data={"suggestions": list(suggestions)})),
    )


# --------------------------------------------------------------------------- GraphQL and Stone


def _stone_id(op_id: str) -> str:
    """``files/copy_v2`` -> ``files/copy:2``: a Stone route named by its URL spelling."""
    m = _STONE_VERSION.match(op_id)
    return f"{m.group('route')}:{int(m.group('version'))}" if m else op_id


_GRAPHQL_ROOTS = ("Query", "Mutation", "Subscription")


def _resolve_graphql(resource: Resource, operation: Operation, index: SpecIndex) -> Target | Unresolved:
    """A root field named by ``operation_id``: ``Mutation.productCreate``, the schema's own root type name
    (``QueryRoot.orders``), or the bare field name where one root type alone has it."""
    spec_ptr = _spec_pointer(resource, operation)
    aos = operation.api_operation_spec
    op_id = (aos.operation_id if aos else "").strip()
    if not op_id:
        message = (
            "a GraphQL endpoint serves every root field at one URL (POST): name the field in "
            "api_operation_spec.operation_id (Mutation.productCreate, Query.orders)"
        )
        ptr = aos.loc.pointer if aos else operation.loc.pointer
        return Unresolved("no-selector", message, diagnostics=(NO_SELECTOR(ptr, message),))
    assert aos is not None
    ptr = aos.loc.of("operation_id")
    roots = index.extra.get("roots")
    wanted = [op_id]
    head, dot, name = op_id.rpartition(".")
    if dot and isinstance(roots, dict):
        # The schema's own root type name (Shopify's query root is QueryRoot).
        for role, type_name in roots.items():
            if head == type_name and role in ("query", "mutation", "subscription"):
                wanted.append(f"{role.capitalize()}.{name}")
    if not dot:
        wanted.extend(f"{r}.{op_id}" for r in _GRAPHQL_ROOTS)
    hits = list(dict.fromkeys(e for w in wanted for e in index.by_operation_id.get(w, ())))
    if len(hits) == 1:
        return _target(index, hits[0], "operation_id", [], spec_ptr)
    if len(hits) > 1:
        return _ambiguous(index, hits, f"field {op_id!r}", ptr, spec_ptr)
    return _not_found(index, f"root field {op_id!r}", _suggest(index, op_id, "", ""), ptr, spec_ptr, [])


# --------------------------------------------------------------------------- MCP tools and A2A skills


def _selector(resource: Resource, operation: Operation) -> tuple[str, str]:
    """The name a tool or skill is selected by, and where the card says it: resource_path, else operation_id."""
    if resource.resource_path:
        ptr = resource.spec.loc.of("resource_path") if resource.spec is not None else resource.loc.pointer
        return resource.resource_path, ptr
    aos = operation.api_operation_spec
    if aos is not None and aos.operation_id:
        return aos.operation_id, aos.loc.of("operation_id")
    return "", resource.spec.loc.of("resource_path") if resource.spec is not None else operation.loc.pointer


def _resolve_tool(resource: Resource, operation: Operation, index: SpecIndex) -> Target | Unresolved:
    spec_ptr = _spec_pointer(resource, operation)
    name, ptr = _selector(resource, operation)
    if not name.strip():
        message = "an MCP resource names its tool in resource_path, and it is empty"
        tools = tuple(e.operation_id for e in index.operations)[:3]
        return Unresolved(
            "no-selector", message, tools, (NO_SELECTOR(ptr, message, data={"suggestions": list(tools)}),)
        )
    hits = index.by_operation_id.get(name) or index.by_operation_id.get(name.strip(), [])
    if hits and index.extra.get("tools_listed") is not False:
        return _target(index, hits[0], "tool_name", [], spec_ptr)
    if index.extra.get("tools_listed") is False:
        # Not listed to ramscope (authenticated clients only): the name cannot be verified; the vendor's own
        # per-tool data, else the server-wide requirement.
        entry = unlisted_tool(index, name)
        why = f"{index.url} lists its tools only to authenticated clients"
        applies = (
            f"{entry.security_source} documents its requirement"
            if entry.security_source.startswith("catalog:")
            else "the server-wide requirement applies"
        )
        note = MCP_TOOL_UNVERIFIED(
            ptr,
            f"{why}, so tool {name!r} could not be verified; {applies}",
            hint="check the tool name against the server's documentation",
            data={"tool": name, "spec_url": index.url, "reason": "auth-only"},
        )
        return _target(index, entry, "tool_name_unverified", [note], spec_ptr)
    listing = index.extra.get("listing")
    private = isinstance(listing, dict) and listing.get("may_be_incomplete") is True
    names = [e.operation_id for e in index.operations]
    suggestions = tuple(_closest(name, names, 3))
    behind = _authorization_demanded(index)
    if behind is not None or private:
        # A server that protects tools one by one may hide them from anonymous listing (fastmcp's
        # require_scopes does), and a "private" listing (2026-07-28 caching) may depend on the caller's
        # token: absence from the list is no evidence the tool does not exist. It stays unverified.
        message = (
            f"tool {name!r} is not among the tools {index.url} lists to anonymous clients"
            + (f", but the server demands authorization ({behind})" if behind else "")
            + (
                '; its listing is cacheScope "private" (what it lists depends on the caller\'s authorization), '
                "so the tool could not be verified"
                if private
                else ""
            )
            + ": the tool may exist behind it, so what it needs is unknown"
        )
        listed = "check the tool name against the server's documentation" + (
            f"; if it is mistyped, the nearest listed: {'; '.join(suggestions)}" if suggestions else ""
        )
        diag = MCP_TOOL_NOT_LISTED(
            ptr,
            message,
            hint=listed,
            data={"tool": name, "suggestions": list(suggestions), "reason": "private-listing" if private else "auth"},
        )
        related = _repoint(index, relevant_diagnostics(index, None), spec_ptr)
        return Unresolved("mcp-tool-not-listed", message, suggestions, (diag, *related))
    # Servers may list more tools to clients that declare capabilities; ramscope declares none.
    declared = index.extra.get("client_capabilities")
    hint = (
        "ramscope lists tools declaring no client capabilities; a server may offer more tools to clients "
        "that declare sampling, elicitation or roots"
        if not declared
        else None
    )
    return _not_found(index, f"tool {name!r}", suggestions, ptr, spec_ptr, [], hint=hint)


#: Where an anonymously listing MCP server's requirement came from when it names authorization.
_AUTHORIZATION_SOURCES = frozenset({"protected-resource-metadata", "authorization-server-metadata", "challenge"})


def _authorization_demanded(index: SpecIndex) -> str | None:
    """Why an MCP server that listed its tools is known to demand authorization for some, or None."""
    source = index.extra.get("server_security_source")
    if source in _AUTHORIZATION_SOURCES:
        return f"its {source}"
    for e in index.operations:
        if e.security_source == "tool" and e.requirements and () not in e.requirements:
            return f"tool {e.operation_id!r} declares securitySchemes without noauth"
    return None


def _resolve_skill(resource: Resource, operation: Operation, index: SpecIndex) -> Target | Unresolved:
    spec_ptr = _spec_pointer(resource, operation)
    name, ptr = _selector(resource, operation)
    if not name.strip():
        card = index.operation(CARD_KEY)
        if card is None:  # pragma: no cover - every A2A index has its card entry
            message = f"{index.url} has no entry for the agent as a whole"
            return Unresolved("operation-not-found", message, diagnostics=(OPERATION_NOT_FOUND(ptr, message),))
        return _target(index, card, "agent_card", [], spec_ptr)
    for wanted in dict.fromkeys((name, name.strip())):
        hits = [e for e in index.by_operation_id.get(wanted, ()) if e.key != CARD_KEY]
        if hits:
            return _target(index, hits[0], "skill", [], spec_ptr)
    # By name: looked up in a per-spec table, not by a scan per access (a card may hold 100,000).
    titles = _skill_titles(index)
    by_name = list(dict.fromkeys(e for t in dict.fromkeys((name, name.strip())) for e in titles.get(t, ())))
    if len(by_name) == 1:
        entry = by_name[0]
        note = SKILL_MATCHED_BY_NAME(
            ptr,
            f"{name!r} is the name of skill {entry.operation_id!r} of {index.url}, not its id",
            hint=f"name the skill by its id: {entry.operation_id!r}",
            data={"skill": entry.operation_id},
        )
        return _target(index, entry, "skill", [note], spec_ptr)
    if len(by_name) > 1:
        return _ambiguous(index, by_name, f"skill name {name!r}", ptr, spec_ptr)
    if not _SUGGEST.get():
        return _not_found(index, f"skill {name!r}", (), ptr, spec_ptr, [])
    skills = [e for e in index.operations if e.key != CARD_KEY]
    ids = {e.operation_id: e for e in skills}
    titled = {e.title: e for e in skills if e.title}
    found = _closest(name, list(ids), 3) + [titled[t].operation_id for t in _closest(name, list(titled), 3)]
    suggestions = tuple(f"{i} ({ids[i].title})" if ids[i].title else i for i in dict.fromkeys(found))[:3]
    return _not_found(index, f"skill {name!r}", suggestions, ptr, spec_ptr, [])


# --------------------------------------------------------------------------- helpers


def _request_path(resource_path: str) -> str:
    """The path of a resource path, which some cards write as a full URL.

    Only a scheme and host are cut: ``?`` and ``#`` stay, since real path keys use
    them (AWS specs have paths like ``/#X-Amz-Target=...`` and ``/finding/{id}#analyzerArn``).
    """
    m = _URL_PREFIX.match(resource_path)
    if m is None:
        return resource_path
    return resource_path[m.end() :] or "/"


def _label(e: OperationEntry) -> str:
    if not e.method:  # an MCP tool or an A2A skill
        return f"{e.operation_id} ({e.title})" if e.title and e.title != e.operation_id else e.operation_id
    where = f"{e.method} {e.full_path or e.path}"
    return f"{e.operation_id} ({where})" if e.operation_id else where


def _repoint(index: SpecIndex, diags: Iterable[Diagnostic], card_ptr: str) -> list[Diagnostic]:
    """Copies of spec diagnostics pointing at the card's spec_url; the spec location moves to data."""
    out = []
    for d in diags:
        at = f" (at {d.path} in the spec)" if d.path else ""
        out.append(
            Diagnostic(
                code=d.code,
                severity=d.severity,
                path=card_ptr,
                message=f"spec {index.url}: {d.message}{at}",
                hint=d.hint,
                data={**d.data, "spec_url": index.url, "spec_pointer": d.path},
            )
        )
    return out


def _target(index: SpecIndex, entry: OperationEntry, matched_by: str, notes: list[Diagnostic], spec_ptr: str) -> Target:
    related = _repoint(index, relevant_diagnostics(index, entry), spec_ptr)
    return Target(index, entry, matched_by, (*notes, *related))


def _ambiguous(
    index: SpecIndex,
    hits: Sequence[OperationEntry],
    what: str,
    ptr: str,
    spec_ptr: str,
    notes: Sequence[Diagnostic] = (),
) -> Unresolved:
    labels = tuple(_label(e) for e in hits)
    message = f"{what} matches {len(hits)} operations in {index.url}: {'; '.join(labels)}"
    diag = AMBIGUOUS_OPERATION(
        ptr,
        message,
        hint="name the operation by its operation_id, or use a more specific path (e.g. Discovery's flatPath)",
        data={"candidates": list(labels)},
    )
    return Unresolved("ambiguous-operation", message, labels, (*notes, diag))


def _not_found(
    index: SpecIndex,
    what: str,
    suggestions: tuple[str, ...],
    ptr: str,
    spec_ptr: str,
    notes: Sequence[Diagnostic],
    *,
    hint: str | None = None,
) -> Unresolved:
    message = f"{what} is not an operation of {index.url}"
    if suggestions:
        message += f"; nearest: {'; '.join(suggestions)}"
    diag = OPERATION_NOT_FOUND(ptr, message, hint=hint, data={"suggestions": list(suggestions)})
    related = _repoint(index, relevant_diagnostics(index, None), spec_ptr)
    return Unresolved("operation-not-found", message, suggestions, (*notes, diag, *related))


def _suggest(index: SpecIndex, op_id: str, method: str, path: str, n: int = 3) -> tuple[str, ...]:
    """The ``n`` nearest operations, by operation id and by normalised "METHOD path" similarity."""
    if not _SUGGEST.get():
        return ()
    scored: dict[str, float] = {}
    ids, with_method, without_method = _candidates(index)
    if op_id:
        for match in _closest(op_id, list(ids), n):
            label = _label(ids[match])
            scored[label] = max(scored.get(label, 0.0), _ratio(op_id, match))
    if path:
        spellings = with_method if method else without_method
        wanted_all = [f"{method} {normalize_path(path)}".strip()]
        if _odata_spellings(index):
            wanted_all.append(f"{method} {_odata_key(path)}".strip())
        for wanted in wanted_all:
            # Each operation has several spellings (with and without base path): ask for more than n.
            for match in _closest(wanted, list(spellings), n * 4):
                label = _label(spellings[match])
                scored[label] = max(scored.get(label, 0.0), _ratio(wanted, match))
    return tuple(sorted(scored, key=lambda k: (-scored[k], k))[:n])


#: Spec paths of an OData service qualify actions and functions with their namespace.
_ODATA_SEGMENT = re.compile(r"/microsoft\.graph\.[A-Za-z]")
_ODATA: dict[tuple[str, str], dict[tuple[str, str], list[OperationEntry]]] = {}


def _odata_key(path: str) -> str:
    from ..providers.graph import normalise_path  # noqa: PLC0415 - only OData specs need it

    return normalise_path(path)


def _odata_spellings(index: SpecIndex) -> dict[tuple[str, str], list[OperationEntry]]:
    """(METHOD, namespace-free key) -> operations, for a spec whose paths use OData namespaces
    (``/me/microsoft.graph.sendMail``); empty for any other spec. Built once per spec."""
    key = (index.url, index.sha256)
    hit = _ODATA.get(key)
    if hit is not None:
        return hit
    out: dict[tuple[str, str], list[OperationEntry]] = {}
    if any(_ODATA_SEGMENT.search(e.path or "") for e in index.operations):
        for e in index.operations:
            for p in dict.fromkeys(x for x in (e.full_path, e.path, *e.alt_paths) if x):
                bucket = out.setdefault((e.method, _odata_key(p)), [])
                if all(x.key != e.key for x in bucket):
                    bucket.append(e)
    if len(_ODATA) >= 8:
        _ODATA.pop(next(iter(_ODATA)))
    _ODATA[key] = out
    return out


def _other_spelling(index: SpecIndex, method: str, path: str) -> tuple[list[OperationEntry], str]:
    """The operations an OData spec spells otherwise: the action segment with or without its
    ``microsoft.graph.`` namespace, any letter case, and Graph's ``/me/...`` twin ``/users/{id}/...``
    (and back) where the spec lists only one of them."""
    spellings = _odata_spellings(index)
    if not spellings:
        return [], ""
    from ..providers.graph import twins  # noqa: PLC0415 - only OData specs need it

    key = _odata_key(path)
    hits = spellings.get((method, key), [])
    if hits:
        return hits, "the OData namespace and letter case aside"
    for twin, meaning in twins(key):
        hits = spellings.get((method, twin), [])
        if hits:
            return hits, f"its documented twin: {meaning}"
    return [], ""


_Candidates = tuple[dict[str, OperationEntry], dict[str, OperationEntry], dict[str, OperationEntry]]
_CANDIDATES: dict[tuple[str, str], _Candidates] = {}


def _candidates(index: SpecIndex) -> _Candidates:
    """Operation ids and path spellings of ``index``, built once per spec (a few recent specs are kept)."""
    key = (index.url, index.sha256)
    hit = _CANDIDATES.get(key)
    if hit is not None:
        return hit
    ids = {e.operation_id: e for e in index.operations if e.operation_id}
    with_method: dict[str, OperationEntry] = {}
    without_method: dict[str, OperationEntry] = {}
    for e in index.operations:
        for p in (e.full_path, e.path, *e.alt_paths):
            if p:
                norm = normalize_path(p)
                with_method.setdefault(f"{e.method} {norm}", e)
                without_method.setdefault(norm, e)
    # An OData spec's operations also under their namespace-free spelling, so that "/me/sendMail"
    # finds "/me/microsoft.graph.sendMail" (a card writes what Microsoft's docs write).
    for (verb, spelled), entries in _odata_spellings(index).items():
        with_method.setdefault(f"{verb} {spelled}", entries[0])
        without_method.setdefault(spelled, entries[0])
    if len(_CANDIDATES) >= 8:
        _CANDIDATES.pop(next(iter(_CANDIDATES)))
    _CANDIDATES[key] = (ids, with_method, without_method)
    return ids, with_method, without_method


_TITLES: dict[tuple[str, str], dict[str, list[OperationEntry]]] = {}


def _skill_titles(index: SpecIndex) -> dict[str, list[OperationEntry]]:
    """An A2A index's skills by name, built once per spec (a few recent specs are kept)."""
    key = (index.url, index.sha256)
    hit = _TITLES.get(key)
    if hit is None:
        hit = {}
        for e in index.operations:
            if e.key != CARD_KEY and e.title:
                hit.setdefault(e.title, []).append(e)
        if len(_TITLES) >= 8:
            _TITLES.pop(next(iter(_TITLES)))
        _TITLES[key] = hit
    return hit


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a[:SUGGEST_MAX_CHARS], b[:SUGGEST_MAX_CHARS]).ratio()


def _closest(word: str, candidates: list[str], n: int) -> list[str]:
    """The ``n`` closest candidates, lowering the bar only as far as needed (cheap cutoffs first).

    Bounded (see :data:`SUGGEST_MAX_CHARS`): names are compared clipped, and only the
    :data:`SUGGEST_MAX_CANDIDATES` candidates nearest in length are compared at all.
    """
    if not _SUGGEST.get() or not candidates:
        return []
    word = word[:SUGGEST_MAX_CHARS]
    if len(candidates) > SUGGEST_MAX_CANDIDATES:
        candidates = heapq.nsmallest(
            SUGGEST_MAX_CANDIDATES, candidates, key=lambda c: (abs(min(len(c), SUGGEST_MAX_CHARS) - len(word)), c)
        )
    clipped: dict[str, str] = {}
    for c in candidates:
        clipped.setdefault(c[:SUGGEST_MAX_CHARS], c)
    keys = list(clipped)
    found: list[str] = []
    for cutoff in (0.6, 0.4, 0.2, 0.0):
        for match in difflib.get_close_matches(word, keys, n=n, cutoff=cutoff):
            if clipped[match] not in found:
                found.append(clipped[match])
        if len(found) >= n:
            break
    return found[:n]
