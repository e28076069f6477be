"""The consent screen shows what the orchestrator will request: the tier's scopes and credentials, each
with the provider's description and the accesses it serves (not each access's own choice)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests import _bank
from tests.support.httpserver import LocalHTTPServer

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture(scope="module")
def bank() -> Iterator[str]:
    with LocalHTTPServer() as srv:
        yield _bank.serve_bank(srv)


@pytest.fixture
def card(tmp_path: Path, bank: str) -> Path:
    doc = _bank.card(
        bank,
        _bank.access("a", "getBalance"),
        _bank.access("b", "listPayees"),
        _bank.access("k", "getRates", identity="AGENT", necessity="OPTIONAL"),
    )
    return _bank.write(tmp_path / "card.json", doc)


def test_the_table_lists_the_tiers_scope_with_its_description(cli: Run, card: Path) -> None:
    """`overview.read` covers both accesses and wins; each access alone would pick a read scope."""
    code, out, _ = cli("scopes", str(card))
    assert (code, out) == (0, "overview.read\n")
    code, out, _ = cli("consent", str(card))
    assert code == 0
    (res,) = json.loads(out)["resources"]
    assert [(p["scope"], p["description"], p["accesses"], p["necessity"]) for p in res["permissions"]] == [
        ("overview.read", "See your balances and the people you pay", ["a", "b"], "REQUIRED")
    ]
    assert [(c["scheme"], c["type"], c["accesses"]) for c in res["credentials"]] == [("key", "apiKey", ["k"])]


def test_markdown_and_html_show_the_requested_scope_not_the_rivals(cli: Run, card: Path) -> None:
    _, md, _ = cli("consent", "--format", "markdown", str(card))
    table = [line for line in md.splitlines() if line.startswith("| `")]
    assert len(table) == 2  # the scope, then the credential
    assert table[0].startswith("| `overview.read` | See your balances and the people you pay | required |")
    assert table[0].endswith("| `a`, `b` |")
    assert table[1].startswith("| `key` |")
    assert "apiKey" in table[1]
    assert table[1].endswith("| `k` |")
    assert "accounts.read" not in md
    assert "payees.read" not in md
    _, html, _ = cli("consent", "--format", "html", str(card))
    assert "<code>overview.read</code></td><td>See your balances and the people you pay" in html
    assert "accounts.read" not in html


def test_the_report_says_which_accesses_each_tier_grant_serves(cli: Run, card: Path) -> None:
    """The report carries it too, per tier and identity, so every consumer can show it."""
    _, out, _ = cli("derive", str(card))
    t = json.loads(out)["tiers"]["OPTIONAL"]
    assert t["END_USER"]["permissions"] == [
        {
            "scope": "overview.read",
            "namespace": t["END_USER"]["grants"][0]["namespace"],
            "scheme": "bank",
            "type": "oauth2",
            "description": "See your balances and the people you pay",
            "accesses": ["a", "b"],
            "name": None,  # no catalog names it
            "admin_consent": False,
            # No provider page ramscope read classes the bank's scope: its cost is unknown, not nothing.
            "cost": {
                "scope": "overview.read",
                "provider": None,
                "class": None,
                "triggers": None,
                "source": None,
                "condition": None,
                "basis": None,
                "reason": "ramscope has no cost data for this provider",
            },
        }
    ]
    (key,) = t["AGENT"]["permissions"]
    assert (key["scope"], key["scheme"], key["type"], key["accesses"]) == (None, "key", "apiKey", ["k"])
