"""Reading evidence files, whichever format each is in (sniffed from its content)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator

from ._source import DEFAULT_LIMITS, EvidenceLimits, open_evidence
from .har import read_har
from .mcplog import read_mcp_log
from .model import EvidenceFormat, EvidenceSummary, ObservedCall
from .otlp import read_otlp
from .stats import ReadStats

__all__ = ["iter_calls", "read_calls"]

_READERS = {EvidenceFormat.HAR: read_har, EvidenceFormat.OTLP: read_otlp, EvidenceFormat.MCP: read_mcp_log}


def iter_calls(
    paths: Iterable[str | os.PathLike[str]],
    *,
    on_summary: Callable[[EvidenceSummary], None] | None = None,
    limits: EvidenceLimits = DEFAULT_LIMITS,
) -> Iterator[ObservedCall]:
    """The calls of every file in turn, streamed; each file's summary goes to ``on_summary`` when it is read.

    A file that cannot be read at all raises :class:`~ramscope.errors.InputError` (naming it).
    """
    for path in paths:
        with open_evidence(path, limits) as (label, fmt, stream):
            stats = ReadStats(label, fmt)
            yield from _READERS[fmt](stream, label, stats, limits)
        if on_summary is not None:
            on_summary(stats.summary())


def read_calls(
    paths: Iterable[str | os.PathLike[str]], *, limits: EvidenceLimits = DEFAULT_LIMITS
) -> tuple[tuple[ObservedCall, ...], tuple[EvidenceSummary, ...]]:
    """Every call of these files, and a summary per file (for small evidence; :func:`iter_calls` streams)."""
    summaries: list[EvidenceSummary] = []
    calls = tuple(iter_calls(paths, on_summary=summaries.append, limits=limits))
    return calls, tuple(summaries)
