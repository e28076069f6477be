"""Least privilege, precisely: grant sets, per-access choice, per-tier optimisation.

Vocabulary (``DESIGN.md``, "Least privilege, precisely"):

* An **atom** is one thing a user or operator grants: an OAuth scope *within the
  namespace of its authorization server*, or a whole credential (an API key, HTTP
  auth, a client certificate, a token with no particular scope). Scopes are
  namespaced by authorization server (its token URL, else authorization URL, else
  OpenID Connect discovery URL) because a scope granted to a token is granted
  wherever that token is accepted: two Google APIs that both accept
  ``cloud-platform`` are both opened by one grant.
* An **alternative** is an AND-set of atoms; an operation's requirements are an
  OR-list of alternatives.
* The **grant set** G(S) of atoms S within a spec is the set of its operations that
  need authorization and that S satisfies (some alternative ⊆ S). Operations that
  are public (or whose security the spec does not declare) are never counted:
  they do not discriminate between choices. |G(S)| is the **blast radius**.

Per access, the least-privilege alternative is the one whose grant set is minimal
under ⊆; incomparable minima are broken by smallest |G|, then fewest atoms, then
lexicographically, and reported as ``ambiguous-scope-choice``.

Per tier and identity, one atom set must satisfy every access of the tier and of
the tiers below; tiers are solved in order, each starting from the one below, so
they are monotone by construction (incremental consent asks only for the
difference). Within a tier the combined blast radius (summed over every spec of
the card) is minimised exactly by enumeration when the search space is at most
:data:`EXACT_LIMIT` combinations, and otherwise by a greedy pass plus 1-swap local
search whose result is never worse than granting each access its own
least-privilege alternative (that union is always a candidate).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal
from urllib.parse import urlsplit

from .diagnostics import Severity, rule
from .manifest import IdentityType
from .specs.model import FlowKind, OperationEntry, Requirement, Requirements, SchemeType, SecurityScheme, SpecIndex

__all__ = [
    "EXACT_LIMIT",
    "Alternative",
    "Atom",
    "SpecGrants",
    "TierSolution",
    "choose_least_privilege",
    "compatible",
    "solve_tier",
]

#: Largest number of combinations searched exhaustively within one tier.
EXACT_LIMIT = 20_000

AMBIGUOUS = rule(
    "ambiguous-scope-choice",
    Severity.WARNING,
    "The narrowest alternatives grant incomparable sets of operations; one was picked by the tie-break.",
    stage="derive",
)

USER_FLOWS = frozenset({FlowKind.AUTHORIZATION_CODE, FlowKind.IMPLICIT, FlowKind.DEVICE_CODE})
AGENT_FLOWS = frozenset({FlowKind.CLIENT_CREDENTIALS})


@dataclass(frozen=True, slots=True, order=True)
class Atom:
    """One grantable thing: a scope in an authorization server's namespace, or a credential."""

    namespace: str
    #: The OAuth scope; "" for a credential without scopes (API key, HTTP auth, mTLS, any token).
    scope: str = ""
    #: The scheme type, for rendering (scopes vs credentials).
    type: SchemeType = SchemeType.OAUTH2
    #: The scheme's name in the spec that introduced the atom (for display only).
    scheme: str = field(default="", compare=False)

    @property
    def is_scope(self) -> bool:
        return bool(self.scope)


@dataclass(frozen=True)
class Alternative:
    """One OR-branch of an operation's requirements, as atoms, with the terms as written."""

    atoms: frozenset[Atom]
    terms: Requirement

    @cached_property
    def sort_key(self) -> tuple[int, tuple[tuple[str, str], ...]]:
        return len(self.atoms), tuple(sorted((a.namespace, a.scope) for a in self.atoms))

    @property
    def scopes(self) -> list[str]:
        return sorted({a.scope for a in self.atoms if a.is_scope})


# --------------------------------------------------------------------------- identity


