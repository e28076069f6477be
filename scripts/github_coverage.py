#!/usr/bin/env python3
"""How much of GitHub's REST API the shipped GitHub catalog covers, per spec @octokit/openapi ships.

    python scripts/github_coverage.py [GENERATED_DIR]

GENERATED_DIR defaults to .corpora/node_modules/@octokit/openapi/generated (the corpus tests
install it there). For api.github.com, ghec and each ghes-* spec: the catalog serves the spec's
server (after substituting server-variable defaults), operations with a catalog entry, of those
with END_USER (github-user) and AGENT (github-installation) alternatives, and operations without an
entry (undetermined), with a few examples. With ``--derive``: every GET operation of
api.github.com.json derived for END_USER through the real pipeline (a loopback server), per token
family: how many are derived, how many picks are above read, and how many of those had a read
permission listed (a wrong pick).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ramscope.providers import catalog, normalise_url  # noqa: E402
from ramscope.providers.github import INSTALLATION, USER  # noqa: E402

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
DEFAULT = ROOT / ".corpora" / "node_modules" / "@octokit" / "openapi" / "generated"


def server_urls(doc: dict[str, Any]) -> list[str]:
    out = []
    for s in doc.get("servers") or []:
        url = str(s.get("url", ""))
        for name, var in (s.get("variables") or {}).items():
            url = url.replace("{" + name + "}", str(var.get("default", "")))
        out.append(normalise_url(url))
    return out


def spec_order(p: Path) -> tuple[int, tuple[int, ...], str]:
    m = re.match(r"ghes-(\d+)\.(\d+)$", p.stem)
    if p.stem == "api.github.com":
        return (0, (), p.stem)
    if p.stem == "ghec":
        return (1, (), p.stem)
    return (2, (int(m.group(1)), int(m.group(2))) if m else (), p.stem)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("generated", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--examples", type=int, default=0, help="print this many uncovered operations per spec")
    ap.add_argument("--derive", action="store_true", help="derive every GET of api.github.com.json (about 20 s)")
    args = ap.parse_args()
    cat = catalog("github")
    if cat is None:
        print("no shipped github catalog", file=sys.stderr)
        return 2
    specs = sorted((p for p in args.generated.glob("*.json") if not p.stem.endswith(".deref")), key=spec_order)
    if not specs:
        print(f"no specs under {args.generated}", file=sys.stderr)
        return 2
    print(f"catalog {cat.label}: {len(cat.entries)} entries")
    header = f"{'spec':<16} {'serves':>6} {'ops':>6} {'entry':>6} {'%':>6} {'END_USER':>9} {'AGENT':>6} {'no entry':>9}"
    print(header)
    print("-" * len(header))
    totals = [0, 0, 0, 0, 0]
    for path in specs:
        doc = orjson.loads(path.read_bytes())
        serves = any(cat.serves(u) for u in server_urls(doc))
        ops = hit = user = agent = 0
        missing: list[str] = []
        for p, item in (doc.get("paths") or {}).items():
            for m in METHODS:
                if not isinstance(item.get(m), dict):
                    continue
                ops += 1
                e = cat.lookup(m, p)
                if e is None:
                    missing.append(f"{m.upper()} {p} ({item[m].get('operationId', '')})")
                    continue
                hit += 1
                schemes = {t.scheme for alt in e.requirements for t in alt}
                user += USER in schemes
                agent += INSTALLATION in schemes
        pct = 100.0 * hit / ops if ops else 0.0
        row = f"{path.stem:<16} {'yes' if serves else 'NO':>6} {ops:>6} {hit:>6} {pct:>5.1f}%"
        print(f"{row} {user:>9} {agent:>6} {ops - hit:>9}")
        for i, v in enumerate((ops, hit, user, agent, ops - hit)):
            totals[i] += v
        for line in missing[: args.examples]:
            print(f"    no entry: {line}")
    ops, hit, user, agent, miss = totals
    print("-" * len(header))
    print(f"{'all':<16} {'':>6} {ops:>6} {hit:>6} {100.0 * hit / ops:>5.1f}% {user:>9} {agent:>6} {miss:>9}")
    if args.derive:
        sys.path.insert(0, str(ROOT / "scripts"))
        from _derive_all import derive_operations, level_counts, operation_ids

        from ramscope.derive.policy import policy_from_dict

        raw = (args.generated / "api.github.com.json").read_bytes()
        ids = operation_ids(orjson.loads(raw))
        for family in ("fine-grained", "classic"):
            accesses = derive_operations(raw, ids, policy=policy_from_dict({"catalogs": {"github": family}}))
            d = level_counts(accesses)
            print(f"\napi.github.com GET operations derived for END_USER, {family}: {d['derived']} of {len(ids)}")
            print(f"  picked a write or manage permission: {d['above_read']}")
            print(f"  ... although a read permission was listed: {d['above_read_with_a_read_listed']}")
            for line in d["examples"]:
                print(f"    {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
