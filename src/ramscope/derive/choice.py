"""Stage 2 of a card: the grant space, then each resolved access's least-privilege choice
(identity and policy filtering, pins, the provider's least-privilege marks)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ..diagnostics import Diagnostic
from ..manifest import (
    IdentityType,
    Operation,
    ResourceAccess,
)
from ..outputs.report import (
    AccessRecord,
)
from ..providers.catalog import Catalog
from ..providers.costs import costs_summary
from ..providers.reach import (
    Principal,
    Reach,
    classify,
    endpoint_families,
    family_known,
    operation_note,
    permission_family,
    provider_of,
    provider_of_servers,
)
from ..providers.universe import Universe
from ..specs.model import FlowKind, OperationEntry, SchemeRequirement, SchemeType, SpecKind
from . import sources
from .borrowing import described
from .costing import alternative_costs, cost_after_reach, operation_cost
from .policy import Pin
from .privilege import (
    AMBIGUOUS,
    Alternative,
    Choice,
    GrantSpace,
    SpecGrants,
    choose_least_privilege,
    fits,
)
from .reach import CONFINED, Ranked, rank_by_reach
from .records import (
    _alt_label,
    _credentials,
    _requirements_json,
    _target_dict,
    _term_json,
)
from .rules import (
    ACCESS_UNDETERMINED,
    ADMIN_ONLY,
    CATALOG_LEAST_DIFFERS,
    NARROWER_OPTION,
    PIN_NOT_ALTERNATIVE,
    PROVIDER_DATA_SUSPECT,
    ROLE_ONLY,
    SLICE_ONLY,
    UNIVERSE_UNREADABLE,
)
from .state import Outcome, Pending, RunState


class Choosing(RunState):
    """The card's grant space and each access's choice in it."""

    def _space(self, pending: Sequence[Pending]) -> GrantSpace:
        """The card's grant space: its resolved specs, and the universe of every server their
        alternatives name (and of every catalog that supplied requirements)."""
        grants: dict[int, SpecGrants] = {}
        servers: set[str] = set()
        universes: dict[str, Universe] = {}
        for p in pending:
            g = self.engine.grants(p.found.index)
            grants[id(g)] = g  # the engine keeps one per spec (and per catalog that enriched it)
            for alt in g.alternatives(p.found.entry):
                servers.update(atom.namespace for atom in alt.atoms if atom.is_scope)
            if p.catalog is not None:
                universes[p.catalog.label] = p.catalog.universe
        for server in sorted(servers):
            u = self.engine.universe(server)
            if u is not None:
                universes[u.server] = u
                problem = self.engine.universe_problems.get(server)
                if problem:
                    self.diags.append((UNIVERSE_UNREADABLE("", f"{server}: {problem}"), None))
        return self.engine.space(list(grants.values()), list(universes.values()))

    def _providers(self, pending: Sequence[Pending]) -> dict[str, Any]:
        catalogs = {p.catalog.label: p.catalog.summary() for p in pending if p.catalog is not None}
        return {
            "universes": [u.summary() for u in self.space.universes if not u.server.startswith("catalog:")],
            "catalogs": [catalogs[k] for k in sorted(catalogs)],
            "costs": costs_summary(),
        }

    def _resolved(self, p: Pending) -> Outcome:
        a, key, base, op, found = p.access, p.key, p.base, p.operation, p.found
        index, entry = found.index, found.entry
        grants = self.engine.grants(index)
        space = self.space
        target = _target_dict(found)
        requirements = _requirements_json(index, entry.requirements)
        effects: list[dict[str, Any]] = []
        pin = self._pin(a, op)
        candidates: list[Alternative]
        options: list[dict[str, Any]] = []
        ctx_diag: Diagnostic | None = None
        provider_notes, note_diags = sources.notes(a, index, entry)
        self.diags.extend((d, None) for d in note_diags)
        ranked: Ranked | None = None
        all_alts: list[dict[str, Any]] = []
        reason: tuple[str, str] | None = None
        method = "least-privilege"
        # A catalog beside the spec (extra["catalog"]) labels its own alternatives; the rest are the spec's.
        source = p.catalog.label if p.catalog is not None and "catalog" not in entry.extra else "spec"
        if p.catalog is None and entry.security_source.startswith("catalog:"):
            source = entry.security_source  # an MCP server's vendor-published per-tool scopes (mcp_catalog)
        if pin is not None:
            candidates = [self._pinned_alternative(a, grants, entry.requirements, pin, effects)]
            method = "pinned"
            if entry.requirements is None:
                source = "policy"
        elif entry.requirements is None:
            candidates = []
            reason = (
                "security-undeclared",
                f"{index.url} does not declare the security of {entry.key!r}; "
                "its permissions cannot be derived (pin them with a policy if you know them)",
            )
        elif entry.requirements == ():
            candidates = [Alternative(frozenset(), ())]
            method = "none-required"
        else:
            alternatives = grants.alternatives(entry)
            wanted, options = sources.offered(grants, entry, self.policy)
            if wanted:
                effects.append({"effect": "offered-preferred", "scopes": sorted({s for w in wanted for s in w.scopes})})
                alternatives = [*alternatives, *wanted]
            candidates, all_alts, reason = self._filter(a, grants, alternatives, effects, p)
            sources.label_sources(alternatives, all_alts, entry, source)
            note = operation_note(self._provider(p, entry.requirements), entry.operation_id or "")
            if note is not None and candidates:
                candidates = []
                reason = ("operation-scopes-caller-defined", f"{note.undetermined} ({note.source})")
            if candidates:
                ranked = self._rank(p, candidates, all_alts)
                candidates = list(ranked.eligible)
            if candidates and any(not alt.atoms for alt in candidates):
                method = "anonymous-allowed"
        record_kw: dict[str, Any] = {
            "status": "resolved",
            "target": target,
            "security_declared": index.security_declared,
            "requirements": requirements if entry.requirements is not None or pin is not None else None,
            "alternatives": all_alts or None,
            "policy": effects,
            "requirements_source": source if entry.requirements is not None or pin is not None else None,
            "options": options,
            "provider_notes": provider_notes,
        }
        if pin is not None and entry.requirements is None:
            record_kw["requirements"] = [[_term_json(index, t) for t in candidates[0].terms]]
        if index.kind is SpecKind.A2A:
            # Whatever the access itself needs, a reviewer must see what delegating to the agent exposes.
            record_kw["footprint"] = self._footprint(a, index)
        api = _api_of(space, entry)
        choice = choose_least_privilege(space, candidates, api=api) if candidates else None
        if choice is not None and p.catalog_entry is not None and pin is None:
            choice, method = self._provider_least(p, space, candidates, choice, api, method, effects, ranked)
        if choice is not None and ranked is not None:
            choice = self._suspect(p, choice, ranked, space, api)
        if choice is not None and pin is None:
            choice, ctx_diag = sources.contextual_choice(a, entry, space, candidates, choice)
            if ctx_diag is not None:
                self.diags.append((ctx_diag, None))
            record_kw["requirements_source"] = sources.pick_source(choice.alternative, entry, source)
        floor = sources.baseline_floor(a, index, entry, choice.alternative, grants) if choice and not pin else None
        if floor is not None:
            # The server's baseline is the least the tool needs, not its need: stated, never granted as the answer.
            record_kw["floor"], floor_diag = floor
            self.diags.append((floor_diag, None))
            choice = None
            reason = (
                "server-baseline",
                f"the only requirement known for tool {entry.key!r} is the server's baseline "
                f"({', '.join(record_kw['floor']['scopes']) or 'no scope'}), a floor: {sources.BASELINE_REVIEW}",
            )
        cost_note: dict[str, Any] | None = None
        if choice is not None and pin is None and ctx_diag is None:
            # Reach first; among what reach cannot order, what the provider charges for it.
            choice, cost_note = cost_after_reach(choice, ranked, a.identity_used.name)
        if choice is None:
            code, message = reason or ("no-compatible-alternative", "no usable alternative")
            self.diags.append(
                (
                    ACCESS_UNDETERMINED(a.loc.pointer, f"access {a.id!r}: {message}", data={"reason": code}),
                    None,
                )
            )
            record = AccessRecord(**base, **record_kw, complete=False, reason=code, reason_message=message)
            return Outcome(a, key, record, grants, ())
        alt = choice.alternative
        if ranked is not None and self.policy.available:
            for s in alt.scopes:
                r = ranked.classes.get(s)
                opted = self.policy.slice_opted(a.id, p.resource.id, s)
                if r is not None and r.slice and self.policy.made_available(s) and not opted:
                    # The app is approved for the slice permission only: the access must stay inside it.
                    effects.append({"effect": "available-slice", "scopes": [s], "condition": r.narrowing})
        if choice.rivals and ctx_diag is None:
            names = [_alt_label(alt)] + [_alt_label(r) for r, _ in choice.rivals]
            self.diags.append(
                (
                    AMBIGUOUS(
                        a.loc.pointer,
                        f"access {a.id!r}: the narrowest alternatives grant equal or incomparable sets of "
                        "operations across their authorization servers: "
                        + ", ".join(names)
                        + f"; picked {names[0]} "
                        + (
                            f"({cost_note['why']})"
                            if cost_note
                            else "(smallest grant set, then scopes of the access's own API, then fewest scopes, "
                            "then name)"
                        ),
                        data={"candidates": names},
                    ),
                    None,
                )
            )
        local = grants.granted(alt.atoms)
        examples = [o.key for o in grants.operations_in(local, limit=20)]
        universes = sorted({u.name for u in space.universes if _touches(u, alt)})
        record = AccessRecord(
            **base,
            **record_kw,
            complete=True,
            scopes=alt.scopes,
            credentials=_credentials(alt.atoms),
            scope_descriptions=described(space, index, alt),
            blast_radius={
                "granted_operations": local.bit_count(),
                "spec_operations": grants.n_ops,
                "protected_operations": grants.protected_count,
                "granted": examples,
                "universe_operations": choice.granted.bit_count(),
                "universes": universes,
                "outside_spec": space.outside(choice.granted, grants),
            },
            choice={
                "method": method,
                "ambiguous": bool(choice.rivals),
                "candidates": [_alt_label(r) for r, _ in choice.rivals],
                "cost_decided": cost_note,
                "rivals": [
                    _rival(r, m, choice.granted, ranked) | {"costs": alternative_costs(r, a.identity_used.name)}
                    for r, m in choice.rivals
                ],
            }
            | (_reach_json(ranked, alt) if ranked is not None else {})
            | self._catalog_json(p, alt, grants),
            scope_servers={atom.scope: atom.namespace for atom in sorted(alt.atoms) if atom.is_scope},
            scope_names=_scope_names(p, alt),
            admin_consent=_admin_consent(p, alt),
            token_scopes=sources.token_scopes(grants, alt),
            costs=alternative_costs(alt, a.identity_used.name),
            operation_cost=operation_cost(target),
        )
        able = _tier_alternatives(candidates, choice, ranked)
        if p.catalog is not None:
            self._note_permissions(p.catalog, able)
        return Outcome(a, key, record, grants, able, alt)

    def _catalog_json(self, p: Pending, alt: Alternative, grants: SpecGrants) -> dict[str, Any]:
        """What a catalog says beside the pick: permissions needed only under a condition (not ANDed),
        what the provider says of calls without authentication, and for GitHub the token family."""
        entry = p.catalog_entry
        if p.catalog is None or entry is None:
            return {}
        schemes = {t.scheme for t in alt.terms}
        out: dict[str, Any] = {
            "conditional": [
                {"scopes": [scope], "condition": cond} for scheme, scope, cond in entry.conditional if scheme in schemes
            ],
            "public": entry.public or None,
        }
        if p.catalog.name == "github":
            out["token_family"] = self._token_family(p, alt, grants)
        return out

    def _token_family(self, p: Pending, alt: Alternative, grants: SpecGrants) -> dict[str, Any] | None:
        """GitHub: which token family the pick is of, why (the policy, or the endpoint takes no other),
        and the other family's own least pick for the same access, so both are in the report."""
        from ..providers.github import CLASSIC, USER  # noqa: PLC0415 - the provider's names

        families = {USER: "fine-grained", CLASSIC: "classic"}
        picked = next((families[t.scheme] for t in alt.terms if t.scheme in families), None)
        if picked is None:
            # An installation token: one family only.
            return None
        wanted = self.policy.github_family
        why = None
        entry = p.catalog_entry
        if picked != wanted and entry is not None:
            why = next(
                (n for n in entry.notes if "does not work with" in n or "not recorded" in n),
                f"the endpoint lists no {wanted} permission",
            )
        other_scheme = USER if picked == "classic" else CLASSIC
        other_why = None
        full = p.catalog_full or entry
        other: list[str] | None = None
        if full is not None:
            reqs = tuple(r for r in full.requirements if all(t.scheme == other_scheme for t in r))
            alts = [
                a
                for a in grants.alternatives_of(reqs)
                if fits(a.terms, grants.index.scheme_map, p.access.identity_used).ok
            ]
            if alts:
                ranked = rank_by_reach(
                    alts,
                    self._reach_of(p),
                    operation_id=p.found.entry.operation_id or p.found.entry.key,
                    identity=p.access.identity_used,
                    allow_admin=self.policy.allow_admin,
                    allow_role=self.policy.allow_role_bound,
                )
                best = choose_least_privilege(self.space, list(ranked.eligible), api=None) if ranked.eligible else None
                other = best.alternative.scopes if best is not None else None
            elif entry is not None:
                other_why = next(
                    (n for n in full.notes if "does not work with" in n or "not recorded" in n),
                    "the endpoint lists no permission of that family",
                )
        return {
            "picked": picked,
            "why": why,
            "other": {
                "family": "classic" if picked == "fine-grained" else "fine-grained",
                "scopes": other,
                "why": other_why,
            },
        }

    def _provider(self, p: Pending, requirements: Any) -> str:
        """Whose permissions these are: the catalog's provider, else what the scopes' spelling says."""
        if p.catalog is not None:
            return p.catalog.name
        for alt in requirements or ():
            for t in alt:
                for s in t.scopes:
                    hit = provider_of(s)
                    if hit:
                        return hit
        return ""

    def _reach_of(self, p: Pending) -> Any:
        """(scheme, scope) -> the scope's class, described by the provider where it knows the scope."""
        index = p.found.index
        # A scope's class depends on its spec, the catalog and the run's universes, not on the access:
        # one cache per (spec, catalog) for the whole card (800 accesses sharing 1,600 scopes classified
        # each scope 76 times). The pair is kept alive by the pending accesses, so ids are not reused.
        cache = self.reach_caches.setdefault((id(index), id(p.catalog)), {})

        def reach_of(scheme_name: str, scope: str) -> Reach:
            key = (scheme_name, scope)
            hit = cache.get(key)
            if hit is not None:
                return hit
            description = ""
            provider = ""
            app_only = False
            if p.catalog is not None:
                provider = p.catalog.name
                perm = p.catalog.permission(scheme_name, scope)
                description = perm.description if perm is not None else ""
                # Graph's application permissions, a GitHub App's installation token: only the app holds them.
                cs = p.catalog.scheme_map.get(scheme_name)
                app_only = cs is not None and cs.flow_kinds == frozenset({FlowKind.CLIENT_CREDENTIALS})
            else:
                # Zoom's `:admin` / `:master` suffixes: its own naming rule, by the spec's server.
                provider = provider_of_servers(index.extra.get("servers") or ())
                # A provider's own words over a spec's: a foreign spec may describe a provider's scope otherwise.
                description = next((u.descriptions[scope] for u in self.space.universes if scope in u.descriptions), "")
                if not description:
                    scheme = index.scheme_map.get(scheme_name)
                    description = (scheme.scope_description(scope) or "") if scheme is not None else ""
            hit = classify(scope, description or "", provider=provider, app_only=app_only)
            holder = index.scheme_map.get(scheme_name)
            if hit.principal is Principal.USER and holder is not None and _ADMIN_SCHEME.search(holder.description):
                # The token itself is an administrator's (Dropbox's team token): so is every scope on it.
                hit = replace(hit, principal=Principal.ADMIN, why=f"{hit.why}; its scheme: {holder.description}")
            cache[key] = hit
            return hit

        return reach_of

    def _part_of(self, p: Pending) -> Callable[[Alternative], str | None]:
        """alternative -> the other API whose part of the access's operation all its scopes do, if any
        (``providers.universe.Universe.part_of``: Cloud Storage's scopes on a BigQuery job)."""
        api = _api_of(self.space, p.found.entry)
        by_server = {u.server: u for u in self.space.universes}

        def part_of(alt: Alternative) -> str | None:
            homes: set[str | None] = set()
            for atom in alt.atoms:
                u = by_server.get(atom.namespace) if atom.is_scope else None
                homes.add(u.part_of((atom.namespace, atom.scope), api) if u is not None and api else None)
            return next(iter(homes)) if len(homes) == 1 else None

        return part_of

    def _rank(self, p: Pending, candidates: list[Alternative], listed: list[dict[str, Any]]) -> Ranked:
        """Rank the usable alternatives by what they reach (``derive.reach``), and say so."""
        a = p.access
        ranked = rank_by_reach(
            candidates,
            self._reach_of(p),
            operation_id=p.found.entry.operation_id or p.found.entry.key,
            identity=a.identity_used,
            allow_admin=self.policy.allow_admin,
            allow_role=self.policy.allow_role_bound,
            opted=lambda scope: (
                self.policy.slice_opted(a.id, p.resource.id, scope) or self.policy.made_available(scope)
            ),
            part_of=self._part_of(p),
            resource=str(p.found.entry.extra.get("access_from_type") or ""),
        )
        why = {alt.atoms: w for alt, w in ranked.set_aside}
        offered = {alt.atoms: rs for alt, rs in ranked.narrower}
        by_scopes = {tuple(alt.scopes): alt for alt in candidates}
        for item in listed:
            # An incompatible alternative of another scheme may name the same scopes (Graph's delegated and
            # application Mail.Read): it was never ranked, so it gets no class of the compatible one.
            alt = by_scopes.get(tuple(item["scopes"])) if item.get("compatible", True) else None
            item["reach"] = (
                {s: ranked.classes[s].to_dict() for s in item["scopes"] if s in ranked.classes} or None
                if alt is not None
                else None
            )
            item["set_aside"] = why.get(alt.atoms) if alt is not None else None
            rs = offered.get(alt.atoms) if alt is not None else None
            item["narrower"] = "; ".join(r.narrowing for r in rs) if rs else None
        if ranked.narrower and ranked.eligible:
            self.diags.append(
                (
                    NARROWER_OPTION(
                        a.loc.pointer,
                        f"access {a.id!r}: narrower permissions reach only part of the data: "
                        + "; ".join(
                            f"{_alt_label(alt)} ({', '.join(r.narrowing for r in rs)})" for alt, rs in ranked.narrower
                        )
                        + "; opt in with a policy [[slice]] if the agent stays inside one",
                        data={
                            "options": [
                                {"scopes": alt.scopes, "conditions": [r.narrowing for r in rs]}
                                for alt, rs in ranked.narrower
                            ]
                        },
                    ),
                    None,
                )
            )
        if ranked.fallback in ("admin", "role", "slice"):
            rule = {"admin": ADMIN_ONLY, "role": ROLE_ONLY}.get(ranked.fallback, SLICE_ONLY)
            roles = sorted(
                {r.condition for alt in ranked.eligible for r in _classes(ranked, alt) if r.principal is Principal.ROLE}
            )
            what = (
                "the pick is an administrator's permission (no user's own alternative does the job as "
                "narrowly): the operation acts on an organisation as its administrator"
                if ranked.fallback == "admin"
                else "the pick is a role-bound permission (no ordinary account's alternative does the job as "
                "narrowly): " + ("; ".join(roles) or "only the holder of a role can use it")
                if ranked.fallback == "role"
                else "every alternative reaches only part of the data: "
                + "; ".join(sorted({ranked.classes[s].narrowing for alt in ranked.eligible for s in alt.scopes} - {""}))
            )
            self.diags.append((rule(a.loc.pointer, f"access {a.id!r}: {what}"), None))
        return ranked

    def _suspect(self, p: Pending, choice: Choice, ranked: Ranked, space: GrantSpace, api: str | None) -> Choice:
        """A read permission as least for a method that writes, from a provider's catalog: say so and
        pick the write permission of the same family when one is listed.

        A POST whose action reads (Graph's ``checkMemberGroups``, ``getCachedReport``,
        ``getPresencesByUserId``: OData actions that return data) is no write, and a write permission
        of another family is no reading of the same data: neither is suspect or picked."""
        entry = p.catalog_entry
        if entry is None:
            return self._foreign_read(p, choice, ranked, space, api)
        picked = _reads_only(choice, ranked)
        if not _writes(entry.method, entry.path.rstrip("/").rsplit("/", 1)[-1]) or not picked:
            return choice
        families = {permission_family(r.scope) for r in picked}

        def marked(alt: Alternative) -> bool:
            return bool(alt.terms) and all(set(t.scopes) <= set(entry.least.get(t.scheme, ())) for t in alt.terms)

        # The provider's own mark on a set that writes (AppRoleAssignment.ReadWrite.All with
        # Application.Read.All to assign an app role; BookingsAppointment.ReadWrite.All to update a
        # booking customer) first, then the read's family's write.
        better = _set_aside_writer(ranked, space, api, marked, partly=True) or _set_aside_writer(
            ranked, space, api, lambda alt: all(permission_family(s) in families for s in alt.scopes)
        )
        self.diags.append(
            (
                PROVIDER_DATA_SUSPECT(
                    p.access.loc.pointer,
                    f"access {p.access.id!r}: the provider's data makes the read permission "
                    f"{_alt_label(choice.alternative)} "
                    f"least for {entry.method} {entry.path}, a method that writes"
                    + (
                        f"; read as a write, the write permission of its family {_alt_label(better.alternative)} "
                        "is picked"
                        if better
                        else "; no write permission of its family is listed, so the read one is kept"
                    ),
                    data={"read": choice.alternative.scopes, "write": better.alternative.scopes if better else None},
                ),
                None,
            )
        )
        return better or choice

    def _foreign_read(self, p: Pending, choice: Choice, ranked: Ranked, space: GrantSpace, api: str | None) -> Choice:
        """A universe's method that writes, whose least alternative is a read permission of another API:
        Slides' ``presentations.batchUpdate`` lists ``spreadsheets.readonly`` (a linked chart reads a
        sheet beside the write), which is no way to edit a presentation. Say so, and pick the write
        permission at home in the access's own API."""
        e = p.found.entry
        if api is None:
            return self._listed_read(p, choice, ranked, space)
        if not _writes(e.method, (e.operation_id or "").rsplit(".", 1)[-1]) or not _reads_only(choice, ranked):
            return choice
        if space.is_home(choice.alternative, api):
            return choice
        better = _set_aside_writer(ranked, space, api, lambda alt: space.is_home(alt, api))
        self.diags.append(
            (
                PROVIDER_DATA_SUSPECT(
                    p.access.loc.pointer,
                    f"access {p.access.id!r}: the provider lists the read permission {_alt_label(choice.alternative)}, "
                    f"of another API, for {e.operation_id or e.key}, a method that writes"
                    + (
                        f"; read as a write of {api}, its write permission {_alt_label(better.alternative)} is picked"
                        if better
                        else f"; no write permission of {api} is listed, so the read one is kept"
                    ),
                    data={"read": choice.alternative.scopes, "write": better.alternative.scopes if better else None},
                ),
                None,
            )
        )
        return better or choice

    def _listed_read(self, p: Pending, choice: Choice, ranked: Ranked, space: GrantSpace) -> Choice:
        """A spec's any-of list that names a read permission beside write ones for a method that only
        writes (DELETE, PUT, PATCH): Sentry lists ``org:read`` among the scopes of deleting a detector,
        because an organisation setting may let members with it edit alerts. The read is no way to
        delete by itself: say so, and pick the least of the listed write permissions.

        A POST counts only in an OpenAPI spec and when its operation does not name a read (Slack's,
        Dropbox's and GraphQL's reads are POSTs; so are searches)."""
        e = p.found.entry
        last = re.split(r"[./ ]", (e.operation_id or e.path).rstrip("/"))[-1] or e.path
        post = p.found.index.kind is SpecKind.OPENAPI
        if not _writes(e.method, last[:1].lower() + last[1:], post=post) or not _reads_only(choice, ranked):
            return choice
        better = _set_aside_writer(ranked, space, None, lambda alt: True)
        if better is None:
            return choice
        self.diags.append(
            (
                PROVIDER_DATA_SUSPECT(
                    p.access.loc.pointer,
                    f"access {p.access.id!r}: the spec lists the read permission {_alt_label(choice.alternative)} "
                    f"as one way to {e.method} {e.path}, a method that writes (a provider setting may let it); "
                    f"read as a write, the least write permission listed, {_alt_label(better.alternative)}, is picked",
                    data={"read": choice.alternative.scopes, "write": better.alternative.scopes},
                ),
                None,
            )
        )
        return better

    def _note_permissions(self, cat: Catalog, candidates: Sequence[Alternative]) -> None:
        """What the catalog says of each scope a tier may pick for this access (name, admin consent).

        Keyed by the grant (the atom: namespace and scope), not the scope string: Graph's delegated
        Mail.Read needs no administrator, its application twin (another namespace) does."""
        for alt in candidates:
            for atom in alt.atoms:
                perm = cat.permission(atom.scheme, atom.scope) if atom.is_scope else None
                if perm is not None:
                    info = self.scope_info.setdefault(atom, {"name": perm.short, "admin_consent": False})
                    info["admin_consent"] = info["admin_consent"] or perm.admin_consent

    def _provider_least(
        self,
        p: Pending,
        space: GrantSpace,
        candidates: Sequence[Alternative],
        choice: Choice,
        api: str | None,
        method: str,
        effects: list[dict[str, Any]],
        ranked: Ranked | None = None,
    ) -> tuple[Choice, str]:
        """Where the provider marks permissions least privileged for this endpoint and scheme, choose
        among those by grant set; say so when the unrestricted lattice would have chosen otherwise.

        ``candidates`` are what :func:`~ramscope.derive.reach.rank_by_reach` left: the general,
        lowest-level alternatives. A mark on one it set aside (limited, a slice, a higher level) does
        not win; a mark on a permission of another resource family than the endpoint's, where one of
        the endpoint's own family is eligible, is suspect and yields to it."""
        entry = p.catalog_entry
        assert entry is not None

        def is_marked(alt: Alternative) -> bool:
            return bool(alt.terms) and all(
                t.scopes and set(t.scopes) <= set(entry.least.get(t.scheme, ())) for t in alt.terms
            )

        marked = [alt for alt in candidates if is_marked(alt)]
        if not marked and ranked is not None:
            # A general permission set aside only because a slice the operation stays inside does the job
            # (User.Read on every /me operation) still wins where the provider marks it: Files.Read for
            # GET /me/drives, whose data the signed-in user's profile does not reach.
            marked = [alt for alt, why in ranked.set_aside if why == CONFINED and is_marked(alt)]
        if not marked:
            return self._marks_set_aside(p, space, candidates, choice, api, method, ranked)
        marked = self._family_consistent(p, candidates, marked)
        best = choose_least_privilege(space, marked, api=api)
        assert best is not None
        effects.append({"effect": "provider-least", "scopes": sorted({s for m in marked for s in m.scopes})})
        if best.alternative.atoms != choice.alternative.atoms:
            self.diags.append(
                (
                    CATALOG_LEAST_DIFFERS(
                        p.access.loc.pointer,
                        f"access {p.access.id!r}: the provider marks {', '.join(_alt_label(m) for m in marked)} least "
                        f"privileged for {entry.method} {entry.path}; the narrowest by grant set is "
                        f"{_alt_label(choice.alternative)} ({choice.granted.bit_count()} operations, against "
                        f"{best.granted.bit_count()}); the provider's mark is used",
                        data={"marked": [m.scopes for m in marked], "lattice": choice.alternative.scopes},
                    ),
                    None,
                )
            )
        return best, "provider-least"

    def _marks_set_aside(
        self,
        p: Pending,
        space: GrantSpace,
        candidates: Sequence[Alternative],
        choice: Choice,
        api: str | None,
        method: str,
        ranked: Ranked | None,
    ) -> tuple[Choice, str]:
        """The provider marks only alternatives the ranking set aside (Graph's ``Mail.ReadBasic`` and
        ``Mail.ReadWrite`` on GET /me/messages): among the eligible, the marked permissions' kin (the
        same resource family: ``Mail.Read``) before any other, and the marks' fate said."""
        entry = p.catalog_entry
        if entry is None or ranked is None:
            return choice, method
        schemes = {t.scheme for alt in candidates for t in alt.terms}
        why = {alt.atoms: w for alt, w in ranked.set_aside}
        for alt, rs in ranked.narrower:
            why[alt.atoms] = "reaches only part of the data: " + "; ".join(r.narrowing for r in rs)
        alts = [
            alt
            for alt in (*(a for a, _ in ranked.set_aside), *(a for a, _ in ranked.narrower))
            if alt.terms
            and all(t.scheme in schemes and set(t.scopes) <= set(entry.least.get(t.scheme, ())) for t in alt.terms)
        ]
        if not alts:
            return choice, method
        # Kin: a family that begins like a marked one's (Group of Group-NestingSupport, ChatMember of Chat).
        families = {permission_family(s) for alt in alts for s in alt.scopes}
        kin = [
            alt
            for alt in candidates
            if alt.scopes and all(any(permission_family(s).startswith(f) for f in families) for s in alt.scopes)
        ]
        # The marked family itself before its kin (Group.Read.All before GroupMember.Read.All), and the
        # user's own data before the broader forms (Calendars.Read before Calendars.Read.Shared).
        exact = [alt for alt in kin if all(permission_family(s) in families for s in alt.scopes)]
        kin = exact or kin
        own = [alt for alt in kin if not any(s.endswith((".Shared", ".All")) for s in alt.scopes)]
        kin = own or kin
        best = choose_least_privilege(space, kin, api=api) if kin else None
        if best is not None:
            choice, method = best, "provider-least"
        self.diags.append(
            (
                CATALOG_LEAST_DIFFERS(
                    p.access.loc.pointer,
                    f"access {p.access.id!r}: the provider marks "
                    + "; ".join(f"{_alt_label(alt)} ({why[alt.atoms]})" for alt in alts)
                    + f" least privileged for {entry.method} {entry.path}, but none of them does the job in general; "
                    + (
                        f"{_alt_label(choice.alternative)}, of the same family, is used"
                        if best is not None
                        else f"{_alt_label(choice.alternative)} is used"
                    ),
                    data={"marked": [alt.scopes for alt in alts], "lattice": choice.alternative.scopes},
                ),
                None,
            )
        )
        return choice, method

    def _family_consistent(
        self, p: Pending, candidates: Sequence[Alternative], marked: list[Alternative]
    ) -> list[Alternative]:
        """The marked alternatives, unless they all belong to another resource family than the endpoint
        (``Calendars.ReadWrite`` marked on a mail upload session) while an eligible one of its own family
        is listed: then those, with both readings stated."""
        entry = p.catalog_entry
        assert entry is not None
        assert p.catalog is not None
        families = endpoint_families(p.catalog.name, entry.path)
        if not families:
            return self._named_family(p, candidates, marked)

        def own(alt: Alternative) -> bool:
            return bool(alt.scopes) and all(permission_family(s) in families for s in alt.scopes)

        # Only a family the table knows tells something by its absence: a sub-resource has its own
        # family (ProfilePhoto on /groups/{id}/photo, Tasks on /groups/{id}/planner, GroupMember on owners).
        if any(own(m) or not all(family_known(p.catalog.name, permission_family(s)) for s in m.scopes) for m in marked):
            return marked
        consistent = [alt for alt in candidates if own(alt)]
        if not consistent:
            return marked
        self.diags.append(
            (
                PROVIDER_DATA_SUSPECT(
                    p.access.loc.pointer,
                    f"access {p.access.id!r}: the provider marks {', '.join(_alt_label(m) for m in marked)} least "
                    f"privileged for {entry.method} {entry.path}, a permission of another resource family than "
                    f"the endpoint's ({', '.join(sorted(families))}); read as the provider wrote it, the pick would be "
                    f"{' or '.join(_alt_label(m) for m in marked)}; read by the endpoint's family, "
                    f"{' or '.join(_alt_label(c) for c in consistent)}, which is picked",
                    data={"marked": [m.scopes for m in marked], "family": [c.scopes for c in consistent]},
                ),
                None,
            )
        )
        return consistent

    def _named_family(
        self, p: Pending, candidates: Sequence[Alternative], marked: list[Alternative]
    ) -> list[Alternative]:
        """The family check where the table knows none of the path's words: an endpoint whose own resource
        (its last segment) is named by a listed family (``Organization`` for GET /organization) is that
        family's; a mark on a family no segment names and that is no kin of it
        (``DeviceManagementServiceConfig.Read.All``) yields to the eligible ones of that family."""
        entry = p.catalog_entry
        assert entry is not None
        segments = [seg.lower() for seg in entry.path.split("/") if seg and not seg.startswith("{")]
        if not segments:
            return marked
        last = segments[-1].rsplit(".", 1)[-1]
        words = {last, last.removesuffix("s"), last + "s"}
        own_families = {
            permission_family(s) for alt in candidates for s in alt.scopes if permission_family(s).lower() in words
        }
        if not own_families:
            return marked

        def foreign(scope: str) -> bool:
            fam = permission_family(scope)
            return not any(fam.startswith(f) or f.startswith(fam) for f in own_families) and not any(
                fam.lower() in seg for seg in segments
            )

        if not all(m.scopes and all(foreign(s) for s in m.scopes) for m in marked):
            return marked
        consistent = [
            alt for alt in candidates if alt.scopes and all(permission_family(s) in own_families for s in alt.scopes)
        ]
        if not consistent:
            return marked
        self.diags.append(
            (
                PROVIDER_DATA_SUSPECT(
                    p.access.loc.pointer,
                    f"access {p.access.id!r}: the provider marks {', '.join(_alt_label(m) for m in marked)} least "
                    f"privileged for {entry.method} {entry.path}, a permission of another resource family than the "
                    f"one the endpoint names ({', '.join(sorted(own_families))}); read as the provider wrote it, the "
                    f"pick would be {' or '.join(_alt_label(m) for m in marked)}; read by the endpoint's family, "
                    f"{' or '.join(_alt_label(c) for c in consistent)}, which is picked",
                    data={"marked": [m.scopes for m in marked], "family": [c.scopes for c in consistent]},
                ),
                None,
            )
        )
        return consistent

    def _pin(self, a: ResourceAccess, op: Operation) -> Pin | None:
        pin = self.policy.pin_for(a.id, op.id)
        if pin is not None:
            self.used_pins.add(self.policy.pins.index(pin))
        return pin

    def _pinned_alternative(
        self,
        a: ResourceAccess,
        grants: SpecGrants,
        requirements: Any,
        pin: Pin,
        effects: list[dict[str, Any]],
    ) -> Alternative:
        wanted = set(pin.scopes)
        for alt in grants.alternatives_of(requirements) if requirements else []:
            if set(alt.scopes) == wanted and (wanted or not alt.atoms):
                effects.append({"effect": "pinned", "scopes": sorted(wanted), "reason": pin.reason or None})
                return alt
        if not wanted:
            # The reviewer asserts that no authorization is needed.
            if requirements == ():
                effects.append({"effect": "pinned", "scopes": [], "reason": pin.reason or None})
            else:
                self.diags.append(
                    (
                        PIN_NOT_ALTERNATIVE(
                            a.loc.pointer,
                            f"access {a.id!r}: the policy asserts that no authorization is needed, which the spec "
                            "does not declare; the assertion is used as the policy says",
                        ),
                        None,
                    )
                )
                effects.append({"effect": "pinned", "scopes": [], "declared": False, "reason": pin.reason or None})
            return Alternative(frozenset(), ())
        scheme = pin.scheme or next(
            (s.name for s in grants.index.schemes if s.type in (SchemeType.OAUTH2, SchemeType.OPENID_CONNECT)),
            "pinned",
        )
        terms = (SchemeRequirement.of(scheme, pin.scopes),)
        self.diags.append(
            (
                PIN_NOT_ALTERNATIVE(
                    a.loc.pointer,
                    f"access {a.id!r}: pinned scopes {sorted(wanted)} are not one of the operation's declared "
                    "alternatives; they are used as the policy says",
                ),
                None,
            )
        )
        effects.append({"effect": "pinned", "scopes": sorted(wanted), "declared": False, "reason": pin.reason or None})
        return Alternative(grants.atoms_of(terms), terms)

    def _not_available(
        self,
        a: ResourceAccess,
        p: Pending | None,
        alternatives: list[Alternative],
        effects: list[dict[str, Any]],
    ) -> str:
        """Why nothing the policy makes available does the access's job, naming the least permission
        that would (ranked and chosen as if ``available`` said nothing) and what it costs."""
        eligible = alternatives
        if p is not None:
            ranked = rank_by_reach(
                alternatives,
                self._reach_of(p),
                operation_id=p.found.entry.operation_id or p.found.entry.key,
                identity=a.identity_used,
                allow_admin=self.policy.allow_admin,
                opted=lambda scope: self.policy.slice_opted(a.id, p.resource.id, scope),
            )
            eligible = list(ranked.eligible) or alternatives
        api = _api_of(self.space, p.found.entry) if p is not None else None
        choice = choose_least_privilege(self.space, eligible, api=api)
        needed = choice.alternative if choice is not None else alternatives[0]
        costs = alternative_costs(needed, a.identity_used.name)
        effects.append({"effect": "not-available", "needed": {"scopes": needed.scopes, "costs": costs}})
        said = "; ".join(
            f"{c['scope']} ({c['provider']}: {c['class']}"
            + (f", triggers {', '.join(c['triggers'])}" if c.get("triggers") else "")
            + ")"
            if c.get("class")
            else f"{c['scope']} (cost unclassified)"
            for c in costs
        )
        return (
            "nothing the policy makes available does this access's job; the least permission that would is "
            + (said or _alt_label(needed))
            + ": add it to the policy's available list (and have the app approved for it)"
        )

    def _filter(
        self,
        a: ResourceAccess,
        grants: SpecGrants,
        alternatives: list[Alternative],
        effects: list[dict[str, Any]],
        pending: Pending | None = None,
    ) -> tuple[list[Alternative], list[dict[str, Any]], tuple[str, str] | None]:
        """Identity and policy filtering; every alternative is listed with why it was kept or not."""
        identity = a.identity_used
        listed: list[dict[str, Any]] = []
        usable: list[Alternative] = []
        incompatible = excluded = 0
        unavailable: list[Alternative] = []
        whys: list[str] = []
        for alt in alternatives:
            entry: dict[str, Any] = {
                "scopes": alt.scopes,
                "credentials": _credentials(alt.atoms),
                "granted_operations": grants.granted(alt.atoms).bit_count(),
                "universe_operations": self.space.granted(alt.atoms).bit_count(),
            }
            fit = fits(alt.terms, grants.index.scheme_map, identity)
            ok = fit.ok
            entry["compatible"] = None if identity is IdentityType.IDENTITY_TYPE_UNSPECIFIED else ok
            if not ok:
                entry["why_not"] = fit.why
                whys.append(fit.why)
            hit = next((g for s in alt.scopes if (g := self.policy.excluded_by(s))), None)
            entry["excluded_by"] = hit
            listed.append(entry)
            if not ok:
                incompatible += 1
                continue
            if hit is not None:
                excluded += 1
                effects.append({"effect": "excluded", "scopes": alt.scopes, "rule": hit})
                continue
            if self.policy.available and not all(
                self.policy.is_available(t.namespace, t.scope) for t in alt.atoms if t.is_scope
            ):
                # The app's client is not approved for it (policy ``available``): never a candidate.
                entry["available"] = False
                unavailable.append(alt)
                continue
            usable.append(alt)
        if identity is IdentityType.IDENTITY_TYPE_UNSPECIFIED:
            return [], listed, ("identity-unspecified", "the access does not say whose identity it uses")
        if not usable and unavailable:
            return [], listed, ("not-available", self._not_available(a, pending, unavailable, effects))
        if not usable:
            if excluded and not incompatible:
                return (
                    [],
                    listed,
                    (
                        "all-alternatives-excluded",
                        "every alternative of the operation is excluded by the policy",
                    ),
                )
            kinds = sorted({t.scheme for alt in alternatives for t in alt.terms})
            notes = list(pending.catalog_entry.notes) if pending and pending.catalog_entry else []
            return (
                [],
                listed,
                (
                    "no-compatible-alternative",
                    f"no alternative fits identity {identity.name} (schemes: {', '.join(kinds)}"
                    + (f"; {'; '.join(sorted(set(whys)))}" if whys else "")
                    + ")"
                    + (f"; {excluded} more excluded by policy" if excluded else "")
                    + "".join(f"; {n}" for n in notes),
                ),
            )
        if unavailable:
            effects.append({"effect": "not-available", "scopes": sorted({s for u in unavailable for s in u.scopes})})
        preferred = [alt for alt in usable if self.policy.preferred(alt.scopes)]
        if preferred and len(preferred) < len(usable):
            effects.append({"effect": "preferred", "scopes": sorted({s for p in preferred for s in p.scopes})})
            usable = preferred
        return usable, listed, None


