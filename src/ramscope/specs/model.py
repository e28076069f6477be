"""The one shape every spec kind is reduced to: :class:`SpecIndex`.

OpenAPI 2.0/3.x, Google Discovery, an MCP server's ``tools/list`` and an A2A
agent card all become a list of :class:`OperationEntry` with their security
:data:`Requirements`, plus the :class:`SecurityScheme` objects those name. Raw
spec dicts never leave ``ramscope.specs``; everything downstream works on this.

Requirements are an OR-list of AND-lists::

    Requirements = ( alternative, alternative, ... )        # any one suffices
    alternative  = ( SchemeRequirement, ... )               # all of them together
    ()           = no authorization needed (declared so)
    ((),)        = anonymous access is allowed (an empty alternative)
    None         = the spec does not say (e.g. GitHub's REST spec): *unknown*,
                   which is never the same as "needs nothing".

An index is immutable and JSON-serialisable (``to_json``/``from_json``), so it
can be cached by the spec's SHA-256 and loaded without parsing the spec again.
"""

from __future__ import annotations

import enum
import re
from abc import abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeAlias, TypeVar, overload

import orjson

from ..diagnostics import Diagnostic
from ..documents import SpecKind

__all__ = [
    "INDEX_FORMAT_VERSION",
    "FlowKind",
    "OAuthFlow",
    "OperationEntry",
    "OperationTable",
    "Requirement",
    "RequirementGroups",
    "Requirements",
    "Row",
    "RowOperations",
    "SchemeRequirement",
    "SchemeType",
    "SecurityScheme",
    "SpecIndex",
    "SpecKind",
    "bitmask",
    "entry_row",
    "normalize_path",
    "path_spellings",
    "reqs_from_json",
    "reqs_to_json",
    "row_entry",
    "scheme_from_dict",
    "scheme_to_dict",
    "standard_pointer",
]

_K = TypeVar("_K")

#: Bump when the index shape, an adapter's reading or the cached form changes: cached
#: indexes of an older format are then rebuilt instead of trusted.
#: 10: Shopify readings by host, x-github-plan kept (issue 30); 9: MCP server-baseline, listing hints;
#: 8: GraphQL admin notes, Shopify; 7: "Allowed For"
INDEX_FORMAT_VERSION = 10


class SchemeType(enum.StrEnum):
    OAUTH2 = "oauth2"
    API_KEY = "apiKey"
    HTTP = "http"
    OPENID_CONNECT = "openIdConnect"
    MUTUAL_TLS = "mutualTLS"
    #: A credential is demanded but the server does not say which kind.
    UNKNOWN = "unknown"


class FlowKind(enum.StrEnum):
    AUTHORIZATION_CODE = "authorizationCode"
    IMPLICIT = "implicit"
    PASSWORD = "password"
    CLIENT_CREDENTIALS = "clientCredentials"
    DEVICE_CODE = "deviceCode"


@dataclass(frozen=True, slots=True)
class OAuthFlow:
    kind: FlowKind
    authorization_url: str = ""
    token_url: str = ""
    refresh_url: str = ""
    #: (scope, the provider's own description), in the spec's order.
    scopes: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class SecurityScheme:
    name: str
    type: SchemeType
    description: str = ""
    flows: tuple[OAuthFlow, ...] = ()
    #: ``http``: basic, bearer, digest ...
    http_scheme: str = ""
    bearer_format: str = ""
    #: ``apiKey``: header, query or cookie, and the parameter name.
    api_key_in: str = ""
    api_key_name: str = ""
    open_id_connect_url: str = ""
    #: True when ramscope inferred the scheme (e.g. from a 401 challenge, or Discovery's
    #: implicit OAuth 2.0) rather than reading it from a declaration.
    inferred: bool = False
    #: The grant namespace of its scopes when it is not the canonical server of its URLs: a
    #: provider catalog's application permissions (Microsoft's app roles) are granted by the same
    #: server as its delegated scopes, under the same names, but are other grants.
    namespace: str = ""

    def scope_description(self, scope: str) -> str | None:
        for flow in self.flows:
            for name, desc in flow.scopes:
                if name == scope:
                    return desc
        return None

    @property
    def flow_kinds(self) -> frozenset[FlowKind]:
        return frozenset(f.kind for f in self.flows)


