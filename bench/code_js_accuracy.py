"""Precision and recall of the JavaScript/TypeScript code reader on labelled real code (issue 31).

    python bench/code_js_accuracy.py --root googleworkspace/node-samples=DIR --root modelcontextprotocol/servers=DIR

``bench/code_js_truth.json`` lists, per repository (at the commit it names), the calls its code makes:
file, line, and the operation as the code names it (a Discovery method id, ``METHOD URL`` where the code
names no operation). Only the labels are kept here, no code: check each repository out at its commit
(``git archive COMMIT | tar x -C DIR``; for the MCP servers DIR is the tree's ``src``) and name it with
``--root``.

A call the reader yields matches a label at the same file and line with the same operation (or, for a
label without one, the same method and URL). Precision = matched calls / calls the reader yielded in the
labelled files; recall = matched labels / labels. Unresolved calls are counted apart (they are findings,
not calls).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

TRUTH = Path(__file__).resolve().parent / "code_js_truth.json"
SUFFIXES = {
    ".js": "js",
    ".mjs": "js",
    ".cjs": "js",
    ".jsx": "jsx",
    ".ts": "ts",
    ".mts": "ts",
    ".cts": "ts",
    ".tsx": "tsx",
}


def _key(label: dict[str, object]) -> tuple[object, ...]:
    if label.get("operation"):
        return (label["path"], label["line"], "op", label["operation"])
    return (label["path"], label["line"], "http", label["method"], label["url"])


def measure(root: Path, labels: list[dict[str, object]]) -> dict[str, object]:
    from ramscope.evidence.code_js import read_js
    from ramscope.evidence.model import ObservedCall

    want = Counter(_key(x) for x in labels)
    got: Counter[tuple[object, ...]] = Counter()
    unresolved = 0
    for path in sorted({str(x["path"]) for x in labels}):
        f = root / path
        for c in read_js(f.read_bytes(), path, dialect=SUFFIXES[f.suffix]):
            if not isinstance(c, ObservedCall):
                unresolved += 1
                continue
            # a call matches the label's kind: by operation where the label names one
            k_op = (path, c.entry, "op", c.operation or c.tool)
            got[k_op if k_op in want else (path, c.entry, "http", c.method, c.url)] += 1
    matched = sum((want & got).values())
    return {
        "labels": sum(want.values()),
        "calls": sum(got.values()),
        "matched": matched,
        "precision": round(matched / max(sum(got.values()), 1), 4),
        "recall": round(matched / max(sum(want.values()), 1), 4),
        "unresolved": unresolved,
        "missed": sorted(str(k) for k in (want - got)),
        "extra": sorted(str(k) for k in (got - want)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--root", action="append", default=[], help="REPO=DIR, the repository checked out at its commit")
    args = ap.parse_args()
    roots = dict(r.split("=", 1) for r in args.root)
    doc = json.loads(TRUTH.read_text("utf-8"))
    total = Counter[str]()
    for s in doc["sets"]:
        if s["repo"] not in roots:
            print(f"{s['repo']}: no --root given, skipped", file=sys.stderr)
            continue
        r = measure(Path(roots[s["repo"]]), s["calls"])
        print(json.dumps({"repo": s["repo"], **r}))
        for k in ("labels", "calls", "matched"):
            total[k] += int(r[k])  # type: ignore[call-overload]
    if total["labels"]:
        p, rc = total["matched"] / max(total["calls"], 1), total["matched"] / total["labels"]
        print(json.dumps({"all": dict(total), "precision": round(p, 4), "recall": round(rc, 4)}))


if __name__ == "__main__":
    main()
