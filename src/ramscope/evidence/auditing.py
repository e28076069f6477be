"""``audit``: a card (and a token) held against what the agent was observed doing.

* a call that no access of the card declares: ``undeclared-call`` (error, exit 6);
* a call to a host the card names nowhere (no spec URL, no server of its specs): ``undeclared-host``
  (error, exit 6);
* an access the evidence never shows: ``unused-access`` (information);
* with granted scopes (``--granted``, or a JWT's ``scp`` / ``scope`` / ``roles`` read offline,
  its signature not verified): each scope beyond the least-privilege scopes derived for the
  observed calls (``excess-grant``, with what it additionally opens in the provider's permission
  universe), and each observed access no granted scope set satisfies (``missing-grant``).

The card is derived by the derivation :class:`~ramscope.derive.Engine` (its accesses resolved by
:mod:`ramscope.derive.resolve`); calls are matched to the same spec operations with :mod:`.match`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..card import Card, load_card
from ..config import Settings
from ..diagnostics import Diagnostic
from ..errors import InputError
from ..manifest import InteractionProtocol
from ..outputs.report import AccessRecord, Report
from ..specs.model import SpecIndex, SpecKind
from . import stepup
from ._auth import jwt_claims
from ._source import DEFAULT_LIMITS, EvidenceLimits
from .drafting import summary_diagnostics, unresolved_diagnostics
from .hosts import _norm_prefix
from .match import matcher_for
from .model import EvidenceSummary, ObservedCall, strip_url
from .read import iter_calls
from .rules import (
    EVIDENCE_SKIPPED,
    EXCESS_GRANT,
    MISSING_GRANT,
    TOKEN_UNVERIFIED,
    UNDECLARED_CALL,
    UNDECLARED_HOST,
    UNUSED_ACCESS,
)
from .stepup import StepUp

__all__ = ["EXIT_UNDECLARED", "AuditResult", "audit", "token_scopes"]

#: ``audit``'s exit code when the agent did something its card does not declare.
EXIT_UNDECLARED = 6
#: Distinct undeclared calls, and hosts, listed as findings each (the rest are counted in one more finding,
#: so 200,000 hosts are not 200,000 findings and an 87 MB report).
_MAX_LISTED = 1_000
#: A token file is read up to this size.
_MAX_TOKEN = 64 * 1024


@dataclass(frozen=True, slots=True)
class AuditResult:
    card: str
    calls: int
    #: Access id -> how many observed calls it explains.
    observed: Mapping[str, int]
    diagnostics: tuple[Diagnostic, ...]
    evidence: tuple[EvidenceSummary, ...]
    granted: tuple[str, ...] | None
    #: The least-privilege scopes of the observed accesses (what a token for this evidence needs).
    needed: tuple[str, ...]
    token_verified: bool | None = None
    #: Whether the card itself is valid (``validate``); an invalid card is still audited.
    card_valid: bool = True

    @property
    def exit_code(self) -> int:
        bad = {UNDECLARED_CALL.code, UNDECLARED_HOST.code}
        # Fail closed: an entry that could not be read at all (not even its host) may be an undeclared call.
        unread = any(d.code == EVIDENCE_SKIPPED.code and d.data.get("skipped") for d in self.diagnostics)
        return EXIT_UNDECLARED if unread or any(d.code in bad for d in self.diagnostics) else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "card": self.card,
            "card_valid": self.card_valid,
            "calls": self.calls,
            "observed": dict(self.observed),
            "needed_scopes": list(self.needed),
            "granted_scopes": list(self.granted) if self.granted is not None else None,
            "token_signature_verified": self.token_verified,
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
            "exit_code": self.exit_code,
        }


def token_scopes(path: str | os.PathLike[str]) -> tuple[str, ...]:
    """The scopes a JWT access token claims (``scp``, ``scope``, ``roles``), read without verifying it."""
    label = os.fspath(path)
    try:
        with open(label, "rb") as f:
            data = f.read(_MAX_TOKEN + 1)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or type(exc).__name__}", source=label) from None
    if len(data) > _MAX_TOKEN:
        raise InputError(f"a token file is at most {_MAX_TOKEN} bytes", source=label)
    text = data.decode("ascii", "replace").strip()
    if text.lower().startswith("bearer "):
        text = text[7:].strip()
    claims = jwt_claims(text)
    if claims is None:
        # Never echo the file: it is a credential.
        raise InputError("not a JWT (header.payload.signature, base64url)", source=label)
    out: list[str] = []
    for key in ("scp", "scope", "roles"):
        v = claims.get(key)
        if isinstance(v, str):
            out.extend(v.split())
        elif isinstance(v, list):
            out.extend(s for s in v if isinstance(s, str))
    return tuple(dict.fromkeys(out))


class _Auditor:
    def __init__(self, engine: Any, card: Card, report: Report) -> None:
        self.engine = engine
        self.report = report
        self.hosts: set[str] = set()
        #: (spec URL, operation key) -> access ids.
        self.declared: dict[tuple[str, str], list[str]] = {}
        #: REST specs of the card: (spec URL, index, base URL prefixes).
        self.rest: list[tuple[str, SpecIndex, tuple[str, ...]]] = []
        self.mcp: set[str] = set()
        self.observed: dict[str, int] = {}
        self.undeclared: dict[tuple[str, str, str, str, str], list[Any]] = {}
        self.bad_hosts: dict[str, list[Any]] = {}
        #: Calls beyond the listed undeclared calls and hosts: counted only.
        self.more_calls = 0
        self.more_host_calls = 0
        self.calls = 0
        #: (access ids, call, what its answer said it needs): checked against the card's tiers (stepup).
        self.step_ups: list[tuple[list[str], ObservedCall, StepUp]] = []
        for a in report.accesses:
            t = a.target
            if a.spec_url and isinstance(t, Mapping) and isinstance(t.get("key"), str):
                self.declared.setdefault((a.spec_url, t["key"]), []).append(a.id)
        for res in card.manifest.resources:
            url = res.spec_url
            if not url:
                continue
            self._name(url)
            if res.interaction_protocol is InteractionProtocol.MCP:
                self.mcp.add(_norm(url))
                continue
            if res.interaction_protocol is InteractionProtocol.A2A:
                continue  # an agent is called over A2A, not by operation: its host is named above
            loaded = engine.load(url, None)
            if loaded.index is not None and all(u != url for u, _, _ in self.rest):
                bases = _bases(loaded.index)
                for b in bases:
                    self._name(b)
                self.rest.append((url, loaded.index, bases))

    def _name(self, url: str) -> None:
        host = urlsplit(url).netloc.lower().rpartition("@")[2]
        if host:
            self.hosts.add(host)

    def add(self, call: ObservedCall) -> None:
        self.calls += 1
        host = urlsplit(call.url).netloc.lower()
        if host not in self.hosts:
            hit = self.bad_hosts.get(host)
            if hit is None and len(self.bad_hosts) >= _MAX_LISTED:
                self.more_host_calls += 1
                return
            if hit is None:
                hit = self.bad_hosts[host] = [0, call, []]
            hit[0] += 1
            if call.site and len(hit[2]) < 1000:
                hit[2].append(call.site)
            return
        if call.unreadable:
            # Read in part (its host only): it cannot be shown to be declared, so it is not (fail closed).
            self._undeclared(call, "")
            return
        if call.via == "a2a":
            ids = [i for (url, _key), ids in self.declared.items() if _norm(url) == _norm(call.url) for i in ids]
            if ids:
                self._seen(ids)
            else:
                self._undeclared(call, "")
            return
        if call.tool:
            key = (_norm(call.url), call.tool)
            ids = self.declared.get(key) or self._mcp_declared(call)
            if ids:
                self._seen(ids, call)
            else:
                self._undeclared(call, "")
            return
        found = ""
        if call.operation:
            # The code names the operation (a Discovery method id, a GitHub operationId): looked up by name.
            for spec_url, index, _bases in self.rest:
                hits = index.by_operation_id.get(call.operation, ())
                if len(hits) != 1:
                    continue
                accesses = self.declared.get((spec_url, hits[0].key))
                if accesses:
                    self._seen(accesses)
                    return
                found = found or f"{call.operation} of {spec_url}"
        for spec_url, index, bases in self.rest:
            if not any(call.url.startswith(b.rstrip("/")) for b in bases):
                continue
            paths = [call.path]
            for b in bases:
                base = urlsplit(b).path.rstrip("/")
                if base and call.path.startswith(base + "/"):
                    paths.append(call.path[len(base) :])
            m = matcher_for(index).match(call.method, tuple(dict.fromkeys(paths)))
            if m.entry is None:
                continue
            accesses = self.declared.get((spec_url, m.entry.key))
            if accesses:
                self._seen(accesses, call)
                return
            found = found or f"{m.entry.operation_id or m.entry.key} of {spec_url}"
        self._undeclared(call, found)

    def _mcp_declared(self, call: ObservedCall) -> list[str]:
        server = _norm(call.url)
        return [
            i for (url, key), ids in self.declared.items() if _norm(url) == server and key == call.tool for i in ids
        ]

    def _seen(self, ids: Sequence[str], call: ObservedCall | None = None) -> None:
        for i in ids:
            self.observed[i] = self.observed.get(i, 0) + 1
        if call is not None and call.step_up is not None and len(self.step_ups) < _MAX_LISTED:
            self.step_ups.append((list(ids), call, call.step_up))

    def _undeclared(self, call: ObservedCall, operation: str) -> None:
        # A call site of code is a finding of its own (its file:line is where to fix it).
        key = (call.method, call.url, call.tool, call.operation, call.site)
        hit = self.undeclared.get(key)
        if hit is None:
            if len(self.undeclared) >= _MAX_LISTED:
                self.more_calls += 1
                return
            hit = self.undeclared[key] = [0, call, operation]
        hit[0] += 1


def _norm(url: str) -> str:
    # As a call's URL is read (strip_url): no query, credential-shaped path segments redacted, so a card's
    # MCP server URL that carries a key is the server the evidence shows.
    url = strip_url(url) or url
    return (_norm_prefix(url) or url).rstrip("/")


def _bases(index: SpecIndex) -> tuple[str, ...]:
    """The base URLs a spec's calls go to: OpenAPI servers, Discovery rootUrl + servicePath."""
    extra = index.extra
    out: list[str] = []
    servers = extra.get("servers")
    if isinstance(servers, list):
        out.extend(s for s in servers if isinstance(s, str) and urlsplit(s).hostname)
    root = extra.get("rootUrl")
    if isinstance(root, str) and urlsplit(root).hostname:
        out.append(root + str(extra.get("servicePath") or ""))
    # The spec's own origin too: a spec served next to its API (and a local test server) names it.
    u = urlsplit(index.url)
    if u.scheme and u.netloc:
        out.append(f"{u.scheme}://{u.netloc}/")
    return tuple(dict.fromkeys(out))