@dataclass(frozen=True, slots=True, order=True)
class SchemeRequirement:
    """One term of an AND-set: this scheme, with these scopes (sorted, unique)."""

    scheme: str
    scopes: tuple[str, ...] = ()

    @classmethod
    def of(cls, scheme: str, scopes: Iterable[str] = ()) -> SchemeRequirement:
        return cls(scheme, tuple(sorted(set(scopes))))


Requirement = tuple[SchemeRequirement, ...]
Requirements = tuple[Requirement, ...]


@dataclass(frozen=True, slots=True)
class OperationEntry:
    #: Unique within its index: the operation id when it is unique, else "METHOD /path".
    key: str
    #: OpenAPI operationId, Discovery method id, MCP tool name, A2A skill id; "" if none.
    operation_id: str
    #: Upper-case HTTP method; "" for MCP tools and A2A skills.
    method: str = ""
    #: The path template as the spec writes it (OpenAPI path key, Discovery ``path``).
    path: str = ""
    #: The path with the spec's base path in front (server URL path, basePath, servicePath).
    full_path: str = ""
    #: Other path spellings that name the same operation (Discovery ``flatPath``).
    alt_paths: tuple[str, ...] = ()
    #: ``None``: the spec does not say (unknown). See the module docstring.
    requirements: Requirements | None = None
    #: Where the requirements come from: "operation", "root", "method", "tool", "server",
    #: "card", "skill", "undeclared" ...
    security_source: str = ""
    title: str = ""
    description: str = ""
    deprecated: bool = False
    #: Kind-specific facts worth showing (MCP tool annotations, A2A skill tags ...), JSON-compatible.
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    #: JSON pointer of the operation in its spec, for diagnostics.
    pointer: str = ""


#: Operations grouped by equal requirements: (requirements, bitmask of operation positions).
RequirementGroups: TypeAlias = tuple[tuple[Requirements | None, int], ...]


class OperationTable(Sequence[OperationEntry]):
    """A sequence of operations that also answers the index's lookups itself.

    :class:`SpecIndex` uses these instead of scanning every operation when its
    ``operations`` is one (the cached compact form, ``ramscope.specs.compact``, is:
    it decodes only the operations a run asks for).
    """

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def _at(self, k: int) -> OperationEntry:
        """Operation ``k`` (0 <= k < len), made when first asked for."""

    @abstractmethod
    def by_operation_id(self) -> Mapping[str, list[OperationEntry]]: ...

    @abstractmethod
    def by_method_path(self) -> Mapping[tuple[str, str], list[OperationEntry]]: ...

    @abstractmethod
    def requirement_groups(self) -> RequirementGroups: ...

    @overload
    def __getitem__(self, i: int) -> OperationEntry: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[OperationEntry, ...]: ...

    def __getitem__(self, i: int | slice) -> OperationEntry | tuple[OperationEntry, ...]:
        n = len(self)
        if isinstance(i, slice):
            return tuple(self._at(k) for k in range(*i.indices(n)))
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("operation index out of range")
        return self._at(i)

    def __iter__(self) -> Iterator[OperationEntry]:
        return (self._at(k) for k in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))


#: An operation as a builder holds it: :class:`OperationEntry`'s fields, in order, in a plain tuple
#: (a tuple display costs a tenth of a frozen dataclass, and Graph beta has 22,000 operations),
#: except the pointer: ``None`` for the usual ``/paths/<escaped path>/<method>`` (made when asked).
Row: TypeAlias = tuple[
    str, str, str, str, str, tuple[str, ...], "Requirements | None", str, str, str, bool, Mapping[str, Any], str | None
]


def standard_pointer(path: str, method: str) -> str:
    """Where an OpenAPI operation usually is: ``/paths/<escaped path>/<method, lower case>``."""
    return "/paths/" + path.replace("~", "~0").replace("/", "~1") + "/" + method.lower()


