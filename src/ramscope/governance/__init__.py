"""Governance over permission reports: organisation rules (``check``), enforceable exports
(Cedar policies and a JSON allowlist), agent comparison, and per-skill permission sets.

Every function here reads reports (``Report.to_dict()`` or a saved ``derive`` report) and
never the spec store: governance judges a derivation, it does not redo it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes

if TYPE_CHECKING:
    from .check import EXIT_RULES_FAILED, CardResult, Finding, check_report
    from .rules import Rule, RuleSet, Waiver, load_rules, parse_rules

# Imported when first used: `derive` and `validate` read skill extensions (.skills) and need none of
# the rest, which importing the package would otherwise load (issue 17, start-up).
_LAZY = {
    "EXIT_RULES_FAILED": ".check",
    "CardResult": ".check",
    "Finding": ".check",
    "check_report": ".check",
    "Rule": ".rules",
    "RuleSet": ".rules",
    "Waiver": ".rules",
    "load_rules": ".rules",
    "parse_rules": ".rules",
}


__getattr__ = lazy_attributes(__name__, _LAZY)

__all__ = [
    "EXIT_RULES_FAILED",
    "CardResult",
    "Finding",
    "Rule",
    "RuleSet",
    "Waiver",
    "check_report",
    "load_rules",
    "parse_rules",
]
