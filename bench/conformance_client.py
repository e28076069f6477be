"""ramscope as the client under test of the MCP conformance suite (``bench/conformance.py`` drives it).

The suite starts a scenario's server and runs ``python bench/conformance_client.py URL``.
ramscope's part of the MCP conversation is what ``derive`` does: list the tools (any era or
transport) and discover the server's authorization; it never obtains a token and never calls
a tool. This writes a card naming ``URL``'s first listed tool (``RAMSCOPE_TOOL`` overrides; a server
that lists nothing anonymously gets ``test_tool``), with an END_USER and an AGENT access,
derives it with a private cache (the listing is fetched once), prints the summary, and exits 0 when a report
was produced (ramscope's own exit code 0 or 3, printed), else with ramscope's code.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.mcpcards import write_mcp_card  # noqa: E402

from ramscope.cli import main  # noqa: E402
from ramscope.config import Settings  # noqa: E402
from ramscope.errors import RamscopeError  # noqa: E402
from ramscope.specs import SpecKind, build_index  # noqa: E402
from ramscope.store import SpecStore  # noqa: E402


def _first_tool(url: str, cache: str) -> str:
    """The first tool the server lists (the capture is cached for the derive that follows), else a stand-in."""
    settings = Settings(cache_dir=Path(cache), allow_private_network=True, timeout=10.0)
    try:
        with SpecStore(settings) as store:
            index = build_index(store.get(url, kind_hint=SpecKind.MCP), kind_hint=SpecKind.MCP)
    except RamscopeError:
        return "test_tool"
    return index.operations[0].operation_id if index.operations else "test_tool"


def run(url: str) -> int:
    with tempfile.TemporaryDirectory(prefix="ramscope-conformance-") as tmp:
        tool = os.environ.get("RAMSCOPE_TOOL") or _first_tool(url, f"{tmp}/cache")
        card = write_mcp_card(Path(tmp) / "card.json", url, tool, ("END_USER", "AGENT"))
        out = Path(tmp) / "report.json"
        code = main(
            [
                "--allow-private-network",
                "--cache-dir",
                f"{tmp}/cache",
                "--no-progress",
                "--timeout",
                "10",
                "derive",
                str(card),
                "-o",
                str(out),
            ]
        )
        lines = [f"ramscope exit code: {code}"]
        if out.exists():
            report = json.loads(out.read_text("utf-8"))
            for a in report["accesses"]:
                lines.append(f"{a['id']}: complete={a['complete']} reason={a['reason']} scopes={a['scopes']}")
            for d in report["diagnostics"]:
                if d["code"].startswith("mcp-") or d["severity"] == "error":
                    lines.append(f"[{d['severity']}] {d['code']}: {d['message'][:300]}")
        print("\n".join(lines))
        # The suite shows a client's output only when it fails: bench/conformance.py reads this file.
        log = os.environ.get("RAMSCOPE_CONFORMANCE_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
    return 0 if code in (0, 3) else code


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: conformance_client.py URL", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(run(sys.argv[1]))
