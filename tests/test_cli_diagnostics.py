"""Diagnostics where people look: under the text tables, grouped by access, and one line per failing
item on stderr for every non-zero exit, whatever the format; `-q` silences, `-v` adds the rest."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests import _bank
from tests.support.httpserver import LocalHTTPServer

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture(scope="module")
def bank() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        _bank.serve_bank(srv)
        yield srv


@pytest.fixture
def ambiguous(tmp_path: Path, bank: LocalHTTPServer) -> Path:
    """Two accesses whose own choices are ambiguous (warnings), one more that is fine."""
    doc = _bank.card(
        bank.url("/bank.json"),
        _bank.access("a", "getBalance"),
        _bank.access("b", "listPayees", necessity="OPTIONAL"),
        _bank.access("k", "getRates", identity="AGENT"),
    )
    # a name sharing no word with the spec's title or host: an info finding (display-name-mismatch)
    doc["resourceAccessManifest"]["resources"][0]["display_name"] = "Zebra Pay"
    return _bank.write(tmp_path / "card.json", doc)


@pytest.fixture
def down(tmp_path: Path, bank: LocalHTTPServer) -> Path:
    """Two accesses on a spec that cannot be fetched, one that can be derived."""
    doc = _bank.card(bank.url("/down.json"), _bank.access("a", "getBalance"), _bank.access("b", "listPayees"))
    doc["resourceAccessManifest"]["resources"].append(
        {"id": "ok", "interaction_protocol": "REST", "owner": "CONSUMER", "spec": {"spec_url": bank.url("/bank.json")}}
    )
    extra = _bank.access("k", "getRates", identity="AGENT", resource="ok")
    doc["resourceAccessManifest"]["operations"].append(extra["op"])
    doc["resourceAccessManifest"]["resource_accesses"].append(extra["access"])
    return _bank.write(tmp_path / "down.json", doc)


def _section(out: str, heading: str) -> str:
    return out.split(heading, 1)[1]


def test_text_lists_warnings_under_the_tables_grouped_by_access(cli: Run, ambiguous: Path, tmp_path: Path) -> None:
    policy = _bank.write(tmp_path / "p.toml", '[[pin]]\naccess = "nobody"\nscopes = []\nreason = "old"\n')
    code, out, err = cli("--policy", str(policy), "derive", "--format", "text", str(ambiguous))
    assert (code, err) == (0, "")
    below = _section(out, "cumulative tiers")
    assert "diagnostics" in below
    groups = _section(below, "diagnostics")
    # each access's findings under its own heading, in card order; card-wide ones under the card
    a, b = groups.index("access a"), groups.index("access b")
    assert a < groups.index("ambiguous-scope-choice", a) < b < groups.index("ambiguous-scope-choice", b)
    assert "policy-pin-unused" in groups
    assert "insecure-fetch" in groups  # said on the resource whose spec it is
    assert "resource bank" in groups


def test_text_hides_info_unless_verbose_and_warnings_when_quiet(cli: Run, ambiguous: Path) -> None:
    _, out, _ = cli("derive", "--format", "text", str(ambiguous))
    assert "warning[ambiguous-scope-choice]" in out
    _, quiet, qerr = cli("-q", "derive", "--format", "text", str(ambiguous))
    assert "ambiguous-scope-choice" not in quiet
    assert qerr == ""
    _, verbose, verr = cli("-v", "derive", "--format", "text", str(ambiguous))
    assert "info[" in verbose
    assert "info[" not in out
    assert "warning[ambiguous-scope-choice]" in verr  # -v: every diagnostic on stderr too


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_an_incomplete_derivation_says_each_gap_on_stderr(cli: Run, down: Path, fmt: str) -> None:
    """Exit 3 is never silent: one line per incomplete access, with where it is in the card."""
    code, _, err = cli("derive", "--format", fmt, str(down))
    assert code == 3
    lines = [x for x in err.splitlines() if "error[access-unresolved]" in x]
    assert len(lines) == 2
    assert all(x.startswith(f"{down}:") for x in lines)
    assert "access 'a'" in lines[0]
    assert "access 'b'" in lines[1]
    assert "access 'k'" not in err


@pytest.mark.parametrize("command", ["scopes", "consent", "derive"])
def test_quiet_silences_stderr_and_keeps_the_exit_code(cli: Run, down: Path, command: str) -> None:
    code, _, err = cli("-q", command, str(down))
    assert (code, err) == (3, "")


def test_scopes_and_consent_say_the_gaps_too(cli: Run, down: Path) -> None:
    for argv in (("scopes",), ("consent", "--format", "markdown")):
        code, _, err = cli(*argv, str(down))
        assert code == 3
        assert len([x for x in err.splitlines() if "error[access-unresolved]" in x]) == 2


def test_a_failed_fetch_names_each_spec_on_stderr(cli: Run, down: Path, bank: LocalHTTPServer) -> None:
    code, _, err = cli("fetch", str(down))
    assert code == 3
    assert any(bank.url("/down.json") in x for x in err.splitlines())


def test_validate_json_and_sarif_say_the_errors_on_stderr(cli: Run, tmp_path: Path) -> None:
    bad = _bank.write(tmp_path / "x.json", '{"name": "x"}')
    for fmt in ("json", "sarif"):
        code, out, err = cli("validate", "--format", fmt, str(bad))
        assert code == 1
        json.loads(out)
        assert f"{bad}:1:1: error[no-manifest]" in err
