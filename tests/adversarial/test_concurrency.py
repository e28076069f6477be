"""Eight ramscope processes deriving 100 cards each against one cache directory, all at once: no errors,
reports identical to one sequential run over a cache of its own (but for how each spec was obtained),
and no cache entry lost (an offline run afterwards finds every spec)."""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.httpserver import LocalHTTPServer

from .hostile import SPEC_KINDS, Case, Served, base_spec, card_doc, dumps, encode, manifest
from .measure import TRACEBACK, child_env, run_ramscope, serve

PROCESSES = 8
CARDS_EACH = 100
#: Fields that legitimately differ between a run that fetched a spec and one that found it cached.
VOLATILE_SPEC_FIELDS = ("origin", "fetched_at", "provenance")


def _cards(base: str, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` small cards, each using a different mix of the five local specs (one per kind)."""
    kinds = list(SPEC_KINDS.values())
    out = []
    for i in range(n):
        m: dict[str, Any] = {"resources": [], "operations": [], "resource_accesses": []}
        for j, info in enumerate(kinds):
            if (i + seed + j) % 3 == 0:
                continue
            one = manifest(
                base + info.path,
                protocol=info.protocol,
                resource_path=info.resource_path,
                operation_id=info.operation_id,
                http_method=info.http_method,
            )
            r, o, a = one["resources"][0], one["operations"][0], one["resource_accesses"][0]
            m["resources"].append(dict(r, id=f"r{j}", display_name=f"Item Service {info.kind}"))
            m["operations"].append(dict(o, id=f"o{j}", resource=f"r{j}"))
            m["resource_accesses"].append(
                dict(
                    a,
                    id=f"a{seed}-{i}-{j}",
                    operation=f"o{j}",
                    necessity=("REQUIRED", "RECOMMENDED", "OPTIONAL")[(i + j) % 3],
                    identity_used="END_USER" if info.kind != "mcp" else "AGENT",
                )
            )
        out.append(card_doc(m, name=f"agent {seed}-{i}"))
    return out


def _normalise(report: dict[str, Any]) -> dict[str, Any]:
    for s in report["specs"]:
        for f in VOLATILE_SPEC_FIELDS:
            s.pop(f, None)
    # A fetched MCP capture also warns about each plain-http sub-exchange (its OAuth metadata URLs);
    # the cached capture keeps only the one warning for its own URL. Which one a process gets depends
    # on whether it fetched or found the capture, not on concurrency.
    urls = {s["url"] for s in report["specs"]}
    report["diagnostics"] = [
        d for d in report["diagnostics"] if d["code"] != "insecure-fetch" or d.get("data", {}).get("url") in urls
    ]
    return report


def test_eight_processes_share_one_cache(tmp_path: Path) -> None:
    served = [
        Served(info.path, mcp_tools_result=encode(kind, base_spec(kind)))
        if kind == "mcp"
        else Served(info.path, body=encode(kind, base_spec(kind)), content_type=info.content_type)
        for kind, info in SPEC_KINDS.items()
    ]
    with LocalHTTPServer() as srv:
        serve(srv, Case("all", "concurrency", "all", lambda _b: b"", served))
        dirs = []
        for p in range(PROCESSES):
            d = tmp_path / f"cards{p}"
            d.mkdir()
            for i, card in enumerate(_cards(srv.url(""), CARDS_EACH, p)):
                (d / f"card{i:03}.json").write_bytes(dumps(card))
            dirs.append(d)
        common = ["--allow-private-network", "--no-progress", "--timeout", "30"]
        # The reference: one process, all 800 cards, a cache of its own.
        seq = run_ramscope([*common, "--cache-dir", str(tmp_path / "seq"), "derive", *map(str, dirs)], timeout=300)
        assert seq.returncode == 0, seq.err
        expected = {r["card"]["source"]: _normalise(r) for r in map(json.loads, seq.out.splitlines())}
        assert len(expected) == PROCESSES * CARDS_EACH
        # Eight processes at once on one cache directory.
        shared = tmp_path / "shared"
        argv = [sys.executable, "-m", "ramscope.cli", *common, "--cache-dir", str(shared), "derive"]
        procs = [
            subprocess.Popen([*argv, str(d)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env())
            for d in dirs
        ]
        results = [p.communicate(timeout=300) for p in procs]
        for p, (_, err) in zip(procs, results, strict=True):
            assert p.returncode == 0, err.decode()
            assert TRACEBACK.encode() not in err
            assert err == b"", err.decode()
        got: dict[str, Any] = {}
        for out, _ in results:
            for line in out.decode().splitlines():
                r = json.loads(line)
                got[r["card"]["source"]] = _normalise(r)
        assert got.keys() == expected.keys()
        diffs = [k for k in expected if got[k] != expected[k]]
        if diffs:
            a = json.dumps(expected[diffs[0]], indent=1, sort_keys=True).splitlines()
            b = json.dumps(got[diffs[0]], indent=1, sort_keys=True).splitlines()
            detail = "\n".join(list(difflib.unified_diff(a, b, lineterm=""))[:60])
            raise AssertionError(f"{len(diffs)} of {len(expected)} reports differ; first {diffs[0]}:\n{detail}")
        # No lost entry: offline, every spec of every card comes from the shared cache.
        offline = run_ramscope(
            [*common, "--offline", "--cache-dir", str(shared), "fetch", *map(str, dirs)], timeout=120
        )
        assert offline.returncode == 0, offline.out + offline.err
        assert "cache-entry-corrupt" not in offline.out + offline.err
