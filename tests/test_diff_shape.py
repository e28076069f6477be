"""`check_report_shape`: a saved report given to `diff` is a stranger's file. Every way it can be malformed
is refused with an InputError naming the JSON pointer and what is wrong there, before diff_reports reads it
(each case below was a KeyError, TypeError or a silent wrong answer without its branch)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from ramscope.errors import InputError
from ramscope.outputs.diff import check_report_shape, diff_reports
from ramscope.outputs.report import IDENTITIES, TIERS


def _report() -> dict[str, Any]:
    """The smallest report with the shape diff reads: every tier and identity, one access."""
    ident = {"scopes": ["s"], "grants": [{"namespace": "n", "scope": "s"}], "credentials": []}
    return {
        "card": {"source": "card.json"},
        "tiers": {
            t: {"acknowledgments": [], "confirmations": [], **{i: dict(ident) for i in IDENTITIES}} for t in TIERS
        },
        "accesses": [{"id": "a", "scopes": ["s"]}],
    }


def _set(path: tuple[str | int, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def damage(doc: dict[str, Any]) -> None:
        target: Any = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return damage


def _drop(path: tuple[str, ...]) -> Callable[[dict[str, Any]], None]:
    def damage(doc: dict[str, Any]) -> None:
        target: Any = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return damage


#: (damage, JSON pointer, message): one per rejection branch of check_report_shape.
BRANCHES: list[tuple[str, Callable[[dict[str, Any]], None], str, str]] = [
    ("card-missing", _drop(("card",)), "/card", "'card' is not an object"),
    ("card-a-list", _set(("card",), []), "/card", "'card' is not an object"),
    ("tiers-a-list", _set(("tiers",), []), "/tiers", "'tiers' is not an object"),
    (
        "tier-missing",
        _drop(("tiers", "RECOMMENDED")),
        "/tiers/RECOMMENDED",
        "tier RECOMMENDED is missing or not an object",
    ),
    ("tier-a-string", _set(("tiers", "OPTIONAL"), "x"), "/tiers/OPTIONAL", "tier OPTIONAL is missing or not an object"),
    (
        "acknowledgments-of-numbers",
        _set(("tiers", "REQUIRED", "acknowledgments"), [1]),
        "/tiers/REQUIRED/acknowledgments",
        "acknowledgments is not a list of strings",
    ),
    (
        "confirmations-a-string",
        _set(("tiers", "REQUIRED", "confirmations"), "a"),
        "/tiers/REQUIRED/confirmations",
        "confirmations is not a list of strings",
    ),
    (
        "acknowledgments-missing",
        _drop(("tiers", "REQUIRED", "acknowledgments")),
        "/tiers/REQUIRED/acknowledgments",
        "acknowledgments are missing",
    ),
    (
        "identity-missing",
        _drop(("tiers", "REQUIRED", "AGENT")),
        "/tiers/REQUIRED/AGENT",
        "REQUIRED AGENT has no list of scopes",
    ),
    (
        "scopes-missing",
        _drop(("tiers", "REQUIRED", "END_USER", "scopes")),
        "/tiers/REQUIRED/END_USER",
        "REQUIRED END_USER has no list of scopes",
    ),
    (
        "scopes-null",
        _set(("tiers", "OPTIONAL", "AGENT", "scopes"), None),
        "/tiers/OPTIONAL/AGENT",
        "OPTIONAL AGENT has no list of scopes",
    ),
    (
        "grants-without-namespace",
        _set(("tiers", "REQUIRED", "END_USER", "grants"), [{"scope": "s"}]),
        "/tiers/REQUIRED/END_USER/grants",
        "grants are not {namespace, scope} objects",
    ),
    (
        "grants-an-object",
        _set(("tiers", "REQUIRED", "END_USER", "grants"), {"namespace": "n", "scope": "s"}),
        "/tiers/REQUIRED/END_USER/grants",
        "grants are not {namespace, scope} objects",
    ),
    (
        "credentials-with-a-number",
        _set(("tiers", "RECOMMENDED", "AGENT", "credentials"), [{"namespace": "n", "scheme": "k", "type": 1}]),
        "/tiers/RECOMMENDED/AGENT/credentials",
        "credentials are not {namespace, scheme, type} objects",
    ),
    ("accesses-missing", _drop(("accesses",)), "/accesses", "accesses are not a list of objects with string ids"),
    (
        "access-id-a-number",
        _set(("accesses",), [{"id": 1}]),
        "/accesses",
        "accesses are not a list of objects with string ids",
    ),
    ("access-a-string", _set(("accesses",), ["a"]), "/accesses", "accesses are not a list of objects with string ids"),
    (
        "access-scopes-a-string",
        _set(("accesses", 0, "scopes"), "s"),
        "/accesses/0/scopes",
        "scopes are not a list of strings",
    ),
]


def test_the_well_formed_report_passes() -> None:
    """The base report of these tests is accepted, and so is an access whose scopes are null (unknown)."""
    doc = _report()
    check_report_shape(doc)
    doc["accesses"].append({"id": "b", "scopes": None})
    check_report_shape(doc)
    assert diff_reports(doc, doc)["new_permissions"] is False


@pytest.mark.parametrize(("damage", "pointer", "what"), [b[1:] for b in BRANCHES], ids=[b[0] for b in BRANCHES])
def test_each_malformed_shape_is_refused_naming_the_place(
    damage: Callable[[dict[str, Any]], None], pointer: str, what: str
) -> None:
    """One damage per rejection branch: an InputError with the exact pointer and message, the file named."""
    doc = _report()
    damage(doc)
    with pytest.raises(InputError) as info:
        check_report_shape(doc, source="old.json")
    err = info.value
    assert (err.pointer, err.detail, err.source) == (pointer, f"not a ramscope report: {what}", "old.json")
    assert str(err) == f"old.json (at {pointer}): not a ramscope report: {what}"


@pytest.mark.parametrize(("damage", "pointer", "what"), [b[1:] for b in BRANCHES], ids=[b[0] for b in BRANCHES])
def test_diff_reports_refuses_either_side(damage: Callable[[dict[str, Any]], None], pointer: str, what: str) -> None:
    """diff_reports checks both sides: a malformed new report is refused as the old one is."""
    good, bad = _report(), _report()
    damage(bad)
    for old, new in ((bad, good), (good, bad)):
        with pytest.raises(InputError) as info:
            diff_reports(copy.deepcopy(old), copy.deepcopy(new))
        assert (info.value.pointer, info.value.detail) == (pointer, f"not a ramscope report: {what}")
