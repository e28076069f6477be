"""The user reference lives in the repository (docs/), the README links it, and it keeps up with the code:
every report-schema property, every policy key, every command and exit code is documented."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ramscope.cli import COMMANDS, main
from ramscope.derive import policy
from tests.support.httpserver import LocalHTTPServer

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = (
    "cli.md",
    "report.md",
    "policy.md",
    "first-card.md",
    "diagnostics.md",
    "least-privilege.md",
    "specs.md",
    "governance.md",
    "library.md",
    "development.md",
    "reach.md",
    "rules.md",
    "skills-extension.md",
)


def _read(name: str) -> str:
    return (DOCS / name).read_text("utf-8")


def _code_spans(text: str) -> set[str]:
    return set(re.findall(r"`([^`\n]+)`", text))


def _property_names(node: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """(name, JSON pointer of the schema object declaring it) for every property, nested too."""
    if isinstance(node, dict):
        for name in node.get("properties", {}):
            yield name, where
        for key, value in node.items():
            yield from _property_names(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _property_names(value, f"{where}/{i}")


def test_every_page_exists_and_the_readme_links_it() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    for page in PAGES:
        assert (DOCS / page).is_file(), page
        assert f"](docs/{page})" in readme, f"README does not link docs/{page}"


def test_every_report_schema_property_is_documented() -> None:
    """A field added to report.schema.json without a word in docs/report.md fails here, by name."""
    schema = json.loads((ROOT / "src" / "ramscope" / "schemas" / "report.schema.json").read_text("utf-8"))
    documented = _code_spans(_read("report.md"))
    missing = sorted(
        {f"{name} (declared at {where or '/'})" for name, where in _property_names(schema) if name not in documented}
    )
    assert not missing, "undocumented in docs/report.md: " + "; ".join(missing)


def test_the_property_walk_sees_nested_properties() -> None:
    """The check above is only as good as its walk: nested and $defs properties are found."""
    names = {
        name
        for name, _ in _property_names(
            {"properties": {"a": {"properties": {"b": {}}}}, "$defs": {"x": {"items": {"properties": {"c": {}}}}}}
        )
    }
    assert names == {"a", "b", "c"}


def test_the_report_page_states_null_semantics_and_exit_codes() -> None:
    text = _read("report.md")
    assert "`null`" in text
    assert "`[]`" in text
    for code in range(5):
        assert re.search(rf"^\| `{code}` \|", text, re.M), f"exit code {code} missing from docs/report.md"


def test_every_policy_key_is_documented() -> None:
    documented = _code_spans(_read("policy.md"))
    keys = policy._TOP_KEYS | policy._PIN_KEYS
    assert keys <= documented, sorted(keys - documented)


def test_the_cli_page_holds_the_contract() -> None:
    text = _read("cli.md")
    for cmd in COMMANDS:
        assert f"`{cmd.name}" in text, cmd.name
    for code in range(5):
        assert re.search(rf"^\| `{code}` \|", text, re.M), f"exit code {code} missing from docs/cli.md"
    assert "Extend it freely" in text  # the stability promise moved with it


@pytest.mark.parametrize(
    "path",
    [
        "README.md",
        "src/ramscope/schemas/report.schema.json",
        *[str(p.relative_to(ROOT)) for p in (ROOT / "src").rglob("*.py")],
    ],
)
def test_nothing_cites_the_contract_outside_the_repo(path: str) -> None:
    """CONTRACT.md was never in the repository: citations point to docs/ now."""
    assert "CONTRACT.md" not in (ROOT / path).read_text("utf-8")


def _walkthrough() -> tuple[dict[str, str], list[tuple[str, list[str]]]]:
    """The files docs/first-card.md tells you to save, and each command with its shown output."""
    text = _read("first-card.md")
    files = dict(re.findall(r"[Ss]ave as\s+`([^`]+)`:\n\n```json\n(.*?)\n```", text, re.S))
    steps: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
    return files, steps


def test_first_card_walkthrough_replays_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every ramscope command of the walk-through, run on the files it shows, against the spec served
    locally: the exit codes are the ones shown, and so are `scopes`' lines and the diff's verdict."""
    files, steps = _walkthrough()
    assert {"notes.openapi.json", "notes-agent.json", "notes-agent-v2.json"} <= files.keys()
    commands = [c for c, _ in steps if c.startswith("ramscope ")]
    for verb in ("validate", "derive", "scopes", "consent", "diff"):
        assert any(f" {verb} " in c for c in commands), verb
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAMSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    with LocalHTTPServer() as srv:
        srv.route("/notes.openapi.json", body=files["notes.openapi.json"].encode())
        for name, body in files.items():
            (tmp_path / name).write_text(body.replace("http://127.0.0.1:8765", srv.url("").rstrip("/")), "utf-8")
        for command, shown in steps:
            sed = re.fullmatch(r"sed 's/(.*)/(.*)/' (\S+) > (\S+)", command)
            if sed:
                old, new, src, dst = sed.groups()
                (tmp_path / dst).write_text((tmp_path / src).read_text("utf-8").replace(old, new), "utf-8")
                continue
            if not command.startswith("ramscope "):
                continue  # the web server: served by the test instead
            argv = shlex.split(command.split(";", 1)[0].split(" > ", 1)[0])[1:]
            code = main(argv)
            out, _ = capsys.readouterr()
            assert f"exit {code}" in shown, f"{command}: exit {code}, the page shows {shown[-1:]}"
            if " scopes " in command:
                assert out.splitlines() == [x for x in shown if not x.startswith("exit ")]
            if " diff " in command:
                assert out.splitlines()[-1] in shown


@pytest.mark.parametrize("page", ["README.md", "SECURITY.md", *(f"docs/{p.name}" for p in sorted(DOCS.glob("*.md")))])
def test_every_relative_link_resolves(page: str) -> None:
    """A page moved into docs/ keeps working links: every relative target exists."""
    path = ROOT / page
    text = path.read_text("utf-8")
    text = re.sub(r"(?s)```.*?```", "", text)  # links in code blocks are examples
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if target.startswith(("http://", "https://", "mailto:", "#")):
            continue
        file = target.split("#", 1)[0]
        if file and not (path.parent / file).exists():
            broken.append(target)
    assert not broken, f"{page}: {broken}"
