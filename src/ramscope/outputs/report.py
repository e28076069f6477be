"""The permission report: typed records and their JSON form (``docs/report.md``).

Fail closed: an access whose permissions could not be derived has
``requirements``/``scopes`` of ``None`` (JSON ``null``), never an empty list, and
every tier containing it is marked incomplete.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from ramscope._version import __version__
from ramscope.card import Card
from ramscope.diagnostics import Diagnostic

__all__ = [
    "REPORT_VERSION",
    "TIERS",
    "AccessRecord",
    "IdentityTier",
    "Report",
    "SkillRecord",
    "SpecRecord",
    "StoredReport",
    "TierRecord",
]

REPORT_VERSION = 1
TIERS = ("REQUIRED", "RECOMMENDED", "OPTIONAL")
IDENTITIES = ("END_USER", "AGENT")


@dataclass(frozen=True, slots=True)
class SpecRecord:
    url: str
    resources: tuple[str, ...]
    kind: str | None = None
    sha256: str | None = None
    origin: str | None = None
    fetched_at: str | None = None
    final_url: str | None = None
    title: str = ""
    spec_version: str = ""
    security_declared: bool | None = None
    operations: int | None = None
    #: {"code": ..., "message": ...} when the spec could not be obtained or understood.
    error: Mapping[str, str] | None = None
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "resource": self.resources[0] if self.resources else None,
            "resources": list(self.resources),
            "url": self.url,
            "kind": self.kind,
            "sha256": self.sha256,
            "origin": self.origin,
            "fetched_at": self.fetched_at,
            "final_url": self.final_url,
            "title": self.title,
            "spec_version": self.spec_version,
            "security_declared": self.security_declared,
            "operations": self.operations,
            "error": dict(self.error) if self.error else None,
        }
        if self.provenance:
            out["provenance"] = dict(self.provenance)
        return out


@dataclass(frozen=True, slots=True)
class AccessRecord:
    id: str
    operation: str
    resource: str
    owner: str
    identity: str
    necessity: str
    confirmation_required: bool
    justification: str
    status: str  # "resolved" | "unresolved"
    #: False when the permissions could not be determined (unresolved, undeclared, incompatible ...).
    complete: bool
    reason: str | None = None
    reason_message: str | None = None
    suggestions: tuple[str, ...] = ()
    spec_url: str | None = None
    display_name: str = ""
    target: Mapping[str, Any] | None = None
    security_declared: bool | None = None
    requirements: list[list[dict[str, Any]]] | None = None
    alternatives: list[dict[str, Any]] | None = None
    scopes: list[str] | None = None
    credentials: list[dict[str, Any]] | None = None
    scope_descriptions: Mapping[str, str] = field(default_factory=dict)
    blast_radius: Mapping[str, Any] | None = None
    choice: Mapping[str, Any] | None = None
    policy: list[dict[str, Any]] = field(default_factory=list)
    footprint: Mapping[str, Any] | None = None
    #: "spec", "policy", or "catalog:<name>@<version>"; None when no requirements were found.
    requirements_source: str | None = None
    #: scope -> the canonical authorization server that grants it.
    scope_servers: Mapping[str, str] = field(default_factory=dict)
    #: scope -> the provider's short name for people (catalog permissions).
    scope_names: Mapping[str, str] = field(default_factory=dict)
    #: Chosen scopes an administrator of the user's organisation must approve.
    admin_consent: list[str] = field(default_factory=list)
    #: Alternatives offered beside the requirements, not picked unless a policy prefers them
    #: (granular scopes in Beta, an anonymous alternative that depends on a site setting).
    options: list[dict[str, Any]] = field(default_factory=list)
    #: What the provider says of the access that is no permission (an administrator is needed, a
    #: retired scope, least privilege not expressible in the token), each with its source.
    provider_notes: list[dict[str, Any]] = field(default_factory=list)
    #: What is known of an incomplete access's need without being its answer: an MCP server's baseline
    #: (``scopes_supported``), the least it needs, with what a reviewer should do; None otherwise.
    floor: Mapping[str, Any] | None = None
    #: Scopes of the choice that are no permission over data (``offline_access``: token lifetime,
    #: ``openid``: sign-in), listed apart with why; never in ``scopes`` or the blast radius.
    token_scopes: list[dict[str, Any]] = field(default_factory=list)
    #: Per chosen scope, the provider's class of it and what requesting it triggers
    #: (``ramscope.providers.costs``); ``None`` when the access is incomplete.
    costs: list[dict[str, Any]] | None = None
    #: What calling the operation itself costs beyond its scopes (a Shopify field reading protected
    #: customer data), or ``None``.
    operation_cost: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "operation": self.operation,
            "resource": self.resource,
            "display_name": self.display_name,
            "owner": self.owner,
            "identity": self.identity,
            "necessity": self.necessity,
            "confirmation_required": self.confirmation_required,
            "justification": self.justification,
            "status": self.status,
            "complete": self.complete,
            "reason": self.reason,
            "reason_message": self.reason_message,
            "suggestions": list(self.suggestions),
            "spec_url": self.spec_url,
            "target": dict(self.target) if self.target is not None else None,
            "security_declared": self.security_declared,
            "requirements": self.requirements,
            "alternatives": self.alternatives,
            "scopes": self.scopes,
            "credentials": self.credentials,
            "scope_descriptions": dict(self.scope_descriptions),
            "blast_radius": dict(self.blast_radius) if self.blast_radius is not None else None,
            "choice": dict(self.choice) if self.choice is not None else None,
            "policy": self.policy,
            "footprint": dict(self.footprint) if self.footprint is not None else None,
            "requirements_source": self.requirements_source,
            "scope_servers": dict(self.scope_servers),
            "scope_names": dict(self.scope_names),
            "admin_consent": list(self.admin_consent),
            "options": list(self.options),
            "provider_notes": list(self.provider_notes),
            "floor": dict(self.floor) if self.floor is not None else None,
            "token_scopes": list(self.token_scopes),
            "costs": self.costs,
            "operation_cost": dict(self.operation_cost) if self.operation_cost is not None else None,
        }


@dataclass(frozen=True, slots=True)
class IdentityTier:
    scopes: list[str]
    credentials: list[dict[str, Any]]
    #: (namespace, scope) pairs: scope names are only unique within an authorization server.
    grants: list[dict[str, str]]
    accesses: list[str]
    incomplete_accesses: list[str]
    added_scopes: list[str]
    blast_radius: int
    method: str
    combinations: int
    #: Per access: the alternative this tier's set satisfies it with, and whether (and why) that
    #: differs from the access's own least-privilege choice.
    choices: list[dict[str, Any]] = field(default_factory=list)
    #: Each scope and credential of ``scopes``/``credentials``, with the provider's description and
    #: the accesses of the tier it serves (the alternative the tier's set satisfies for them).
    permissions: list[dict[str, Any]] = field(default_factory=list)
    #: Per MCP server with a baseline: the baseline its clients are granted first, then what this tier
    #: adds by step-up, and the accesses whose need beyond the baseline is unknown.
    step_up: list[dict[str, Any]] = field(default_factory=list)
    #: The tier's scopes that are no permission over data (offline_access, openid), with why.
    token_scopes: list[dict[str, Any]] = field(default_factory=list)
    #: False for an invalid card: what was derived from it may be less than it needs.
    card_valid: bool = True
    #: The tier's costs summed: each trigger with the scopes and accesses causing it, and what is
    #: unclassified (``ramscope.derive.costing.tier_costs``).
    costs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.card_valid and not self.incomplete_accesses

    def to_dict(self) -> dict[str, Any]:
        return {
            "scopes": self.scopes,
            "credentials": self.credentials,
            "grants": self.grants,
            "added_scopes": self.added_scopes,
            "accesses": self.accesses,
            "complete": self.complete,
            "incomplete_accesses": self.incomplete_accesses,
            "blast_radius": self.blast_radius,
            "method": self.method,
            "combinations": self.combinations,
            "choices": self.choices,
            "permissions": self.permissions,
            "step_up": self.step_up,
            "token_scopes": self.token_scopes,
            "costs": dict(self.costs) if self.costs else {"triggers": [], "unclassified": []},
        }


@dataclass(frozen=True, slots=True)
class TierRecord:
    identities: Mapping[str, IdentityTier]
    acknowledgments: list[str]
    confirmations: list[str]
    card_valid: bool = True

    @property
    def complete(self) -> bool:
        return self.card_valid and all(t.complete for t in self.identities.values())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: self.identities[name].to_dict() for name in IDENTITIES}
        out["acknowledgments"] = self.acknowledgments
        out["confirmations"] = self.confirmations
        out["complete"] = self.complete
        return out


@dataclass(frozen=True, slots=True)
class SkillRecord:
    """One skill of a card carrying per-skill permission sets: its accesses and its own tiers."""

    accesses: list[str]
    tiers: Mapping[str, TierRecord]
    #: Access ids the extension names that the manifest does not define (a validation error).
    unknown_accesses: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.unknown_accesses and all(t.complete for t in self.tiers.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "accesses": self.accesses,
            "unknown_accesses": self.unknown_accesses,
            "complete": self.complete,
            "tiers": {name: self.tiers[name].to_dict() for name in TIERS},
        }


@dataclass(frozen=True, slots=True)
class Report:
    card_name: str
    card_source: str
    card_sha256: str
    card_valid: bool
    specs: Sequence[SpecRecord]
    accesses: Sequence[AccessRecord]
    tiers: Mapping[str, TierRecord]
    diagnostics: Sequence[tuple[Diagnostic, str | None]]
    policy: Mapping[str, Any] | None = None
    #: The provider snapshots the derivation used: {"universes": [...], "catalogs": [...]}.
    providers: Mapping[str, Any] | None = None
    #: Per skill, its own cumulative tiers; only for cards carrying the per-skill extension
    #: (``ramscope.governance.skills``), else ``None`` and absent from the JSON.
    skills: Mapping[str, SkillRecord] | None = None
    #: Set on a report restricted to one skill (``derive --skill``).
    skill: str | None = None
    #: The card derived (not part of the JSON): where each diagnostic is in the file, which access,
    #: resource or operation it concerns.
    card: Card | None = field(default=None, compare=False, repr=False)
    #: to_json's result, kept: a batch both writes a report and stores it for reuse.
    _json: bytes | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def complete(self) -> bool:
        # An invalid card's manifest may say less than the agent does (a duplicate id hides an
        # access): nothing derived from it can be called complete.
        return self.card_valid and all(a.complete for a in self.accesses)

    @property
    def exit_code(self) -> int:
        """``docs/report.md``: 1 invalid card, 3 derivation incomplete, else 0."""
        if not self.card_valid:
            return 1
        return 0 if self.complete else 3

    def to_json(self) -> bytes:
        """Compact JSON. Raises TypeError for values orjson refuses (integers beyond 64 bits)."""
        if self._json is None:
            object.__setattr__(self, "_json", orjson.dumps(self.to_dict()))
        assert self._json is not None
        return self._json

    def to_dict(self) -> dict[str, Any]:
        out = self._to_dict()
        if self.skills is not None:
            out["skills"] = {name: rec.to_dict() for name, rec in self.skills.items()}
        if self.skill is not None:
            out["skill"] = self.skill
        return out

    def _to_dict(self) -> dict[str, Any]:
        return {
            "report_version": REPORT_VERSION,
            "generator": {"name": "ramscope", "version": __version__},
            "card": {
                "name": self.card_name,
                "source": self.card_source,
                "sha256": self.card_sha256,
                "valid": self.card_valid,
            },
            "complete": self.complete,
            "specs": [s.to_dict() for s in self.specs],
            "accesses": [a.to_dict() for a in self.accesses],
            "tiers": {name: self.tiers[name].to_dict() for name in TIERS},
            "policy": dict(self.policy) if self.policy else None,
            "providers": dict(self.providers) if self.providers else {"universes": [], "catalogs": []},
            "diagnostics": [_diag_dict(d, src) for d, src in self.diagnostics],
        }


@dataclass(frozen=True, slots=True)
class StoredReport:
    """A report an earlier run derived from exactly the same inputs, reused as it was written
    (see :mod:`ramscope.derive.reuse`). Only its JSON is kept: it serves ``derive``'s JSON output."""

    card_source: str
    exit_code: int
    #: The report's compact JSON, as :meth:`Report.to_json` wrote it.
    json: bytes

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = orjson.loads(self.json)
        return doc

    def to_json(self) -> bytes:
        return self.json


def _diag_dict(d: Diagnostic, source: str | None) -> dict[str, Any]:
    out = d.to_dict()
    out["source"] = source
    return out
