"""Turning a fetched spec body into a parsed document, and the spec-stage diagnostic rules.

Specs are large and written by strangers. JSON goes straight to orjson (the
baseline every index timing is compared to; it bounds nesting at 1024 itself),
without the whole-tree depth walk that ``_parse`` does for cards, since that
walk alone costs as much as the parse on a 47 MB spec. YAML goes through
``_parse`` (rapidyaml, or libyaml's CSafeLoader with aliases counted before
construction for any document rapidyaml's path cannot vouch for).

Index diagnostics carry, in ``data``, which operations they concern, so the
resolver can hand each access only the findings that bear on it:

* ``{"affects": "all"}``: every operation (e.g. security undeclared);
* ``{"affects": "root-security"}``: the operations inheriting the spec-wide requirements (OpenAPI root
  ``security``, an MCP server's authorization, an A2A card's requirements);
* ``{"scheme": NAME}``: the operations whose requirements name that scheme;
* ``{"skipped_path": PATH}``: operations that are missing from the index;
* otherwise the diagnostic's ``path`` lies under the operation's ``pointer``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import orjson

from .._parse import Limits, check_json_nodes, parse_bytes
from ..diagnostics import Diagnostic, Severity, rule
from ..errors import InputError, LimitError, SpecError
from .model import OperationEntry

__all__ = [
    "DUPLICATE_OPERATION_ID",
    "INVALID_OPERATION",
    "INVALID_SECURITY",
    "INVALID_SECURITY_SCHEME",
    "MAX_OPERATIONS",
    "MISPLACED_SECURITY",
    "REF_CYCLE",
    "REF_REFUSED",
    "REF_UNRESOLVED",
    "SECURITY_UNDECLARED",
    "TEXT_HEAD_CHARS",
    "UNDECLARED_SCOPE",
    "UNDEFINED_SECURITY_SCHEME",
    "TextDocument",
    "assign_keys",
    "decode_text",
    "describe_document",
    "parse_spec_body",
]

_MiB = 1024 * 1024

#: Specs are bounded in size by the store (--max-spec-bytes); this is a backstop.
SPEC_LIMITS = Limits(
    max_bytes=512 * _MiB,
    max_depth=1024,
    # The largest real spec seen (Microsoft Graph beta, 47 MB) has 2.65 million values and keys
    # (3.8 million by the JSON bound); at 8 million the worst case builds ~0.5 GB (SECURITY.md).
    max_yaml_nodes=8_000_000,
    strict_keys=False,
    positions=False,
)

#: Operations one spec may describe. The largest real spec seen (Microsoft Graph beta) has 22,361;
#: $ref lets a 60 KB spec describe a million (issue 14), so the count is checked before any is built.
MAX_OPERATIONS = 250_000

_S = "spec"
SECURITY_UNDECLARED = rule(
    "security-undeclared",
    Severity.WARNING,
    "The spec declares no security requirements at all: what its operations need is unknown, not nothing.",
    stage=_S,
)
UNDEFINED_SECURITY_SCHEME = rule(
    "undefined-security-scheme",
    Severity.WARNING,
    "A security requirement names a scheme the spec does not define.",
    stage=_S,
)
INVALID_SECURITY = rule(
    "invalid-security",
    Severity.WARNING,
    "A security requirement list is malformed, so the operation's requirements are unknown.",
    stage=_S,
)
MISPLACED_SECURITY = rule(
    "misplaced-security",
    Severity.WARNING,
    "A `security` list stands where the format reads none (an OpenAPI path item): it is not applied, and "
    "the operations it may have been meant for are unknown.",
    stage=_S,
)
INVALID_SECURITY_SCHEME = rule(
    "invalid-security-scheme",
    Severity.WARNING,
    "A security scheme definition is malformed or of an unknown type or flow.",
    stage=_S,
)
UNDECLARED_SCOPE = rule(
    "undeclared-scope",
    Severity.INFO,
    "A requirement names a scope its OAuth2 scheme does not list, so it has no description.",
    stage=_S,
)
DUPLICATE_OPERATION_ID = rule(
    "duplicate-operation-id",
    Severity.WARNING,
    "Several operations share one operationId; resolving by that id is ambiguous.",
    stage=_S,
)
INVALID_OPERATION = rule(
    "invalid-operation",
    Severity.WARNING,
    "A path item, operation or method is malformed and was skipped.",
    stage=_S,
)
REF_REFUSED = rule(
    "ref-refused",
    Severity.WARNING,
    "A $ref was not followed: file: refs, other origins and refs leaving the spec's directory are refused.",
    stage=_S,
)
REF_CYCLE = rule("ref-cycle", Severity.WARNING, "A $ref chain loops back on itself.", stage=_S)
REF_UNRESOLVED = rule(
    "ref-unresolved",
    Severity.WARNING,
    "A $ref could not be resolved (missing target, fetch failure, too many hops).",
    stage=_S,
)


#: How much of a body the text kinds (GraphQL SDL, Stone) look at to recognise themselves.
TEXT_HEAD_CHARS = 65_536


@dataclass(frozen=True, slots=True)
class TextDocument:
    """A spec that is neither JSON nor YAML (GraphQL SDL, a Stone file): its text and where it was read."""

    text: str
    url: str = ""

    @property
    def head(self) -> str:
        return self.text[:TEXT_HEAD_CHARS]


def decode_text(body: bytes, *, source: str) -> str:
    """A text spec's characters: UTF-8 (a BOM dropped), else :class:`SpecError`."""
    if body.startswith(b"\xef\xbb\xbf"):
        body = body[3:]
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"unreadable spec: not UTF-8 text ({exc.reason} at byte {exc.start})", url=source) from None


