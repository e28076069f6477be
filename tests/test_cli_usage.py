"""The command line as a newcomer meets it: help that answers, typos that get a suggestion, one
progress bar per run, table cells that are wrapped and not cut, readable headings."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ramscope.cli import main
from ramscope.config import Settings
from ramscope.derive import Engine
from ramscope.store import SpecStore
from tests import _bank
from tests.support.httpserver import LocalHTTPServer

Run = Callable[..., tuple[int, str, str]]
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Run:
    def run(*argv: str) -> tuple[int, str, str]:
        try:
            code = main(["--cache-dir", str(tmp_path / "cache"), *argv])
        except SystemExit as exc:  # --help, and usage errors, exit through argparse
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture(scope="module")
def bank() -> Iterator[str]:
    with LocalHTTPServer() as srv:
        yield _bank.serve_bank(srv)


@pytest.mark.parametrize(
    ("command", "formats", "default"),
    [
        ("validate", "text, json, sarif", "text"),
        ("derive", "json, text", "json"),
        ("consent", "json, markdown, html", "json"),
        ("diff", "json, text, admin", "json"),
    ],
)
def test_help_lists_exit_codes_and_format_choices(cli: Run, command: str, formats: str, default: str) -> None:
    code, out, _ = cli(command, "--help")
    assert code == 0
    flat = " ".join(out.split())
    assert f"output format: {formats} (default: {default})" in flat
    for exit_code in ("0 success", "1 the card is invalid", "2 usage error", "3 derivation incomplete", "4 (diff)"):
        assert exit_code in flat


def test_top_level_help_lists_exit_codes(cli: Run) -> None:
    code, out, _ = cli("--help")
    assert code == 0
    assert "exit codes:" in out
    assert "docs/report.md" in out


@pytest.mark.parametrize(
    ("argv", "suggestion"),
    [
        (("deriv", "card.json"), "did you mean 'derive'?"),
        (("derive", "--formt", "text", "card.json"), "did you mean '--format'?"),
        (("--ofline", "derive", "card.json"), "did you mean '--offline'?"),
        (("derive", "--format", "txt", "card.json"), "did you mean 'text'?"),
        (("scopes", "--tier", "recommend", "card.json"), "did you mean 'recommended'?"),
    ],
)
def test_a_typo_gets_the_nearest_suggested(cli: Run, argv: tuple[str, ...], suggestion: str) -> None:
    code, out, err = cli(*argv)
    assert (code, out) == (2, "")
    assert suggestion in err


def test_nothing_is_suggested_when_nothing_is_near(cli: Run) -> None:
    code, _, err = cli("zzzzzz", "card.json")
    assert code == 2
    assert "did you mean" not in err


class _CountingStore:
    """A spec store that counts which URLs each prefetch was asked for (each draws a progress bar)."""

    def __init__(self, store: SpecStore) -> None:
        self._store = store
        self.prefetched: list[list[str]] = []

    def prefetch(self, urls: Iterable[tuple[str, Any]], *, on_ready: Any = None) -> Any:
        todo = list(urls)
        self.prefetched.append([u for u, _ in todo])
        return self._store.prefetch(todo, on_ready=on_ready)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


@pytest.mark.parametrize("how", ["derive_many", "derive_files"])
def test_each_spec_is_prefetched_once_per_run(bank: str, tmp_path: Path, how: str) -> None:
    """`derive --no-reuse`, `--format text` and `scopes` drew the progress bar twice: once for the
    batch, once more for each card's own specs, already fetched."""
    card = _bank.write(tmp_path / "card.json", _bank.card(bank, _bank.access("a", "getBalance")))
    settings = Settings(cache_dir=tmp_path / "cache", allow_private_network=True, reuse=how == "derive_files")
    with SpecStore(settings) as real:
        store = _CountingStore(real)
        with Engine(settings, store=store) as engine:
            if how == "derive_many":
                reports = list(engine.derive_many([str(card)]))
            else:
                reports = list(engine.derive_files([str(card)], on_unreadable=pytest.fail))
    assert len(reports) == 1
    asked = [u for batch in store.prefetched for u in batch]
    assert asked == [bank]


def test_text_table_wraps_the_refusal_hint(cli: Run, tmp_path: Path) -> None:
    """The reason's end is the fix: `(--allow-private-network lifts this check)` is shown whole."""
    card = _bank.write(tmp_path / "c.json", _bank.card("http://127.0.0.1:9/bank.json", _bank.access("a", "getBalance")))
    code, out, _ = cli("derive", "--format", "text", str(card))
    assert code == 3
    table = out.split("cumulative tiers", 1)[0]
    assert "…" not in table
    squashed = re.sub(r"[\s│┃]", "", table)
    assert "(--allow-private-networkliftsthischeck)(url-blocked)" in squashed


def test_a_bare_manifests_consent_heading_is_its_file_stem(cli: Run, tmp_path: Path, bank: str) -> None:
    """A bare manifest has no name: the heading is the file's stem, not an escaped path."""
    doc = _bank.card(bank, _bank.access("a", "getBalance"))["resourceAccessManifest"]
    (tmp_path / "cards").mkdir()
    card = _bank.write(tmp_path / "cards" / "petstore.ram.json", doc)
    code, out, _ = cli("--allow-private-network", "consent", "--format", "markdown", str(card))
    assert code == 0
    assert out.splitlines()[0] == "# petstore asks for access"
    _, html, _ = cli("--allow-private-network", "consent", "--format", "html", str(card))
    assert "<h1>petstore asks for access</h1>" in html
    _, data, _ = cli("--allow-private-network", "consent", str(card))
    assert json.loads(data)["agent"]["source"] == str(card)


def test_readme_says_how_big_the_first_test_run_makes_corpora() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    assert re.search(r"`\.corpora/`[^.]*~800 MB", readme)
