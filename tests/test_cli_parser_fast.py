"""The CLI builds only the subcommand a command line names, and parses it exactly as the full parser would."""

from __future__ import annotations

import pytest

from ramscope.cli import COMMANDS, build_parser

ARGVS = [
    ["derive", "card.json"],
    ["--offline", "--cache-dir", "derive", "derive", "c.json", "--format", "text"],
    ["--policy", "schema", "derive", "c.json"],
    ["--jobs=4", "-q", "-v", "fetch", "a.json", "b.json", "--timeout", "5"],
    ["--cassette", "x.yaml", "--record", "fetch", "card.json"],
    ["scopes", "card.json", "--tier", "required", "--identity", "agent"],
    ["diff", "old.json", "new.json", "--allow-private-network"],
    ["schema", "report"],
    ["validate", "a.json", "--format", "sarif"],
    ["consent", "c.json", "--format", "html", "-o", "out.html"],
    ["consent", "c.json", "--skill", "book-trip"],
    ["derive", "c.json", "--skill", "book-trip"],
    ["check", "a.json", "b.json", "--rules", "org.toml", "--format", "sarif", "-o", "out.sarif"],
    ["export", "c.json", "--format", "cedar", "--schema", "s.cedarschema", "--skill", "s"],
    ["compare", "a.json", "b.json", "c.json", "--rank", "--format", "json"],
]


@pytest.mark.parametrize("argv", ARGVS, ids=" ".join)
def test_the_subcommand_parses_as_with_every_subcommand(argv: list[str]) -> None:
    full = vars(build_parser().parse_args(argv))
    fast_parser = build_parser(argv)
    choices = fast_parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert list(choices) == [full["command"]]
    assert vars(fast_parser.parse_args(argv)) == full


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["-qv", "derive", "c.json"], ["--cache", "d", "derive", "c.json"], ["--", "derive"], ["nope"], []],
    ids=["help", "combined-flags", "abbreviation", "double-dash", "unknown", "empty"],
)
def test_anything_unclear_gets_the_full_parser(argv: list[str]) -> None:
    choices = build_parser(argv)._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(choices) == {c.name for c in COMMANDS}
