"""``draft``: recorded calls -> a card whose manifest declares each distinct operation once.

Each call is looked up in the host index (``--spec`` prefixes first, then the shipped index), its
spec loaded through the derivation :class:`~ramscope.derive.Engine` (the guarded, cached spec
store), and its concrete path matched to an operation (:mod:`.match`). Every operation drafted is
then declared by name and resolved with :func:`ramscope.derive.resolve.resolve`, exactly as ``derive``
will read it; a declaration the resolver would not read back to the same operation is not written.
A call that no spec explains is an ``unmatched-call`` finding with the nearest operations, never
dropped silently.

What the draft decides, and what it leaves to the author:

* resources are grouped per spec (operations by operationId), a resource per path where the spec
  has no operationId, a resource per MCP tool (``resource_path`` is the tool);
* ``identity_used`` from the credential: a user's token (a JWT's ``scp``/user ``sub``, GitHub's
  ``ghp_``/``gho_``/``ghu_``/``github_pat_``, a browser cookie) -> END_USER; client credentials
  (``roles``, ``idtyp: app``, ``ghs_``), an API key, basic auth or no credential -> AGENT; an opaque
  bearer token -> what the spec's OAuth flows allow, when they allow only one; else END_USER as a placeholder
  its justification names (:data:`PLACEHOLDER_IDENTITY`, ``identity-undetermined``), never an unspecified enum
  that ``validate`` rejects; one access per identity seen; code's own evidence (a user OAuth flow, a service
  account key) sets the principal of its calls (:mod:`.code`);
* ``owner``: CONSUMER for END_USER accesses, THIRD_PARTY for AGENT ones;
* ``necessity`` REQUIRED; ``confirmation_required`` for methods that are not safe (RFC 9110:
  anything but GET, HEAD, OPTIONS, TRACE) and MCP tools that are not read-only and destructive
  (the server's annotations, MCP's defaults when it gives none);
* ``access_justification``: :data:`PLACEHOLDER`, which ``validate`` reports as ``draft-placeholder``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from ..config import Settings
from ..derive.resolve import Target, resolve
from ..diagnostics import Diagnostic
from ..manifest import (
    AccessNecessity,
    ApiOperationSpec,
    IdentityType,
    InteractionProtocol,
    Operation,
    Resource,
    ResourceAccess,
    ResourceAccessManifest,
    ResourceOwner,
    ResourceSpec,
)
from ..specs.mcp import unlisted_tool
from ..specs.model import FlowKind, OperationEntry, SchemeType, SpecIndex, SpecKind
from ..validate import DRAFT_MARKER
from . import stepup
from ._source import DEFAULT_LIMITS, EvidenceLimits
from .hosts import HostIndex, SpecHint, shipped_index
from .match import matcher_for
from .model import AuthKind, EvidenceSummary, ObservedCall, Principal, UnresolvedCall
from .read import iter_calls
from .rules import EVIDENCE_SKIPPED, IDENTITY_UNDETERMINED, UNMATCHED_CALL, UNRESOLVED_CALL
from .stepup import StepUp

__all__ = [
    "PLACEHOLDER",
    "PLACEHOLDER_IDENTITY",
    "DraftResult",
    "UnmatchedCall",
    "draft",
    "site_of",
    "summary_diagnostics",
]

#: The justification a drafted access carries until its author writes one (``validate``: draft-placeholder).
PLACEHOLDER = f"{DRAFT_MARKER}: say why the agent needs this access"
#: Where the evidence does not tell whose credential called an operation, the draft writes END_USER (and so
#: owner CONSUMER) as a placeholder the justification names, so the card validates (placeholder warnings
#: only) and derives; the author confirms or changes it.
PLACEHOLDER_IDENTITY = (
    f"{DRAFT_MARKER}: identity_used END_USER (and the resource's owner CONSUMER) is a placeholder, the evidence "
    "does not show whose credential made the call: set it, then say why the agent needs this access"
)
#: Call sites of code listed in the draft report (the rest are counted).
MAX_SITES = 100_000
#: Distinct unmatched calls kept with their details (the rest are counted).
MAX_UNMATCHED = 10_000
#: Distinct shapes of unmatched calls given nearest-operation suggestions (each costs a similarity
#: search, ~0.3 s on GitHub's 1,223 operations); calls of one shape share theirs.
MAX_SUGGESTED = 50
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
_USER_FLOWS = frozenset({FlowKind.AUTHORIZATION_CODE, FlowKind.IMPLICIT, FlowKind.PASSWORD, FlowKind.DEVICE_CODE})


@dataclass(frozen=True, slots=True)
class UnmatchedCall:
    """A distinct call no spec explains: why, the spec tried, the nearest operations."""

    method: str
    url: str
    count: int
    reason: str
    spec_url: str | None = None
    nearest: tuple[str, ...] = ()
    tool: str = ""
    #: Code: the operation as the code names it, and the call sites (``file:line``).
    operation: str = ""
    sites: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "url": self.url,
            "tool": self.tool or None,
            "count": self.count,
            "reason": self.reason,
            "spec_url": self.spec_url,
            "nearest": list(self.nearest),
            "operation": self.operation or None,
            "sites": list(self.sites),
        }


@dataclass(frozen=True, slots=True)
class DraftResult:
    """The drafted card (a bare manifest document), and what the draft could not explain."""

    card: Mapping[str, Any]
    calls: int
    matched: int
    operations: int
    unmatched: tuple[UnmatchedCall, ...]
    #: Distinct unmatched calls beyond :data:`MAX_UNMATCHED` (counted, not listed).
    unmatched_more: int
    evidence: tuple[EvidenceSummary, ...]
    diagnostics: tuple[Diagnostic, ...]
    #: Code: every call site read (``site``, ``via``, ``operation`` as the code names it, ``drafted``), the
    #: sites that could not be resolved, each drafted operation with where it was seen, MCP config servers.
    call_sites: tuple[Mapping[str, Any], ...] = ()
    call_sites_more: int = 0
    unresolved: tuple[UnresolvedCall, ...] = ()
    seen: tuple[Mapping[str, Any], ...] = ()
    mcp_servers: tuple[Mapping[str, str], ...] = ()
    #: What servers' answers said drafted operations need (:mod:`.stepup`), each with a policy pin.
    step_up: tuple[Mapping[str, Any], ...] = ()

    def report(self) -> dict[str, Any]:
        """The draft report (``ramscope draft --report``)."""
        return {
            "calls": self.calls,
            "matched": self.matched,
            "operations": self.operations,
            "unmatched": [u.to_dict() for u in self.unmatched],
            "unmatched_more": self.unmatched_more,
            "evidence": [
                {
                    "file": s.source,
                    "format": s.fmt.value,
                    "calls": s.calls,
                    "skipped": s.skipped,
                    "partial": s.partial,
                    "reasons": s.reasons,
                }
                for s in self.evidence
            ],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "drafted": [dict(x) for x in self.seen],
            "call_sites": [dict(x) for x in self.call_sites],
            "call_sites_more": self.call_sites_more,
            "unresolved": [
                {
                    "site": u.site,
                    "file": u.source,
                    "line": u.line,
                    "via": u.via,
                    "reason": u.reason,
                    "text": u.text,
                    "operation": u.operation or None,
                }
                for u in self.unresolved
            ],
            "mcp_servers": [dict(x) for x in self.mcp_servers],
            "step_up": [dict(r) for r in self.step_up],
        }


@dataclass(slots=True)
class _Seen:
    """One operation as observed (accumulated while the evidence streams)."""

    spec_url: str
    index: SpecIndex
    entry: OperationEntry
    count: int = 0
    identities: dict[IdentityType, int] = field(default_factory=dict)
    destructive: bool | None = None
    #: Evidence formats it was seen in (``code``, ``har`` ...), and its call sites in code.
    formats: set[str] = field(default_factory=set)
    sites: list[str] = field(default_factory=list)
    #: What the server's answers said the operation needs (:mod:`.stepup`), with where: distinct, bounded.
    step_ups: list[tuple[StepUp, str]] = field(default_factory=list)


@dataclass(slots=True)
class _Miss:
    method: str
    url: str
    tool: str
    reason: str
    spec_url: str | None
    count: int = 0
    operation: str = ""
    sites: list[str] = field(default_factory=list)


def site_of(call: ObservedCall) -> str:
    """The operation as a call names it: its operation, its tool, else ``METHOD /path`` (a path template for code)."""
    if call.tool:
        return call.tool
    if call.operation:
        return call.operation
    return f"{call.method} {call.path}"


def _slug(text: str, limit: int = 60) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s[:limit].strip("-") or "x"


def _identity(call: ObservedCall, entry: OperationEntry, index: SpecIndex) -> IdentityType:
    if call.principal is Principal.USER or call.auth is AuthKind.COOKIE:
        return IdentityType.END_USER
    if call.principal is Principal.APP or call.auth in {AuthKind.API_KEY, AuthKind.BASIC, AuthKind.NONE}:
        return IdentityType.AGENT
    if call.auth is AuthKind.BEARER:
        return _identity_from_flows(entry, index)
    return IdentityType.IDENTITY_TYPE_UNSPECIFIED


def _identity_from_flows(entry: OperationEntry, index: SpecIndex) -> IdentityType:
    """An opaque bearer token: END_USER or AGENT when the operation's OAuth schemes allow only one."""
    names = {t.scheme for alt in entry.requirements or () for t in alt}
    kinds: set[str] = set()
    for s in index.schemes:
        if s.name not in names:
            continue
        if s.type is SchemeType.OPENID_CONNECT:
            kinds.add("user")
        elif s.type is SchemeType.OAUTH2:
            kinds.update("user" if f in _USER_FLOWS else "app" for f in s.flow_kinds)
    if kinds == {"user"}:
        return IdentityType.END_USER
    if kinds == {"app"}:
        return IdentityType.AGENT
    return IdentityType.IDENTITY_TYPE_UNSPECIFIED