def entry_row(op: OperationEntry) -> Row:
    return (
        op.key,
        op.operation_id,
        op.method,
        op.path,
        op.full_path,
        op.alt_paths,
        op.requirements,
        op.security_source,
        op.title,
        op.description,
        op.deprecated,
        op.extra,
        op.pointer,
    )


def row_entry(row: Row) -> OperationEntry:
    pointer = row[12]
    return OperationEntry(*row[:12], pointer=standard_pointer(row[3], row[2]) if pointer is None else pointer)


class RowOperations(OperationTable):
    """A built index's operations, kept as :data:`Row` tuples and made entries when first asked for.

    What a run needs from a large spec's fresh index is its compact form (encoded straight from
    the rows) and a few look-ups; the entries of the operations it never looks at are never made.
    """

    def __init__(self, rows: Sequence[Row]) -> None:
        self.rows = tuple(rows)
        self._entries: dict[int, OperationEntry] = {}

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return f"<RowOperations: {len(self.rows)} operations>"

    def _at(self, k: int) -> OperationEntry:
        hit = self._entries.get(k)
        if hit is None:
            hit = self._entries[k] = row_entry(self.rows[k])
        return hit

    def by_operation_id(self) -> Mapping[str, list[OperationEntry]]:
        where: dict[str, list[int]] = {}
        for k, row in enumerate(self.rows):
            if row[1]:
                where.setdefault(row[1], []).append(k)
        return _Positions(self, where)

    def by_method_path(self) -> Mapping[tuple[str, str], list[OperationEntry]]:
        where: dict[tuple[str, str], list[int]] = {}
        for k, row in enumerate(self.rows):
            for n in spellings(row[3], row[4], row[5]):
                where.setdefault((row[2], n), []).append(k)
        return _Positions(self, where)

    def requirement_groups(self) -> RequirementGroups:
        return group_requirements([row[6] for row in self.rows])


class _Positions(Mapping[_K, list[OperationEntry]]):
    """A look-up of operation positions, answered with the operations."""

    def __init__(self, ops: RowOperations, where: dict[_K, list[int]]) -> None:
        self._ops = ops
        self._where = where

    def __getitem__(self, key: _K) -> list[OperationEntry]:
        return [self._ops[k] for k in self._where[key]]

    def __iter__(self) -> Iterator[_K]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


