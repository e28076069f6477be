"""Step-up evidence (issue 32, item 5): a server's answer saying what a tool needs is evidence of it.

An MCP JSON-RPC log and a HAR, written as an MCP proxy and a browser record them, of calls to the
official SDK's MCPServer on 127.0.0.1 (an OAuth resource server whose only word is its baseline):
``draft`` writes the step-up's scope into the drafted operation and its report (with a policy pin),
``audit`` reports it ``missing-grant`` against a card whose tier lacks it, and not once the pin is applied.
GitHub's REST headers (``X-Accepted-OAuth-Scopes``, ``X-OAuth-Scopes``, ``X-Accepted-GitHub-Permissions``)
are read the same way.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.server.auth.settings import AuthSettings

from ramscope.cli import main
from ramscope.evidence import stepup
from ramscope.evidence.har import read_har
from ramscope.evidence.mcplog import read_mcp_log
from ramscope.evidence.model import EvidenceFormat
from ramscope.evidence.stats import ReadStats
from tests.support.asgi import ASGIApp, ASGIServer
from tests.support.httpserver import LocalHTTPServer
from tests.test_mcp_baseline import _notes_server, _Verifier, issuer

__all__ = ["issuer"]  # the authorization server fixture, shared

WWW = 'Bearer error="insufficient_scope", scope="notes.read notes.write", error_description="Additional scopes"'


@pytest.fixture(scope="module")
def notes(issuer: LocalHTTPServer) -> Iterator[ASGIServer]:
    def app(base: str) -> ASGIApp:
        auth = AuthSettings(
            issuer_url=issuer.base_url,  # type: ignore[arg-type]
            resource_server_url=f"{base}/mcp",  # type: ignore[arg-type]
            required_scopes=["notes.read"],
            validate_token_resource=False,
        )
        return _notes_server(auth=auth, token_verifier=_Verifier()).streamable_http_app(json_response=True)

    with ASGIServer(app) as srv:
        yield srv


def _log(path: Path, url: str) -> Path:
    """An MCP proxy's log: write_note refused with 403 insufficient_scope (a bare HTTP answer line), read_note
    answered with a tool result carrying _meta["mcp/www_authenticate"]."""
    lines: list[dict[str, Any]] = [
        {
            "time": "2026-12-02T01:00:00Z",
            "server": url,
            "direction": "send",
            "headers": {"Authorization": "Bearer opaque-token-1"},
            "message": {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "write_note"}},
        },
        {"time": "2026-12-02T01:00:01Z", "server": url, "direction": "receive", "status": 403,
         "headers": {"WWW-Authenticate": WWW, "Content-Type": "text/plain"}},
        {
            "time": "2026-12-02T01:00:02Z",
            "server": url,
            "direction": "send",
            "headers": {"Authorization": "Bearer opaque-token-1"},
            "message": {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "read_note"}},
        },
        {
            "server": url,
            "direction": "receive",
            "message": {
                "jsonrpc": "2.0",
                "id": 4,
                "result": {
                    "content": [{"type": "text", "text": "sign in again"}],
                    "isError": True,
                    "_meta": {"mcp/www_authenticate": ['Bearer error="insufficient_scope", scope="notes.read"']},
                },
            },
        },
    ]  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    return path


def _draft(tmp_path: Path, *evidence: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    card, report = tmp_path / "draft.card.json", tmp_path / "draft.report.json"
    code = main(
        ["--allow-private-network", "--cache-dir", str(tmp_path / "cache"), "--no-progress", "draft",
         *map(str, evidence), "-o", str(card), "--report", str(report)]
    )  # fmt: skip
    assert code == 0
    return json.loads(card.read_text("utf-8")), json.loads(report.read_text("utf-8"))


def _audit(tmp_path: Path, card: Path, log: Path, capsys: Any, *policy: str) -> dict[str, Any]:
    capsys.readouterr()
    main(
        ["--allow-private-network", "--cache-dir", str(tmp_path / "cache"), "--no-progress", *policy, "audit",
         str(card), str(log), "--format", "json"]
    )  # fmt: skip
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_the_log_reader_keeps_what_each_answer_said(notes: ASGIServer, tmp_path: Path) -> None:
    log = _log(tmp_path / "mcp.jsonl", notes.url("/mcp"))
    with log.open("rb") as f:
        calls = list(read_mcp_log(f, str(log), ReadStats(str(log), EvidenceFormat.MCP)))
    assert [(c.tool, c.status) for c in calls] == [("write_note", 403), ("read_note", None)]
    assert calls[0].step_up is not None
    assert calls[0].step_up.alternatives == (("notes.read", "notes.write"),)
    assert calls[1].step_up is not None
    assert (calls[1].step_up.kind, calls[1].step_up.scopes) == ("mcp/www_authenticate", ["notes.read"])
    assert "opaque-token-1" not in repr(calls)


def test_draft_writes_the_step_up_and_audit_reports_it_missing(notes: ASGIServer, tmp_path: Path, capsys: Any) -> None:
    log = _log(tmp_path / "mcp.jsonl", notes.url("/mcp"))
    card, report = _draft(tmp_path, log)
    described = {op["description"] for op in card["operations"]}
    assert any("Step-up observed" in d and "notes.read notes.write" in d and "mcp.jsonl:1" in d for d in described)
    by_tool = {r["tool"]: r for r in report["step_up"]}
    assert by_tool["write_note"]["alternatives"] == [["notes.read", "notes.write"]]
    assert by_tool["write_note"]["kind"] == "insufficient_scope"
    assert by_tool["read_note"]["kind"] == "mcp/www_authenticate"
    pin = by_tool["write_note"]["pin"][0]
    assert pin["scopes"] == ["notes.read", "notes.write"]
    assert "step-up-observed" in {d["code"] for d in report["diagnostics"]}

    path = tmp_path / "draft.card.json"
    result = _audit(tmp_path, path, log, capsys)
    missing = [d for d in result["diagnostics"] if d["code"] == "missing-grant"]
    assert {m["data"]["access"] for m in missing} == {pin["access"], by_tool["read_note"]["pin"][0]["access"]}
    write = next(m for m in missing if m["data"]["access"] == pin["access"])
    assert "notes.read notes.write" in write["message"]
    assert write["data"]["evidence"].endswith("mcp.jsonl:1")

    # The reviewer adopts the draft's pins: the card's tier now holds what the server asked for.
    policy = tmp_path / "policy.toml"
    pins = [p for r in report["step_up"] for p in r["pin"]]
    policy.write_text(
        "".join(
            f'[[pin]]\naccess = "{p["access"]}"\nscopes = {json.dumps(p["scopes"])}\nreason = "{p["reason"]}"\n'
            for p in pins
        ),
        "utf-8",
    )
    result = _audit(tmp_path, path, log, capsys, "--policy", str(policy))
    assert [d for d in result["diagnostics"] if d["code"] == "missing-grant"] == []


def _har(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}), "utf-8")
    return path


def _entry(url: str, req: list[tuple[str, str]], status: int, resp: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "startedDateTime": "2026-12-02T01:00:00Z",
        "request": {"method": "POST", "url": url, "headers": [{"name": k, "value": v} for k, v in req]},
        "response": {"status": status, "headers": [{"name": k, "value": v} for k, v in resp],
                     "content": {"text": "Forbidden"}},
    }  # fmt: skip


def test_a_har_of_a_refused_tools_call_is_the_tools_step_up(notes: ASGIServer, tmp_path: Path) -> None:
    """Streamable HTTP names the method and the tool in Mcp-Method / Mcp-Name: the 403's challenge is that tool's."""
    url = notes.url("/mcp")
    har = _har(
        tmp_path / "s.har",
        [
            _entry(
                url,
                [("Mcp-Method", "tools/call"), ("Mcp-Name", "write_note"), ("Authorization", "Bearer t")],
                403,
                [("WWW-Authenticate", WWW)],
            )
        ],
    )
    card, report = _draft(tmp_path, har)
    assert [r["spec_url"] for r in report["step_up"]] == [url]
    (rec,) = report["step_up"]
    assert (rec["tool"], rec["alternatives"], rec["evidence"].rsplit(":", 1)[1]) == (
        "write_note",
        [["notes.read", "notes.write"]],
        "1",
    )
    assert card["resources"][0]["spec"]["resource_path"] == "write_note"


def test_githubs_rest_headers_say_what_the_endpoint_accepted() -> None:
    """X-Accepted-OAuth-Scopes: any one of them; X-OAuth-Scopes: what the token had; fine-grained sets by ';'."""
    got = stepup.from_headers(
        {"x-accepted-oauth-scopes": ["repo, public_repo"], "x-oauth-scopes": ["gist, read:org"]}, 200
    )
    assert got is not None
    assert (got.kind, got.alternatives, got.held) == (
        "x-accepted-oauth-scopes",
        (("repo",), ("public_repo",)),
        ("gist", "read:org"),
    )
    fine = stepup.from_headers(
        {"x-accepted-github-permissions": ["repository_projects=write; organization_projects=admin"]}, 403
    )
    assert fine is not None
    assert fine.alternatives == (("repository_projects:write",), ("organization_projects:admin",))
    both = stepup.from_headers({"x-accepted-github-permissions": ["pull_requests=read,contents=read"]}, 200)
    assert both is not None
    assert both.alternatives == (("pull_requests:read", "contents:read"),)


def test_the_har_reader_keeps_githubs_headers_and_nothing_else(tmp_path: Path) -> None:
    har = _har(
        tmp_path / "gh.har",
        [
            _entry(
                "https://api.github.com/repos/o/r/issues",
                [("Authorization", "token ghp_secret")],
                404,
                [("X-Accepted-OAuth-Scopes", "repo"), ("X-OAuth-Scopes", "gist"), ("Set-Cookie", "s=secret")],
            )
        ],
    )
    (call,) = list(read_har(io.BytesIO(har.read_bytes()), "gh.har", ReadStats("gh.har", EvidenceFormat.HAR)))
    assert call.step_up is not None
    assert call.step_up.to_dict() == {
        "kind": "x-accepted-oauth-scopes",
        "alternatives": [["repo"]],
        "held": ["gist"],
        "status": 404,
    }
    assert "secret" not in repr(call)


@pytest.mark.parametrize(
    ("values", "scopes"),
    [
        (['Bearer error="insufficient_scope", scope="a b"'], ["a", "b"]),
        (['Bearer error="invalid_token", scope="a"'], None),  # not a step-up
        (['Bearer error="insufficient_scope"'], None),  # names no scope
        (['Basic realm="x", Bearer error="insufficient_scope", scope="x:y"'], ["x:y"]),
        (['Bearer error="insufficient_scope", scope="a \x1b[31m b"'], ["a", "b"]),  # junk tokens dropped
        (["Bearer " + "x=" * 10_000], None),
    ],
)
def test_only_an_insufficient_scope_challenge_naming_scopes_is_a_step_up(
    values: list[str], scopes: list[str] | None
) -> None:
    got = stepup.from_www_authenticate(values, 403)
    assert (got.scopes if got else None) == scopes
