"""What every command shares: the parser, the global options, the settings and the engine they
give, and how a command writes its output, says its findings and fails."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, TextIO

from .._text import for_terminal
from ..errors import InputError

if TYPE_CHECKING:
    from pathlib import Path

    from .._io import OutputTarget
    from ..config import Settings
    from ..derive import Engine
    from ..outputs.report import Report, StoredReport


EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3
EXIT_DIFF_NEW_PERMISSIONS = 4
#: ``check``: an error-severity rule failed (``ramscope.governance.check.EXIT_RULES_FAILED``).
EXIT_RULES_FAILED = 5
#: ``audit``: a call the card does not declare, or a host it names nowhere (``ramscope.evidence.auditing``).
EXIT_UNDECLARED = 6


EXIT_CODES_HELP = """exit codes:
  0  success
  1  the card is invalid (its errors are printed on stderr)
  2  usage error, an input file that cannot be read, or an output that cannot be written
  3  derivation incomplete: some access's permissions are unknown (the report is still written)
  4  (diff) the new card needs permissions the old one did not, or adds another risk
     (a dropped confirmation, a new third-party data egress, a new identity)
  6  (audit) the evidence shows a call the card does not declare, or a host it names nowhere

docs: docs/cli.md (commands), docs/report.md (the report), docs/policy.md, docs/first-card.md,
docs/evidence.md (draft and audit)"""


def path_arg(text: str) -> Path:
    """``type=`` of the path options: pathlib is imported when a path is given, not to build the
    parser (``--version`` and ``--help`` need none; issue 36)."""
    from pathlib import Path

    return Path(text)


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter with the terminal's width read as ``shutil.get_terminal_size`` reads it,
    without importing shutil (and its compression modules): argparse builds a formatter for every
    option it adds, so every run paid for shutil to build its parser (issue 36)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


class _RawDescriptionFormatter(_Formatter, argparse.RawDescriptionHelpFormatter):
    pass


def _columns() -> int:
    import os

    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


#: argparse's formatters, and their twins that do not import shutil.
_FAST_FORMATTERS: dict[type[argparse.HelpFormatter], type[argparse.HelpFormatter]] = {
    argparse.HelpFormatter: _Formatter,
    argparse.RawDescriptionHelpFormatter: _RawDescriptionFormatter,
}


class Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit 2 with one clean line (argparse's own convention too), and a
    mistyped command, choice or option gets the nearest real one suggested."""

    def __init__(self, **kwargs: Any) -> None:
        formatter = kwargs.pop("formatter_class", argparse.HelpFormatter)
        super().__init__(formatter_class=_FAST_FORMATTERS.get(formatter, formatter), **kwargs)

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
            option = unknown.group(1).split("=", 1)[0]
            owners = command_options(self).get(option)
            if owners:
                # A real option, of a command, given before it: "did you mean '--no-reuse'" would be no help.
                names = ", ".join(f"'{c}'" for c in owners[:3]) + (" ..." if len(owners) > 3 else "")
                example = f"{self.prog} {owners[0]} {option} ..."
                return f" ('{option}' is an option of {names}: give it after the command, e.g. '{example}')"
            near = difflib.get_close_matches(option, option_strings(self), n=1, cutoff=0.6)
        return f" (did you mean '{near[0]}'?)" if near else ""


