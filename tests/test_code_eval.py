"""The code-reader yardstick (scripts/code_eval.py): its labels are well formed and sourced, and its scoring can
fail: a wrong operation, a wrong line, a call reported twice, a non-call reported, an unresolvable call guessed."""

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
SCRIPT = ROOT / "scripts" / "code_eval.py"
LABELS = ROOT / "tests" / "fixtures" / "code-eval"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ramscope_code_eval", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


ce = _load_script()


def test_labels_cover_enough_real_calls() -> None:
    repos = ce.load_labels(LABELS)
    calls = [c for r in repos for f in r.files for c in f.calls]
    assert len(repos) >= 10
    assert len(calls) >= 150
    langs = Counter(ce.language(c.path) for c in calls)
    assert langs["python"] >= 50, langs
    assert langs["ts/js"] >= 50, langs
    for r in repos:
        assert re.fullmatch(r"[0-9a-f]{40}", r.commit), r.name
        assert r.license
        for f in r.files:
            assert not f.path.startswith("/")
            assert ".." not in Path(f.path).parts
            for c in f.calls:
                assert c.line > 0, (r.name, f.path, c)
                assert all(o.strip() for o in c.ops), (r.name, f.path, c)
            for m in f.marks:
                assert m.line > 0, (r.name, f.path, m)
                assert m.why, (r.name, f.path, m)
    # A label is one call: the same line labelled twice with one operation is a typo.
    seen = Counter((c.repo, c.path, c.line, c.ops[0]) for c in calls)
    assert [k for k, n in seen.items() if n > 1] == []


def test_every_labelled_repository_is_in_sources() -> None:
    text = (LABELS / "SOURCES.md").read_text("utf-8")
    for r in ce.load_labels(LABELS):
        assert r.name in text, r.name
        assert r.commit in text, r.name


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("gmail.users.messages.list", "gmail.users.messages.list", True),
        ("gmail.users.messages.list", "gmail.users.messages.send", False),
        ("issues/create", "issues/create", True),
        ("chat.postMessage", "chat.postmessage", False),
        ("GET /me/mailFolders/{mailFolder-id}/messages", "GET /me/mailFolders/inbox/messages", True),
        ("GET /me/mailFolders/{mailFolder-id}/messages", "POST /me/mailFolders/inbox/messages", False),
        ("GET /me", "GET https://graph.microsoft.com/v1.0/me", True),
        ("GET /me", "GET https://graph.microsoft.com/v1.0/users/me", False),
        ("POST /v1/pages", "POST https://api.notion.com/v1/pages", True),
        ("POST https://api.surgemsg.com/messages", "POST https://api.example.com/messages", False),
        ("GET https://sentry.io/api/0/issues/{issue_id}/", "GET https://sentry.io/api/0/issues/{id}", True),
        ("GET /users", "GET /users?$top=5", True),
        ("whoami", "GET /whoami", False),
    ],
)
def test_same_operation(a: str, b: str, same: bool) -> None:
    assert ce.same_operation(a, b) is same
    assert ce.same_operation(b, a) is same


def _file(**kw: Any) -> Any:
    doc = {
        "path": "src/agent.py",
        "family": "google-python",
        "calls": [[10, "gmail.users.messages.list"], [20, "gmail.users.messages.send"], [40, "drive.files.get"]],
        "not_calls": [[30, "requests.append(", "a list"]],
        "unresolved": [[50, "requests.get(url)"]],
        "ignore": [[60, "a readiness probe"]],
    }
    doc.update(kw)
    return ce._file("o/r", True, doc)


def _site(line: int, op: str, **kw: Any) -> dict[str, Any]:
    return {"file": "src/agent.py", "line": line, "operation": op, "via": "googleapiclient", **kw}


def test_score_file_counts_hits_misses_and_false_positives() -> None:
    res = ce.Result()
    sites = [
        _site(12, "gmail.users.messages.list"),  # a chain labelled on its first line, reported two lines on: a hit
        _site(12, "gmail.users.messages.list"),  # the same call twice: a false positive
        _site(20, "gmail.users.messages.get"),  # the wrong operation: a miss and a false positive
        _site(30, "POST https://example.com/x", method="POST", url="https://example.com/x"),  # a labelled non-call
        _site(61, "GET http://localhost/sse"),  # an ignored line
        _site(90, "drive.files.get"),  # the right operation far from its label: a miss and a false positive
    ]
    unresolved = [{"file": "src/agent.py", "line": 50, "reason": "a URL from a variable"}]
    ce.score_file(_file(), sites, unresolved, 8, res)
    t = res.tallies["overall"]
    assert (t.tp, t.fn, t.fp) == (1, 2, 4)
    assert {m["expected"] for m in res.misses} == {"gmail.users.messages.send", "drive.files.get"}
    labelled = [f["labelled"] for f in res.false_positives if f["labelled"]]
    assert any(x.startswith("not_call at 30") for x in labelled)
    assert res.unresolved_expected == [
        {"repo": "o/r", "site": "src/agent.py:50", "why": "requests.get(url)", "flagged": True}
    ]
    assert res.tallies["lang:python"].tp == 1
    assert res.tallies["set:held-out"].fn == 2


