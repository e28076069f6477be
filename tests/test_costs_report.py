"""Costs in the report, on Google's real Discovery documents and the shipped universe: per chosen scope,
per rival, per tier (summed, with the access that causes each trigger), and the snapshot named."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.outputs.report import AccessRecord, Report
from ramscope.providers.costs import cost_table_version
from tests.support.httpserver import LocalHTTPServer

AUTH = "https://www.googleapis.com/auth/"

#: access id -> (document, operation id, necessity)
ACCESSES: dict[str, tuple[str, str, str]] = {
    "read-mail": ("gmail.v1", "gmail.users.messages.list", "OPTIONAL"),
    "add-event": ("calendar.v3", "calendar.events.insert", "REQUIRED"),
    "save-file": ("drive.v3", "drive.files.create", "REQUIRED"),
}


def google_card(srv: LocalHTTPServer, accesses: dict[str, tuple[str, str, str]]) -> dict[str, Any]:
    resources, operations, rows = [], [], []
    for i, (aid, (doc, op, necessity)) in enumerate(accesses.items()):
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
        rows.append(
            {
                "id": aid,
                "operation": f"o{i}",
                "identity_used": "END_USER",
                "necessity": necessity,
                "access_justification": "what the test checks",
            }
        )
    return {
        "name": "costs agent",
        "resourceAccessManifest": {"resources": resources, "operations": operations, "resource_accesses": rows},
    }


@pytest.fixture(scope="module")
def google_server(discovery_documents: Path) -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        for doc in ("gmail.v1", "calendar.v3", "drive.v3"):
            srv.route(f"/{doc}.json", body=(discovery_documents / f"{doc}.json").read_bytes())
        yield srv


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("costs-cache")


@pytest.fixture(scope="module")
def report(google_server: LocalHTTPServer, cache: Path) -> Report:
    with Engine(Settings(cache_dir=cache, allow_private_network=True, timeout=30)) as engine:
        return engine.derive(google_card(google_server, ACCESSES))


def _access(report: Report, aid: str) -> AccessRecord:
    return next(a for a in report.accesses if a.id == aid)


def _cost(a: AccessRecord) -> dict[str, Any]:
    assert a.costs is not None
    (c,) = a.costs
    return c


def test_gmail_messages_list_is_gmail_readonly_restricted_with_the_assessment(report: Report) -> None:
    a = _access(report, "read-mail")
    assert a.scopes == [AUTH + "gmail.readonly"]
    c = _cost(a)
    assert (c["scope"], c["provider"], c["class"]) == (AUTH + "gmail.readonly", "google", "restricted")
    assert c["triggers"] == ["google-verification", "google-security-assessment"]
    assert c["source"] == "https://developers.google.com/workspace/gmail/api/auth/scopes"


def test_calendar_events_insert_is_calendar_events_sensitive(report: Report) -> None:
    a = _access(report, "add-event")
    assert a.scopes == [AUTH + "calendar.events"]
    c = _cost(a)
    assert (c["class"], c["triggers"]) == ("sensitive", ["google-verification"])


def test_drive_files_create_is_drive_file_non_sensitive(report: Report) -> None:
    a = _access(report, "save-file")
    assert a.scopes == [AUTH + "drive.file"]
    c = _cost(a)
    assert (c["class"], c["triggers"]) == ("non-sensitive", [])


def test_a_tier_with_one_restricted_scope_says_so_with_the_access(report: Report) -> None:
    optional = report.tiers["OPTIONAL"].identities["END_USER"].costs
    (assessment,) = [t for t in optional["triggers"] if t["trigger"] == "google-security-assessment"]
    cause = {"scope": AUTH + "gmail.readonly", "accesses": ["read-mail"], "class": "restricted"}
    assert assessment["causes"] == [cause]
    assert assessment["message"] == (
        "needs Google's restricted-scope security assessment because of gmail.readonly (access read-mail)"
    )
    verification = next(t for t in optional["triggers"] if t["trigger"] == "google-verification")
    assert {c["scope"] for c in verification["causes"]} == {AUTH + "gmail.readonly", AUTH + "calendar.events"}
    # The REQUIRED tier holds no Gmail access: no assessment there.
    required = report.tiers["REQUIRED"].identities["END_USER"].costs
    assert [t["trigger"] for t in required["triggers"]] == ["google-verification"]


def test_tier_permissions_carry_their_cost(report: Report) -> None:
    perms = report.tiers["REQUIRED"].identities["END_USER"].permissions
    by_scope = {p["scope"]: p["cost"]["class"] for p in perms}
    assert by_scope == {AUTH + "calendar.events": "sensitive", AUTH + "drive.file": "non-sensitive"}


def test_report_json_names_the_cost_snapshot_and_carries_the_fields(report: Report) -> None:
    doc = report.to_dict()
    assert doc["providers"]["costs"]["version"] == cost_table_version()
    a = next(x for x in doc["accesses"] if x["id"] == "read-mail")
    assert a["costs"][0]["class"] == "restricted"
    assert a["operation_cost"] is None
    assert "costs" in doc["tiers"]["OPTIONAL"]["END_USER"]


def test_the_report_validates_against_its_schema(report: Report) -> None:
    import jsonschema

    from ramscope.schema import load_schema

    jsonschema.Draft202012Validator(load_schema("report")).validate(report.to_dict())


def test_the_consent_screen_carries_the_cost(report: Report) -> None:
    from ramscope.outputs.consent import consent_data, render_markdown

    data = consent_data(report)
    perms = [p for r in data["resources"] for p in r["permissions"]]
    mail = next(p for p in perms if p["scope"] == AUTH + "gmail.readonly")
    assert mail["cost"]["class"] == "restricted"
    md = render_markdown(data)
    row = next(line for line in md.splitlines() if "gmail.readonly" in line and line.startswith("|"))
    assert "Google classes it restricted" in row


def test_the_text_tables_show_cost(report: Report) -> None:
    from ramscope.outputs.text import render_report_text

    text = render_report_text(report, width=250)
    row = next(line for line in text.splitlines() if "read-mail" in line)
    assert "restricted" in row
    tier = next(line for line in text.splitlines() if line.startswith("│OPTIONAL"))
    assert "google-security-assessment: gmail.readonly" in tier


def test_explain_access_says_what_the_permission_costs(report: Report) -> None:
    from ramscope.service.explain import explain_accesses

    out = explain_accesses(report.to_dict(), "read-mail")
    (one,) = out["accesses"]
    assert one["permission"]["costs"][0]["class"] == "restricted"
