#!/usr/bin/env python3
"""Compile permissions from Microsoft Graph's API reference pages for operations its permission file lacks.

    python scripts/graph_docs_additions.py DOCS_DIR [--commits FILE] [-o OUT]

``DOCS_DIR`` holds pages of microsoftgraph/microsoft-graph-docs-contrib in the repository's layout
(``api-reference/v1.0/api/*.md``, and ``api-reference/v1.0/includes/permissions/*.md`` for the pages that
include their table). ``--commits`` is a JSON object of page path -> the commit it was read at (recorded
per addition). Each page's "HTTP request" blocks give its (method, path) pairs and its "Permissions"
table the permissions per scheme, in Microsoft's three table shapes:

- ``|Permission type|Least privileged permissions|Higher privileged permissions|`` (the included tables):
  the least column is Microsoft's least-privileged mark;
- ``|Permission type|Permissions (from least to most privileged)|``: the first one is the mark;
- ``|<resource>|Delegated (work or school account)|Delegated (personal Microsoft account)|Application|``:
  one row per resource the endpoint addresses (a user's or a group's calendar, an event's or a message's
  attachment, a deleted user or group); the row is the one whose resource a path segment names (the
  deepest), and a path no row's resource names, or several equally, is left out (not guessed).

Fail closed: a cell naming permissions ANDed (``A and B``: the additions format lists each permission
alone), "Not supported" / "Not available", or a page without both sections adds nothing. Written is
``src/ramscope/providers/data/microsoft-graph.docs.json`` (format 1, the additions file's entry shape,
each with its page, commit and the learn.microsoft.com URL); ``scripts/build_providers.py --only
microsoft-graph`` merges it guarded as the reviewed additions are (a permission ``permissions.json``
does not define for the scheme is refused; a (method, path, scheme) it already lists is left to it).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "ramscope" / "providers" / "data" / "microsoft-graph.docs.json"
REPO = "microsoftgraph/microsoft-graph-docs-contrib"
API = "api-reference/v1.0/api"
SCHEMES = {
    "delegated (work or school account)": "DelegatedWork",
    "delegated (personal microsoft account)": "DelegatedPersonal",
    "application": "Application",
}
_REQUEST = re.compile(r"^(GET|POST|PUT|PATCH|DELETE)\s+(/\S+)\s*$")
_INCLUDE = re.compile(r"\[!INCLUDE\s*\[permissions-table\]\(\.\./includes/permissions/([^)]+)\)\]")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_PERMISSION = re.compile(r"^[A-Z][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)+$")


def _section(text: str, title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\s*$(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    return m.group(1) if m else ""


def requests(text: str) -> list[tuple[str, str]]:
    """The (METHOD, path) pairs of a page's "HTTP request" blocks (commented-out ones excluded)."""
    out: list[tuple[str, str]] = []
    for block in re.findall(r"```http[^\n]*\n(.*?)```", _COMMENT.sub("", _section(text, "HTTP request")), re.DOTALL):
        for line in block.splitlines():
            m = _REQUEST.match(line.strip().replace("{id | userPrincipalName}", "{id}"))
            if m:
                out.append((m.group(1), m.group(2)))
    return out


def _rows(table: str) -> list[list[str]]:
    rows = []
    for raw in table.splitlines():
        line = raw.strip()
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if all(re.fullmatch(r":?-+:?", c) for c in cells if c):
            continue
        rows.append(cells)
    return rows


def _cell(text: str) -> list[str] | None:
    """The permissions a cell lists, least first; None where it names none, or names an AND."""
    t = _LINK.sub(r"\1", text).strip().rstrip(".")
    if not t or t.lower().startswith(("not supported", "not available")) or re.search(r"\band\b", t):
        return None
    names = [n.strip() for n in t.split(",") if n.strip()]
    return names if names and all(_PERMISSION.match(n) for n in names) else None


