"""The ``ramscope`` command line: argument parsing and rendering only.

Every command is a thin call into the library API; nothing here decides what a
permission is. Exit codes (``docs/cli.md``): 0 success, 1 invalid card,
2 usage error or unreadable input, 3 derivation incomplete, 4 (diff) new
permissions or other new risks, 5 (check) an error-severity rule failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, TextIO

from . import __version__
from ._text import for_terminal
from .errors import InputError, RamscopeError

if TYPE_CHECKING:
    from ._io import OutputTarget
    from .card import Card
    from .config import Settings
    from .derive import Engine
    from .diagnostics import Severity
    from .governance.locate import Locator
    from .outputs.report import Report, StoredReport

__all__ = [
    "EXIT_DIFF_NEW_PERMISSIONS",
    "EXIT_INCOMPLETE",
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_RULES_FAILED",
    "EXIT_USAGE",
    "main",
    "run",
]

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3
EXIT_DIFF_NEW_PERMISSIONS = 4
#: ``check``: an error-severity rule failed (``ramscope.governance.check.EXIT_RULES_FAILED``).
EXIT_RULES_FAILED = 5


EXIT_CODES_HELP = """exit codes:
  0  success
  1  the card is invalid (its errors are printed on stderr)
  2  usage error, an input file that cannot be read, or an output that cannot be written
  3  derivation incomplete: some access's permissions are unknown (the report is still written)
  4  (diff) the new card needs permissions the old one did not, or adds another risk
     (a dropped confirmation, a new third-party data egress, a new identity)

docs: docs/cli.md (commands), docs/report.md (the report), docs/policy.md, docs/first-card.md"""


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit 2 with one clean line (argparse's own convention too), and a
    mistyped command, choice or option gets the nearest real one suggested."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}{self._suggestion(message)}\n")

    def _suggestion(self, message: str) -> str:
        import difflib
        import re

        choice = re.match(r"argument [^:]*: invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if choice:
            options = re.findall(r"'([^']*)'", choice.group(2)) or [x.strip() for x in choice.group(2).split(",")]
            near = difflib.get_close_matches(choice.group(1), options, n=1, cutoff=0.5)
        else:
            unknown = re.match(r"unrecognized arguments: (\S+)", message)
            if not unknown or not unknown.group(1).startswith("-"):
                return ""
            near = difflib.get_close_matches(unknown.group(1).split("=", 1)[0], _option_strings(self), n=1, cutoff=0.6)
        return f" (did you mean '{near[0]}'?)" if near else ""


def _option_strings(parser: argparse.ArgumentParser) -> list[str]:
    """Every option string of ``parser`` and of the subcommand parsers it holds."""
    out: list[str] = []
    for action in parser._actions:
        out += [s for s in action.option_strings if s.startswith("--")]
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += _option_strings(sub)
    return list(dict.fromkeys(out))


def _format_option(p: argparse.ArgumentParser, choices: tuple[str, ...], default: str) -> None:
    p.add_argument(
        "--format",
        choices=choices,
        default=default,
        help=f"output format: {', '.join(choices)} (default: {default})",
    )


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {v}")
    return v


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text}")
    return v


def _add_global_options(p: argparse.ArgumentParser, *, in_subcommand: bool) -> None:
    """The global options; on subcommands they default to SUPPRESS so values given
    before the command are not overwritten by a subparser's defaults."""

    def d(value: Any) -> Any:
        return argparse.SUPPRESS if in_subcommand else value

    g = p.add_argument_group("global options")
    g.add_argument(
        "--cache-dir",
        type=Path,
        default=d(None),
        metavar="DIR",
        help="spec cache (default: $RAMSCOPE_CACHE_DIR, else the user's cache directory, e.g. ~/.cache/ramscope; "
        "`--cache-dir specs_cache` keeps a project-local one)",
    )
    g.add_argument(
        "--offline",
        action="store_true",
        default=d(False),
        help="never touch the network; only the cache and a cassette answer",
    )
    g.add_argument(
        "--cassette",
        type=Path,
        default=d(None),
        metavar="FILE",
        help="replay recorded HTTP exchanges from FILE (with --record: record into it)",
    )
    g.add_argument("--record", action="store_true", default=d(False), help="record exchanges into --cassette")
    g.add_argument(
        "--allow-private-network",
        action="store_true",
        default=d(False),
        help="allow spec URLs on loopback, private, link-local and other non-public addresses",
    )
    g.add_argument(
        "--timeout",
        type=_positive_float,
        default=d(30.0),
        metavar="SECONDS",
        help="total time allowed per exchange (default 30)",
    )
    g.add_argument(
        "--spec-deadline",
        type=_positive_float,
        default=d(300.0),
        metavar="SECONDS",
        help="total time allowed for all exchanges of one spec URL, e.g. an MCP server's pages and metadata "
        "(default 300)",
    )
    g.add_argument(
        "--max-spec-bytes",
        type=_positive_int,
        default=d(64 * 1024 * 1024),
        metavar="N",
        help="largest spec accepted, after decompression (default 64 MiB)",
    )
    g.add_argument("--jobs", type=_positive_int, default=d(8), metavar="N", help="concurrent fetches (default 8)")
    g.add_argument(
        "--cache-ttl",
        type=_positive_float,
        default=d(86400.0),
        metavar="SECONDS",
        help="freshness of cached specs when the server gives none (default 24 h)",
    )
    g.add_argument(
        "--cache-max-ttl",
        type=_positive_float,
        default=d(7 * 86400.0),
        metavar="SECONDS",
        help="longest freshness of a cached spec, whatever the server says; entries claiming more, or "
        "fetched in the future, are not used (default 7 days)",
    )
    g.add_argument("--refresh", action="store_true", default=d(False), help="refetch even fresh cache entries")
    g.add_argument(
        "--max-depth",
        type=int,
        default=d(3),
        metavar="N",
        help="how deep to follow A2A agents carrying their own manifest (default 3)",
    )
    g.add_argument(
        "--policy",
        type=Path,
        default=d(None),
        metavar="FILE",
        help="TOML policy: pin, exclude or prefer scopes (see docs/policy.md)",
    )
    g.add_argument(
        "--validate-specs",
        action="store_true",
        default=d(False),
        help="also validate OpenAPI specs strictly, sandboxed (pip install 'ramscope[validate]')",
    )
    g.add_argument("--no-progress", action="store_true", default=d(False), help="no progress bars")
    g.add_argument(
        "-q",
        "--quiet",
        action="count",
        default=d(0),
        help="no diagnostics or notes on stderr (the exit code still tells); text lists errors only",
    )
    g.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=d(0),
        help="every diagnostic on stderr (warnings and info too); text lists info too",
    )


