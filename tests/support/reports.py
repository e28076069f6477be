"""Real permission reports of the example cards, derived offline from the bundled cassette, for the
governance tests (which read reports and mutate copies of them to stage each case)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from ramscope import derive, load_card, load_policy
from ramscope.config import Settings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CASSETTE = ROOT / "cassettes" / "travel-agent.yaml"
POLICY = EXAMPLES / "travel-agent.policy.toml"
TRAVEL = EXAMPLES / "travel-agent.card.json"
TRAVEL_SKILLS = EXAMPLES / "travel-agent-skills.card.json"


def offline_settings(cache_dir: Path) -> Settings:
    return Settings(cache_dir=cache_dir, offline=True, cassette=CASSETTE, reuse=False)


def derive_offline(card: Path | dict[str, Any], cache_dir: Path, *, policy: bool = True) -> dict[str, Any]:
    loaded = load_card(card) if isinstance(card, Path) else load_card(card, name="card.json")
    report = derive(loaded, settings=offline_settings(cache_dir), policy=load_policy(POLICY) if policy else None)
    return copy.deepcopy(report.to_dict())


def cli_globals(cache_dir: Path) -> list[str]:
    """The global options that make a CLI run offline on the example's cassette and policy."""
    return ["--offline", "--cache-dir", str(cache_dir), "--cassette", str(CASSETTE), "--policy", str(POLICY)]


def access(report: dict[str, Any], access_id: str) -> dict[str, Any]:
    return next(a for a in report["accesses"] if a["id"] == access_id)


PERSONAL = "create-personal-calendar-event-for-flight-reservation"
CORPORATE = "create-corporate-calendar-event-for-flight-reservation"
HOLIDAYS = "fetch-holidays-for-destination-country"
WEATHER = "lookup-weather-for-destination-country"
