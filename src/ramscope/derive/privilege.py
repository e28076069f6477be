"""Least privilege, precisely: grant sets, per-access choice, per-tier optimisation.

Vocabulary (``DESIGN.md``, "Least privilege, precisely"):

* An **atom** is one thing a user or operator grants: an OAuth scope *within the
  namespace of its authorization server*, or a whole credential (an API key, HTTP
  auth, a client certificate, a token with no particular scope). Scopes are
  namespaced by the *canonical* authorization server (``providers.authserver``: Google's
  three endpoint URLs are one server) because a scope granted to a token is granted
  wherever that token is accepted.
* An **alternative** is an AND-set of atoms; an operation's requirements are an
  OR-list of alternatives.
* The **grant space** of a card (:class:`GrantSpace`) is every operation the card's
  specs describe, joined with the **permission universe** of each authorization server
  involved (``providers``: every Google API for Google's scopes, a provider catalog's
  endpoints for its permissions). An operation known both to a spec and to a universe is
  one operation, granted if either says so (the card's spec may be newer).
* The **grant set** G(S) of atoms S is the set of operations of the grant space that need
  authorization and that S satisfies (some alternative ⊆ S). Public operations, and those
  whose security is undeclared, are never counted. |G(S)| is the **blast radius**.

Per access, the least-privilege alternative is the one whose grant set is minimal under ⊆.
When several are minimal (equal or incomparable grant sets), every other one is a rival and
the choice is ``ambiguous-scope-choice``; the tie-break is smallest |G|, then an alternative
whose scopes belong to the access's own API over scopes at home in another API, then fewest
atoms, then names. A tie-break never prefers a grant set that is a superset of another
candidate's: such a candidate is not minimal.

Per tier and identity, one atom set must satisfy every access of the tier and of the tiers
below; tiers are solved in order, each starting from the one below, so they are monotone by
construction (incremental consent asks only for the difference). Within a tier the blast
radius of the whole set in the grant space is minimised exactly by enumeration (iterative,
within :data:`EXACT_BUDGET` alternative checks) when the search space is at most
:data:`EXACT_LIMIT` combinations, and otherwise by a greedy pass plus
1-swap local search whose result is never worse than granting each access its own
least-privilege alternative (that union is always a candidate). The fallback is bounded:
it evaluates grant sets incrementally and spends at most :data:`GREEDY_BUDGET` alternative
checks, after which the remaining accesses keep their own choice; the local search runs only
for tiers of at most :data:`LOCAL_SEARCH_DECISIONS` decisions. Per-access choices and tier
choices use the same grant space, so they agree on what a scope opens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from ..diagnostics import Severity, rule
from ..manifest import IdentityType
from ..providers.authserver import scheme_server
from ..providers.universe import Universe
from ..specs.model import (
    FlowKind,
    OperationEntry,
    Requirement,
    Requirements,
    SchemeType,
    SecurityScheme,
    SpecIndex,
    bitmask,
)

__all__ = [
    "EXACT_LIMIT",
    "TOKEN_SCOPES",
    "Alternative",
    "Atom",
    "Fit",
    "GrantSpace",
    "SpecGrants",
    "TierSolution",
    "UniverseJoin",
    "choose_least_privilege",
    "compatible",
    "fits",
    "solve_tier",
]

#: Largest number of combinations searched exhaustively within one tier.
EXACT_LIMIT = 20_000
#: Alternative checks the greedy fallback may spend before the remaining decisions take each
#: access's own choice (a polynomial bound on a tier of thousands of accesses).
GREEDY_BUDGET = 2_000_000
#: Alternative checks the exact search may spend before the greedy fallback takes over (a tier
#: within :data:`EXACT_LIMIT` combinations whose grant sets are costly to evaluate).
EXACT_BUDGET = GREEDY_BUDGET
#: The 1-swap local search runs only for tiers of at most this many decisions.
LOCAL_SEARCH_DECISIONS = 200

AMBIGUOUS = rule(
    "ambiguous-scope-choice",
    Severity.WARNING,
    "The narrowest alternatives grant equal or incomparable sets of operations; one was picked by the tie-break.",
    stage="derive",
)

#: Scopes that are no permission over data, for every provider: they change the token, not what it opens.
#: Never atoms of a grant (so never in a scope set or a blast radius); a choice lists them apart, with why.
#: ``profile`` and ``email`` read the user's identity data, so they stay permissions.
TOKEN_SCOPES: Mapping[str, str] = {
    "offline_access": "token lifetime: it asks for a refresh token (OpenID Connect Core 1.0, 11) and opens no data; "
    "MCP 2026-07-28: servers do not advertise it, clients may add it",
    "openid": "sign-in: it asks for an ID token (OpenID Connect Core 1.0, 3.1.2.1) and opens no data",
}

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
    # Atoms are hashed and compared millions of times by the tier search: the key and its hash
    # are computed once (the generated methods rebuild a tuple on every call).
    _key: tuple[str, str, str] = field(init=False, repr=False, compare=False)
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # ``_value_``, not ``.value``: the enum property costs more than the rest of the atom (a
        # universe's atoms, thousands, are built on a warm run).
        key = (self.namespace, self.scope, str(self.type._value_))
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_hash", hash(key))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Atom):
            return NotImplemented
        return self._hash == other._hash and self._key == other._key

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

    @cached_property
    def scopes(self) -> list[str]:
        # Asked for hundreds of times per alternative on a large card; callers read it, never change it.
        return sorted({a.scope for a in self.atoms if a.is_scope})


# --------------------------------------------------------------------------- identity


def compatible(scheme: SecurityScheme | None, identity: IdentityType) -> bool | None:
    """Can ``identity`` use ``scheme`` on its own? None when the scheme's kind is unknown.

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


