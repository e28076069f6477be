"""Evidence: what an agent actually did, read from files, turned into a card or held against one.

::

    calls, summaries = read_calls(["session.har", "trace.otlp.jsonl", "mcp.jsonl"])   # files only
    result = draft(["session.har"], specs=[("https://api.example.com/", "https://example.com/openapi.json")])
    result.card                      # a card dict: every distinct operation declared once
    verdict = audit("agent.card.json", ["session.har"], granted=["https://www.googleapis.com/auth/calendar"])
    verdict.exit_code                # 6: a call the card does not declare, or a host it names nowhere

Readers (:mod:`.har`, :mod:`.otlp`, :mod:`.mcplog`) read files only and never touch the network;
they yield :class:`ObservedCall`, which holds no header value, cookie, query or body. ``draft`` and
``audit`` fetch specs through the spec store, and match calls with :mod:`ramscope.derive.resolve` and the
derivation :class:`~ramscope.derive.Engine`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes

_LAZY: dict[str, str] = {
    "AuditResult": ".auditing",
    "AuthKind": ".model",
    "DraftResult": ".drafting",
    "EvidenceFormat": ".model",
    "EvidenceLimits": "._source",
    "EvidenceSummary": ".model",
    "HostIndex": ".hosts",
    "ObservedCall": ".model",
    "Principal": ".model",
    "audit": ".auditing",
    "draft": ".drafting",
    "iter_calls": ".read",
    "read_calls": ".read",
}

if TYPE_CHECKING:
    from ._source import EvidenceLimits
    from .auditing import AuditResult, audit
    from .drafting import DraftResult, draft
    from .hosts import HostIndex
    from .model import AuthKind, EvidenceFormat, EvidenceSummary, ObservedCall, Principal
    from .read import iter_calls, read_calls

__getattr__ = lazy_attributes(__name__, _LAZY)

__all__ = [
    "AuditResult",
    "AuthKind",
    "DraftResult",
    "EvidenceFormat",
    "EvidenceLimits",
    "EvidenceSummary",
    "HostIndex",
    "ObservedCall",
    "Principal",
    "audit",
    "draft",
    "iter_calls",
    "read_calls",
]
