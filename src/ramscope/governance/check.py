"""``ramscope check``: an organisation's rules (:mod:`.rules`) judged over permission reports.

A :class:`Finding` names the rule, its severity, the access (when there is one), what was
found, and where in the card: the JSON pointer of the access (or resource) and its line and
column, so SARIF puts it on the card's line. A waiver in the rules file keeps the finding,
marked suppressed with its justification, but it no longer fails the check.

Exit codes (``EXIT_*``): 5 when an unsuppressed error-severity rule fails. Without such a
failure, an invalid card is 1 and an incomplete derivation is 3 *unless the rules judge
completeness themselves* (a ``complete-derivation`` rule): rules that passed on what is known
say nothing about permissions nobody could determine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import facts
from .facts import Effect
from .locate import Locator, Position
from .rules import Rule, RuleSet

__all__ = [
    "EXIT_INCOMPLETE",
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_RULES_FAILED",
    "CardResult",
    "Finding",
    "check_report",
    "exit_code",
    "results_json",
]

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_INCOMPLETE = 3
#: An unsuppressed finding of an error-severity rule. Distinct from 1 (the card itself is
#: invalid), 3 (permissions unknown) and 4 (diff: new permissions), so CI can tell them apart.
EXIT_RULES_FAILED = 5

CHECK_VERSION = 1


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    kind: str
    severity: str
    message: str
    card: str
    access: str | None = None
    position: Position = field(default_factory=lambda: Position(""))
    #: The waiver's justification when one covers this finding.
    suppressed: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    #: The cumulative tier the finding is about (what it requests, its total), when it is one's.
    tier: str | None = None

    @property
    def fails(self) -> bool:
        return self.severity == "error" and self.suppressed is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "kind": self.kind,
            "severity": self.severity,
            "access": self.access,
            "tier": self.tier,
            "pointer": self.position.pointer,
            "line": self.position.line,
            "column": self.position.column,
            "message": self.message,
            "suppressed": self.suppressed is not None,
            "justification": self.suppressed,
            "details": dict(self.details),
        }


@dataclass(frozen=True, slots=True)
class CardResult:
    card: str
    name: str
    sha256: str
    valid: bool
    complete: bool
    findings: tuple[Finding, ...]
    #: Exit code of this card alone (see the module docstring).
    exit_code: int

    @property
    def passed(self) -> bool:
        return not any(f.fails for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "card": {"source": self.card, "name": self.name, "sha256": self.sha256, "valid": self.valid},
            "complete": self.complete,
            "passed": self.passed,
            "exit_code": self.exit_code,
            "summary": {
                sev: sum(1 for f in self.findings if f.severity == sev and not f.suppressed)
                for sev in ("error", "warning", "note")
            }
            | {"suppressed": sum(1 for f in self.findings if f.suppressed)},
            "findings": [f.to_dict() for f in self.findings],
        }


def exit_code(results: Sequence[CardResult]) -> int:
    codes = {r.exit_code for r in results}
    for code in (EXIT_RULES_FAILED, EXIT_INVALID, EXIT_INCOMPLETE):
        if code in codes:
            return code
    return EXIT_OK


def results_json(results: Sequence[CardResult], rules: RuleSet) -> dict[str, Any]:
    return {
        "check_version": CHECK_VERSION,
        "rules_file": rules.source,
        "rules": [{"id": r.id, "kind": r.kind, "severity": r.severity, "summary": r.summary} for r in rules.rules],
        "passed": all(r.passed for r in results),
        "exit_code": exit_code(results),
        "cards": [r.to_dict() for r in results],
    }


# --------------------------------------------------------------------------- evaluation


@dataclass(frozen=True, slots=True)
class _Hit:
    """A rule's raw finding, before locating and waiving."""

    message: str
    access: str | None = None
    resource: str | None = None
    #: The card field the finding is about (e.g. ``confirmation_required``), when it has one.
    on: str = ""
    #: What a waiver's ``scope`` glob is matched against.
    scope: str | None = None
    severity: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    #: Set for a finding about a whole tier: only a waiver without ``access`` (and matching ``tier``) waives it.
    tier: str | None = None


_Checker = Callable[[Rule, Mapping[str, Any]], Iterator[_Hit]]


