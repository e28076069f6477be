"""Compile the vendored per-tool scope data of MCP servers into ``providers/data/mcp-servers.json``.

GitHub's MCP server first: ``vendor/github-mcp-server/README-tools.md`` (the upstream README's
``## Tools`` section, generated there from each tool's ``RequiredScopes`` / ``AcceptedScopes``) and
``vendor/github-mcp-server/facts.json`` (its URLs, authorization server, scopes_supported, scope
hierarchy, step-up challenge and token families, each with the upstream file it is read from).

Each tool becomes a list of alternatives (any one suffices), each a list of classic OAuth scopes
(all needed):

* ``Required OAuth Scopes: `s``` with ``Accepted: a, b``: any one accepted scope ([[a], [b]]; the
  accepted list is the required scope and its parents in the hierarchy); without an accepted list, [[s]];
* ``Required OAuth Scopes (any of): s, t`` with ``Accepted``: any one accepted scope;
* ``Required OAuth Scopes (all required): s, t``: one alternative, [[s, t]];
* no scope line: [[]], a token of the server of no particular scope (never "nothing").

Run from the repository root: ``python scripts/build_mcp_catalog.py`` (``--check`` exits 1 when the
shipped file is not what the vendored data compiles to).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "vendor" / "github-mcp-server"
OUT = ROOT / "src" / "ramscope" / "providers" / "data" / "mcp-servers.json"
COMMIT = "64a49f34d076b6f5917dae1424521d43c7bcae84"

_TOOL = re.compile(r"^- \*\*(?P<name>[A-Za-z0-9_.\-]+)\*\* - (?P<title>.+)$")
_REQUIRED = re.compile(r"^  - \*\*Required OAuth Scopes(?: \((?P<mode>any of|all required)\))?\*\*: (?P<list>.+)$")
_ACCEPTED = re.compile(r"^  - \*\*Accepted OAuth Scopes\*\*: (?P<list>.+)$")
_TOOLSET = re.compile(r"</picture> (?P<toolset>[^<]+)</summary>")
_CODE = re.compile(r"`([^`]+)`")


def parse_tools(text: str) -> dict[str, dict[str, Any]]:
    """The tools of the README's Tools section with their scope lines, in order."""
    seen: list[tuple[str, dict[str, Any]]] = []
    toolset = ""
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        if m := _TOOLSET.search(line):
            toolset = m.group("toolset").strip()
        elif m := _TOOL.match(line):
            name = m.group("name")
            current = {"toolsets": [toolset], "title": m.group("title").strip(), "required": [], "mode": None,
                       "accepted": []}  # fmt: skip
            seen.append((name, current))
        elif current is not None and (m := _REQUIRED.match(line)):
            current["required"] = _CODE.findall(m.group("list"))
            current["mode"] = {"any of": "any-of", "all required": "all"}.get(m.group("mode") or "", "one")
        elif current is not None and (m := _ACCEPTED.match(line)):
            current["accepted"] = _CODE.findall(m.group("list"))
    # A tool of several toolsets is listed under each (get_label: issues and labels): one entry, if they agree.
    tools: dict[str, dict[str, Any]] = {}
    for name, t in seen:
        first = tools.get(name)
        if first is None:
            tools[name] = t
        elif (first["required"], first["mode"], first["accepted"]) != (t["required"], t["mode"], t["accepted"]):
            raise SystemExit(f"README-tools.md lists tool {name!r} twice, with different scopes")
        else:
            first["toolsets"] = [*first["toolsets"], *t["toolsets"]]
    return tools


def alternatives(tool: dict[str, Any]) -> list[list[str]]:
    required, accepted, mode = tool["required"], tool["accepted"], tool["mode"]
    if not required:
        return [[]]
    if mode == "all":
        return [sorted(required)]
    return [[s] for s in (accepted or required)]


def build() -> dict[str, Any]:
    facts = json.loads((VENDOR / "facts.json").read_text("utf-8"))
    tools = parse_tools((VENDOR / "README-tools.md").read_text("utf-8"))
    if len(tools) < 50:
        raise SystemExit(f"README-tools.md yielded {len(tools)} tools; the section's format changed?")
    out_tools = {}
    for name, t in tools.items():
        out_tools[name] = {**t, "alternatives": alternatives(t)}
    server = {
        "name": "github-mcp",
        "provider": "GitHub",
        "hosts": ["api.githubcopilot.com"],
        "path_prefix": "/mcp",
        "urls": facts["server_urls"]["value"],
        "authorization_server": facts["authorization_server"]["value"],
        "scopes_supported": facts["scopes_supported"]["value"],
        "hierarchy": facts["hierarchy"]["value"],
        "token_families": {k: v for k, v in facts["token_families"].items() if k != "source"},
        "step_up": facts["step_up"]["value"],
        "source": {
            "repository": "https://github.com/github/github-mcp-server",
            "commit": COMMIT,
            "date": "2026-08-20",
            "retrieved": "2026-12-02",
            "files": [
                "README.md (## Tools: Required / Accepted OAuth Scopes per tool)",
                "docs/scope-filtering.md",
                "docs/remote-server.md",
                "pkg/scopes/scopes.go",
                "pkg/http/oauth/oauth.go",
                "pkg/http/middleware/scope_challenge.go",
            ],
            "license": "MIT",
            "reference": f"https://github.com/github/github-mcp-server/blob/{COMMIT}/README.md#tools",
        },
        "tools": out_tools,
    }
    return {"format": "ramscope-mcp-catalog/1", "version": f"2026-08-20+{COMMIT[:8]}", "servers": [server]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the shipped file is out of date")
    args = ap.parse_args()
    text = json.dumps(build(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if args.check:
        same = OUT.is_file() and OUT.read_text("utf-8") == text
        print("up to date" if same else f"{OUT} is out of date: run python scripts/build_mcp_catalog.py")
        return 0 if same else 1
    OUT.write_text(text, "utf-8")
    print(f"wrote {OUT} ({len(build()['servers'][0]['tools'])} GitHub MCP tools)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