class _Command(NamedTuple):  # not a dataclass: `dataclasses` (and `inspect`) cost start-up 8 ms
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# --------------------------------------------------------------------------- validate


def _configure_validate(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "cards",
        nargs="+",
        metavar="CARD",
        help="card or manifest files (JSON or YAML; - for stdin), directories of them, or glob patterns",
    )
    _format_option(p, ("text", "json", "sarif"), "text")


def _run_validate(args: argparse.Namespace) -> int:
    from ._io import expand_card_args
    from .card import load_card
    from .diagnostics import Severity, has_errors
    from .outputs.diagnostics import CardDiagnostics, render_json, render_sarif, render_text
    from .validate import validate

    results: list[CardDiagnostics] = []
    unreadable = False
    paths = expand_card_args(args.cards)
    for path in paths:
        try:
            card = load_card(path)
        except InputError as exc:
            if len(args.cards) == 1 and path == args.cards[0]:
                raise  # the one file named: its error is the answer
            _fail(str(exc))  # one of many: said, and the others still checked
            unreadable = True
            continue
        results.append(CardDiagnostics(card, validate(card)))
    out = sys.stdout
    if args.format == "text":
        min_sev = Severity.ERROR if args.quiet >= 1 else Severity.INFO
        if results:
            out.write(render_text(results, min_severity=min_sev))
    else:
        if args.format == "json":
            docs = render_json(results)
            # One file named: one object, as before; directories, globs and several files: a list.
            _write_json(out, docs[0] if len(docs) == 1 and paths == args.cards == [args.cards[0]] else docs)
        else:
            _write_json(out, render_sarif(results))
        if not args.quiet:
            # stdout is a document for machines: the errors are said where people look, too.
            from .outputs.diagnostics import Finding, diagnostic_line

            for res in results:
                for d in res.diagnostics:
                    if d.severity is Severity.ERROR or args.verbose:
                        sys.stderr.write(
                            diagnostic_line(res.card.source, res.card.position(d.path), Finding.of(d)) + "\n"
                        )
    if unreadable:
        return EXIT_USAGE
    return EXIT_INVALID if any(has_errors(r.diagnostics) for r in results) else EXIT_OK


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

    from ._io import expand_card_args
    from .card import load_card
    from .outputs.fetch import render_fetch_table
    from .store import SpecStore, fetch_refs, spec_refs

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
        render_fetch_table(outcomes, console, failures_only=args.quiet > 0)
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


