"""``export --format google-oauth``: the OAuth consent screen's scopes, and a verification draft per scope.

Google's consent screen (Google Auth Platform, "Data access") lists the scopes an app requests;
sensitive and restricted scopes need verification, where Google asks what the app does with each
scope and why a narrower one would not do (restricted scopes also need a yearly security
assessment). The report already knows both: the accesses' justifications, and the narrower
alternatives the derivation offered with their conditions.

Classes (non-sensitive, sensitive, restricted) are read through :func:`scope_class` only, which asks
``ramscope.providers.costs`` when that module provides them; until then every scope is
``unclassified`` and gets a draft (fail closed: a scope is not assumed to need no verification).
"""

from __future__ import annotations

import importlib
from typing import Any

from ._out import envelope, left_out, require
from ._read import AccessRow, Permission, Reading

__all__ = ["CLASSES", "export_google", "scope_class"]

FORMAT = "google-oauth"
CLASSES = ("non-sensitive", "sensitive", "restricted", "unclassified")
_NEEDS_VERIFICATION = {"sensitive", "restricted", "unclassified"}


def scope_class(scope: str) -> str:
    """Google's class of a scope, or ``unclassified`` when no cost data says it.

    The one place the class is read: ``ramscope.providers.costs.google_scope_class(scope)`` (returning
    ``non-sensitive``, ``sensitive``, ``restricted`` or ``None``), when that module exists.
    """
    try:
        costs = importlib.import_module("ramscope.providers.costs")
    except ImportError:
        return "unclassified"
    fn = getattr(costs, "google_scope_class", None)
    value = fn(scope) if callable(fn) else None
    return value if isinstance(value, str) and value in CLASSES else "unclassified"


def _short(scope: str) -> str:
    return scope.removeprefix("https://www.googleapis.com/auth/")


def _draft(p: Permission, cls: str, rows: list[AccessRow]) -> dict[str, Any]:
    uses = [
        {"access": a.id, "justification": a.justification, "asks_first": a.confirmation_required}
        for a in rows
        if p.scope in (a.scopes or ())
    ] or [{"access": a.id, "justification": a.justification, "asks_first": a.confirmation_required} for a in rows]
    # One entry per narrower scope, with every access it would not serve: Google asks per scope.
    narrower: dict[str, dict[str, Any]] = {}
    for a in rows:
        for n in a.narrower:
            for scope in n.scopes:
                if scope == p.scope:
                    continue
                reach = "; ".join([*n.conditions, *n.limits]) or "a narrower reach"
                entry = narrower.setdefault(scope, {"scope": scope, "condition": reach, "accesses": [], "needs": []})
                if a.id not in entry["accesses"]:
                    entry["accesses"].append(a.id)
                    entry["needs"].append(_lower(a.justification) or f"do {a.id}")
    for entry in narrower.values():
        entry["why_not"] = (
            f"`{_short(entry['scope'])}` reaches {entry['condition']}, but the agent must "
            + "; and ".join(entry.pop("needs"))
        )
    what = " ".join(f"{a.justification.rstrip('.')}." for a in rows if a.justification and p.scope in (a.scopes or ()))
    what = what or " ".join(f"{a.justification.rstrip('.')}." for a in rows if a.justification)
    text = [f"{_short(p.scope or '')}: {what or 'used by ' + ', '.join(p.accesses)}"]
    if narrower:
        text += [f"A narrower scope would not do: {n['why_not']}." for n in narrower.values()]
    else:
        text.append(
            "ramscope found no narrower scope that does these operations: name one Google offers, or say why "
            "the operation needs this one."
        )
    if cls == "restricted":
        text.append("A restricted scope also needs a yearly third-party security assessment.")
    return {"scope": p.scope, "class": cls, "uses": uses, "narrower": list(narrower.values()), "draft": " ".join(text)}


def _lower(text: str) -> str:
    t = text.strip().rstrip(".")
    if t.lower().startswith("to "):
        t = t[3:]
    return t[:1].lower() + t[1:]


def export_google(reading: Reading) -> dict[str, Any]:
    google = [p for p in reading.of("google") if p.scope]
    require(bool(google), FORMAT, "Google OAuth scopes (a consent screen's data access)", reading)
    rows = {a.id: a for a in reading.accesses}
    scopes: list[dict[str, Any]] = []
    drafts: list[dict[str, Any]] = []
    seen: set[str] = set()
    for p in sorted(google, key=lambda p: (not p.required, p.scope or "")):
        assert p.scope is not None
        if p.scope in seen:
            continue
        seen.add(p.scope)
        same = [q for q in google if q.scope == p.scope]
        accesses = tuple(dict.fromkeys(x for q in same for x in q.accesses))
        cls = scope_class(p.scope)
        scopes.append(
            {
                "scope": p.scope,
                "tier": p.tier,
                "required": p.required,
                "class": cls,
                "description": p.description,
                "accesses": list(accesses),
            }
        )
        if cls in _NEEDS_VERIFICATION:
            drafts.append(_draft(p, cls, [rows[x] for x in accesses if x in rows]))
    body = {
        "consent_screen": {"scopes": [s["scope"] for s in scopes]},
        "scopes": scopes,
        "tiers": {
            "required": [s["scope"] for s in scopes if s["required"]],
            "optional": [s["scope"] for s in scopes if not s["required"]],
            "note": "the consent screen lists every scope the app may request; request the optional ones "
            "only when needed (incremental authorization, include_granted_scopes=true)",
        },
        "verification": drafts,
        "classification": "from ramscope.providers.costs"
        if any(s["class"] != "unclassified" for s in scopes)
        else "unclassified: no cost data; every scope gets a verification draft until classified",
    }
    return envelope(reading, FORMAT, body, left_out(reading, FORMAT, google))
