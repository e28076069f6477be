"""`compare`: three agents side by side by footprint, and ranked least-privileged first by a stated rule."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ramscope.cli import main
from ramscope.governance.compare import RANK_RULE, compare_reports, render_compare_text
from tests.support.reports import CORPORATE, PERSONAL, TRAVEL, WEATHER, cli_globals


def _variant(name: str, *, drop: tuple[str, ...] = (), unconfirmed: bool = False) -> dict[str, Any]:
    card = json.loads(TRAVEL.read_text("utf-8"))
    card["name"] = name
    ram = card["resourceAccessManifest"]
    ram["resource_accesses"] = [a for a in ram["resource_accesses"] if a["id"] not in drop]
    used_ops = {a["operation"] for a in ram["resource_accesses"]}
    ram["operations"] = [o for o in ram["operations"] if o["id"] in used_ops]
    used_res = {o["resource"] for o in ram["operations"]}
    ram["resources"] = [r for r in ram["resources"] if r["id"] in used_res]
    if unconfirmed:
        for a in ram["resource_accesses"]:
            a["confirmation_required"] = False
    return card


@pytest.fixture
def three_cards(write_card: Callable[..., Path]) -> list[Path]:
    return [
        write_card(_variant("Careless Agent", unconfirmed=True)),
        TRAVEL,
        write_card(_variant("Brief Agent", drop=(PERSONAL, CORPORATE))),
    ]


def test_compare_three_cards_ranked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, three_cards: list[Path]
) -> None:
    g = cli_globals(tmp_path / "cache")
    code = main([*g, "compare", "--rank", "--format", "json", *map(str, three_cards)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["rank_rule"] == RANK_RULE
    names = [c["card"]["name"] for c in doc["cards"]]
    # Brief: no user scope at all; Travel and Careless grant the same 12 operations, but Careless
    # writes to calendars without asking first.
    assert names == ["Brief Agent", "Travel Reservation Agent", "Careless Agent"]
    assert [c["rank"] for c in doc["cards"]] == [1, 2, 3]
    brief, travel, careless = doc["cards"]
    assert brief["tiers"]["OPTIONAL"]["END_USER"]["blast_radius"] == 0
    t = travel["tiers"]["OPTIONAL"]["END_USER"]
    assert t["scopes"] == ["https://www.googleapis.com/auth/calendar.events"]
    assert t["blast_radius"] == 12
    assert t["write_accesses"] == [PERSONAL, CORPORATE]
    assert t["hitl_coverage"] == 1.0
    c = careless["tiers"]["OPTIONAL"]["END_USER"]
    assert c["unconfirmed_writes"] == [PERSONAL, CORPORATE]
    assert c["hitl_coverage"] == 0.0
    assert travel["rank_key"]["unconfirmed_writes"] < careless["rank_key"]["unconfirmed_writes"]
    for card in doc["cards"]:
        assert card["tiers"]["OPTIONAL"]["third_party_egress"] == ["openholidaysapi-publicholidays-v1"]
        # The weather tool's annotations are unknown (the server lists no tools): counted, not assumed read-only.
        assert card["tiers"]["OPTIONAL"]["AGENT"]["unknown_effect_accesses"] == [WEATHER]
    # REQUIRED holds nothing in any of them.
    assert all(not c["tiers"]["REQUIRED"]["END_USER"]["scopes"] for c in doc["cards"])


def test_compare_text_without_rank_keeps_the_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, three_cards: list[Path]
) -> None:
    g = cli_globals(tmp_path / "cache")
    assert main([*g, "compare", *map(str, three_cards)]) == 0
    out = capsys.readouterr().out
    assert out.index("Careless Agent") < out.index("Travel Reservation Agent") < out.index("Brief Agent")
    assert "rank:" not in out
    assert "OPTIONAL     END_USER  1       12" in out


def _report(name: str, blast: int, *, complete: bool = True) -> dict[str, Any]:
    ident = {
        "scopes": ["s"] if blast else [],
        "credentials": [],
        "accesses": [],
        "blast_radius": blast,
        "incomplete_accesses": [] if complete else ["x"],
    }
    tier = {
        "END_USER": ident,
        "AGENT": copy.deepcopy(ident) | {"blast_radius": 0, "scopes": []},
        "acknowledgments": [],
        "complete": complete,
    }
    return {
        "card": {"name": name, "source": f"{name}.json"},
        "complete": complete,
        "accesses": [],
        "tiers": {t: copy.deepcopy(tier) for t in ("REQUIRED", "RECOMMENDED", "OPTIONAL")},
    }


def test_unknown_permissions_never_rank_first() -> None:
    """An incomplete derivation could hide anything: it ranks after every complete one, however small."""
    data = compare_reports(
        [_report("unknown", 0, complete=False), _report("wide", 5000), _report("narrow", 3)], rank=True
    )
    assert [c["card"]["name"] for c in data["cards"]] == ["narrow", "wide", "unknown"]
    assert "[derivation incomplete]" in render_compare_text(data)


def test_equal_footprints_share_a_rank() -> None:
    data = compare_reports([_report("b", 3), _report("a", 3), _report("c", 4)], rank=True)
    assert [(c["card"]["name"], c["rank"]) for c in data["cards"]] == [("a", 1), ("b", 1), ("c", 3)]


def test_universe_blast_radius_is_used_when_present() -> None:
    wide = _report("wide", 5)
    wide["accesses"] = [
        {
            "id": "a",
            "identity": "END_USER",
            "scopes": ["s"],
            "target": {"kind": "openapi", "method": "GET"},
            "blast_radius": {"granted_operations": 5, "universe_operations": 900},
        }
    ]
    wide["tiers"]["OPTIONAL"]["END_USER"]["accesses"] = ["a"]
    data = compare_reports([wide])
    assert data["cards"][0]["tiers"]["OPTIONAL"]["END_USER"]["blast_radius_measure"] == "universe"
    assert data["cards"][0]["tiers"]["OPTIONAL"]["END_USER"]["write_accesses"] == []