# --------------------------------------------------------------------------- schema


def _configure_schema(p: argparse.ArgumentParser) -> None:
    from .schema import SCHEMA_NAMES

    p.add_argument("name", choices=SCHEMA_NAMES, help="which schema to print")


def _run_schema(args: argparse.Namespace) -> int:
    from .schema import load_schema, render

    sys.stdout.write(render(load_schema(args.name)))
    return EXIT_OK


# --------------------------------------------------------------------------- derive family


def _engine(args: argparse.Namespace) -> Engine:
    import gc

    from .derive import Engine
    from .policy import Policy, load_policy

    policy = load_policy(args.policy) if args.policy else Policy()
    engine = Engine(settings_from_args(args), policy=policy)
    # What is alive now (the modules, their classes and functions: most of the objects the collector
    # tracks) lives as long as the process: leave it out of every collection. Measured on a cold
    # derive of four large specs, the collections walking it cost 0.1 s of 1.5 s (issue 17). Only
    # in ramscope's own process: the library leaves the collector alone.
    gc.freeze()
    return engine


class _Derived:
    """The reports of every card, derived as they are consumed (one chunk of cards in memory at a
    time, however large the batch); an unreadable card is reported and the others still derived."""

    def __init__(self, args: argparse.Namespace, paths: Sequence[str]) -> None:
        self.args = args
        self.paths = paths
        self.worst = EXIT_OK
        self.codes: set[int] = set()

    def __iter__(self) -> Iterator[Report]:
        with _engine(self.args) as engine:
            for report in engine.derive_many(self._cards()):
                self.codes.add(report.exit_code)
                yield report

    def as_json(self) -> Iterator[Report | StoredReport]:
        """The reports, where only their JSON is needed: a card derived before from the same inputs
        is not derived again (``ramscope.reuse``)."""
        with _engine(self.args) as engine:
            for report in engine.derive_files(self.paths, on_unreadable=self._unreadable):
                self.codes.add(report.exit_code)
                yield report

    def _unreadable(self, exc: InputError) -> None:
        _fail(str(exc))
        self.worst = EXIT_USAGE

    def _cards(self) -> Iterator[Card]:
        from .card import load_card

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


def _say_findings(args: argparse.Namespace, report: Report | StoredReport, *, positions: bool = True) -> None:
    """One line per failing item on stderr, as `validate` prints them (``file:line:col: error[code]
    path: message``): the card's errors (exit 1), each access whose permissions are unknown (exit 3).
    ``-v``: every finding; ``-q``: none (the exit code still says it)."""
    from .card import load_card
    from .outputs.report import Report

    if args.quiet:
        return
    from .outputs.diagnostics import diagnostic_line, findings, is_failing

    shown = [f for f in findings(report) if args.verbose or is_failing(f)]
    if not shown:
        return
    stored_at: Mapping[str, tuple[int, int]] | None = getattr(report, "positions", None)  # stored beside it
    if stored_at is not None and positions:
        for f in shown:
            pos = stored_at.get(f.path) if f.source is None else None
            sys.stderr.write(diagnostic_line(f.source or report.card_source, pos, f) + "\n")
        return
    card = report.card if isinstance(report, Report) else None
    if card is None and positions and report.card_source != "-":
        with contextlib.suppress(InputError):
            card = load_card(report.card_source)  # a reused report: only for line and column
    for f in shown:
        pos = card.position(f.path) if card is not None and f.source is None else None
        sys.stderr.write(diagnostic_line(f.source or report.card_source, pos, f) + "\n")


def _reports(args: argparse.Namespace, paths: Sequence[str]) -> tuple[list[Report], int]:
    """Derive every card; an unreadable card is reported and the others still derived."""
    from ._io import expand_card_args

    derived = _Derived(args, expand_card_args(paths))
    reports = list(derived)
    return reports, derived.worst


def _exit_code(reports: Sequence[Report], worst: int) -> int:
    codes = {r.exit_code for r in reports} | {worst}
    for code in (EXIT_USAGE, EXIT_INVALID, EXIT_INCOMPLETE):
        if code in codes:
            return code
    return EXIT_OK


def _emit(args: argparse.Namespace, text: str, target: OutputTarget | None = None) -> None:
    from ._io import atomic_write

    if getattr(args, "output", None):
        atomic_write(target or args.output, text)
    else:
        sys.stdout.write(text)


