"""bench/run.py --quick runs to the end and writes every section. No timing is asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("cold", "warm", "naive", "batch", "fetch", "memory", "yaml", "tiercase")


def test_bench_quick_runs_and_writes_every_section(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--output", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = json.loads(out.read_text())
    assert results["meta"]["mode"] == "quick"
    for name in SECTIONS:
        section = results[name]
        assert "error" not in section, (name, section)
        assert "seconds" in section
    assert results["summary"], "no target was judged"
    assert "summary" in proc.stdout


def test_against_an_earlier_commit_prints_both_and_the_ratio(tmp_path: Path) -> None:
    """``--against REV`` measures this checkout and REV in one invocation (here REV is HEAD itself)."""
    out = tmp_path / "against.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--only", "startup", "--against", "HEAD",
         "--output", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "regression table: this checkout against" in proc.stdout
    doc = json.loads(out.read_text())
    rows = {(r["benchmark"], r["what"]): r for r in doc["rows"]}
    version = rows[("10 startup", "ramscope --version / python -c pass")]
    assert version["this"] > 0
    assert version["rev"] > 0
    assert version["ratio"] == version["this"] / version["rev"]
    assert len(doc["runs"]["this"]) == len(doc["runs"]["rev"]) == 1


def test_an_unknown_revision_is_a_usage_error() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--only", "startup", "--against", "no-such-rev"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "is not a commit of this repository" in proc.stderr
