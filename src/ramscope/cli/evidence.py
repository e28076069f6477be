"""The evidence commands: ``draft`` (recorded traffic -> a card) and ``audit`` (a card and a token
held against recorded traffic). Exit 6 from ``audit``: a call the card does not declare, or a host
it names nowhere (docs/cli.md)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from .._text import for_terminal
from ._common import EXIT_INVALID, EXIT_OK, EXIT_UNDECLARED, Command, format_option, output, settings_from_args

if TYPE_CHECKING:
    from ..diagnostics import Diagnostic
    from ..evidence import AuditResult


def _say(args: argparse.Namespace, diags: list[Diagnostic], *, floor: str = "warning") -> None:
    """Findings on stderr, one line each (``-q``: none; ``-v``: information too)."""
    if args.quiet:
        return
    shown = {"error", "warning", "info"} if args.verbose or floor == "info" else {"error", "warning"}
    for d in diags:
        if d.severity.value in shown:
            where = f" {d.path}" if d.path else ""
            sys.stderr.write(
                f"ramscope: {d.severity.value}[{d.code}]{where}: {for_terminal(d.message, max_len=2000)}\n"
            )


# --------------------------------------------------------------------------- draft


def _configure_draft(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "evidence",
        metavar="EVIDENCE",
        nargs="*",
        help="HAR files, OTLP/JSON trace files, JSON Lines logs of MCP JSON-RPC (gzip or not)",
    )
    _code_option(p)
    p.add_argument(
        "--spec",
        metavar="PREFIX=SPEC_URL",
        action="append",
        default=[],
        help="calls under the URL PREFIX are described by SPEC_URL (tried before the shipped host index); repeatable",
    )
    p.add_argument("-o", "--output", metavar="CARD", help="write the card here (default: stdout)")
    p.add_argument(
        "--report",
        metavar="FILE",
        help="also write the draft report (calls matched, unmatched calls with the nearest operations) as JSON to FILE",
    )


def _code_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--code",
        metavar="PATH",
        action="append",
        default=[],
        help="the agent's source: a file or directory of Python / TypeScript / JavaScript, read statically "
        "(never imported or run); repeatable",
    )


def _need_input(args: argparse.Namespace) -> None:
    from ..errors import InputError

    if not args.evidence and not args.code:
        raise InputError("give evidence files, --code PATH, or both")


def _run_draft(args: argparse.Namespace) -> int:
    from ..evidence import draft
    from ..evidence.hosts import parse_spec_option

    _need_input(args)
    specs = [parse_spec_option(s) for s in args.spec]
    with output(args, args.evidence) as write:
        result = draft(args.evidence, code=args.code, specs=specs, settings=settings_from_args(args))
        write(json.dumps(result.card, indent=2, ensure_ascii=False) + "\n")
    if args.report:
        from .._io import atomic_write, check_output

        atomic_write(
            check_output(args.report, protect=[*args.evidence, *args.code]),
            json.dumps(result.report(), indent=2, ensure_ascii=False) + "\n",
        )
    _say(args, list(result.diagnostics))
    if not args.quiet:
        more = f" ({result.unmatched_more} more distinct unmatched calls not listed)" if result.unmatched_more else ""
        unresolved = f", {len(result.unresolved)} call site(s) of the code unresolved" if args.code else ""
        sys.stderr.write(
            f"ramscope: drafted {result.operations} operation(s) from {result.matched} of {result.calls} call(s); "
            f"{len(result.unmatched)} distinct call(s) unmatched{more}{unresolved}\n"
        )
    return EXIT_OK


# --------------------------------------------------------------------------- audit


def _configure_audit(p: argparse.ArgumentParser) -> None:
    p.add_argument("card", metavar="CARD", help="the agent card (or bare manifest) to audit")
    p.add_argument("evidence", metavar="EVIDENCE", nargs="*", help="HAR, OTLP/JSON or MCP JSON-RPC log files")
    _code_option(p)
    grant = p.add_mutually_exclusive_group()
    grant.add_argument(
        "--granted", metavar="SCOPES", help='the scopes the agent\'s token holds, space-separated ("SCOPE SCOPE ...")'
    )
    grant.add_argument(
        "--token",
        metavar="FILE",
        help="a JWT access token whose scp / scope / roles claims list the scopes (read offline; "
        "the signature is not verified)",
    )
    format_option(p, ("text", "json", "sarif"), "text")
    p.add_argument("-o", "--output", metavar="FILE", help="write the result here (default: stdout)")


def _run_audit(args: argparse.Namespace) -> int:
    from ..derive import Engine
    from ..derive.policy import Policy, load_policy
    from ..evidence import audit

    _need_input(args)
    granted = args.granted.split() if args.granted is not None else None
    # The card is derived as `derive` would, with the global --policy (its pins are the card's scopes too).
    policy = load_policy(args.policy) if getattr(args, "policy", None) else Policy()
    with (
        output(args, [args.card, *args.evidence, *args.code, *([args.token] if args.token else [])]) as write,
        Engine(settings_from_args(args), policy=policy) as engine,
    ):
        result = audit(args.card, args.evidence, code=args.code, granted=granted, token=args.token, engine=engine)
        if args.format == "json":
            write(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
        elif args.format == "sarif":
            write(json.dumps(_sarif(result), indent=2, ensure_ascii=False) + "\n")
        else:
            write(_text(result))
    # Every non-zero exit says its failing items on stderr, in every format (docs/cli.md); text already
    # has every finding on stdout, so stderr gets the errors only, unless -v.
    _say(args, [d for d in result.diagnostics if args.format != "text" or d.severity.value == "error" or args.verbose])
    if result.exit_code == EXIT_UNDECLARED:
        if not args.quiet:
            n = sum(1 for d in result.diagnostics if d.code in {"undeclared-call", "undeclared-host"})
            sys.stderr.write(
                f"ramscope: audit: {n} finding(s) of calls {for_terminal(args.card)} does not declare (exit 6)\n"
            )
        return EXIT_UNDECLARED
    return EXIT_INVALID if not result.card_valid else EXIT_OK


def _text(result: AuditResult) -> str:
    lines = []
    for d in result.diagnostics:
        where = f" {d.path}" if d.path else ""
        lines.append(f"{for_terminal(result.card)}: {d.severity.value}[{d.code}]{where}: {for_terminal(d.message)}")
    observed = ", ".join(f"{k} ({v})" for k, v in result.observed.items()) or "none"
    lines.append(f"{for_terminal(result.card)}: {result.calls} call(s); accesses observed: {for_terminal(observed)}")
    if result.needed:
        lines.append(f"least privilege for the observed calls: {' '.join(result.needed)}")
    lines.append(f"exit code {result.exit_code if result.exit_code else (0 if result.card_valid else 1)}")
    return "\n".join(lines) + "\n"


def _sarif(result: AuditResult) -> dict[str, Any]:
    from pathlib import Path, PurePath

    from ..diagnostics import all_rules
    from ..outputs.diagnostics import sarif_log, sarif_rule

    level = {"error": "error", "warning": "warning", "info": "note"}
    rules = [r for r in all_rules() if r.stage == "evidence"]
    index = {r.code: i for i, r in enumerate(rules)}
    source = result.card
    uri = Path(source).as_uri() if PurePath(source).is_absolute() else PurePath(source).as_posix()
    out = []
    for d in result.diagnostics:
        if d.code not in index:
            continue
        file, line = d.data.get("file"), d.data.get("line")
        if isinstance(file, str) and file and isinstance(line, int):
            # A call site of the code: the finding sits on that line (GitHub code scanning annotates it).
            location: dict[str, Any] = {
                "physicalLocation": {
                    "artifactLocation": {"uri": _code_uri(file)},
                    "region": {"startLine": max(line, 1)},
                }
            }
        else:
            location = {
                "physicalLocation": {"artifactLocation": {"uri": uri, "index": 0}},
                "logicalLocations": [{"fullyQualifiedName": d.path or "/", "kind": "element"}],
            }
        out.append(
            {
                "ruleId": d.code,
                "ruleIndex": index[d.code],
                "level": level[d.severity.value],
                "message": {"text": d.message},
                "locations": [location],
                "properties": dict(d.data),
            }
        )
    return sarif_log(
        [sarif_rule(r.code, r.summary, r.summary, level[r.severity.value], {"tags": ["evidence"]}) for r in rules],
        out,
        [{"location": {"uri": uri}}],
        automationDetails={"id": "ramscope-audit/"},
    )


def _code_uri(file: str) -> str:
    """A source file's SARIF URI: relative (to the working directory, where CI checks the repository out) when
    it can be, else a file URI."""
    import os
    from pathlib import Path, PurePath

    path = PurePath(file)
    if path.is_absolute():
        try:
            return (
                Path(os.path.relpath(path)).as_posix() if not os.path.relpath(path).startswith("..") else path.as_uri()
            )
        except ValueError:
            return path.as_uri()
    return path.as_posix()


COMMANDS: list[Command] = [
    Command(
        "draft",
        "Draft a card from recorded traffic (HAR, OTLP/JSON traces, MCP JSON-RPC logs) and the agent's code (--code).",
        _configure_draft,
        _run_draft,
    ),
    Command(
        "audit",
        "Hold a card (and a token's scopes) against recorded traffic and code; exit 6 on undeclared calls.",
        _configure_audit,
        _run_audit,
    ),
]
