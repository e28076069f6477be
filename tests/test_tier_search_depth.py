"""The exact tier search is iterative and bounded: deep tiers answer, costly ones fall back to greedy."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ramscope.derive.privilege import (
    Alternative,
    Atom,
    GrantSpace,
    SpecGrants,
    TierProblem,
    _exact,
    as_space,
    solve_tier,
)
from tests.test_privilege import index, op


def _recursive_exact(options: list[list[Alternative]], base: frozenset[Atom], space: GrantSpace) -> list[Alternative]:
    """The recursive search this module replaced, kept as the reference its results must equal."""
    best: list[Any] = [None, None, None]
    picks: list[Alternative] = []

    def names(atoms: frozenset[Atom]) -> tuple[tuple[str, str], ...]:
        return tuple(sorted((a.namespace, a.scope) for a in atoms))

    def visit(i: int, atoms: frozenset[Atom], mask: int) -> None:
        radius = mask.bit_count()
        if best[0] is not None and radius > best[0][0]:
            return
        if i == len(options):
            key = (radius, len(atoms))
            if best[0] is None or key < best[0] or (key == best[0] and names(atoms) < names(best[1])):
                best[0], best[1], best[2] = key, atoms, list(picks)
            return
        for alt in options[i]:
            delta = alt.atoms - atoms
            new, _ = space.extend(atoms, mask, delta)
            picks.append(alt)
            visit(i + 1, atoms | delta, new)
            picks.pop()

    visit(0, base, space.granted(base))
    result: list[Alternative] = best[2]
    return result


def test_a_thousand_distinct_accesses_do_not_exhaust_the_stack() -> None:
    """1,500 accesses with distinct requirements (one decision each) are solved exactly, no RecursionError."""
    ops = [op(f"o{i}", [f"s{i}"]) for i in range(1500)]
    g = SpecGrants(index(*ops))
    problems = [TierProblem(o.key, g, tuple(g.alternatives(o))) for o in ops]
    sol = solve_tier(problems, frozenset(), [g])
    assert sol.method == "exact"
    assert sol.blast_radius == 1500
    assert sorted(a.scope for a in sol.atoms) == sorted(f"s{i}" for i in range(1500))


def test_an_exhausted_search_budget_takes_the_greedy_fallback() -> None:
    """Within the combination limit but over the check budget, the tier is solved by the greedy fallback."""
    ops = [op(f"o{i}", [f"s{i}"], ["all"]) for i in range(6)]
    g = SpecGrants(index(*ops))
    problems = [TierProblem(o.key, g, tuple(g.alternatives(o))) for o in ops]
    bounded = solve_tier(problems, frozenset(), [g], exact_budget=5)
    assert bounded.method == "greedy"
    assert bounded.combinations == 64
    assert sorted(a.scope for a in bounded.atoms) == ["all"]
    assert _exact([list(p.candidates) for p in problems], frozenset(), as_space([g]), budget=5) is None


SCOPES = ["a", "b", "c", "d", "e", "f"]
_alt = st.lists(st.sampled_from(SCOPES), min_size=1, max_size=3, unique=True)


@given(st.lists(st.lists(_alt, min_size=1, max_size=4), min_size=1, max_size=8), st.data())
@settings(max_examples=300, deadline=None)
def test_iterative_search_equals_the_recursive_one(reqs: list[list[list[str]]], data: st.DataObject) -> None:
    """On random tiers the iterative search picks exactly what the recursive one picked."""
    idx = index(*(op(f"op{i}", *r) for i, r in enumerate(reqs)))
    g = SpecGrants(idx)
    space = as_space([g])
    options = [list(g.alternatives(o)) for o in idx.operations]
    base = frozenset(data.draw(st.sets(st.sampled_from([g.atom_for("oauth", s) for s in SCOPES]), max_size=2)))
    assert _exact(options, base, space) == _recursive_exact(options, base, space)
