"""Structured diagnostics: findings that are reported, not raised.

A :class:`Diagnostic` names a rule by its stable ``code``, a severity, a JSON
pointer into the input it is about, a message and an optional hint. Rules are
declared where they are detected (``rule(...)`` at module level) and collected
in one registry, so SARIF output and the README table list every rule without a
second hand-kept list.
"""

from __future__ import annotations

import enum
import importlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Diagnostic",
    "Rule",
    "Severity",
    "all_rules",
    "count_by_severity",
    "escape_pointer_token",
    "has_errors",
    "join_pointer",
    "rule",
]


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


@dataclass(frozen=True, slots=True)
class Rule:
    """A kind of finding. ``code`` is stable: users filter and suppress by it."""

    code: str
    severity: Severity
    summary: str
    stage: str

    def __call__(
        self,
        path: str,
        message: str,
        *,
        hint: str | None = None,
        severity: Severity | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> Diagnostic:
        return Diagnostic(
            code=self.code,
            severity=severity or self.severity,
            path=path,
            message=message,
            hint=hint,
            data=dict(data) if data else {},
        )


_RULES: dict[str, Rule] = {}


def rule(code: str, severity: Severity, summary: str, *, stage: str) -> Rule:
    """Declare a rule. Declaring the same code twice with other text is a bug."""
    new = Rule(code, severity, summary, stage)
    old = _RULES.setdefault(code, new)
    if old != new:
        raise RuntimeError(f"diagnostic code {code!r} declared twice with different definitions")
    return new


#: Every module that declares rules (``tests/test_startup.py`` checks the list against the sources).
_RULE_MODULES = (
    "ramscope.card",
    "ramscope.derive.rules",
    "ramscope.evidence.rules",
    "ramscope.evidence.stepup",
    "ramscope.governance.skills",
    "ramscope.manifest",
    "ramscope.naming",
    "ramscope.providers.mcp_catalog",
    "ramscope.derive.privilege",
    "ramscope.derive.resolve",
    "ramscope.specs._doc",
    "ramscope.specs.a2a",
    "ramscope.specs.graphql",
    "ramscope.specs.mcp",
    "ramscope.specs.stone",
    "ramscope.specs.strict",
    "ramscope.store.cache",
    "ramscope.store.store",
    "ramscope.validate",
)


def all_rules() -> list[Rule]:
    """Every declared rule, in a stable order (stage, then code)."""
    # The stages register their rules when imported; the package imports them only when used.
    for module in _RULE_MODULES:
        importlib.import_module(module)
    return sorted(_RULES.values(), key=lambda r: (r.stage, r.code))


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    severity: Severity
    path: str
    message: str
    hint: str | None = None
    #: Machine-readable details (candidates, suggestions ...); free-form, JSON-compatible.
    data: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity.value,
            "path": self.path,
            "message": self.message,
        }
        if self.hint:
            out["hint"] = self.hint
        if self.data:
            out["data"] = dict(self.data)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Diagnostic:
        return cls(
            code=str(d["code"]),
            severity=Severity(d["severity"]),
            path=str(d.get("path", "")),
            message=str(d.get("message", "")),
            hint=d.get("hint"),
            data=dict(d.get("data") or {}),
        )


def has_errors(diags: Iterable[Diagnostic]) -> bool:
    return any(d.severity is Severity.ERROR for d in diags)


def count_by_severity(diags: Iterable[Diagnostic]) -> dict[Severity, int]:
    counts = dict.fromkeys(Severity, 0)
    for d in diags:
        counts[d.severity] += 1
    return counts


def escape_pointer_token(token: str | int) -> str:
    """RFC 6901 escaping of one reference token."""
    t = str(token)
    if "~" in t or "/" in t:
        return t.replace("~", "~0").replace("/", "~1")
    return t


def join_pointer(base: str, *tokens: str | int) -> str:
    # The parser calls this for every field of every card: the one-token case is kept cheap.
    if len(tokens) == 1:
        return f"{base}/{escape_pointer_token(tokens[0])}"
    return base + "".join("/" + escape_pointer_token(t) for t in tokens)


def split_pointer(pointer: str) -> Iterator[str]:
    if not pointer:
        return
    for tok in pointer.split("/")[1:]:
        yield tok.replace("~1", "/").replace("~0", "~")