@dataclass(frozen=True)
class SpecIndex:
    kind: SpecKind
    url: str
    sha256: str
    title: str = ""
    #: The API's own version (OpenAPI info.version, Discovery version, server version ...).
    version: str = ""
    #: The spec format's version: "2.0", "3.0.3", "3.1.0", "v1" (Discovery), an MCP protocol
    #: version, an A2A protocol version.
    spec_version: str = ""
    base_paths: tuple[str, ...] = ()
    #: A tuple as built by the adapters; an :class:`OperationTable` when loaded from the cache.
    operations: Sequence[OperationEntry] = ()
    schemes: tuple[SecurityScheme, ...] = ()
    #: False when the spec declares no security at all (no schemes, no requirements):
    #: its operations' requirements are then unknown, not empty.
    security_declared: bool = True
    diagnostics: tuple[Diagnostic, ...] = ()
    #: Kind-specific facts (MCP: protocol version, declared client capabilities; A2A: the
    #: remote card's manifest ...), JSON-compatible.
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    # ---- lookups (built on first use, not serialised)

    @cached_property
    def scheme_map(self) -> dict[str, SecurityScheme]:
        return {s.name: s for s in self.schemes}

    @cached_property
    def by_operation_id(self) -> Mapping[str, list[OperationEntry]]:
        if isinstance(self.operations, OperationTable):
            return self.operations.by_operation_id()
        out: dict[str, list[OperationEntry]] = {}
        for op in self.operations:
            if op.operation_id:
                out.setdefault(op.operation_id, []).append(op)
        return out

    @cached_property
    def by_method_path(self) -> Mapping[tuple[str, str], list[OperationEntry]]:
        """(METHOD, normalised path) -> operations, for every spelling of each path.

        Each path is entered as written and with the base path, so a RAM path with or
        without the base path finds it.
        """
        if isinstance(self.operations, OperationTable):
            return self.operations.by_method_path()
        out: dict[tuple[str, str], list[OperationEntry]] = {}
        for op in self.operations:
            for n in path_spellings(op):
                out.setdefault((op.method, n), []).append(op)
        return out

    def requirement_groups(self) -> RequirementGroups:
        """Operations grouped by equal requirements, in order of first appearance, with bitmasks
        of their positions: all a grant-set computation needs, without touching each operation."""
        if isinstance(self.operations, OperationTable):
            return self.operations.requirement_groups()
        return group_requirements([op.requirements for op in self.operations])

    def operation(self, key: str) -> OperationEntry | None:
        return next((op for op in self.operations if op.key == key), None)

    # ---- serialisation

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": INDEX_FORMAT_VERSION,
            "kind": self.kind.value,
            "url": self.url,
            "sha256": self.sha256,
            "title": self.title,
            "version": self.version,
            "spec_version": self.spec_version,
            "base_paths": list(self.base_paths),
            "security_declared": self.security_declared,
            "schemes": [scheme_to_dict(s) for s in self.schemes],
            "operations": [_op_to_dict(o) for o in self.operations],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "extra": dict(self.extra),
        }

    def to_json(self) -> bytes:
        return orjson.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SpecIndex:
        if d.get("format") != INDEX_FORMAT_VERSION:
            raise ValueError(f"index format {d.get('format')!r}, expected {INDEX_FORMAT_VERSION}")
        return cls(
            kind=SpecKind(d["kind"]),
            url=d["url"],
            sha256=d["sha256"],
            title=d.get("title", ""),
            version=d.get("version", ""),
            spec_version=d.get("spec_version", ""),
            base_paths=tuple(d.get("base_paths", ())),
            security_declared=bool(d.get("security_declared", True)),
            schemes=tuple(scheme_from_dict(s) for s in d.get("schemes", ())),
            operations=tuple(_op_from_dict(o) for o in d.get("operations", ())),
            diagnostics=tuple(Diagnostic.from_dict(x) for x in d.get("diagnostics", ())),
            extra=dict(d.get("extra") or {}),
        )

    @classmethod
    def from_json(cls, data: bytes | str) -> SpecIndex:
        return cls.from_dict(orjson.loads(data))


# --------------------------------------------------------------------------- paths

_PARAM = re.compile(r"\{[^{}]*\}")
_SLASHES = re.compile(r"/{2,}")


def normalize_path(path: str) -> str:
    """Canonical form for matching: parameter names erased, no trailing slash, one leading slash.

    ``/calendars/{calendarId}/events``, ``/calendars/{id}/events/`` and
    ``calendars/{+id}/events`` all become ``/calendars/{}/events``.
    """
    # Each step only when it can change something: indexing Graph beta normalises 45,000 paths.
    p = path.strip()
    if "{" in p:
        p = _PARAM.sub("{}", p)
    if not p.startswith("/"):
        p = "/" + p
    if len(p) > 1 and p.endswith("/"):
        p = p.rstrip("/") or "/"
    if "//" in p:
        p = _SLASHES.sub("/", p)
    return p


