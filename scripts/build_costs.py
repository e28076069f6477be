#!/usr/bin/env python3
"""Rebuild src/ramscope/providers/data/costs.json from the providers' pages vendored under vendor/costs/.

    python scripts/build_costs.py                    # rebuild from the snapshots
    python scripts/build_costs.py --check            # exit 1 if the compiled file is not what they give
    python scripts/build_costs.py --shopify-schema admin_2026-10.json.gz   # refresh the Shopify snapshot

Every class is read from a snapshot by this script, not typed in: Google's "choose scopes" pages
(Markdown tables with a Usage column or one table per class; the Drive page as flattened text), Google's
restricted-scope list, Slack's Marketplace guidelines sentence, the requiredAccess texts of Shopify's
Admin GraphQL schema. What no page states comes only from vendor/costs/exceptions.json (reviewed, each
entry quoting its page); a contradiction between two sources stops the build. The output is
deterministic (sorted keys), so rebuilding from the same snapshots gives the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "vendor" / "costs"
OUT = ROOT / "src" / "ramscope" / "providers" / "data" / "costs.json"
sys.path.insert(0, str(ROOT / "src"))

VERSION = "2026-12-02"

#: Google's snapshots: file -> (the API it documents, the page's URL). Order = precedence of the
#: ``source`` named for a scope several pages class (the API's own page first).
GOOGLE_PAGES: dict[str, tuple[str, str]] = {
    "gmail.md": ("gmail", "https://developers.google.com/workspace/gmail/api/auth/scopes"),
    "drive.txt": ("drive", "https://developers.google.com/workspace/drive/api/guides/api-specific-auth"),
    "docs.md": ("docs", "https://developers.google.com/workspace/docs/api/auth"),
    "sheets.md": ("sheets", "https://developers.google.com/workspace/sheets/api/scopes"),
    "restricted.txt": ("", "https://support.google.com/cloud/answer/13464325"),
}
CLASSES = ("non-sensitive", "sensitive", "restricted")
GOOGLE_TRIGGERS = {
    "non-sensitive": [],
    "sensitive": ["google-verification"],
    "restricted": ["google-verification", "google-security-assessment"],
}
RESTRICTED_CONDITION = (
    "the security assessment applies when restricted scope data is stored on or transmitted through "
    "servers (Google's scopes pages: 'If you store restricted scope data on servers (or transmit), then "
    "you must go through a security assessment')"
)
SLACK_PAGE = "https://api.slack.com/slack-marketplace/guidelines"
SHOPIFY_PAGE = "https://shopify.dev/docs/apps/launch/protected-customer-data"
HUBSPOT_PAGE = "https://developers.hubspot.com/docs/api-reference/latest/crm/properties/sensitive-data"
HUBSPOT_CONDITION = (
    "HubSpot's Ecosystem Quality team must allow the scope for an app distributed on the HubSpot Marketplace, "
    "and a Super admin of an Enterprise account authorizes it (HubSpot's Sensitive Data page)"
)

_SCOPE = r"https://(?:www\.googleapis\.com/auth/[A-Za-z0-9._/-]+|mail\.google\.com/)"
_ROW = re.compile(rf"^\|\s*`({_SCOPE})`\s*\|(.*)\|\s*$")
_HEADING = re.compile(r"^#{2,4}\s+(Non-sensitive|Sensitive|Restricted) scopes\s*$", re.IGNORECASE)
_BARE_HEADING = re.compile(r"^(Non-sensitive|Sensitive|Restricted) scopes\s*$", re.IGNORECASE)
_URL_LINE = re.compile(rf"^({_SCOPE})(?:\s.*)?$")


class BuildError(Exception):
    pass


def _class_word(text: str) -> str | None:
    """The class a Usage cell names ("==Recommended==   Non-sensitive" -> non-sensitive)."""
    words = re.findall(r"non-sensitive|sensitive|restricted", text.lower())
    return words[-1] if words else None


def parse_markdown(text: str) -> Iterator[tuple[str, str]]:
    """(scope, class) of a Markdown "choose scopes" page: a Usage column, or one table per class heading."""
    section: str | None = None
    usage_column = False
    for line in text.splitlines():
        if h := _HEADING.match(line.strip()):
            section = h.group(1).lower()
            continue
        if line.startswith("#"):
            section = None
            continue
        m = _ROW.match(line.strip())
        if not m:
            if line.strip().startswith("|") and "---" not in line:
                # A table's header: only a "Usage" column holds the class (a description may say "sensitive").
                usage_column = line.strip().rstrip("|").rsplit("|", 1)[-1].strip().lower() == "usage"
            continue
        cells = [c.strip() for c in m.group(2).split("|")]
        usage = _class_word(cells[-1]) if usage_column else None
        cls = usage or section
        if cls is None:
            raise BuildError(f"a scope row with no class: {line.strip()[:120]}")
        yield m.group(1), cls


def parse_flat(text: str) -> Iterator[tuple[str, str]]:
    """(scope, class) of a page whose HTML was flattened to one cell per line (Drive): the scope lines
    under each "<Class> scopes" line."""
    section: str | None = None
    for line in text.splitlines():
        s = line.strip()
        if h := _BARE_HEADING.match(s):
            section = h.group(1).lower()
            continue
        if s.startswith("The scopes in the preceding tables"):
            section = None
            continue
        if section and (m := _URL_LINE.match(s)):
            yield m.group(1), section


def parse_restricted_list(text: str) -> Iterator[tuple[str, str]]:
    """Every scope of Google's restricted-scope list (each on its own line, perhaps with a note)."""
    started = False
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("The following scopes are categorized as"):
            started = True
            continue
        if s == "[end of the stored copy]":
            break
        if started and (m := _URL_LINE.match(s)):
            yield m.group(1), "restricted"


