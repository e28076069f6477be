"""Stage 3 of a card: one set per cumulative necessity tier and identity, solved in the card's
grant space, with how it satisfies each access."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..diagnostics import Diagnostic
from ..manifest import (
    AccessNecessity,
    ResourceOwner,
)
from ..outputs.report import (
    IDENTITIES,
    TIERS,
    IdentityTier,
    TierRecord,
)
from ..specs.model import SpecKind
from .borrowing import scope_warnings
from .costing import scope_cost, tier_costs
from .privilege import (
    TOKEN_SCOPES,
    Alternative,
    Atom,
    GrantSpace,
    TierProblem,
    solve_tier,
)
from .records import (
    _alt_label,
    _credentials,
    _descriptions,
)
from .sources import token_scopes
from .state import Outcome, RunState


class Tiers(RunState):
    """Per-tier solutions."""

    def _tiers(self, outcomes: Sequence[Outcome]) -> dict[str, TierRecord]:
        space = self.space
        m = self.card.manifest
        bases: dict[str, frozenset[Atom]] = {name: frozenset() for name in IDENTITIES}
        prev_scopes: dict[str, set[str]] = {name: set() for name in IDENTITIES}
        out: dict[str, TierRecord] = {}
        warned: set[tuple[str, str, str]] = set()
        #: identity -> MCP server -> scopes its step-up plan already holds (the baseline, tiers below).
        plans: dict[str, dict[str, set[str]]] = {}
        for level, tier in enumerate(TIERS, start=1):
            members = [o for o in outcomes if _tier_level(o.access.necessity) <= level]
            per_identity: dict[str, IdentityTier] = {}
            for ident in IDENTITIES:
                mine = [o for o in members if o.access.identity_used.name == ident]
                problems = [
                    TierProblem(o.key, o.grants, _able(o), o.own) for o in mine if o.record.complete and o.grants
                ]
                incomplete = [o.access.id for o in members if not o.record.complete and _identity_bucket(o) == ident]
                below = bases[ident]
                sol = solve_tier(problems, below, space)
                bases[ident] = sol.atoms
                scopes = sorted({a.scope for a in sol.atoms if a.is_scope})
                permissions = _tier_permissions(
                    sol.atoms, sol.chosen, mine, self.scope_info, space=space, warned=warned, diags=self.diags,
                    identity=ident,
                )  # fmt: skip
                per_identity[ident] = IdentityTier(
                    scopes=scopes,
                    credentials=_credentials(sol.atoms),
                    grants=[{"namespace": a.namespace, "scope": a.scope} for a in sorted(sol.atoms) if a.is_scope],
                    accesses=[o.access.id for o in mine],
                    incomplete_accesses=incomplete,
                    added_scopes=sorted(set(scopes) - prev_scopes[ident]),
                    blast_radius=sol.blast_radius,
                    method=sol.method,
                    combinations=sol.combinations,
                    choices=[self._tier_choice(o, sol.chosen, mine, sol.atoms, below) for o in mine],
                    permissions=permissions,
                    costs=tier_costs(
                        permissions,
                        [(o.access.id, o.record.operation_cost) for o in mine if o.record.operation_cost],
                    ),
                    step_up=_step_up(mine, sol.chosen, plans.setdefault(ident, {})),
                    token_scopes=_token_scopes(mine, sol.chosen),
                )
                prev_scopes[ident] = set(scopes)
            acks = sorted(
                {
                    res.id
                    for o in members
                    if (op := m.operation(o.access.operation)) is not None
                    and (res := m.resource(op.resource)) is not None
                    and res.owner is ResourceOwner.THIRD_PARTY
                }
            )
            confirmations = [o.access.id for o in members if o.access.confirmation_required]
            out[tier] = TierRecord(per_identity, acks, confirmations)
        return out

    def _tier_choice(
        self,
        o: Outcome,
        chosen_by_key: Mapping[str, Alternative],
        mine: Sequence[Outcome],
        atoms: frozenset[Atom],
        below: frozenset[Atom],
    ) -> dict[str, Any]:
        """How the tier's set satisfies one access, and why that differs from the access's own choice:
        each reason said only where it holds (the tier below grants it; other accesses of the tier use
        it; else what it and the access's own choice would open in the tier)."""
        out: dict[str, Any] = {"access": o.access.id}
        chosen = chosen_by_key.get(o.key)
        if chosen is None or o.own is None:
            out.update(scopes=None, credentials=None, same_as_access=None, why="the access is incomplete")
            return out
        same = chosen.atoms == o.own.atoms
        out.update(scopes=chosen.scopes, credentials=_credentials(chosen.atoms), same_as_access=same, why=None)
        if same:
            return out
        space = self.space
        extra = space.granted(atoms | o.own.atoms).bit_count() - space.granted(atoms).bit_count()
        users = [
            other.access.id
            for other in mine
            if other.key != o.key
            and (alt := chosen_by_key.get(other.key)) is not None
            and alt.atoms & (chosen.atoms - below)
        ]
        shared = below.union(*(chosen_by_key[other.key].atoms for other in mine if other.access.id in users))
        if chosen.atoms <= below:
            why = f"the tier below already grants {_alt_label(chosen)}"
        elif chosen.atoms <= shared:
            why = f"{_alt_label(chosen)} is in the tier's set for its other accesses ({', '.join(users)})"
        else:
            # Not (only) another access's: the search found the tier's set smaller with it than with the own choice.
            instead = (atoms - (chosen.atoms - shared)) | o.own.atoms
            out["why"] = (
                f"with the tier's other grants, {_alt_label(chosen)} opens {space.granted(atoms).bit_count()} "
                f"operation(s) in all, where the access's own choice {_alt_label(o.own)} in its place would open "
                f"{space.granted(instead).bit_count()} with {len(instead)} grant(s) against {len(atoms)}"
            )
            return out
        out["why"] = (
            f"{why}; the access's own choice {_alt_label(o.own)} would open {extra} more operation(s)"
            if extra
            else f"{why}; the access's own choice {_alt_label(o.own)} opens nothing more but adds a grant"
        )
        return out


def _tier_permissions(
    atoms: frozenset[Atom],
    chosen: Mapping[str, Alternative],
    outcomes: Sequence[Outcome],
    info: Mapping[Atom, Mapping[str, Any]],
    *,
    space: GrantSpace | None = None,
    warned: set[tuple[str, str, str]] | None = None,
    diags: list[tuple[Diagnostic, str | None]] | None = None,
    identity: str = "END_USER",
) -> list[dict[str, Any]]:
    """Each atom of a tier's set with the provider's description and the accesses it serves: what a
    consent screen shows, which is not each access's own choice when one scope covers several.

    A scope of a known universe or catalog shows the provider's description, whatever the spec says;
    a spec describing it otherwise, or not the provider's, earns a warning (``derive.borrowing``),
    reported once per scope and spec (``warned``) into ``diags`` and kept on the permission."""
    served: dict[Atom, list[str]] = {a: [] for a in atoms}
    described: dict[Atom, str] = {}
    warnings: dict[Atom, list[str]] = {}
    for o in outcomes:
        alt = chosen.get(o.key)
        if alt is None or o.grants is None:
            continue
        descriptions = _descriptions(o.grants.index, alt)
        for atom in alt.atoms:
            if atom in served and o.access.id not in served[atom]:
                served[atom].append(o.access.id)
            if not atom.is_scope or atom not in served:
                continue
            shown: str | None = descriptions.get(atom.scope)
            if space is not None:
                shown, found = scope_warnings(space, atom, o.grants.index, shown, o.access.loc.pointer)
                for d in found:
                    mine = warnings.setdefault(atom, [])
                    if d.message not in mine:
                        mine.append(d.message)
                    key = (d.code, atom.scope, o.grants.index.url)
                    if diags is not None and warned is not None and key not in warned:
                        warned.add(key)
                        diags.append((d, None))
            if shown:
                described.setdefault(atom, shown)
    return [
        {
            "scope": a.scope or None,
            "namespace": a.namespace,
            "scheme": a.scheme,
            "type": a.type.value,
            "description": described.get(a),
            "accesses": served[a],
            "name": info.get(a, {}).get("name") if a.is_scope else None,
            "admin_consent": bool(info.get(a, {}).get("admin_consent")) if a.is_scope else False,
            "cost": scope_cost(a, identity) if a.is_scope else None,
        }
        # Only where there is one: most permissions have none.
        | ({"warning": " ".join(warnings[a])} if a in warnings else {})
        for a in sorted(atoms)
    ]


def _mcp_baseline(o: Outcome) -> tuple[str, list[str]] | None:
    """The MCP server an access goes to and its baseline (``scopes_supported``), when it has one."""
    if o.grants is None:
        return None
    index = o.grants.index
    baseline = index.extra.get("baseline_scopes") if index.kind is SpecKind.MCP else None
    if not isinstance(baseline, list):
        return None
    return index.url, sorted(s for s in baseline if isinstance(s, str) and s not in TOKEN_SCOPES)


def _step_up(
    outcomes: Sequence[Outcome], chosen: Mapping[str, Alternative], held: dict[str, set[str]]
) -> list[dict[str, Any]]:
    """The step-up plan MCP 2026-07-28 clients follow, per server with a baseline: they are granted the
    baseline first; each operation that needs more is challenged (403 insufficient_scope) and the client
    adds the challenged scopes. So: the baseline, then what this tier adds over it and the tiers below
    (``held``, updated), and the accesses whose need beyond the baseline is unknown (``floor_only``)."""
    servers: dict[str, dict[str, Any]] = {}
    for o in outcomes:
        found = _mcp_baseline(o)
        if found is None:
            continue
        url, baseline = found
        plan = servers.setdefault(
            url, {"spec_url": url, "baseline": baseline, "scopes": set(), "needed": set(), "floor_only": []}
        )
        alt = chosen.get(o.key)
        if alt is not None:
            plan["scopes"].update(alt.scopes)
            plan["needed"].update(alt.scopes)
        elif o.record.floor is not None:
            plan["floor_only"].append(o.access.id)
    out: list[dict[str, Any]] = []
    for url in sorted(servers):
        plan = servers[url]
        before = held.setdefault(url, set(plan["baseline"]))
        scopes = set(plan["scopes"]) | set(plan["baseline"])
        out.append(
            {
                "spec_url": url,
                "baseline": plan["baseline"],
                "adds": sorted(scopes - before),
                "scopes": sorted(scopes | before),
                "floor_only": plan["floor_only"],
                # What a client granted the baseline holds that no access of the tier needs (GitHub's server
                # advertises every scope a tool may need): known only when no access is known by its floor alone.
                "beyond_need": sorted(set(plan["baseline"]) - plan["needed"]) if not plan["floor_only"] else None,
            }
        )
        before.update(scopes)
    return out


def _token_scopes(outcomes: Sequence[Outcome], chosen: Mapping[str, Alternative]) -> list[dict[str, Any]]:
    """The tier's scopes that are no permission over data (offline_access, openid), with why, once each."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for o in outcomes:
        alt = chosen.get(o.key)
        if alt is None or o.grants is None:
            continue
        for t in token_scopes(o.grants, alt):
            entry = out.setdefault((t["namespace"], t["scope"]), {**t, "accesses": []})
            entry["accesses"].append(o.access.id)
    return [out[k] for k in sorted(out)]


def _able(o: Outcome) -> tuple[Alternative, ...]:
    """The alternatives the tier may satisfy ``o`` with: those its own choice judged able
    (``Outcome.candidates``). Should its own pick be missing from them, they are not what the choice
    judged, and the tier keeps to the pick alone: never an alternative the choice may have ruled out."""
    own = o.own
    if own is None or any(alt.atoms == own.atoms for alt in o.candidates):
        return o.candidates
    return (own,)


def _identity_bucket(o: Outcome) -> str:
    # An access whose identity is unspecified cannot be placed; it makes both identities incomplete.
    name = o.access.identity_used.name
    return name if name in IDENTITIES else "END_USER"


def _tier_level(n: AccessNecessity) -> int:
    # UNSPECIFIED necessity is a validation error; counting it as REQUIRED never under-reports.
    return int(n) if n else 1
