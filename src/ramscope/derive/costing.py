"""What a choice costs, in the report's terms: per scope of an alternative, the provider's class and
what requesting it triggers (:mod:`ramscope.providers.costs`), and per tier the triggers summed with
the scopes and accesses that cause them.

Unknown is not free: a scope no page of its provider classes has ``class: null`` and ``triggers:
null`` with the reason, and a tier lists it under ``unclassified``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..providers.costs import TRIGGERS, Cost, cost_of, field_cost, provider_of, unclassified_reason
from .privilege import Alternative, Atom, Choice
from .reach import Ranked

__all__ = [
    "alternative_costs",
    "cost_after_reach",
    "cost_rank",
    "operation_cost",
    "scope_cost",
    "tier_costs",
    "trigger_message",
]

#: How heavy each trigger is, for comparing two alternatives' costs (``cost_rank``).
_WEIGHT = {
    "google-security-assessment": 8,
    "marketplace-ineligible": 6,
    "review-required": 4,
    "admin-consent": 4,
    "google-verification": 2,
}

#: How a report says a trigger in a sentence ("needs ... because of gmail.readonly (access X)").
_PHRASE = {
    "google-security-assessment": "needs Google's restricted-scope security assessment",
    "google-verification": "needs Google's sensitive-scope verification",
    "admin-consent": "needs an administrator's consent",
    "marketplace-ineligible": "keeps the app out of the Slack Marketplace",
    "review-required": "needs the provider's review",
}


def _token(atom: Atom, identity: str) -> str | None:
    # Slack's bot-token alternatives carry the quirk's ``#bot`` scheme; a user's are user tokens.
    if "#bot" in atom.scheme:
        return "bot"
    return {"END_USER": "user", "AGENT": "bot"}.get(identity)


def _graph_scheme(atom: Atom, identity: str) -> str | None:
    """The Graph catalog scheme a permission is held under: the catalog's own (its alternatives carry
    it), else, for a spec declaring its own scheme, the application one for an agent (an app's own
    credentials) and the delegated one's default order otherwise."""
    if atom.scheme.startswith("microsoft-graph"):
        return atom.scheme
    return "microsoft-graph-application" if identity == "AGENT" else None


def _short(scope: str) -> str:
    return scope.removeprefix("https://www.googleapis.com/auth/").removeprefix("https://graph.microsoft.com/")


def scope_cost(atom: Atom, identity: str) -> dict[str, Any]:
    """One scope's cost as the report gives it (``accesses[].costs[]``)."""
    provider = provider_of(atom.namespace)
    cost: Cost | None = None
    if provider is not None:
        scheme = _graph_scheme(atom, identity) if provider == "microsoft-graph" else None
        cost = cost_of(atom.namespace, atom.scope, scheme=scheme, token=_token(atom, identity))
        if cost is None and scheme is not None:
            cost = cost_of(atom.namespace, atom.scope, token=_token(atom, identity))
    if cost is None:
        return _unclassified(atom.scope, provider, unclassified_reason(provider, atom.scope))
    return {"scope": atom.scope} | cost.to_dict()


def _unclassified(scope: str, provider: str | None, why: str) -> dict[str, Any]:
    return {
        "scope": scope,
        "provider": provider,
        "class": None,
        "triggers": None,
        "source": None,
        "condition": None,
        "basis": None,
        "reason": why,
    }


def alternative_costs(alt: Alternative, identity: str) -> list[dict[str, Any]]:
    """The cost of each scope of ``alt``, in scope order."""
    return [scope_cost(a, identity) for a in sorted(alt.atoms, key=lambda a: (a.scope, a.namespace)) if a.is_scope]