#: Credentials of the agent's own client: beside a user's delegated token they identify the
#: client application (an app key, a client certificate, HTTP client authentication).
CLIENT_CREDENTIALS = frozenset({SchemeType.API_KEY, SchemeType.MUTUAL_TLS, SchemeType.HTTP})


@dataclass(frozen=True, slots=True)
class Fit:
    """Whether an identity can use an alternative, and if not, why."""

    ok: bool
    why: str = ""


def fits(terms: Requirement, schemes: Mapping[str, SecurityScheme], identity: IdentityType) -> Fit:
    """Can ``identity`` satisfy every term of one alternative?

    AGENT: every term is one the agent can hold itself. END_USER: at least one term is
    delegated by the user and every other term is delegated too or a credential of the agent's
    own client ("app key + user token"). A scheme that is undefined, of unknown kind, or an
    OAuth scheme whose flows nobody named fits no identity: fitness cannot be shown.
    """
    if identity not in (IdentityType.END_USER, IdentityType.AGENT):
        return Fit(False, "the access does not say whose identity it uses")
    user_terms = 0
    for t in terms:
        scheme = schemes.get(t.scheme)
        if scheme is None:
            return Fit(False, f"scheme {t.scheme!r} is not defined")
        if scheme.type is SchemeType.UNKNOWN or (scheme.type is SchemeType.OAUTH2 and not scheme.flow_kinds):
            return Fit(False, f"scheme {t.scheme!r} is of unknown kind (no flows named)")
        if identity is IdentityType.AGENT:
            if not compatible(scheme, identity):
                return Fit(False, f"scheme {t.scheme!r} needs a user's delegation")
            continue
        if compatible(scheme, identity):
            user_terms += 1
        elif scheme.type not in CLIENT_CREDENTIALS:
            return Fit(False, f"scheme {t.scheme!r} cannot be delegated by a user")
    if identity is IdentityType.END_USER and not user_terms:
        return Fit(False, "no term is delegated by the user")
    return Fit(True)


# --------------------------------------------------------------------------- grant sets


