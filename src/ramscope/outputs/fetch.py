"""The summary table of ``ramscope fetch``.

The table is drawn from :class:`FetchRow`, plain values the caller takes from the store's
outcomes: rendering knows nothing of the store.

Every string in the table comes from a stranger's card or server, so each one
is escaped with :func:`ramscope._text.for_terminal` and passed to rich as a
``Text`` (never as markup, which would interpret ``[link=...]`` and friends).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .._text import for_terminal, one_line

__all__ = ["FetchRow", "fetch_status", "render_fetch_table"]

#: The provenance notes a fetched spec's status names, in this order.
STATUS_NOTES = ("revalidated", "stale", "synthesized")


@dataclass(frozen=True, slots=True)
class FetchRow:
    """One spec URL of a ``fetch`` run: fetched (its size, origin and provenance notes) or not
    (the error's code and detail)."""

    url: str
    #: The interaction protocol the cards name it under (``openapi``, ``mcp``, ``unspecified``...).
    kind: str
    fetched: bool
    size: int = 0
    #: Where the bytes came from (``network``, ``cache``...), when fetched.
    origin: str = ""
    #: Those of :data:`STATUS_NOTES` the spec's provenance holds.
    notes: tuple[str, ...] = ()
    error_code: str = ""
    error_detail: str = ""


def fetch_status(row: FetchRow) -> str:
    """``ok``, ``ok (revalidated)``, ``ok (stale)`` ... or ``<error code>: <message>``."""
    if row.fetched:
        return "ok" + (f" ({', '.join(row.notes)})" if row.notes else "")
    if not row.error_code:
        return "not fetched"
    return f"{row.error_code}: {one_line(row.error_detail, max_len=160)}"


def render_fetch_table(rows: Sequence[FetchRow], console: Console, *, failures_only: bool = False) -> None:
    table = Table(title=None, show_lines=False, header_style="bold" if console.is_terminal else "")
    table.add_column("url", overflow="fold")
    table.add_column("kind")
    table.add_column("bytes", justify="right")
    table.add_column("origin")
    table.add_column("status", overflow="fold")
    for row in rows:
        if failures_only and row.fetched:
            continue
        table.add_row(
            Text(for_terminal(row.url)),
            Text(row.kind),
            Text(f"{row.size:,}" if row.fetched else "-"),
            Text(row.origin if row.fetched else "-"),
            Text(fetch_status(row), style="" if row.fetched or not console.is_terminal else "red"),
        )
    console.print(table)
