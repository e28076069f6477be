"""Score the code reader against a hand-labelled set of calls (bench/code_recall/labels.json): recall and precision.

    python scripts/code_recall.py [--labels FILE] [--checkout OWNER/NAME=DIR]... [-v]

Each labelled repository is read from a checkout: ``--checkout`` names one, else the stored mirror
``/work/.mirror/OWNER+NAME/repo`` (a bare git directory; the labelled files are read with ``git show`` at the
labelled commit into a temporary directory). The code is never committed here: only the labels are.

The reader is run as ``ramscope --offline draft --code`` runs it with an empty cache (no spec can be fetched), and
the draft report's ``call_sites`` in the labelled files are compared with the labels per file, as multisets of
the operation as the code names it (a Discovery method id, ``METHOD /path``, an MCP tool, a GitHub operationId,
a Slack method).
Recall: labelled calls found / labelled calls. Precision: calls found that are labelled / calls found.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ramscope.config import Settings  # noqa: E402
from ramscope.evidence import draft  # noqa: E402


def _materialise(repo: str, commit: str, paths: list[str], given: dict[str, Path], work: Path) -> Path:
    if repo in given:
        return given[repo]
    mirror = Path("/work/.mirror") / repo.replace("/", "+") / "repo"
    out = work / repo.replace("/", "+")
    for p in paths:
        blob = subprocess.run(["git", "-C", str(mirror), "show", f"{commit}:{p}"], capture_output=True, check=True)
        target = out / p
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob.stdout)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", type=Path, default=ROOT / "bench" / "code_recall" / "labels.json")
    ap.add_argument("--checkout", action="append", default=[], help="OWNER/NAME=DIR: a checkout of a labelled repo")
    ap.add_argument("-v", "--verbose", action="store_true", help="list each miss and each call not labelled")
    ap.add_argument("--set", choices=("development", "held-out", "all"), default="all", help="score one set only")
    args = ap.parse_args(argv)
    doc = json.loads(args.labels.read_text("utf-8"))
    if args.set != "all":
        doc["files"] = [f for f in doc["files"] if f.get("set") == args.set]
        doc["calls"] = [c for c in doc["calls"] if c.get("set") == args.set]
    given = {k: Path(v) for k, _, v in (c.partition("=") for c in args.checkout)}
    expected: dict[tuple[str, str], Counter[str]] = {}
    for f in doc["files"]:
        expected.setdefault((f["repo"], f["path"]), Counter())
    for c in doc["calls"]:
        expected.setdefault((c["repo"], c["path"]), Counter())[c["operation"]] += 1
    found: dict[tuple[str, str], Counter[str]] = {k: Counter() for k in expected}
    unresolved = 0
    with tempfile.TemporaryDirectory(prefix="ramscope-recall-") as tmp:
        for repo, meta in doc["sources"].items():
            paths = [p for r, p in expected if r == repo]
            if not paths:
                continue
            root = _materialise(repo, meta["commit"], paths, given, Path(tmp))
            # As the benchmark runs it: ``--offline draft --code ROOT`` with an empty cache; its report's call sites
            # (the root absolute: each file is named by its path under it, as the labels name it).
            settings = Settings(offline=True, cache_dir=Path(tmp) / "empty-cache")
            report = draft([], code=[root.resolve()], settings=settings).report()
            for site in report["call_sites"]:
                if (repo, site["file"]) in found:
                    found[(repo, site["file"])][site["operation"]] += 1
            unresolved += sum(1 for u in report["unresolved"] if (repo, u["file"]) in found)
    tp = sum(sum((found[k] & expected[k]).values()) for k in expected)
    labelled = sum(sum(v.values()) for v in expected.values())
    predicted = sum(sum(v.values()) for v in found.values())
    if args.verbose:
        for k in sorted(expected):
            missed, extra = expected[k] - found[k], found[k] - expected[k]
            for op in missed.elements():
                print(f"missed  {k[0]} {k[1]}: {op}")
            for op in extra.elements():
                print(f"extra   {k[0]} {k[1]}: {op}")
    recall = tp / labelled if labelled else 1.0
    precision = tp / predicted if predicted else 1.0
    print(
        json.dumps(
            {
                "set": args.set,
                "files": len(expected),
                "labelled_calls": labelled,
                "found_calls": predicted,
                "true_positives": tp,
                "recall": round(recall, 4),
                "precision": round(precision, 4),
                "unresolved_sites": unresolved,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
