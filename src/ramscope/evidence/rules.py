"""The findings of ``draft`` and ``audit`` (stage ``evidence``)."""

from __future__ import annotations

from ..diagnostics import Severity, rule

__all__ = [
    "EVIDENCE_SKIPPED",
    "EXCESS_GRANT",
    "IDENTITY_UNDETERMINED",
    "MISSING_GRANT",
    "TOKEN_UNVERIFIED",
    "UNDECLARED_CALL",
    "UNDECLARED_HOST",
    "UNMATCHED_CALL",
    "UNRESOLVED_CALL",
    "UNUSED_ACCESS",
]

_S = "evidence"
UNMATCHED_CALL = rule(
    "unmatched-call",
    Severity.WARNING,
    "No spec explains an observed call (no spec for its URL, or no operation of the spec matches); "
    "it is not in the drafted card.",
    stage=_S,
)
IDENTITY_UNDETERMINED = rule(
    "identity-undetermined",
    Severity.WARNING,
    "The evidence does not show whose credential an operation was called with; the draft writes END_USER as a "
    "placeholder its justification names, for the author to confirm.",
    stage=_S,
)
EVIDENCE_SKIPPED = rule(
    "evidence-skipped",
    Severity.WARNING,
    "Entries of an evidence file could not be read (counted, by reason); the rest was read.",
    stage=_S,
)
UNDECLARED_CALL = rule(
    "undeclared-call",
    Severity.ERROR,
    "The agent made a call that no access of the card declares.",
    stage=_S,
)
UNDECLARED_HOST = rule(
    "undeclared-host",
    Severity.ERROR,
    "The agent called a host that the card names nowhere (no spec URL, no server of its specs).",
    stage=_S,
)
UNUSED_ACCESS = rule(
    "unused-access",
    Severity.INFO,
    "The card declares an access that the evidence never shows.",
    stage=_S,
)
EXCESS_GRANT = rule(
    "excess-grant",
    Severity.WARNING,
    "The token holds a scope beyond the least-privilege permissions of the observed calls.",
    stage=_S,
)
MISSING_GRANT = rule(
    "missing-grant",
    Severity.WARNING,
    "The token lacks a scope that the least-privilege permissions of the observed calls need.",
    stage=_S,
)
TOKEN_UNVERIFIED = rule(
    "token-unverified",
    Severity.INFO,
    "The token's scopes were read from its claims without verifying its signature.",
    stage=_S,
)
UNRESOLVED_CALL = rule(
    "unresolved-call",
    Severity.WARNING,
    "A call site in the code that cannot be told statically (a URL built at run time, a method name from a "
    "variable); name its operation with a `# ramscope:` comment.",
    stage=_S,
)