def audit(
    card: str | os.PathLike[str] | Card,
    evidence: Iterable[str | os.PathLike[str]],
    *,
    code: Sequence[str | os.PathLike[str]] = (),
    granted: Sequence[str] | None = None,
    token: str | os.PathLike[str] | None = None,
    settings: Settings | None = None,
    engine: Any = None,
    limits: EvidenceLimits = DEFAULT_LIMITS,
) -> AuditResult:
    """Audit ``card`` against evidence files and the calls of source code (``code``: files or directories, read
    statically); ``granted`` scopes or a ``token`` file for the grant check."""
    from ..derive import Engine  # noqa: PLC0415
    from .code import CodeRead, read_code  # noqa: PLC0415

    if granted is not None and token is not None:
        raise InputError("give granted scopes or a token, not both")
    loaded_card = card if isinstance(card, Card) else load_card(card)
    scopes = tuple(dict.fromkeys(granted)) if granted is not None else token_scopes(token) if token else None
    own = engine is None
    eng = Engine(settings) if own else engine
    try:
        report = eng.derive(loaded_card)
        a = _Auditor(eng, loaded_card, report)
        summaries: list[EvidenceSummary] = []
        for call in iter_calls(evidence, on_summary=summaries.append, limits=limits):
            a.add(call)
        info = CodeRead()
        if code:
            for call in read_code(code, info):
                a.add(call)
            summaries.extend(info.summaries)
        diags = [
            *summary_diagnostics(summaries),
            *unresolved_diagnostics(info.unresolved),
            *_findings(a, report),
            *_step_up_findings(a, report),
        ]
        needed = _needed(report, a.observed)
        if scopes is not None:
            if token is not None:
                diags.append(
                    TOKEN_UNVERIFIED(
                        "",
                        f"the scopes of {os.fspath(token)} were read from its claims; its signature was not verified",
                    )
                )
            diags.extend(_grant_findings(eng, report, a.observed, scopes, needed))
    finally:
        if own:
            eng.close()
    return AuditResult(
        card=loaded_card.source,
        calls=a.calls,
        observed=dict(sorted(a.observed.items())),
        diagnostics=tuple(diags),
        evidence=tuple(summaries),
        granted=scopes,
        needed=needed,
        token_verified=False if token is not None else None,
        card_valid=report.card_valid,
    )


