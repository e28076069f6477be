"""An invalid card is said to be invalid by every command: never rendered as "nothing needed"."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ramscope.schema import load_schema
from tests import _bank
from tests.support.httpserver import LocalHTTPServer

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture(scope="module")
def bank() -> Iterator[str]:
    with LocalHTTPServer() as srv:
        yield _bank.serve_bank(srv)


@pytest.fixture
def nameless(tmp_path: Path) -> Path:
    """A card with a name and no manifest at all."""
    return _bank.write(tmp_path / "x.json", '{"name": "x"}')


@pytest.fixture
def duplicate(tmp_path: Path, bank: str) -> Path:
    """A card whose derivable accesses share one id: invalid, although each has scopes."""
    doc = _bank.card(bank, _bank.access("a", "getBalance"), _bank.access("b", "listPayees"))
    doc["resourceAccessManifest"]["resource_accesses"][1]["id"] = "a"
    return _bank.write(tmp_path / "dup.json", doc)


def _dup_line(err: str, path: Path) -> None:
    assert f"{path}:" in err
    line = next(x for x in err.splitlines() if "error[duplicate-id]" in x)
    # file:line:col as `validate` prints it
    where = line.split(": ", 1)[0]
    assert where.startswith(f"{path}:")
    assert [p.isdigit() for p in where.removeprefix(f"{path}:").split(":")] == [True, True]


def test_derive_of_an_invalid_card_is_incomplete_and_says_why(cli: Run, nameless: Path) -> None:
    """`{"name": "x"}`: exit 1, `complete: false` beside `valid: false`, the validation error in the
    report and on stderr, as `validate` prints it."""
    code, out, err = cli("derive", str(nameless))
    assert code == 1
    report = json.loads(out)
    jsonschema.Draft202012Validator(load_schema("report")).validate(report)
    assert (report["card"]["valid"], report["complete"]) == (False, False)
    assert all(report["tiers"][t]["complete"] is False for t in ("REQUIRED", "RECOMMENDED", "OPTIONAL"))
    assert [d["code"] for d in report["diagnostics"] if d["severity"] == "error"] == ["no-manifest"]
    assert f"{nameless}:1:1: error[no-manifest]" in err


def test_derive_of_a_card_with_duplicate_ids(cli: Run, duplicate: Path) -> None:
    """Duplicate ids: exit 1, incomplete, the error with its line and column on stderr."""
    code, out, err = cli("derive", str(duplicate))
    assert code == 1
    assert json.loads(out)["complete"] is False
    _dup_line(err, duplicate)


def test_derive_text_of_an_invalid_card_says_invalid(cli: Run, nameless: Path) -> None:
    code, out, err = cli("derive", "--format", "text", str(nameless))
    assert code == 1
    assert "INVALID" in out
    assert "no-manifest" in out
    assert "error[no-manifest]" in err


def test_scopes_of_an_invalid_card_grant_nothing(cli: Run, duplicate: Path, nameless: Path) -> None:
    """No scope is printed for an invalid card, even where its accesses could be derived."""
    for path in (duplicate, nameless):
        code, out, err = cli("scopes", str(path))
        assert (code, out) == (1, "")
        assert "error[" in err
    _dup_line(cli("scopes", str(duplicate))[2], duplicate)


@pytest.mark.parametrize("fmt", ["json", "markdown", "html"])
def test_consent_of_an_invalid_card_renders_no_grant(cli: Run, nameless: Path, duplicate: Path, fmt: str) -> None:
    """The consent screen of an invalid card offers nothing to grant: it says the card is invalid."""
    for path in (nameless, duplicate):
        code, out, err = cli("consent", "--format", fmt, str(path))
        assert code == 1
        assert "error[" in err
        assert "you grant" not in out
        assert "overview.read" not in out
        assert "accounts.read" not in out
        if fmt == "json":
            data: dict[str, Any] = json.loads(out)
            assert (data["valid"], data["complete"], data["resources"], data["tiers"]) == (False, False, [], None)
            assert data["errors"]
        else:
            assert "invalid" in out.lower()


def test_diff_with_an_invalid_new_card_exits_1(
    cli: Run, nameless: Path, duplicate: Path, bank: str, tmp_path: Path
) -> None:
    """A CI gate on `diff` must not let a broken new card through as "no new permissions"."""
    old = _bank.write(tmp_path / "old.json", _bank.card(bank, _bank.access("a", "getBalance")))
    for new in (nameless, duplicate):
        code, out, err = cli("diff", str(old), str(new))
        assert code == 1
        assert "error[" in err
        assert json.loads(out)["new"]["valid"] is False
        code, out, _ = cli("diff", "--format", "text", str(old), str(new))
        assert code == 1
        assert "no new permissions" not in out
        assert "invalid" in out


def test_diff_with_an_invalid_old_card_says_so_and_compares(
    cli: Run, duplicate: Path, bank: str, tmp_path: Path
) -> None:
    """An invalid old card is said; what can be compared is compared (the new card's scopes show)."""
    new = _bank.write(
        tmp_path / "new.json",
        _bank.card(bank, _bank.access("a", "getBalance"), _bank.access("c", "getRates", identity="AGENT")),
    )
    code, out, err = cli("diff", str(duplicate), str(new))
    d = json.loads(out)
    assert d["old"]["valid"] is False
    assert "old card" in err
    assert "invalid" in err
    assert d["accesses"]["added"] == ["c"]
    assert code == 4
