"""The Resource Access Manifest: immutable model, lenient parsing, exact dumping.

The model mirrors ``ram.proto`` message for message and field for field, in
proto field order. Parsing accepts proto (snake_case) and ProtoJSON
(lowerCamelCase) field names and enum values by name, by prefixed name
(``INTERACTION_PROTOCOL_MCP``) or by number; it never raises on a bad value but
records a :class:`~ramscope.diagnostics.Diagnostic` with the JSON pointer of the
value *as written in the input*, and keeps going. Dumping follows proto3 JSON:
default values are omitted, enums are written by name, keys in field order, so
``parse(dump(m)) == m`` in either naming style.

Every parsed object remembers where it came from (:class:`Loc`), outside of
equality, so later stages can point their diagnostics at the input.
"""

from __future__ import annotations

import enum
import typing
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, Literal, TypeVar, get_args, get_origin

from .diagnostics import Diagnostic, Severity, join_pointer, rule

__all__ = [
    "AccessNecessity",
    "ApiOperationSpec",
    "IdentityType",
    "InteractionProtocol",
    "Loc",
    "Manifest",
    "Operation",
    "Resource",
    "ResourceAccess",
    "ResourceAccessManifest",
    "ResourceOwner",
    "ResourceSpec",
    "Style",
    "camel_name",
    "enum_from_json",
    "parse_manifest",
]

Style = Literal["snake", "camel"]

INVALID_TYPE = rule("invalid-type", Severity.ERROR, "A field holds a value of the wrong JSON type.", stage="parse")
UNKNOWN_FIELD = rule(
    "unknown-field", Severity.WARNING, "A field the RAM proto does not define (typo or extension).", stage="parse"
)
UNKNOWN_ENUM = rule(
    "unknown-enum-value",
    Severity.ERROR,
    "An enum field holds a name or number the proto does not define.",
    stage="parse",
)
DUPLICATE_FIELD = rule(
    "duplicate-field",
    Severity.ERROR,
    "The same field is given twice, in snake_case and in camelCase.",
    stage="parse",
)


# --------------------------------------------------------------------------- enums


class InteractionProtocol(enum.IntEnum):
    """The technical protocol used to interact with a resource."""

    INTERACTION_PROTOCOL_UNSPECIFIED = 0
    REST = 1
    A2A = 2
    MCP = 3


class ResourceOwner(enum.IntEnum):
    """2P (the consumer grants permission) or 3P (the consumer acknowledges egress)."""

    RESOURCE_OWNER_UNSPECIFIED = 0
    CONSUMER = 1
    THIRD_PARTY = 2


class IdentityType(enum.IntEnum):
    """Whose credentials an access uses."""

    IDENTITY_TYPE_UNSPECIFIED = 0
    END_USER = 1
    AGENT = 2


class AccessNecessity(enum.IntEnum):
    """The impact of denying an access; tiers are cumulative in this order."""

    ACCESS_NECESSITY_UNSPECIFIED = 0
    REQUIRED = 1
    RECOMMENDED = 2
    OPTIONAL = 3


E = TypeVar("E", bound=enum.IntEnum)


def _enum_prefix(cls: type[enum.IntEnum]) -> str:
    return cls(0).name.removesuffix("UNSPECIFIED")


def enum_names(cls: type[enum.IntEnum]) -> list[str]:
    """Every accepted spelling of an enum's values, canonical names first."""
    prefix = _enum_prefix(cls)
    names = [m.name for m in cls]
    names += [prefix + m.name for m in cls if not m.name.startswith(prefix)]
    return names


