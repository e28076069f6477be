"""Least privilege: identity filtering, grant sets, per-access choice and the per-tier optimiser."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ramscope.derive.privilege import (
    Alternative,
    Atom,
    SpecGrants,
    TierProblem,
    choose_least_privilege,
    combined_blast_radius,
    compatible,
    fits,
    solve_tier,
)
from ramscope.manifest import IdentityType
from ramscope.specs.model import (
    FlowKind,
    OAuthFlow,
    OperationEntry,
    SchemeRequirement,
    SchemeType,
    SecurityScheme,
    SpecIndex,
    SpecKind,
)

TOKEN = "https://auth.example.com/token"


def oauth(name: str = "oauth", *kinds: FlowKind, token: str = TOKEN) -> SecurityScheme:
    flows = tuple(OAuthFlow(k, token_url=token) for k in (kinds or (FlowKind.AUTHORIZATION_CODE,)))
    return SecurityScheme(name, SchemeType.OAUTH2, flows=flows)


def op(key: str, *alternatives: list[str] | None, scheme: str = "oauth") -> OperationEntry:
    """An operation whose alternatives are scope lists; [] is the anonymous alternative."""
    if alternatives == (None,):
        return OperationEntry(key=key, operation_id=key, requirements=None)
    reqs = tuple((SchemeRequirement.of(scheme, alt),) if alt else () for alt in alternatives if alt is not None)
    return OperationEntry(key=key, operation_id=key, requirements=reqs)


def index(
    *ops: OperationEntry, schemes: tuple[SecurityScheme, ...] = (oauth(),), url: str = "https://x/spec"
) -> SpecIndex:
    return SpecIndex(kind=SpecKind.OPENAPI, url=url, sha256="0" * 64, operations=ops, schemes=schemes)


# --------------------------------------------------------------------------- identity


@pytest.mark.parametrize(
    ("scheme", "end_user", "agent"),
    [
        (oauth("o", FlowKind.AUTHORIZATION_CODE), True, False),
        (oauth("o", FlowKind.DEVICE_CODE), True, False),
        (oauth("o", FlowKind.IMPLICIT), True, False),
        (oauth("o", FlowKind.CLIENT_CREDENTIALS), False, True),
        (oauth("o", FlowKind.AUTHORIZATION_CODE, FlowKind.CLIENT_CREDENTIALS), True, True),
        (oauth("o", FlowKind.PASSWORD), False, False),
        (SecurityScheme("oidc", SchemeType.OPENID_CONNECT, open_id_connect_url="https://i/.well-known"), True, False),
        (SecurityScheme("k", SchemeType.API_KEY, api_key_in="header", api_key_name="X-Key"), False, True),
        (SecurityScheme("b", SchemeType.HTTP, http_scheme="bearer"), False, True),
        (SecurityScheme("m", SchemeType.MUTUAL_TLS), False, True),
        (SecurityScheme("u", SchemeType.UNKNOWN), None, None),
        (None, None, None),
    ],
)
def test_identity_compatibility(scheme: SecurityScheme | None, end_user: bool | None, agent: bool | None) -> None:
    """END_USER needs delegated user flows or OIDC; AGENT its own credentials; unknown stays unknown."""
    assert compatible(scheme, IdentityType.END_USER) is end_user
    assert compatible(scheme, IdentityType.AGENT) is agent


# --------------------------------------------------------------------------- grant sets


def test_grant_set_counts_only_protected_operations() -> None:
    """Public and undeclared operations never count towards a blast radius."""
    idx = index(
        op("read", ["r"], ["rw"]),
        op("write", ["rw"]),
        op("public", []),
        op("declared-none"),
        op("unknown", None),
    )
    g = SpecGrants(idx)
    assert g.protected_count == 2
    rw = g.atoms_of((SchemeRequirement.of("oauth", ["rw"]),))
    assert [o.key for o in g.operations_in(g.granted(rw))] == ["read", "write"]
    r = g.atoms_of((SchemeRequirement.of("oauth", ["r"]),))
    assert [o.key for o in g.operations_in(g.granted(r))] == ["read"]


def test_and_alternatives_need_every_atom() -> None:
    """An alternative of two schemes is granted only when both are."""
    key = SecurityScheme("key", SchemeType.API_KEY)
    idx = index(
        OperationEntry(
            key="both",
            operation_id="both",
            requirements=((SchemeRequirement.of("oauth", ["a"]), SchemeRequirement.of("key")),),
        ),
        schemes=(oauth(), key),
    )
    g = SpecGrants(idx)
    only_a = g.atoms_of((SchemeRequirement.of("oauth", ["a"]),))
    assert g.granted(only_a) == 0
    assert g.granted(only_a | g.atoms_of((SchemeRequirement.of("key"),))) == 1


def test_scopes_are_namespaced_by_authorization_server() -> None:
    """The same scope name from two authorization servers is two different grants."""
    a = index(op("a", ["read"]), schemes=(oauth(token="https://one/token"),), url="https://one/spec")
    b = index(op("b", ["read"]), schemes=(oauth(token="https://two/token"),), url="https://two/spec")
    ga, gb = SpecGrants(a), SpecGrants(b)
    atoms = ga.atoms_of((SchemeRequirement.of("oauth", ["read"]),))
    assert ga.granted(atoms) == 1
    assert gb.granted(atoms) == 0


def test_shared_authorization_server_widens_blast_radius() -> None:
    """A scope two specs of one provider both accept opens both (Google's cloud-platform)."""
    a = index(op("a", ["cloud"]), url="https://one/spec")
    b = index(op("b", ["cloud"]), url="https://two/spec")
    ga, gb = SpecGrants(a), SpecGrants(b)
    atoms = ga.atoms_of((SchemeRequirement.of("oauth", ["cloud"]),))
    assert combined_blast_radius(atoms, [ga, gb]) == 2


def test_api_key_atoms_are_per_spec() -> None:
    """Two specs' API keys are different credentials even under the same scheme name."""
    key = (SecurityScheme("key", SchemeType.API_KEY),)
    ga = SpecGrants(index(op("a", ["x"], scheme="key"), schemes=key, url="https://one/spec"))
    gb = SpecGrants(index(op("b", ["x"], scheme="key"), schemes=key, url="https://two/spec"))
    atom_a = ga.atoms_of((SchemeRequirement.of("key", ["x"]),))
    assert atom_a == frozenset({Atom("https://one/spec#key", "", SchemeType.API_KEY)})
    assert gb.granted(atom_a) == 0


# --------------------------------------------------------------------------- per access


def test_least_privilege_picks_the_contained_grant_set() -> None:
    """Like Gmail's messages.send: the scope whose grant set is inside every other's wins, unambiguously."""
    idx = index(
        op("send", ["mail"], ["modify"], ["compose"], ["send"]),
        op("drafts.send", ["mail"], ["modify"], ["compose"]),
        op("messages.list", ["mail"], ["modify"], ["readonly"]),
        op("delete", ["mail"]),
    )
    g = SpecGrants(idx)
    choice = choose_least_privilege(g, g.alternatives(idx.operations[0]))
    assert choice is not None
    assert choice.alternative.scopes == ["send"]
    assert choice.granted.bit_count() == 1
    assert choice.rivals == ()


def test_incomparable_minima_are_reported_as_rivals() -> None:
    """Like Drive's files.list: narrow scopes that grant different things are all named."""
    idx = index(
        op("list", ["photos"], ["metadata"], ["file"], ["drive"]),
        op("photos.only", ["photos"], ["drive"]),
        op("meta.get", ["metadata"], ["drive"]),
        op("create", ["file"], ["drive"]),
        op("create2", ["file"], ["drive"]),
    )
    g = SpecGrants(idx)
    choice = choose_least_privilege(g, g.alternatives(idx.operations[0]))
    assert choice is not None
    # photos and metadata both grant 2 operations; the tie-break is lexicographic.
    assert choice.alternative.scopes == ["metadata"]
    assert sorted(alt.scopes[0] for alt, _ in choice.rivals) == ["file", "photos"]


def test_equal_grant_sets_are_ambiguous_and_listed() -> None:
    """Two scopes granting the same operations here may differ elsewhere: the tie is said, the rival named."""
    idx = index(op("a", ["x"], ["y"]), op("b", ["x"], ["y"]))
    g = SpecGrants(idx)
    choice = choose_least_privilege(g, g.alternatives(idx.operations[0]))
    assert choice is not None
    assert choice.alternative.scopes == ["x"]
    assert [alt.scopes for alt, _ in choice.rivals] == [["y"]]


# --------------------------------------------------------------------------- per tier


def test_tier_shares_one_scope_between_accesses() -> None:
    """Two accesses that each could use a narrow scope share a broader one when that is cheaper overall."""
    idx = index(
        op("a", ["a.only"], ["shared"]),
        op("b", ["b.only"], ["shared"]),
        op("x", ["a.only"]),
        op("y", ["a.only"]),
        op("z", ["b.only"]),
        op("w", ["b.only"]),
    )
    g = SpecGrants(idx)
    problems = [TierProblem(o.key, g, tuple(g.alternatives(o))) for o in idx.operations[:2]]
    sol = solve_tier(problems, frozenset(), [g])
    assert sorted(a.scope for a in sol.atoms) == ["shared"]
    assert sol.blast_radius == 2
    assert sol.method == "exact"


def test_tiers_build_on_the_tier_below() -> None:
    """An access already satisfied by the lower tier's grant adds nothing."""
    idx = index(op("a", ["broad"]), op("b", ["narrow"], ["broad"]), op("narrow-only", ["narrow"]))
    g = SpecGrants(idx)
    base = solve_tier([TierProblem("a", g, tuple(g.alternatives(idx.operations[0])))], frozenset(), [g]).atoms
    sol = solve_tier([TierProblem("b", g, tuple(g.alternatives(idx.operations[1])))], base, [g])
    assert sol.atoms == base
    assert sol.method == "trivial"
    assert sol.chosen["b"].scopes == ["broad"]


def test_greedy_fallback_is_never_worse_than_solo_choices() -> None:
    """Above the exact limit the greedy answer is used, bounded by the per-access optimum union."""
    ops = [op(f"o{i}", [f"s{i}"], [f"t{i}"], ["all"]) for i in range(8)]
    idx = index(*ops)
    g = SpecGrants(idx)
    problems = [TierProblem(o.key, g, tuple(g.alternatives(o))) for o in ops]
    sol = solve_tier(problems, frozenset(), [g], exact_limit=10)
    assert sol.method == "greedy"
    solo = frozenset().union(*(choose_least_privilege(g, p.candidates).alternative.atoms for p in problems))  # type: ignore[union-attr]
    assert sol.blast_radius <= combined_blast_radius(solo, [g])
    exact = solve_tier(problems, frozenset(), [g], exact_limit=10**9)
    assert exact.method == "exact"
    assert exact.blast_radius <= sol.blast_radius


# --------------------------------------------------------------------------- properties

SCOPES = ["a", "b", "c", "d", "e"]
_alt = st.lists(st.sampled_from(SCOPES), min_size=1, max_size=2, unique=True)
_op_reqs = st.lists(_alt, min_size=1, max_size=3)


@st.composite
def instances(draw: st.DrawFn) -> tuple[SpecIndex, list[int], list[int]]:
    """A random spec, a random set of accessed operations, and a random tier for each."""
    reqs = draw(st.lists(_op_reqs, min_size=1, max_size=7))
    idx = index(*(op(f"op{i}", *r) for i, r in enumerate(reqs)))
    accessed = draw(st.lists(st.integers(0, len(reqs) - 1), min_size=1, max_size=4))
    tiers = draw(st.lists(st.integers(1, 3), min_size=len(accessed), max_size=len(accessed)))
    return idx, accessed, tiers


def _satisfies(atoms: frozenset[Atom], alts: list[Alternative]) -> bool:
    return any(a.atoms <= atoms for a in alts)


@given(instances())
@settings(max_examples=300, deadline=None)
def test_optimiser_properties(inst: tuple[SpecIndex, list[int], list[int]]) -> None:
    """Chosen sets satisfy every access, tiers are monotone, and nothing cheaper exists."""
    idx, accessed, tiers = inst
    g = SpecGrants(idx)
    base: frozenset[Atom] = frozenset()
    for tier in (1, 2, 3):
        members = [(k, a) for k, (a, t) in enumerate(zip(accessed, tiers, strict=True)) if t <= tier]
        problems = [TierProblem(f"acc{k}", g, tuple(g.alternatives(idx.operations[a]))) for k, a in members]
        sol = solve_tier(problems, base, [g])
        # 1. every access of this tier and below is satisfied, by the alternative reported
        for p in problems:
            assert _satisfies(sol.atoms, list(p.candidates))
            assert sol.chosen[p.key].atoms <= sol.atoms
        # 2. monotone
        assert base <= sol.atoms
        # 3. optimal: brute force every combination of alternatives on top of the tier below
        options = [list(p.candidates) for p in problems]
        best = min(
            (
                combined_blast_radius(base.union(*(a.atoms for a in combo)), [g])
                for combo in itertools.product(*options)
            ),
            default=combined_blast_radius(base, [g]),
        )
        assert sol.blast_radius == best
        base = sol.atoms


@given(instances())
@settings(max_examples=200, deadline=None)
def test_per_access_choice_is_subset_minimal(inst: tuple[SpecIndex, list[int], list[int]]) -> None:
    """No alternative of the access grants a strict subset of what the chosen one grants."""
    idx, accessed, _ = inst
    g = SpecGrants(idx)
    for a in accessed:
        alts = g.alternatives(idx.operations[a])
        choice = choose_least_privilege(g, alts)
        assume(choice is not None)
        assert choice is not None
        for alt in alts:
            m = g.granted(alt.atoms)
            assert not (m != choice.granted and m & choice.granted == m)
        # The access's own operation is always granted by its choice.
        assert choice.granted >> a & 1


# --------------------------------------------------------------------------- alternatives and identities


KEY = SecurityScheme("app-key", SchemeType.API_KEY, api_key_in="header", api_key_name="Client-Id")
CERT = SecurityScheme("cert", SchemeType.MUTUAL_TLS)
USER = oauth("user", FlowKind.AUTHORIZATION_CODE)
APP = oauth("app", FlowKind.CLIENT_CREDENTIALS)
PASSWORD = oauth("pw", FlowKind.PASSWORD)
NO_FLOWS = SecurityScheme("bare", SchemeType.OAUTH2)
UNKNOWN = SecurityScheme("mystery", SchemeType.UNKNOWN)
SCHEMES = {s.name: s for s in (KEY, CERT, USER, APP, PASSWORD, NO_FLOWS, UNKNOWN)}


@pytest.mark.parametrize(
    ("terms", "end_user", "agent"),
    [
        (["user"], True, False),
        (["user", "app-key"], True, False),  # the user's token plus the client's own key
        (["user", "cert"], True, False),
        (["app"], False, True),
        (["app", "app-key"], False, True),
        (["app-key"], False, True),
        (["user", "app"], False, False),  # two tokens at once: neither identity holds both
        (["pw"], False, False),
        (["user", "pw"], False, False),
        (["bare"], False, False),  # OAuth whose flows nobody named: fitness cannot be shown
        (["mystery"], False, False),
        (["ghost"], False, False),  # undefined scheme
        (["app", "ghost"], False, False),
    ],
)
def test_alternatives_fit_identities(terms: list[str], end_user: bool, agent: bool) -> None:
    """END_USER: a delegated term, the rest delegated or the client's own credentials. AGENT: all its own."""
    alt = tuple(SchemeRequirement.of(t) for t in terms)
    assert fits(alt, SCHEMES, IdentityType.END_USER).ok is end_user
    assert fits(alt, SCHEMES, IdentityType.AGENT).ok is agent


def test_an_unfit_alternative_says_why() -> None:
    why = fits((SchemeRequirement.of("ghost"),), SCHEMES, IdentityType.AGENT).why
    assert "not defined" in why
    assert "unknown kind" in fits((SchemeRequirement.of("mystery"),), SCHEMES, IdentityType.END_USER).why


def test_universe_joins_specs_and_counts_shared_operations_once() -> None:
    """A method both a spec and the universe know is one operation of the grant space."""
    from ramscope.derive.privilege import GrantSpace
    from ramscope.providers.universe import Universe

    token = "https://oauth2.googleapis.com/token"
    google = "https://accounts.google.com"
    u = Universe(
        name="g",
        server=google,
        version="1",
        source={},
        apis=("a", "b"),
        ops=("a.x", "a.y", "b.z"),
        op_api=(0, 0, 1),
        alternatives=((frozenset({(google, "wide")}), (0, 1, 2)), (frozenset({(google, "narrow")}), (0,))),
    )
    idx = index(op("a.x", ["wide"], ["narrow"]), op("a.new", ["narrow"]), schemes=(oauth(token=token),))
    g = SpecGrants(idx)
    space = GrantSpace([g], [u])
    wide = g.atoms_of((SchemeRequirement.of("oauth", ["wide"]),))
    narrow = g.atoms_of((SchemeRequirement.of("oauth", ["narrow"]),))
    assert space.granted(wide).bit_count() == 3  # a.x (shared), a.y, b.z
    assert space.granted(narrow).bit_count() == 2  # a.x (shared), a.new (only in the spec: newer)
    choice = choose_least_privilege(space, g.alternatives(idx.operations[0]), api="a")
    assert choice is not None
    assert choice.alternative.scopes == ["narrow"]
