"""The HTML consent page in a real browser (headless Chromium): it renders, and no string from a
card or a spec runs as script or loads anything."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.outputs.consent import consent_data, render_html
from tests.support.httpserver import LocalHTTPServer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"),
    reason="Debian's chromium is not installed (CI installs it)",
)

EVIL = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>\u202eexe.txt'


@pytest.fixture(scope="module")
def page(discovery_documents: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("consent")
    with LocalHTTPServer() as srv:
        srv.route("/gmail.json", body=(discovery_documents / "gmail.v1.json").read_bytes())
        srv.route("/calendar.json", body=(discovery_documents / "calendar.v3.json").read_bytes())
        manifest: dict[str, Any] = {
            "resources": [
                {
                    "id": "mail",
                    "interaction_protocol": "REST",
                    "owner": "CONSUMER",
                    "display_name": "Gmail " + EVIL,
                    "spec": {"spec_url": srv.url("/gmail.json")},
                },
                {
                    "id": "cal",
                    "interaction_protocol": "REST",
                    "owner": "THIRD_PARTY",
                    "display_name": "Team calendar",
                    "spec": {"spec_url": srv.url("/calendar.json")},
                },
            ],
            "operations": [
                {"id": "send", "resource": "mail", "api_operation_spec": {"operation_id": "gmail.users.messages.send"}},
                {"id": "ins", "resource": "cal", "api_operation_spec": {"operation_id": "calendar.events.insert"}},
            ],
            "resource_accesses": [
                {
                    "id": "send-itinerary",
                    "operation": "send",
                    "identity_used": "END_USER",
                    "necessity": "REQUIRED",
                    "confirmation_required": True,
                    "access_justification": "To mail you the itinerary. " + EVIL,
                },
                {
                    "id": "add-trip",
                    "operation": "ins",
                    "identity_used": "END_USER",
                    "necessity": "OPTIONAL",
                    "access_justification": "To put the trip on the team calendar.",
                },
            ],
        }
        settings = Settings(cache_dir=out / "cache", allow_private_network=True)
        with Engine(settings) as engine:
            report = engine.derive({"name": "Travel agent", "resourceAccessManifest": manifest})
    html_path = out / "consent.html"
    html_path.write_text(render_html(consent_data(report, description="Books trips.")), "utf-8")
    return html_path


def _chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None, "CI must install Debian's chromium"
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp / 'profile'}",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def test_page_renders_and_runs_nothing(page: Path) -> None:
    """After load, the DOM has no script elements, no injected image, and the title is untouched."""
    proc = _chromium(page.parent, "--virtual-time-budget=2000", "--dump-dom", page.as_uri())
    dom = proc.stdout
    assert "<h1>Travel agent asks for access</h1>" in dom, proc.stderr[-2000:]
    assert "<title>Travel agent asks for access</title>" in dom
    assert "pwned" not in dom.split("</title>")[0]
    assert "<script" not in dom
    assert "<img" not in dom
    assert "&lt;script&gt;" in dom
    assert "gmail.send" in dom
    assert "\u202e" not in dom


def test_screenshot(page: Path) -> None:
    """A screenshot is produced (kept next to the page for a human to look at)."""
    shot = page.parent / "consent.png"
    proc = _chromium(page.parent, "--window-size=1000,1300", f"--screenshot={shot}", page.as_uri())
    assert shot.exists(), proc.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 10_000
    keep = os.environ.get("RAMSCOPE_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)
