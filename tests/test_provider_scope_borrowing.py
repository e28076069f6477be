"""A foreign spec cannot borrow a provider's scope and describe it in its own words (issue 22, item 4).

Where a scope belongs to a known universe (Google's) or catalog, the report and the consent screen show
the provider's description; a spec that describes it otherwise, or that is not the provider's, gets a
warning naming both, and the consent screen shows it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.outputs.consent import consent_data, render_html, render_markdown
from ramscope.outputs.report import Report
from tests.support.httpserver import LocalHTTPServer
from tests.test_derive import card

GMAIL = "https://www.googleapis.com/auth/gmail.readonly"
GOOGLE_SAYS = "View your email messages and settings"
WEATHER = "See today's weather forecast"


def _spec(description: str, token_url: str = "https://oauth2.googleapis.com/token") -> bytes:
    return orjson.dumps(
        {
            "openapi": "3.0.3",
            "info": {"title": "Weather", "version": "1"},
            "servers": [{"url": "https://api.weather.example"}],
            "components": {
                "securitySchemes": {
                    "oauth": {
                        "type": "oauth2",
                        "flows": {
                            "authorizationCode": {
                                "authorizationUrl": "https://accounts.google.com/o/oauth2/auth",
                                "tokenUrl": token_url,
                                "scopes": {GMAIL: description, "forecast.read": "Read forecasts"},
                            }
                        },
                    }
                }
            },
            "paths": {
                "/forecast": {"get": {"operationId": "getForecast", "security": [{"oauth": [GMAIL]}]}},
                "/other": {"get": {"operationId": "other", "security": [{"oauth": ["forecast.read"]}]}},
            },
        }
    )


@pytest.fixture
def weather() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        srv.route("/weather.json", body=_spec(WEATHER))
        srv.route("/honest.json", body=_spec(GOOGLE_SAYS))
        srv.route("/own-server.json", body=_spec("Read forecasts", token_url="https://auth.weather.example/token"))
        yield srv


def _derive(server: LocalHTTPServer, route: str, tmp_path: Path) -> Report:
    settings = Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=20)
    manifest = card(server, (route, "", {"operation_id": "getForecast"}, {}))
    with Engine(settings) as engine:
        return engine.derive({"name": "weather agent", "resourceAccessManifest": manifest})


def _codes(report: Report) -> list[str]:
    return sorted(d.code for d, _ in report.diagnostics if d.code.startswith("provider-scope-"))


def _permission(report: Report) -> dict[str, Any]:
    perms = report.to_dict()["tiers"]["REQUIRED"]["END_USER"]["permissions"]
    (perm,) = [p for p in perms if p["scope"] == GMAIL]
    return perm


def test_a_foreign_spec_redescribing_a_google_scope_shows_googles_words(
    weather: LocalHTTPServer, tmp_path: Path
) -> None:
    """The spec's "weather" text is replaced by Google's, and both warnings name both sides."""
    report = _derive(weather, "/weather.json", tmp_path)
    assert _codes(report) == ["provider-scope-borrowed", "provider-scope-redescribed"]
    perm = _permission(report)
    assert perm["description"] == GOOGLE_SAYS
    assert WEATHER in perm["warning"]
    assert GOOGLE_SAYS in perm["warning"]
    (access,) = report.accesses
    assert access.scope_descriptions == {GMAIL: GOOGLE_SAYS}
    messages = [d.message for d, _ in report.diagnostics if d.code == "provider-scope-borrowed"]
    assert "api.weather.example" in messages[0]
    assert "Google" in messages[0]


def test_the_consent_screen_shows_the_providers_words_and_the_warning(weather: LocalHTTPServer, tmp_path: Path) -> None:
    """JSON, Markdown and HTML consent all say what Google says gmail.readonly allows, and warn."""
    data = consent_data(_derive(weather, "/weather.json", tmp_path))
    (perm,) = [p for r in data["resources"] for p in r["permissions"] if p["scope"] == GMAIL]
    assert perm["description"] == GOOGLE_SAYS
    assert "not Google's" in perm["warning"]
    md = render_markdown(data)
    assert GOOGLE_SAYS in md
    assert "is not Google's, but asks for Google's scope" in md
    assert "Warning:" in render_html(data)


def test_a_foreign_spec_with_googles_own_words_is_still_borrowing(weather: LocalHTTPServer, tmp_path: Path) -> None:
    """Google's words, but not Google's hosts: only the borrowing warning."""
    report = _derive(weather, "/honest.json", tmp_path)
    assert _codes(report) == ["provider-scope-borrowed"]
    assert _permission(report)["description"] == GOOGLE_SAYS


def test_a_spec_with_its_own_authorization_server_is_left_alone(weather: LocalHTTPServer, tmp_path: Path) -> None:
    """A scope in the spec's own namespace is the spec's to describe: no warning, its own words."""
    report = _derive(weather, "/own-server.json", tmp_path)
    assert _codes(report) == []
    perm = _permission(report)
    assert "warning" not in perm
