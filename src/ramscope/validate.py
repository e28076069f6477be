"""Structural and referential checks of a manifest, as diagnostics.

No network: this looks only at the card. Every rule here has a stable code
(``ramscope validate --format sarif`` lists them with their summaries).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from ._lazy import callable_module
from .card import Card, load_card
from .diagnostics import Diagnostic, Severity, rule, split_pointer
from .governance.skills import validate_skill_extension
from .manifest import (
    InteractionProtocol,
    Loc,
    Operation,
    Resource,
    ResourceAccess,
    ResourceAccessManifest,
)

__all__ = ["HTTP_METHODS", "check_spec_url", "validate", "validate_manifest"]

HTTP_METHODS = frozenset({"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"})

_S = "validate"
MISSING_ID = rule("missing-id", Severity.ERROR, "An entry has no id, so nothing can refer to it.", stage=_S)
DUPLICATE_ID = rule("duplicate-id", Severity.ERROR, "Two resources, operations or accesses share an id.", stage=_S)
DANGLING_REFERENCE = rule(
    "dangling-reference",
    Severity.ERROR,
    "An operation names a resource, or an access an operation, that the manifest does not define.",
    stage=_S,
)
UNSPECIFIED_ENUM = rule(
    "unspecified-enum",
    Severity.ERROR,
    "A required enum (protocol, owner, identity, necessity) is missing or UNSPECIFIED.",
    stage=_S,
)
MISSING_SPEC_URL = rule(
    "missing-spec-url", Severity.ERROR, "A resource has no spec_url, so nothing can be derived for it.", stage=_S
)
INVALID_SPEC_URL = rule(
    "invalid-spec-url",
    Severity.ERROR,
    "A spec_url is malformed, is not http(s), or carries credentials.",
    stage=_S,
)
INSECURE_SPEC_URL = rule(
    "insecure-spec-url",
    Severity.WARNING,
    "A spec_url uses plain http: the spec (and so the derived permissions) can be altered in transit.",
    stage=_S,
)
MISSING_OPERATION_SELECTOR = rule(
    "missing-operation-selector",
    Severity.ERROR,
    "A REST operation has neither operation_id nor http_method.",
    stage=_S,
)
INVALID_HTTP_METHOD = rule(
    "invalid-http-method", Severity.ERROR, "http_method is not an HTTP method OpenAPI knows.", stage=_S
)
MISSING_RESOURCE_PATH = rule(
    "missing-resource-path",
    Severity.ERROR,
    "A REST operation without operation_id needs the resource's resource_path to be resolved.",
    stage=_S,
)
MISSING_TOOL_NAME = rule(
    "missing-tool-name",
    Severity.ERROR,
    "An MCP resource has no tool name in spec.resource_path.",
    stage=_S,
)
IGNORED_API_OPERATION_SPEC = rule(
    "ignored-api-operation-spec",
    Severity.WARNING,
    "api_operation_spec on an MCP or A2A operation is not used (the proposal defines it for REST only).",
    stage=_S,
)
UNUSED_RESOURCE = rule("unused-resource", Severity.WARNING, "No operation refers to this resource.", stage=_S)
UNUSED_OPERATION = rule("unused-operation", Severity.WARNING, "No access refers to this operation.", stage=_S)
EMPTY_JUSTIFICATION = rule(
    "empty-justification", Severity.WARNING, "An access gives no justification for the user to read.", stage=_S
)
DRAFT_PLACEHOLDER = rule(
    "draft-placeholder",
    Severity.WARNING,
    "An access still carries the placeholder justification `ramscope draft` wrote; its author has to say why.",
    stage=_S,
)
#: How `ramscope draft` marks what it leaves to the author (``ramscope.evidence.draft.PLACEHOLDER``).
DRAFT_MARKER = "TODO(ramscope draft)"
EMPTY_MANIFEST = rule(
    "empty-manifest", Severity.WARNING, "The manifest declares no resource accesses at all.", stage=_S
)


def validate(card: Card | str | os.PathLike[str] | Mapping[str, Any]) -> list[Diagnostic]:
    """All diagnostics of a card: those from loading it, then the manifest checks.

    Accepts a loaded :class:`Card`, a path, or a parsed mapping. Raises
    :class:`~ramscope.errors.InputError` only if the input cannot be read at all.
    """
    if not isinstance(card, Card):
        card = load_card(card)
    diags = list(card.load_diagnostics)
    if card.manifest_found:
        diags.extend(validate_manifest(card.manifest))
        diags.extend(validate_skill_extension(card))
    return sort_diagnostics(diags)


_SECTION_ORDER = {"resources": 0, "operations": 1, "resource_accesses": 2, "resourceAccesses": 2}


def sort_diagnostics(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Manifest order (resources, operations, accesses; by index), then severity."""

    def key(d: Diagnostic) -> tuple[Any, ...]:
        toks = tuple(
            (0, int(t), "") if t.isdigit() else (1, _SECTION_ORDER.get(t, 9), t) for t in split_pointer(d.path)
        )
        return (toks, d.severity.rank, d.code)

    return sorted(diags, key=key)


