"""The least-privilege evaluation (scripts/least_eval): a well-formed data set of real operations, each
with its source and expected answer, and a table that reports agreement per provider."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "least_eval" / "check.py"
DATA = ROOT / "scripts" / "least_eval" / "operations.jsonl"
HEADER = f"{'provider':<16} {'rows':>5} {'agree':>6} {'wrong':>6} {'silent':>7} {'(no data)':>10} {'wrong+silent':>13}"
#: Rows per provider in operations.jsonl (update with the data set).
ROWS = {"google": 143, "microsoft-graph": 458, "github": 246}  # issue 35 added gg-134..143, ms-454..458
ROW_LINE = re.compile(r"^(google|microsoft-graph|github) +\d+ +\d+ +\d+ +\d+ +\d+ +\d+\.\d%$")


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("least_eval_check", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


check = _load_script()


def _walk(resources: dict[str, Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for res in resources.values():
        for m in res.get("methods", {}).values():
            out[m["id"]] = m.get("scopes", [])
        out.update(_walk(res.get("resources", {})))
    return out


def test_every_row_parses_with_source_and_answer() -> None:
    """Every row parses: a provider, an operation, a source (repo, path, commit, license) and an answer."""
    rows = check.load(DATA)
    assert Counter(r.provider for r in rows) == ROWS
    for r in rows:
        assert r.source.count("@") == 1, r.id
        assert r.source.endswith(")"), r.id
        assert r.judgement, r.id
        assert r.judged_at, r.id
        # An empty expected answer is a claim too ("no permission needed" or "undetermined").
        assert (
            r.expected
            or r.acceptable
            or "undetermined" in r.judgement
            or "no permission" in r.judgement
            or "without authentication" in r.judgement
            or "no fine-grained" in r.judgement
            or "lists no permission" in r.judgement
            or "depends on the script" in r.judgement
        ), r.id


def test_google_answers_are_scopes_the_method_lists(discovery_documents: Path) -> None:
    """Each Google row's expected and acceptable scopes are among the scopes its Discovery method lists."""
    methods: dict[str, dict[str, list[str]]] = {}
    for r in check.load(DATA):
        if r.provider != "google":
            continue
        doc = r.api.split(" ", 1)[0]
        if doc not in methods:
            methods[doc] = _walk(json.loads((discovery_documents / f"{doc}.json").read_text())["resources"])
        listed = {check.short(s) for s in methods[doc][r.operation]}
        for answer in r.answers:
            assert answer <= listed, (r.id, r.operation, sorted(answer - listed))


def test_github_operations_are_in_the_rest_description(npm_corpora: Path) -> None:
    """Each GitHub row names a method and path template of GitHub's REST description."""
    spec = json.loads((npm_corpora / "@octokit" / "openapi" / "generated" / "api.github.com.json").read_bytes())
    for r in check.load(DATA):
        if r.provider == "github":
            method, path = r.operation.split(" ", 1)
            assert method.lower() in spec["paths"][path], r.id


