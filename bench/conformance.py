"""Run the MCP conformance suite's client scenarios against ramscope and write the table.

::

    python bench/conformance.py [--dir DIR] [--out FILE] [--scenario NAME ...] [--spec-version V]

The scenarios are those of the newest specification version the installed official SDK supports
(``mcp_types.version.LATEST_PROTOCOL_VERSION``: 2026-07-28 with mcp 2.3), as the suite names it
(:func:`suite_versions`: the same date, else, for a revision newer than its dated ones, the scenarios
that hold at its newest dated one and its ``draft`` ones); ``--spec-version`` picks another.

``@modelcontextprotocol/conformance`` (npm) starts one mock MCP server per scenario
and runs ``bench/conformance_client.py URL`` against it; ramscope lists the tools and
discovers the authorization, as ``derive`` does. It needs Node >= 22: npm's ``node``
package supplies one, so both are installed with ``npm install`` into ``DIR``
(default ``$RAMSCOPE_CONFORMANCE_DIR``, else ``~/.cache/ramscope-conformance``) when
missing. Nothing but the npm registry is reached; the mock servers run on localhost.

Every check the suite reports is sorted into one of three columns:

* **pass**: the suite's check succeeded;
* **by design**: a check of something ramscope never does: obtain a token (client
  registration, the authorization and token requests, and the checks made on them),
  call a tool (and so answer an elicitation), or resume an event stream. Each is
  listed by its check id in :data:`BY_DESIGN`, reviewed against its scenario;
* **bug**: any other failure, or the client exiting other than 0 or 3. The run exits
  1 when there is one.

A column shows what ramscope's report concluded for an END_USER and an AGENT access.

The table is the evidence issue 14 asks for; ``tests/test_mcp_conformance.py`` (marked
``slow``) runs this and asserts the "bug" column is empty.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "@modelcontextprotocol/conformance@0.1.16"
NODE = "node@22"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CHECK = re.compile(r"\[([A-Za-z0-9_.:/-]+)\s*\]\s+(SUCCESS|FAILURE|WARNING)\s+(.*)")

#: The spec versions the suite (0.1.16, its dist/index.js) filters scenarios by, oldest first; "draft" holds the
#: scenarios of the revision after 2025-11-25 that was in progress when it was published (2026-07-28).
SUITE_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25", "draft")


def sdk_newest() -> str:
    """The newest MCP specification version the installed official SDK (``mcp``) supports."""
    from mcp_types.version import LATEST_PROTOCOL_VERSION

    return str(LATEST_PROTOCOL_VERSION)


def suite_versions(sdk: str, known: tuple[str, ...] = SUITE_VERSIONS) -> tuple[tuple[str, ...], str]:
    """The suite's spec versions whose scenarios apply at the SDK's newest version, and why.

    A dated version the suite knows is its own (the suite's dated filters are cumulative: a scenario
    of 2025-06-18 that still holds is tagged 2025-11-25 too). A revision newer than every dated one the
    suite knows gets the newest dated version's scenarios and the suite's ``draft`` ones (that revision in
    progress when the suite was published); the scenarios of older revisions only are left out."""
    if sdk in known:
        return (sdk,), f"the SDK's newest version, {sdk}"
    dated = [v for v in known if v[:1].isdigit()]
    if dated and "draft" in known and all(sdk > v for v in dated):
        return (dated[-1], "draft"), (
            f"the SDK's newest version {sdk} is newer than the suite's dated ones ({', '.join(dated)}): "
            f"the scenarios that hold at {dated[-1]} and the suite's draft ones"
        )
    raise SystemExit(f"the conformance suite knows no spec version for {sdk!r} (it knows {', '.join(known)})")


_TOKEN = "ramscope obtains no token (it derives the permissions a token would need; it never uses them)"
_TOOL = "ramscope never calls a tool"
_STREAM = "ramscope reads one answer per request; it does not resume event streams"
#: Checks of what ramscope never does, by design, each reviewed against its scenario; any other failing
#: check is counted as a bug.
BY_DESIGN: dict[str, str] = {
    "client-registration": "ramscope registers no OAuth client",
    "authorization-request": "ramscope starts no authorization flow",
    "token-request": _TOKEN,
    "tool-add-numbers": _TOOL,
    "client-sse-retry-timing": _STREAM,
    "client-sse-last-event-id": _STREAM,
    "cimd-client-id-used": "checked in the authorization request, which ramscope never sends",
    "scope-from-www-authenticate": "checked in the authorization request; ramscope reports that scope instead",
    "scope-from-scopes-supported": "checked in the authorization request; ramscope reports those scopes instead",
    "scope-omitted-when-undefined": "checked in the authorization request, which ramscope never sends",
    "scope-step-up-initial": _TOKEN,
    "scope-step-up-escalation": "needs a tool call with a token, then a 403 insufficient_scope: " + _TOOL,
    "scope-retry-limit": _TOKEN,
    "token-endpoint-auth-method": _TOKEN,
    "resource-parameter-in-authorization": "checked in the authorization request, which ramscope never sends",
    "resource-parameter-in-token": _TOKEN,
    "pre-registration-auth": _TOKEN,
    "sep-2207-offline-access-requested": "checked in the authorization request, which ramscope never sends",
    "sep-2207-offline-access-not-requested": "checked in the authorization request, which ramscope never sends",
    "client-credentials-jwt-verified": _TOKEN,
    "client-credentials-basic-auth": _TOKEN,
    "complete-flow-token-exchange": _TOKEN,
    "complete-flow-jwt-bearer": _TOKEN,
}
#: Elicitation checks run inside a tool call, with a client that declared the elicitation capability.
_BY_DESIGN_PREFIXES = {"client-elicitation-": "the server elicits during a tool call; " + _TOOL}


@dataclass
class Scenario:
    name: str
    passed: list[str] = field(default_factory=list)
    by_design: list[tuple[str, str]] = field(default_factory=list)
    bugs: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    derived: list[str] = field(default_factory=list)
    client_output: str = ""


def _node_env(base: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{base / 'node_modules' / 'node' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def ensure_installed(base: Path) -> Path:
    """The conformance CLI in ``base`` (installed with npm when missing); returns its entry point."""
    entry = base / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    node = base / "node_modules" / "node" / "bin" / "node"
    if entry.exists() and node.exists():
        return entry
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm is needed to install the conformance suite")
    base.mkdir(parents=True, exist_ok=True)
    if not (base / "package.json").exists():
        (base / "package.json").write_text('{"name": "ramscope-conformance", "private": true}\n', "utf-8")
    subprocess.run([npm, "install", "--no-audit", "--no-fund", NODE, PACKAGE], cwd=base, check=True)
    return entry


def client_scenarios(entry: Path, base: Path, spec_versions: tuple[str, ...]) -> list[str]:
    """The client scenarios of these spec versions, in the suite's order, each once."""
    names: list[str] = []
    for version in spec_versions:
        for name in _listed(entry, base, version):
            if name not in names:
                names.append(name)
    return names