def compatible(scheme: SecurityScheme | None, identity: IdentityType) -> bool | None:
    """Can ``identity`` use ``scheme``? None when the scheme's kind is unknown.

    END_USER needs delegated user authorization: OAuth 2.0 authorization-code,
    device or implicit flows, or OpenID Connect. AGENT uses its own identity:
    client credentials, API keys, HTTP authentication, mutual TLS. The OAuth
    password grant hands the user's password to the agent and fits neither.
    """
    if scheme is None or scheme.type is SchemeType.UNKNOWN:
        return None
    if scheme.type is SchemeType.OAUTH2:
        kinds = scheme.flow_kinds
        if not kinds:
            return None
        wanted = USER_FLOWS if identity is IdentityType.END_USER else AGENT_FLOWS
        return bool(kinds & wanted)
    if scheme.type is SchemeType.OPENID_CONNECT:
        return identity is IdentityType.END_USER
    # apiKey, http, mutualTLS: the agent's own credentials.
    return identity is IdentityType.AGENT


# --------------------------------------------------------------------------- grant sets


def _namespace(index: SpecIndex, scheme_name: str, scheme: SecurityScheme | None) -> str:
    if scheme is not None and scheme.type in (SchemeType.OAUTH2, SchemeType.OPENID_CONNECT):
        for flow in scheme.flows:
            for url in (flow.token_url, flow.authorization_url):
                if url:
                    return _canonical_url(url)
        if scheme.open_id_connect_url:
            return _canonical_url(scheme.open_id_connect_url)
    # Keys, passwords, certificates and issuer-less tokens belong to this spec alone.
    return f"{index.url}#{scheme_name}"


def _canonical_url(url: str) -> str:
    try:
        p = urlsplit(url.strip())
    except ValueError:
        return url
    return f"{p.scheme.lower()}://{p.netloc.lower()}{p.path}"


class SpecGrants:
    """Grant-set machinery for one spec: alternatives as atom sets, operations as bits."""

    def __init__(self, index: SpecIndex) -> None:
        self.index = index
        self.n_ops = len(index.operations)
        self._scheme_atoms: dict[str, tuple[str, SchemeType]] = {}
        alt_ids: dict[frozenset[Atom], int] = {}
        self._alt_sets: list[frozenset[Atom]] = []
        masks: list[int] = []
        self.public_mask = 0
        self.unknown_mask = 0
        # Operations with equal requirements are one group (a cached index has them precomputed),
        # so this is linear in the distinct requirement sets, not in the operations.
        for reqs, ops_mask in index.requirement_groups():
            if reqs is None:
                self.unknown_mask |= ops_mask
                continue
            alts = [self.atoms_of(term_set) for term_set in reqs]
            if not alts or any(not a for a in alts):
                self.public_mask |= ops_mask
                continue
            for a in alts:
                j = alt_ids.get(a)
                if j is None:
                    j = alt_ids[a] = len(self._alt_sets)
                    self._alt_sets.append(a)
                    masks.append(0)
                masks[j] |= ops_mask
        self._masks = masks
        self._by_atom: dict[Atom, list[int]] = {}
        for j, a in enumerate(self._alt_sets):
            for atom in a:
                self._by_atom.setdefault(atom, []).append(j)
        self._granted_cache: dict[frozenset[Atom], int] = {}

    @property
    def protected_count(self) -> int:
        """Operations that need authorization and say which."""
        return self.n_ops - (self.public_mask | self.unknown_mask).bit_count()

    def atom_for(self, scheme_name: str, scope: str = "") -> Atom:
        ns_type = self._scheme_atoms.get(scheme_name)
        if ns_type is None:
            scheme = self.index.scheme_map.get(scheme_name)
            stype = scheme.type if scheme is not None else SchemeType.UNKNOWN
            ns_type = (_namespace(self.index, scheme_name, scheme), stype)
            self._scheme_atoms[scheme_name] = ns_type
        ns, stype = ns_type
        if stype in (SchemeType.API_KEY, SchemeType.HTTP, SchemeType.MUTUAL_TLS):
            scope = ""  # an API key's "scopes" (OAS 3.1 roles) do not change what is granted
        return Atom(ns, scope, stype, scheme_name)

    def atoms_of(self, terms: Requirement) -> frozenset[Atom]:
        out: set[Atom] = set()
        for term in terms:
            if term.scopes:
                out.update(self.atom_for(term.scheme, s) for s in term.scopes)
            else:
                out.add(self.atom_for(term.scheme))
        return frozenset(out)

    def alternatives(self, entry: OperationEntry) -> list[Alternative]:
        return self.alternatives_of(entry.requirements)

    def alternatives_of(self, requirements: Requirements | None) -> list[Alternative]:
        if requirements is None:
            return []
        return [Alternative(self.atoms_of(t), t) for t in requirements]

    def granted(self, atoms: frozenset[Atom]) -> int:
        """Bitmask of the protected operations that ``atoms`` authorize."""
        hit = self._granted_cache.get(atoms)
        if hit is not None:
            return hit
        mask = 0
        seen: set[int] = set()
        for atom in atoms:
            for j in self._by_atom.get(atom, ()):
                if j in seen:
                    continue
                seen.add(j)
                if self._alt_sets[j] <= atoms:
                    mask |= self._masks[j]
        if len(self._granted_cache) < 100_000:
            self._granted_cache[atoms] = mask
        return mask

    def operations_in(self, mask: int, limit: int | None = None) -> list[OperationEntry]:
        """The operations whose bits are set in ``mask``, in spec order (the first ``limit`` of them)."""
        ops = self.index.operations
        bits = bin(mask)[:1:-1]  # least significant bit first; linear, unlike shifting a big int
        out: list[OperationEntry] = []
        i = bits.find("1")
        while i != -1 and (limit is None or len(out) < limit):
            out.append(ops[i])
            i = bits.find("1", i + 1)
        return out