def validate_manifest(m: ResourceAccessManifest) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    _check_ids("resource", m.resources, out)
    _check_ids("operation", m.operations, out)
    _check_ids("access", m.resource_accesses, out)

    resources = {r.id: r for r in m.resources if r.id}
    operations = {o.id: o for o in m.operations if o.id}
    for r in m.resources:
        _check_resource(r, out)
    for o in m.operations:
        _check_operation(o, resources, out)
    for a in m.resource_accesses:
        _check_access(a, operations, out)

    used_ops = {a.operation for a in m.resource_accesses}
    used_res = {o.resource for o in m.operations if o.id in used_ops}
    for o in m.operations:
        if o.id and o.id not in used_ops:
            out.append(UNUSED_OPERATION(o.loc.pointer, f"operation {o.id!r} is not used by any access"))
    for r in m.resources:
        if r.id and r.id not in used_res:
            referenced = any(o.resource == r.id for o in m.operations)
            why = "only by unused operations" if referenced else "by no operation"
            out.append(UNUSED_RESOURCE(r.loc.pointer, f"resource {r.id!r} is used {why}"))
    if not m.resource_accesses and not m.loc.rejected:
        out.append(EMPTY_MANIFEST(m.loc.pointer, "the manifest declares no resource accesses"))
    return out


def _check_ids(kind: str, items: Sequence[Resource | Operation | ResourceAccess], out: list[Diagnostic]) -> None:
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        if "id" in item.loc.rejected:
            continue
        if not item.id:
            out.append(MISSING_ID(item.loc.of("id"), f"{kind} #{i} has no id"))
            continue
        if item.id in first:
            out.append(
                DUPLICATE_ID(
                    item.loc.of("id"),
                    f"{kind} id {item.id!r} is already used by {kind} #{first[item.id]}",
                )
            )
        else:
            first[item.id] = i


def _unspecified(obj: Resource | ResourceAccess, name: str, out: list[Diagnostic]) -> None:
    if getattr(obj, name) == 0 and name not in obj.loc.rejected:
        label = obj.id or "(no id)"
        out.append(UNSPECIFIED_ENUM(_field_or_object(obj.loc, name), f"{label!r}: {name} is not specified"))


def _field_or_object(loc: Loc, name: str) -> str:
    """The field's pointer if it was written, else the object's (where to add it)."""
    return loc.of(name) if name in loc.keys else loc.pointer


def _check_resource(r: Resource, out: list[Diagnostic]) -> None:
    _unspecified(r, "interaction_protocol", out)
    _unspecified(r, "owner", out)
    label = r.id or "(no id)"
    spec = r.spec
    if spec is None or (not spec.spec_url and "spec_url" not in spec.loc.rejected):
        where = spec.loc.pointer if spec is not None else r.loc.pointer
        out.append(MISSING_SPEC_URL(where, f"resource {label!r} has no spec.spec_url"))
    elif spec.spec_url:
        out.extend(check_spec_url(spec.spec_url, spec.loc.of("spec_url")))
    tool_rejected = spec is not None and "resource_path" in spec.loc.rejected
    if r.interaction_protocol is InteractionProtocol.MCP and not r.resource_path and not tool_rejected:
        where = spec.loc.of("resource_path") if spec is not None else r.loc.pointer
        out.append(
            MISSING_TOOL_NAME(
                where,
                f"MCP resource {label!r} names no tool",
                hint="put the exact tool name (as tools/list reports it) in spec.resource_path",
            )
        )


_CONTROL = re.compile(r"[\x00-\x20\x7f]")


def check_spec_url(url: str, pointer: str) -> list[Diagnostic]:
    """Static checks of a spec URL; the store repeats the security-relevant ones at fetch time."""
    return [replace(d, path=pointer) for d in _spec_url_findings(url)]


@functools.lru_cache(maxsize=8192)
def _spec_url_findings(url: str) -> tuple[Diagnostic, ...]:
    """The findings about a URL, located nowhere yet: the same URLs recur in every card of a batch."""
    return tuple(_check_spec_url(url, ""))


