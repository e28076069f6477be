"""Least privilege that does the job, on Google's real Discovery documents: the examples issue 21
measured wrong (a Drive listing given the Google Photos scope, a user given an app-only or admin
scope, an Apps Script run given a legacy Calendar scope), each a one-access card derived through the
real spec store against the whole of Google. One card holds every access, so the documents are
fetched and indexed once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.outputs.report import AccessRecord, Report
from tests.support.httpserver import LocalHTTPServer

AUTH = "https://www.googleapis.com/auth/"

#: (document, operation id, identity) -> (pick, the narrower options offered, by scope)
CASES: dict[tuple[str, str, str], tuple[list[str] | None, list[str]]] = {
    ("drive.v3", "drive.files.list", "END_USER"): (
        ["drive.readonly"],
        [
            "drive.appdata",
            "drive.file",
            "drive.meet.readonly",
            "drive.metadata",
            "drive.metadata.readonly",
            "drive.photos.readonly",
        ],
    ),
    ("drive.v3", "drive.files.create", "END_USER"): (["drive.file"], ["drive.appdata"]),
    ("drive.v3", "drive.files.copy", "END_USER"): (["drive"], ["drive.appdata", "drive.file", "drive.photos.readonly"]),
    ("drive.v3", "drive.files.export", "END_USER"): (["drive.readonly"], ["drive.file", "drive.meet.readonly"]),
    ("gmail.v1", "gmail.users.messages.list", "END_USER"): (["gmail.readonly"], ["gmail.metadata"]),
    ("chat.v1", "chat.spaces.messages.list", "END_USER"): (["chat.messages.readonly"], ["chat.import"]),
    ("chat.v1", "chat.spaces.messages.list", "AGENT"): (["chat.app.messages.readonly"], []),
    # chat.app.spaces needs an administrator's one-time approval of the app; chat.bot needs none (issue 35).
    ("chat.v1", "chat.spaces.get", "AGENT"): (["chat.bot"], []),
    ("chat.v1", "chat.spaces.get", "END_USER"): (["chat.spaces.readonly"], []),
    ("people.v1", "people.people.get", "END_USER"): (
        ["contacts.readonly"],
        [
            "contacts.other.readonly",
            "directory.readonly",
            "user.addresses.read",
            "user.birthday.read",
            "user.emails.read",
            "user.gender.read",
            "user.organization.read",
            "user.phonenumbers.read",
            "userinfo.email",
            "userinfo.profile",
        ],
    ),
    ("script.v1", "script.scripts.run", "END_USER"): (None, []),
    ("calendar.v3", "calendar.events.insert", "END_USER"): (
        ["calendar.events"],
        ["calendar.app.created", "calendar.events.owned"],
    ),
    ("calendar.v3", "calendar.calendars.insert", "END_USER"): (["calendar.app.created"], []),
    ("calendar.v3", "calendar.freebusy.query", "END_USER"): (["calendar.freebusy"], []),
    ("sheets.v4", "sheets.spreadsheets.create", "END_USER"): (["drive.file"], []),
    ("admin.directory_v1", "directory.users.list", "END_USER"): (["admin.directory.user.readonly"], []),
    # Lists spreadsheets.readonly (a linked chart reads a sheet): a read of another API, no way to write.
    ("slides.v1", "slides.presentations.batchUpdate", "END_USER"): (["presentations"], ["drive.file"]),
}


@pytest.fixture(scope="module")
def report(discovery_documents: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Report]:
    docs = sorted({doc for doc, _, _ in CASES})
    with LocalHTTPServer() as srv:
        for doc in docs:
            srv.route(f"/{doc}.json", body=(discovery_documents / f"{doc}.json").read_bytes())
        resources: list[dict[str, Any]] = []
        operations: list[dict[str, Any]] = []
        accesses: list[dict[str, Any]] = []
        for i, (doc, op, identity) in enumerate(CASES):
            resources.append(
                {
                    "id": f"r{i}",
                    "interaction_protocol": "REST",
                    "owner": "CONSUMER",
                    "display_name": doc,
                    "spec": {"spec_url": srv.url(f"/{doc}.json")},
                }
            )
            operations.append({"id": f"o{i}", "resource": f"r{i}", "api_operation_spec": {"operation_id": op}})
            accesses.append(
                {
                    "id": f"{op}/{identity}",
                    "operation": f"o{i}",
                    "identity_used": identity,
                    "necessity": "OPTIONAL",
                    "access_justification": "what the test checks",
                }
            )
        cache = tmp_path_factory.mktemp("cache")
        with Engine(Settings(cache_dir=cache, allow_private_network=True, timeout=30)) as engine:
            yield engine.derive(
                {
                    "name": "workspace agent",
                    "resourceAccessManifest": {
                        "resources": resources,
                        "operations": operations,
                        "resource_accesses": accesses,
                    },
                }
            )


def _access(report: Report, op: str, identity: str) -> AccessRecord:
    return next(a for a in report.accesses if a.id == f"{op}/{identity}")


@pytest.mark.parametrize(("doc", "op", "identity"), list(CASES))
def test_the_pick_does_the_job_and_narrower_ones_are_offered(report: Report, doc: str, op: str, identity: str) -> None:
    pick, offered = CASES[(doc, op, identity)]
    a = _access(report, op, identity)
    assert a.scopes == ([AUTH + s for s in pick] if pick is not None else None)
    narrower = sorted(s.removeprefix(AUTH) for o in (a.choice or {}).get("narrower", []) for s in o["scopes"])
    assert narrower == offered


def test_gmail_metadata_is_offered_with_its_limits(report: Report) -> None:
    a = _access(report, "gmail.users.messages.list", "END_USER")
    assert a.choice is not None
    (option,) = a.choice["narrower"]
    assert option["limits"] == ["no `q` search", "no message bodies or attachments"]
    assert a.choice["reach"][AUTH + "gmail.readonly"]["level"] == "read"


def test_a_users_chat_listing_never_gets_an_app_only_scope(report: Report) -> None:
    a = _access(report, "chat.spaces.messages.list", "END_USER")
    why = {tuple(x["scopes"]): x["set_aside"] for x in a.alternatives or []}
    assert why[(AUTH + "chat.app.messages.readonly",)] == (
        "only an app authenticating as itself can hold it, not a user's delegation"
    )
    assert why[(AUTH + "chat.messages",)] == "a write permission, where a read one is listed"


def test_an_apps_script_run_is_undetermined_not_a_legacy_scope(report: Report) -> None:
    a = _access(report, "script.scripts.run", "END_USER")
    assert (a.complete, a.reason) == (False, "operation-scopes-caller-defined")
    assert "pin the script's scopes" in (a.reason_message or "")


def test_the_admin_pick_is_said_out_loud(report: Report) -> None:
    a = _access(report, "directory.users.list", "END_USER")
    assert a.choice is not None
    assert a.choice["fallback"] == "admin"
    codes = [(d.code, d.path) for d, _ in report.diagnostics]
    assert any(code == "administrator-permission" for code, _ in codes)


def test_a_read_of_another_api_for_a_write_is_suspect(report: Report) -> None:
    (d,) = [d for d, _ in report.diagnostics if d.code == "provider-data-suspect"]
    assert d.data == {"read": [AUTH + "spreadsheets.readonly"], "write": [AUTH + "presentations"]}


def test_the_tier_keeps_each_access_at_its_level(report: Report) -> None:
    """The OPTIONAL tier asks for the reads the accesses picked, never one write scope covering them."""
    scopes = set(report.tiers["OPTIONAL"].identities["END_USER"].scopes)
    assert AUTH + "gmail.readonly" in scopes
    assert AUTH + "chat.messages.readonly" in scopes
    assert "https://mail.google.com/" not in scopes
    assert AUTH + "chat.messages" not in scopes
