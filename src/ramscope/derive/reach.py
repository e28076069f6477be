"""Stage 2a of an access's choice: which alternatives do the operation's job, by what they reach.

The grant-set lattice (``privilege.choose_least_privilege``) compares how many operations each
alternative opens. Before it runs, the alternatives are ranked by their permissions' classes
(:mod:`ramscope.providers.reach`), in this order:

1. **Principal.** An alternative only an app authenticating as itself can hold is never an
   END_USER pick; for AGENT, where such alternatives exist, they are the agent's own and a user's
   permission (which would need a user's delegation) is set aside. An administrator's permission
   is set aside while a user's own alternative does the job at no higher level (the policy's
   ``allow_admin = true`` lets it compete); otherwise (the Admin SDK's read scopes against
   ``cloud-platform``, a write scope, for listing users; or only administrator permissions listed)
   it competes, and the pick says so. A role-bound permission (a YouTube content owner's, a
   reseller's, a Classroom teacher's) is held back the same way (``allow_role_bound = true`` lets it
   compete), and a pick that is one says so (``fallback: "role"``).
2. **Slice.** An alternative whose permission reaches only a slice of the caller's data (files this
   app created, the app-data folder, Photos, the user's own profile, metadata without bodies) is
   offered beside the pick as a narrower option with its condition, not picked: it does not do the
   job on the data an agent ordinarily addresses. Unless the operation itself stays in the slice
   (creating a file with ``drive.file``), or the policy opts into it (``[[slice]]``).
   Legacy spellings with a current replacement come after every current alternative.
3. **Level.** Among what is left, the lowest level: read < write < manage. A write permission is
   never the pick for an operation that a listed read permission does. A bare credential (a key or
   a token naming no permission: PagerDuty's account API key beside its scoped OAuth) says nothing
   of what it reaches, usually the whole account: where an alternative naming a permission is
   left, the bare credential is set aside, whatever that permission's level.

Before all of these, for an app calling as itself, a permission that needs an administrator's
approval of the app (Chat's ``chat.app.*``) is set aside where one that needs none (``chat.bot``)
does the job; and a scope of another API (Cloud Storage's ``devstorage.*`` listed on BigQuery's
``jobs.insert``, for the objects a job reads) does only that API's part of the operation: it is set
aside, with the API named, while a scope of the operation's own API or one spread over many is listed.

Only then does the lattice choose (and only these alternatives reach the tier search).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..manifest import IdentityType
from ..providers.reach import Level, Principal, Reach
from .privilege import Alternative

__all__ = ["BARE", "CONFINED", "INCLUDES", "PART_OF", "Ranked", "rank_by_reach"]

#: Why a general alternative is set aside where the operation stays inside a slice that does the job
#: (the provider's least marks may still prefer it: ``derive.choice``).
CONFINED = "reaches all the data, where a permission confined to the operation's own slice does the job"

#: Why another API's scope is set aside (followed by the API's name).
PART_OF = "a scope of another API ("

#: Why a permission is set aside that the provider documents as including a listed one (then its names).
INCLUDES = "broader: the provider documents it as including "

#: Why a bare credential is set aside where an alternative naming a permission does the job.
BARE = "a credential naming no permission (it may reach everything), where one naming a permission is listed"

#: (scheme name, scope) -> the scope's class.
ReachOf = Callable[[str, str], Reach]


@dataclass(frozen=True, slots=True)
class Ranked:
    """The alternatives that compete in the lattice, and what happened to the others."""

    eligible: tuple[Alternative, ...]
    #: Slice alternatives offered beside the pick: (alternative, the slice scopes' classes).
    narrower: tuple[tuple[Alternative, tuple[Reach, ...]], ...] = ()
    #: alternative -> why it was set aside (principal, level, legacy); slices are in ``narrower``.
    set_aside: tuple[tuple[Alternative, str], ...] = ()
    #: Every scope's class, for the report.
    classes: dict[str, Reach] = field(default_factory=dict)
    #: The pick comes from alternatives normally set aside: "admin" (an administrator's permission,
    #: where no user's own does the job as narrowly), "role" (a role-bound one, likewise), "slice", "legacy".
    fallback: str = ""

    def reach_json(self, alt: Alternative) -> dict[str, Any]:
        return {s: self.classes[s].to_dict() for s in alt.scopes if s in self.classes}


@dataclass(frozen=True, slots=True)
class _Class:
    alt: Alternative
    reaches: tuple[Reach, ...]
    principal: Principal
    slices: tuple[Reach, ...]
    legacy: bool
    rank: int
    #: The operation stays inside one of its slices (a file the app creates): it reaches less than a general one.
    inside: bool


def _classify(alt: Alternative, reach_of: ReachOf, operation_id: str, opted: Callable[[str], bool]) -> _Class:
    reaches = tuple(reach_of(t.scheme, s) for t in alt.terms for s in t.scopes)
    principal = Principal.USER
    if any(r.principal is Principal.APP for r in reaches):
        principal = Principal.APP
    elif any(r.principal is Principal.ADMIN for r in reaches):
        principal = Principal.ADMIN
    elif any(r.principal is Principal.ROLE for r in reaches):
        principal = Principal.ROLE
    # A permission with limits (no bodies, no content) narrows like a slice: offered while one without does the job.
    slices = tuple(r for r in reaches if (r.slice or r.limits) and not r.satisfied(operation_id) and not opted(r.scope))
    inside = any(r.slice and (r.satisfied(operation_id) or opted(r.scope)) for r in reaches)
    # Anonymous access needs nothing: lowest of all. A key or a certificate says nothing of its level.
    rank = -1 if not alt.atoms else max((r.level.rank for r in reaches), default=Level.UNKNOWN.rank)
    return _Class(alt, reaches, principal, slices, any(r.deprecated for r in reaches), rank, inside)


def rank_by_reach(
    alternatives: Sequence[Alternative],
    reach_of: ReachOf,
    *,
    operation_id: str,
    identity: IdentityType,
    allow_admin: bool = False,
    allow_role: bool = False,
    opted: Callable[[str], bool] = lambda _scope: False,
    part_of: Callable[[Alternative], str | None] = lambda _alt: None,
    resource: str = "",
) -> Ranked:
    """Rank ``alternatives`` (already fit for ``identity`` and the policy) as the module says."""
    classes: dict[str, Reach] = {}
    kinds = [_classify(a, reach_of, operation_id, opted) for a in alternatives]
    for k in kinds:
        classes.update((r.scope, r) for r in k.reaches)
    set_aside: list[tuple[Alternative, str]] = []
    usable: list[_Class] = []
    # The agent's own identity: where the provider has permissions for an app acting as itself
    # (Chat's chat.app.*), a user's permission would need a user's delegation (domain-wide
    # delegation impersonates one), which is not the agent's own.
    app_own = identity is IdentityType.AGENT and any(k.principal is Principal.APP for k in kinds)
    for k in kinds:
        if k.principal is Principal.APP and identity is IdentityType.END_USER:
            set_aside.append((k.alt, "only an app authenticating as itself can hold it, not a user's delegation"))
        elif app_own and k.principal is not Principal.APP and k.alt.atoms:
            set_aside.append((k.alt, "a user's permission, where one the app holds as itself does the job"))
        else:
            usable.append(k)
    # An app calling as itself: a permission that needs an administrator's approval of the app (Chat's
    # chat.app.*) is set aside where an app permission that needs none (chat.bot) does the job.
    if identity is IdentityType.AGENT:
        free = [k for k in usable if k.principal is Principal.APP and not any(r.approval for r in k.reaches)]
        if free:
            for k in [k for k in usable if k.principal is Principal.APP and k not in free]:
                approvals = "; ".join(sorted({r.approval for r in k.reaches if r.approval}))
                set_aside.append((k.alt, f"needs {approvals}, where an app permission that needs none does the job"))
                usable.remove(k)
    # Another API's scopes (Cloud Storage's on a BigQuery job) do only that API's part of the
    # operation: set aside while a scope of the operation's own API (or one spread over many) is listed.
    parts = {id(k): part_of(k.alt) for k in usable}
    if any(parts[id(k)] is None for k in usable):
        for k in [k for k in usable if parts[id(k)] is not None]:
            set_aside.append((k.alt, f"{PART_OF}{parts[id(k)]}): it does only that API's part of the operation"))
            usable.remove(k)

    # Narrowest by the provider's own resource scoping: a permission the provider documents as
    # including a listed one (HubSpot's e-commerce: products and line items), and, where the operation
    # returns one resource (Shopify's Location for locations), a scope of another resource beside the
    # scope named after it (read_inventory, read_markets_home beside read_locations).
    singles = {k.alt.scopes[0]: k for k in usable if len(k.alt.scopes) == 1 and not k.slices}
    for k in list(usable):
        within = sorted({s for r in k.reaches for s in r.includes if s in singles and singles[s] is not k})
        if within:
            set_aside.append((k.alt, f"{INCLUDES}{', '.join(within)}, which is listed and does the job"))
            usable.remove(k)
    if resource:
        named = re.compile(rf"(?:^|[_:./-]){re.escape(_snake(resource))}s?(?:$|[_:./-])")
        own = [k for k in usable if k.alt.scopes and all(named.search(s.lower()) for s in k.alt.scopes)]
        if own and any(not k.slices for k in own):
            for k in [k for k in usable if k not in own and k.alt.atoms and not k.slices]:
                set_aside.append((k.alt, f"a scope of another resource, where the scope of the {resource} the "
                                  "operation returns does the job"))  # fmt: skip
                usable.remove(k)

    # An administrator's permission is set aside only while a user's own does the job at no higher
    # level: the Admin SDK's read scopes beat cloud-platform (a write scope) for listing users.
    # A role-bound permission (a YouTube partner's, a reseller's, a teacher's) likewise: an ordinary
    # account does not hold it, so it competes only where no user's own does the job as narrowly.
    apart = (Principal.ADMIN, Principal.ROLE)
    user_ranks = [k.rank for k in usable if not k.slices and not k.legacy and k.principal not in apart]

    def competes(principal: Principal, allowed: bool) -> bool:
        ranks = [k.rank for k in usable if not k.slices and not k.legacy and k.principal is principal]
        return allowed or (bool(ranks) and (not user_ranks or min(ranks) < min(user_ranks)))

    admin_competes = competes(Principal.ADMIN, allow_admin)
    role_competes = competes(Principal.ROLE, allow_role)

    def held_back(k: _Class) -> bool:
        return (k.principal is Principal.ADMIN and not admin_competes) or (
            k.principal is Principal.ROLE and not role_competes
        )

    def general(k: _Class) -> bool:
        return not k.slices and not k.legacy and not held_back(k)

    pool = [k for k in usable if general(k)]
    fallback = ""
    if not pool:
        # Nothing ordinary does the job: the least unusual kind, said out loud.
        tests: tuple[tuple[str, Callable[[_Class], bool]], ...] = (
            ("legacy", lambda k: not k.slices and not held_back(k)),
            ("role", lambda k: not k.slices and (allow_admin or k.principal is not Principal.ADMIN)),
            ("admin", lambda k: not k.slices),
            ("slice", lambda k: True),
        )
        for name, test in tests:
            pool = [k for k in usable if test(k)]
            if pool:
                fallback = name
                break
    chosen_ids = {id(k) for k in pool}
    narrower: list[tuple[Alternative, tuple[Reach, ...]]] = []
    for k in usable:
        if id(k) in chosen_ids:
            continue
        if k.slices:
            narrower.append((k.alt, k.slices))
        elif k.legacy:
            set_aside.append((k.alt, "a legacy permission with a current replacement: " + _deprecated(k)))
        elif k.principal is Principal.ADMIN:
            set_aside.append((k.alt, "an administrator's permission, where a user's own does the job"))
        elif k.principal is Principal.ROLE:
            roles = "; ".join(sorted({r.condition for r in k.reaches if r.principal is Principal.ROLE and r.condition}))
            set_aside.append((k.alt, f"a role-bound permission ({roles or 'a role apart from an ordinary account'}), "
                              "where a user's own does the job"))  # fmt: skip
    # A write permission that says what it reaches beats a bare key that may reach everything.
    if any(k.reaches for k in pool):
        for k in pool:
            if k.alt.atoms and not k.reaches:
                set_aside.append((k.alt, BARE))
        pool = [k for k in pool if k.reaches or not k.alt.atoms]
    low = min((k.rank for k in pool), default=0)
    inside = any(k.inside for k in pool if k.rank == low)
    eligible = []
    for k in pool:
        if k.rank != low:
            set_aside.append((k.alt, f"a {_level_name(k.rank)} permission, where a {_level_name(low)} one is listed"))
        elif inside and not k.inside:
            set_aside.append((k.alt, CONFINED))
        else:
            eligible.append(k.alt)
    if not fallback and not allow_admin and any(k.principal is Principal.ADMIN for k in pool if k.alt in eligible):
        fallback = "admin"
    if not fallback and not allow_role and any(k.principal is Principal.ROLE for k in pool if k.alt in eligible):
        fallback = "role"
    return Ranked(tuple(eligible), tuple(narrower), tuple(set_aside), classes, fallback)


def _snake(name: str) -> str:
    """``DeliveryProfile`` -> ``delivery_profile``: a GraphQL type's name as Shopify's scopes spell it."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _deprecated(k: _Class) -> str:
    return "; ".join(r.deprecated for r in k.reaches if r.deprecated)


def _level_name(rank: int) -> str:
    return next((lv.name.lower() for lv in Level if lv.rank == rank), "anonymous")