def _check_spec_url(url: str, pointer: str) -> list[Diagnostic]:
    if _CONTROL.search(url):
        return [INVALID_SPEC_URL(pointer, "spec URL contains whitespace or control characters")]
    try:
        parts = urlsplit(url)
        port = parts.port  # raises on a malformed port
    except ValueError as exc:
        return [INVALID_SPEC_URL(pointer, f"spec URL is malformed: {exc}")]
    del port
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        shown = f"{scheme}:" if scheme else "no scheme"
        return [INVALID_SPEC_URL(pointer, f"spec URL must be http(s), got {shown}", hint="use an https:// URL")]
    if not parts.hostname:
        return [INVALID_SPEC_URL(pointer, "spec URL has no host")]
    if parts.username is not None or parts.password is not None:
        return [
            INVALID_SPEC_URL(
                pointer,
                "spec URL carries credentials (user:password@); they would leak to every reader of the card",
            )
        ]
    if scheme == "http":
        return [INSECURE_SPEC_URL(pointer, "spec URL uses plain http", hint="use https://")]
    return []


def _check_operation(o: Operation, resources: Mapping[str, Resource], out: list[Diagnostic]) -> None:
    label = o.id or "(no id)"
    resource = resources.get(o.resource)
    if "resource" not in o.loc.rejected and resource is None:
        out.append(_dangling(o.loc.of("resource"), "operation", label, "resource", o.resource, resources))
    spec = o.api_operation_spec
    if spec is not None and spec.spec_url:
        out.extend(check_spec_url(spec.spec_url, spec.loc.of("spec_url")))
    if resource is None:
        return
    proto = resource.interaction_protocol
    if proto in (InteractionProtocol.MCP, InteractionProtocol.A2A):
        if spec is not None:
            out.append(
                IGNORED_API_OPERATION_SPEC(
                    spec.loc.pointer,
                    f"api_operation_spec is ignored for {proto.name} resource {resource.id!r}",
                    hint="the tool (MCP) or skill (A2A) is named by the resource's spec.resource_path",
                )
            )
        return
    if proto is not InteractionProtocol.REST:
        return
    op_id = spec.operation_id if spec else ""
    method = spec.http_method if spec else ""
    if not op_id and not method:
        if spec is None or not ({"operation_id", "http_method"} & spec.loc.rejected):
            out.append(
                MISSING_OPERATION_SELECTOR(
                    spec.loc.pointer if spec else o.loc.pointer,
                    f"REST operation {label!r} has neither api_operation_spec.operation_id nor http_method",
                    hint="give the spec's operationId, or the HTTP method (with the resource's resource_path)",
                )
            )
        return
    if method and method.upper() not in HTTP_METHODS:
        assert spec is not None
        import difflib  # noqa: PLC0415 - only for a misspelt method; difflib costs start-up

        guess = difflib.get_close_matches(method.upper(), sorted(HTTP_METHODS), n=1)
        out.append(
            INVALID_HTTP_METHOD(
                spec.loc.of("http_method"),
                f"{method!r} is not an HTTP method",
                hint=f"did you mean {guess[0]!r}?" if guess else "one of " + ", ".join(sorted(HTTP_METHODS)),
            )
        )
    if not op_id and not resource.resource_path:
        assert spec is not None
        out.append(
            MISSING_RESOURCE_PATH(
                spec.loc.pointer,
                f"REST operation {label!r} has no operation_id, and resource {resource.id!r} has no "
                "spec.resource_path to match the http_method against",
            )
        )


def _check_access(a: ResourceAccess, operations: Mapping[str, Operation], out: list[Diagnostic]) -> None:
    label = a.id or "(no id)"
    if "operation" not in a.loc.rejected and a.operation not in operations:
        out.append(_dangling(a.loc.of("operation"), "access", label, "operation", a.operation, operations))
    _unspecified(a, "identity_used", out)
    _unspecified(a, "necessity", out)
    if a.access_justification.strip().startswith(DRAFT_MARKER):
        out.append(
            DRAFT_PLACEHOLDER(
                a.loc.of("access_justification"),
                f"access {label!r} still has the justification `ramscope draft` left for its author",
                hint="say why the agent needs this access; consent screens show it to the user",
            )
        )
    elif not a.access_justification.strip() and "access_justification" not in a.loc.rejected:
        out.append(
            EMPTY_JUSTIFICATION(
                _field_or_object(a.loc, "access_justification"),
                f"access {label!r} gives no justification",
                hint="say why the agent needs this access; consent screens show it to the user",
            )
        )


def _dangling(
    pointer: str, kind: str, label: str, target_kind: str, target: str, known: Mapping[str, object]
) -> Diagnostic:
    if not target:
        return DANGLING_REFERENCE(pointer, f"{kind} {label!r} names no {target_kind}")
    import difflib  # noqa: PLC0415 - only for a misspelt reference

    guess = difflib.get_close_matches(target, list(known), n=1, cutoff=0.6)
    return DANGLING_REFERENCE(
        pointer,
        f"{kind} {label!r} refers to unknown {target_kind} {target!r}",
        hint=f"did you mean {guess[0]!r}?" if guess else None,
        data={"suggestions": guess},
    )


# `ramscope.validate(card)` is the public API; once imported, this module is what the name is bound to.
callable_module(__name__, validate)