def _findings(a: _Auditor, report: Report) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for host, (count, call, sites) in sorted(a.bad_hosts.items()):
        at = f" at {sites[0]}" if sites and sites[0] not in call.label else ""
        out.append(
            UNDECLARED_HOST(
                "",
                f"{count} call(s) to {host}, which the card names nowhere (first: {call.label}{at})",
                hint="declare the accesses to this host, or find out why the agent calls it",
                data={"host": host, "count": count, "call": call.label, "sites": list(sites), **_where(call)},
            )
        )
    if a.more_host_calls:
        out.append(
            UNDECLARED_HOST(
                "",
                f"{a.more_host_calls} more call(s) to hosts the card names nowhere, beyond the {_MAX_LISTED} hosts "
                "listed (not listed one by one)",
                hint="declare the accesses to these hosts, or find out why the agent calls them",
                data={"host": None, "count": a.more_host_calls, "call": None, "listed": _MAX_LISTED},
            )
        )
    for (_method, _url, tool, _op, _site), (count, call, operation) in a.undeclared.items():
        what = f" ({operation})" if operation else ""
        at = f" at {call.site}" if call.site and call.site not in call.label else ""
        out.append(
            UNDECLARED_CALL(
                "",
                f"{call.label}{at}{what}: {count} call(s) that no access of the card declares",
                hint="declare an access for it (ramscope draft writes one), or stop the agent making it",
                data={
                    "call": call.label,
                    "method": call.method,
                    "url": call.url,
                    "tool": tool or None,
                    "operation": operation or None,
                    "count": count,
                    **_where(call),
                },
            )
        )
    if a.more_calls:
        out.append(
            UNDECLARED_CALL(
                "",
                f"{a.more_calls} more call(s) that no access of the card declares, beyond the {_MAX_LISTED} distinct "
                "calls listed (not listed one by one)",
                hint="declare accesses for them (ramscope draft writes them), or stop the agent making them",
                data={
                    "call": None,
                    "method": None,
                    "url": None,
                    "tool": None,
                    "operation": None,
                    "count": a.more_calls,
                    "listed": _MAX_LISTED,
                },
            )
        )
    for i, rec in enumerate(report.accesses):
        if rec.id not in a.observed:
            out.append(
                UNUSED_ACCESS(
                    f"/resource_accesses/{i}",
                    f"access {rec.id!r} was never observed in the evidence",
                    hint="drop it, or lower its necessity, if the agent does not need it",
                    data={"access": rec.id},
                )
            )
    return out


