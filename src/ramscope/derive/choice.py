"""Stage 2 of a card: the grant space, then each resolved access's least-privilege choice
(identity and policy filtering, pins, the provider's least-privilege marks)."""

from __future__ import annotations

import re
from collections.abc import Sequence
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
from ..policy import Pin
from ..privilege import (
    AMBIGUOUS,
    Alternative,
    Choice,
    GrantSpace,
    SpecGrants,
    choose_least_privilege,
    fits,
)
from ..providers.catalog import Catalog
from ..providers.reach import Principal, Reach, classify, operation_note, provider_of
from ..providers.universe import Universe
from ..specs.model import OperationEntry, SchemeRequirement, SchemeType, SpecKind
from . import sources
from .borrowing import described
from .reach import Ranked, rank_by_reach
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
        if p.catalog is not None:
            self._note_permissions(p.catalog, candidates)
        api = _api_of(space, entry)
        choice = choose_least_privilege(space, candidates, api=api) if candidates else None
        if choice is not None and p.catalog_entry is not None and pin is None:
            choice, method = self._provider_least(p, space, candidates, choice, api, method, effects)
        if choice is not None and ranked is not None:
            choice = self._suspect(p, choice, ranked, space, api)
        if choice is not None and pin is None:
            choice, ctx_diag = sources.contextual_choice(a, entry, space, candidates, choice)
            if ctx_diag is not None:
                self.diags.append((ctx_diag, None))
            record_kw["requirements_source"] = sources.pick_source(choice.alternative, entry, source)
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
        if choice.rivals and ctx_diag is None:
            names = [_alt_label(alt)] + [_alt_label(r) for r, _ in choice.rivals]
            self.diags.append(
                (
                    AMBIGUOUS(
                        a.loc.pointer,
                        f"access {a.id!r}: the narrowest alternatives grant equal or incomparable sets of "
                        "operations across their authorization servers: "
                        + ", ".join(names)
                        + f"; picked {names[0]} (smallest grant set, then scopes of the access's own API, "
                        "then fewest scopes, then name)",
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
                "rivals": [_rival(r, m, choice.granted, ranked) for r, m in choice.rivals],
            }
            | (_reach_json(ranked, alt) if ranked is not None else {}),
            scope_servers={atom.scope: atom.namespace for atom in sorted(alt.atoms) if atom.is_scope},
            scope_names=_scope_names(p, alt),
            admin_consent=_admin_consent(p, alt),
        )
        return Outcome(a, key, record, grants, tuple(candidates), alt)

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
        cache: dict[tuple[str, str], Reach] = {}

        def reach_of(scheme_name: str, scope: str) -> Reach:
            key = (scheme_name, scope)
            hit = cache.get(key)
            if hit is not None:
                return hit
            description = ""
            provider = ""
            if p.catalog is not None:
                provider = p.catalog.name
                perm = p.catalog.permission(scheme_name, scope)
                description = perm.description if perm is not None else ""
            else:
                # A provider's own words over a spec's: a foreign spec may describe a provider's scope otherwise.
                description = next((u.descriptions[scope] for u in self.space.universes if scope in u.descriptions), "")
                if not description:
                    scheme = index.scheme_map.get(scheme_name)
                    description = (scheme.scope_description(scope) or "") if scheme is not None else ""
            hit = classify(scope, description or "", provider=provider)
            holder = index.scheme_map.get(scheme_name)
            if hit.principal is Principal.USER and holder is not None and _ADMIN_SCHEME.search(holder.description):
                # The token itself is an administrator's (Dropbox's team token): so is every scope on it.
                hit = replace(hit, principal=Principal.ADMIN, why=f"{hit.why}; its scheme: {holder.description}")
            cache[key] = hit
            return hit

        return reach_of

    def _rank(self, p: Pending, candidates: list[Alternative], listed: list[dict[str, Any]]) -> Ranked:
        """Rank the usable alternatives by what they reach (``derive.reach``), and say so."""
        a = p.access
        ranked = rank_by_reach(
            candidates,
            self._reach_of(p),
            operation_id=p.found.entry.operation_id or p.found.entry.key,
            identity=a.identity_used,
            allow_admin=self.policy.allow_admin,
            opted=lambda scope: self.policy.slice_opted(a.id, p.resource.id, scope),
        )
        why = {alt.atoms: w for alt, w in ranked.set_aside}
        offered = {alt.atoms: rs for alt, rs in ranked.narrower}
        by_scopes = {tuple(alt.scopes): alt for alt in candidates}
        for item in listed:
            alt = by_scopes.get(tuple(item["scopes"]))
            item["reach"] = {s: ranked.classes[s].to_dict() for s in item["scopes"] if s in ranked.classes} or None
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
        if ranked.fallback in ("admin", "slice"):
            rule = ADMIN_ONLY if ranked.fallback == "admin" else SLICE_ONLY
            what = (
                "the pick is an administrator's permission (no user's own alternative does the job as "
                "narrowly): the operation acts on an organisation as its administrator"
                if ranked.fallback == "admin"
                else "every alternative reaches only part of the data: "
                + "; ".join(sorted({ranked.classes[s].narrowing for alt in ranked.eligible for s in alt.scopes} - {""}))
            )
            self.diags.append((rule(a.loc.pointer, f"access {a.id!r}: {what}"), None))
        return ranked

    def _suspect(self, p: Pending, choice: Choice, ranked: Ranked, space: GrantSpace, api: str | None) -> Choice:
        """A read permission as least for a method that writes, from a provider's catalog: say so and
        pick the write permission of the same family when one is listed."""
        entry = p.catalog_entry
        if entry is None or entry.method not in ("DELETE", "POST", "PATCH", "PUT"):
            return choice
        picked = [ranked.classes[s] for s in choice.alternative.scopes if s in ranked.classes]
        if not picked or any(r.level.name != "READ" for r in picked):
            return choice
        writers = [
            alt
            for alt, _why in ranked.set_aside
            if alt.scopes and all(s in ranked.classes and ranked.classes[s].level.name == "WRITE" for s in alt.scopes)
        ]
        better = choose_least_privilege(space, writers, api=api) if writers else None
        self.diags.append(
            (
                PROVIDER_DATA_SUSPECT(
                    p.access.loc.pointer,
                    f"access {p.access.id!r}: the provider's data makes the read permission "
                    f"{_alt_label(choice.alternative)} "
                    f"least for {entry.method} {entry.path}, a method that writes"
                    + (
                        f"; the write permission {_alt_label(better.alternative)} is picked"
                        if better
                        else "; no write permission is listed"
                    ),
                    data={"read": choice.alternative.scopes, "write": better.alternative.scopes if better else None},
                ),
                None,
            )
        )
        return better or choice

    def _note_permissions(self, cat: Catalog, candidates: Sequence[Alternative]) -> None:
        """What the catalog says of each scope a tier may pick for this access (name, admin consent)."""
        for alt in candidates:
            for t in alt.terms:
                for scope in t.scopes:
                    perm = cat.permission(t.scheme, scope)
                    if perm is not None:
                        info = self.scope_info.setdefault(scope, {"name": perm.short, "admin_consent": False})
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
    ) -> tuple[Choice, str]:
        """Where the provider marks permissions least privileged for this endpoint and scheme, choose
        among those by grant set; say so when the unrestricted lattice would have chosen otherwise."""
        entry = p.catalog_entry
        assert entry is not None
        marked = [
            alt
            for alt in candidates
            if alt.terms and all(t.scopes and set(t.scopes) <= set(entry.least.get(t.scheme, ())) for t in alt.terms)
        ]
        if not marked:
            return choice, method
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
            usable.append(alt)
        if identity is IdentityType.IDENTITY_TYPE_UNSPECIFIED:
            return [], listed, ("identity-unspecified", "the access does not say whose identity it uses")
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
        preferred = [alt for alt in usable if self.policy.preferred(alt.scopes)]
        if preferred and len(preferred) < len(usable):
            effects.append({"effect": "preferred", "scopes": sorted({s for p in preferred for s in p.scopes})})
            usable = preferred
        return usable, listed, None


#: A scheme whose own description says an administrator authorizes it (Dropbox's team token).
_ADMIN_SCHEME = re.compile(r"\b(?:by|as) an? (?:team |organi[sz]ation )?administrator\b", re.IGNORECASE)


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
