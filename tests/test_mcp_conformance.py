"""The MCP conformance suite's client scenarios against ramscope (issue 14, "Must show"); slow.

``bench/conformance.py`` installs ``@modelcontextprotocol/conformance`` and Node 22 with npm
(into ``$RAMSCOPE_CONFORMANCE_DIR``, else ``~/.cache/ramscope-conformance``), runs every
client scenario against ``bench/conformance_client.py`` and sorts each check into pass,
fail by design (ramscope never obtains a token nor calls a tool) and fail by bug. The
mock servers run on localhost. Run with ``pytest -m slow tests/test_mcp_conformance.py``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_no_conformance_scenario_fails_by_bug(tmp_path: Path) -> None:
    """Every check either passes or fails by design; the table is written for the record."""
    if shutil.which("npm") is None:
        pytest.skip("npm is needed to install the conformance suite")
    out = tmp_path / "conformance.md"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "conformance.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    table = out.read_text("utf-8")
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert rows, table
    assert all(line.rstrip().endswith("| none |") for line in rows), table
    assert "| `initialize` | mcp-client-initialization |" in table