def _namespace(index: SpecIndex, scheme_name: str, scheme: SecurityScheme | None) -> str:
    # Keys, passwords, certificates and issuer-less tokens belong to this spec alone.
    return scheme_server(scheme) or f"{index.url}#{scheme_name}"


class SpecGrants:
    """Grant-set machinery for one spec: alternatives as atom sets, operations as bits."""

    def __init__(self, index: SpecIndex) -> None:
        self.index = index
        self.n_ops = len(index.operations)
        self._scheme_atoms: dict[str, tuple[str, SchemeType]] = {}
        self._interned: dict[tuple[str, str], Atom] = {}
        self._universe_positions: dict[tuple[str, str], dict[int, int]] = {}
        self._splits: dict[tuple[str, str], list[tuple[int, int]]] = {}
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

    def universe_positions(self, u: Universe) -> dict[int, int]:
        """The spec's operations that universe ``u`` also knows: spec position -> universe position.

        Only for a spec whose scopes live in ``u``'s server (a Discovery document in Google's), and
        kept: a batch builds many grant spaces over the same specs, and matching reads every
        operation's id (on a cached index, every record).
        """
        key = (u.server, u.version)
        hit = self._universe_positions.get(key)
        if hit is None:
            hit = {}
            if any(a.namespace == u.server for atoms in self._alt_sets for a in atoms):
                where = u.positions
                for i, op in enumerate(self.index.operations):
                    p = where.get(op.operation_id) if op.operation_id else None
                    if p is not None:
                        hit[i] = p
            self._universe_positions[key] = hit
        return hit

    def split_by(self, u: Universe) -> list[tuple[int, int]]:
        """Per alternative: (its operations ``u`` does not know, as spec bits; those it knows, as bits
        of ``u``), so a grant space counts each of those once, as the universe's. Empty when ``u``
        knows none of this spec's operations. Kept, like :meth:`universe_positions`."""
        key = (u.server, u.version)
        hit = self._splits.get(key)
        if hit is None:
            where = self.universe_positions(u)
            hit = []
            if where:
                known = bitmask(where, self.n_ops)
                n = len(u.ops)
                for mask in self._masks:
                    moved = mask & known
                    hit.append((mask & ~known, bitmask(_bits(moved, where), n)))
            self._splits[key] = hit
        return hit

    def alternative_masks(self) -> list[tuple[frozenset[Atom], int]]:
        """(atoms, bitmask of the spec's operations they authorize) per distinct alternative."""
        return list(zip(self._alt_sets, self._masks, strict=True))

    @property
    def protected_count(self) -> int:
        """Operations that need authorization and say which."""
        return self.n_ops - (self.public_mask | self.unknown_mask).bit_count()

    def atom_for(self, scheme_name: str, scope: str = "") -> Atom:
        # One object per atom: set operations on atoms then match by identity, not by __eq__.
        hit = self._interned.get((scheme_name, scope))
        if hit is not None:
            return hit
        atom = self._interned[(scheme_name, scope)] = self._new_atom(scheme_name, scope)
        return atom

    def _new_atom(self, scheme_name: str, scope: str) -> Atom:
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
            kept = [s for s in term.scopes if s not in TOKEN_SCOPES]
            if kept:
                out.update(self.atom_for(term.scheme, s) for s in kept)
            else:
                # No scope, or only token-lifetime / sign-in ones: a token of the scheme, of no particular
                # scope (never "nothing": the operation still wants a token).
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


# --------------------------------------------------------------------------- grant space


