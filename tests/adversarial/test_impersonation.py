"""Display names imitating another provider: a name that names Google, Microsoft, GitHub ... for a spec
not served from that provider's domains is flagged on the consent data, in a diagnostic and on the
rendered pages, next to the provider's own title and host; the travel example's names are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from ramscope.config import Settings
from ramscope.derive import Engine
from ramscope.naming import check_display_name
from ramscope.outputs.consent import consent_data, render_html, render_markdown
from tests.support.httpserver import LocalHTTPServer

from .hostile import card_doc, discovery, dumps, manifest

ROOT = Path(__file__).resolve().parents[2]
CALENDAR = "https://www.googleapis.com/discovery/v1/apis/calendar/v3/rest"


@pytest.mark.parametrize(
    ("name", "url", "title", "status"),
    [
        ("Google Calendar Events", CALENDAR, "Calendar API", "ok"),
        ("Google Maps lookup_weather MCP Tool", "https://mapstools.googleapis.com/mcp", "", "ok"),
        (
            "OpenHolidaysAPI's PublicHolidays",
            "https://openholidaysapi.org/swagger/v1/swagger.json",
            "OpenHolidays API v1",
            "ok",
        ),
        (
            "Jira Issues",
            "https://mycorp.atlassian.net/rest/api/3/openapi.json",
            "The Jira Cloud platform REST API",
            "ok",
        ),
        (
            "GitHub Repos",
            "https://raw.githubusercontent.com/github/rest-api-description/main/api.json",
            "GitHub v3 REST API",
            "ok",
        ),
        ("Outlook Mail", "https://graph.microsoft.com/v1.0/$metadata", "", "ok"),
        ("Google Calendar", "https://evil.example/calendar.json", "Calendar API", "impersonation"),
        ("Gооgle Calendar", "https://evil.example/calendar.json", "", "impersonation"),  # Cyrillic o's
        ("G00gle Drive", "https://evil.example/drive.json", "", "impersonation"),
        ("Goo\u200bgle Drive", "https://evil.example/drive.json", "", "impersonation"),
        # Issue 14, item 16: default-ignorable characters the old list missed.
        ("Goo\u034fgle Calendar", "https://evil.example/calendar.json", "", "impersonation"),
        ("Goo\ufe0fgle Calendar", "https://evil.example/calendar.json", "", "impersonation"),
        ("Goo\U000e0101gle Calendar", "https://evil.example/calendar.json", "", "impersonation"),
        ("Goo\u180bgle Calendar", "https://evil.example/calendar.json", "", "impersonation"),
        ("Goo\U000e0067gle Calendar", "https://evil.example/calendar.json", "", "impersonation"),
        ("Goo\U0001d173gle Calendar", "https://evil.example/calendar.json", "", "impersonation"),
        ("Goo\U0001bca0gle Calendar", "https://evil.example/calendar.json", "", "impersonation"),
        ("GoogleCalendar", "https://api.evil.example/cal.json", "", "impersonation"),
        ("Ｇｏｏｇｌｅ Docs", "https://evil.example/docs.json", "", "impersonation"),  # fullwidth
        ("Slack", "https://slack.com.evil.example/api.json", "", "impersonation"),
        ("Stripe Payments", "https://evilstripe.com/openapi.json", "Stripe API", "impersonation"),
        ("AWS S3", "https://s3.evil.example/openapi.json", "", "impersonation"),
        ("Acme Payroll", "https://api.evil.example/openapi.json", "Evil Corp Data Harvester", "mismatch"),
        ("Acme Payroll", "https://api.acme.example/openapi.json", "Payroll API", "ok"),
    ],
)
def test_check_display_name(name: str, url: str, title: str, status: str) -> None:
    assert check_display_name(name, url=url, title=title).status == status


def _served_discovery(srv: LocalHTTPServer) -> str:
    doc = discovery()
    doc["title"] = "Calendar API"
    srv.route("/calendar.json", body=dumps(doc))
    return srv.url("/calendar.json")


def test_impersonation_on_consent_data_diagnostics_and_pages(tmp_path: Path) -> None:
    """ "Google Calendar" for a spec served from 127.0.0.1: flagged in the report, consent JSON, Markdown, HTML."""
    with LocalHTTPServer() as srv:
        url = _served_discovery(srv)
        m = manifest(url, resource_path="/v1/items", operation_id="items.items.list", display_name="Google Calendar")
        settings = Settings(cache_dir=tmp_path / "c", allow_private_network=True, timeout=10)
        with Engine(settings) as engine:
            report = engine.derive(card_doc(m))
    codes = [d.code for d, _ in report.diagnostics]
    assert "display-name-impersonation" in codes
    diag = next(d for d, _ in report.diagnostics if d.code == "display-name-impersonation")
    assert diag.path.endswith("/resources/0/display_name")
    data = consent_data(report)
    check = data["resources"][0]["name_check"]
    assert check["status"] == "impersonation"
    assert check["claimed_providers"] == ["Google"]
    assert check["provider_title"] == "Calendar API"
    assert check["host"] == "127.0.0.1"
    md = render_markdown(data)
    assert "Provider's name for it: Calendar API" in md
    assert "may be misleading" in md
    page = render_html(data)
    assert "may be misleading" in page
    assert "Calendar API" in page


def test_travel_example_is_not_flagged(tmp_path: Path) -> None:
    """The real example, from its cassette: Google's own Calendar and Maps specs, OpenHolidays' own spec."""
    settings = Settings(
        cache_dir=tmp_path / "c", offline=True, cassette=ROOT / "cassettes" / "travel-agent.yaml", timeout=10
    )
    with Engine(settings) as engine:
        report = engine.derive(ROOT / "examples" / "travel-agent.card.json")
    assert not [d for d, _ in report.diagnostics if d.code.startswith("display-name")]
    data = consent_data(report)
    statuses = {r["id"]: r["name_check"]["status"] for r in data["resources"]}
    assert set(statuses.values()) == {"ok"}, statuses
    titles = {r["id"]: r["name_check"]["provider_title"] for r in data["resources"]}
    assert titles["google-calendar-events-v3"] == "Calendar API"