def _confirmation(entry: OperationEntry, seen: _Seen) -> bool:
    if entry.method:
        return entry.method.upper() not in _SAFE_METHODS
    ann = entry.extra.get("annotations") if isinstance(entry.extra, Mapping) else None
    if isinstance(ann, Mapping):
        return not ann.get("readOnlyHint", False) and bool(ann.get("destructiveHint", True))
    # The server did not list the tool (authorization): the log's annotations, else MCP's defaults.
    return seen.destructive is not False


class _Drafter:
    def __init__(self, engine: Any, hosts: HostIndex) -> None:
        self.engine = engine
        self.hosts = hosts
        self.seen: dict[tuple[str, str], _Seen] = {}
        self.misses: dict[tuple[str, str, str, str], _Miss] = {}
        #: (spec URL, operation key) -> the operation id the card declares it by.
        self.declared: dict[tuple[str, str], str] = {}
        self.misses_more = 0
        self.calls = 0
        self.matched = 0
        self.step_up_records: list[dict[str, Any]] = []
        self.spec_problems: dict[str, str] = {}

    def _index(self, url: str, kind: SpecKind | None) -> SpecIndex | None:
        loaded = self.engine.load(url, kind)
        if loaded.index is None and loaded.error is not None:
            self.spec_problems.setdefault(url, getattr(loaded.error, "detail", str(loaded.error)))
        index: SpecIndex | None = loaded.index
        return index

    def add(self, call: ObservedCall) -> None:
        self.calls += 1
        if call.unreadable:
            self._miss(call, f"the entry could not be read whole ({call.unreadable}): only its host is known", None)
            return
        if call.tool:
            self._add_tool(call)
            return
        if call.via == "a2a":
            self._add_agent(call)
            return
        url = call.url
        hints = self.hosts.hints_canonical(url if url.endswith("/") else url + "/")
        path = call.path
        tried: str | None = None
        reason = "no spec is known for this URL (give one with --spec PREFIX=SPEC_URL)"
        if call.operation and self._by_operation(call, hints):
            return
        if call.spec and not any(h.source == "option" for h in hints):
            tried = call.spec
            problem = self.spec_problems.get(call.spec)
            reason = (
                f"spec {call.spec} unavailable: {problem}"
                if problem is not None
                else f"spec {call.spec} has no operation {call.operation}"
            )
            if not hints:
                self._miss(call, reason, tried)
                return
        for hint in hints:
            index = self._index(hint.spec_url, None)
            if index is None:
                if tried is None:  # the most specific spec's problem is the one to say
                    reason = f"spec {hint.spec_url} unavailable: {self.spec_problems.get(hint.spec_url, '')}"
                tried = tried or hint.spec_url
                continue
            m = matcher_for(index).match(call.method, _paths(path, hint.prefix))
            if m.entry is not None:
                self._found(hint.spec_url, index, m.entry, call)
                return
            tried = tried or hint.spec_url
            if m.ambiguous:
                labels = "; ".join(e.key for e in m.ambiguous[:5])
                reason = f"matches several operations of {hint.spec_url}: {labels}"
            elif not reason.startswith("matches"):
                reason = f"no operation of {hint.spec_url} matches"
        self._miss(call, reason, tried)

    def _by_operation(self, call: ObservedCall, hints: Sequence[SpecHint]) -> bool:
        """A call whose code names its operation (a Discovery method id, a GitHub operationId): found by that
        name in the author's ``--spec`` for its URL, else the spec the code names, else the host index's."""
        options = [h.spec_url for h in hints if h.source == "option"]
        shipped = [h.spec_url for h in hints if h.source != "option"]
        for spec_url in dict.fromkeys([*options, *([call.spec] if call.spec and not options else []), *shipped]):
            index = self._index(spec_url, None)
            if index is None:
                continue
            hits = index.by_operation_id.get(call.operation, ())
            if len(hits) == 1:
                self._found(spec_url, index, hits[0], call)
                return True
        return False

    def _add_agent(self, call: ObservedCall) -> None:
        """Another agent called over A2A (code): its card, the agent as a whole."""
        from ..specs.a2a import CARD_KEY  # noqa: PLC0415

        index = self._index(call.url, SpecKind.A2A)
        entry = index.operation(CARD_KEY) if index is not None else None
        if index is None or entry is None:
            self._miss(call, f"agent card unavailable: {self.spec_problems.get(call.url, '')}", call.url)
            return
        self._found(call.url, index, entry, call)

    def _add_tool(self, call: ObservedCall) -> None:
        index = self._index(call.url, SpecKind.MCP)
        if index is None:
            self._miss(call, f"MCP server unavailable: {self.spec_problems.get(call.url, '')}", call.url)
            return
        hits = index.by_operation_id.get(call.tool)
        entry = hits[0] if hits else None
        if entry is None and index.extra.get("tools_listed") is False:
            # Listed only to authenticated clients: declared by name, the resolver stands in for it (with the
            # server's requirement, or its vendor's, so the token's identity can follow the OAuth flows).
            entry = unlisted_tool(index, call.tool)
        if entry is None:
            self._miss(call, f"the server does not list tool {call.tool!r}", call.url)
            return
        self._found(call.url, index, entry, call)

    def _found(self, spec_url: str, index: SpecIndex, entry: OperationEntry, call: ObservedCall) -> None:
        self.matched += 1
        key = (spec_url, entry.key)
        s = self.seen.get(key)
        if s is None:
            s = self.seen[key] = _Seen(spec_url, index, entry)
        s.count += 1
        s.formats.add(call.fmt.value)
        if call.site and len(s.sites) < 1000:
            s.sites.append(call.site)
        ident = _identity(call, entry, index)
        s.identities[ident] = s.identities.get(ident, 0) + 1
        if call.destructive is not None:
            s.destructive = bool(s.destructive) or call.destructive
        step = call.step_up
        if (
            step is not None
            and len(s.step_ups) < stepup.MAX_PER_OPERATION
            and all(step.alternatives != known.alternatives for known, _ in s.step_ups)
        ):
            s.step_ups.append((step, f"{call.source}:{call.entry}"))

    def _miss(self, call: ObservedCall, reason: str, spec_url: str | None) -> None:
        key = (call.method, call.url, call.tool, call.operation)
        m = self.misses.get(key)
        if m is None:
            if len(self.misses) >= MAX_UNMATCHED:
                self.misses_more += 1
                return
            m = self.misses[key] = _Miss(call.method, call.url, call.tool, reason, spec_url, operation=call.operation)
        m.count += 1
        if call.site and len(m.sites) < 1000:
            m.sites.append(call.site)

    # ------------------------------------------------------------------ the card

    def manifest(self) -> tuple[ResourceAccessManifest, list[Diagnostic], list[_Miss]]:
        resources: list[Resource] = []
        operations: list[Operation] = []
        accesses: list[ResourceAccess] = []
        notes: list[Diagnostic] = []
        late: list[_Miss] = []
        ids: set[str] = set()

        def unique(base: str) -> str:
            cand, k = base, 2
            while cand in ids:
                cand, k = f"{base}-{k}", k + 1
            ids.add(cand)
            return cand

        spec_resource: dict[str, Resource] = {}
        for (spec_url, _), s in sorted(self.seen.items(), key=lambda kv: (kv[0][0], kv[1].entry.key)):
            declared = self._declare(s, spec_resource, unique)
            if declared is None:
                late.append(
                    _Miss(
                        s.entry.method or "tools/call",
                        spec_url,
                        "",
                        f"the resolver does not read the declaration of {s.entry.key!r} back to it",
                        spec_url,
                        s.count,
                    )
                )
                continue
            res, op, new_resource = declared
            if new_resource:
                resources.append(res)
            if s.step_ups:
                op = replace(op, description=op.description + stepup.describe(s.step_ups))
            operations.append(op)
            self.declared[(spec_url, s.entry.key)] = op.id
            first = len(accesses)
            idents = sorted(s.identities, key=lambda i: (i is IdentityType.IDENTITY_TYPE_UNSPECIFIED, i.value))
            known: list[IdentityType] = [i for i in idents if i is not IdentityType.IDENTITY_TYPE_UNSPECIFIED]
            unknown: list[IdentityType] = [IdentityType.IDENTITY_TYPE_UNSPECIFIED]
            for ident in known or unknown:
                suffix = f"-{ident.name.lower().replace('_', '-')}" if len(known) > 1 else ""
                undetermined = ident is IdentityType.IDENTITY_TYPE_UNSPECIFIED
                access = ResourceAccess(
                    id=unique(f"{op.id}-access{suffix}"),
                    operation=op.id,
                    # A placeholder, never an unspecified enum: the draft validates and derives as it is.
                    identity_used=IdentityType.END_USER if undetermined else ident,
                    confirmation_required=_confirmation(s.entry, s),
                    access_justification=PLACEHOLDER_IDENTITY if undetermined else PLACEHOLDER,
                    necessity=AccessNecessity.REQUIRED,
                )
                accesses.append(access)
                if undetermined:
                    notes.append(
                        IDENTITY_UNDETERMINED(
                            f"/resource_accesses/{len(accesses) - 1}/identity_used",
                            f"the evidence does not show whose credential called {op.id!r} "
                            f"({s.count} call(s)); the draft wrote END_USER as a placeholder "
                            "(its justification says so): set identity_used to END_USER or AGENT",
                        )
                    )
            if s.step_ups:
                ids_ = [a.id for a in accesses[first:]]
                self.step_up_records.extend(
                    stepup.draft_records(op.id, ids_, s.entry.operation_id if _is_mcp(s) else "", spec_url, s.step_ups)
                )
        owners = {r.id: r for r in resources}
        for i, r in enumerate(resources):
            ops = {o.id for o in operations if o.resource == r.id}
            used = {a.identity_used for a in accesses if a.operation in ops}
            owner = (
                ResourceOwner.CONSUMER
                if IdentityType.END_USER in used
                else ResourceOwner.THIRD_PARTY
                if IdentityType.AGENT in used
                else ResourceOwner.RESOURCE_OWNER_UNSPECIFIED
            )
            resources[i] = _replace_owner(owners[r.id], owner)
        return (
            ResourceAccessManifest(
                resources=tuple(resources), operations=tuple(operations), resource_accesses=tuple(accesses)
            ),
            notes,
            late,
        )

    def _declare(
        self, s: _Seen, spec_resource: dict[str, Resource], unique: Callable[[str], str]
    ) -> tuple[Resource, Operation, bool] | None:
        e, index = s.entry, s.index
        if index.kind is SpecKind.A2A:
            host = urlsplit(s.spec_url).hostname or "agent"
            rid = unique(_slug(f"{host}-agent"))
            res = Resource(
                id=rid,
                interaction_protocol=InteractionProtocol.A2A,
                display_name=f"{index.title or host} (A2A agent)",
                description=f"The A2A agent whose card is {s.spec_url}",
                spec=ResourceSpec(spec_url=s.spec_url),
            )
            op = Operation(id=unique(f"{rid}-call"), resource=rid, description="Sends the agent messages over A2A.")
            return (res, op, True) if _resolves(res, op, index, e) else None
        if index.kind is SpecKind.MCP:
            host = urlsplit(s.spec_url).hostname or "mcp"
            rid = unique(_slug(f"{host}-{e.operation_id}"))
            res = Resource(
                id=rid,
                interaction_protocol=InteractionProtocol.MCP,
                display_name=f"{e.title or e.operation_id} (MCP tool)",
                description=_description(e) or f"MCP tool {e.operation_id} of {s.spec_url}",
                spec=ResourceSpec(spec_url=s.spec_url, resource_path=e.operation_id),
            )
            op = Operation(id=unique(f"{rid}-call"), resource=rid, description=f"Calls MCP tool {e.operation_id}.")
            return (res, op, True) if _resolves(res, op, index, e) else None
        by_id = bool(e.operation_id) and len(index.by_operation_id.get(e.operation_id, ())) == 1
        if by_id:
            existing = spec_resource.get(s.spec_url)
            new = existing is None
            if existing is None:
                existing = spec_resource[s.spec_url] = Resource(
                    id=unique(_slug(_spec_name(index, s.spec_url))),
                    interaction_protocol=InteractionProtocol.REST,
                    display_name=index.title or _spec_name(index, s.spec_url),
                    description=f"Operations of {index.title or s.spec_url} the agent was observed calling.",
                    spec=ResourceSpec(spec_url=s.spec_url),
                )
            op = Operation(
                id=unique(_slug(e.operation_id, 80)),
                resource=existing.id,
                description=_description(e) or f"{e.method} {e.full_path or e.path}",
                api_operation_spec=ApiOperationSpec(operation_id=e.operation_id, http_method=e.method),
            )
            if _resolves(existing, op, index, e):
                return existing, op, new
            if new:
                del spec_resource[s.spec_url]
        # No usable operationId: a resource for the path, the operation by its method.
        path = e.full_path or e.path
        rid = unique(_slug(f"{_spec_name(index, s.spec_url)}-{path}"))
        res = Resource(
            id=rid,
            interaction_protocol=InteractionProtocol.REST,
            display_name=f"{index.title or _spec_name(index, s.spec_url)} {path}",
            description=f"{path} of {index.title or s.spec_url}.",
            spec=ResourceSpec(spec_url=s.spec_url, resource_path=path),
        )
        op = Operation(
            id=unique(f"{rid}-{e.method.lower()}"),
            resource=rid,
            description=_description(e) or f"{e.method} {path}",
            api_operation_spec=ApiOperationSpec(http_method=e.method),
        )
        return (res, op, True) if _resolves(res, op, index, e) else None