class UniverseJoin:
    """The universes' side of grant spaces: their operations as the low bits, their alternatives
    indexed by atom, and each alternative's mask once built.

    It depends only on the universes (and their order), so one is shared by every grant space over
    the same universes: a batch builds a space per card, and a universe has hundreds of alternatives
    over tens of thousands of operations (indexing them was ~2 ms of every card).
    """

    def __init__(self, universes: Sequence[Universe] = ()) -> None:
        self.universes = tuple(universes)
        lazy: dict[frozenset[Atom], list[tuple[Universe, int, int]]] = {}
        offset = 0
        #: (universe, its first bit)
        self.bases: list[tuple[Universe, int]] = []
        for u in self.universes:
            for k, (atoms, _) in enumerate(_universe_atoms(u)):
                lazy.setdefault(atoms, []).append((u, k, offset))
            self.bases.append((u, offset))
            offset += len(u.ops)
        #: Bits taken by the universes; a space's specs start here.
        self.size = offset
        self.low = (1 << offset) - 1
        #: GrantSpace.outside's answers: (universe bits of the mask, spec, limit) -> operation ids.
        self.outside: dict[tuple[int, SpecGrants, int], tuple[str, ...]] = {}
        self.alt_sets = list(lazy)
        self.index = {atoms: k for k, atoms in enumerate(self.alt_sets)}
        self._parts = list(lazy.values())
        self._masks: list[int | None] = [None] * len(self.alt_sets)
        self.single, self.multi = _by_atom(self.alt_sets)
        self.by_server = {u.server: u for u in self.universes}

    def mask(self, k: int) -> int:
        """The operations alternative ``k`` opens, as bits of the join (built when first needed)."""
        m = self._masks[k]
        if m is None:
            m = 0
            for u, i, base in self._parts[k]:
                m |= _universe_mask(u, i) << base
            self._masks[k] = m
        return m


def _by_atom(alt_sets: Sequence[frozenset[Atom]]) -> tuple[dict[Atom, list[int]], dict[Atom, list[int]]]:
    """atom -> alternatives that are that atom alone (satisfied by its presence), and the others."""
    single: dict[Atom, list[int]] = {}
    multi: dict[Atom, list[int]] = {}
    for j, atoms in enumerate(alt_sets):
        target = single if len(atoms) == 1 else multi
        for atom in atoms:
            target.setdefault(atom, []).append(j)
    return single, multi


