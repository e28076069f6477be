"""`render_diff_text`: what a reviewer reads of a diff, line by line, for what went away as well as what came:
removed scopes, credentials and third parties, invalid cards on either side, an incomplete side, accesses
added with what they do (tool, method and path, skill, or unresolved), a dropped confirmation alone
(a risk, not a new permission), and nothing at all."""

from __future__ import annotations

import copy
from typing import Any

from ramscope.outputs.diff import diff_reports, render_diff_text
from ramscope.outputs.report import IDENTITIES, TIERS


def _report(source: str) -> dict[str, Any]:
    ident = {"scopes": [], "grants": [], "credentials": []}
    return {
        "card": {"source": source},
        "complete": True,
        "tiers": {
            t: {"acknowledgments": [], "confirmations": [], **{i: copy.deepcopy(ident) for i in IDENTITIES}}
            for t in TIERS
        },
        "accesses": [],
    }


def _access(aid: str, necessity: str, target: dict[str, str] | None) -> dict[str, Any]:
    a: dict[str, Any] = {"id": aid, "resource": "r", "necessity": necessity, "confirmation_required": True}
    if target is not None:
        a["target"] = target
    return a


def test_what_went_away_invalid_cards_and_added_accesses_are_each_one_line() -> None:
    """Removed scope, credential and third party; both cards invalid; the old side incomplete; four accesses
    added, each with what it does; the verdict is the invalid new card."""
    old, new = _report("old.json"), _report("new.json")
    old["card"]["valid"] = new["card"]["valid"] = False
    old["complete"] = False
    req = old["tiers"]["REQUIRED"]
    req["END_USER"]["scopes"] = ["files.read", "files.write"]
    req["AGENT"]["credentials"] = [{"namespace": "api.example", "scheme": "key", "type": "apiKey"}]
    req["acknowledgments"] = ["Example Corp"]
    new["tiers"]["REQUIRED"]["END_USER"]["scopes"] = ["files.read"]
    new["accesses"] = [
        _access("t", "REQUIRED", {"kind": "mcp", "tool": "lookup"}),
        _access("h", "REQUIRED", {"kind": "rest", "method": "GET", "path": "/items"}),
        _access("s", "OPTIONAL", {"kind": "a2a", "skill": "plan"}),
        _access("u", "OPTIONAL", None),
    ]
    assert render_diff_text(diff_reports(old, new)).splitlines() == [
        "old: old.json  new: new.json",
        "! the old card is invalid: what it asks for may be more than its report shows",
        "! the new card is invalid: what it asks for may be more than its report shows",
        "- REQUIRED    END_USER scope files.write",
        "- REQUIRED    AGENT    credential key (apiKey)",
        "- REQUIRED    acknowledge Example Corp",
        "+ access h (GET /items on r, read)",
        "+ access s (skill plan on r, unknown)",
        "+ access t (tool lookup on r, unknown)",
        "+ access u (unresolved on r, unknown)",
        "! incomplete: some permissions are unknown on one side; this diff may not show everything",
        "the new card is invalid",
    ]


def test_a_dropped_confirmation_alone_is_a_risk_to_review() -> None:
    """No new permission, but the agent no longer asks before an access: said, and the verdict is a review."""
    old, new = _report("c.json"), _report("c.json")
    for r in (old, new):
        r["accesses"] = [_access("x", "REQUIRED", {"kind": "rest", "method": "GET", "path": "/items"})]
    old["tiers"]["REQUIRED"]["confirmations"] = ["x"]
    d = diff_reports(old, new)
    assert (d["new_permissions"], d["risks"]) == (
        False,
        [{"kind": "dropped-confirmation", "tier": "REQUIRED", "item": "x"}],
    )
    assert render_diff_text(d).splitlines() == [
        "old: c.json  new: c.json",
        "! REQUIRED    no longer asks before x",
        "new risks: review needed",
    ]


def test_nothing_new_is_one_verdict_line() -> None:
    """Two equal reports: the header and "no new permissions", nothing else."""
    assert render_diff_text(diff_reports(_report("a.json"), _report("b.json"))) == (
        "old: a.json  new: b.json\nno new permissions\n"
    )