def table(text: str, includes: Path | None) -> tuple[str, list[list[str]]]:
    """("scheme-rows" | "resource-rows", rows) of a page's Permissions table."""
    perms = _COMMENT.sub("", _section(text, "Permissions"))
    inc = _INCLUDE.search(perms)
    if inc is not None:
        f = (includes / inc.group(1)) if includes is not None else None
        perms = f.read_text("utf-8") if f is not None and f.is_file() else ""
    rows = _rows(perms)
    if not rows:
        return "", []
    header = [h.lower() for h in rows[0]]
    if header[0] == "permission type":
        return "scheme-rows", rows
    if [SCHEMES.get(h) for h in header[1:4]] == ["DelegatedWork", "DelegatedPersonal", "Application"]:
        return "resource-rows", rows
    return "", []


def _words(path: str) -> list[str]:
    """A path's segments as resource words, outermost first (``/me`` is a user's)."""
    out = []
    for seg in path.strip("/").split("/"):
        s = seg.lower()
        if not s or s.startswith("{"):
            continue
        s = s.rsplit(".", 1)[-1]  # an OData cast: microsoft.graph.user
        out.append("user" if s == "me" else s.removesuffix("s"))
    return out


def permissions_for(kind: str, rows: list[list[str]], path: str) -> dict[str, list[str]]:
    """scheme key -> permissions (least first) for ``path``."""
    out: dict[str, list[str]] = {}
    if kind == "scheme-rows":
        for r in rows[1:]:
            key = SCHEMES.get(_LINK.sub(r"\1", r[0]).lower())
            if key is None or len(r) < 2:
                continue
            cells = [_cell(c) for c in r[1:]]
            if cells[0] is None:
                continue
            out[key] = [p for c in cells if c for p in c]
        return out
    words = _words(path)
    best: tuple[int, list[str]] | None = None
    tie = False
    for r in rows[1:]:
        resource = _LINK.sub(r"\1", r[0]).lower().split()[0].removesuffix("s")
        depth = max((i for i, w in enumerate(words) if w == resource.lower()), default=-1)
        if depth < 0:
            continue
        if best is None or depth > best[0]:
            best, tie = (depth, r), False
        elif depth == best[0]:
            tie = True
    if best is None or tie:
        return {}
    for key, cell in zip(("DelegatedWork", "DelegatedPersonal", "Application"), best[1][1:4], strict=False):
        names = _cell(cell)
        if names:
            out[key] = names
    return out


def compile_pages(docs: Path, commits: dict[str, str]) -> list[dict[str, Any]]:
    additions: list[dict[str, Any]] = []
    includes = docs / "api-reference" / "v1.0" / "includes" / "permissions"
    for page in sorted((docs / API).glob("*.md")):
        text = page.read_text("utf-8")
        kind, rows = table(text, includes)
        if not kind:
            continue
        rel = f"{API}/{page.name}"
        grouped: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
        for method, path in requests(text):
            for key, names in permissions_for(kind, rows, path).items():
                grouped.setdefault((method, key, tuple(names)), []).append(path)
        for (method, key, names), paths in sorted(grouped.items()):
            additions.append(
                {
                    "method": method,
                    "paths": sorted(set(paths)),
                    "scheme": key,
                    "permissions": list(names),
                    "least": [names[0]],
                    "source": f"https://learn.microsoft.com/graph/api/{page.stem}?view=graph-rest-1.0#permissions",
                    "page": rel,
                    "commit": commits.get(rel, ""),
                }
            )
    return additions


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("docs", type=Path)
    ap.add_argument("--commits", type=Path)
    ap.add_argument("-o", "--out", type=Path, default=OUT)
    ap.add_argument("--date", default="", help="the date the pages were read (recorded)")
    args = ap.parse_args(argv)
    commits = json.loads(args.commits.read_text("utf-8")) if args.commits else {}
    additions = compile_pages(args.docs, commits)
    doc = {
        "format": 1,
        "about": "Permissions compiled by scripts/graph_docs_additions.py from the permission tables of Microsoft "
        "Graph's API reference pages (v1.0), for endpoints whose permissions.json entry lacks a scheme; merged "
        "guarded as microsoft-graph.additions.json is. Facts are Microsoft's; the pages are CC BY 4.0 (docs) / "
        "MIT (code) in " + REPO + ".",
        "source": {"repository": REPO, "read": args.date, "license": "CC-BY-4.0 (documentation), MIT (code)"},
        "additions": additions,
    }
    args.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", "utf-8")
    print(f"{len(additions)} additions from {len({a['page'] for a in additions})} pages -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