class GrantSpace:
    """A card's grant space: its specs' operations joined with the universes of the servers involved.

    Operations are bits of one integer: each universe's operations first, then each spec's. A
    spec operation that a universe also knows (same server, same operation id) takes the
    universe's bit, so it is counted once; its alternatives from the spec are added to that bit.
    The universes' part is a :class:`UniverseJoin`: ``join``, when the caller keeps one for them
    (then ``universes`` is not given), else one made of ``universes``.
    """

    def __init__(
        self, specs: Sequence[SpecGrants], universes: Sequence[Universe] = (), *, join: UniverseJoin | None = None
    ) -> None:
        if join is None:
            join = UniverseJoin(universes)
        elif universes:
            raise ValueError("give the universes or their join, not both")
        self._join = join
        self.specs = tuple(specs)
        self.universes = join.universes
        self._bases = join.bases
        # The specs' alternatives: an atom set the universes also have adds its spec mask to theirs
        # (``_extra``, by the join's number), the others are the space's own (``_alt_sets``).
        own: dict[frozenset[Atom], int] = {}
        extra: dict[int, int] = {}
        offset = join.size
        for g in self.specs:
            splits = [(g.split_by(u), base) for u, base in self._bases]
            for j, (atoms, local) in enumerate(g.alternative_masks()):
                rest, moved = local, 0
                for split, base in splits:
                    if split:
                        own_bits, known = split[j]
                        rest &= own_bits
                        moved |= known << base
                m = (rest << offset) | moved
                k = join.index.get(atoms)
                if k is None:
                    own[atoms] = own.get(atoms, 0) | m
                else:
                    extra[k] = extra.get(k, 0) | m
            offset += g.n_ops
        self._alt_sets = list(own)
        self._own_masks = list(own.values())
        self._extra = extra
        self._single, self._multi = _by_atom(self._alt_sets)
        self._cache: dict[frozenset[Atom], int] = {}
        self._universe_by_server = join.by_server

    def _umask(self, k: int) -> int:
        m = self._join.mask(k)
        return m | self._extra[k] if k in self._extra else m

    def granted(self, atoms: frozenset[Atom]) -> int:
        """Bitmask of the grant space's protected operations that ``atoms`` authorize."""
        hit = self._cache.get(atoms)
        if hit is not None:
            return hit
        mask = 0
        join = self._join
        for atom in atoms:
            for j in self._single.get(atom, ()):
                mask |= self._own_masks[j]
            for j in self._multi.get(atom, ()):
                if self._alt_sets[j] <= atoms:
                    mask |= self._own_masks[j]
            for k in join.single.get(atom, ()):
                mask |= self._umask(k)
            for k in join.multi.get(atom, ()):
                if join.alt_sets[k] <= atoms:
                    mask |= self._umask(k)
        if len(self._cache) < 100_000:
            self._cache[atoms] = mask
        return mask

    def extend(self, atoms: frozenset[Atom], mask: int, delta: frozenset[Atom]) -> tuple[int, int]:
        """``granted(atoms | delta)`` given ``granted(atoms) == mask``, and the alternatives checked.

        Only alternatives that mention an atom of ``delta`` can become satisfied. (Each distinct
        atom set is one alternative, whether the specs, the universes or both have it.)
        """
        if not delta:
            return mask, 0
        full = atoms | delta
        checks = 0
        join = self._join
        for atom in delta:
            for j in self._single.get(atom, ()):
                checks += 1
                mask |= self._own_masks[j]
            for j in self._multi.get(atom, ()):
                checks += 1
                if self._alt_sets[j] <= full:
                    mask |= self._own_masks[j]
            for k in join.single.get(atom, ()):
                checks += 1
                mask |= self._umask(k)
            for k in join.multi.get(atom, ()):
                checks += 1
                if join.alt_sets[k] <= full:
                    mask |= self._umask(k)
        return mask, checks

    def outside(self, mask: int, grants: SpecGrants, limit: int = 10) -> list[str]:
        """Up to ``limit`` operations in ``mask`` that are not in ``grants``' own spec (universe ids first)."""
        # Only the universes' bits matter, laid out by the join: kept there, for every card of a
        # batch choosing the same alternative (each look-up into a cached index decodes records).
        memo = self._join.outside
        key = (mask & self._join.low, grants, limit)
        hit = memo.get(key)
        if hit is not None:
            return list(hit)
        out: list[str] = []
        for u, base in self._bases:
            part = (mask >> base) & ((1 << len(u.ops)) - 1)
            if not part:
                continue
            bits = bin(part)[:1:-1]
            i = bits.find("1")
            while i != -1 and len(out) < limit:
                op = u.ops[i]
                if not _in_spec(grants, op):
                    out.append(op)
                i = bits.find("1", i + 1)
        if len(memo) >= 4096:
            memo.clear()
        memo[key] = tuple(out)
        return out

    def is_home(self, alt: Alternative, api: str | None) -> bool:
        """Do all of ``alt``'s scopes belong to the access's own API (see the module docstring)?"""
        for atom in alt.atoms:
            u = self._universe_by_server.get(atom.namespace) if atom.is_scope else None
            if u is None:
                continue
            home = u.home_api.get((atom.namespace, atom.scope))
            if home is not None and home != api:
                return False
        return True


#: id(universe) -> (the universe, its alternatives as atom sets): universes live for the process.
_UNIVERSE_ATOMS: dict[int, tuple[Universe, list[tuple[frozenset[Atom], tuple[int, ...]]]]] = {}
#: id(universe) -> (the universe, alternative -> its mask), filled as grant spaces need them.
_UNIVERSE_MASKS: dict[int, tuple[Universe, dict[int, int]]] = {}