def _output_target(args: argparse.Namespace, cards: Sequence[str]) -> OutputTarget | None:
    """``-o FILE`` checked before any work: a missing directory, a device, or an input of this run (a card,
    the policy, the cassette) fails now."""
    from ._io import check_output

    if not getattr(args, "output", None):
        return None
    inputs = [*cards, *(str(f) for f in (getattr(args, "policy", None), getattr(args, "cassette", None)) if f)]
    return check_output(args.output, protect=inputs)


def _configure_derive(p: argparse.ArgumentParser) -> None:
    p.add_argument("cards", nargs="+", metavar="CARD", help="cards, directories of cards, or globs")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write the report here (atomically)")
    _format_option(p, ("json", "text"), "json")
    p.add_argument(
        "--no-reuse",
        action="store_true",
        help="derive every card again, even one derived before from the same card, settings, policy and specs",
    )
    p.add_argument("--skill", metavar="ID", help="only this skill's accesses and its own tiers (per-skill extension)")


class _NothingToWrite(Exception):
    """Raised in an ``_output`` block to leave ``-o FILE`` unwritten."""


@contextmanager
def _output(args: argparse.Namespace, cards: Sequence[str] = ()) -> Iterator[Callable[[str], object]]:
    """A writer to stdout, or to ``-o FILE`` (atomically: the file appears whole, at the end;
    not at all if the block raises, :class:`_NothingToWrite` included). ``FILE`` is checked on
    entry and is never one of ``cards``."""
    from ._io import atomic_writer

    target = _output_target(args, cards)
    if target is not None:
        with contextlib.suppress(_NothingToWrite), atomic_writer(target) as fh:
            yield lambda text: fh.write(text.encode("utf-8"))
    else:
        with contextlib.suppress(_NothingToWrite):
            yield sys.stdout.write


def _run_derive(args: argparse.Namespace) -> int:
    # Reports are written as they are derived: a batch of 10,000 cards is never all in memory.
    from ._io import expand_card_args

    paths = expand_card_args(args.cards)
    derived = _Derived(args, paths)
    if args.skill:
        return _run_derive_skill(args, paths, derived)
    with _output(args, paths) as write:
        if args.format == "text":
            from .outputs.text import render_report_text

            color = args.output is None and sys.stdout.isatty()
            for r in derived:
                write(render_report_text(r, color=color, min_severity=_text_severity(args)))
                _say_findings(args, r)
        elif len(paths) == 1 and len(args.cards) == 1:
            reports = list(derived.as_json())
            if len(reports) == 1 and derived.worst == EXIT_OK:
                write(json.dumps(reports[0].to_dict(), indent=2, ensure_ascii=False) + "\n")
                _say_findings(args, reports[0])
        else:
            # Batches are JSON Lines: one report per line, streamable and greppable.
            for one in derived.as_json():
                write(_report_line(one))
                _say_findings(args, one)
        if not derived.codes and derived.worst != EXIT_OK:
            # Every card was unreadable (each said so on stderr): no report exists, so no file is
            # written; an empty `-o` file would read as a report of nothing.
            raise _NothingToWrite
    return derived.exit_code


def _run_derive_skill(args: argparse.Namespace, paths: Sequence[str], derived: _Derived) -> int:
    """``derive --skill ID``: each card's report restricted to one skill, with that skill's own tiers."""
    from .governance.skills import restrict_report, restrict_report_dict

    codes: set[int] = {derived.worst}
    with _output(args, paths) as write:
        if args.format == "text":
            from .outputs.text import render_report_text

            color = args.output is None and sys.stdout.isatty()
            for r in derived:
                one = restrict_report(r, args.skill)
                codes.add(one.exit_code)
                write(render_report_text(one, color=color, min_severity=_text_severity(args)))
        else:
            docs = (restrict_report_dict(one.to_dict(), args.skill) for one in derived.as_json())
            single = len(paths) == 1 and len(args.cards) == 1
            for doc in docs:
                codes.add(_exit_from_dict(doc))
                write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n" if single else _json_line(doc))
        if not derived.codes and derived.worst != EXIT_OK:
            raise _NothingToWrite
    for code in (EXIT_USAGE, EXIT_INVALID, EXIT_INCOMPLETE):
        if code in codes:
            return code
    return EXIT_OK


def _text_severity(args: argparse.Namespace) -> Severity:
    """What text output lists under its tables: errors and warnings; -q errors only; -v info too."""
    from .diagnostics import Severity

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
        _say_findings(args, r)
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
    return _exit_code(reports, worst)


def _configure_consent(p: argparse.ArgumentParser) -> None:
    p.add_argument("card", metavar="CARD")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here (atomically)")
    _format_option(p, ("json", "markdown", "html"), "json")
    p.add_argument("--skill", metavar="ID", help="ask only for what this skill uses (per-skill extension)")