def command_options(parser: argparse.ArgumentParser) -> dict[str, list[str]]:
    """Each option string only a subcommand knows (not ``parser`` itself) -> the commands that take it."""
    own = {s for a in parser._actions for s in a.option_strings}
    out: dict[str, list[str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                for s in option_strings(sub):
                    if s not in own and name not in out.setdefault(s, []):
                        out[s].append(name)
    return out


def option_strings(parser: argparse.ArgumentParser) -> list[str]:
    """Every option string of ``parser`` and of the subcommand parsers it holds."""
    out: list[str] = []
    for action in parser._actions:
        out += [s for s in action.option_strings if s.startswith("--")]
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += option_strings(sub)
    return list(dict.fromkeys(out))


def format_option(p: argparse.ArgumentParser, choices: tuple[str, ...], default: str) -> None:
    p.add_argument(
        "--format",
        choices=choices,
        default=default,
        help=f"output format: {', '.join(choices)} (default: {default})",
    )


def positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {v}")
    return v


def positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text}")
    return v


def add_global_options(p: argparse.ArgumentParser, *, in_subcommand: bool) -> None:
    """The global options; on subcommands they default to SUPPRESS so values given
    before the command are not overwritten by a subparser's defaults."""

    def d(value: Any) -> Any:
        return argparse.SUPPRESS if in_subcommand else value

    g = p.add_argument_group("global options")
    g.add_argument(
        "--cache-dir",
        type=path_arg,
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
        type=path_arg,
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
        type=positive_float,
        default=d(30.0),
        metavar="SECONDS",
        help="total time allowed per exchange (default 30)",
    )
    g.add_argument(
        "--spec-deadline",
        type=positive_float,
        default=d(300.0),
        metavar="SECONDS",
        help="total time allowed for all exchanges of one spec URL, e.g. an MCP server's pages and metadata "
        "(default 300)",
    )
    g.add_argument(
        "--max-spec-bytes",
        type=positive_int,
        default=d(64 * 1024 * 1024),
        metavar="N",
        help="largest spec accepted, after decompression (default 64 MiB)",
    )
    g.add_argument("--jobs", type=positive_int, default=d(8), metavar="N", help="concurrent fetches (default 8)")
    g.add_argument(
        "--cache-ttl",
        type=positive_float,
        default=d(86400.0),
        metavar="SECONDS",
        help="freshness of cached specs when the server gives none (default 24 h)",
    )
    g.add_argument(
        "--cache-max-ttl",
        type=positive_float,
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
        type=path_arg,
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


class Command(NamedTuple):  # not a dataclass: `dataclasses` (and `inspect`) cost start-up 8 ms
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


#: Error messages quote the input (a duplicate key, an id); one line of an error stays readable.
MAX_ERROR_CHARS = 2_000


def fail(message: str, code: int = EXIT_USAGE) -> int:
    sys.stderr.write(f"ramscope: error: {for_terminal(message, max_len=MAX_ERROR_CHARS)}\n")
    return code


def settings_from_args(args: argparse.Namespace) -> Settings:
    from ..config import Settings, default_cache_dir

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


def report_line(report: Report | StoredReport) -> str:
    try:
        return report.to_json().decode() + "\n"
    except TypeError:
        return json_line(report.to_dict())


def json_line(doc: Any) -> str:
    """One compact JSON line. orjson (several times faster, and batches write thousands of lines),
    except for values it refuses (integers beyond 64 bits from a stranger's YAML): then the stdlib."""
    import orjson

    try:
        return orjson.dumps(doc, option=orjson.OPT_APPEND_NEWLINE).decode()
    except TypeError:
        return json.dumps(doc, ensure_ascii=False) + "\n"


def pretty_json(doc: Any) -> str:
    """A document as indented JSON with a final newline: orjson, which writes what the stdlib's
    ``json.dumps(doc, indent=2, ensure_ascii=False)`` writes but for float exponents (``1e-7`` for
    ``1e-07``), about 20x faster (a 160 MB report: 0.5 s against 11.5 s); the stdlib for values it
    refuses (integers beyond 64 bits, lone surrogates from a stranger's document)."""
    import orjson

    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE).decode()
    except TypeError:
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _pretty(value: Any, pad: str) -> str:
    """``value`` as :func:`pretty_json` writes it, its lines after the first indented by ``pad``
    (no string holds a raw newline: JSON escapes them)."""
    return pretty_json(value)[:-1].replace("\n", "\n" + pad)


def write_pretty_json(write: Callable[[str], object], doc: Any) -> None:
    """``write(pretty_json(doc))``, one top-level value (and one element of a top-level list) at a
    time: a report's text is never whole in memory beside the report (a 160 MB report of 800 accesses
    held 240 MB of records, then 160 MB of bytes and 160 MB of their text)."""
    if not isinstance(doc, dict) or not doc:
        write(pretty_json(doc))
        return
    write("{\n")
    last = len(doc) - 1
    for n, (key, value) in enumerate(doc.items()):
        end = ",\n" if n < last else "\n"
        name = pretty_json(key)[:-1]
        if isinstance(value, list) and value:
            write(f"  {name}: [\n")
            for m, item in enumerate(value):
                write("    " + _pretty(item, "    ") + (",\n" if m < len(value) - 1 else "\n"))
            write("  ]" + end)
        else:
            write(f"  {name}: " + _pretty(value, "  ") + end)
    write("}\n")


def write_json(out: TextIO, doc: Any) -> None:
    out.write(pretty_json(doc))


def open_engine(args: argparse.Namespace) -> Engine:
    import gc

    from ..derive import Engine
    from ..derive.policy import Policy, load_policy

    policy = load_policy(args.policy) if args.policy else Policy()
    engine = Engine(settings_from_args(args), policy=policy)
    # What is alive now (the modules, their classes and functions: most of the objects the collector
    # tracks) lives as long as the process: leave it out of every collection. Measured on a cold
    # derive of four large specs, the collections walking it cost 0.1 s of 1.5 s (issue 17). Only
    # in ramscope's own process: the library leaves the collector alone.
    gc.freeze()
    return engine


def say_findings(args: argparse.Namespace, report: Report | StoredReport, *, positions: bool = True) -> None:
    """One line per failing item on stderr, as `validate` prints them (``file:line:col: error[code]
    path: message``): the card's errors (exit 1), each access whose permissions are unknown (exit 3).
    ``-v``: every finding; ``-q``: none (the exit code still says it)."""
    from ..card import load_card
    from ..outputs.report import Report

    if args.quiet:
        return
    from ..outputs.diagnostics import diagnostic_line, findings, is_failing

    shown = [f for f in findings(report) if args.verbose or is_failing(f)]
    if not shown:
        return
    stored_at: Mapping[str, tuple[int, int]] | None = getattr(report, "positions", None)  # stored beside it
    # Only failing findings' positions are stored (engine.POSITIONS); -v reads the card for the others.
    if stored_at is not None and positions and all(f.path in stored_at or f.source is not None for f in shown):
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


def reports_exit(reports: Sequence[Report], worst: int) -> int:
    codes = {r.exit_code for r in reports} | {worst}
    for code in (EXIT_USAGE, EXIT_INVALID, EXIT_INCOMPLETE):
        if code in codes:
            return code
    return EXIT_OK


def emit(args: argparse.Namespace, text: str, target: OutputTarget | None = None) -> None:
    from .._io import atomic_write

    if getattr(args, "output", None):
        atomic_write(target or args.output, text)
    else:
        sys.stdout.write(text)


def output_target(args: argparse.Namespace, cards: Sequence[str]) -> OutputTarget | None:
    """``-o FILE`` checked before any work: a missing directory, a device, or an input of this run (a card,
    the policy, the cassette) fails now."""
    from .._io import check_output

    if not getattr(args, "output", None):
        return None
    inputs = [*cards, *(str(f) for f in (getattr(args, "policy", None), getattr(args, "cassette", None)) if f)]
    return check_output(args.output, protect=inputs)


class NothingToWrite(Exception):
    """Raised in an ``output`` block to leave ``-o FILE`` unwritten."""


@contextmanager
def output(args: argparse.Namespace, cards: Sequence[str] = ()) -> Iterator[Callable[[str], object]]:
    """A writer to stdout, or to ``-o FILE`` (atomically: the file appears whole, at the end;
    not at all if the block raises, :class:`NothingToWrite` included). ``FILE`` is checked on
    entry and is never one of ``cards``."""
    from .._io import atomic_writer

    target = output_target(args, cards)
    if target is not None:
        with contextlib.suppress(NothingToWrite), atomic_writer(target) as fh:
            yield lambda text: fh.write(text.encode("utf-8"))
    else:
        with contextlib.suppress(NothingToWrite):
            yield sys.stdout.write


def exit_from_dict(report: Mapping[str, Any]) -> int:
    card = report.get("card") if isinstance(report.get("card"), dict) else {}
    if isinstance(card, dict) and card.get("valid") is False:
        return EXIT_INVALID
    return EXIT_OK if report.get("complete") is not False else EXIT_INCOMPLETE
