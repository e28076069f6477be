"""``ramscope compare``: agents side by side by footprint, and ranked least-privileged first.

For each card, per cumulative tier and identity: the scopes and credentials asked for, the
blast radius (across the authorization server's universe when the report carries it, else
within the specs), the write and destructive accesses and how many of them ask the user first
(HITL coverage), third-party egress, scopes needing an administrator's consent, and the
accesses whose permissions are unknown.

``RANK_RULE`` states the order of ``--rank``; every key is computed on the OPTIONAL tier
(everything the agent may ever ask for), and an agent with unknown permissions never ranks
ahead of one whose permissions are all known: its real footprint could be anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._text import for_terminal
from . import facts
from .facts import Effect

__all__ = ["COMPARE_VERSION", "RANK_RULE", "compare_reports", "render_compare_text"]

COMPARE_VERSION = 1
RANK_RULE = (
    "least-privileged first, on the OPTIONAL tier: complete derivations before incomplete ones; then the "
    "smaller combined blast radius (END_USER + AGENT); then fewer write/destructive accesses without "
    "confirmation; then fewer write/destructive accesses; then fewer scopes needing admin consent; then "
    "fewer cost triggers (Google's verification and security assessment, admin consent, Marketplace "
    "ineligibility, a provider's review; a scope whose cost is unclassified or unknown counts as one); then "
    "fewer third-party egresses; then fewer scopes and credentials; then the card's name"
)


def _tier_facts(report: Mapping[str, Any], tier_name: str) -> dict[str, Any]:
    tiers = report.get("tiers") if isinstance(report.get("tiers"), Mapping) else {}
    assert isinstance(tiers, Mapping)
    tier = tiers.get(tier_name) if isinstance(tiers.get(tier_name), Mapping) else {}
    assert isinstance(tier, Mapping)
    accesses = {str(a.get("id")): a for a in report.get("accesses") or [] if isinstance(a, Mapping)}
    out: dict[str, Any] = {}
    for ident in facts.IDENTITIES:
        it = tier.get(ident) if isinstance(tier.get(ident), Mapping) else {}
        assert isinstance(it, Mapping)
        members = [accesses[x] for x in it.get("accesses") or [] if x in accesses]
        writes: list[str] = []
        destructive: list[str] = []
        unknown: list[str] = []
        unconfirmed: list[str] = []
        admin: set[str] = set()
        admin_known = True
        universe = False
        for a in members:
            effect, _ = facts.access_effect(a)
            aid = str(a.get("id"))
            bucket = {Effect.WRITE: writes, Effect.DESTRUCTIVE: destructive, Effect.UNKNOWN: unknown}.get(effect)
            if bucket is not None:
                bucket.append(aid)
                if a.get("confirmation_required") is not True:
                    unconfirmed.append(aid)
            needs = facts.admin_consent(a)
            if needs is None:
                admin_known = admin_known and not a.get("scopes")
            else:
                admin.update(needs)
            universe = universe or facts.access_blast_radius(a)[1] == "universe"
        mutating = len(writes) + len(destructive) + len(unknown)
        out[ident] = {
            "scopes": list(it.get("scopes") or []),
            "credentials": [c.get("scheme") for c in it.get("credentials") or [] if isinstance(c, Mapping)],
            "blast_radius": facts.tier_blast_radius(it),
            "blast_radius_measure": "universe" if universe else "spec",
            "write_accesses": writes,
            "destructive_accesses": destructive,
            "unknown_effect_accesses": unknown,
            "unconfirmed_writes": unconfirmed,
            "hitl_coverage": None if not mutating else round((mutating - len(unconfirmed)) / mutating, 3),
            "admin_consent": sorted(admin) if admin_known else None,
            "incomplete_accesses": list(it.get("incomplete_accesses") or []),
            **_tier_costs(it),
        }
    out["third_party_egress"] = list(tier.get("acknowledgments") or [])
    out["complete"] = tier.get("complete") is not False
    return out


def _tier_costs(it: Mapping[str, Any]) -> dict[str, Any]:
    """What the tier's permissions cost: the trigger names (``cost_triggers``) and how many of its
    scopes no provider page classes; both ``None`` when the report does not say (an older report)."""
    costs = it.get("costs")
    if not isinstance(costs, Mapping):
        unknown = None if it.get("scopes") else 0
        return {"cost_triggers": None if unknown is None else [], "cost_unclassified": unknown}
    triggers = sorted({str(t.get("trigger")) for t in costs.get("triggers") or [] if isinstance(t, Mapping)})
    unclassified = len([u for u in costs.get("unclassified") or [] if isinstance(u, Mapping)])
    return {"cost_triggers": triggers, "cost_unclassified": unclassified}


def _cost_count(x: Mapping[str, Any]) -> int:
    if x["cost_triggers"] is None:
        return 1
    return len(x["cost_triggers"]) + int(x["cost_unclassified"] or 0)


def _card(report: Mapping[str, Any]) -> dict[str, Any]:
    card = report.get("card") if isinstance(report.get("card"), Mapping) else {}
    assert isinstance(card, Mapping)
    return {"source": card.get("source"), "name": card.get("name"), "sha256": card.get("sha256")}


def _rank_key(entry: Mapping[str, Any]) -> tuple[Any, ...]:
    opt = entry["tiers"]["OPTIONAL"]
    both = [opt[i] for i in facts.IDENTITIES]
    complete = entry["complete"] and opt["complete"]
    return (
        0 if complete else 1,
        sum(x["blast_radius"] or 0 for x in both),
        sum(len(x["unconfirmed_writes"]) for x in both),
        sum(
            len(x["write_accesses"]) + len(x["destructive_accesses"]) + len(x["unknown_effect_accesses"]) for x in both
        ),
        # Unknown admin consent counts as one: not knowing is not better than a known need.
        sum(len(x["admin_consent"]) if x["admin_consent"] is not None else 1 for x in both),
        sum(_cost_count(x) for x in both),
        len(opt["third_party_egress"]),
        sum(len(x["scopes"]) + len(x["credentials"]) for x in both),
        str(entry["card"]["name"] or entry["card"]["source"] or ""),
    )


def compare_reports(reports: Sequence[Mapping[str, Any]], *, rank: bool = False) -> dict[str, Any]:
    entries = [
        {
            "card": _card(r),
            "complete": r.get("complete") is not False,
            "tiers": {t: _tier_facts(r, t) for t in facts.TIERS},
        }
        for r in reports
    ]
    out: dict[str, Any] = {"compare_version": COMPARE_VERSION, "ranked": rank, "rank_rule": None}
    if rank:
        keyed = sorted(((_rank_key(e), i, e) for i, e in enumerate(entries)), key=lambda t: (t[0], t[1]))
        entries = []
        prev: tuple[Any, ...] | None = None
        position = 0
        for n, (key, _, e) in enumerate(keyed, start=1):
            # Equal on every key but the name: the same rank, said, rather than an order by spelling.
            if prev is None or key[:-1] != prev[:-1]:
                position = n
            prev = key
            e["rank"] = position
            e["rank_key"] = {
                "complete": key[0] == 0,
                "blast_radius": key[1],
                "unconfirmed_writes": key[2],
                "writes": key[3],
                "admin_consent": key[4],
                "costs": key[5],
                "third_party_egress": key[6],
                "scopes_and_credentials": key[7],
            }
            entries.append(e)
        out["rank_rule"] = RANK_RULE
    out["cards"] = entries
    return out


def _n(v: Any) -> str:
    return "?" if v is None else str(v)


def _costs_cell(x: Mapping[str, Any]) -> str:
    if x["cost_triggers"] is None:
        return "?"
    cell = ",".join(x["cost_triggers"]) or "-"
    return cell + (f" (+{x['cost_unclassified']} unclassified)" if x["cost_unclassified"] else "")


def render_compare_text(data: Mapping[str, Any]) -> str:
    lines: list[str] = []
    if data.get("ranked"):
        lines.append(f"rank: {data['rank_rule']}")
        lines.append("")
    header = ("tier", "identity", "scopes", "blast", "w/d/?", "unconfirmed", "HITL", "admin", "costs", "3P", "unknown")
    for e in data["cards"]:
        title = for_terminal(str(e["card"]["name"] or e["card"]["source"]))
        prefix = f"#{e['rank']} " if "rank" in e else ""
        lines.append(
            f"{prefix}{title} ({for_terminal(str(e['card']['source']))})"
            + ("" if e["complete"] else "  [derivation incomplete]")
        )
        rows = [header]
        for t in facts.TIERS:
            tier = e["tiers"][t]
            for ident in facts.IDENTITIES:
                x = tier[ident]
                rows.append(
                    (
                        t,
                        ident,
                        str(len(x["scopes"]) + len(x["credentials"])),
                        _n(x["blast_radius"]) + (" (u)" if x["blast_radius_measure"] == "universe" else ""),
                        f"{len(x['write_accesses'])}/{len(x['destructive_accesses'])}/{len(x['unknown_effect_accesses'])}",
                        str(len(x["unconfirmed_writes"])),
                        "-" if x["hitl_coverage"] is None else f"{round(100 * x['hitl_coverage'])}%",
                        _n(len(x["admin_consent"]) if x["admin_consent"] is not None else None),
                        _costs_cell(x),
                        str(len(tier["third_party_egress"])),
                        str(len(x["incomplete_accesses"])),
                    )
                )
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        lines.extend("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)
        lines.append("")
    lines.append(
        "blast: operations the tier's scopes authorize ((u): across the authorization server's universe); "
        "scopes: scopes and credentials; w/d/?: write, destructive and unknown-effect accesses; admin ?: not known; "
        "costs: what requesting the tier's scopes triggers (?: not known)"
    )
    return "\n".join(lines) + "\n"