def enum_from_json(cls: type[E], raw: object) -> E | None:
    """An enum member from its name, prefixed name or number; ``None`` if none matches."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        try:
            return cls(raw)
        except ValueError:
            return None
    if isinstance(raw, str):
        member = cls.__members__.get(raw)
        if member is None:
            member = cls.__members__.get(raw.removeprefix(_enum_prefix(cls)))
        return member
    return None


# --------------------------------------------------------------------------- locations


@dataclass(frozen=True, slots=True)
class Loc:
    """Where a parsed object stands in its input: its JSON pointer and the keys as written."""

    pointer: str
    keys: Mapping[str, str] = field(default_factory=dict)
    style: Style = "snake"
    #: Fields whose input value was rejected at parse time (already diagnosed).
    rejected: frozenset[str] = frozenset()

    def of(self, name: str) -> str:
        """The pointer of field ``name`` (canonical snake_case) of this object."""
        key = self.keys.get(name) or (camel_name(name) if self.style == "camel" else name)
        return join_pointer(self.pointer, key)


def camel_name(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


_NO_LOC = Loc("")


class _Message:
    """Mixin of the generated codec, shared by every message class."""

    __slots__ = ()
    loc: Loc

    _FIELDS: ClassVar[tuple[_FieldInfo, ...]]

    def to_dict(self, style: Style = "snake") -> dict[str, Any]:
        """ProtoJSON-style dict: defaults omitted, enums by name, keys in proto order."""
        return _dump(self, style)

    def to_json(self, style: Style = "snake", *, indent: bool = True) -> str:
        import orjson  # noqa: PLC0415 - reading a card needs none of it (start-up, issue 36)

        opt = orjson.OPT_INDENT_2 if indent else 0
        return orjson.dumps(self.to_dict(style), option=opt).decode()


# --------------------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class ResourceSpec(_Message):
    spec_url: str = ""
    resource_path: str = ""
    loc: Loc = field(default=_NO_LOC, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Resource(_Message):
    id: str = ""
    interaction_protocol: InteractionProtocol = InteractionProtocol.INTERACTION_PROTOCOL_UNSPECIFIED
    owner: ResourceOwner = ResourceOwner.RESOURCE_OWNER_UNSPECIFIED
    display_name: str = ""
    description: str = ""
    developer_documentation_url: str = ""
    spec: ResourceSpec | None = None
    loc: Loc = field(default=_NO_LOC, compare=False, repr=False)

    @property
    def spec_url(self) -> str:
        return self.spec.spec_url if self.spec else ""

    @property
    def resource_path(self) -> str:
        return self.spec.resource_path if self.spec else ""


@dataclass(frozen=True, slots=True)
class ApiOperationSpec(_Message):
    spec_url: str = ""
    operation_id: str = ""
    http_method: str = ""
    loc: Loc = field(default=_NO_LOC, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Operation(_Message):
    id: str = ""
    resource: str = ""
    description: str = ""
    developer_documentation_url: tuple[str, ...] = ()
    api_operation_spec: ApiOperationSpec | None = None
    loc: Loc = field(default=_NO_LOC, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ResourceAccess(_Message):
    id: str = ""
    operation: str = ""
    identity_used: IdentityType = IdentityType.IDENTITY_TYPE_UNSPECIFIED
    confirmation_required: bool = False
    access_justification: str = ""
    necessity: AccessNecessity = AccessNecessity.ACCESS_NECESSITY_UNSPECIFIED
    loc: Loc = field(default=_NO_LOC, compare=False, repr=False)


#: Manifests with more entries than this are looked up through a table, built once per manifest:
#: a scan per lookup made a 25,000-resource card take minutes (every access looks up its operation
#: and resource several times).
_SCAN_LIMIT = 32
_LOOKUP_CACHE_SIZE = 16
_Lookups = tuple[dict[str, Resource], dict[str, Operation]]
#: id(manifest) -> (manifest, tables); the manifest is held so its id cannot be reused while cached.
_LOOKUP_CACHE: dict[int, tuple[ResourceAccessManifest, _Lookups]] = {}


def _lookups(m: ResourceAccessManifest) -> _Lookups:
    hit = _LOOKUP_CACHE.get(id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    resources: dict[str, Resource] = {}
    for r in m.resources:
        resources.setdefault(r.id, r)  # the first one wins, as in a scan
    operations: dict[str, Operation] = {}
    for o in m.operations:
        operations.setdefault(o.id, o)
    if len(_LOOKUP_CACHE) >= _LOOKUP_CACHE_SIZE:
        _LOOKUP_CACHE.pop(next(iter(_LOOKUP_CACHE)))
    _LOOKUP_CACHE[id(m)] = (m, (resources, operations))
    return resources, operations


@dataclass(frozen=True, slots=True)
class ResourceAccessManifest(_Message):
    resources: tuple[Resource, ...] = ()
    operations: tuple[Operation, ...] = ()
    resource_accesses: tuple[ResourceAccess, ...] = ()
    loc: Loc = field(default=_NO_LOC, compare=False, repr=False)

    def resource(self, resource_id: str) -> Resource | None:
        """The first resource with this id (duplicates are a validation error)."""
        if len(self.resources) <= _SCAN_LIMIT:
            return next((r for r in self.resources if r.id == resource_id), None)
        return _lookups(self)[0].get(resource_id)

    def operation(self, operation_id: str) -> Operation | None:
        if len(self.operations) <= _SCAN_LIMIT:
            return next((o for o in self.operations if o.id == operation_id), None)
        return _lookups(self)[1].get(operation_id)

    @classmethod
    def from_dict(cls, data: object, *, pointer: str = "") -> ResourceAccessManifest:
        """Parse strictly: raise :class:`ValueError` listing the errors, if any."""
        manifest, diags = parse_manifest(data, pointer=pointer)
        errors = [d for d in diags if d.severity is Severity.ERROR]
        if errors:
            raise ValueError("; ".join(f"{d.path}: {d.message}" for d in errors))
        return manifest

    @classmethod
    def from_json(cls, text: str | bytes) -> ResourceAccessManifest:
        import orjson  # noqa: PLC0415

        return cls.from_dict(orjson.loads(text))


Manifest = ResourceAccessManifest

MESSAGE_TYPES: tuple[type[_Message], ...] = (
    ResourceAccessManifest,
    Resource,
    ResourceSpec,
    Operation,
    ApiOperationSpec,
    ResourceAccess,
)
ENUM_TYPES: tuple[type[enum.IntEnum], ...] = (InteractionProtocol, ResourceOwner, IdentityType, AccessNecessity)


# --------------------------------------------------------------------------- codec tables

FieldKind = Literal["string", "bool", "enum", "message", "strings", "messages"]


@dataclass(frozen=True, slots=True)
class _FieldInfo:
    name: str
    camel: str
    kind: FieldKind
    #: The enum or message class, for those kinds.
    target: type[Any] | None
    default: Any


def _field_table(cls: type[_Message]) -> tuple[_FieldInfo, ...]:
    hints = typing.get_type_hints(cls)
    out: list[_FieldInfo] = []
    for f in fields(cls):  # type: ignore[arg-type]
        if f.name == "loc":
            continue
        tp = hints[f.name]
        kind: FieldKind
        target: type[Any] | None = None
        if tp is str:
            kind = "string"
        elif tp is bool:
            kind = "bool"
        elif isinstance(tp, type) and issubclass(tp, enum.IntEnum):
            kind, target = "enum", tp
        elif get_origin(tp) is tuple:
            item = get_args(tp)[0]
            kind, target = ("strings", None) if item is str else ("messages", item)
        else:  # Optional[Message]
            kind, target = "message", next(a for a in get_args(tp) if a is not type(None))
        default = f.default if f.default is not MISSING else None
        out.append(_FieldInfo(f.name, camel_name(f.name), kind, target, default))
    return tuple(out)


for _cls in MESSAGE_TYPES:
    _cls._FIELDS = _field_table(_cls)

_BY_KEY: dict[type[_Message], dict[str, _FieldInfo]] = {
    cls: {k: fi for fi in cls._FIELDS for k in {fi.name, fi.camel}} for cls in MESSAGE_TYPES
}

_TYPE_NAMES = {"string": "a string", "bool": "true or false", "strings": "an array of strings"}


def _json_type(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int | float):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


# --------------------------------------------------------------------------- parsing

M = TypeVar("M", bound=_Message)


def parse_manifest(data: object, *, pointer: str = "") -> tuple[ResourceAccessManifest, list[Diagnostic]]:
    """Parse a manifest leniently: every problem becomes a diagnostic, never an exception.

    ``pointer`` is where the manifest object stands in the whole input document,
    so diagnostics point into the file the user wrote.
    """
    diags: list[Diagnostic] = []
    manifest = _parse_message(ResourceAccessManifest, data, pointer, diags)
    return manifest, diags


def _parse_message(cls: type[M], obj: object, ptr: str, diags: list[Diagnostic]) -> M:
    if not isinstance(obj, dict):
        diags.append(INVALID_TYPE(ptr, f"expected an object for {cls.__name__}, got {_json_type(obj)}"))
        return cls(loc=Loc(ptr))  # type: ignore[call-arg]
    table = _BY_KEY[cls]
    kwargs: dict[str, Any] = {}
    keys: dict[str, str] = {}
    rejected: set[str] = set()
    camel_votes = 0
    for key, raw in obj.items():
        fptr = join_pointer(ptr, key)
        fi = table.get(key)
        if fi is None:
            import difflib  # noqa: PLC0415 - only for a misspelt field

            guess = difflib.get_close_matches(key, list(table), n=1, cutoff=0.75)
            diags.append(
                UNKNOWN_FIELD(
                    fptr,
                    f"{cls.__name__} has no field {key!r}; it is ignored",
                    hint=f"did you mean {guess[0]!r}?" if guess else None,
                )
            )
            continue
        if fi.name in keys:
            diags.append(
                DUPLICATE_FIELD(
                    fptr,
                    f"field {fi.name!r} is given twice (as {keys[fi.name]!r} and {key!r}); the first is used",
                )
            )
            continue
        keys[fi.name] = key
        if key != fi.name:
            camel_votes += 1
        if raw is None:  # ProtoJSON: null is the default value
            continue
        value = _parse_value(fi, raw, fptr, diags)
        if value is _REJECTED:
            rejected.add(fi.name)
        else:
            kwargs[fi.name] = value
    style: Style = "camel" if camel_votes else "snake"
    return cls(**kwargs, loc=Loc(ptr, keys, style, frozenset(rejected)))  # type: ignore[call-arg]


_REJECTED = object()


def _parse_value(fi: _FieldInfo, raw: object, ptr: str, diags: list[Diagnostic]) -> Any:
    kind = fi.kind
    if kind == "string":
        if isinstance(raw, str):
            return raw
    elif kind == "bool":
        if isinstance(raw, bool):
            return raw
    elif kind == "enum":
        assert fi.target is not None
        member = enum_from_json(fi.target, raw)
        if member is not None:
            return member
        # The first member is the UNSPECIFIED one: never a value to suggest.
        names = [m.name for m in fi.target][1:]
        shown = raw if isinstance(raw, str | int) and not isinstance(raw, bool) else _json_type(raw)
        import difflib  # noqa: PLC0415 - only for a misspelt enum value

        guess = difflib.get_close_matches(str(raw).upper(), names, n=1, cutoff=0.6) if isinstance(raw, str) else []
        diags.append(
            UNKNOWN_ENUM(
                ptr,
                f"{shown!r} is not a valid {fi.target.__name__} value; expected one of {', '.join(names)}",
                hint=f"did you mean {guess[0]!r}?" if guess else None,
            )
        )
        return _REJECTED
    elif kind == "message":
        assert fi.target is not None
        if isinstance(raw, dict):
            return _parse_message(fi.target, raw, ptr, diags)
    elif kind == "strings":
        if isinstance(raw, list):
            out: list[str] = []
            for i, item in enumerate(raw):
                if isinstance(item, str):
                    out.append(item)
                else:
                    diags.append(INVALID_TYPE(join_pointer(ptr, i), f"expected a string, got {_json_type(item)}"))
            return tuple(out)
        if isinstance(raw, str):
            diags.append(INVALID_TYPE(ptr, "expected an array of strings, got a string", hint=f"write [{_quote(raw)}]"))
            return _REJECTED
    elif kind == "messages":
        assert fi.target is not None
        if isinstance(raw, list):
            return tuple(_parse_message(fi.target, item, join_pointer(ptr, i), diags) for i, item in enumerate(raw))
    expected = _TYPE_NAMES.get(kind) or ("an object" if kind == "message" else "an array of objects")
    diags.append(INVALID_TYPE(ptr, f"expected {expected}, got {_json_type(raw)}"))
    return _REJECTED


def _quote(s: str) -> str:
    import json  # noqa: PLC0415

    return json.dumps(s[:40], ensure_ascii=False)


# --------------------------------------------------------------------------- dumping


def _dump(msg: _Message, style: Style) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fi in msg._FIELDS:
        value = getattr(msg, fi.name)
        key = fi.camel if style == "camel" else fi.name
        if fi.kind == "message":
            if value is not None:
                out[key] = _dump(value, style)
        elif fi.kind == "messages":
            if value:
                out[key] = [_dump(v, style) for v in value]
        elif fi.kind == "strings":
            if value:
                out[key] = list(value)
        elif fi.kind == "enum":
            if value != 0:
                out[key] = value.name
        elif value != fi.default:
            out[key] = value
    return out


def message_fields(cls: type[_Message]) -> tuple[_FieldInfo, ...]:
    """The codec's view of a message class (used by the schema generator)."""
    return cls._FIELDS