def _where(call: ObservedCall) -> dict[str, Any]:
    """A code call's site, for the finding's data (SARIF puts the finding on that line)."""
    return {"site": call.site, "file": call.source, "line": call.entry} if call.site else {}


def _step_up_findings(a: _Auditor, report: Report) -> list[Diagnostic]:
    """What the servers' answers said the observed calls need, held against the tier of each access."""
    if not a.step_ups:
        return []
    tiers: dict[str, set[str]] = {}
    hierarchies: dict[str, Mapping[str, Sequence[str]]] = {}
    for rec in report.accesses:
        tier = report.tiers.get(rec.necessity) or report.tiers.get("REQUIRED")
        ident = tier.identities.get(rec.identity) if tier is not None else None
        # The tier's set for the access's identity, and the access's own choice (an access whose identity
        # the card leaves unspecified is in no identity's tier).
        tiers[rec.id] = (set(ident.scopes) if ident is not None else set()) | set(rec.scopes or ())
        if rec.spec_url and isinstance(rec.target, Mapping) and rec.target.get("tool"):
            # The server's documented scope hierarchy (GitHub's repo includes security_events), if any.
            loaded = a.engine.load(rec.spec_url, SpecKind.MCP)
            cat = loaded.index.extra.get("mcp_catalog") if loaded.index is not None else None
            if isinstance(cat, Mapping) and isinstance(cat.get("hierarchy"), Mapping):
                hierarchies[rec.id] = cat["hierarchy"]
    return stepup.findings(a.step_ups, tiers, hierarchies)