def _is_mcp(s: _Seen) -> bool:
    return s.index.kind is SpecKind.MCP


def _resolves(res: Resource, op: Operation, index: SpecIndex, entry: OperationEntry) -> bool:
    """Whether the resolver reads this declaration back to ``entry`` (what ``derive`` will do)."""
    found = resolve(res, op, index, suggest=False)
    return isinstance(found, Target) and found.entry.key == entry.key


def _replace_owner(r: Resource, owner: ResourceOwner) -> Resource:
    return Resource(
        id=r.id,
        interaction_protocol=r.interaction_protocol,
        owner=owner,
        display_name=r.display_name,
        description=r.description,
        developer_documentation_url=r.developer_documentation_url,
        spec=r.spec,
    )


def _description(e: OperationEntry) -> str:
    text = (e.title or e.description or "").strip().splitlines()
    return text[0][:300] if text else ""


def _spec_name(index: SpecIndex, spec_url: str) -> str:
    extra = index.extra
    if isinstance(extra.get("name"), str) and isinstance(extra.get("id"), str):
        return str(extra["id"]).replace(":", "-")
    servers = extra.get("servers")
    if isinstance(servers, list) and servers and isinstance(servers[0], str) and urlsplit(servers[0]).hostname:
        first = urlsplit(servers[0])
        return f"{first.hostname}{first.path}".rstrip("/")
    return index.title or urlsplit(spec_url).hostname or "api"