def _run_consent(args: argparse.Namespace) -> int:
    from .card import load_card

    target = _output_target(args, [args.card])
    card = load_card(args.card)
    with _engine(args) as engine:
        report = engine.derive(card)
    if args.skill:
        from .governance.skills import restrict_report

        report = restrict_report(report, args.skill)
    provider = card.document.get("provider")
    from .outputs.consent import consent_data, render_html, render_markdown

    data = consent_data(
        report,
        description=card.description,
        provider=str(provider.get("organization", "")) if isinstance(provider, dict) else "",
    )
    if args.format == "json":
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    elif args.format == "markdown":
        text = render_markdown(data)
    else:
        text = render_html(data)
    _emit(args, text, target)
    _say_findings(args, report)
    return report.exit_code


def _configure_diff(p: argparse.ArgumentParser) -> None:
    p.add_argument("old", metavar="OLD", help="the old card, or a saved `derive` JSON report")
    p.add_argument("new", metavar="NEW", help="the new card, or a saved `derive` JSON report")
    _format_option(p, ("json", "text"), "json")


def _report_dict(engine: Engine, path: str) -> tuple[dict[str, Any], Report | StoredReport]:
    """The report of a card (derived) or a saved report (checked), with what :func:`_say_findings` reads."""
    from .card import load_card
    from .outputs.diff import check_report_shape
    from .outputs.report import StoredReport

    card = load_card(path)
    if card.document.get("report_version") is not None and "tiers" in card.document:
        saved = dict(card.document)  # a saved report: a stranger's file too, checked before use
        check_report_shape(saved, source=path)
        # Its diagnostics are said without line and column: they point into a card we do not have.
        as_stored = StoredReport(card_source=path, exit_code=0, json=json.dumps(saved).encode())
        return saved, as_stored
    report = engine.derive(card)
    return report.to_dict(), report