def google_page_classes() -> dict[str, list[tuple[str, str]]]:
    """scope -> [(class, page URL)] over every Google snapshot, in ``GOOGLE_PAGES`` order."""
    out: dict[str, list[tuple[str, str]]] = {}
    for fname, (_api, url) in GOOGLE_PAGES.items():
        text = (VENDOR / "google" / fname).read_text(encoding="utf-8")
        if fname == "restricted.txt":
            rows: Iterable[tuple[str, str]] = parse_restricted_list(text)
        elif fname.endswith(".txt"):
            rows = parse_flat(text)
        else:
            rows = parse_markdown(text)
        n = 0
        for scope, cls in rows:
            if cls not in CLASSES:
                raise BuildError(f"{fname}: unknown class {cls!r} for {scope}")
            out.setdefault(scope, []).append((cls, url))
            n += 1
        if n == 0:
            raise BuildError(f"{fname}: no scope read (the page's layout changed?)")
    return out


def _exceptions(provider: str) -> Iterator[tuple[str, dict[str, Any]]]:
    doc = orjson.loads((VENDOR / "exceptions.json").read_bytes())
    for e in doc["entries"]:
        if e["provider"] != provider:
            continue
        for perm in e["permissions"]:
            yield perm, e


def build_google() -> dict[str, Any]:
    from ramscope.providers import GOOGLE, shipped_universe

    pages = google_page_classes()
    perms: dict[str, dict[str, Any]] = {}
    for scope, found in sorted(pages.items()):
        classes = {c for c, _ in found}
        if len(classes) != 1:
            raise BuildError(f"google: {scope} is classed {sorted(classes)} by {[u for _, u in found]}")
        cls = found[0][0]
        perms[scope] = {
            "class": cls,
            "triggers": GOOGLE_TRIGGERS[cls],
            "source": found[0][1],
            "sources": sorted({u for _, u in found}),
            "basis": "page",
        } | ({"condition": RESTRICTED_CONDITION} if cls == "restricted" else {})
    for scope, e in _exceptions("google"):
        if scope in perms:
            if perms[scope]["class"] != e["class"]:
                raise BuildError(f"google: exception for {scope} contradicts {perms[scope]['source']}")
            continue
        perms[scope] = {
            "class": e["class"],
            "triggers": GOOGLE_TRIGGERS[e["class"]],
            "source": e["source"],
            "sources": [e["source"]],
            "basis": "exception",
            "quote": e["quote"],
        }
    universe = shipped_universe(GOOGLE)
    if universe is None:
        raise BuildError("the shipped Google universe is missing")
    home = universe.home_api
    apis: dict[str, dict[str, Any]] = {}
    for ns, scope in sorted(universe.by_scope):
        api = home.get((ns, scope)) or "(none)"
        rec = apis.setdefault(api, {"scopes": 0, "classified": 0, "unclassified": []})
        rec["scopes"] += 1
        if scope in perms:
            rec["classified"] += 1
        else:
            rec["unclassified"].append(scope)
    documented = sorted({api for api, _ in GOOGLE_PAGES.values() if api})
    return {
        "server": GOOGLE,
        "pages": [
            {"file": f"vendor/costs/google/{f}", "url": u, "api": a or None} for f, (a, u) in GOOGLE_PAGES.items()
        ],
        "license": "CC-BY-4.0 (https://developers.google.com/site-policies)",
        "permissions": perms,
        # Per API of the universe: how many of its scopes some page classes. An API whose scopes no
        # snapshot classes is unclassified (its scopes' costs are unknown, never "none").
        "apis": apis,
        "documented_apis": documented,
    }


_SLACK_LIST = re.compile(r"\(e\.g\. (?P<items>[^)]+)\)")
_SLACK_ITEM = re.compile(r"(?P<user>user token )?`(?P<pattern>[^`]+)`")


