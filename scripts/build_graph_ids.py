#!/usr/bin/env python3
"""Rebuild src/ramscope/providers/data/microsoft-graph.ids.json.gz from Microsoft's provisioningInfo.json.

    python scripts/build_graph_ids.py PATH/TO/provisioningInfo.json --commit SHA --date YYYY-MM-DD

The input is microsoftgraph/microsoft-graph-devx-content ``permissions/new/provisioningInfo.json``
(MIT) at the named commit; the sha256 of the input is recorded in the snapshot. The build is
deterministic (sorted keys, gzip mtime 0): the same input gives the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ramscope.providers.graph_ids import DATA_FILE, compile_ids  # noqa: E402

OUT = ROOT / "src" / "ramscope" / "providers" / "data" / DATA_FILE


def build(raw: bytes, commit: str, date: str) -> bytes:
    source = {
        "repository": "microsoftgraph/microsoft-graph-devx-content",
        "path": "permissions/new/provisioningInfo.json",
        "commit": commit,
        "date": date,
        "sha256": hashlib.sha256(raw).hexdigest(),
        "license": "MIT",
    }
    doc = compile_ids(orjson.loads(raw), source)
    return gzip.compress(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS), compresslevel=9, mtime=0)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("input", type=Path)
    p.add_argument("--commit", required=True)
    p.add_argument("--date", required=True)
    args = p.parse_args()
    data = build(args.input.read_bytes(), args.commit, args.date)
    OUT.write_bytes(data)
    print(f"wrote {OUT.relative_to(ROOT)} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