def _run_diff(args: argparse.Namespace) -> int:
    from .outputs.report import Report

    with _engine(args) as engine:
        old, old_report = _report_dict(engine, args.old)
        new, new_report = _report_dict(engine, args.new)
    from .outputs.diff import diff_reports, render_diff_text, risk_line

    d = diff_reports(old, new)
    if args.format == "json":
        sys.stdout.write(json.dumps(d, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_diff_text(d))
    old_valid, new_valid = d["old"].get("valid") is not False, d["new"].get("valid") is not False
    if not args.quiet:
        if not old_valid:
            sys.stderr.write(
                f"ramscope: warning: {for_terminal(args.old)}: the old card is invalid; "
                "what can be compared is compared\n"
            )
        for side in (old_report, new_report):
            if isinstance(side, Report):
                _say_findings(args, side)
            elif args.verbose or side.to_dict().get("complete") is False:
                _say_findings(args, side, positions=False)
        if new_valid:
            for r in d["risks"]:
                sys.stderr.write(f"ramscope: {risk_line(r)}\n")
    if not new_valid:
        return EXIT_INVALID
    if d["risks"] or d["new_permissions"]:
        return EXIT_DIFF_NEW_PERMISSIONS
    return EXIT_OK if d["complete"] else EXIT_INCOMPLETE


# --------------------------------------------------------------------------- governance


def _governed(args: argparse.Namespace, paths: Sequence[str]) -> tuple[list[tuple[dict[str, Any], Locator]], int]:
    """Each CARD's report (derived, or a saved report read as it is) and a locator into its card.

    Governance reads reports; this is where the CLI obtains them. Unreadable inputs are said on
    stderr and give exit 2; the others are still judged.
    """
    from ._io import expand_card_args
    from .card import load_card
    from .governance.locate import Locator
    from .outputs.diff import check_report_shape

    out: list[tuple[dict[str, Any], Locator]] = []
    worst = EXIT_OK
    with _engine(args) as engine:
        for path in expand_card_args(paths):
            try:
                card = load_card(path)
                if card.document.get("report_version") is not None and "tiers" in card.document:
                    saved = dict(card.document)
                    check_report_shape(saved, source=str(path))
                    source = saved["card"].get("source")
                    locator = Locator()
                    # A saved report points back at its card: findings are placed there when it is readable.
                    if isinstance(source, str) and source and os.path.isfile(source):
                        with contextlib.suppress(InputError):
                            locator = Locator.for_card(load_card(source))
                    out.append((saved, locator))
                else:
                    out.append((engine.derive(card).to_dict(), Locator.for_card(card)))
            except InputError as exc:
                _fail(str(exc))
                worst = EXIT_USAGE
    return out, worst


def _configure_check(p: argparse.ArgumentParser) -> None:
    p.add_argument("cards", nargs="+", metavar="CARD", help="cards, saved `derive` reports, directories or globs")
    p.add_argument("--rules", type=Path, required=True, metavar="RULES.toml", help="the organisation's rules")
    _format_option(p, ("text", "json", "sarif"), "text")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here (atomically)")


def _run_check(args: argparse.Namespace) -> int:
    from .governance.check import check_report, exit_code, results_json
    from .governance.rules import load_rules
    from .governance.sarif import render_sarif, render_text

    target = _output_target(args, [*args.cards, str(args.rules)])
    rules = load_rules(args.rules)
    reports, worst = _governed(args, args.cards)
    results = [check_report(report, rules, locator) for report, locator in reports]
    if args.format == "text":
        text = render_text(results)
    elif args.format == "json":
        text = json.dumps(results_json(results, rules), indent=2, ensure_ascii=False) + "\n"
    else:
        text = json.dumps(render_sarif(results, rules), indent=2, ensure_ascii=False) + "\n"
    _emit(args, text, target)
    return EXIT_USAGE if worst == EXIT_USAGE else exit_code(results)


def _configure_export(p: argparse.ArgumentParser) -> None:
    p.add_argument("card", metavar="CARD", help="a card or a saved `derive` report")
    _format_option(p, ("cedar", "cedar-schema", "json"), "cedar")
    p.add_argument("--schema", type=Path, metavar="FILE", help="with --format cedar: also write the Cedar schema here")
    p.add_argument("--skill", metavar="ID", help="only what this skill may do (per-skill permission sets)")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here (atomically)")


def _run_export(args: argparse.Namespace) -> int:
    from ._io import atomic_write
    from .governance import cedar

    target = _output_target(args, [args.card])
    if args.format == "cedar-schema":
        _emit(args, cedar.cedar_schema(), target)
        return EXIT_OK
    reports, worst = _governed(args, [args.card])
    if not reports:
        return worst
    report = reports[0][0]
    if args.skill:
        from .governance.skills import restrict_report_dict

        report = restrict_report_dict(report, args.skill)
    if args.format == "json":
        _emit(args, json.dumps(cedar.allowlist(report), indent=2, ensure_ascii=False) + "\n", target)
    else:
        if args.schema:
            atomic_write(args.schema, cedar.cedar_schema())
        _emit(args, cedar.cedar_policies(report), target)
    return _exit_from_dict(report)


def _exit_from_dict(report: Mapping[str, Any]) -> int:
    card = report.get("card") if isinstance(report.get("card"), dict) else {}
    if isinstance(card, dict) and card.get("valid") is False:
        return EXIT_INVALID
    return EXIT_OK if report.get("complete") is not False else EXIT_INCOMPLETE


def _configure_compare(p: argparse.ArgumentParser) -> None:
    p.add_argument("cards", nargs="+", metavar="CARD", help="cards or saved `derive` reports")
    p.add_argument("--rank", action="store_true", help="order least-privileged first (the rule is stated)")
    _format_option(p, ("text", "json"), "text")


def _run_compare(args: argparse.Namespace) -> int:
    from .governance.compare import compare_reports, render_compare_text

    reports, worst = _governed(args, args.cards)
    data = compare_reports([r for r, _ in reports], rank=args.rank)
    if args.format == "json":
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_compare_text(data))
    if worst != EXIT_OK:
        return worst
    codes = {_exit_from_dict(r) for r, _ in reports}
    for code in (EXIT_INVALID, EXIT_INCOMPLETE):
        if code in codes:
            return code
    return EXIT_OK


def _configure_universe(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "action",
        choices=("show", "refresh"),
        help="show: the universes and catalogs in use and their versions; refresh: rebuild Google's "
        "universe from its Discovery directory, through the spec cache (online, or a cassette)",
    )
    p.add_argument("name", nargs="?", choices=("google",), default="google", help="the universe (default google)")
    p.add_argument("--directory", default=None, metavar="URL", help="the Discovery directory to read")
    p.add_argument("--format", choices=("json", "text"), default="text")


