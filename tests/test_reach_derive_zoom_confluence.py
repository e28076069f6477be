"""Zoom's and Confluence's picks in the derivation, on specs in the exact shape of their published files
(tests/fixtures/specs/reach/shapes-zoom.json, shapes-confluence.json; the copies measured are named in
its SOURCES.md): Zoom's user level over `:admin` for a user's own data, administrator said out loud where
only `:admin` scopes do the job; Confluence v2's granular scopes, which its file lists as `Current`."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from ramscope.derive.policy import policy_from_dict
from ramscope.outputs.report import Report
from ramscope.providers.reach import ZOOM_SCOPE_LEVELS, Level, Principal, classify, provider_of_servers
from tests.support.httpserver import LocalHTTPServer
from tests.test_reach_derive import REACH, codes, derive, one, server

__all__ = ["derive", "server"]  # the fixtures this module borrows

ZOOM = "/shapes-zoom.json"
CONFLUENCE = "/shapes-confluence.json"


@pytest.mark.parametrize(
    ("operation", "scope"),
    [
        ("meetings", "meeting:read:list_meetings"),
        ("meetingCreate", "meeting:write:meeting"),
        ("meeting", "meeting:read:meeting"),
        ("analytics_details", "cloud_recording:read:recording_analytics_details"),
    ],
    ids=["list-meetings", "create-meeting", "get-meeting", "granular-only"],
)
def test_zoom_a_users_own_data_takes_the_user_level_scope(
    derive: Callable[..., Report], server: LocalHTTPServer, operation: str, scope: str
) -> None:
    """Zoom lists user, :admin (and :master) levels as any one of: END_USER gets the user level, one scope."""
    report, a = one(derive, server, ZOOM, operation)
    assert (a.complete, a.scopes) == (True, [scope])
    assert a.choice["fallback"] is None
    assert a.choice["reach"][scope]["principal"] == "user"
    assert "administrator-permission" not in codes(report)
    assert a.requirements_source is not None
    assert "x-granular-scopes" in a.requirements_source


def test_zoom_classic_scopes_are_options_a_policy_may_prefer(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """Zoom's classic scopes are listed as options (source, reference); `prefer` picks the classic one."""
    _, a = one(derive, server, ZOOM, "meetingCreate")
    classic = [o for o in a.options if o["kind"] == "classic"]
    assert [o["scopes"] for o in classic] == [["meeting:write:admin"], ["meeting:write"]]
    assert {o["source"] for o in classic} == {"x-macro-scopes"}
    assert not any(o["considered"] for o in classic)
    _, a = one(derive, server, ZOOM, "meetingCreate", policy=policy_from_dict({"prefer": ["meeting:write"]}))
    assert a.scopes == ["meeting:write"]


def test_zoom_admin_only_account_setting_says_administrator(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """Phone account settings list only `:admin` scopes: the granular read one, said to be an administrator's."""
    report, a = one(derive, server, ZOOM, "listZoomPhoneAccountSettings")
    assert (a.complete, a.scopes) == (True, ["phone:read:list_account_settings:admin"])
    assert a.choice["fallback"] == "admin"
    assert a.choice["reach"]["phone:read:list_account_settings:admin"]["principal"] == "admin"
    assert a.choice["reach"]["phone:read:list_account_settings:admin"]["source"] == ZOOM_SCOPE_LEVELS
    assert "administrator-permission" in codes(report)


def test_zoom_classic_admin_read_over_admin_write(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Devices list classic scopes only, read or write, both :admin: the read one, as an administrator."""
    report, a = one(derive, server, ZOOM, "listDevices")
    assert a.scopes == ["device:read:admin"]
    assert "administrator-permission" in codes(report)


def test_zoom_agent_holds_a_server_to_server_token(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Zoom's file declares only the user's authorization code; Zoom documents Server-to-Server OAuth (the
    account-credentials grant) for an app's own token: an AGENT gets its scope through that grant, with
    the quirk's source in the scheme, never by borrowing a user's delegation."""
    _, a = one(derive, server, ZOOM, "meetings", "AGENT")
    assert (a.complete, a.scopes) == (True, ["meeting:read:list_meetings"])
    assert a.requirements[0][0]["scheme"] == "openapi_oauth"
    # The same file on a server that is not Zoom's gets no such grant: the AGENT stays undetermined.
    doc = json.loads((REACH / "shapes-zoom.json").read_bytes())
    doc["servers"] = [{"url": "https://zoom-lookalike.example/v2"}]
    server.route("/not-zoom.json", body=json.dumps(doc).encode())
    report, b = one(derive, server, "/not-zoom.json", "meetings", "AGENT")
    assert (b.complete, b.scopes) == (False, None)
    assert "access-undetermined" in codes(report)


def test_zoom_levels_by_suffix_only_on_zooms_servers() -> None:
    """`:admin` is Zoom's level rule on api.zoom.us only; elsewhere the generic rules class it as administration."""
    assert provider_of_servers(["https://api.zoom.us/v2"]) == "zoom"
    assert provider_of_servers(["https://zoom.us.example.com/v2"]) == ""
    zoom = classify("meeting:read:list_meetings:admin", provider="zoom")
    assert (zoom.level, zoom.principal) == (Level.READ, Principal.ADMIN)
    assert classify("meeting:write:meeting:master", provider="zoom").level is Level.WRITE
    assert classify("meeting:read", provider="zoom").principal is Principal.USER
    # The action is the second part: `update` in a data name does not make a read a write.
    assert classify("phone:read:list_firmware_update_rules:admin", provider="zoom").level is Level.READ
    classic_mid = classify("meeting_token:read:admin:local_archiving", provider="zoom")
    assert (classic_mid.level, classic_mid.principal) == (Level.READ, Principal.ADMIN)
    assert classify("event:admin").principal is Principal.USER


@pytest.mark.parametrize(
    ("operation", "scopes"),
    [
        ("getPageById", ["read:page:confluence"]),
        ("createPage", ["write:page:confluence"]),
        ("deletePage", ["delete:page:confluence"]),
        ("getSpaces", ["read:space:confluence"]),
        ("createSpaceProperty", ["read:space:confluence", "write:space:confluence"]),
    ],
)
def test_confluence_v2_granular_scopes(
    derive: Callable[..., Report], server: LocalHTTPServer, operation: str, scopes: list[str]
) -> None:
    """Confluence v2: the `Current` granular scopes its file lists (all of them where it lists two)."""
    _, a = one(derive, server, CONFLUENCE, operation)
    assert (a.complete, a.scopes) == (True, scopes)
    assert a.requirements_source == "spec"
    assert not [o for o in a.options if o["kind"] == "granular"]


def test_confluence_prefer_granular_changes_nothing(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """A policy preferring `*:confluence` picks the same scope: v2 has no classic scope to prefer it over."""
    _, a = one(derive, server, CONFLUENCE, "getPageById", policy=policy_from_dict({"prefer": ["*:confluence"]}))
    assert a.scopes == ["read:page:confluence"]
