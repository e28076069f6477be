"""The governance commands: ``diff``, ``check``, ``export`` and ``compare`` (cards or saved reports)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._text import for_terminal
from ..errors import InputError
from ._common import (
    EXIT_DIFF_NEW_PERMISSIONS,
    EXIT_INCOMPLETE,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    Command,
    emit,
    exit_from_dict,
    fail,
    format_option,
    open_engine,
    output_target,
    say_findings,
)

if TYPE_CHECKING:
    from ..card import Card
    from ..derive import Engine
    from ..governance.locate import Locator
    from ..outputs.report import Report, StoredReport


def _configure_diff(p: argparse.ArgumentParser) -> None:
    p.add_argument("old", metavar="OLD", help="the old card, or a saved `derive` JSON report")
    p.add_argument("new", metavar="NEW", help="the new card, or a saved `derive` JSON report")
    # admin: what an administrator must newly approve, per target (Entra, Google, Slack, GitHub, gateways).
    format_option(p, ("json", "text", "admin"), "json")


def _report_dict(engine: Engine, path: str) -> tuple[dict[str, Any], Report | StoredReport]:
    """The report of a card (derived) or a saved report (checked), with what :func:`say_findings` reads."""
    from ..card import load_card
    from ..outputs.diff import check_report_shape

    card = load_card(path)
    if card.document.get("report_version") is not None and "tiers" in card.document:
        saved = dict(card.document)  # a saved report: a stranger's file too, checked before use
        check_report_shape(saved, source=path)
        report, _ = _verified(engine, saved, path)
        return report.to_dict(), report
    report = engine.derive(card)
    return report.to_dict(), report


def _run_diff(args: argparse.Namespace) -> int:
    from ..outputs.report import Report

    with open_engine(args) as engine:
        old, old_report = _report_dict(engine, args.old)
        new, new_report = _report_dict(engine, args.new)
    from ..outputs.diff import diff_reports, render_diff_text, risk_line

    d = diff_reports(old, new)
    if args.format == "admin":
        from ..outputs.diff import admin_diff, render_admin_text

        sys.stdout.write(render_admin_text(admin_diff(old, new)))
    elif args.format == "json":
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
                say_findings(args, side)
            elif args.verbose or side.to_dict().get("complete") is False:
                say_findings(args, side, positions=False)
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
    from .._io import expand_card_args
    from ..card import load_card
    from ..governance.locate import Locator
    from ..outputs.diff import check_report_shape

    out: list[tuple[dict[str, Any], Locator]] = []
    worst = EXIT_OK
    with open_engine(args) as engine:
        for path in expand_card_args(paths):
            try:
                card = load_card(path)
                if card.document.get("report_version") is not None and "tiers" in card.document:
                    saved = dict(card.document)
                    check_report_shape(saved, source=str(path))
                    # A saved report is a stranger's claim about a card: used only with that card, only
                    # if the card's sha256 is the one it names, and only if it is what the card derives
                    # (waivers match the card's path). What is judged is the fresh derivation.
                    report, of = _verified(engine, saved, str(path))
                    out.append((report.to_dict(), Locator.for_card(of)))
                else:
                    out.append((engine.derive(card).to_dict(), Locator.for_card(card)))
            except InputError as exc:
                fail(str(exc))
                worst = EXIT_USAGE
    return out, worst


def _verified(engine: Engine, saved: dict[str, Any], path: str) -> tuple[Report, Card]:
    """A fresh derivation of the card ``saved`` names (and the card), once the report is shown to be it.

    Raises :class:`InputError` (exit 2) when the card is not beside the report, is not the one its
    sha256 names, or derives otherwise than the report says: edited, or derived with other options
    (``--policy``), specs or ramscope. Nothing a saved report claims is judged unverified."""
    from ..outputs.diff import report_difference

    card = _card_of_report(saved, path)
    fresh = engine.derive(card)
    where = report_difference(saved, fresh.to_dict())
    if where is not None:
        raise InputError(
            f"the report is not what its card {card.source!r} derives now (they differ at {where}): it was "
            "edited, or derived with other options (--policy ...), specs or ramscope; give the card itself, "
            "or derive the report again",
            source=path,
        )
    return fresh, card


def _card_of_report(saved: dict[str, Any], path: str) -> Card:
    """The card a saved report was derived from, checked against the sha256 the report names.

    Raises :class:`InputError` when the card is not readable where the report says (relative to the
    working directory, or to the report's own directory) or its digest differs: the report may
    describe another card, or an older version of this one.
    """
    from ..card import load_card

    source = saved["card"].get("source")
    digest = saved["card"].get("sha256")
    if not isinstance(source, str) or not source or "://" in source or source.startswith("<"):
        raise InputError(f"the report names no card file to check it against (source {source!r})", source=path)
    candidates = [source]
    if not os.path.isabs(source):
        candidates.append(os.path.join(os.path.dirname(os.path.abspath(path)), source))
    found = next((c for c in candidates if os.path.isfile(c)), None)
    if found is None:
        raise InputError(
            f"the report's card {source!r} is not readable: a saved report is used only beside its card "
            "(or give the card itself)",
            source=path,
        )
    card = load_card(found)
    if card.sha256 != digest:
        raise InputError(
            f"the report is not of the card {source!r} as it is now (sha256 {str(digest)[:12]}... in the report, "
            f"{card.sha256[:12]}... on disk): derive it again",
            source=path,
        )
    return card


def _configure_check(p: argparse.ArgumentParser) -> None:
    p.add_argument("cards", nargs="+", metavar="CARD", help="cards, saved `derive` reports, directories or globs")
    p.add_argument("--rules", type=Path, required=True, metavar="RULES.toml", help="the organisation's rules")
    format_option(p, ("text", "json", "sarif"), "text")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here (atomically)")


def _run_check(args: argparse.Namespace) -> int:
    from ..governance.check import check_report, exit_code, results_json
    from ..governance.rules import load_rules
    from ..governance.sarif import render_sarif, render_text

    target = output_target(args, [*args.cards, str(args.rules)])
    rules = load_rules(args.rules)
    reports, worst = _governed(args, args.cards)
    results = [check_report(report, rules, locator) for report, locator in reports]
    if args.format == "text":
        text = render_text(results)
    elif args.format == "json":
        text = json.dumps(results_json(results, rules), indent=2, ensure_ascii=False) + "\n"
    else:
        text = json.dumps(render_sarif(results, rules), indent=2, ensure_ascii=False) + "\n"
    emit(args, text, target)
    return EXIT_USAGE if worst == EXIT_USAGE else exit_code(results)


#: ramscope.governance.export's formats, spelt here so building the parser imports no governance code
#: (`validate` must not load it); a test holds the two equal.
TARGET_FORMATS = (
    "entra-app",
    "google-oauth",
    "slack-manifest",
    "github-app",
    "toolhive",
    "agentgateway",
    "allowlist",
    "oauth-client",
    "hubspot-app",
    "atlassian-app",
)


def _configure_export(p: argparse.ArgumentParser) -> None:
    p.add_argument("card", nargs="?", metavar="CARD", help="a card or a saved `derive` report (not for cedar-schema)")
    format_option(p, ("cedar", "cedar-schema", "json", *TARGET_FORMATS), "cedar")
    p.add_argument("--schema", type=Path, metavar="FILE", help="with --format cedar: also write the Cedar schema here")
    p.add_argument("--skill", metavar="ID", help="only what this skill may do (per-skill permission sets)")
    # The target formats (entra-app ... oauth-client) export the cumulative tiers up to --tier.
    # Either case: the report spells tiers and identities in capitals, the other commands in lower case.
    p.add_argument(
        "--tier",
        type=str.lower,
        choices=("required", "recommended", "optional"),
        default="optional",
        help="target formats: the cumulative tiers to export (default: optional, everything)",
    )
    p.add_argument(
        "--identity",
        type=str.lower,
        choices=("end_user", "agent", "all"),
        default="all",
        help="target formats: whose permissions (default: all)",
    )
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here (atomically)")


def _run_export(args: argparse.Namespace) -> int:
    from .._io import atomic_write
    from ..governance import cedar

    target = output_target(args, [args.card] if args.card else [])
    if args.format == "cedar-schema":
        emit(args, cedar.cedar_schema(), target)
        return EXIT_OK
    if not args.card:
        return fail(f"export --format {args.format} needs a CARD (only --format cedar-schema is written without one)")
    if args.schema and args.format != "cedar":
        return fail(f"--schema FILE goes with --format cedar (it writes the Cedar schema), not --format {args.format}")
    reports, worst = _governed(args, [args.card])
    if not reports:
        return worst
    report = reports[0][0]
    if isinstance(report.get("card"), dict) and report["card"].get("valid") is not True:
        # What an invalid card declares may be less or other than what it does: nothing is written.
        return fail(f"{args.card}: the card is invalid (see `ramscope validate`): nothing exported", EXIT_INVALID)
    if args.skill:
        from ..governance.skills import restrict_report_dict

        report = restrict_report_dict(report, args.skill)
    if args.format in TARGET_FORMATS:
        return _export_target(args, report, target)
    if args.format == "json":
        emit(args, json.dumps(cedar.allowlist(report), indent=2, ensure_ascii=False) + "\n", target)
    else:
        if args.schema:
            atomic_write(args.schema, cedar.cedar_schema())
        emit(args, cedar.cedar_policies(report), target)
    return exit_from_dict(report)


def _export_target(args: argparse.Namespace, report: dict[str, Any], target: Any) -> int:
    """One target format (entra-app ... oauth-client): what the format cannot express is exit 2, one line."""
    from ..governance.export import NotExpressible, export_report

    identity = None if args.identity == "all" else args.identity.upper()
    ids = None
    if args.format == "entra-app":
        from ..providers.graph_ids import decode_ids
        from ..providers.refresh import CATALOG_NAMESPACE, GRAPH_IDS_KEY

        with open_engine(args) as engine:
            stored = engine.store.get_artifact(CATALOG_NAMESPACE, GRAPH_IDS_KEY)
        ids = decode_ids(stored) if stored else None
    try:
        out = export_report(report, args.format, tier=args.tier.upper(), identity=identity, graph_ids=ids)
    except NotExpressible as exc:
        return fail(f"{args.card}: {exc.detail}")
    emit(args, out.text, target)
    if not args.quiet:
        for note in out.notes:
            sys.stderr.write(f"ramscope: note: {for_terminal(note)}\n")
    return exit_from_dict(report)


def _configure_compare(p: argparse.ArgumentParser) -> None:
    p.add_argument("cards", nargs="+", metavar="CARD", help="cards or saved `derive` reports")
    p.add_argument("--rank", action="store_true", help="order least-privileged first (the rule is stated)")
    format_option(p, ("text", "json"), "text")


def _run_compare(args: argparse.Namespace) -> int:
    from ..governance.compare import compare_reports, render_compare_text

    reports, worst = _governed(args, args.cards)
    data = compare_reports([r for r, _ in reports], rank=args.rank)
    if args.format == "json":
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_compare_text(data))
    if worst != EXIT_OK:
        return worst
    codes = {exit_from_dict(r) for r, _ in reports}
    for code in (EXIT_INVALID, EXIT_INCOMPLETE):
        if code in codes:
            return code
    return EXIT_OK


COMMANDS: list[Command] = [
    Command("diff", "permissions added or removed between two cards or reports", _configure_diff, _run_diff),
    Command("check", "judge cards by an organisation's rules (text, json, sarif)", _configure_check, _run_check),
    Command(
        "export",
        "what a card may do or be granted: Cedar, an allowlist, app registrations, manifests, gateway rules",
        _configure_export,
        _run_export,
    ),
    Command(
        "compare", "agents side by side by footprint; --rank: least-privileged first", _configure_compare, _run_compare
    ),
]