# --------------------------------------------------------------------------- per access


@dataclass(frozen=True, slots=True)
class Choice:
    """The least-privilege alternative for one access, and what it grants in its spec."""

    alternative: Alternative
    granted: int
    #: The minimal alternatives that were incomparable with the choice (ambiguity), if any.
    rivals: tuple[tuple[Alternative, int], ...] = ()


def choose_least_privilege(grants: SpecGrants, candidates: Sequence[Alternative]) -> Choice | None:
    """Pick the alternative with the ⊆-minimal grant set (see module docstring)."""
    if not candidates:
        return None
    scored = [(alt, grants.granted(alt.atoms)) for alt in candidates]
    minimal = [
        (alt, m)
        for alt, m in scored
        if not any(other != m and other & m == other for _, other in scored)  # nobody strictly below
    ]
    minimal.sort(key=lambda am: (am[1].bit_count(), am[0].sort_key))
    best_alt, best_mask = minimal[0]
    rivals = tuple((alt, m) for alt, m in minimal[1:] if m != best_mask)
    return Choice(best_alt, best_mask, rivals)


# --------------------------------------------------------------------------- per tier


@dataclass(frozen=True, slots=True)
class TierProblem:
    """One access to satisfy within a tier: its key and its (filtered) alternatives."""

    key: str
    grants: SpecGrants
    candidates: tuple[Alternative, ...]


@dataclass(frozen=True, slots=True)
class TierSolution:
    atoms: frozenset[Atom]
    #: access key -> the alternative that satisfies it (possibly one already granted below).
    chosen: Mapping[str, Alternative]
    #: Combined blast radius: protected operations granted, summed over the card's specs.
    blast_radius: int
    method: Literal["exact", "greedy", "trivial"]
    combinations: int


def combined_blast_radius(atoms: frozenset[Atom], specs: Iterable[SpecGrants]) -> int:
    return sum(g.granted(atoms).bit_count() for g in specs)