def operation_cost(target: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What calling the operation costs beyond its scopes (a Shopify field reading protected customer
    data), or ``None``. Read from the field's requiredAccess as the schema the run read states it."""
    if not target or target.get("kind") != "graphql":
        return None
    hints = target.get("hints") or {}
    text = hints.get("required_access") if isinstance(hints, Mapping) else None
    op = str(target.get("operation_id") or "")
    root = {"Query": "QueryRoot", "Mutation": "Mutation"}.get(op.split(".", 1)[0], op.split(".", 1)[0])
    name = f"{root}.{op.split('.', 1)[-1]}" if "." in op else op
    cost = field_cost("shopify", name, text if isinstance(text, str) else None)
    return None if cost is None else {"operation": op} | cost.to_dict()


def cost_rank(costs: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """(weight of the triggers, unclassified scopes): lower is cheaper. Unclassified counts as
    unknown, so an alternative whose cost is unknown never wins on cost over a classed one."""
    weight = 0
    unknown = 0
    for c in costs:
        triggers = c.get("triggers")
        if triggers is None:
            unknown += 1
            continue
        weight += sum(_WEIGHT.get(t, 1) for t in set(triggers))
    return weight + 10 * unknown, unknown


def trigger_message(trigger: str, causes: Sequence[Mapping[str, Any]]) -> str:
    """ "needs Google's restricted-scope security assessment because of gmail.readonly (access read-mail)"."""
    parts = []
    for c in causes:
        accesses = ", ".join(c["accesses"])
        label = "access" if len(c["accesses"]) == 1 else "accesses"
        parts.append(f"{_short(c['scope'])} ({label} {accesses})" if accesses else _short(c["scope"]))
    phrase = _PHRASE.get(trigger, TRIGGERS.get(trigger, trigger))
    return f"{phrase} because of " + ", ".join(parts)


def tier_costs(
    permissions: Sequence[Mapping[str, Any]], operations: Sequence[tuple[str, Mapping[str, Any]]] = ()
) -> dict[str, Any]:
    """A tier's costs summed: each trigger with the scopes (and accesses) that cause it, and what is
    unclassified. ``permissions`` are the tier's ``permissions[]`` carrying ``cost``; ``operations``
    (access id, operation cost) the accesses whose operation itself costs something."""
    by_trigger: dict[str, list[dict[str, Any]]] = {}
    unclassified: list[dict[str, Any]] = []
    for p in permissions:
        cost = p.get("cost")
        if not cost or p.get("scope") is None:
            continue
        cause = {"scope": p["scope"], "accesses": list(p.get("accesses", ())), "class": cost.get("class")}
        if cost.get("triggers") is None:
            unclassified.append({"scope": p["scope"], "accesses": cause["accesses"], "reason": cost.get("reason")})
            continue
        for t in cost["triggers"]:
            by_trigger.setdefault(t, []).append(cause)
    for access, oc in operations:
        for t in oc.get("triggers") or ():
            by_trigger.setdefault(t, []).append(
                {"scope": oc["operation"], "accesses": [access], "class": oc.get("class"), "operation": True}
            )
    triggers = [
        {"trigger": t, "causes": causes, "message": trigger_message(t, causes)}
        for t, causes in sorted(by_trigger.items(), key=lambda kv: (-_WEIGHT.get(kv[0], 1), kv[0]))
    ]
    return {"triggers": triggers, "unclassified": unclassified}


def _level(ranked: Ranked | None, alt: Alternative) -> tuple[str, ...]:
    if ranked is None:
        return ()
    return tuple(sorted(str(ranked.classes[s].level) for s in alt.scopes if s in ranked.classes))


def cost_after_reach(choice: Choice, ranked: Ranked | None, identity: str) -> tuple[Choice, dict[str, Any] | None]:
    """Among the pick and its rivals (equal or incomparable grant sets: reach does not order them), the
    one whose scopes trigger less wins, and the pick it displaced becomes a rival. A cost never
    overrides reach: only rivals of the pick's own level compete, and an unclassified cost never
    wins over a known one. Returns the choice and, when cost decided it, what the report says."""
    if not choice.rivals:
        return choice, None
    level = _level(ranked, choice.alternative)
    mine = cost_rank(alternative_costs(choice.alternative, identity))
    if mine[1]:
        # The pick's own cost is unknown: it may cost nothing, so nothing known can be said cheaper.
        return choice, None
    best: tuple[tuple[int, int], Alternative, int] | None = None
    for alt, mask in choice.rivals:
        if _level(ranked, alt) != level:
            continue
        rank = cost_rank(alternative_costs(alt, identity))
        if rank[1] or rank >= mine:
            continue
        if best is None or rank < best[0]:
            best = (rank, alt, mask)
    if best is None:
        return choice, None
    _, alt, mask = best
    rivals = ((choice.alternative, choice.granted), *((a, m) for a, m in choice.rivals if a.atoms != alt.atoms))
    note = {
        "picked": alt.scopes,
        "over": [choice.alternative.scopes],
        "why": "as narrow by reach, and its scopes trigger less: "
        + _triggers_said(alternative_costs(alt, identity))
        + " against "
        + _triggers_said(alternative_costs(choice.alternative, identity)),
    }
    return Choice(alt, mask, rivals), note


def _triggers_said(costs: Sequence[Mapping[str, Any]]) -> str:
    triggers = sorted({t for c in costs for t in (c.get("triggers") or ())})
    return ", ".join(triggers) if triggers else "nothing"
