"""Issue 30, the service half: what a stranger's requests found in `ramscope serve` (and the library calls it
makes), each fixed at its depth. Every test here failed before its fix."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from ramscope.config import Settings
from ramscope.service import CardSource, Refusal, Service
from ramscope.service.http import create_app
from ramscope.service.operations import derive, validate
from tests.support.asgi import ASGIServer

ROOT = Path(__file__).resolve().parent.parent
CARD = ROOT / "examples" / "travel-agent.card.json"
CASSETTE = ROOT / "cassettes" / "travel-agent.yaml"
JSON = {"content-type": "application/json"}


def _card() -> dict[str, Any]:
    return json.loads(CARD.read_text("utf-8"))  # type: ignore[no-any-return]


def _nested(levels: int) -> bytes:
    """The example card with one more member nesting ``levels`` arrays (the card itself is level 1)."""
    return orjson.dumps(_card())[:-1] + b',"x-deep":' + b"[" * levels + b"]" * levels + b"}"


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    settings = Settings(cache_dir=tmp_path_factory.mktemp("cache"), offline=True, cassette=CASSETTE)
    service = Service(settings)
    yield service
    service.close()


# --------------------------------------------------------------------------- 20: nesting of posted cards


@pytest.mark.parametrize("levels", [64, 70, 250])
def test_a_posted_card_nested_past_64_levels_is_refused(plain: Service, levels: int) -> None:
    """A JSON card nested past the bound was read again as YAML flow style, which had no depth bound: derived,
    200. Now the JSON bound holds (413), as bytes and as a parsed object (an MCP argument, a check body)."""
    with pytest.raises(Refusal) as raw:
        plain.pool.call(lambda e, u: derive(e, u, CardSource(data=_nested(levels)), plain.limits))
    assert (raw.value.status, raw.value.code) == (413, "limit-exceeded")
    assert "deeper than 64 levels" in raw.value.message
    doc = json.loads(_nested(levels))
    with pytest.raises(Refusal) as parsed:
        plain.pool.call(lambda e, u: validate(e, u, CardSource(doc=doc), plain.limits))
    assert (parsed.value.status, parsed.value.code) == (413, "limit-exceeded")


def test_a_card_within_the_nesting_bound_is_derived(plain: Service) -> None:
    ok = plain.pool.call(lambda e, u: validate(e, u, CardSource(data=_nested(62)), plain.limits))
    assert ok.status == 200


def test_the_http_api_refuses_a_deep_card_with_413(plain: Service) -> None:
    with ASGIServer(lambda _: create_app(plain)) as srv, httpx.Client(base_url=srv.base_url, timeout=60) as client:
        r = client.post("/v1/validate", content=_nested(100), headers=JSON)
        assert r.status_code == 413
        assert "deeper than 64 levels" in r.json()["error"]["message"]
