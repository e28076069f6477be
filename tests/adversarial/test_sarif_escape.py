"""SARIF as a hostile card author attacks it (issue 22): card strings rendered as links in code
scanning, and artifact URIs a consumer decodes onto another file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import unquote

import pytest

from ramscope.cli import main
from ramscope.governance.check import CardResult, Finding
from ramscope.governance.rules import parse_rules
from ramscope.governance.sarif import render_sarif
from ramscope.outputs.diagnostics import sarif_text, sarif_uri

PHISH = "[Approved](https://evil.example/phish)"


def test_brackets_are_escaped_in_plain_text_messages() -> None:
    """SARIF §3.11.6: '[', ']' and '\\' escaped, so an embedded link is shown as text."""
    assert sarif_text(PHISH) == "\\[Approved\\](https://evil.example/phish)"
    assert sarif_text("a\\[b]") == "a\\\\\\[b\\]"


@pytest.mark.parametrize(
    ("source", "uri"),
    [
        ("cards/..%2Fsrc%2Fapp.py#.json", "cards/..%252Fsrc%252Fapp.py%23.json"),
        ("cards/a b?.json", "cards/a%20b%3F.json"),
        ("cards/plain.json", "cards/plain.json"),
        ("https://agents.example/card.json", "https://agents.example/card.json"),
    ],
)
def test_artifact_uris_are_percent_encoded(source: str, uri: str) -> None:
    """A file's own '%', '#' and '?' are encoded: decoding the URI gives the file back, nothing else."""
    assert sarif_uri(source) == uri
    if "://" not in source:
        assert unquote(uri) == source


def test_check_sarif_escapes_card_strings_and_encodes_the_card_path() -> None:
    """`check --format sarif`: an access id holding a Markdown link, in a file named to traverse."""
    rules = parse_rules({"rule": [{"kind": "forbidden-scopes", "scopes": ["*"]}]})
    finding = Finding("forbidden-scopes", "forbidden-scopes", "error", f"access {PHISH!r} is granted x", "c", PHISH)
    card = "cards/..%2Fsrc%2Fapp.py#.json"
    log = render_sarif([CardResult(card, "n", "", True, True, (finding,), 5)], rules)
    run = log["runs"][0]
    text = run["results"][0]["message"]["text"]
    assert "\\[Approved\\](https://evil.example/phish)" in text
    assert PHISH not in text
    assert run["artifacts"][0]["location"]["uri"] == "cards/..%252Fsrc%252Fapp.py%23.json"
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "cards/..%252Fsrc%252Fapp.py%23.json"
    )


def test_validate_sarif_escapes_and_encodes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`validate --format sarif`: the same escaping and encoding."""
    card = {
        "name": "x",
        "description": "d",
        "url": "https://a.example",
        "version": "1",
        "capabilities": {},
        "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"],
        "skills": [],
        "resourceAccessManifest": {"resources": [], "resource_accesses": [{"id": PHISH}]},
    }
    (tmp_path / "cards").mkdir()
    path = tmp_path / "cards" / "a#b%2F.json"
    path.write_text(json.dumps(card), "utf-8")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        main(["validate", "--format", "sarif", "cards/a#b%2F.json"])
    finally:
        os.chdir(cwd)
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["artifacts"][0]["location"]["uri"] == "cards/a%23b%252F.json"
    texts = [r["message"]["text"] for r in run["results"]]
    assert any("\\[Approved\\]" in t for t in texts)
    assert not any(PHISH in t for t in texts)