def _paths(path: str, prefix: str) -> tuple[str, ...]:
    """The call's path, and the part after the prefix's path (a spec whose server URL has no base path)."""
    base = urlsplit(prefix).path or "/"
    if base != "/" and path.startswith(base):
        return (path, "/" + path[len(base) :])
    return (path,)


def summary_diagnostics(summaries: Iterable[EvidenceSummary]) -> list[Diagnostic]:
    """An ``evidence-skipped`` finding per file that had unreadable entries, or entries read in part."""
    out = []
    for s in summaries:
        if s.skipped or s.partial:
            reasons = ", ".join(f"{n} {r}" for r, n in sorted(s.reasons.items()))
            part = f"; {s.partial} read in part, counted as calls to their host" if s.partial else ""
            out.append(
                EVIDENCE_SKIPPED(
                    "",
                    f"{s.source}: {s.skipped} of {s.calls + s.skipped} entries could not be read{part} ({reasons})",
                    data={"file": s.source, "skipped": s.skipped, "partial": s.partial, "reasons": dict(s.reasons)},
                )
            )
    return out


def draft(
    evidence: Iterable[str | os.PathLike[str]],
    *,
    code: Sequence[str | os.PathLike[str]] = (),
    specs: Sequence[tuple[str, str]] = (),
    settings: Settings | None = None,
    engine: Any = None,
    limits: EvidenceLimits = DEFAULT_LIMITS,
) -> DraftResult:
    """Draft a card from evidence files and source code (``code``: files or directories, read statically).
    ``specs``: (URL prefix, spec URL) pairs, tried before the shipped host index. ``engine``: a
    :class:`~ramscope.derive.Engine` to fetch specs with (one is made from ``settings`` otherwise). Raises
    :class:`~ramscope.errors.InputError` for a file that cannot be read at all."""
    from ..derive import Engine  # noqa: PLC0415 - the derivation machinery only when drafting
    from .code import CodeRead, read_code  # noqa: PLC0415

    own = engine is None
    eng = Engine(settings) if own else engine
    info = CodeRead()
    sites: list[tuple[ObservedCall, int]] = []
    sites_more = 0
    try:
        d = _Drafter(eng, shipped_index(specs))
        summaries: list[EvidenceSummary] = []
        for call in iter_calls(evidence, on_summary=summaries.append, limits=limits):
            d.add(call)
        if code:
            for call in read_code(code, info):
                before = d.matched
                d.add(call)
                if len(sites) < MAX_SITES:
                    sites.append((call, d.matched - before))
                else:
                    sites_more += 1
            summaries.extend(info.summaries)
        manifest, notes, late = d.manifest()
        misses = list(d.misses.values()) + late
        nearest: dict[tuple[str, str, str], tuple[str, ...]] = {}
        unmatched = tuple(_unmatched(d, m, nearest) for m in misses)
    finally:
        if own:
            eng.close()
    diags = [
        *summary_diagnostics(summaries),
        *notes,
        *stepup.draft_diagnostics(d.step_up_records),
        *unresolved_diagnostics(info.unresolved),
    ]
    for u in unmatched:
        what = f"MCP tool {u.tool!r} at {u.url}" if u.tool else u.operation or f"{u.method} {u.url}"
        near = f"; nearest: {'; '.join(u.nearest)}" if u.nearest else ""
        at = f" at {', '.join(u.sites[:3])}{' ...' if len(u.sites) > 3 else ''}" if u.sites else ""
        diags.append(
            UNMATCHED_CALL(
                "",
                f"{what}{at} ({u.count} call(s)): {u.reason}{near}",
                data={
                    "method": u.method,
                    "url": u.url,
                    "tool": u.tool or None,
                    "count": u.count,
                    "spec_url": u.spec_url,
                    "nearest": list(u.nearest),
                    "operation": u.operation or None,
                    "sites": list(u.sites),
                },
            )
        )
    # Empty lists too: a draft that explains nothing is still a manifest (to_dict leaves defaults out).
    card = {"resources": [], "operations": [], "resource_accesses": [], **manifest.to_dict()}
    return DraftResult(
        card=card,
        calls=d.calls,
        matched=d.matched,
        operations=len(manifest.operations),
        unmatched=unmatched,
        unmatched_more=d.misses_more,
        evidence=tuple(summaries),
        diagnostics=tuple(diags),
        call_sites=(
            *(_site_record(c, matched, d) for c, matched in sites),
            # A site whose operation the code names though the call cannot be resolved (a tool of a stdio server).
            *(_unresolved_site(u) for u in info.unresolved if u.operation),
        ),
        call_sites_more=sites_more,
        unresolved=tuple(info.unresolved),
        seen=tuple(
            {
                "operation": d.declared.get(key),
                "key": s.entry.key,
                "operation_id": s.entry.operation_id or None,
                "spec_url": s.spec_url,
                "calls": s.count,
                "seen_in": sorted(s.formats),
                "sites": list(s.sites),
            }
            for key, s in sorted(d.seen.items())
        ),
        mcp_servers=tuple({"file": m.file, "name": m.name, "url": m.url} for m in info.servers),
        step_up=tuple(d.step_up_records),
    )


