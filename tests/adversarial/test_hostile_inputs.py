"""Hostile cards and specs, class by class (``hostile.py``), for every document kind: each run ends with
its exact exit code and code (``hostile.OUTCOMES``: the error's code with a one-line
``ramscope: error: <file>: ...``, or a report whose unresolved accesses and diagnostics name what went
wrong), never a traceback or a hang, within generous time and memory ceilings. Through the CLI in child processes
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
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ramscope.config import Settings
from ramscope.derive import Engine
from ramscope.errors import RamscopeError
from ramscope.schema import load_schema
from tests.support.httpserver import LocalHTTPServer

from .hostile import Case, Outcome, all_cases, outcome_table
from .measure import TRACEBACK, Run, run_case, serve

LIGHT = all_cases(heavy=False)
CLASSES = sorted({c.klass for c in LIGHT})
#: Ceilings for the default run (measured: under 2 s and 90 MiB each); generous, not benchmarks.
LIGHT_SECONDS, LIGHT_MIB = 30.0, 400.0
#: Ceilings for the full sizes (measured worst: see tests/adversarial/README.md).
HEAVY_SECONDS, HEAVY_MIB = 120.0, 2048.0

_VALIDATOR = jsonschema.Draft202012Validator(load_schema("report"))
#: Diagnostics every case's report has, the spec being on a plain-http loopback server.
_LOOPBACK = frozenset({"insecure-spec-url", "insecure-fetch"})
README = Path(__file__).with_name("README.md")
_TABLE_BEGIN, _TABLE_END = "<!-- hostile-outcomes:begin -->\n", "<!-- hostile-outcomes:end -->"


def report_outcome(exit_code: int, report: dict[str, Any]) -> Outcome:
    """The outcome a report shows, in the terms of ``hostile.Outcome``."""
    reasons = sorted({a["reason"] for a in report["accesses"] if a["reason"]})
    diags = tuple(sorted({d["code"] for d in report["diagnostics"]} - _LOOPBACK))
    errors = sorted({d["code"] for d in report["diagnostics"] if d["severity"] == "error"})
    code = "+".join(reasons) or ("+".join(errors) if exit_code == 1 else "") or None
    return Outcome(exit_code, code, diags)


def _check_run(case: Case, run: Run, out: Path, *, seconds: float, mib: float) -> None:
    where = f"{case.klass}/{case.name}: exit {run.returncode}, stderr {run.err[-500:]!r}"
    assert not run.timed_out, where
    assert TRACEBACK not in run.err, where
    assert case.outcome is not None
    assert run.returncode == case.exit, where
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
        if not case.outcome.bug:
            assert report_outcome(run.returncode, report) == case.outcome, where
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
        if run.returncode == 2:
            # The error's code, as the library raises it (the one line on stderr says it in words).
            assert _load_error_code(case) == case.code, case.name
    # Operation ids are data: nothing ever ran them as a shell command or opened them as a path.
    assert not Path("/tmp/ramscope-pwned").exists()


def _load_error_code(case: Case) -> str | None:
    from ramscope.card import load_card

    with LocalHTTPServer() as srv:
        try:
            load_card(case.card(srv.url("")), name=f"card{case.card_suffix}")
        except RamscopeError as exc:
            return exc.code
    return None


BUGS = [c for c in LIGHT if c.outcome is not None and c.outcome.bug]


def test_no_case_is_a_known_bug() -> None:
    """The ten unreadable specs labelled ``unsupported-spec`` were the last known bug. A case found to be
    wrong gets ``bug=`` in its outcome and runs as a strict xfail (below) until it is fixed."""
    assert [f"{c.klass}-{c.name}" for c in BUGS] == []


if BUGS:  # an empty parameter set would be a skip, and under CI every skip fails

    @pytest.mark.parametrize(
        "case",
        [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=c.outcome.bug or "")) for c in BUGS if c.outcome],
        ids=[f"{c.klass}-{c.name}" for c in BUGS],
    )
    def test_cli_outcome_where_a_bug_is_known(case: Case, tmp_path: Path) -> None:
        """The right outcome of a case whose outcome today is a known bug (strict xfail: passes once fixed)."""
        with LocalHTTPServer() as srv:
            run = run_case(case, srv, tmp_path, timeout=LIGHT_SECONDS * 2)
        out = tmp_path / f"{case.klass}-{case.name}.out"
        assert case.outcome is not None
        assert run.returncode == case.exit
        outcome = report_outcome(run.returncode, json.loads(out.read_bytes()))
        assert replace(outcome, bug=case.outcome.bug) == case.outcome


def test_readme_shows_every_case_outcome() -> None:
    """tests/adversarial/README.md's outcome table is outcome_table() of today's cases, so it cannot drift."""
    text = README.read_text("utf-8")
    assert (text.count(_TABLE_BEGIN), text.count(_TABLE_END)) == (1, 1)
    shown = text.split(_TABLE_BEGIN, 1)[1].split(_TABLE_END, 1)[0]
    assert shown == outcome_table(LIGHT), "regenerate: python -m tests.adversarial.hostile"
    assert len(LIGHT) == 87


def test_every_case_has_one_exact_outcome() -> None:
    """Each case names one exit code and, but for a fully derived report, one code; known bugs name the bug."""
    for c in LIGHT:
        assert c.outcome is not None
        assert c.exit in (0, 1, 2, 3)
        assert (c.code is None) == (c.exit == 0), c.name
        assert c.outcome.bug is None or c.outcome.bug.startswith("bug: ")


@pytest.mark.parametrize("klass", CLASSES)
def test_library_handles_hostile_inputs(klass: str, tmp_path: Path) -> None:
    """Every case of the class through load_card + Engine.derive: the CLI's outcome, as a report or the error."""
    for i, case in enumerate(c for c in LIGHT if c.klass == klass):
        assert case.outcome is not None
        with LocalHTTPServer() as srv:
            serve(srv, case)
            data = case.card(srv.url(""))
            settings = Settings(cache_dir=tmp_path / f"c{i}", allow_private_network=True, timeout=20)
            error: str | None = None
            try:
                with Engine(settings) as engine:
                    from ramscope.card import load_card

                    report = engine.derive(load_card(data, name=f"card{case.card_suffix}"))
            except RamscopeError as exc:
                error = exc.code
            if error is not None:
                assert (case.exit, case.code) == (2, error), case.name
                continue
            doc = report.to_dict()
            _VALIDATOR.validate(json.loads(json.dumps(doc)))
            assert case.exit != 2, case.name
            if not case.outcome.bug:
                assert report_outcome(report.exit_code, doc) == case.outcome, case.name
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
