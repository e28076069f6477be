"""Stage 1 of a card: each access to its operation (and, where the spec declares no security, to
the provider catalog's requirements), or unresolved with a reason; the card's spec records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .. import providers
from ..diagnostics import Severity
from ..errors import SpecError
from ..manifest import (
    ResourceAccess,
)
from ..outputs.report import (
    AccessRecord,
    SpecRecord,
)
from ..providers.catalog import Catalog
from ..specs.model import SpecKind, reqs_to_json
from ..store import kind_for_protocol
from ..store.model import rfc3339
from ..validate import check_spec_url
from .records import (
    _enum_name,
)
from .resolve import Unresolved, resolve, spec_url_for, unresolved_for_error
from .rules import (
    ACCESS_UNRESOLVED,
    CATALOG_NO_ENTRY,
    CATALOG_OVERRIDES_SPEC,
)
from .state import Outcome, Pending, RunState

#: A card gets nearest-operation suggestions for at most this many unresolved accesses: each is a
#: similarity search over the spec's operations, and a hostile card can hold 100,000 accesses.
MAX_SUGGESTED_ACCESSES = 25


class Resolution(RunState):
    """Access → operation, catalog requirements, unresolved accesses, spec records."""

    def _access(self, i: int, a: ResourceAccess) -> Outcome | Pending:
        m = self.card.manifest
        op = m.operation(a.operation)
        res = m.resource(op.resource) if op is not None else None
        base: dict[str, Any] = {
            "id": a.id,
            "operation": a.operation,
            "resource": op.resource if op is not None else "",
            "display_name": res.display_name if res is not None else "",
            "owner": _enum_name(res.owner) if res is not None else "RESOURCE_OWNER_UNSPECIFIED",
            "identity": _enum_name(a.identity_used),
            "necessity": _enum_name(a.necessity),
            "confirmation_required": a.confirmation_required,
            "justification": a.access_justification,
        }
        key = f"{i}:{a.id}"
        if op is None or res is None:
            what = f"operation {a.operation!r}" if op is None else f"resource {op.resource!r}"
            return self._unresolved(a, key, base, "invalid-reference", f"the manifest defines no {what}")
        url = spec_url_for(res, op)
        base["spec_url"] = url or None
        if not url:
            return self._unresolved(a, key, base, "missing-spec-url", f"resource {res.id!r} has no spec_url")
        url_problems = [d for d in check_spec_url(url, "") if d.severity is Severity.ERROR]
        if url_problems:
            return self._unresolved(a, key, base, "invalid-spec-url", url_problems[0].message)
        kind = kind_for_protocol(res.interaction_protocol)
        loaded = self.engine.load(url, kind)
        self.used_specs.add((url, kind))
        if loaded.index is None:
            err = loaded.error or SpecError("no index was built", url=url)
            why = unresolved_for_error(err, res, op)
            self.diags.extend((d, None) for d in why.diagnostics)
            return self._unresolved(a, key, base, why.reason, f"{why.message} ({err.code})")
        index = loaded.index
        found = resolve(res, op, index, suggest=self.suggestions_left > 0)
        if isinstance(found, Unresolved):
            self.suggestions_left -= 1
            self.diags.extend((d, None) for d in found.diagnostics)
            return self._unresolved(a, key, base, found.reason, found.message, found.suggestions)
        self.diags.extend((d, None) for d in found.diagnostics)
        pending = Pending(a, key, base, res, op, found)
        if found.entry.requirements is None and not index.security_declared:
            self._from_catalog(pending)
        elif (cat := self.engine.catalog_for(res, index)) is not None and cat.source.get("overrides_spec"):
            self._from_catalog(pending, override=True)
        elif cat is not None and cat.source.get("beside_spec") and found.entry.requirements:
            self._beside_spec(pending, cat)
        return pending

    def _beside_spec(self, p: Pending, cat: Catalog) -> None:
        """The provider documents narrower credentials than its spec names (Stripe's restricted keys
        beside the secret key): the catalog's alternatives are the requirements, each recorded with the
        catalog as its source, and the spec's own stay in ``options`` (offered, not picked unless the
        policy prefers them). No entry: the spec's requirements stand."""
        entry = p.found.entry
        hit = cat.lookup(entry.method, entry.path) if entry.method and entry.path else None
        if hit is None or entry.requirements is None:
            return
        why = cat.source.get("beside_spec") or {}
        # The spec's own credentials stay listed, as offered options: the provider documents the
        # catalog's as their least-privilege form (a restricted key with every permission is the secret key).
        extra = {
            **entry.extra,
            "catalog": {
                "alternatives": [
                    {"source": cat.label, "requirement": reqs_to_json((alt,))[0]} for alt in hit.requirements
                ],
                "offered": [
                    {
                        "source": "spec",
                        "requirement": reqs_to_json((alt,))[0],
                        "kind": "full-access",
                        "condition": str(why.get("reason", "")),
                        "reference": str(why.get("reference", "")),
                    }
                    for alt in entry.requirements
                    if alt not in hit.requirements
                ],
            },
        }
        p.catalog, p.catalog_entry = cat, hit
        p.found = replace(
            p.found,
            index=self.engine.enriched(p.found.index, cat),
            entry=replace(
                entry,
                requirements=hit.requirements,
                security_source=f"{entry.security_source}+{cat.label}",
                extra=extra,
            ),
        )

    def _from_catalog(self, p: Pending, *, override: bool = False) -> None:
        """Where the spec declares no security, the provider's catalog may say (never a parent path).

        ``override``: the provider documents, explicitly, that its spec's declared security is wrong
        (the catalog's ``overrides_spec``, with its reference): the catalog's entry replaces it, and a
        ``catalog-overrides-spec`` warning names both. No entry: the spec's declaration stands."""
        cat = self.engine.catalog_for(p.resource, p.found.index)
        if cat is None:
            return
        entry = p.found.entry
        hit = cat.lookup(entry.method, entry.path) if entry.method and entry.path else None
        if hit is not None and override:
            why = cat.source.get("overrides_spec") or {}
            declared = (
                "no authorization ([])"
                if entry.requirements == ()
                else str(
                    [[f"{t.scheme}:{' '.join(t.scopes)}".rstrip(":") for t in alt] for alt in entry.requirements or ()]
                )
            )
            listed = sorted({f"{t.scheme}:{' '.join(t.scopes)}".rstrip(":") for alt in hit.requirements for t in alt})
            self.diags.append(
                (
                    CATALOG_OVERRIDES_SPEC(
                        p.access.loc.pointer,
                        f"access {p.access.id!r}: the spec {p.found.index.url} declares {declared} for "
                        f"{entry.method} {entry.path}; {cat.label} (the provider's documentation) says "
                        f"{', '.join(listed)}: the catalog's requirements are used ({why.get('reason', '')}; "
                        f"{why.get('reference', '')})",
                        data={"catalog": cat.label, "spec": p.found.index.url, "declared": declared},
                    ),
                    None,
                )
            )
        if hit is None and override:
            return
        if hit is None:
            self.diags.append(
                (
                    CATALOG_NO_ENTRY(
                        p.access.loc.pointer,
                        f"access {p.access.id!r}: {cat.label} lists no permission for {entry.method} {entry.path}; "
                        "its permissions stay undetermined",
                        data={"catalog": cat.label},
                    ),
                    None,
                )
            )
            return
        full = hit
        hit = providers.catalog_requirements(
            cat, hit, accounts=self.policy.graph_accounts, github=self.policy.github_family
        )
        p.catalog, p.catalog_entry, p.catalog_full = cat, hit, full
        p.found = replace(
            p.found,
            index=self.engine.enriched(p.found.index, cat),
            entry=replace(entry, requirements=hit.requirements, security_source=cat.label),
        )

    def _unresolved(
        self,
        a: ResourceAccess,
        key: str,
        base: dict[str, Any],
        reason: str,
        message: str,
        suggestions: Sequence[str] = (),
    ) -> Outcome:
        hint = "did you mean: " + "; ".join(suggestions) if suggestions else None
        self.diags.append(
            (
                ACCESS_UNRESOLVED(
                    a.loc.pointer,
                    f"access {a.id!r} is unresolved ({reason}): {message}",
                    hint=hint,
                    data={"reason": reason, "suggestions": list(suggestions)},
                ),
                None,
            )
        )
        record = AccessRecord(
            **base,
            status="unresolved",
            complete=False,
            reason=reason,
            reason_message=message,
            suggestions=tuple(suggestions),
        )
        return Outcome(a, key, record)

    def _spec_records(self) -> list[SpecRecord]:
        seen: dict[tuple[str, SpecKind | None], list[str]] = {}
        where: dict[tuple[str, SpecKind | None], str] = {}
        m = self.card.manifest
        for op in m.operations:
            res = m.resource(op.resource)
            if res is None:
                continue
            url = spec_url_for(res, op)
            key = (url, kind_for_protocol(res.interaction_protocol))
            if key in self.used_specs:
                ids = seen.setdefault(key, [])
                if res.id not in ids:
                    ids.append(res.id)
                aos = op.api_operation_spec
                where.setdefault(
                    key,
                    aos.loc.of("spec_url")
                    if aos is not None and aos.spec_url
                    else res.spec.loc.of("spec_url")
                    if res.spec is not None
                    else res.loc.pointer,
                )
        records: list[SpecRecord] = []
        for key, resources in seen.items():
            loaded = self.engine._loaded[key]
            f, idx, err = loaded.fetched, loaded.index, loaded.error
            # Strict-validation findings point into the spec: their source is its URL.
            self.diags.extend((d, key[0]) for d in loaded.validation)
            if f is not None:
                # How the spec was obtained (plain http, a corrupt cache entry, a stale copy used
                # offline) concerns every access through it: said once, at the card's spec_url.
                self.diags.extend((replace(d, path=where[key]), None) for d in f.diagnostics)
            records.append(
                SpecRecord(
                    url=key[0],
                    resources=tuple(resources),
                    kind=idx.kind.value if idx else (key[1].value if key[1] else None),
                    sha256=f.sha256 if f else None,
                    origin=f.origin.value if f else None,
                    fetched_at=rfc3339(f.fetched_at) if f else None,
                    final_url=f.final_url if f else None,
                    title=idx.title if idx else "",
                    spec_version=idx.spec_version if idx else "",
                    security_declared=idx.security_declared if idx else None,
                    operations=len(idx.operations) if idx else None,
                    error={"code": err.code, "message": str(err)} if err else None,
                    provenance=dict(f.provenance) if f else {},
                )
            )
        return records