def _needed(report: Report, observed: Mapping[str, int]) -> tuple[str, ...]:
    out: list[str] = []
    for rec in report.accesses:
        if rec.id in observed and rec.scopes:
            out.extend(rec.scopes)
    return tuple(sorted(set(out)))


def _satisfied(rec: AccessRecord, granted: set[str]) -> bool:
    if rec.requirements is None:
        return True  # unknown requirements: nothing to hold the token against (derive says incomplete)
    if not rec.requirements:
        return True
    return any(all(set(term.get("scopes") or ()) <= granted for term in alt) for alt in rec.requirements)


def _grant_findings(
    engine: Any, report: Report, observed: Mapping[str, int], scopes: Sequence[str], needed: Sequence[str]
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    granted = set(scopes)
    servers = {s for rec in report.accesses if rec.id in observed for s in rec.scope_servers.values()}
    for rec in report.accesses:
        if rec.id in observed and not _satisfied(rec, granted):
            lacking = [s for s in rec.scopes or () if s not in granted]
            out.append(
                MISSING_GRANT(
                    "",
                    f"access {rec.id!r} needs {', '.join(lacking) or 'a scope set'} which the token does not hold",
                    data={"access": rec.id, "scopes": lacking},
                )
            )
    universes = [u for u in (engine.universe(s) for s in sorted(servers)) if u is not None]
    for scope in scopes:
        if scope in needed:
            continue
        opens = _additional(universes, scope, needed)
        more = (
            f"; it additionally opens {opens[0]} operation(s) of {opens[1]}"
            + (f" (e.g. {', '.join(opens[2])})" if opens[2] else "")
            if opens
            else ""
        )
        over = ", ".join(needed) or "nothing"
        out.append(
            EXCESS_GRANT(
                "",
                f"the token holds {scope}, beyond the least privilege of the observed calls ({over}){more}",
                data={
                    "scope": scope,
                    "needed": list(needed),
                    "additional_operations": opens[0] if opens else None,
                    "examples": list(opens[2]) if opens else [],
                },
            )
        )
    return out


def _additional(universes: Sequence[Any], scope: str, needed: Sequence[str]) -> tuple[int, str, tuple[str, ...]] | None:
    """How many operations ``scope`` opens beyond ``needed`` in the universe that knows it, with examples."""
    for u in universes:
        ns = u.server
        if (ns, scope) not in u.by_scope:
            continue
        held = {(ns, s) for s in needed}
        with_scope = held | {(ns, scope)}
        before: set[int] = set()
        after: set[int] = set()
        for alt, pos in u.alternatives:
            if alt <= held:
                before.update(pos)
            if alt <= with_scope:
                after.update(pos)
        extra = sorted(after - before)
        return len(extra), u.name, tuple(u.ops[p] for p in extra[:5])
    return None