def _run_universe(args: argparse.Namespace) -> int:
    from . import providers
    from .refresh import GOOGLE_DIRECTORY, refresh_google

    with _engine(args) as engine:
        if args.action == "refresh":
            result = refresh_google(engine.store, directory=args.directory or GOOGLE_DIRECTORY)
            u = result.universe
            doc: dict[str, Any] = {
                "refreshed": u.summary(),
                "documents": result.documents,
                "failed": [{"url": url, "error": why} for url, why in result.failed],
            }
            for url, why in result.failed:
                sys.stderr.write(f"ramscope: warning: {for_terminal(url)}: {for_terminal(why)}\n")
        else:
            universes = []
            for server in providers.UNIVERSES:
                used = engine.universe(server)
                shipped = providers.shipped_universe(server)
                universes.append(
                    {
                        **(used.summary() if used is not None else {"server": server}),
                        "refreshed": used is not None and shipped is not None and used.version != shipped.version,
                    }
                )
            catalogs = [c.summary() for name in providers.CATALOGS if (c := providers.catalog(name)) is not None]
            doc = {"universes": universes, "catalogs": catalogs}
    if args.format == "json":
        _write_json(sys.stdout, doc)
        return EXIT_OK
    if args.action == "refresh":
        u = result.universe
        sys.stdout.write(
            f"{u.name}: {len(u.ops)} operations from {result.documents} documents, version {u.version}"
            + (f" ({len(result.failed)} documents failed)" if result.failed else "")
            + "\n"
        )
        return EXIT_OK
    for item in doc["universes"]:
        origin = "refreshed" if item.get("refreshed") else "shipped"
        sys.stdout.write(
            f"universe {item.get('name', '-')}: {item['server']} version {item.get('version', '-')} ({origin}, "
            f"{item.get('operations', 0)} operations)\n"
        )
    for item in doc["catalogs"]:
        sys.stdout.write(f"catalog {item['name']}: version {item['version']} ({item['entries']} entries)\n")
    return EXIT_OK


# --------------------------------------------------------------------------- plumbing

COMMANDS: list[_Command] = [
    _Command("validate", "check a card's manifest; no network", _configure_validate, _run_validate),
    _Command("fetch", "fetch every spec the cards name into the cache", _configure_fetch, _run_fetch),
    _Command("derive", "derive the permission report of cards", _configure_derive, _run_derive),
    _Command("scopes", "print the least-privilege scopes of a cumulative tier", _configure_scopes, _run_scopes),
    _Command("consent", "consent-screen data (json, markdown, html)", _configure_consent, _run_consent),
    _Command("diff", "permissions added or removed between two cards or reports", _configure_diff, _run_diff),
    _Command("schema", "print the JSON Schema of the manifest or of the report", _configure_schema, _run_schema),
    _Command("check", "judge cards by an organisation's rules (text, json, sarif)", _configure_check, _run_check),
    _Command("export", "what a card may do, as Cedar policies or a JSON allowlist", _configure_export, _run_export),
    _Command(
        "compare", "agents side by side by footprint; --rank: least-privileged first", _configure_compare, _run_compare
    ),
    _Command("universe", "show or refresh the permission universes and catalogs", _configure_universe, _run_universe),
]


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given the arguments, only the subcommand they name is built (the same parse).

    Each argparse parser costs about a millisecond of gettext look-ups, and a run needs one.
    """
    parser = _Parser(
        prog="ramscope",
        description="Derive least-privilege permission sets from an A2A agent card's Resource Access Manifest.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ramscope {__version__}")
    _add_global_options(parser, in_subcommand=False)
    only = _named_command(parser, argv) if argv is not None else None
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for cmd in COMMANDS:
        if only is not None and cmd.name != only:
            continue
        p = sub.add_parser(
            cmd.name,
            help=cmd.help,
            description=cmd.help,
            epilog=EXIT_CODES_HELP,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        cmd.configure(p)
        _add_global_options(p, in_subcommand=True)
        p.set_defaults(_run=cmd.run)
    return parser


def _named_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names, when the top-level options before it are unambiguous.

    Only exact option names are followed (``--opt value``, ``--opt=value``, flags); anything
    else (help, an abbreviation, combined short flags, ``--``) gives ``None``: the full parser.
    ``--version`` gives ``""``: no subcommand is needed.
    """
    takes_value = {s: a.nargs != 0 for a in parser._actions for s in a.option_strings}
    names = {c.name for c in COMMANDS}
    it = iter(argv)
    for tok in it:
        if tok == "--version":
            return ""  # no subcommand: argparse prints the version as soon as it reads the option
        if tok in ("-h", "--help", "--"):
            return None
        if tok.startswith("-"):
            name, eq, _ = tok.partition("=")
            if name not in takes_value:
                return None
            if takes_value[name] and not eq:
                next(it, None)
            continue
        return tok if tok in names else None
    return None


