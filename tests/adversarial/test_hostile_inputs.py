"""Hostile cards and specs, class by class (``hostile.py``), for every document kind: each run ends with
exit 0-3 and either a one-line ``ramscope: error: <file>: ...`` or a report that names what went wrong,
never a traceback or a hang, within generous time and memory ceilings. Through the CLI in child processes
(the "no traceback" property, and the process's own peak RSS) and through the library in process (only
RamscopeError subclasses or diagnostics).

The default run uses scaled-down instances of every shape (2,000 levels instead of 100,000, 256 KiB strings
instead of 10 MB, 300-hop ``$ref`` chains instead of 10,000 ...); ``-m slow`` runs the full sizes of the
issue and, with RAMSCOPE_BOUNDS_OUT=FILE, writes the measured time and peak RSS of every case as JSON
(the table in tests/adversarial/README.md and SECURITY.md comes from it)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ramscope.config import Settings
from ramscope.derive import Engine
from ramscope.errors import RamscopeError
from ramscope.schema import load_schema
from tests.support.httpserver import LocalHTTPServer

from .hostile import Case, all_cases
from .measure import TRACEBACK, Run, run_case, serve

LIGHT = all_cases(heavy=False)
CLASSES = sorted({c.klass for c in LIGHT})
#: Ceilings for the default run (measured: under 2 s and 90 MiB each); generous, not benchmarks.
LIGHT_SECONDS, LIGHT_MIB = 30.0, 400.0
#: Ceilings for the full sizes (measured worst: see tests/adversarial/README.md).
HEAVY_SECONDS, HEAVY_MIB = 120.0, 2048.0

_VALIDATOR = jsonschema.Draft202012Validator(load_schema("report"))


def _check_run(case: Case, run: Run, out: Path, *, seconds: float, mib: float) -> None:
    where = f"{case.klass}/{case.name}: exit {run.returncode}, stderr {run.err[-500:]!r}"
    assert not run.timed_out, where
    assert TRACEBACK not in run.err, where
    assert run.returncode in case.exits, where
    assert run.cpu_seconds < seconds, where  # CPU, not wall time: the same on a loaded machine
    assert run.maxrss_mib < mib, where
    if run.returncode == 2:
        # An input that cannot be read: one line naming the file, no report.
        assert run.err.startswith("ramscope: error: "), where
        assert run.err.count("\n") == 1, where
        assert not out.exists()
    else:
        report = json.loads(out.read_bytes())
        _VALIDATOR.validate(report)
        for a in report["accesses"]:
            # Fail closed: unknown permissions are null, never "nothing needed".
            if not a["complete"]:
                assert a["scopes"] is None, where
                assert a["reason"], where
        if run.returncode == 3:
            assert not report["complete"]
    if case.expect:
        assert case.expect in run.err + run.out or case.expect in (out.read_text("utf-8") if out.exists() else ""), (
            where
        )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hostile")


def _run_all(cases: list[Case], workdir: Path, *, timeout: float, workers: int = 3) -> Iterator[tuple[Case, Run, Path]]:
    def one(case: Case) -> tuple[Case, Run, Path]:
        with LocalHTTPServer() as srv:
            d = workdir / f"{case.klass}-{case.name}"
            d.mkdir()
            return case, run_case(case, srv, d, timeout=timeout), d / f"{case.klass}-{case.name}.out"

    with ThreadPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(one, cases)


@pytest.mark.parametrize("klass", CLASSES)
def test_cli_handles_hostile_inputs(klass: str, workdir: Path) -> None:
    """Every case of the class through `ramscope derive` in a child process."""
    cases = [c for c in LIGHT if c.klass == klass]
    for case, run, out in _run_all(cases, workdir, timeout=LIGHT_SECONDS * 2):
        _check_run(case, run, out, seconds=LIGHT_SECONDS, mib=LIGHT_MIB)
    # Operation ids are data: nothing ever ran them as a shell command or opened them as a path.
    assert not Path("/tmp/ramscope-pwned").exists()


@pytest.mark.parametrize("klass", CLASSES)
def test_library_handles_hostile_inputs(klass: str, tmp_path: Path) -> None:
    """Every case of the class through load_card + Engine.derive: a report or a RamscopeError, nothing else."""
    for i, case in enumerate(c for c in LIGHT if c.klass == klass):
        with LocalHTTPServer() as srv:
            serve(srv, case)
            data = case.card(srv.url(""))
            settings = Settings(cache_dir=tmp_path / f"c{i}", allow_private_network=True, timeout=20)
            try:
                with Engine(settings) as engine:
                    from ramscope.card import load_card

                    report = engine.derive(load_card(data, name=f"card{case.card_suffix}"))
            except RamscopeError:
                continue
            doc = report.to_dict()
            _VALIDATOR.validate(json.loads(json.dumps(doc)))
            for a in doc["accesses"]:
                if not a["complete"]:
                    assert a["scopes"] is None
                    assert a["requirements"] is None


@pytest.mark.slow
def test_cli_handles_hostile_inputs_at_full_size(tmp_path: Path) -> None:
    """The issue's sizes: 100,000 levels, 1,000,000-element arrays, 10 MB strings, 10,000-hop chains."""
    rows: list[dict[str, Any]] = []
    for case, run, out in _run_all(all_cases(heavy=True), tmp_path, timeout=HEAVY_SECONDS * 2, workers=1):
        rows.append(
            {
                "class": case.klass,
                "kind": case.kind,
                "case": case.name,
                "exit": run.returncode,
                "seconds": round(run.seconds, 2),
                "peak_rss_mib": round(run.maxrss_mib, 1),
                "output_bytes": out.stat().st_size if out.exists() else 0,
                "error": run.err.strip().splitlines()[-1][:200] if run.err.strip() else None,
            }
        )
        _check_run(case, run, out, seconds=HEAVY_SECONDS, mib=HEAVY_MIB)
    target = os.environ.get("RAMSCOPE_BOUNDS_OUT")
    if target:
        Path(target).write_text(json.dumps(rows, indent=1) + "\n", "utf-8")