def test_a_guessed_unresolvable_call_is_a_false_positive_unless_accepted() -> None:
    guess = [_site(50, "GET https://example.com/default", method="GET", url="https://example.com/default")]
    res = ce.Result()
    ce.score_file(_file(calls=[]), guess, [], 8, res)
    assert res.tallies["overall"].fp == 1
    assert res.unresolved_expected[0]["flagged"] is False
    accepted = _file(
        calls=[], unresolved=[{"line": 50, "why": "a default", "accept": ["GET https://example.com/default"]}]
    )
    res = ce.Result()
    ce.score_file(accepted, guess, [], 8, res)
    assert res.tallies["overall"].fp == 0


def test_a_toolset_label_spans_its_constructor() -> None:
    fl = ce._file(
        "o/r",
        True,
        {
            "path": "agent.py",
            "family": "adk-toolset",
            "calls": [
                {"line": 48, "op": "read_file", "span": [33, 56]},
                {"line": 49, "op": "list_directory", "span": [33, 56]},
            ],
        },
    )
    res = ce.Result()
    sites = [{"file": "agent.py", "line": 33, "operation": "read_file", "tool": "read_file"}]
    ce.score_file(fl, sites, [], 8, res)
    assert (res.tallies["overall"].tp, res.tallies["overall"].fn, res.tallies["overall"].fp) == (1, 1, 0)
    res = ce.Result()
    ce.score_file(fl, [{"file": "agent.py", "line": 70, "operation": "read_file"}], [], 8, res)
    assert res.tallies["overall"].tp == 0


def test_the_whole_run_through_a_stand_in_ramscope(tmp_path: Path) -> None:
    """checkout-free: a checkout directory and a stand-in command that writes a draft report, as ramscope does."""
    labels = tmp_path / "labels"
    labels.mkdir()
    (labels / "set.json").write_text(
        json.dumps(
            [
                {
                    "repo": "o/r",
                    "commit": "0" * 40,
                    "license": "MIT",
                    "files": [
                        {"path": "a.py", "family": "slack-python", "calls": [[3, "chat.postMessage"]]},
                        {"path": "b.ts", "family": "github-js", "calls": [[7, "issues/create"]]},
                    ],
                }
            ]
        ),
        "utf-8",
    )
    (tmp_path / "repos" / "o+r").mkdir(parents=True)
    fake = tmp_path / "fake_ramscope.py"
    fake.write_text(
        "import json, sys\n"
        "a = sys.argv[1:]\n"
        "assert a[0] == '--offline' and a[1] == '--cache-dir' and a[3] == 'draft' and a[4] == '--code', a\n"
        "report = a[a.index('--report') + 1]\n"
        "sites = [{'file': 'a.py', 'line': 3, 'operation': 'chat.postMessage', 'via': 'slack_sdk'},\n"
        "         {'file': 'b.ts', 'line': 9, 'operation': 'issues/get', 'via': 'octokit'}]\n"
        "json.dump({'call_sites': sites, 'unresolved': [], 'evidence': []}, open(report, 'w'))\n",
        "utf-8",
    )
    out = tmp_path / "result.json"
    argv = ["--repos", str(tmp_path / "repos"), "--labels", str(labels), "--ramscope", f"{sys.executable} {fake}"]
    assert ce.main([*argv, "--json", str(out)]) == 0
    doc = json.loads(out.read_text("utf-8"))
    assert doc["tallies"]["overall"] == {
        "calls": 2,
        "found": 1,
        "false_positives": 1,
        "recall": 0.5,
        "precision": 0.5,
    }
    assert doc["tallies"]["lang:ts/js"]["found"] == 0
    assert doc["misses"][0]["site"] == "b.ts:7"
    assert doc["runs"][0]["rc"] == 0


def test_a_missing_checkout_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no checkout of"):
        ce.main(["--repos", str(tmp_path), "--ramscope", "false"])