def _site_record(call: ObservedCall, matched: int, d: _Drafter) -> dict[str, Any]:
    return {
        "site": call.site,
        "file": call.source,
        "line": call.entry,
        "via": call.via,
        "operation": site_of(call),
        "method": call.method or None,
        "url": call.url,
        "tool": call.tool or None,
        "spec_url": call.spec or None,
        "matched": bool(matched),
        "unresolved": None,
    }


def _unresolved_site(u: UnresolvedCall) -> dict[str, Any]:
    return {
        "site": u.site,
        "file": u.source,
        "line": u.line,
        "via": u.via,
        "operation": u.operation,
        "method": None,
        "url": None,
        # Both readers' MCP clients ("mcp": Python's SDK, "mcp-sdk": TypeScript's): the tool is what the code names.
        "tool": u.operation if u.via in ("mcp", "mcp-sdk") else None,
        "spec_url": None,
        "matched": False,
        "unresolved": u.reason,
    }


def unresolved_diagnostics(items: Iterable[UnresolvedCall]) -> list[Diagnostic]:
    """An ``unresolved-call`` finding per call site the code reader could not tell statically."""
    return [
        UNRESOLVED_CALL(
            "",
            f"{u.site}: a {u.via} call that cannot be told statically: {u.reason}" + (f" ({u.text})" if u.text else ""),
            hint="name its operation with a comment: # ramscope: OPERATION (docs/code.md)",
            data={"site": u.site, "file": u.source, "line": u.line, "via": u.via, "reason": u.reason},
        )
        for u in items
    ]