def parse_spec_body(body: bytes, *, source: str, media_type: str | None = None) -> Any:
    """The parsed document. Raises :class:`SpecError` for anything that is not JSON or YAML."""
    if body.startswith(b"\xef\xbb\xbf"):
        body = body[3:]
    head = body[:512].lstrip().lower()
    mt = (media_type or "").split(";")[0].strip().lower()
    if head.startswith((b"<!doctype html", b"<html")) or mt in ("text/html", "application/xhtml+xml"):
        raise SpecError("unsupported spec: an HTML page, not a machine-readable API description", url=source)
    if not head:
        raise SpecError("unsupported spec: the document is empty", url=source)
    if head[:1] in (b"{", b"["):
        try:
            check_json_nodes(body, SPEC_LIMITS.max_yaml_nodes, source)
        except LimitError as exc:
            raise SpecError(f"unsupported spec: {exc.detail}", url=source) from None
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            json_error = str(exc)
        # YAML flow style also starts with "{"; if that fails too, the JSON error explains it.
        try:
            return parse_bytes(body, source=source, limits=SPEC_LIMITS, fmt="yaml").value
        except InputError:
            raise SpecError(f"unreadable spec: invalid JSON: {json_error}", url=source) from None
    try:
        return parse_bytes(body, source=source, limits=SPEC_LIMITS, fmt="yaml").value
    except InputError as exc:
        raise SpecError(f"unreadable spec: not JSON, and not YAML either: {exc.detail}", url=source) from None


def describe_document(doc: Any) -> str:
    """A short account of what a document is, for "unsupported spec" messages."""
    if isinstance(doc, dict):
        keys = list(doc)[:8]
        more = ", ..." if len(doc) > len(keys) else ""
        shown = ", ".join(repr(k) for k in keys)
        return f"an object with top-level keys {shown}{more}" if keys else "an empty object"
    if isinstance(doc, list):
        return f"an array of {len(doc)} items"
    if isinstance(doc, str):
        return f"a bare string ({doc[:40]!r})"
    return f"a bare {type(doc).__name__} value"


def assign_keys(entries: list[OperationEntry], diags: list[Diagnostic]) -> list[OperationEntry]:
    """Make keys unique: the operation id when unique, else "METHOD path"; duplicates are diagnosed."""
    if len({e.key for e in entries}) == len(entries):
        return entries  # the common case: every id unique, no id spelled like a "METHOD path"
    by_id: dict[str, list[int]] = {}
    for i, e in enumerate(entries):
        if e.operation_id:
            by_id.setdefault(e.operation_id, []).append(i)
    for op_id, idx in by_id.items():
        if len(idx) < 2:
            continue
        where = ", ".join(f"{entries[i].method} {entries[i].path}" for i in idx)
        diags.append(
            DUPLICATE_OPERATION_ID(
                entries[idx[1]].pointer,
                f"operation id {op_id!r} is used by {len(idx)} operations ({where})",
                data={"operation_id": op_id},
            )
        )
        for i in idx:
            entries[i] = replace(entries[i], key=f"{entries[i].method} {entries[i].path}")
    seen: set[str] = set()
    for i, e in enumerate(entries):
        key = e.key
        if key in seen:  # an id spelled like another operation's "METHOD path", or a repeated path
            n = 2
            while f"{e.key}#{n}" in seen:
                n += 1
            key = f"{e.key}#{n}"
            entries[i] = replace(e, key=key)
        seen.add(key)
    return entries