def _universe_mask(u: Universe, k: int) -> int:
    """The operations alternative ``k`` of ``u`` opens, as bits of ``u`` (built once, when first needed)."""
    masks = _UNIVERSE_MASKS.get(id(u))
    if masks is None or masks[0] is not u:
        masks = _UNIVERSE_MASKS[id(u)] = (u, {})
    m = masks[1].get(k)
    if m is None:
        m = masks[1][k] = bitmask(u.alternatives[k][1], len(u.ops))
    return m


def _bits(mask: int, where: Mapping[int, int]) -> list[int]:
    """The positions ``where`` maps the set bits of ``mask`` to."""
    bits = bin(mask)[:1:-1]
    out: list[int] = []
    i = bits.find("1")
    while i != -1:
        out.append(where[i])
        i = bits.find("1", i + 1)
    return out


def _universe_atoms(u: Universe) -> list[tuple[frozenset[Atom], tuple[int, ...]]]:
    hit = _UNIVERSE_ATOMS.get(id(u))
    if hit is None or hit[0] is not u:
        if len(_UNIVERSE_ATOMS) >= 32:  # refreshed universes are decoded per engine: keep a few
            _UNIVERSE_ATOMS.clear()
            _UNIVERSE_MASKS.clear()
        alts = [(frozenset(Atom(ns, sc) for ns, sc in pairs), pos) for pairs, pos in u.alternatives]
        hit = _UNIVERSE_ATOMS[id(u)] = (u, alts)
    return hit[1]


def _in_spec(grants: SpecGrants, operation_id: str) -> bool:
    return operation_id in grants.index.by_operation_id


def as_space(specs: GrantSpace | Sequence[SpecGrants] | SpecGrants) -> GrantSpace:
    if isinstance(specs, GrantSpace):
        return specs
    if isinstance(specs, SpecGrants):
        return GrantSpace([specs])
    return GrantSpace(specs)


# --------------------------------------------------------------------------- per access


@dataclass(frozen=True, slots=True)
class Choice:
    """The least-privilege alternative for one access, and what it grants in the grant space."""

    alternative: Alternative
    granted: int
    #: Every other minimal alternative: equal or incomparable grant sets (ambiguity), if any.
    rivals: tuple[tuple[Alternative, int], ...] = ()


def choose_least_privilege(
    space: GrantSpace | SpecGrants,
    candidates: Sequence[Alternative],
    *,
    api: str | None = None,
) -> Choice | None:
    """Pick the alternative with the ⊆-minimal grant set (see module docstring).

    ``api`` names the access's own API (its universe API, e.g. ``sheets``), for the tie-break
    that prefers scopes at home there.
    """
    if not candidates:
        return None
    sp = as_space(space)
    scored = [(alt, sp.granted(alt.atoms)) for alt in candidates]
    minimal = [
        (alt, m)
        for alt, m in scored
        if not any(other != m and other & m == other for _, other in scored)  # nobody strictly below
    ]
    minimal.sort(key=lambda am: (am[1].bit_count(), not sp.is_home(am[0], api), am[0].sort_key))
    best_alt, best_mask = minimal[0]
    rivals = tuple((alt, m) for alt, m in minimal[1:] if alt.atoms != best_alt.atoms)
    return Choice(best_alt, best_mask, rivals)


# --------------------------------------------------------------------------- per tier


@dataclass(frozen=True, slots=True)
class TierProblem:
    """One access to satisfy within a tier: its key and its (filtered) alternatives."""

    key: str
    grants: SpecGrants
    candidates: tuple[Alternative, ...]
    #: The access's own least-privilege choice, when the caller has it (saves computing it again).
    own: Alternative | None = None


@dataclass(frozen=True, slots=True)
class TierSolution:
    atoms: frozenset[Atom]
    #: access key -> the alternative that satisfies it (possibly one already granted below).
    chosen: Mapping[str, Alternative]
    #: Combined blast radius: protected operations granted, summed over the card's specs.
    blast_radius: int
    method: Literal["exact", "greedy", "trivial"]
    combinations: int