#: The last segment of a POST that reads: an OData action returning data (Graph's checkMemberGroups,
#: getByIds, getCachedReport, getPresencesByUserId, validateProperties, preview ...), lower-cased as
#: the catalog keys it; a drive item's checkin and checkout write.
_READ_ACTION = re.compile(
    r"^(?:get|check(?!in|out)|list|search|find|query|lookup|retrieve|preview|evaluate|compute|calculate|validate|"
    r"translate|extract|read(?![a-z]))"  # HubSpot's POST .../batch/read reads records by id
)
#: A scheme whose own description says an administrator authorizes it (Dropbox's team token).
_ADMIN_SCHEME = re.compile(r"\b(?:by|as) an? (?:team |organi[sz]ation )?administrator\b", re.IGNORECASE)


def _writes(method: str, name: str, *, post: bool = True) -> bool:
    """Does the method write: DELETE, PATCH, PUT, or (where ``post``) a POST whose operation ``name``
    names no read (an OData action or a search that returns data is no write)."""
    if method == "POST":
        return post and not _READ_ACTION.match(name)
    return method in ("DELETE", "PATCH", "PUT")


def _reads_only(choice: Choice, ranked: Ranked) -> list[Reach]:
    """The classes of the pick's scopes when every one is a read permission, else ``[]``."""
    picked = [ranked.classes[s] for s in choice.alternative.scopes if s in ranked.classes]
    return picked if picked and all(r.level.name == "READ" for r in picked) else []


