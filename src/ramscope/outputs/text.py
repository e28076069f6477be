"""A readable rendering of a permission report, for terminals and logs.

Every string from the card or a spec goes through ``for_terminal`` and reaches rich
as a :class:`~rich.text.Text`, never as a markup string: rich would read
``[link=...]`` in an access id as a hyperlink and ``[/bold]`` as a tag (an
unmatched one raises ``MarkupError``).
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .._text import for_terminal, one_line
from ..diagnostics import Severity
from .diagnostics import Finding, findings
from .report import IDENTITIES, Report, TierRecord

__all__ = ["render_report_text"]


def _short(scope: str) -> str:
    # Google-style scope URLs are long; their last segment is what people recognise.
    prefix = "https://www.googleapis.com/auth/"
    return scope[len(prefix) :] if scope.startswith(prefix) else scope


def render_report_text(
    report: Report, *, color: bool = False, width: int = 140, min_severity: Severity = Severity.WARNING
) -> str:
    """The access table, the cumulative tiers, and under them the findings down to ``min_severity``,
    grouped by the access (or resource, operation, spec) they concern."""
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=color, no_color=not color, width=width, highlight=False)
    title = for_terminal(report.card_name or report.card_source)
    if report.skill is not None:
        title += f"  [skill {for_terminal(report.skill)}]"
    console.print(f"{title}  ({for_terminal(report.card_source)}, sha256 {report.card_sha256[:12]})", markup=False)
    if not report.card_valid:
        console.print(
            "INVALID card: nothing derived from it can be granted (its errors are listed below).",
            style="bold red",
            markup=False,
        )
    table = Table(show_header=True, header_style="bold", expand=False, pad_edge=False)
    for col in ("access", "identity", "necessity", "status", "scopes / credentials", "grants", "cost"):
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
        cost = _access_cost(a.costs, a.operation_cost) if a.complete else "-"
        table.add_row(
            Text(one_line(a.id, max_len=48)),
            Text(a.identity),
            Text(a.necessity),
            Text(for_terminal(status)),
            # Wrapped, never cut: the reason's end is often the fix (`--allow-private-network` ...).
            Text(one_line(what, max_len=2000)),
            Text(grants),
            Text(for_terminal(cost)),
            style=None if a.complete else "bold red",
        )
    console.print(table)
    tiers = Table(show_header=True, header_style="bold", title="cumulative tiers", pad_edge=False)
    tiers.add_column("tier", overflow="fold")
    for ident in IDENTITIES:
        tiers.add_column(ident.lower(), overflow="fold")
    tiers.add_column("acknowledge (3P)", overflow="fold")
    tiers.add_column("asks first", overflow="fold")
    tiers.add_column("costs", overflow="fold")
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
            Text(for_terminal(_tier_cost(t))),
        )
    console.print(tiers)
    _print_findings(console, report, min_severity)
    if not report.card_valid:
        console.print(
            "INVALID: the card has errors (see above); nothing derived from it can be granted.", style="bold red"
        )
    elif not report.complete:
        console.print("INCOMPLETE: some permissions could not be determined (see above).", style="bold red")
    return buf.getvalue()


def _access_cost(costs: list[dict[str, Any]] | None, operation: Mapping[str, Any] | None) -> str:
    """The provider's class of each chosen scope ("restricted", "admin-consent" ...), "unclassified"
    where no page classes it; an operation's own cost after it."""
    parts = [str(c.get("class") or "unclassified") for c in costs or []]
    if operation:
        parts.append(str(operation.get("class")))
    return ", ".join(dict.fromkeys(parts)) or "-"


def _tier_cost(t: TierRecord) -> str:
    """Each trigger of the tier with what causes it ("google-security-assessment: gmail.readonly")."""
    out: list[str] = []
    for ident in IDENTITIES:
        for trig in t.identities[ident].costs.get("triggers", ()):
            causes = ", ".join(dict.fromkeys(_short(str(c["scope"])) for c in trig["causes"]))
            item = f"{trig['trigger']}: {causes}"
            if item not in out:
                out.append(item)
    return "; ".join(out) or "-"


def _groups(report: Report) -> list[tuple[str, str, tuple[int, int]]]:
    """(JSON pointer, heading, order) of each manifest entry a finding can point into, most specific
    pointer first; the order lists resources, then operations, then accesses, each in card order."""
    card = report.card
    if card is None:
        return []
    m = card.manifest
    users: dict[str, list[str]] = {}
    for a in m.resource_accesses:
        op = m.operation(a.operation)
        if op is not None:
            users.setdefault(f"op:{op.id}", []).append(a.id)
            users.setdefault(f"res:{op.resource}", []).append(a.id)
    out: list[tuple[str, str, tuple[int, int]]] = []
    for i, r in enumerate(m.resources):
        out.append((r.loc.pointer, f"resource {r.id}" + _used_by(users.get(f"res:{r.id}", [])), (0, i)))
    for i, o in enumerate(m.operations):
        out.append((o.loc.pointer, f"operation {o.id}" + _used_by(users.get(f"op:{o.id}", [])), (1, i)))
    for i, a in enumerate(m.resource_accesses):
        out.append((a.loc.pointer, f"access {a.id}", (2, i)))
    # Longest pointer first, so `/resources/1` does not swallow `/resources/10`'s findings by prefix.
    return sorted(out, key=lambda t: -len(t[0]))


def _used_by(ids: list[str]) -> str:
    return f" (accesses {', '.join(dict.fromkeys(ids))})" if ids else ""


def _print_findings(console: Console, report: Report, min_severity: Severity) -> None:
    shown = [f for f in findings(report) if f.rank <= min_severity.rank]
    if not shown:
        return
    groups = _groups(report)
    # The card's own findings first, then its entries in card order, then the specs'.
    grouped: dict[tuple[int, int, str], list[Finding]] = {}
    for f in shown:
        key = (-1, 0, "card")
        if f.source is not None:
            key = (3, 0, f"spec {f.source}")
        else:
            for pointer, heading, (kind, index) in groups:
                if pointer and (f.path == pointer or f.path.startswith(pointer + "/")):
                    key = (kind, index, heading)
                    break
        grouped.setdefault(key, []).append(f)
    console.print("diagnostics", style="bold", markup=False)
    card = report.card
    width = console.width - 1
    for key in sorted(grouped):
        _wrapped(console, for_terminal(key[2]), 2, width)
        for f in grouped[key]:
            pos = card.position(f.path) if card is not None and f.source is None else None
            where = f"{pos[0]}:{pos[1]}: " if pos else ""
            _wrapped(console, f"{where}{f.severity}[{f.code}] {for_terminal(f.message)}", 4, width)
            if f.hint:
                _wrapped(console, f"hint: {for_terminal(f.hint)}", 6, width)


def _wrapped(console: Console, text: str, indent: int, width: int) -> None:
    """A long message wraps under itself, not at the left margin (and without rich's padding to
    the full width, which leaves trailing blanks in logs)."""
    pad = " " * indent
    lines = textwrap.wrap(
        text,
        width=max(width, indent + 20),
        initial_indent=pad,
        subsequent_indent=pad,
        break_long_words=False,  # a URL or scope stays whole, to be copied
        break_on_hyphens=False,
    )
    for line in lines or [pad]:
        console.print(Text(line), soft_wrap=True)