def combined_blast_radius(atoms: frozenset[Atom], specs: GrantSpace | Sequence[SpecGrants]) -> int:
    """|G(atoms)| in the grant space (each operation counted once)."""
    return as_space(specs).granted(atoms).bit_count()


def solve_tier(
    problems: Sequence[TierProblem],
    base: frozenset[Atom],
    specs: GrantSpace | Sequence[SpecGrants],
    *,
    exact_limit: int = EXACT_LIMIT,
    exact_budget: int = EXACT_BUDGET,
) -> TierSolution:
    """The cheapest atom set ⊇ ``base`` satisfying every problem (see module docstring).

    Problems without candidates are skipped here; the caller reports them.
    """
    space = as_space(specs)
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
        return TierSolution(base, chosen, combined_blast_radius(base, space), "trivial", 1)

    # Accesses with the same candidates are one decision.
    groups: dict[frozenset[frozenset[Atom]], list[TierProblem]] = {}
    for p in pending:
        groups.setdefault(frozenset(a.atoms for a in p.candidates), []).append(p)
    options: list[list[Alternative]] = []
    members: list[list[TierProblem]] = []
    for group in groups.values():
        options.append(_undominated(group[0].candidates, base))
        members.append(group)

    def cost(atoms: frozenset[Atom]) -> tuple[int, int, tuple[tuple[str, str], ...]]:
        return (
            space.granted(atoms).bit_count(),
            len(atoms),
            tuple(sorted((a.namespace, a.scope) for a in atoms)),
        )

    total = 1
    for opts in options:
        total *= len(opts)
        if total > exact_limit:
            break
    method: Literal["exact", "greedy"] = "exact"
    # None above the limit, or when few combinations are each costly to evaluate: the bounded
    # fallback below then answers.
    exact = _exact(options, base, space, budget=exact_budget) if total <= exact_limit else None
    picks: list[Alternative]
    if exact is not None:
        picks = exact
    else:
        method = "greedy"
        # The union of individually least-privileged choices is always a candidate, so the
        # greedy answer is never worse than it.
        solo = [
            own if (own := members[i][0].own) is not None and own in opts else _solo_best(opts, space)
            for i, opts in enumerate(options)
        ]
        picks = _greedy(options, base, space, solo, budget=GREEDY_BUDGET)
        if cost(base.union(*(a.atoms for a in solo))) < cost(base.union(*(a.atoms for a in picks))):
            picks = solo
    atoms = base.union(*(a.atoms for a in picks))
    for alt, group_members in zip(picks, members, strict=True):
        for p in group_members:
            chosen[p.key] = alt
    return TierSolution(atoms, chosen, combined_blast_radius(atoms, space), method, total)


def _exact(
    options: Sequence[Sequence[Alternative]],
    base: frozenset[Atom],
    space: GrantSpace,
    *,
    budget: int = EXACT_BUDGET,
) -> list[Alternative] | None:
    """Every combination, depth first: each step adds one decision's atoms to the grant set of the
    ones before (incrementally), and a branch already opening more than the best is cut (adding
    atoms never closes an operation). Ties: fewer atoms, then names, as ``cost`` orders them.

    Iterative (a tier of a thousand single-option decisions is a thousand levels deep, past
    Python's recursion limit) and bounded: ``None`` once ``budget`` alternative checks are spent,
    and the caller takes the greedy fallback."""
    best_key: tuple[int, int] | None = None
    best_atoms: frozenset[Atom] = frozenset()
    best_picks: list[Alternative] | None = None
    n = len(options)
    picks: list[Alternative] = []  # picks[j]: the option tried at decision j on the current path
    spent = 0

    def names(atoms: frozenset[Atom]) -> tuple[tuple[str, str], ...]:
        return tuple(sorted((a.namespace, a.scope) for a in atoms))

    def enter(i: int, atoms: frozenset[Atom], mask: int) -> bool:
        """Visit the node at decision ``i``; whether its options are to be tried."""
        nonlocal best_key, best_atoms, best_picks
        radius = mask.bit_count()
        if best_key is not None and radius > best_key[0]:
            return False
        if i == n:
            key = (radius, len(atoms))
            if best_key is None or key < best_key or (key == best_key and names(atoms) < names(best_atoms)):
                best_key, best_atoms, best_picks = key, atoms, picks[:n]
            return False
        return True

    # Frames: [decision index, atoms so far, their grant mask, next option to try].
    frames: list[list[Any]] = []
    mask0 = space.granted(base)
    if enter(0, base, mask0):
        frames.append([0, base, mask0, 0])
    while frames:
        frame = frames[-1]
        i, atoms, mask, k = frame
        if k == len(options[i]):
            frames.pop()
            continue
        frame[3] = k + 1
        alt = options[i][k]
        del picks[i:]
        picks.append(alt)
        delta = alt.atoms - atoms
        new, checks = space.extend(atoms, mask, delta)
        spent += checks + 1
        if spent > budget:
            return None
        child = atoms | delta
        if enter(i + 1, child, new):
            frames.append([i + 1, child, new, 0])
    assert best_picks is not None
    return best_picks


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