def solve_tier(
    problems: Sequence[TierProblem],
    base: frozenset[Atom],
    specs: Sequence[SpecGrants],
    *,
    exact_limit: int = EXACT_LIMIT,
) -> TierSolution:
    """The cheapest atom set ⊇ ``base`` satisfying every problem (see module docstring).

    Problems without candidates are skipped here; the caller reports them.
    """
    chosen: dict[str, Alternative] = {}
    pending: list[TierProblem] = []
    for p in problems:
        if not p.candidates:
            continue
        already = [alt for alt in p.candidates if alt.atoms <= base]
        if already:
            chosen[p.key] = min(already, key=lambda a: a.sort_key)
        else:
            pending.append(p)
    if not pending:
        return TierSolution(base, chosen, combined_blast_radius(base, specs), "trivial", 1)

    # Accesses with the same candidates are one decision.
    groups: dict[tuple[frozenset[Atom], ...], list[TierProblem]] = {}
    for p in pending:
        groups.setdefault(tuple(sorted((a.atoms for a in p.candidates), key=_atoms_key)), []).append(p)
    options: list[list[Alternative]] = []
    members: list[list[TierProblem]] = []
    for group in groups.values():
        options.append(_undominated(group[0].candidates, base))
        members.append(group)

    def cost(atoms: frozenset[Atom]) -> tuple[int, int, tuple[tuple[str, str], ...]]:
        return (
            combined_blast_radius(atoms, specs),
            len(atoms),
            tuple(sorted((a.namespace, a.scope) for a in atoms)),
        )

    total = 1
    for opts in options:
        total *= len(opts)
        if total > exact_limit:
            break
    picks: list[Alternative]
    if total <= exact_limit:
        method: Literal["exact", "greedy"] = "exact"
        best: tuple[tuple[int, int, tuple[tuple[str, str], ...]], list[Alternative]] | None = None
        for combo in itertools.product(*options):
            atoms = base.union(*(a.atoms for a in combo))
            c = cost(atoms)
            if best is None or c < best[0]:
                best = (c, list(combo))
        assert best is not None
        picks = best[1]
    else:
        method = "greedy"
        picks = _greedy(options, base, cost)
        # The union of individually least-privileged choices is always a candidate, so the
        # greedy answer is never worse than it.
        solo = [_solo_best(opts, members[i][0].grants) for i, opts in enumerate(options)]
        if cost(base.union(*(a.atoms for a in solo))) < cost(base.union(*(a.atoms for a in picks))):
            picks = solo
    atoms = base.union(*(a.atoms for a in picks))
    for alt, group_members in zip(picks, members, strict=True):
        for p in group_members:
            chosen[p.key] = alt
    return TierSolution(atoms, chosen, combined_blast_radius(atoms, specs), method, total)


def _atoms_key(atoms: frozenset[Atom]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((a.namespace, a.scope) for a in atoms))


def _undominated(candidates: Sequence[Alternative], base: frozenset[Atom]) -> list[Alternative]:
    """Drop alternatives that add a superset of what another adds: they can never be cheaper."""
    extra = [(alt, alt.atoms - base) for alt in candidates]
    keep: list[Alternative] = []
    seen: set[frozenset[Atom]] = set()
    for alt, add in sorted(extra, key=lambda ae: (len(ae[1]), ae[0].sort_key)):
        if add in seen or any(k.atoms - base < add for k in keep):
            continue
        seen.add(add)
        keep.append(alt)
    return keep


def _solo_best(options: Sequence[Alternative], grants: SpecGrants) -> Alternative:
    choice = choose_least_privilege(grants, options)
    assert choice is not None
    return choice.alternative


def _greedy(
    options: Sequence[Sequence[Alternative]],
    base: frozenset[Atom],
    cost: Callable[[frozenset[Atom]], tuple[int, int, tuple[tuple[str, str], ...]]],
) -> list[Alternative]:
    order = sorted(range(len(options)), key=lambda i: len(options[i]))
    picks: list[Alternative | None] = [None] * len(options)
    atoms = base
    for i in order:
        best = min(options[i], key=lambda a: cost(atoms | a.atoms))
        picks[i] = best
        atoms = atoms | best.atoms
    chosen = [p for p in picks if p is not None]
    # 1-swap local search: change one decision at a time while that lowers the cost.
    improved = True
    rounds = 0
    while improved and rounds < 50:
        improved = False
        rounds += 1
        for i in range(len(chosen)):
            others = base.union(*(a.atoms for j, a in enumerate(chosen) if j != i))
            current = cost(others | chosen[i].atoms)
            for alt in options[i]:
                if alt is chosen[i]:
                    continue
                c = cost(others | alt.atoms)
                if c < current:
                    chosen[i], current, improved = alt, c, True
    return chosen