def bitmask(positions: Iterable[int], n: int) -> int:
    """The integer with the given bit positions (all below ``n``) set, built in one pass."""
    bits = bytearray((n + 7) // 8)
    for p in positions:
        bits[p >> 3] |= 1 << (p & 7)
    return int.from_bytes(bits, "little")


def path_spellings(op: OperationEntry) -> list[str]:
    """The distinct normalised spellings of an operation's path (as written, with base path, alternatives)."""
    return spellings(op.path, op.full_path, op.alt_paths)


def spellings(path: str, full_path: str, alt_paths: Iterable[str]) -> list[str]:
    """:func:`path_spellings` of an operation given by its path fields (a :data:`Row`'s, say)."""
    seen: list[str] = []
    for p in (path, full_path, *alt_paths):
        if p:
            n = normalize_path(p)
            if n not in seen:
                seen.append(n)
    return seen


def group_requirements(reqs: Sequence[Requirements | None]) -> RequirementGroups:
    """Operations (given by their requirements, in order) grouped by equal requirements, in order
    of first appearance, each with the bitmask of its positions."""
    members: dict[Requirements | None, list[int]] = {}
    for i, r in enumerate(reqs):
        members.setdefault(r, []).append(i)
    return tuple((r, bitmask(positions, len(reqs))) for r, positions in members.items())


# --------------------------------------------------------------------------- codec helpers


def reqs_to_json(reqs: Requirements | None) -> Any:
    if reqs is None:
        return None
    return [[[t.scheme, list(t.scopes)] for t in alt] for alt in reqs]


def reqs_from_json(data: Any) -> Requirements | None:
    if data is None:
        return None
    return tuple(tuple(SchemeRequirement(s, tuple(scopes)) for s, scopes in alt) for alt in data)


def _op_to_dict(o: OperationEntry) -> dict[str, Any]:
    out: dict[str, Any] = {"key": o.key, "operation_id": o.operation_id}
    for name in ("method", "path", "full_path", "security_source", "title", "description", "pointer"):
        v = getattr(o, name)
        if v:
            out[name] = v
    if o.alt_paths:
        out["alt_paths"] = list(o.alt_paths)
    out["requirements"] = reqs_to_json(o.requirements)
    if o.deprecated:
        out["deprecated"] = True
    if o.extra:
        out["extra"] = dict(o.extra)
    return out


def _op_from_dict(d: Mapping[str, Any]) -> OperationEntry:
    return OperationEntry(
        key=d["key"],
        operation_id=d.get("operation_id", ""),
        method=d.get("method", ""),
        path=d.get("path", ""),
        full_path=d.get("full_path", ""),
        alt_paths=tuple(d.get("alt_paths", ())),
        requirements=reqs_from_json(d.get("requirements")),
        security_source=d.get("security_source", ""),
        title=d.get("title", ""),
        description=d.get("description", ""),
        deprecated=bool(d.get("deprecated", False)),
        extra=dict(d.get("extra") or {}),
        pointer=d.get("pointer", ""),
    )


def scheme_to_dict(s: SecurityScheme) -> dict[str, Any]:
    out: dict[str, Any] = {"name": s.name, "type": s.type.value}
    for name in ("description", "http_scheme", "bearer_format", "api_key_in", "api_key_name", "open_id_connect_url"):
        v = getattr(s, name)
        if v:
            out[name] = v
    if s.flows:
        out["flows"] = [
            {
                "kind": f.kind.value,
                "authorization_url": f.authorization_url,
                "token_url": f.token_url,
                "refresh_url": f.refresh_url,
                "scopes": [list(p) for p in f.scopes],
            }
            for f in s.flows
        ]
    if s.inferred:
        out["inferred"] = True
    if s.namespace:
        out["namespace"] = s.namespace
    return out


def scheme_from_dict(d: Mapping[str, Any]) -> SecurityScheme:
    return SecurityScheme(
        name=d["name"],
        type=SchemeType(d["type"]),
        description=d.get("description", ""),
        flows=tuple(
            OAuthFlow(
                kind=FlowKind(f["kind"]),
                authorization_url=f.get("authorization_url", ""),
                token_url=f.get("token_url", ""),
                refresh_url=f.get("refresh_url", ""),
                scopes=tuple((str(a), str(b)) for a, b in f.get("scopes", ())),
            )
            for f in d.get("flows", ())
        ),
        http_scheme=d.get("http_scheme", ""),
        bearer_format=d.get("bearer_format", ""),
        api_key_in=d.get("api_key_in", ""),
        api_key_name=d.get("api_key_name", ""),
        open_id_connect_url=d.get("open_id_connect_url", ""),
        inferred=bool(d.get("inferred", False)),
        namespace=str(d.get("namespace", "")),
    )
