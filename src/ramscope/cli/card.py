"""The card commands: ``validate`` (a card's manifest, no network) and ``schema``."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..errors import InputError
from ._common import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    Command,
    fail,
    format_option,
    write_json,
)

if TYPE_CHECKING:
    pass


# --------------------------------------------------------------------------- validate


def _configure_validate(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "cards",
        nargs="+",
        metavar="CARD",
        help="card or manifest files (JSON or YAML; - for stdin), directories of them, or glob patterns",
    )
    format_option(p, ("text", "json", "sarif"), "text")


def _run_validate(args: argparse.Namespace) -> int:
    from .._io import expand_card_args
    from ..card import load_card
    from ..diagnostics import Severity, has_errors
    from ..outputs.diagnostics import CardDiagnostics, render_json, render_sarif, render_text
    from ..validate import validate

    results: list[CardDiagnostics] = []
    unreadable = False
    paths = expand_card_args(args.cards)
    for path in paths:
        try:
            card = load_card(path)
        except InputError as exc:
            if len(args.cards) == 1 and path == args.cards[0]:
                raise  # the one file named: its error is the answer
            fail(str(exc))  # one of many: said, and the others still checked
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
            write_json(out, docs[0] if len(docs) == 1 and paths == args.cards == [args.cards[0]] else docs)
        else:
            write_json(out, render_sarif(results))
        if not args.quiet:
            # stdout is a document for machines: the errors are said where people look, too.
            from ..outputs.diagnostics import Finding, diagnostic_line

            for res in results:
                for d in res.diagnostics:
                    if d.severity is Severity.ERROR or args.verbose:
                        sys.stderr.write(
                            diagnostic_line(res.card.source, res.card.position(d.path), Finding.of(d)) + "\n"
                        )
    if unreadable:
        return EXIT_USAGE
    return EXIT_INVALID if any(has_errors(r.diagnostics) for r in results) else EXIT_OK


# --------------------------------------------------------------------------- schema


def _configure_schema(p: argparse.ArgumentParser) -> None:
    from ..schema import SCHEMA_NAMES

    p.add_argument("name", choices=SCHEMA_NAMES, help="which schema to print")


def _run_schema(args: argparse.Namespace) -> int:
    from ..schema import load_schema, render

    sys.stdout.write(render(load_schema(args.name)))
    return EXIT_OK


COMMANDS: list[Command] = [
    Command("validate", "check a card's manifest; no network", _configure_validate, _run_validate),
    Command("schema", "print the JSON Schema of the manifest or of the report", _configure_schema, _run_schema),
]
