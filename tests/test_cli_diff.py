"""`diff` as a CI gate: exit 4 for every new risk, not only new scopes (issue 14, item 9)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ramscope.outputs.diff import diff_reports
from tests import _bank
from tests.support.httpserver import LocalHTTPServer

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture(scope="module")
def bank() -> Iterator[str]:
    with LocalHTTPServer() as srv:
        yield _bank.serve_bank(srv)


def _pair(tmp_path: Path, old: dict[str, Any], new: dict[str, Any]) -> tuple[str, str]:
    return str(_bank.write(tmp_path / "old.json", old)), str(_bank.write(tmp_path / "new.json", new))


def test_identical_cards_exit_0(cli: Run, bank: str, tmp_path: Path) -> None:
    doc = _bank.card(bank, _bank.access("a", "getBalance", confirm=True))
    code, out, err = cli("diff", *_pair(tmp_path, doc, doc))
    assert (code, err) == (0, "")
    assert json.loads(out)["risks"] == []


def test_a_dropped_confirmation_exits_4(cli: Run, bank: str, tmp_path: Path) -> None:
    """Same scopes, but the agent no longer asks before acting: a new risk."""
    old = _bank.card(bank, _bank.access("a", "getBalance", confirm=True))
    new = _bank.card(bank, _bank.access("a", "getBalance", confirm=False))
    code, out, err = cli("diff", *_pair(tmp_path, old, new))
    d = json.loads(out)
    assert code == 4
    assert d["tiers"]["REQUIRED"]["dropped_confirmations"] == ["a"]
    assert {"kind": "dropped-confirmation", "tier": "REQUIRED", "item": "a"} in d["risks"]
    assert d["new_permissions"] is False  # no new permission: a new risk
    assert "dropped-confirmation" in err
    assert "'a'" in err
    code, out, _ = cli("diff", "--format", "text", *_pair(tmp_path, old, new))
    assert code == 4
    assert out.splitlines()[-1] == "new risks: review needed"


def test_a_new_third_party_egress_exits_4(cli: Run, bank: str, tmp_path: Path) -> None:
    """The same credential, now also sent to a third party's copy of the API: data leaves."""
    old = _bank.card(bank, _bank.access("r", "getRates", identity="AGENT"), third_party=True)
    new = _bank.card(bank, _bank.access("r", "getRates", identity="AGENT", resource="rates-3p"), third_party=True)
    code, out, err = cli("diff", *_pair(tmp_path, old, new))
    d = json.loads(out)
    assert code == 4
    assert {"kind": "new-acknowledgment", "tier": "REQUIRED", "item": "rates-3p"} in d["risks"]
    assert "rates-3p" in err


def test_a_new_identity_exits_4(cli: Run, bank: str, tmp_path: Path) -> None:
    """An access that now runs as the agent's own identity: a new identity, even with no new scope."""
    old = _bank.card(bank, _bank.access("a", "getBalance"))
    new = _bank.card(bank, _bank.access("a", "getBalance"), _bank.access("p", "getBalance", identity="AGENT"))
    # getBalance fits no AGENT identity (OAuth authorization code only): it is incomplete, but the
    # identity is new all the same
    d = diff_reports(_derive(cli, tmp_path, old), _derive(cli, tmp_path, new))
    assert {"kind": "new-identity", "tier": "REQUIRED", "item": "AGENT"} in d["risks"]


def test_a_new_identity_exits_4_from_the_cli(cli: Run, bank: str, tmp_path: Path) -> None:
    old = _bank.card(bank, _bank.access("a", "getBalance"))
    new = _bank.card(bank, _bank.access("a", "getBalance"), _bank.access("k", "getRates", identity="AGENT"))
    code, out, _ = cli("diff", *_pair(tmp_path, old, new))
    assert code == 4
    kinds = {r["kind"] for r in json.loads(out)["risks"]}
    assert {"new-identity", "new-credential"} <= kinds


def test_a_saved_report_from_before_risks_is_still_compared(cli: Run, bank: str, tmp_path: Path) -> None:
    """Reports saved without `confirmations` (older versions) are read; nothing is invented."""
    old = _derive(cli, tmp_path, _bank.card(bank, _bank.access("a", "getBalance", confirm=True)))
    for t in old["tiers"].values():
        del t["confirmations"]
    d = diff_reports(old, old)
    assert d["risks"] == []


def _derive(cli: Run, tmp_path: Path, doc: dict[str, Any]) -> dict[str, Any]:
    path = _bank.write(tmp_path / "card.json", doc)
    _, out, _ = cli("derive", str(path))
    report: dict[str, Any] = json.loads(out)
    return report
