"""Counting what a reader could not read (the one mutable thing of this package, owned by one read)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .model import EvidenceFormat, EvidenceSummary

__all__ = ["ReadStats"]


@dataclass(slots=True)
class ReadStats:
    source: str
    fmt: EvidenceFormat
    calls: int = 0
    skipped: int = 0
    partial: int = 0
    reasons: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        self.skipped += 1
        self.reasons[reason] = self.reasons.get(reason, 0) + 1

    def part(self, reason: str) -> None:
        """An entry read in part (its host only): a call, and counted by reason."""
        self.partial += 1
        self.calls += 1
        self.reasons[reason] = self.reasons.get(reason, 0) + 1

    def summary(self) -> EvidenceSummary:
        return EvidenceSummary(self.source, self.fmt, self.calls, self.skipped, dict(self.reasons), self.partial)