def _set_aside_writer(
    ranked: Ranked, space: GrantSpace, api: str | None, keep: Callable[[Alternative], bool], *, partly: bool = False
) -> Choice | None:
    """The least of the write permissions the ranking set aside for a listed read, among those ``keep``
    accepts (the read's family, or the access's own API): what a suspect read is read as. ``partly``:
    a set with one write permission beside reads (a write and the read of what it writes to) counts."""
    level_of = ranked.classes

    def writes(alt: Alternative) -> bool:
        levels = [level_of[s].level.name if s in level_of else "" for s in alt.scopes]
        return "WRITE" in levels and (partly or set(levels) == {"WRITE"}) and set(levels) <= {"WRITE", "READ"}

    writers = [
        alt
        for alt, why in ranked.set_aside
        if alt.scopes and writes(alt) and keep(alt) and not why.startswith(_UNHOLDABLE)
    ]
    return choose_least_privilege(space, writers, api=api) if writers else None


#: How the ranking sets aside what the access's identity cannot hold at all (an app's own permission,
#: for a user's delegation): no reading of a suspect read makes it the pick, nor a tier's.
_UNHOLDABLE = "only an app authenticating as itself can hold it"


def _tier_alternatives(
    candidates: Sequence[Alternative], choice: Choice, ranked: Ranked | None
) -> tuple[Alternative, ...]:
    """What a tier may satisfy the access with: only what its own choice judged able to do the job.

    While the pick is one of the ranked eligible alternatives, those. Where a later step reached past
    them (a write the ranking set aside by level, picked because the method writes: HubSpot's
    ``batch/archive``, Slides' ``batchUpdate``; a provider's mark on a general permission where a slice
    was eligible), the eligible ones were judged unable, and a tier holding one for another access
    must not satisfy this one with it: then the pick and its rivals set aside for the same reason."""
    own = choice.alternative
    if any(alt.atoms == own.atoms for alt in candidates):
        return tuple(candidates)
    why = {alt.atoms: w for alt, w in ranked.set_aside} if ranked is not None else {}
    reason = why.get(own.atoms)
    rivals = [alt for alt, _ in choice.rivals if reason is not None and why.get(alt.atoms) == reason]
    return (own, *(alt for alt in rivals if alt.atoms != own.atoms))


