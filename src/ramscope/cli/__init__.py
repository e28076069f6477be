"""The ``ramscope`` command line: argument parsing and rendering only.

Every command is a thin call into the library API; nothing here decides what a
permission is. Exit codes (``docs/cli.md``): 0 success, 1 invalid card,
2 usage error or unreadable input, 3 derivation incomplete, 4 (diff) new
permissions or other new risks, 5 (check) an error-severity rule failed.

The commands come in groups, one module each (``card``, ``derive``, ``governance``,
``providers``, ``evidence``); what they share is in ``_common``. To add a group:

1. write ``cli/<group>.py`` ending in ``COMMANDS: list[Command] = [Command(name, help,
   configure, run), ...]``: ``configure(parser)`` adds the command's arguments (the global
   options are added for it), ``run(args)`` does the work and returns the exit code;
2. add ``"<group>"`` to :data:`GROUPS` below, each command to :data:`COMMAND_GROUPS` (a run
   imports only its command's group), and the names to :data:`HELP_ORDER` to place them in
   ``--help`` (unlisted commands come last).

A group module imports only argparse, the standard library's cheapest modules and ``_common``
at its top; everything else is imported inside ``configure``/``run``, so that ``ramscope
--version`` and ``validate`` start without the rest (issue 17, tests/test_startup.py). Use the
helpers of ``_common`` (``open_engine``, ``output``/``emit``, ``say_findings``, ``fail``, the
``EXIT_*`` codes) rather than writing to stdout or exiting on your own; add each command to
docs/cli.md (tests/test_docs.py checks that every command is there).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import NoReturn

from .. import __version__
from ..errors import RamscopeError
from ._common import (
    EXIT_CODES_HELP,
    EXIT_DIFF_NEW_PERMISSIONS,
    EXIT_INCOMPLETE,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_RULES_FAILED,
    EXIT_USAGE,
    Command,
    Parser,
    add_global_options,
    fail,
    settings_from_args,
)

__all__ = [
    "COMMANDS",
    "EXIT_DIFF_NEW_PERMISSIONS",
    "EXIT_INCOMPLETE",
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_RULES_FAILED",
    "EXIT_USAGE",
    "Command",
    "build_parser",
    "main",
    "run",
    "settings_from_args",
]


#: The command groups: each is a module ``ramscope.cli.<group>`` whose ``COMMANDS`` lists its commands.
GROUPS = ("card", "derive", "governance", "providers", "evidence", "service")

#: The order ``ramscope --help`` lists the commands in; a command not named here follows them, in group order.
HELP_ORDER = (
    "validate",
    "fetch",
    "derive",
    "scopes",
    "consent",
    "diff",
    "schema",
    "check",
    "export",
    "compare",
    "universe",
    "draft",
    "audit",
    "serve",
    "mcp",
)


#: The group that defines each command: a run imports only the group of the command it runs, and
#: ``--version`` none (issue 36: importing all six cost a tenth of ``--version``'s start-up).
#: tests/test_startup.py checks it against the groups' own ``COMMANDS``.
COMMAND_GROUPS = {
    "validate": "card",
    "schema": "card",
    "fetch": "derive",
    "derive": "derive",
    "scopes": "derive",
    "consent": "derive",
    "diff": "governance",
    "check": "governance",
    "export": "governance",
    "compare": "governance",
    "universe": "providers",
    "draft": "evidence",
    "audit": "evidence",
    "serve": "service",
    "mcp": "service",
}


def _group(group: str) -> list[Command]:
    commands: list[Command] = importlib.import_module(f"{__name__}.{group}").COMMANDS
    return commands


def _commands() -> list[Command]:
    """Every group's commands. The group modules import nothing heavy at the top: a command's own
    imports wait until it runs (issue 17)."""
    found: list[Command] = [cmd for group in GROUPS for cmd in _group(group)]
    names = [cmd.name for cmd in found]
    if len(set(names)) != len(names):
        raise RuntimeError(f"two command groups define the same command: {sorted(names)}")
    rank = {name: i for i, name in enumerate(HELP_ORDER)}
    return sorted(found, key=lambda cmd: rank.get(cmd.name, len(rank)))


#: Every command, in ``--help`` order; built on first use (PEP 562), not when the CLI is imported.
COMMANDS: list[Command]


def __getattr__(name: str) -> object:
    if name == "COMMANDS":
        commands = globals()["COMMANDS"] = _commands()
        return commands
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given the arguments, only the subcommand they name is built (the same parse).

    Each argparse parser costs about a millisecond of gettext look-ups, and a run needs one.
    """
    parser = Parser(
        prog="ramscope",
        description="Derive least-privilege permission sets from an A2A agent card's Resource Access Manifest.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ramscope {__version__}")
    add_global_options(parser, in_subcommand=False)
    only = _named_command(parser, argv) if argv is not None else None
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    if only is None:
        commands = _commands()
    elif only:
        commands = [cmd for cmd in _group(COMMAND_GROUPS[only]) if cmd.name == only]
    else:
        commands = []  # --version: argparse prints it as soon as it reads the option
    for cmd in commands:
        p = sub.add_parser(
            cmd.name,
            help=cmd.help,
            description=cmd.help,
            epilog=EXIT_CODES_HELP,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        cmd.configure(p)
        add_global_options(p, in_subcommand=True)
        p.set_defaults(_run=cmd.run)
    return parser


def _named_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names, when the top-level options before it are unambiguous.

    Only exact option names are followed (``--opt value``, ``--opt=value``, flags); anything
    else (help, an abbreviation, combined short flags, ``--``) gives ``None``: the full parser.
    ``--version`` gives ``""``: no subcommand is needed.
    """
    takes_value = {s: a.nargs != 0 for a in parser._actions for s in a.option_strings}
    names = COMMAND_GROUPS
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
    ``argv`` (a call from another program, a test), the objects :func:`open_engine` froze are handed
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
    :func:`_exit`. Its stdout is checked (``_io.checked_stdio``): a write that does not go whole
    (a full disk, the file size limit) is exit 2 with the reason, and a stdout it was started
    without is an error to write to, not a traceback (issue 22)."""
    from .._io import checked_stdio

    checked_stdio()
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
    except BrokenPipeError:
        pass  # the reader went away (``| head``): nothing more to say to it
    except (OSError, ValueError) as exc:
        code = EXIT_USAGE  # the output is incomplete, whatever the command found
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"ramscope: error: could not write the output: {exc}\n")
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        code = code or EXIT_USAGE
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
            # What is still buffered is part of the output: a failure to write it is this
            # command's failure (exit 2, below), not something to find at exit.
            sys.stdout.flush()
    except RamscopeError as exc:
        return fail(str(exc))
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
        # Writing the output failed (a full disk, the file size limit, a closed stdout): a file
        # given with -o says so as an OutputError, stdout the same way.
        code = fail(f"could not write the output: {exc}")
        # What stdout still buffers cannot be written either: dropped, not reported again at exit.
        sys.stdout = io.StringIO()
        return code
    return code


if __name__ == "__main__":  # pragma: no cover
    run()
