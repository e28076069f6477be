"""Issue 35's wrong answers on Google's real Discovery documents: a role-bound scope (a YouTube
partner's, a Classroom teacher's, a reseller's) or a profile slice picked for an ordinary user,
another API's scope picked for a BigQuery job, an admin-approved ``chat.app.*`` scope picked for an
app calling as itself, and Drive v2's ``files.insert`` missing the ``drive.file`` v3's ``files.create``
gets. Each case is an access of one card derived through the real spec store against all of Google."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.derive.policy import Policy, policy_from_dict
from ramscope.errors import PolicyError
from ramscope.outputs.report import AccessRecord, Report
from tests.support.httpserver import LocalHTTPServer

AUTH = "https://www.googleapis.com/auth/"

#: (document, operation id, identity) -> (the picks that do the job, the scopes that must be set aside)
CASES: dict[tuple[str, str, str], tuple[set[str], set[str]]] = {
    # youtube and youtube.force-ssl each do a user's own playlist, caption or channel update.
    ("youtube.v3", "youtube.playlists.insert", "END_USER"): ({"youtube", "youtube.force-ssl"}, {"youtubepartner"}),
    ("youtube.v3", "youtube.captions.list", "END_USER"): ({"youtube.force-ssl"}, {"youtubepartner"}),
    ("youtube.v3", "youtube.channels.update", "END_USER"): ({"youtube", "youtube.force-ssl"}, {"youtubepartner"}),
    ("youtube.v3", "youtube.channels.list", "END_USER"): (
        {"youtube.readonly"},
        {"youtubepartner", "youtubepartner-channel-audit"},
    ),
    # Adding a student or teacher changes the roster; the profile scopes only read a field of the answer.
    ("classroom.v1", "classroom.courses.students.create", "END_USER"): ({"classroom.rosters"}, set()),
    ("classroom.v1", "classroom.courses.teachers.create", "END_USER"): ({"classroom.rosters"}, set()),
    # A student's own guardians are a slice; the students' guardians are what the method lists.
    ("classroom.v1", "classroom.userProfiles.guardians.list", "END_USER"): (
        {"classroom.guardianlinks.students.readonly"},
        set(),
    ),
    # A query job is BigQuery's: Cloud Storage's scopes do only the part a load or extract job reads.
    ("bigquery.v2", "bigquery.jobs.insert", "END_USER"): (
        {"bigquery"},
        {"devstorage.read_only", "devstorage.read_write", "devstorage.full_control"},
    ),
    # chat.app.* need an administrator's one-time approval; chat.bot needs none.
    ("chat.v1", "chat.spaces.get", "AGENT"): ({"chat.bot"}, {"chat.app.spaces"}),
    # Drive v2's files.insert is v3's files.create: a file the app creates is one it created.
    ("drive.v2", "drive.files.insert", "END_USER"): ({"drive.file"}, set()),
    ("reseller.v1", "reseller.customers.get", "END_USER"): ({"apps.order.readonly"}, set()),
}


def _card(srv: LocalHTTPServer, cases: list[tuple[str, str, str]]) -> dict[str, Any]:
    resources: list[dict[str, Any]] = []
    operations: list[dict[str, Any]] = []
    accesses: list[dict[str, Any]] = []
    for i, (doc, op, identity) in enumerate(cases):
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
    return {
        "name": "answers agent",
        "resourceAccessManifest": {"resources": resources, "operations": operations, "resource_accesses": accesses},
    }


def _derive(discovery: Path, cache: Path, cases: list[tuple[str, str, str]], policy: Policy | None = None) -> Report:
    with LocalHTTPServer() as srv:
        for doc in sorted({doc for doc, _, _ in cases}):
            srv.route(f"/{doc}.json", body=(discovery / f"{doc}.json").read_bytes())
        with Engine(Settings(cache_dir=cache, allow_private_network=True, timeout=30), policy=policy) as engine:
            return engine.derive(_card(srv, cases))


@pytest.fixture(scope="module")
def report(discovery_documents: Path, tmp_path_factory: pytest.TempPathFactory) -> Report:
    return _derive(discovery_documents, tmp_path_factory.mktemp("cache"), list(CASES))


def _access(report: Report, op: str, identity: str) -> AccessRecord:
    return next(a for a in report.accesses if a.id == f"{op}/{identity}")


def _short(scopes: list[str] | None) -> list[str]:
    return [s.removeprefix(AUTH) for s in scopes or []]


@pytest.mark.parametrize(("doc", "op", "identity"), list(CASES))
def test_the_pick_does_the_job_for_the_caller(report: Report, doc: str, op: str, identity: str) -> None:
    picks, set_aside = CASES[(doc, op, identity)]
    a = _access(report, op, identity)
    (pick,) = _short(a.scopes)
    assert pick in picks
    why = {tuple(_short(x["scopes"])): x["set_aside"] for x in a.alternatives or []}
    for scope in set_aside:
        assert why[(scope,)], f"{scope} is not set aside"


def test_a_role_bound_scope_says_whose_it_is(report: Report) -> None:
    a = _access(report, "youtube.channels.list", "END_USER")
    why = {tuple(_short(x["scopes"])): x for x in a.alternatives or []}
    partner = why[("youtubepartner",)]
    assert partner["set_aside"].startswith("a role-bound permission (only a YouTube partner (content owner)")
    assert partner["reach"][AUTH + "youtubepartner"]["principal"] == "role"
    audit = why[("youtubepartner-channel-audit",)]["reach"][AUTH + "youtubepartner-channel-audit"]
    assert audit["principal"] == "role"


def test_a_teachers_scope_picked_where_only_teachers_scopes_are_listed_says_so(report: Report) -> None:
    a = _access(report, "classroom.userProfiles.guardians.list", "END_USER")
    assert a.choice is not None
    assert a.choice["fallback"] == "role"
    narrower = [_short(o["scopes"]) for o in a.choice["narrower"]]
    assert ["classroom.guardianlinks.me.readonly"] in narrower
    assert any(d.code == "role-bound-permission" and "teacher" in d.message for d, _ in report.diagnostics)


def test_the_profile_slices_are_offered_not_picked_to_add_a_student(report: Report) -> None:
    a = _access(report, "classroom.courses.students.create", "END_USER")
    assert a.choice is not None
    narrower = sorted(s for o in a.choice["narrower"] for s in _short(o["scopes"]))
    assert narrower == ["classroom.profile.emails", "classroom.profile.photos"]


def test_another_apis_scope_names_that_api(report: Report) -> None:
    a = _access(report, "bigquery.jobs.insert", "END_USER")
    why = {tuple(_short(x["scopes"])): x["set_aside"] for x in a.alternatives or []}
    assert why[("devstorage.read_only",)] == (
        "a scope of another API (storage): it does only that API's part of the operation"
    )


def test_an_admin_approved_chat_scope_says_what_it_needs(report: Report) -> None:
    a = _access(report, "chat.spaces.get", "AGENT")
    alt = next(x for x in a.alternatives or [] if _short(x["scopes"]) == ["chat.app.spaces"])
    assert "one-time approval of the Chat app" in alt["reach"][AUTH + "chat.app.spaces"]["approval"]
    assert alt["set_aside"].startswith("needs a Google Workspace administrator's one-time approval")


def test_the_policy_lets_role_bound_permissions_compete(discovery_documents: Path, tmp_path: Path) -> None:
    cases = [("youtube.v3", "youtube.captions.list", "END_USER")]
    plain = _derive(discovery_documents, tmp_path / "a", cases)
    opted = _derive(discovery_documents, tmp_path / "b", cases, policy_from_dict({"allow_role_bound": True}))
    assert _short(plain.accesses[0].scopes) == ["youtube.force-ssl"]
    listed = {tuple(_short(x["scopes"])): x["set_aside"] for x in opted.accesses[0].alternatives or []}
    assert listed[("youtubepartner",)] is None  # it competes (the lattice decides)
    assert policy_from_dict({"allow_role_bound": True}).to_dict()["allow_role_bound"] is True


def test_the_policy_key_is_a_boolean() -> None:
    with pytest.raises(PolicyError, match="expected true or false"):
        policy_from_dict({"allow_role_bound": "yes"})
