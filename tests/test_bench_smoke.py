"""bench/run.py --quick runs to the end and writes every section. No timing is asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("cold", "warm", "naive", "batch", "fetch", "memory", "yaml")


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
