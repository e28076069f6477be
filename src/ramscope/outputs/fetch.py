"""The summary table of ``ramscope fetch``.

Every string in the table comes from a stranger's card or server, so each one
is escaped with :func:`ramscope._text.for_terminal` and passed to rich as a
``Text`` (never as markup, which would interpret ``[link=...]`` and friends).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .._text import for_terminal, one_line
from ..store.plan import FetchOutcome

__all__ = ["fetch_status", "render_fetch_table"]


def fetch_status(outcome: FetchOutcome) -> str:
    """``ok``, ``ok (revalidated)``, ``ok (stale)`` ... or ``<error code>: <message>``."""
    if outcome.spec is not None:
        notes = [n for n in ("revalidated", "stale", "synthesized") if outcome.spec.provenance.get(n)]
        return "ok" + (f" ({', '.join(notes)})" if notes else "")
    err = outcome.error
    assert err is not None
    return f"{err.code}: {one_line(err.detail, max_len=160)}"


def render_fetch_table(outcomes: Sequence[FetchOutcome], console: Console, *, failures_only: bool = False) -> None:
    table = Table(title=None, show_lines=False, header_style="bold" if console.is_terminal else "")
    table.add_column("url", overflow="fold")
    table.add_column("kind")
    table.add_column("bytes", justify="right")
    table.add_column("origin")
    table.add_column("status", overflow="fold")
    for o in outcomes:
        if failures_only and o.ok:
            continue
        spec = o.spec
        status = fetch_status(o)
        table.add_row(
            Text(for_terminal(o.ref.url)),
            Text(o.ref.protocol_name),
            Text(f"{spec.size:,}" if spec else "-"),
            Text(spec.origin.value if spec else "-"),
            Text(status, style="" if o.ok or not console.is_terminal else "red"),
        )
    console.print(table)
