"""Governance over permission reports: organisation rules (``check``), enforceable exports
(Cedar policies and a JSON allowlist), agent comparison, and per-skill permission sets.

Every function here reads reports (``Report.to_dict()`` or a saved ``derive`` report) and
never the spec store: governance judges a derivation, it does not redo it.
"""

from __future__ import annotations

from .check import EXIT_RULES_FAILED, CardResult, Finding, check_report
from .rules import Rule, RuleSet, Waiver, load_rules, parse_rules

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
