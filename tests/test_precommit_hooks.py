"""The pre-commit hooks (.pre-commit-hooks.yaml) run by the real `pre-commit` in a temporary git
repository that uses this repository as its hook repository, offline (the *-system hooks run the
installed ramscope; the Python hooks build an environment from the package index: marked slow)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.reports import CASSETTE, POLICY, TRAVEL

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / ".pre-commit-hooks.yaml"

FAILING_RULES = """
version = 1
[[rule]]
id = "no-calendar-writes"
kind = "forbidden-scopes"
scopes = ["*/auth/calendar.events"]
"""
PASSING_RULES = """
version = 1
[[rule]]
kind = "confirm-writes"
"""


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def hook_rev() -> str:
    """The commit of this repository whose hooks file is the one in the work tree."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    rev = _git("rev-parse", "HEAD", cwd=ROOT)
    committed = subprocess.run(
        ["git", "show", f"{rev}:.pre-commit-hooks.yaml"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout
    if committed != HOOKS.read_text("utf-8"):
        pytest.skip(".pre-commit-hooks.yaml differs from the committed one: commit it to test it")
    return rev


def _repo(tmp_path: Path, rev: str, hooks: list[dict[str, object]]) -> Path:
    repo = tmp_path / "agents"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    config = {"repos": [{"repo": str(ROOT), "rev": rev, "hooks": hooks}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return repo


def _pre_commit(repo: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    _git("add", "-A", cwd=repo)
    env = dict(os.environ)
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    # The *-system hooks run the ramscope of this environment.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PRE_COMMIT", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_hooks_file_declares_validate_and_check() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load(HOOKS.read_text("utf-8"))}
    assert set(hooks) == {
        "ramscope-validate",
        "ramscope-check",
        "ramscope-validate-system",
        "ramscope-check-system",
        "ramscope-audit-code",
        "ramscope-audit-code-system",
    }
    assert hooks["ramscope-audit-code"]["entry"] == "ramscope audit"
    assert hooks["ramscope-audit-code"]["pass_filenames"] is False
    assert hooks["ramscope-check"]["entry"] == "ramscope check"
    assert hooks["ramscope-validate"]["language"] == "python"
    assert hooks["ramscope-check-system"]["language"] == "system"


def test_validate_hook_passes_good_cards_and_fails_broken_ones(tmp_path: Path, hook_rev: str) -> None:
    repo = _repo(tmp_path, hook_rev, [{"id": "ramscope-validate-system"}])
    shutil.copy(TRAVEL, repo / "travel.card.json")
    (repo / "package.json").write_text("{}", encoding="utf-8")  # not a card: not passed to the hook
    ok = _pre_commit(repo, tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Passed" in ok.stdout
    broken = json.loads(TRAVEL.read_text("utf-8"))
    broken["resourceAccessManifest"]["operations"][0]["resource"] = "nowhere"
    (repo / "travel.card.json").write_text(json.dumps(broken, indent=2), encoding="utf-8")
    bad = _pre_commit(repo, tmp_path)
    assert bad.returncode == 1
    assert "Failed" in bad.stdout
    assert "error[dangling-reference]" in bad.stdout
    assert "package.json" not in bad.stdout


def test_check_hook_gates_on_the_rules(tmp_path: Path, hook_rev: str) -> None:
    offline = [
        "--offline",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--cassette",
        str(CASSETTE),
        "--policy",
        str(POLICY),
    ]
    repo = _repo(tmp_path, hook_rev, [{"id": "ramscope-check-system", "args": ["--rules", "rules.toml", *offline]}])
    shutil.copy(TRAVEL, repo / "travel.card.json")
    (repo / "rules.toml").write_text(PASSING_RULES, encoding="utf-8")
    ok = _pre_commit(repo, tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    (repo / "rules.toml").write_text(FAILING_RULES, encoding="utf-8")
    bad = _pre_commit(repo, tmp_path)
    assert bad.returncode == 1
    assert "- exit code: 5" in bad.stdout
    assert "travel.card.json:" in bad.stdout
    assert "error[no-calendar-writes]" in bad.stdout


@pytest.mark.slow
def test_python_hook_builds_its_own_environment(tmp_path: Path, hook_rev: str) -> None:
    """The default hooks install ramscope into pre-commit's environment (needs the package index)."""
    repo = _repo(tmp_path, hook_rev, [{"id": "ramscope-validate"}])
    shutil.copy(TRAVEL, repo / "travel.card.json")
    result = _pre_commit(repo, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
