"""docs/governance.md shows the README example exported to each format it can express, and the one-line
refusal of one it cannot: each block is what the CLI writes today."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from ramscope.cli import main
from tests.support.reports import cli_globals

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "governance.md").read_text("utf-8")
CARD = "examples/travel-agent.card.json"


def section(title: str) -> str:
    start = DOC.index(f"### `{title}`")
    end = DOC.find("\n### ", start + 1)
    return DOC[start : end if end > 0 else len(DOC)]


def block(text: str, lang: str) -> str:
    m = re.search(rf"```{lang}\n(.*?)\n```", text, re.S)
    assert m, lang
    return m.group(1)


def export(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fmt: str) -> str:
    monkeypatch.chdir(ROOT)
    code = main([*cli_globals(tmp_path), "export", CARD, "--format", fmt])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


@pytest.mark.parametrize("fmt", ["toolhive", "agentgateway"])
def test_gateway_examples_are_the_clis(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    assert block(section(fmt), "yaml") + "\n" == export(tmp_path, capsys, monkeypatch, fmt)


def test_allowlist_example_is_the_clis(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = json.loads(block(section("allowlist"), "json"))
    out = json.loads(export(tmp_path, capsys, monkeypatch, "allowlist"))
    assert shown == {"grants": out["grants"], "credentials": out["credentials"]}


def test_google_example_is_the_clis(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = section("google-oauth")
    out = json.loads(export(tmp_path, capsys, monkeypatch, "google-oauth"))
    assert json.loads(block(text, "json")) == out["consent_screen"]
    assert f"> {out['verification'][0]['draft']}" in text


def test_the_refusal_shown_is_the_clis(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code = main([*cli_globals(tmp_path), "export", CARD, "--format", "entra-app"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    intro = DOC[DOC.index("## Exports to where") : DOC.index("### `entra-app`")]
    assert err in block(intro, "console")


def test_the_yaml_examples_parse() -> None:
    assert yaml.safe_load(block(section("toolhive"), "yaml"))["type"] == "cedarv1"
    assert "rules" in yaml.safe_load(block(section("agentgateway"), "yaml"))["mcpAuthorization"]