def test_malformed_row_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A row without a source is a data error (exit 2, one line), not a measurement."""
    raw = json.loads(DATA.read_text().splitlines()[0])
    del raw["source_commit"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(raw) + "\n")
    assert check.main(["--data", str(bad)]) == 2
    assert capsys.readouterr().err == "check.py: bad.jsonl:1: missing source_commit\n"


def test_small_run_prints_the_table(npm_corpora: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two rows per provider: a header, one line per provider, and a block per disagreement."""
    assert check.main(["--limit", "2", "--corpora", str(npm_corpora)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == HEADER
    assert lines[1] == "-" * len(HEADER)
    assert [ln.split()[0] for ln in lines[2:5]] == ["google", "microsoft-graph", "github"]
    for ln in lines[2:5]:
        assert ROW_LINE.match(ln), ln
        assert int(ln.split()[1]) == 2
    for ln in lines[5:]:
        assert ln == "" or ln.startswith(
            ("== ", "   ", "- [", "    ramscope: ", "    expected: ", "    who is right: ")
        ), ln


def test_json_output_counts_add_up(npm_corpora: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--json: per provider, agree + wrong + silent = rows, and every disagreement carries who is right."""
    assert check.main(["--limit", "3", "--json", "--provider", "google", "--corpora", str(npm_corpora)]) == 0
    out = json.loads(capsys.readouterr().out)
    (g,) = out["providers"]
    assert g["provider"] == "google"
    assert g["rows"] == 3
    assert g["agree"] + g["wrong"] + g["silent"] == 3
    assert len(g["disagreements"]) == g["wrong"] + g["silent"]
    for d in g["disagreements"]:
        assert d["who_is_right"], d
        assert d["source"], d
        assert d["expected"] is not None, d


def test_compare_lists_rows_whose_verdict_moved(
    npm_corpora: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--compare PREV: a row that agreed before and no longer does is listed as broken, with its class."""
    args = ["--limit", "2", "--provider", "google", "--corpora", str(npm_corpora)]
    assert check.main([*args, "--json"]) == 0
    now = json.loads(capsys.readouterr().out)
    verdicts = now["providers"][0]["verdicts"]
    assert set(verdicts) == {"gg-001", "gg-002"}
    flipped = {i: ("wrong" if v == "agree" else "agree") for i, v in verdicts.items()}
    prev = tmp_path / "prev.json"
    prev.write_text(json.dumps({"providers": [{"verdicts": flipped}]}))
    assert check.main([*args, "--json", "--compare", str(prev)]) == 0
    delta = json.loads(capsys.readouterr().out)["changes"]
    assert len(delta["fixed"]) + len(delta["broken"]) == 2
    assert check.main([*args, "--compare", str(prev)]) == 0
    text = capsys.readouterr().out
    assert f"== since the previous run: {len(delta['fixed'])} fixed, {len(delta['broken'])} broken" in text


def test_max_wrong_turns_the_measurement_into_a_gate(npm_corpora: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--max-wrong 100 never fails; without it the exit status is 0 whatever the numbers."""
    assert (
        check.main(["--limit", "1", "--provider", "github", "--max-wrong", "100", "--corpora", str(npm_corpora)]) == 0
    )
    capsys.readouterr()


def test_judging_classifies_disagreements() -> None:
    """A pick outside the answers is wrong, with a class; no pick is silent with the reason."""
    row = check.parse_row(
        {
            "id": "x",
            "provider": "google",
            "api": "drive.v3",
            "operation": "drive.files.list",
            "identity": "END_USER",
            "server_requests": [],
            "expected": ["drive.readonly"],
            "acceptable": [["drive.metadata.readonly"]],
            "judgement": "j",
            "judged_at": "d",
            "source_repo": "o/r",
            "source_path": "p",
            "source_commit": "0" * 40,
            "source_license": "MIT",
        },
        "t",
    )

    class Access:
        def __init__(self, scopes: list[str] | None, reason: str | None = None) -> None:
            self.complete = scopes is not None
            self.scopes = scopes
            self.reason = reason
            self.reason_message = None

    ok = check.judge(row, Access(["https://www.googleapis.com/auth/drive.metadata.readonly"]))
    assert (ok.verdict, ok.klass) == ("agree", "")
    slice_ = check.judge(row, Access(["https://www.googleapis.com/auth/drive.photos.readonly"]))
    assert (slice_.verdict, slice_.klass) == ("wrong", "data-slice scope picked")
    silent = check.judge(row, Access(None, "operation-not-found"))
    assert (silent.verdict, silent.klass) == ("silent", "operation-not-found")


def test_github_pick_naming_both_token_families_is_judged_per_family() -> None:
    """contents:write + repo agrees with an expected contents:write; contents:write + workflows:write does not."""
    row = check.parse_row(
        {
            "id": "y",
            "provider": "github",
            "api": "api.github.com",
            "operation": "PUT /repos/{owner}/{repo}/contents/{path}",
            "identity": "END_USER",
            "server_requests": ["repo"],
            "expected": ["contents:write"],
            "acceptable": [["repo"]],
            "judgement": "j",
            "judged_at": "d",
            "source_repo": "o/r",
            "source_path": "p",
            "source_commit": "0" * 40,
            "source_license": "MIT",
        },
        "t",
    )

    class Access:
        complete = True
        reason = None
        reason_message = None

        def __init__(self, scopes: list[str]) -> None:
            self.scopes = scopes

    assert check.judge(row, Access(["contents:write", "repo"])).verdict == "agree"
    assert check.judge(row, Access(["contents:write", "metadata:read"])).verdict == "agree"
    both = check.judge(row, Access(["contents:write", "workflows:write"]))
    assert (both.verdict, both.klass) == ("wrong", "extra permission ANDed (workflows:write)")


@pytest.mark.slow
def test_full_run(npm_corpora: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The whole data set derives in one Engine per provider; every row gets a verdict."""
    assert check.main(["--json", "--corpora", str(npm_corpora)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {p["provider"]: p["rows"] for p in out["providers"]} == ROWS
    for p in out["providers"]:
        assert p["agree"] + p["wrong"] + p["silent"] == p["rows"]
