"""Why an access gets its permission, read from the report: nothing here derives anything.

A report's access record already holds the answer, spread over several fields (docs/report.md):
the chosen scopes and how they were chosen (``choice``), every alternative the spec allows with its
grant set (``alternatives``), the alternatives that tied or could not be compared (``choice.rivals``),
what the choice reaches (``choice.reach``: level, principal, data slice; ``choice.narrower``: slice
alternatives offered beside it; ``blast_radius``: the operations it also opens), and where
the requirements came from (``requirements_source``, ``target.security_source``, the spec). This
gathers them per access, for a person (or a coding agent) asking "why this permission?".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["explain_accesses"]


def explain_accesses(report: Mapping[str, Any], access: str | None = None) -> dict[str, Any]:
    """The explanation of every access of ``report`` (or of the one with id ``access``: KeyError if none)."""
    accesses = [a for a in report.get("accesses") or [] if isinstance(a, Mapping)]
    if access is not None:
        accesses = [a for a in accesses if a.get("id") == access]
        if not accesses:
            raise KeyError(access)
    specs = {s.get("url"): s for s in report.get("specs") or [] if isinstance(s, Mapping)}
    card = report.get("card") if isinstance(report.get("card"), Mapping) else {}
    return {
        "card": dict(card) if isinstance(card, Mapping) else {},
        "complete": report.get("complete"),
        "accesses": [_one(a, specs) for a in accesses],
    }


def _one(a: Mapping[str, Any], specs: Mapping[Any, Mapping[str, Any]]) -> dict[str, Any]:
    raw_choice, raw_target = a.get("choice"), a.get("target")
    choice: Mapping[str, Any] = raw_choice if isinstance(raw_choice, Mapping) else {}
    target: Mapping[str, Any] = raw_target if isinstance(raw_target, Mapping) else {}
    spec = specs.get(a.get("spec_url")) or {}
    out: dict[str, Any] = {
        "id": a.get("id"),
        "operation": a.get("operation"),
        "resource": a.get("resource"),
        "identity": a.get("identity"),
        "necessity": a.get("necessity"),
        "complete": a.get("complete"),
        "permission": {
            "scopes": a.get("scopes"),
            "credentials": a.get("credentials"),
            "descriptions": a.get("scope_descriptions") or {},
            "servers": a.get("scope_servers") or {},
            "admin_consent": a.get("admin_consent") or [],
            # What each chosen scope costs (the provider's class, what requesting it triggers).
            "costs": a.get("costs"),
            "operation_cost": a.get("operation_cost"),
        },
        "why": _why(a, choice),
        "alternatives": a.get("alternatives") or [],
        "rivals": choice.get("rivals") or [],
        "reach": {
            # Each chosen scope's class (level, principal, data slice, condition, limits, source).
            "chosen": choice.get("reach"),
            # Slice alternatives offered beside the pick, with their conditions.
            "narrower": choice.get("narrower") or [],
            "fallback": choice.get("fallback"),
            "blast_radius": a.get("blast_radius"),
        },
        "source": {
            "requirements_source": a.get("requirements_source"),
            "security_source": target.get("security_source"),
            "matched_by": target.get("matched_by"),
            "target": dict(target) if target else None,
            "spec": {
                "url": a.get("spec_url"),
                "kind": spec.get("kind"),
                "title": spec.get("title"),
                "sha256": spec.get("sha256"),
                "origin": spec.get("origin"),
                "fetched_at": spec.get("fetched_at"),
            },
            "policy": a.get("policy") or [],
        },
    }
    if not a.get("complete"):
        out["undetermined"] = {
            "reason": a.get("reason"),
            "message": a.get("reason_message"),
            "suggestions": a.get("suggestions") or [],
        }
    return out


def _why(a: Mapping[str, Any], choice: Mapping[str, Any]) -> str:
    """One sentence saying how the permission was chosen, from the record's own fields."""
    if not a.get("complete"):
        return f"undetermined ({a.get('reason')}): {a.get('reason_message') or 'no permission could be derived'}"
    method = choice.get("method") if choice else None
    alts = a.get("alternatives") or []
    compatible = [x for x in alts if isinstance(x, Mapping) and x.get("compatible")]
    scopes = ", ".join(a.get("scopes") or []) or "no scope"
    radius = a.get("blast_radius") or {}
    opens = radius.get("universe_operations") if isinstance(radius, Mapping) else None
    text = f"{scopes} ({method or 'chosen'}) among {len(compatible)} compatible of {len(alts)} alternatives"
    if opens is not None:
        text += f"; it opens {opens} operations in its permission universe"
    if choice and choice.get("ambiguous"):
        rivals = [", ".join(r.get("scopes") or []) for r in choice.get("rivals") or [] if isinstance(r, Mapping)]
        text += f"; ambiguous: rivals {'; '.join(rivals)}" if rivals else "; ambiguous"
    narrower = [", ".join(x.get("scopes") or []) for x in choice.get("narrower") or [] if isinstance(x, Mapping)]
    if narrower:
        text += f"; narrower if their conditions hold: {'; '.join(narrower)}"
    if choice and choice.get("fallback"):
        text += f"; taken from alternatives normally set aside ({choice['fallback']})"
    if a.get("policy"):
        text += "; a policy changed the choice"
    return text
