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
from typing import Any

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


def _bench() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("ramscope_bench_conformance", ROOT / "bench" / "conformance.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_run_is_at_the_newest_version_the_installed_sdk_supports() -> None:
    """Issue 32 item 7: the SDK's newest (2026-07-28 with mcp 2.3) is newer than the suite's dated versions, so
    the scenarios that hold at 2025-11-25 and the suite's draft ones; a dated version the suite knows is itself."""
    from mcp_types.version import LATEST_PROTOCOL_VERSION

    bench: Any = _bench()
    assert bench.sdk_newest() == LATEST_PROTOCOL_VERSION
    versions, why = bench.suite_versions("2026-07-28")
    assert versions == ("2025-11-25", "draft")
    assert "2026-07-28" in why
    assert bench.suite_versions("2025-06-18")[0] == ("2025-06-18",)
    with pytest.raises(SystemExit):
        bench.suite_versions("2024-01-01")