def _api_of(space: GrantSpace, entry: OperationEntry) -> str | None:
    """The access's own API in a universe (Google: the Discovery API of its method id)."""
    if not entry.operation_id:
        return None
    for u in space.universes:
        api = u.api_of(entry.operation_id)
        if api is not None:
            return api
    return None


def _touches(u: Universe, alt: Alternative) -> bool:
    return any(u.by_scope.get((atom.namespace, atom.scope)) for atom in alt.atoms if atom.is_scope)


def _rival(alt: Alternative, mask: int, best: int, ranked: Ranked | None) -> dict[str, Any]:
    return {
        "scopes": alt.scopes,
        "credentials": _credentials(alt.atoms),
        "universe_operations": mask.bit_count(),
        "relation": "equal" if mask == best else "incomparable",
    } | ({"reach": ranked.reach_json(alt)} if ranked is not None else {})


def _classes(ranked: Ranked, alt: Alternative) -> list[Reach]:
    return [ranked.classes[s] for s in alt.scopes if s in ranked.classes]


def _reach_json(ranked: Ranked, alt: Alternative) -> dict[str, Any]:
    """What the choice says of classes: the pick's, the narrower options, the fallback."""
    return {
        "reach": ranked.reach_json(alt),
        "narrower": [
            {
                "scopes": o.scopes,
                "conditions": [r.narrowing for r in rs],
                "limits": sorted({x for r in rs for x in r.limits}),
            }
            for o, rs in ranked.narrower
        ],
        "fallback": ranked.fallback or None,
    }


def _scope_names(p: Pending, alt: Alternative) -> dict[str, str]:
    if p.catalog is None:
        return {}
    out: dict[str, str] = {}
    for t in alt.terms:
        for scope in t.scopes:
            perm = p.catalog.permission(t.scheme, scope)
            if perm is not None and perm.short != scope:
                out[scope] = perm.short
    return out


def _admin_consent(p: Pending, alt: Alternative) -> list[str]:
    if p.catalog is None:
        return []
    return sorted(
        scope
        for t in alt.terms
        for scope in t.scopes
        if (perm := p.catalog.permission(t.scheme, scope)) is not None and perm.admin_consent
    )