def check_report(report: Mapping[str, Any], rules: RuleSet, locator: Locator | None = None) -> CardResult:
    """Judge one report (its JSON form) by ``rules``; ``locator`` places findings in the card."""
    loc = locator or Locator()
    card = _dict(report.get("card"))
    source = str(card.get("source", ""))
    name = str(card.get("name", ""))
    # Waivers match the card's file path, never the name the card gives itself.
    paths = rules.card_paths(source)
    findings: list[Finding] = []
    for rule in rules.rules:
        for hit in _CHECKERS[rule.kind](rule, report):
            severity = hit.severity or rule.severity
            pos = loc.resource(hit.resource) if hit.resource is not None else loc.access(hit.access, hit.on)
            waiver = rules.waiver_for(rule.id, paths, hit.access, hit.scope, hit.tier)
            findings.append(
                Finding(
                    rule=rule.id,
                    kind=rule.kind,
                    severity=severity,
                    message=hit.message,
                    card=source,
                    access=hit.access,
                    position=pos,
                    suppressed=waiver.justification if waiver else None,
                    details=hit.details,
                    tier=hit.tier,
                )
            )
    findings.sort(key=lambda f: (f.position.line or 0, f.position.column or 0, f.rule))
    valid = card.get("valid") is not False
    complete = report.get("complete") is not False
    if any(f.fails for f in findings):
        code = EXIT_RULES_FAILED
    elif not valid:
        code = EXIT_INVALID
    elif not complete and not rules.has_kind("complete-derivation"):
        code = EXIT_INCOMPLETE
    else:
        code = EXIT_OK
    return CardResult(source, name, str(card.get("sha256", "")), valid, complete, tuple(findings), code)