def settings_from_args(args: argparse.Namespace) -> Settings:
    from .config import Settings, default_cache_dir

    return Settings(
        cache_dir=args.cache_dir or default_cache_dir(),
        offline=args.offline,
        cassette=args.cassette,
        record=args.record,
        allow_private_network=args.allow_private_network,
        timeout=args.timeout,
        spec_deadline=args.spec_deadline,
        max_spec_bytes=args.max_spec_bytes,
        jobs=args.jobs,
        cache_ttl=args.cache_ttl,
        cache_max_ttl=args.cache_max_ttl,
        refresh=args.refresh,
        progress=not args.no_progress and sys.stderr.isatty() and args.quiet == 0,
        max_depth=args.max_depth,
        validate_specs=args.validate_specs,
        reuse=not getattr(args, "no_reuse", False),
    )


def _report_line(report: Report | StoredReport) -> str:
    try:
        return report.to_json().decode() + "\n"
    except TypeError:
        return _json_line(report.to_dict())


def _json_line(doc: Any) -> str:
    """One compact JSON line. orjson (several times faster, and batches write thousands of lines),
    except for values it refuses (integers beyond 64 bits from a stranger's YAML): then the stdlib."""
    import orjson

    try:
        return orjson.dumps(doc, option=orjson.OPT_APPEND_NEWLINE).decode()
    except TypeError:
        return json.dumps(doc, ensure_ascii=False) + "\n"


def _write_json(out: TextIO, doc: Any) -> None:
    out.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


#: Error messages quote the input (a duplicate key, an id); one line of an error stays readable.
MAX_ERROR_CHARS = 2_000


def _fail(message: str, code: int = EXIT_USAGE) -> int:
    sys.stderr.write(f"ramscope: error: {for_terminal(message, max_len=MAX_ERROR_CHARS)}\n")
    return code


class _Terminated(BaseException):
    """SIGTERM, turned into an exception so that ``finally`` blocks and ``atomic_write``'s cleanup
    run, as they do for SIGINT's KeyboardInterrupt (the default SIGTERM action skips them)."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise _Terminated


@contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread (main() called from a thread): leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _without_httpx_cli() -> None:
    """Keep httpx from importing its own command-line client.

    ``import httpx`` imports ``httpx._main`` (click, rich's console, pygments) whenever they are
    installed, as they are here: 0.05 s of every run that fetches, for a CLI ramscope never runs.
    A ``None`` in ``sys.modules`` makes that import fail, which httpx handles (its ``main`` then
    says the CLI is not installed). Only in ramscope's own process: the library leaves it alone.
    """
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (``sys.argv`` if ``argv`` is not given); returns the exit code. Given
    ``argv`` (a call from another program, a test), the objects :func:`_engine` froze are handed
    back to the collector afterwards."""
    if argv is None:
        return _main(sys.argv[1:])
    try:
        return _main(list(argv))
    finally:
        import gc

        gc.unfreeze()


def run() -> NoReturn:
    """The ``ramscope`` program (console script, ``python -m ramscope``): :func:`main`, then
    :func:`_exit`."""
    _exit(main())


def _exit(code: int) -> NoReturn:
    """End ramscope's own process without the interpreter's teardown.

    Every command has closed what it wrote by the time it returns (the cache's pending writes
    flushed and its connections closed, ``-o`` files renamed into place); what is left is freeing
    each object one by one, 0.045 s of a derive of large specs, warm or cold (issue 17). Only
    stdout and stderr are still buffered: flushed here, and a failure to flush is the exit code
    Python itself gives for it (120).
    """
    try:
        sys.stdout.flush()
    except (OSError, ValueError) as exc:
        code = code or 120
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"ramscope: error: could not write the output: {exc}\n")
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        code = code or 120
    os._exit(code)


def _main(argv: list[str]) -> int:
    _without_httpx_cli()
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if args.record and args.cassette is None:
        parser.error("--record needs --cassette FILE")
    if args.record and args.offline:
        parser.error("--record and --offline contradict each other")
    try:
        with _sigterm_unwinds():
            code: int = args._run(args)
    except RamscopeError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        sys.stderr.write("ramscope: interrupted\n")
        return 130
    except _Terminated:
        sys.stderr.write("ramscope: terminated\n")
        return 128 + signal.SIGTERM
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); nothing more to say to it.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except OSError as exc:
        # Writing the output failed (a full disk, a device refusing it): a file given with -o says
        # so as an OutputError, stdout the same way.
        return _fail(f"could not write the output: {exc}")
    return code


if __name__ == "__main__":  # pragma: no cover
    run()