def _listed(entry: Path, base: Path, spec_version: str) -> list[str]:
    out = subprocess.run(
        ["node", str(entry), "list", "--client", "--spec-version", spec_version],
        cwd=base,
        env=_node_env(base),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names: list[str] = []
    section = False
    for line in out.splitlines():
        if line.startswith("Client scenarios"):
            section = True
        elif line and not line.startswith(" "):
            section = False
        elif section and line.strip().startswith("- "):
            names.append(line.strip()[2:].split(" ", 1)[0])
    return names


def _by_design(check: str) -> str | None:
    if check in BY_DESIGN:
        return BY_DESIGN[check]
    return next((why for prefix, why in _BY_DESIGN_PREFIXES.items() if check.startswith(prefix)), None)


def run_scenario(entry: Path, base: Path, name: str) -> Scenario:
    client = f"{sys.executable} {ROOT / 'bench' / 'conformance_client.py'}"
    with tempfile.TemporaryDirectory(prefix="ramscope-conformance-") as tmp:
        log = Path(tmp) / "client.log"
        env = {**_node_env(base), "RAMSCOPE_CONFORMANCE_LOG": str(log)}
        proc = subprocess.run(
            [
                "node",
                str(entry),
                "client",
                "--command",
                client,
                "--scenario",
                name,
                "--timeout",
                "60000",
            ],
            cwd=base,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        said = log.read_text("utf-8") if log.exists() else ""
    text = _ANSI.sub("", proc.stdout + proc.stderr)
    result = Scenario(name, client_output=said + text)
    result.derived = [line.strip() for line in said.splitlines() if line.startswith(("ramscope exit", "call-as-"))]
    for line in text.splitlines():
        m = _CHECK.search(line)
        if m is None:
            continue
        check, status, message = m.group(1), m.group(2), m.group(3).strip()
        if status == "SUCCESS":
            result.passed.append(check)
            continue
        why = _by_design(check)
        if why is not None:
            result.by_design.append((check, why))
        elif status == "WARNING":
            result.warnings.append(f"{check}: {message}")
        else:
            result.bugs.append((check, message))
    if "Client exited with code" in text:
        result.bugs.append(("client-exit", "the ramscope client exited with an error (see its output)"))
    return result


def _summary(derived: list[str]) -> str:
    """``exit N; END_USER: scopes [...] / reason; AGENT: ...`` from the client's printed lines."""
    parts: list[str] = []
    for line in derived:
        if line.startswith("ramscope exit code:"):
            parts.insert(0, "exit " + line.split(":", 1)[1].strip())
            continue
        m = re.match(r"call-as-([a-z-]+): complete=(\w+) reason=(\S+) scopes=(.*)", line)
        if m:
            who, complete, reason, scopes = m.groups()
            parts.append(f"{who}: {scopes}" if complete == "True" else f"{who}: {reason}")
    return "; ".join(parts).replace("|", "\\|") or "-"


def table(results: list[Scenario], version: str = "") -> str:
    lines = [
        *([f"Spec version: {version}", ""] if version else []),
        "| scenario | pass | fail by design (ramscope never obtains tokens or calls tools) | ramscope's report "
        "(END_USER; AGENT) | fail by bug |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in results:
        passed = ", ".join(dict.fromkeys(r.passed)) or "-"
        design = "; ".join(f"{c} ({w})" for c, w in dict.fromkeys(r.by_design)) or "-"
        bugs = "; ".join(f"{c}: {m}" for c, m in r.bugs) or "none"
        if r.warnings:
            bugs += " (warnings: " + "; ".join(r.warnings) + ")"
        lines.append(f"| `{r.name}` | {passed} | {design} | {_summary(r.derived)} | {bugs} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    default_dir = os.environ.get("RAMSCOPE_CONFORMANCE_DIR") or str(Path.home() / ".cache" / "ramscope-conformance")
    ap.add_argument("--dir", type=Path, default=Path(default_dir), help="where the npm packages are (installed)")
    ap.add_argument("--out", type=Path, help="also write the table to this file")
    ap.add_argument("--scenario", action="append", help="run only these client scenarios")
    ap.add_argument("--spec-version", help="the suite's spec version (default: the installed SDK's newest)")
    args = ap.parse_args(argv)
    versions, why = ((args.spec_version,), "given") if args.spec_version else suite_versions(sdk_newest())
    entry = ensure_installed(args.dir)
    names = args.scenario or client_scenarios(entry, args.dir, versions)
    results = []
    for name in names:
        r = run_scenario(entry, args.dir, name)
        print(f"{name}: {len(r.passed)} passed, {len(r.by_design)} by design, {len(r.bugs)} bugs", file=sys.stderr)
        results.append(r)
    text = table(results, f"{' + '.join(f'`{v}`' for v in versions)} ({why})")
    print(text, end="")
    if args.out:
        args.out.write_text(text, "utf-8")
    return 1 if any(r.bugs for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