def build_slack() -> dict[str, Any]:
    text = (VENDOR / "slack" / "marketplace-guidelines.md").read_text(encoding="utf-8")
    line = next((ln for ln in text.splitlines() if "restricted scopes" in ln and "(e.g." in ln), None)
    if line is None or not (m := _SLACK_LIST.search(line)):
        raise BuildError("slack: the guidelines sentence listing the restricted scopes was not found")
    patterns = []
    for item in _SLACK_ITEM.finditer(m.group("items")):
        patterns.append(
            {
                "pattern": item.group("pattern"),
                "class": "marketplace-ineligible",
                "triggers": ["marketplace-ineligible"],
                "source": SLACK_PAGE,
                "basis": "page",
            }
            | ({"token": "user"} if item.group("user") else {})
        )
    if len(patterns) < 3:
        raise BuildError("slack: fewer scope patterns than the sentence lists")
    return {
        "server": "https://slack.com",
        "pages": [{"file": "vendor/costs/slack/marketplace-guidelines.md", "url": SLACK_PAGE}],
        "note": "Slack's list is of examples ('e.g.'), and Slack may deny any app: a scope not listed is unclassified",
        "permissions": {},
        "patterns": patterns,
    }


def build_shopify() -> dict[str, Any]:
    from ramscope.providers._costs_text import customer_data_level

    doc = orjson.loads((VENDOR / "shopify" / "admin_2026-10.customer-data.json").read_bytes())
    fields: dict[str, dict[str, Any]] = {}
    for row in doc["rows"]:
        level = customer_data_level(row["requiredAccess"])
        if level is None or not row.get("field"):
            continue
        fields[f"{row['type']}.{row['field']}"] = {
            "class": f"protected-customer-data-level-{level}",
            "triggers": ["review-required"],
            "source": SHOPIFY_PAGE,
            "condition": "for an app distributed publicly (custom apps are granted at install)",
            "basis": "page",
            "required_access": row["requiredAccess"],
        }
    return {
        "server": "https://shopify.com",
        "pages": [{"file": "vendor/costs/shopify/admin_2026-10.customer-data.json", "url": doc["source"]}],
        "permissions": {},
        "fields": fields,
        "fields_source": SHOPIFY_PAGE,
    }


_HUBSPOT_HEADING = re.compile(r"^###\s+(Sensitive|Highly sensitive) scopes\s*$", re.IGNORECASE)
_HUBSPOT_ITEM = re.compile(r"^\*\s+`([a-z][a-z0-9_.]+)`")


def build_hubspot() -> dict[str, Any]:
    text = (VENDOR / "hubspot" / "sensitive-data.md").read_text(encoding="utf-8")
    perms: dict[str, dict[str, Any]] = {}
    section: str | None = None
    for line in text.splitlines():
        s = line.strip()
        if h := _HUBSPOT_HEADING.match(s):
            section = "highly-sensitive" if h.group(1).lower().startswith("highly") else "sensitive"
            continue
        if s.startswith("#"):
            section = None
            continue
        if section and (m := _HUBSPOT_ITEM.match(s)):
            perms[m.group(1)] = {
                "class": section,
                "triggers": ["review-required", "admin-consent"],
                "source": HUBSPOT_PAGE,
                "condition": HUBSPOT_CONDITION,
                "basis": "page",
            }
    if len(perms) < 10:
        raise BuildError("hubspot: the sensitive scope lists were not found")
    return {
        "server": "https://app.hubspot.com",
        "pages": [{"file": "vendor/costs/hubspot/sensitive-data.md", "url": HUBSPOT_PAGE}],
        "permissions": perms,
    }


def build() -> bytes:
    doc = {
        "format": 1,
        "kind": "costs",
        "version": VERSION,
        "note": "Compiled by scripts/build_costs.py from vendor/costs (SOURCES.md); read by ramscope.providers.costs.",
        "providers": {
            "google": build_google(),
            "hubspot": build_hubspot(),
            "shopify": build_shopify(),
            "slack": build_slack(),
        },
    }
    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


def extract_shopify(schema: Path) -> None:
    """Refresh the Shopify snapshot from a dev-mcp introspection file (``admin_<version>.json.gz``)."""
    raw = schema.read_bytes()
    data: Mapping[str, Any] = orjson.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    types = (data.get("data") or data)["__schema"]["types"]
    rows = []
    for t in types:
        for f in t.get("fields") or ():
            ra = f.get("requiredAccess") or ""
            if "customer data" in ra.lower():
                rows.append({"type": t["name"], "field": f["name"], "requiredAccess": ra})
    out = VENDOR / "shopify" / "admin_2026-10.customer-data.json"
    prev = orjson.loads(out.read_bytes())
    prev["rows"] = rows
    out.write_bytes(orjson.dumps(prev, option=orjson.OPT_INDENT_2) + b"\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fail if the compiled file differs from a rebuild")
    ap.add_argument("--shopify-schema", type=Path, help="refresh vendor/costs/shopify from this introspection file")
    args = ap.parse_args(argv)
    if args.shopify_schema:
        extract_shopify(args.shopify_schema)
    try:
        data = build()
    except BuildError as e:
        print(f"build_costs: {e}", file=sys.stderr)
        return 1
    if args.check:
        same = OUT.is_file() and OUT.read_bytes() == data
        print("costs.json is up to date" if same else "costs.json differs from a rebuild", file=sys.stderr)
        return 0 if same else 1
    OUT.write_bytes(data)
    doc = orjson.loads(data)
    g = doc["providers"]["google"]
    print(f"wrote {OUT.relative_to(ROOT)}: google {len(g['permissions'])} classed scopes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
