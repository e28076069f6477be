"""The package's layers: rendering (``ramscope.outputs``) is handed plain values and imports nothing
from the spec store."""

from __future__ import annotations

import ast
from pathlib import Path

from rich.console import Console

from ramscope.outputs.fetch import FetchRow, fetch_status, render_fetch_table

SRC = Path(__file__).resolve().parents[1] / "src" / "ramscope"


def _imported(path: Path) -> set[str]:
    """The modules ``path`` imports, absolute (``ramscope.x.y``), wherever in the file."""
    package = ["ramscope", *path.relative_to(SRC).parent.parts]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            out.add(module)
            out.update(f"{module}.{alias.name}" for alias in node.names)
    return out


def test_outputs_import_nothing_from_the_store() -> None:
    offenders = {
        str(p.relative_to(SRC)): sorted(m for m in _imported(p) if m.startswith("ramscope.store"))
        for p in sorted((SRC / "outputs").rglob("*.py"))
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_import_reader_resolves_relative_imports() -> None:
    assert "ramscope.store.FetchOutcome" in _imported(SRC / "cli" / "derive.py")
    assert "ramscope.store" in _imported(SRC / "cli" / "derive.py")


def test_a_fetched_row_says_ok_and_its_provenance_notes() -> None:
    row = FetchRow("https://x.test/a.json", "openapi", fetched=True, size=1234, origin="cache", notes=("stale",))
    assert fetch_status(row) == "ok (stale)"
    assert fetch_status(FetchRow("u", "mcp", fetched=True)) == "ok"


def test_a_failed_row_says_its_error_on_one_line() -> None:
    row = FetchRow("u", "openapi", fetched=False, error_code="url-blocked", error_detail="private\naddress")
    assert fetch_status(row) == "url-blocked: private address"
    assert fetch_status(FetchRow("u", "openapi", fetched=False)) == "not fetched"


def test_the_table_escapes_the_url_and_shows_failures_only_when_asked() -> None:
    console = Console(width=200, no_color=True, force_terminal=False, record=True)
    rows = [
        FetchRow("https://x.test/\x1b[31m", "openapi", fetched=True, size=1234, origin="network"),
        FetchRow("https://y.test/b", "mcp", fetched=False, error_code="fetch-failed", error_detail="404"),
    ]
    render_fetch_table(rows, console, failures_only=True)
    text = console.export_text()
    assert "x.test" not in text
    assert "fetch-failed: 404" in text
    render_fetch_table(rows, console)
    text = console.export_text()
    assert "\x1b" not in text
    assert "1,234" in text


def test_the_pipeline_stages_live_in_their_packages_not_at_the_top() -> None:
    """Resolution, least privilege, the policy and stored-report reuse are stages of ``derive``; the
    universe refresh is provider data's; the top level keeps the card, its model and shared plumbing."""
    top = {p.stem for p in SRC.glob("*.py")}
    assert top.isdisjoint({"resolve", "privilege", "policy", "reuse", "refresh"})
    for stage in ("resolve", "privilege", "policy", "reuse"):
        assert (SRC / "derive" / f"{stage}.py").is_file()
    assert (SRC / "providers" / "refresh.py").is_file()
    assert len(top) <= 20


def test_derive_takes_the_report_records_from_outputs_report() -> None:
    """Records are data: the derivation builds :mod:`ramscope.outputs.report`'s records and defines none."""
    for p in sorted((SRC / "derive").glob("*.py")):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        assert not defined & {"AccessRecord", "SpecRecord", "TierRecord", "IdentityTier", "SkillRecord", "Report"}, p
    assert "ramscope.outputs.report.AccessRecord" in _imported(SRC / "derive" / "choice.py")