_ID_LIKE = re.compile(r"[0-9]|%40|@|^[A-Za-z0-9_-]{20,}$")


def _shape(path: str) -> str:
    """A path with its id-like segments (digits, e-mail addresses, long tokens) blanked: calls of one shape
    get the same nearest operations, so each shape is searched once."""
    return "/".join("{}" if _ID_LIKE.search(seg) else seg for seg in path.split("/"))


def _unmatched(d: _Drafter, m: _Miss, cache: dict[tuple[str, str, str], tuple[str, ...]]) -> UnmatchedCall:
    nearest: tuple[str, ...] = ()
    path = urlsplit(m.url).path
    key = (m.spec_url or "", m.method, _shape(path))
    if key in cache:
        nearest = cache[key]
    elif len(cache) < MAX_SUGGESTED and m.spec_url and not m.tool and not m.operation:
        loaded = d.engine.load(m.spec_url, None)
        if loaded.index is not None:
            # The resolver's own nearest-operation search, asked as if a card named this path.
            res = Resource(
                id="call",
                interaction_protocol=InteractionProtocol.REST,
                spec=ResourceSpec(spec_url=m.spec_url, resource_path=urlsplit(m.url).path),
            )
            op = Operation(id="call", resource="call", api_operation_spec=ApiOperationSpec(http_method=m.method))
            found = resolve(res, op, loaded.index)
            if not isinstance(found, Target):
                nearest = found.suggestions
        cache[key] = nearest
    return UnmatchedCall(m.method, m.url, m.count, m.reason, m.spec_url, nearest, m.tool, m.operation, tuple(m.sites))
