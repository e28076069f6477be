"""The derivation commands: ``fetch``, ``derive``, ``scopes`` and ``consent``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from .._text import for_terminal
from ..errors import InputError
from ._common import (
    EXIT_INCOMPLETE,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    MAX_ERROR_CHARS,
    Command,
    NothingToWrite,
    emit,
    exit_from_dict,
    fail,
    format_option,
    json_line,
    open_engine,
    output,
    output_target,
    path_arg,
    pretty_json,
    report_line,
    reports_exit,
    say_findings,
    settings_from_args,
    write_pretty_json,
)

if TYPE_CHECKING:
    from ..card import Card
    from ..diagnostics import Severity
    from ..outputs.fetch import FetchRow
    from ..outputs.report import Report, StoredReport
    from ..store import FetchOutcome


# --------------------------------------------------------------------------- fetch


def _configure_fetch(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "cards",
        nargs="+",
        metavar="CARD",
        help="card or manifest files, directories of them, or glob patterns",
    )


def _run_fetch(args: argparse.Namespace) -> int:
    from rich.console import Console

    from .._io import expand_card_args
    from ..card import load_card
    from ..outputs.fetch import render_fetch_table
    from ..store import SpecStore, fetch_refs, spec_refs

    cards = [load_card(path) for path in expand_card_args(args.cards)]
    refs = spec_refs(cards)
    if not refs:
        sys.stderr.write("ramscope: no spec URLs in the given cards; nothing to fetch\n")
        return EXIT_OK
    with SpecStore(settings_from_args(args)) as store:
        outcomes = fetch_refs(store, refs)
        diagnostics = store.diagnostics
    tty = sys.stdout.isatty()
    console = Console(
        file=sys.stdout,
        no_color=not tty,
        highlight=False,
        emoji=False,
        width=None if tty else 200,
        force_terminal=tty,
    )
    failed = [o for o in outcomes if not o.ok]
    if args.quiet == 0 or failed:
        render_fetch_table([_fetch_row(o) for o in outcomes], console, failures_only=args.quiet > 0)
    if args.verbose:
        for d in diagnostics:
            sys.stderr.write(f"ramscope: {d.severity.value}: {for_terminal(d.message)} [{d.code}]\n")
    if failed:
        if not args.quiet:
            for o in failed:
                why = for_terminal(str(o.error) if o.error else "not fetched", max_len=MAX_ERROR_CHARS)
                sys.stderr.write(f"ramscope: error: {for_terminal(o.ref.url)}: {why}\n")
        sys.stderr.write(f"ramscope: {len(failed)} of {len(outcomes)} specs could not be fetched\n")
        return EXIT_INCOMPLETE
    return EXIT_OK


def _fetch_row(outcome: FetchOutcome) -> FetchRow:
    """What the table shows of one outcome, in plain values (the rendering does not know the store)."""
    from ..outputs.fetch import STATUS_NOTES, FetchRow

    url, kind, spec, err = outcome.ref.url, outcome.ref.protocol_name, outcome.spec, outcome.error
    if spec is not None:
        notes = tuple(n for n in STATUS_NOTES if spec.provenance.get(n))
        return FetchRow(url, kind, fetched=True, size=spec.size, origin=spec.origin.value, notes=notes)
    if err is None:
        return FetchRow(url, kind, fetched=False)
    return FetchRow(url, kind, fetched=False, error_code=err.code, error_detail=err.detail)


# --------------------------------------------------------------------------- derive family


class _Derived:
    """The reports of every card, derived as they are consumed (one chunk of cards in memory at a
    time, however large the batch); an unreadable card is reported and the others still derived."""

    def __init__(self, args: argparse.Namespace, paths: Sequence[str]) -> None:
        self.args = args
        self.paths = paths
        self.worst = EXIT_OK
        self.codes: set[int] = set()

    def __iter__(self) -> Iterator[Report]:
        with open_engine(self.args) as engine:
            for report in engine.derive_many(self._cards()):
                self.codes.add(report.exit_code)
                yield report

    def as_json(self) -> Iterator[Report | StoredReport]:
        """The reports, where only their JSON is needed: a card derived before from the same inputs
        is not derived again (``ramscope.derive.reuse``)."""
        with open_engine(self.args) as engine:
            for report in engine.derive_files(self.paths, on_unreadable=self._unreadable):
                self.codes.add(report.exit_code)
                yield report

    def _unreadable(self, exc: InputError) -> None:
        fail(str(exc))
        self.worst = EXIT_USAGE

    def _cards(self) -> Iterator[Card]:
        from ..card import load_card

        for path in self.paths:
            try:
                yield load_card(path)
            except InputError as exc:
                self._unreadable(exc)

    @property
    def exit_code(self) -> int:
        codes = self.codes | {self.worst}
        for code in (EXIT_USAGE, EXIT_INVALID, EXIT_INCOMPLETE):
            if code in codes:
                return code
        return EXIT_OK


def _reports(args: argparse.Namespace, paths: Sequence[str]) -> tuple[list[Report], int]:
    """Derive every card; an unreadable card is reported and the others still derived."""
    from .._io import expand_card_args

    derived = _Derived(args, expand_card_args(paths))
    reports = list(derived)
    return reports, derived.worst


def _configure_derive(p: argparse.ArgumentParser) -> None:
    p.add_argument("cards", nargs="+", metavar="CARD", help="cards, directories of cards, or globs")
    p.add_argument("-o", "--output", type=path_arg, metavar="FILE", help="write the report here (atomically)")
    format_option(p, ("json", "text"), "json")
    p.add_argument(
        "--no-reuse",
        action="store_true",
        help="derive every card again, even one derived before from the same card, settings, policy and specs",
    )
    p.add_argument("--skill", metavar="ID", help="only this skill's accesses and its own tiers (per-skill extension)")


def _run_derive(args: argparse.Namespace) -> int:
    # Reports are written as they are derived: a batch of 10,000 cards is never all in memory.
    from .._io import expand_card_args

    paths = expand_card_args(args.cards)
    derived = _Derived(args, paths)
    if args.skill:
        return _run_derive_skill(args, paths, derived)
    with output(args, paths) as write:
        if args.format == "text":
            from ..outputs.text import render_report_text

            color = args.output is None and sys.stdout.isatty()
            for r in derived:
                write(render_report_text(r, color=color, min_severity=_text_severity(args)))
                say_findings(args, r)
        elif len(paths) == 1 and len(args.cards) == 1:
            reports = list(derived.as_json())
            if len(reports) == 1 and derived.worst == EXIT_OK:
                write_pretty_json(write, reports[0].to_dict())
                say_findings(args, reports[0])
        else:
            # Batches are JSON Lines: one report per line, streamable and greppable.
            for one in derived.as_json():
                write(report_line(one))
                say_findings(args, one)
        if not derived.codes and derived.worst != EXIT_OK:
            # Every card was unreadable (each said so on stderr): no report exists, so no file is
            # written; an empty `-o` file would read as a report of nothing.
            raise NothingToWrite
    return derived.exit_code


def _run_derive_skill(args: argparse.Namespace, paths: Sequence[str], derived: _Derived) -> int:
    """``derive --skill ID``: each card's report restricted to one skill, with that skill's own tiers."""
    from ..governance.skills import restrict_report, restrict_report_dict

    codes: set[int] = {derived.worst}
    with output(args, paths) as write:
        if args.format == "text":
            from ..outputs.text import render_report_text

            color = args.output is None and sys.stdout.isatty()
            for r in derived:
                one = restrict_report(r, args.skill)
                codes.add(one.exit_code)
                write(render_report_text(one, color=color, min_severity=_text_severity(args)))
        else:
            docs = (restrict_report_dict(one.to_dict(), args.skill) for one in derived.as_json())
            single = len(paths) == 1 and len(args.cards) == 1
            for doc in docs:
                codes.add(exit_from_dict(doc))
                write(pretty_json(doc) if single else json_line(doc))
        if not derived.codes and derived.worst != EXIT_OK:
            raise NothingToWrite
    for code in (EXIT_USAGE, EXIT_INVALID, EXIT_INCOMPLETE):
        if code in codes:
            return code
    return EXIT_OK


def _text_severity(args: argparse.Namespace) -> Severity:
    """What text output lists under its tables: errors and warnings; -q errors only; -v info too."""
    from ..diagnostics import Severity

    if args.quiet:
        return Severity.ERROR
    return Severity.INFO if args.verbose else Severity.WARNING


def _configure_scopes(p: argparse.ArgumentParser) -> None:
    p.add_argument("cards", nargs="+", metavar="CARD", help="cards, directories of cards, or globs")
    p.add_argument(
        "--tier",
        choices=("required", "recommended", "optional"),
        default="optional",
        help="cumulative tier: required, recommended or optional (default: optional, everything)",
    )
    p.add_argument(
        "--identity",
        choices=("end_user", "agent", "all"),
        default="all",
        help="whose scopes: end_user, agent or all (default: all)",
    )


def _run_scopes(args: argparse.Namespace) -> int:
    reports, worst = _reports(args, args.cards)
    tier = args.tier.upper()
    idents = ("END_USER", "AGENT") if args.identity == "all" else (args.identity.upper(),)
    scopes: set[str] = set()
    for r in reports:
        say_findings(args, r)
        if not r.card_valid:
            continue  # nothing derived from an invalid card is granted (its errors were said)
        for ident in idents:
            it = r.tiers[tier].identities[ident]
            scopes.update(it.scopes)
            if args.quiet:
                continue
            if it.credentials:
                # stdout is scopes only (docs/cli.md); a credential that is not a scope must still be said.
                creds = ", ".join(f"{for_terminal(c['scheme'])} ({c['type']})" for c in it.credentials)
                sys.stderr.write(
                    f"ramscope: note: {for_terminal(r.card_source)}: {tier} {ident} also needs credentials "
                    f"that are not OAuth scopes: {creds}\n"
                )
            if not it.complete:
                sys.stderr.write(
                    f"ramscope: warning: {for_terminal(r.card_source)}: {tier} {ident} is incomplete: permissions "
                    f"of {', '.join(for_terminal(x) for x in it.incomplete_accesses)} are unknown\n"
                )
    # One scope per line is what scripts read: a scope holding a newline (or any control, bidi or
    # invisible character) would smuggle in a line of its own, so it is written escaped, and said.
    shown = sorted(scopes)
    for s in shown:
        if for_terminal(s) != s:
            sys.stderr.write(
                f"ramscope: warning: the scope '{for_terminal(s)}' holds control or invisible characters; "
                "it is written escaped\n"
            )
    sys.stdout.write("".join(f"{for_terminal(s)}\n" for s in shown))
    return reports_exit(reports, worst)


def _configure_consent(p: argparse.ArgumentParser) -> None:
    p.add_argument("card", metavar="CARD")
    p.add_argument("-o", "--output", type=path_arg, metavar="FILE", help="write here (atomically)")
    format_option(p, ("json", "markdown", "html"), "json")
    p.add_argument("--skill", metavar="ID", help="ask only for what this skill uses (per-skill extension)")


def _run_consent(args: argparse.Namespace) -> int:
    from ..card import load_card

    target = output_target(args, [args.card])
    card = load_card(args.card)
    with open_engine(args) as engine:
        report = engine.derive(card)
    if args.skill:
        from ..governance.skills import restrict_report

        report = restrict_report(report, args.skill)
    provider = card.document.get("provider")
    from ..outputs.consent import consent_data, render_html, render_markdown

    data = consent_data(
        report,
        description=card.description,
        provider=str(provider.get("organization", "")) if isinstance(provider, dict) else "",
    )
    if args.format == "json":
        text = pretty_json(data)
    elif args.format == "markdown":
        text = render_markdown(data)
    else:
        text = render_html(data)
    emit(args, text, target)
    say_findings(args, report)
    return report.exit_code


COMMANDS: list[Command] = [
    Command("fetch", "fetch every spec the cards name into the cache", _configure_fetch, _run_fetch),
    Command("derive", "derive the permission report of cards", _configure_derive, _run_derive),
    Command("scopes", "print the least-privilege scopes of a cumulative tier", _configure_scopes, _run_scopes),
    Command("consent", "consent-screen data (json, markdown, html)", _configure_consent, _run_consent),
]
