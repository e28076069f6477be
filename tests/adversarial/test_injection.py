"""Strangers' strings in what people read: escape sequences, bidi overrides, zero-width characters,
HTML/JS, Markdown link tricks and rich markup, from the card and from the spec, reach every renderer
(text report, scopes list, Markdown and HTML consent, validate, diff, fetch table) neutralised; JSON
keeps them as data, byte for byte."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from ramscope.config import Settings
from ramscope.derive import Engine
from ramscope.outputs.consent import consent_data, md, render_html, render_markdown
from ramscope.outputs.report import Report
from ramscope.outputs.text import render_report_text
from tests.support.httpserver import LocalHTTPServer

from .hostile import card_doc, dumps, manifest, openapi
from .measure import TRACEBACK, run_ramscope

#: One string carrying every trick at once.
PAYLOAD = (
    "[/bold][link=https://evil.example]G[/link]"  # rich markup (an unmatched closing tag raises in rich)
    "\x1b]8;;https://evil.example\x07x\x1b]8;;\x07"  # OSC 8 hyperlink
    "\x1b[2J\x1b]0;title\x07\x9b31m"  # clear screen, window title, C1 CSI
    "\u202egnp.exe\u200b\u2066\ufeff"  # bidi override, zero-width space, isolate, BOM
    "\u034f\ufe0f\U000e0020\u00ad\u180b\U0001d173"  # more default-ignorables (issue 14, item 16)
    "<script>alert(1)</script><img src=x onerror=alert(1)>\"'>"  # HTML/JS
    "[md](https://evil.example) ![i](https://evil.example/i.png) <https://evil.example> "
    "www.evil.example https://evil.example a@evil.example `tick` **b** |pipe|"  # Markdown
    "\r\nsecond line"
)
RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e", "\u200b", "\u2066", "\ufeff", "\r")
RAW_CONTROLS += ("\u034f", "\ufe0f", "\U000e0020", "\u00ad", "\u180b", "\U0001d173")


def hostile_card(url: str) -> dict[str, Any]:
    m = manifest(url, display_name="Item Service " + PAYLOAD)
    acc = m["resource_accesses"][0]
    acc["id"] = "acc" + PAYLOAD
    acc["access_justification"] = "why " + PAYLOAD
    m["resource_accesses"].append(dict(acc, id="bad" + PAYLOAD, operation="missing" + PAYLOAD))
    doc = card_doc(m, name="Name " + PAYLOAD)
    doc["description"] = "Desc " + PAYLOAD
    doc["provider"] = {"organization": "Org " + PAYLOAD}
    return doc


def hostile_spec() -> dict[str, Any]:
    doc = openapi()
    doc["info"]["title"] = "Title " + PAYLOAD
    scopes = doc["components"]["securitySchemes"]["oauth"]["flows"]["authorizationCode"]["scopes"]
    scopes["items.read"] = "desc " + PAYLOAD
    scopes["evil" + PAYLOAD] = "x"
    doc["paths"]["/items"]["get"]["security"] = [{"oauth": ["evil" + PAYLOAD]}]
    return doc


@pytest.fixture(scope="module")
def served() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        srv.route("/openapi.json", body=dumps(hostile_spec()))
        yield srv


@pytest.fixture(scope="module")
def card_file(served: LocalHTTPServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("inj") / "card.json"
    path.write_bytes(dumps(hostile_card(served.url("/openapi.json"))))
    return path


@pytest.fixture(scope="module")
def report(card_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Report:
    settings = Settings(cache_dir=tmp_path_factory.mktemp("cache"), allow_private_network=True, timeout=10)
    with Engine(settings) as engine:
        return engine.derive(card_file)


def _no_raw_controls(text: str) -> None:
    found = [c for c in RAW_CONTROLS if c in text]
    assert not found, f"raw control/bidi/invisible characters in output: {found!r}"


def test_text_report_treats_rich_markup_as_text(report: Report) -> None:
    """A card string holding rich markup ([/bold], [link=...]) is shown as written, on a colour terminal too."""
    for color in (False, True):
        out = render_report_text(report, color=color)
        _no_raw_controls(out.replace("\x1b[", "").replace("\x1b]8;", "") if color else out)
        assert "\n[/bold][link=https://evil.example]G[/link]\\x1b]8;;" in out  # as written, on one line
        assert "evil.example\x1b\\" not in out  # no OSC 8 hyperlink was made from the markup


def test_json_report_keeps_strings_as_data(report: Report) -> None:
    """JSON is data: the strings come back byte for byte, neither escaped twice nor lost."""
    doc = json.loads(json.dumps(report.to_dict(), ensure_ascii=False))
    assert doc["accesses"][0]["id"] == "acc" + PAYLOAD
    assert doc["accesses"][0]["justification"] == "why " + PAYLOAD
    assert "evil" + PAYLOAD in doc["accesses"][0]["scopes"]


def test_markdown_consent_has_no_links_images_or_html(report: Report) -> None:
    """The Markdown page renders to no link, image or raw HTML, and no bare URL a GFM autolinker would catch."""
    data = consent_data(report, description="Desc " + PAYLOAD, provider="Org " + PAYLOAD)
    text = render_markdown(data)
    _no_raw_controls(text)
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "<a " not in html
    assert "<img" not in html
    assert "<script" not in html
    # GFM's extended autolinks need an unescaped "://", "www." or "@" inside one text run
    # (code spans are literal: no autolinks there).
    prose = re.sub(r"(`+)(.+?)(?<!`)\1(?!`)", "", text)
    assert "://" not in prose
    assert "www." not in prose
    assert re.search(r"[\w.]@[\w]", prose) is None


def test_markdown_code_spans_hold_the_scope_literally() -> None:
    """Inside a code span backslashes are literal: a scope is fenced, not backslash-escaped."""
    from ramscope.outputs.consent import md_code

    for scope in ("https://www.googleapis.com/auth/calendar", "a`b", "``x``", "a|b"):
        rendered = (
            MarkdownIt("commonmark").enable("table").render(f"| h |\n|---|\n| {md_code(scope, in_table=True)} |\n")
        )
        code = re.search(r"<code>(.*?)</code>", rendered, re.DOTALL)
        assert code is not None, rendered
        import html as _html

        assert _html.unescape(code.group(1)) == scope


def test_html_consent_is_inert(report: Report) -> None:
    """The HTML page has no element or attribute from the payload, and its CSP forbids scripts."""
    data = consent_data(report, description="Desc " + PAYLOAD, provider="Org " + PAYLOAD)
    page = render_html(data)
    _no_raw_controls(page)
    assert "<script" not in page
    assert "<img" not in page
    assert "onerror=" not in page.replace("onerror=alert", "")  # only as escaped text
    assert "&lt;script&gt;" in page
    assert "default-src 'none'" in page


def test_md_escapes_markdown_metacharacters() -> None:
    """Link brackets are escaped, and the bare URL is split so GFM cannot autolink it."""
    assert md("[a](https://x.example)") == "\\[a\\](https\\:\\/\\/x\\.example)"


@pytest.mark.parametrize(
    "args",
    [
        ["derive", "--format", "text"],
        ["consent", "--format", "markdown"],
        ["consent", "--format", "html"],
        ["validate"],
        ["validate", "--format", "sarif"],
        ["scopes"],
        ["fetch"],
    ],
    ids="-".join,
)
def test_cli_outputs_are_neutralised(args: list[str], card_file: Path, tmp_path: Path) -> None:
    """Through the CLI: no traceback, no raw control character on stdout or stderr (JSON formats excepted)."""
    r = run_ramscope(
        ["--allow-private-network", "--cache-dir", str(tmp_path / "c"), args[0], str(card_file), *args[1:]],
        timeout=60,
    )
    assert TRACEBACK not in r.err
    assert r.returncode in (0, 1, 3), r.err
    _no_raw_controls(r.err)
    if "sarif" not in args:
        _no_raw_controls(r.out)


def test_scopes_cannot_smuggle_extra_lines(served: LocalHTTPServer, tmp_path: Path) -> None:
    """`scopes` prints one scope per line: a scope holding CR/LF stays on its line, escaped, and is reported.
    (The card is the hostile one without its dangling access: `scopes` grants nothing for an invalid card.)"""
    doc = hostile_card(served.url("/openapi.json"))
    del doc["resourceAccessManifest"]["resource_accesses"][1]
    card_file = tmp_path / "valid.json"
    card_file.write_bytes(dumps(doc))
    r = run_ramscope(["--allow-private-network", "--cache-dir", str(tmp_path / "c"), "scopes", str(card_file)])
    assert r.returncode == 0, r.err
    lines = r.out.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("evil[/bold]")
    assert "\\r\\nsecond line" in lines[0]
    assert "holds control or invisible characters" in r.err


def test_error_messages_quoting_the_card_are_escaped(tmp_path: Path) -> None:
    """An InputError quoting a hostile key (duplicate key) reaches stderr escaped, on one line."""
    card = tmp_path / "dup.json"
    key = "k\x1b]0;pwned\x07\u202e\nline"
    card.write_text(f'{{"{json.dumps(key)[1:-1]}": 1, "{json.dumps(key)[1:-1]}": 2}}', "utf-8")
    r = run_ramscope(["validate", str(card)])
    assert r.returncode == 2
    assert r.err.count("\n") == 1
    _no_raw_controls(r.err)
    assert TRACEBACK not in r.err
    assert sys.executable  # keep the import used


def test_scopes_escapes_a_tag_character_at_the_end_of_a_scope(tmp_path: Path) -> None:
    """Issue 14, item 16: `scopes` printed a scope ending in U+E0020 (TAG SPACE) raw: invisible on a terminal,
    so "items.read" and "items.read<TAG SPACE>" looked the same. Now escaped, and reported."""
    doc = openapi()
    flows = doc["components"]["securitySchemes"]["oauth"]["flows"]["authorizationCode"]["scopes"]
    flows["items.read\U000e0020"] = "a look-alike"
    doc["paths"]["/items"]["get"]["security"] = [{"oauth": ["items.read\U000e0020"]}]
    with LocalHTTPServer() as srv:
        srv.route("/spec.json", body=dumps(doc))
        card = tmp_path / "card.json"
        card.write_bytes(dumps(card_doc(manifest(srv.url("/spec.json"), display_name="Item\u00adService"))))
        r = run_ramscope(["--allow-private-network", "--cache-dir", str(tmp_path / "c"), "scopes", str(card)])
        text = run_ramscope(
            [
                "--allow-private-network",
                "--cache-dir",
                str(tmp_path / "c"),
                "consent",
                str(card),
                "--format",
                "markdown",
            ]
        )
    assert r.out == "items.read\\U000e0020\n"
    assert "holds control or invisible characters" in r.err
    assert "\U000e0020" not in text.out
    assert "\u00ad" not in text.out  # the soft hyphen is shown escaped, not printed raw
