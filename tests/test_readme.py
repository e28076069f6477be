"""The README's promises: its first command works offline, and its rule table is every rule."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from ramscope.outputs.diagnostics import rules_markdown

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")
DIAGNOSTICS = (ROOT / "docs" / "diagnostics.md").read_text("utf-8")


def test_rule_table_is_current() -> None:
    """docs/diagnostics.md lists every diagnostic rule exactly as the code declares them."""
    block = DIAGNOSTICS.split("<!-- rules:start -->\n", 1)[1].split("<!-- rules:end -->", 1)[0]
    assert block == rules_markdown(), "regenerate the table with ramscope.outputs.diagnostics.rules_markdown()"


def test_first_command_derives_the_example_offline(tmp_path: Path) -> None:
    """The README's first command (after `pip install .`) derives the example with no network, exit 0."""
    first = next(line for line in README.splitlines() if line.startswith("pip install . && "))
    argv = shlex.split(first.split("&&", 1)[1])
    assert argv[0] == "ramscope"
    proc = subprocess.run(
        [sys.executable, "-m", "ramscope", "--cache-dir", str(tmp_path / "cache"), *argv[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "RAMSCOPE_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert proc.returncode == 0, proc.stderr
    assert '"complete": true' in proc.stdout
    assert re.search(r'"scopes": \[\s*"https://www.googleapis.com/auth/calendar.events"', proc.stdout)


def test_first_command_works_with_an_empty_user_cache_and_writes_no_project_cache(tmp_path: Path) -> None:
    """On a fresh machine: no --cache-dir, no RAMSCOPE_CACHE_DIR, a user cache directory that does not exist
    yet. The cache goes to the user's cache directory, never into ./specs_cache (issue 14, item 8)."""
    first = next(line for line in README.splitlines() if line.startswith("pip install . && "))
    argv = shlex.split(first.split("&&", 1)[1])
    before = sorted(p.name for p in (ROOT / "specs_cache").iterdir())
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAMSCOPE_")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "fresh" / "cache")
    proc = subprocess.run(
        [sys.executable, "-m", "ramscope", *argv[1:]], cwd=ROOT, capture_output=True, text=True, check=False, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert '"complete": true' in proc.stdout
    assert (tmp_path / "fresh" / "cache" / "ramscope" / "cache.db").is_file()
    assert sorted(p.name for p in (ROOT / "specs_cache").iterdir()) == before


def test_the_tour_starts_with_text_output_and_shows_it_as_it_is(tmp_path: Path) -> None:
    """The tour's first command prints tables, not 40 KB of JSON to a terminal; the tables the README
    shows are what it prints (the diagnostics under them are abridged)."""
    tour = README.split("## A tour with the example agent", 1)[1]
    block = tour.split("```console\n", 1)[1].split("```", 1)[0].splitlines()
    command, shown = block[0].removeprefix("$ "), block[1:]
    argv = shlex.split(command)
    assert argv[0] == "ramscope"
    assert argv[argv.index("--format") + 1] == "text"
    proc = subprocess.run(
        [sys.executable, "-m", "ramscope", "--cache-dir", str(tmp_path / "cache"), *argv[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "RAMSCOPE_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert proc.returncode == 0, proc.stderr
    printed = [line.rstrip() for line in proc.stdout.splitlines()]
    tables = shown[: shown.index("diagnostics") + 1]
    assert printed[: len(tables)] == tables
    for line in shown[len(tables) :]:
        assert line.strip() == "..." or line in printed, line