def _solo_best(options: Sequence[Alternative], space: GrantSpace) -> Alternative:
    choice = choose_least_privilege(space, options)
    assert choice is not None
    return choice.alternative


def _greedy(
    options: Sequence[Sequence[Alternative]],
    base: frozenset[Atom],
    space: GrantSpace,
    fallback: Sequence[Alternative],
    *,
    budget: int,
) -> list[Alternative]:
    """Greedy pass, then 1-swap local search, within ``budget`` alternative checks.

    Each decision (fewest options first) takes the option that adds least to the running grant
    set, evaluated incrementally: only alternatives that mention a newly added atom are checked.
    The work is bounded: once ``budget`` checks are spent, the remaining decisions take their
    ``fallback`` (the access's own choice) and the local search is skipped. Whatever the budget,
    the work is O(budget + decisions × options × atoms per option).
    """
    order = sorted(range(len(options)), key=lambda i: len(options[i]))
    picks: list[Alternative] = list(fallback)
    atoms = base
    mask = space.granted(base)
    spent = 0
    for i in order:
        if spent >= budget:
            break  # the remaining decisions keep their fallback
        best: tuple[tuple[int, int, tuple[tuple[str, str], ...]], Alternative, int] | None = None
        for alt in options[i]:
            delta = alt.atoms - atoms
            new, checks = space.extend(atoms, mask, delta)
            spent += checks + 1
            key = (new.bit_count(), len(atoms) + len(delta), alt.sort_key[1])
            if best is None or key < best[0]:
                best = (key, alt, new)
        assert best is not None
        picks[i] = best[1]
        atoms = atoms | best[1].atoms
        mask = best[2]
    if spent >= budget or len(options) > LOCAL_SEARCH_DECISIONS:
        return picks
    # 1-swap local search: change one decision at a time while that lowers the cost, evaluated
    # incrementally from the grant set of the other decisions.
    improved = True
    rounds = 0
    while improved and rounds < 50 and spent < budget:
        improved = False
        rounds += 1
        for i in range(len(picks)):
            others = base.union(*(a.atoms for j, a in enumerate(picks) if j != i))
            others_mask = space.granted(others)
            spent += len(others)
            scored: list[tuple[tuple[int, int, tuple[tuple[str, str], ...]], Alternative]] = []
            for alt in options[i]:
                delta = alt.atoms - others
                new, checks = space.extend(others, others_mask, delta)
                spent += checks + 1
                scored.append(((new.bit_count(), len(others) + len(delta), alt.sort_key[1]), alt))
            current = next(k for k, alt in scored if alt is picks[i])
            best_key, best_alt = min(scored, key=lambda ka: ka[0])
            if best_key < current:
                picks[i], improved = best_alt, True
    return picks