def _dict(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _accesses(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [a for a in report.get("accesses") or [] if isinstance(a, Mapping)]


def _forbidden_scopes(rule: Rule, report: Mapping[str, Any]) -> Iterator[_Hit]:
    specs = facts.spec_by_resource(report)
    scopes, providers_globs = rule.glob_set("scopes"), rule.glob_set("providers")
    any_provider = rule["providers"] == ["*"]
    accesses = {str(a.get("id")): a for a in _accesses(report)}

    def hosts_of(a: Mapping[str, Any]) -> list[str]:
        return [
            p
            for p in [
                *facts.access_hosts(a, specs.get(str(a.get("resource")))),
                *_dict(a.get("scope_servers")).values(),
            ]
            if isinstance(p, str)
        ]

    for a in accesses.values():
        providers = hosts_of(a)
        granted = [s for s in a.get("scopes") or [] if isinstance(s, str)]
        granted += [
            str(c["scheme"])
            for c in a.get("credentials") or []
            if isinstance(c, Mapping) and isinstance(c.get("scheme"), str)
        ]
        for scope in granted:
            glob = scopes.first(scope)
            if glob is None:
                continue
            server = facts.scope_server(a, scope)
            where = [server] if server else providers
            if not any_provider and not providers_globs.any(where):
                continue
            yield _Hit(
                f"access {a.get('id')!r} is granted {scope!r}, which the rules forbid ({glob})",
                access=str(a.get("id")),
                scope=scope,
                details={"scope": scope, "glob": glob, "authorization_server": server},
            )
    # What a tier requests beyond its accesses' own picks is asked for too.
    for req in facts.tier_requests(report):
        glob = scopes.first(req.name)
        if glob is None:
            continue
        where = (
            [req.namespace]
            if req.namespace
            else [h for x in req.accesses if x in accesses for h in hosts_of(accesses[x])]
        )
        if not any_provider and not providers_globs.any(where):
            continue
        yield _tier_hit(
            req,
            f"requests {req.name!r}, which the rules forbid ({glob})",
            {"scope": req.name, "glob": glob, "authorization_server": req.namespace},
        )


def _tier_hit(req: facts.TierRequest, what: str, details: Mapping[str, Any], **kw: Any) -> _Hit:
    served = ", ".join(repr(x) for x in req.accesses) or "none"
    kind = "" if req.kind == "scope" else " credential"
    return _Hit(
        f"the {req.tier} tier{kind} for {req.identity} {what}; no access picked it itself (it serves {served})",
        scope=req.name,
        tier=req.tier,
        details={
            "tier": req.tier,
            "identity": req.identity,
            "kind": req.kind,
            "accesses": list(req.accesses),
            **details,
        },
        **kw,
    )


def _max_blast_radius(rule: Rule, report: Mapping[str, Any]) -> Iterator[_Hit]:
    tiers = _dict(report.get("tiers"))
    idents = facts.IDENTITIES if rule["identity"] == "ANY" else (rule["identity"],)
    tier = _dict(tiers.get(rule["tier"]))
    accesses = {str(a.get("id")): a for a in _accesses(report)}
    for ident in idents:
        it = _dict(tier.get(ident))
        n = facts.tier_blast_radius(it)
        if n is None or n <= rule["max"]:
            continue
        members = [accesses[x] for x in it.get("accesses") or [] if x in accesses]
        widest = max(members, key=lambda a: facts.access_blast_radius(a)[0] or -1, default=None)
        # The tier's total is the tier's: attributed to no access, so no access's waiver waives it.
        yield _Hit(
            f"the {rule['tier']} tier grants {ident} {n} operations, more than the allowed {rule['max']}"
            + (f" (widest: access {widest.get('id')!r})" if widest else ""),
            tier=rule["tier"],
            details={
                "tier": rule["tier"],
                "identity": ident,
                "blast_radius": n,
                "max": rule["max"],
                "widest": str(widest.get("id")) if widest else None,
            },
        )
    limit = rule["max_per_access"]
    if limit is None:
        return
    for a in _accesses(report):
        if a.get("identity") not in idents:
            continue
        n, measure = facts.access_blast_radius(a)
        if n is not None and n > limit:
            yield _Hit(
                f"access {a.get('id')!r} is granted {n} operations ({measure}), more than the allowed {limit}",
                access=str(a.get("id")),
                details={"blast_radius": n, "measure": measure, "max": limit},
            )


def _universe_scopes(rule: Rule, report: Mapping[str, Any]) -> Iterator[_Hit]:
    threshold = rule["min_operations"]
    min_chars = rule["card_justification_min_chars"]
    scopes = rule.glob_set("scopes")
    for a in _accesses(report):
        n, measure = facts.access_blast_radius(a)
        for scope in [s for s in a.get("scopes") or [] if isinstance(s, str)]:
            glob = scopes.first(scope)
            wide = threshold is not None and n is not None and n >= threshold
            if glob is None and not wide:
                continue
            justification = str(a.get("justification") or "").strip()
            if min_chars is not None and len(justification) >= min_chars:
                continue
            why = f"matches {glob}" if glob else f"authorizes {n} operations ({measure}), at least {threshold}"
            yield _Hit(
                f"access {a.get('id')!r} is granted {scope!r}, which opens a whole universe ({why}); "
                "it needs a justification (a waiver in the rules file)",
                access=str(a.get("id")),
                on="access_justification",
                scope=scope,
                details={"scope": scope, "operations": n, "measure": measure},
            )
    accesses = {str(a.get("id")): a for a in _accesses(report)}
    tiers = _dict(report.get("tiers"))
    for req in facts.tier_requests(report):
        if req.kind != "scope":
            continue
        glob = scopes.first(req.name)
        # The operations it authorizes: the alternative the tier satisfies a served access with.
        n, measure = None, "unknown"
        for raw in _dict(_dict(tiers.get(req.tier)).get(req.identity)).get("choices") or []:
            choice = _dict(raw)
            names = {str(x) for x in choice.get("scopes") or []} | {
                str(_dict(c).get("scheme")) for c in choice.get("credentials") or [] if _dict(c).get("scheme")
            }
            served = accesses.get(str(choice.get("access")))
            if req.name in names and served is not None:
                m, how = facts.alternative_operations(served, names)
                if m is not None and (n is None or m > n):
                    n, measure = m, how
        wide = threshold is not None and n is not None and n >= threshold
        if glob is None and not wide:
            continue
        why = f"matches {glob}" if glob else f"authorizes {n} operations ({measure}), at least {threshold}"
        yield _tier_hit(
            req,
            f"requests {req.name!r}, which opens a whole universe ({why}); it needs a justification "
            "(a tier waiver in the rules file)",
            {"scope": req.name, "operations": n, "measure": measure},
        )


def _confirm_writes(rule: Rule, report: Mapping[str, Any]) -> Iterator[_Hit]:
    wanted = {Effect.WRITE if e == "write" else Effect.DESTRUCTIVE for e in rule["effects"]}
    if rule["unknown_as_write"]:
        wanted.add(Effect.UNKNOWN)
    for a in _accesses(report):
        if a.get("identity") not in rule["identities"] or a.get("confirmation_required") is True:
            continue
        effect, why = facts.access_effect(a)
        if effect not in wanted:
            continue
        what = "may write or delete (its effect is unknown)" if effect is Effect.UNKNOWN else f"is {effect.label}"
        yield _Hit(
            f"{a.get('identity')} access {a.get('id')!r} {what} ({why}) but does not set confirmation_required",
            access=str(a.get("id")),
            on="confirmation_required",
            details={"effect": effect.label, "evidence": why},
        )


def _allowed_third_parties(rule: Rule, report: Mapping[str, Any]) -> Iterator[_Hit]:
    specs = facts.spec_by_resource(report)
    allowed = rule.glob_set("hosts")
    by_resource: dict[str, tuple[str, list[str]]] = {}
    for a in _accesses(report):
        if a.get("owner") != "THIRD_PARTY":
            continue
        rid = str(a.get("resource"))
        # Where the data goes (the API's servers, the MCP/A2A endpoint), not where the spec is served.
        hosts = facts.api_hosts(a, specs.get(rid))
        seen = by_resource.setdefault(rid, (str(a.get("id")), []))[1]
        for h in (hosts if hosts is not None else ["(API host unknown)"]) or ["(no host)"]:
            if h not in seen:
                seen.append(h)
    for rid, (aid, hosts) in by_resource.items():
        outside = [h for h in hosts if allowed.first(h) is None]
        if outside:
            yield _Hit(
                f"third-party resource {rid!r} sends data to {', '.join(outside)}, not an allowed host",
                access=aid,
                resource=rid,
                scope=outside[0],
                details={"resource": rid, "hosts": hosts},
            )


def _no_admin_consent(rule: Rule, report: Mapping[str, Any]) -> Iterator[_Hit]:
    unknown: list[str] = []
    for a in _accesses(report):
        needs = facts.admin_consent(a)
        if needs is None:
            if a.get("scopes"):
                unknown.append(str(a.get("id")))
            continue
        for scope in needs:
            yield _Hit(
                f"access {a.get('id')!r} needs {scope!r}, which only an administrator can consent to",
                access=str(a.get("id")),
                scope=scope,
                details={"scope": scope},
            )
    if unknown and rule["on_unknown"] != "ignore":
        for aid in unknown:
            yield _Hit(
                f"access {aid!r}: the report does not say whether its scopes need an administrator's consent",
                access=aid,
                severity=rule["on_unknown"],
                details={"unknown": True},
            )
    for req in facts.tier_requests(report):
        if req.kind != "scope":
            continue
        if req.admin_consent:
            yield _tier_hit(
                req, f"requests {req.name!r}, which only an administrator can consent to", {"scope": req.name}
            )
        elif req.admin_consent is None and rule["on_unknown"] != "ignore":
            yield _tier_hit(
                req,
                f"requests {req.name!r}; the report does not say whether it needs an administrator's consent",
                {"scope": req.name, "unknown": True},
                severity=rule["on_unknown"],
            )


def _cost_matches(cost: Mapping[str, Any], globs: Any) -> list[str]:
    """The cost's class and triggers that a ``forbidden-costs`` glob matches."""
    names = [str(t) for t in _list(cost.get("triggers")) if isinstance(t, str)]
    if isinstance(cost.get("class"), str):
        names.append(str(cost["class"]))
    return [n for n in dict.fromkeys(names) if globs.first(n) is not None]


def _forbidden_costs(rule: Rule, report: Mapping[str, Any]) -> Iterator[_Hit]:
    globs = rule.glob_set("costs")
    for a in _accesses(report):
        aid = str(a.get("id"))
        costs = a.get("costs")
        if not isinstance(costs, list):
            if a.get("scopes") and rule["on_unknown"] != "ignore":
                # An older report, or one without cost data: not knowing is not passing.
                yield _Hit(
                    f"access {aid!r}: the report does not say what its scopes cost",
                    access=aid,
                    severity=rule["on_unknown"],
                    details={"unknown": True},
                )
            continue
        for c in [*(_dict(x) for x in costs), _dict(a.get("operation_cost"))]:
            if not c:
                continue
            what = str(c.get("scope") or c.get("operation") or "")
            if c.get("triggers") is None:
                if rule["on_unknown"] != "ignore":
                    yield _Hit(
                        f"access {aid!r} is granted {what!r}, whose cost no provider page classes "
                        f"({c.get('reason') or 'unclassified'})",
                        access=aid,
                        scope=what,
                        severity=rule["on_unknown"],
                        details={"scope": what, "unknown": True},
                    )
                continue
            hit = _cost_matches(c, globs)
            if hit:
                yield _Hit(
                    f"access {aid!r} is granted {what!r}, which costs {', '.join(hit)} "
                    f"({c.get('provider')}: {c.get('class')}; {c.get('source')})",
                    access=aid,
                    scope=what,
                    details={"scope": what, "costs": hit, "class": c.get("class"), "source": c.get("source")},
                )
    tiers = _dict(report.get("tiers"))
    for req in facts.tier_requests(report):
        if req.kind != "scope":
            continue
        perm = next(
            (
                _dict(p)
                for p in _list(_dict(_dict(tiers.get(req.tier)).get(req.identity)).get("permissions"))
                if _dict(p).get("scope") == req.name
            ),
            {},
        )
        cost = _dict(perm.get("cost"))
        if cost.get("triggers") is None:
            if rule["on_unknown"] != "ignore":
                yield _tier_hit(
                    req,
                    f"requests {req.name!r}, whose cost the report does not give",
                    {"scope": req.name, "unknown": True},
                    severity=rule["on_unknown"],
                )
            continue
        hit = _cost_matches(cost, globs)
        if hit:
            yield _tier_hit(
                req, f"requests {req.name!r}, which costs {', '.join(hit)}", {"scope": req.name, "costs": hit}
            )


def _needs_admin(p: Mapping[str, Any]) -> bool:
    return p.get("admin_consent") is True or "admin-consent" in _list(_dict(p.get("cost")).get("triggers"))


def _max_admin_consent(rule: Rule, report: Mapping[str, Any]) -> Iterator[_Hit]:
    limit = rule["max"]
    tier = _dict(_dict(report.get("tiers")).get(rule["tier"]))
    idents = facts.IDENTITIES if rule["identity"] == "ANY" else (rule["identity"],)
    for ident in idents:
        perms = [_dict(p) for p in _list(_dict(tier.get(ident)).get("permissions"))]
        admin = sorted({str(p["scope"]) for p in perms if isinstance(p.get("scope"), str) and _needs_admin(p)})
        if len(admin) > limit:
            yield _Hit(
                f"the {rule['tier']} tier for {ident} requests {len(admin)} permission(s) an administrator "
                f"must consent to, more than {limit}: {', '.join(admin)}",
                tier=rule["tier"],
                details={"tier": rule["tier"], "identity": ident, "admin_consent": admin, "max": limit},
            )


def _complete_derivation(rule: Rule, report: Mapping[str, Any]) -> Iterator[_Hit]:
    if _dict(report.get("card")).get("valid") is False:
        yield _Hit("the card is invalid (see `ramscope validate`)")
    for a in _accesses(report):
        if a.get("complete") is False:
            reason = a.get("reason") or "incomplete"
            yield _Hit(
                f"access {a.get('id')!r}: permissions unknown ({reason}): {a.get('reason_message') or ''}".rstrip(": "),
                access=str(a.get("id")),
                details={"reason": reason},
            )
    for d in facts.delegations(report):
        if d.footprint.get("complete") is False:
            yield _Hit(
                f"access {d.access!r} delegates to {d.chain[-1]}, whose own permissions are not fully known",
                access=d.access,
                details={"chain": list(d.chain)},
            )


def _max_a2a_depth(rule: Rule, report: Mapping[str, Any]) -> Iterator[_Hit]:
    limit = rule["max"]
    for d in facts.delegations(report):
        chain = " -> ".join(d.chain)
        if d.cycle:
            yield _Hit(
                f"access {d.access!r}: agents delegate in a cycle ({chain}): unbounded depth",
                access=d.access,
                details={"chain": list(d.chain), "cycle": True},
            )
        elif d.depth > limit:
            yield _Hit(
                f"access {d.access!r} reaches an agent at delegation depth {d.depth}, deeper than {limit}: {chain}",
                access=d.access,
                details={"chain": list(d.chain), "depth": d.depth},
            )
        elif d.truncated:
            yield _Hit(
                f"access {d.access!r}: the agent at depth {d.depth} was not derived (--max-depth), so the "
                f"delegation depth is unknown; derive with --max-depth {limit}",
                access=d.access,
                details={"chain": list(d.chain), "depth": d.depth, "truncated": True},
            )


_CHECKERS: Mapping[str, _Checker] = {
    "forbidden-scopes": _forbidden_scopes,
    "max-blast-radius": _max_blast_radius,
    "universe-scopes": _universe_scopes,
    "confirm-writes": _confirm_writes,
    "allowed-third-parties": _allowed_third_parties,
    "no-admin-consent": _no_admin_consent,
    "forbidden-costs": _forbidden_costs,
    "max-admin-consent": _max_admin_consent,
    "complete-derivation": _complete_derivation,
    "max-a2a-depth": _max_a2a_depth,
}
