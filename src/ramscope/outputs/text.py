"""A readable rendering of a permission report, for terminals and logs.

Every string from the card or a spec goes through ``for_terminal`` and reaches rich
as a :class:`~rich.text.Text`, never as a markup string: rich would read
``[link=...]`` in an access id as a hyperlink and ``[/bold]`` as a tag (an
unmatched one raises ``MarkupError``).
"""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .._text import for_terminal, one_line
from .report import IDENTITIES, Report

__all__ = ["render_report_text"]


def _short(scope: str) -> str:
    # Google-style scope URLs are long; their last segment is what people recognise.
    prefix = "https://www.googleapis.com/auth/"
    return scope[len(prefix) :] if scope.startswith(prefix) else scope


def render_report_text(report: Report, *, color: bool = False, width: int = 140) -> str:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=color, no_color=not color, width=width, highlight=False)
    title = for_terminal(report.card_name or report.card_source)
    if report.skill is not None:
        title += f"  [skill {for_terminal(report.skill)}]"
    console.print(f"{title}  ({for_terminal(report.card_source)}, sha256 {report.card_sha256[:12]})", markup=False)
    table = Table(show_header=True, header_style="bold", expand=False, pad_edge=False)
    for col in ("access", "identity", "necessity", "status", "scopes / credentials", "grants"):
        table.add_column(col, overflow="fold")
    for a in report.accesses:
        if a.complete:
            perms = [_short(s) for s in a.scopes or []] + [f"{c['scheme']} ({c['type']})" for c in a.credentials or []]
            what = ", ".join(perms) or "none needed"
            br = a.blast_radius or {}
            protected = br.get("protected_operations", 0)
            # Nothing protected to compare against (a public API, an unlisted MCP server): no ratio.
            grants = f"{br.get('granted_operations', 0)}/{protected}" if protected else "-"
            status = "ok" + (" (pinned)" if a.choice and a.choice.get("method") == "pinned" else "")
            if a.choice and a.choice.get("ambiguous"):
                status += " (ambiguous)"
        else:
            what = f"UNKNOWN: {a.reason_message or a.reason}"
            grants = "-"
            status = a.reason or "incomplete"
        table.add_row(
            Text(one_line(a.id, max_len=48)),
            Text(a.identity),
            Text(a.necessity),
            Text(for_terminal(status)),
            Text(one_line(what, max_len=120)),
            Text(grants),
            style=None if a.complete else "bold red",
        )
    console.print(table)
    tiers = Table(show_header=True, header_style="bold", title="cumulative tiers", pad_edge=False)
    tiers.add_column("tier")
    for ident in IDENTITIES:
        tiers.add_column(ident.lower())
    tiers.add_column("acknowledge (3P)")
    tiers.add_column("asks first")
    for name, t in report.tiers.items():
        cells = []
        for ident in IDENTITIES:
            it = t.identities[ident]
            perms = [_short(s) for s in it.scopes] + [f"{c['scheme']} ({c['type']})" for c in it.credentials]
            cell = ", ".join(for_terminal(p) for p in perms) or "-"
            if not it.complete:
                cell += f"  [INCOMPLETE: {', '.join(for_terminal(x) for x in it.incomplete_accesses)}]"
            cells.append(cell)
        tiers.add_row(
            Text(name),
            *(Text(c) for c in cells),
            Text(", ".join(for_terminal(x) for x in t.acknowledgments) or "-"),
            Text(", ".join(for_terminal(x) for x in t.confirmations) or "-"),
        )
    console.print(tiers)
    if not report.complete:
        console.print("INCOMPLETE: some permissions could not be determined (see above).", style="bold red")
    return buf.getvalue()
