"""The JavaScript/TypeScript code reader: real SDK idioms (tests/fixtures/code/js/, written as each SDK's
docs write them), what it cannot tell, the comment marker, hostile input, and that nothing is run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ramscope.evidence.code_js import JsLimits, read_js
from ramscope.evidence.model import EvidenceFormat, ObservedCall, UnresolvedCall

FIXTURES = Path(__file__).parent / "fixtures" / "code" / "js"
_DIALECT = {".js": "js", ".mjs": "js", ".cjs": "js", ".jsx": "jsx", ".ts": "ts", ".tsx": "tsx"}


def _read(name: str) -> list[ObservedCall | UnresolvedCall]:
    path = FIXTURES / name
    return list(read_js(path.read_bytes(), name, dialect=_DIALECT[path.suffix]))


def _calls(name: str) -> list[tuple[int, str, str, str]]:
    """(line, method, url, operation) of each resolved call."""
    return [(c.entry, c.method, c.url, c.operation) for c in _read(name) if isinstance(c, ObservedCall)]


def _unresolved(name: str) -> list[tuple[int, str, str]]:
    return [(c.line, c.via, c.reason) for c in _read(name) if isinstance(c, UnresolvedCall)]


def _src(code: str, dialect: str = "ts") -> list[ObservedCall | UnresolvedCall]:
    return list(read_js(code.encode(), "x." + dialect, dialect=dialect))


# -- Google APIs Node client ----------------------------------------------------------------------


def test_gmail_quickstart_in_commonjs_gives_discovery_method_ids_and_the_discovery_spec() -> None:
    calls = [c for c in _read("gmail_quickstart.js") if isinstance(c, ObservedCall)]
    assert [(c.entry, c.operation) for c in calls] == [
        (11, "gmail.users.labels.list"),
        (20, "gmail.users.messages.send"),
        (29, "gmail.users.messages.list"),  # google.gmail('v1'): the version as a bare string
    ]
    for c in calls:
        assert c.spec == "https://www.googleapis.com/discovery/v1/apis/gmail/v1/rest"
        assert c.via == "googleapis"
        assert c.url == "https://gmail.googleapis.com/"
        assert c.fmt is EvidenceFormat.CODE
        assert c.source == "gmail_quickstart.js"
    assert calls[1].site == "gmail_quickstart.js:20"


def test_google_clients_in_class_fields_typed_parameters_and_module_constants() -> None:
    got = {(c.entry, c.operation, c.spec.rsplit("/apis/", 1)[-1]) for c in _read("google_workspace.ts")}
    assert got == {
        (14, "calendar.events.list", "calendar/v3/rest"),  # this.calendar assigned in the constructor
        (25, "drive.files.list", "drive/v3/rest"),  # a class field
        (31, "sheets.spreadsheets.values.get", "sheets/v4/rest"),  # sheets: sheets_v4.Sheets
        (36, "drive.files.create", "drive/v3/rest"),
        (41, "sheets.spreadsheets.values.append", "sheets/v4/rest"),
    }


def test_a_google_client_passed_on_untyped_is_named_by_its_variable_or_unresolved() -> None:
    found = _src(
        "import { google } from 'googleapis';\n"
        "export const a = (gmail) => gmail.users.drafts.create({ userId: 'me' });\n"
        "export const b = (svc) => svc.users.drafts.create({ userId: 'me' });\n",
        "js",
    )
    assert isinstance(found[0], ObservedCall)
    assert found[0].operation == "gmail.users.drafts.create"
    assert found[0].spec == ""  # the version is not told: the host index decides
    assert isinstance(found[1], UnresolvedCall)
    assert "cannot be told" in found[1].reason
    assert found[1].line == 3


# -- Microsoft Graph --------------------------------------------------------------------------------


def test_graph_javascript_client_chains_with_query_options_and_versions() -> None:
    assert _calls("graph_client.js") == [
        (12, "GET", "https://graph.microsoft.com/v1.0/me/messages", "GET /me/messages"),
        (17, "POST", "https://graph.microsoft.com/v1.0/me/sendMail", "POST /me/sendMail"),
        (21, "GET", "https://graph.microsoft.com/beta/users/{userId}", "GET /users/{userId}"),
        (25, "DELETE", "https://graph.microsoft.com/v1.0/me/events/{id}", "DELETE /me/events/{id}"),
        (29, "PATCH", "https://graph.microsoft.com/v1.0/me/drive/items/{id}", "PATCH /me/drive/items/{id}"),
    ]


def test_graph_kiota_typescript_sdk_builder_chains() -> None:
    assert [(line, op) for line, _, _, op in _calls("graph_kiota.ts")] == [
        (11, "GET /me"),
        (12, "GET /me/messages"),
        (17, "POST /users/{user-id}/sendMail"),
        (21, "GET /users/{user-id}/mailFolders/{mailFolder-id}/messages"),
    ]
    assert {c.via for c in _read("graph_kiota.ts")} == {"msgraph-sdk"}


# -- GitHub ------------------------------------------------------------------------------------------


def test_octokit_rest_request_and_paginate_give_rest_operation_ids() -> None:
    base = "https://api.github.com/repos/{owner}/{repo}"
    assert _calls("octokit.ts") == [
        (7, "POST", f"{base}/issues", "issues/create"),
        (12, "GET", base, "repos/get"),
        (16, "POST", f"{base}/issues/{{issue_number}}/comments", "issues/create-comment"),
        (25, "GET", f"{base}/issues", "issues/list-for-repo"),  # paginate(octokit.rest.issues.listForRepo)
        (26, "GET", f"{base}/issues", "issues/list-for-repo"),  # paginate("GET /repos/{owner}/{repo}/issues")
        (31, "GET", f"{base}/pulls", "pulls/list"),  # octokit.pulls.list (before .rest)
    ]


def test_actions_github_get_octokit_and_github_script_injected_client() -> None:
    assert [op for *_, op in _calls("actions_github.js")] == ["pulls/get", "issues/add-labels"]
    assert [op for *_, op in _calls("github_script.js")] == ["issues/list-comments", "issues/create-comment"]


def test_an_octokit_method_octokit_does_not_have_is_unresolved_not_guessed() -> None:
    found = _src("import { Octokit } from '@octokit/rest';\nconst o = new Octokit();\no.rest.issues.frobnicate({});\n")
    assert len(found) == 1
    assert isinstance(found[0], UnresolvedCall)
    assert "issues.frobnicate" in found[0].reason


def test_octokit_base_url_for_github_enterprise_server() -> None:
    (call,) = _src(
        "import { Octokit } from '@octokit/rest';\n"
        "const o = new Octokit({ baseUrl: 'https://github.example.com/api/v3' });\n"
        "await o.rest.repos.get({ owner, repo });\n"
    )
    assert isinstance(call, ObservedCall)
    assert call.url == "https://github.example.com/api/v3/repos/{owner}/{repo}"
    assert call.operation == "repos/get"


# -- Slack --------------------------------------------------------------------------------------------


def test_slack_bolt_handlers_and_app_client() -> None:
    assert _calls("slack_bolt.js") == [
        (10, "POST", "https://slack.com/api/chat.postMessage", "chat.postMessage"),  # say(...)
        (15, "POST", "https://slack.com/api/views.open", "views.open"),  # ({ client }) => client.views.open
        (20, "POST", "https://slack.com/api/chat.postMessage", "chat.postMessage"),
        (25, "POST", "https://slack.com/api/conversations.history", "conversations.history"),  # app.client
    ]


def test_bolt_say_posts_a_message_and_a_say_elsewhere_does_not() -> None:
    bolt = _src(
        "const { App } = require('@slack/bolt');\nconst app = new App({});\n"
        "app.message('hello', async ({ message, say }) => { await say(`Hey <@${message.user}>`); });\n",
        "js",
    )
    assert [(c.entry, c.operation, c.via) for c in bolt] == [(3, "chat.postMessage", "slack-bolt")]  # type: ignore[union-attr]
    assert _src("export const f = async ({ say }) => say('hi');\n", "js") == []


def test_slack_web_client_and_api_call() -> None:
    assert [op for *_, op in _calls("slack_web.mjs")] == [
        "chat.postMessage",
        "reactions.add",  # web.apiCall('reactions.add', ...)
        "files.completeUploadExternal",  # files.uploadV2 ends in it
    ]


def test_a_slack_member_that_is_no_web_api_method_is_unresolved() -> None:
    found = _src("import { WebClient } from '@slack/web-api';\nconst w = new WebClient();\nw.chat.shout({});\n")
    assert [(type(c).__name__, getattr(c, "reason", "")) for c in found] == [
        ("UnresolvedCall", "chat.shout is not a Slack Web API method")
    ]


# -- plain HTTP -------------------------------------------------------------------------------------


def test_fetch_axios_got_ky_and_https_with_templates_constants_and_base_urls() -> None:
    assert _calls("http_clients.mjs") == [
        (11, "GET", "https://api.example.com/v2/items/{id}", ""),
        (12, "POST", "https://api.example.com/v2/items", ""),
        (13, "GET", "https://api.github.com/repos/{owner}/{repo}", ""),
        (14, "PATCH", "https://api.example.com/v2/items/{id}", ""),
        (15, "GET", "https://api.acme.test/v1/users/{id}", ""),  # axios.create({baseURL}) + encodeURIComponent(id)
        (16, "DELETE", "https://api.acme.test/v1/sessions/current", ""),
        (17, "POST", "https://httpbin.org/anything", ""),
        (18, "PUT", "https://things.test/v3/things/{id}", ""),  # new URL(path, base)
        (19, "GET", "https://api.example.com/v2/search", ""),  # the query goes
        (20, "POST", "https://hooks.example.org/notify", ""),
        (21, "GET", "https://status.example.org/health", ""),
    ]
    assert [c.via for c in _read("http_clients.mjs") if isinstance(c, ObservedCall)] == [
        "fetch",
        "fetch",
        "axios",
        "axios",
        "axios",
        "axios",
        "got",
        "ky",
        "got",
        "https",
        "https",
    ]


def test_what_plain_http_cannot_tell_is_unresolved_with_its_line_and_reason() -> None:
    assert _unresolved("http_clients.mjs") == [
        (26, "fetch", "the URL comes from url, a parameter"),
        (27, "fetch", "the URL comes from the environment variable WEBHOOK_URL"),
        (28, "axios", "the HTTP method is computed at run time"),
        (29, "fetch", "the URL's host is built at run time"),
        (30, "fetch", "a relative URL and no base URL the code names"),
    ]


def test_commonjs_require_and_node_fetch() -> None:
    assert _calls("http_clients.cjs") == [
        (7, "POST", "https://api.notion.com/v1/databases/{databaseId}/query", ""),
        (11, "GET", "https://api.notion.com/v1/pages/{id}", ""),
    ]


def test_an_environment_variable_with_a_literal_default_is_the_default() -> None:
    """``process.env.GITLAB_API_URL || "https://gitlab.com/api/v4"`` (the MCP GitLab server): what the code
    calls unless configured; a default that is itself computed stays unresolved."""
    found = _src(
        "const API = process.env.GITLAB_API_URL || 'https://gitlab.com/api/v4';\n"
        "await fetch(`${API}/projects/${id}/issues`, { method: 'POST' });\n"
        "await fetch(process.env.HOOK ?? other);\n"
        "const org = x ? `https://api.github.com/repos/${o}/${r}/forks?organization=${x}` : "
        "`https://api.github.com/repos/${o}/${r}/forks`;\nawait fetch(org, { method: 'POST' });\n",
        "js",
    )
    assert [(type(c).__name__, getattr(c, "url", "")) for c in found] == [
        ("ObservedCall", "https://gitlab.com/api/v4/projects/{id}/issues"),
        ("UnresolvedCall", ""),
        ("ObservedCall", "https://api.github.com/repos/{o}/{r}/forks"),  # the branches differ in the query only
    ]


# -- MCP and A2A ------------------------------------------------------------------------------------


def test_mcp_client_tool_calls_on_the_server_the_transport_names() -> None:
    found = _read("mcp_client.ts")
    tools = [(c.entry, c.method, c.url, c.tool) for c in found if isinstance(c, ObservedCall)]
    assert tools == [
        (14, "tools/call", "https://mcp.example.com/mcp", "create_issue"),
        (28, "tools/call", "https://tools.example.net/sse", "search_docs"),  # this.mcp, connected in a method
    ]
    assert [(line, reason) for line, _, reason in _unresolved("mcp_client.ts")] == [
        (35, "MCP tool 'read_file' on a stdio server (no URL)"),
        (36, "the MCP tool name is computed at run time"),
    ]


def test_a2a_client_from_card_url() -> None:
    (call,) = _read("a2a_client.ts")
    assert isinstance(call, ObservedCall)
    assert (call.method, call.url, call.operation, call.via) == (
        "POST",
        "https://travel.example.com/.well-known/agent-card.json",
        "message/send",
        "a2a-js",
    )


# -- markers, dialects, bounds ------------------------------------------------------------------------


def test_the_comment_marker_names_an_unresolved_call() -> None:
    found = _read("markers.ts")
    assert [(c.entry, c.method, c.url, c.operation) for c in found if isinstance(c, ObservedCall)] == [
        (6, "POST", "https://api.example.com/v1/items", ""),
        (7, "GET", "", "GET /v1/items/{id}"),
        (9, "", "", "gmail.users.messages.send"),  # client[method](...): the marker says what it is
    ]
    assert [c.via for c in found if isinstance(c, ObservedCall)] == ["fetch", "axios", "marker"]
    (tool,) = _src("// ramscope: tool create_issue @ https://mcp.example.com/mcp\nawait mcp.callTool(args);\n")
    assert isinstance(tool, ObservedCall)
    assert (tool.method, tool.url, tool.tool) == ("tools/call", "https://mcp.example.com/mcp", "create_issue")
    assert _unresolved("markers.ts") == [(10, "fetch", "the URL comes from endpoint, a parameter")]


def test_a_marker_in_a_string_is_no_marker() -> None:
    found = _src("const s = '// ramscope: POST https://evil.example/x';\nawait fetch(u);\n", "js")
    assert [type(c).__name__ for c in found] == ["UnresolvedCall"]


def test_jsx_and_tsx_dialects() -> None:
    jsx = "export const A = () => <button onClick={() => fetch('https://api.example.com/a', {method: 'POST'})} />;\n"
    tsx = (
        "export function B(): JSX.Element { const f = async () => { await fetch<string>"
        "('https://api.example.com/b'); }; return <div onClick={f as any}>{(x as number)}</div>; }\n"
    )
    (a,) = _src(jsx, "jsx")
    (b,) = _src(tsx.replace("fetch<string>", "fetch"), "tsx")
    assert isinstance(a, ObservedCall)
    assert (a.method, a.url) == ("POST", "https://api.example.com/a")
    assert isinstance(b, ObservedCall)
    assert b.url == "https://api.example.com/b"


def test_a_file_naming_no_client_is_not_parsed() -> None:
    """The prefilter: a file without any client, library, URL or marker word yields nothing, unparsed."""
    assert (
        list(read_js(b"const a = [" * 100 + b"1" + b"]" * 100, "a.js", dialect="js", limits=JsLimits(max_nodes=1)))
        == []
    )
    (u,) = read_js(b"fetch(u);\n", "b.js", dialect="js", limits=JsLimits(max_nodes=1))
    assert isinstance(u, UnresolvedCall)  # parsed: over the node bound


def test_an_unknown_dialect_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="dialect"):
        list(read_js(b"", "x", dialect="coffee"))


def test_invalid_utf8_and_garbage_never_raise() -> None:
    junk = b"\xff\xfe\x00 fetch('https://api.example.com/\xff\xfe') }}}{{{ ((( `${ \x1b[31m"
    found = list(read_js(junk, "junk.js", dialect="js"))
    assert all(isinstance(c, ObservedCall | UnresolvedCall) for c in found)
    assert list(read_js(b"", "empty.ts", dialect="ts")) == []


def test_unresolved_text_is_escaped_and_short() -> None:
    (u,) = _src("await fetch(url + '\\u202e\x1b[2J' + 'x'.repeat(500), {});\n" + "//" + "y" * 300, "js")
    assert isinstance(u, UnresolvedCall)
    assert "\x1b" not in u.text
    assert len(u.text) <= 160


def test_a_file_over_the_byte_bound_is_one_unresolved_call() -> None:
    found = list(read_js(b"fetch('https://a.test/');\n" * 100, "big.js", dialect="js", limits=JsLimits(max_bytes=1000)))
    assert len(found) == 1
    assert isinstance(found[0], UnresolvedCall)
    assert "larger than 1000 bytes" in found[0].reason


def test_deep_nesting_and_a_huge_file_are_bounded() -> None:
    deep = b"fetch(u);\nconst a = " + b"[" * 30_000 + b"]" * 30_000 + b";\n"
    calls = b"f(" * 5_000 + b"fetch(u)" + b")" * 5_000 + b";\n"
    members = b"x" + b".a" * 50_000 + b"();\n"
    for src in (deep, calls, members):
        found = list(read_js(src, "deep.js", dialect="js"))
        assert all(isinstance(c, ObservedCall | UnresolvedCall) for c in found)
    found = list(read_js(deep, "deep.js", dialect="js", limits=JsLimits(max_nodes=10_000)))
    assert [c.reason for c in found if isinstance(c, UnresolvedCall)] == [
        "syntax tree larger than 10000 nodes: not read"
    ]
    huge = b"await fetch(`https://api.example.com/items/${id}`);\n" * 20_000  # 1 MB, 20,000 calls
    found = list(read_js(huge, "huge.js", dialect="js", limits=JsLimits(max_calls=1000)))
    assert len(found) == 1001
    assert isinstance(found[-1], UnresolvedCall)
    assert "more than 1000 calls" in found[-1].reason


def test_parse_time_is_bounded() -> None:
    src = b"fetch(u);\nlet a = " + b"[" * 200_000 + b"]" * 200_000 + b";\n"
    found = list(read_js(src, "slow.js", dialect="js", limits=JsLimits(parse_seconds=0.0)))
    assert len(found) == 1
    assert isinstance(found[0], UnresolvedCall)
    assert "parsing took longer" in found[0].reason


def test_a_name_bound_to_itself_is_cut() -> None:
    (u,) = _src("let url = 'https://a.test/';\nurl = url + url;\nawait fetch(url);\n", "js")
    assert isinstance(u, UnresolvedCall)


def test_nothing_is_imported_or_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Source that would write a file when run (top-level code, an import side effect, a postinstall
    hook's shape) is read as text: no file appears, no process starts."""
    marker = tmp_path / "pwned"
    code = (
        f"const fs = require('fs');\nfs.writeFileSync({json.dumps(str(marker))}, 'ran');\n"
        f"import('child_process').then((cp) => cp.execSync('touch {marker}'));\n"
        "fetch('https://api.example.com/after');\n"
    )

    def no_process(*_a: object, **_k: object) -> None:
        raise AssertionError("a process was started")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    found = _src(code, "js")
    assert [c.url for c in found if isinstance(c, ObservedCall)] == ["https://api.example.com/after"]
    assert not marker.exists()


def test_start_up_does_not_load_tree_sitter() -> None:
    probe = (
        "import sys\nimport ramscope.evidence.code_js\nfrom ramscope.cli import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('tree_sitter')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


# -- SDKs read from method tables (Stripe, Notion, Linear, Asana) ------------------------------------


def test_stripe_notion_linear_and_asana_methods_from_their_tables() -> None:
    assert _calls("saas_sdks.ts") == [
        (12, "POST", "https://api.stripe.com/v1/customers", ""),
        (13, "POST", "https://api.stripe.com/v1/billing_portal/sessions", ""),
        (14, "GET", "https://api.stripe.com/v1/payment_intents/{id}", ""),
        (19, "POST", "https://api.notion.com/v1/databases/{database_id}/query", ""),  # the 2.x SDK's method
        (20, "POST", "https://api.notion.com/v1/pages", ""),
        (21, "PATCH", "https://api.notion.com/v1/blocks/{block_id}/children", ""),
        (22, "POST", "https://api.notion.com/v1/search", ""),
        (26, "POST", "https://api.linear.app/graphql", "Query.issues"),
        (27, "POST", "https://api.linear.app/graphql", "Mutation.issueCreate"),
        (34, "POST", "https://app.asana.com/api/1.0/tasks", "createTask"),
    ]


def test_stripe_commonjs_factory_and_a_result_read_on_are_one_call() -> None:
    assert _calls("stripe_cjs.js") == [(4, "POST", "https://api.stripe.com/v1/charges", "")]
    assert _unresolved("stripe_cjs.js") == [
        (5, "stripe", "customers.frobnicate is not in the stripe SDK's method table")
    ]


def test_the_shipped_tables_name_their_packages() -> None:
    data = Path(__file__).resolve().parents[1] / "src" / "ramscope" / "evidence" / "data"
    notice = (data / "NOTICE.md").read_text("utf-8")
    for f in sorted(data.glob("*.json")):
        doc = json.loads(f.read_text("utf-8"))
        assert doc["source"], f.name
        assert f"`{f.name}`" in notice, f.name
        for pkg in doc["source"]:
            assert pkg.rsplit("@", 1)[0] in notice, (f.name, pkg)


def test_factories_helpers_and_methods_that_return_clients_or_urls() -> None:
    found = _src(
        "import { google } from 'googleapis';\nimport { WebClient } from '@slack/web-api';\n"
        "function gmailFor(auth) { return google.gmail({ version: 'v1', auth }); }\n"
        "const slackFor = (token: string) => new WebClient(token);\n"
        "const itemUrl = (id: string) => `https://api.example.com/v1/items/${id}`;\n"
        "class Bot {\n  private getClient() { return slackFor(process.env.T!); }\n  async run(auth) {\n"
        "    await gmailFor(auth).users.threads.list({ userId: 'me' });\n"
        "    await this.getClient().chat.postMessage({ channel: 'c' });\n"
        "    await fetch(itemUrl('42'), { method: 'DELETE' });\n  }\n}\n"
        "function loop(n) { return loop(n - 1); }\nloop(3).x.y();\n"
    )
    assert [(c.entry, c.method, c.url, c.operation) for c in found if isinstance(c, ObservedCall)] == [
        (9, "", "https://gmail.googleapis.com/", "gmail.users.threads.list"),
        (10, "POST", "https://slack.com/api/chat.postMessage", "chat.postMessage"),
        (11, "DELETE", "https://api.example.com/v1/items/{id}", ""),
    ]
    assert len(found) == 3


def test_a_request_helper_whose_path_is_a_parameter_is_unresolved() -> None:
    found = _src(
        "const BASE = 'https://api.example.com/v1';\n"
        "export async function api(path: string, init?: RequestInit) { return fetch(`${BASE}${path}`, init); }\n"
        "export const get = (endpoint) => fetch(BASE + '/' + endpoint);\n"
    )
    assert [(type(c).__name__, getattr(c, "reason", "")) for c in found] == [
        ("UnresolvedCall", "the path comes from path, built at run time"),
        ("UnresolvedCall", "the path comes from endpoint, built at run time"),
    ]


def test_options_that_cannot_be_read_leave_the_method_unknown_not_get() -> None:
    found = _src(
        "export const a = (init: RequestInit) => fetch('https://api.example.com/a', init);\n"
        "export const b = (o) => fetch('https://api.example.com/b', { ...o, headers: {} });\n"
        "export const c = (o) => fetch('https://api.example.com/c', { ...o, method: 'PUT' });\n"
    )
    assert [getattr(c, "reason", None) or c.method for c in found] == [  # type: ignore[union-attr]
        "the HTTP method is computed at run time",
        "the HTTP method is computed at run time",
        "PUT",
    ]


def test_google_workspace_client_libraries_give_discovery_methods() -> None:
    found = [c for c in _read("google_chat_client.mjs") if isinstance(c, ObservedCall)]
    assert [(c.entry, c.method, c.url, c.operation, c.spec) for c in found] == [
        (12, "GET", "https://chat.googleapis.com/v1/spaces", "chat.spaces.list", CHAT_SPEC),  # spacePath(): no call
        (
            22,
            "POST",
            "https://chat.googleapis.com/v1/spaces/{spacesId}/messages",
            "chat.spaces.messages.create",
            CHAT_SPEC,
        ),
    ]
    assert {c.via for c in found} == {"google-apps"}


CHAT_SPEC = "https://www.googleapis.com/discovery/v1/apis/chat/v1/rest"


def test_globals_and_results_in_a_googleapis_file_are_no_calls() -> None:
    found = _src(
        "import { google } from 'googleapis';\n"
        "process.stdout.write('x');\nconsole.log.apply(null, []);\n"
        "export function show(res) { res.data.items.forEach((i) => i); }\n"
        "export const f = (service) => service.users.list({});\n",
        "js",
    )
    assert [(type(c).__name__, getattr(c, "line", 0)) for c in found] == [("UnresolvedCall", 5)]


def test_names_are_scoped_to_their_function() -> None:
    """Each handler has its own ``url`` (as in the MCP reference servers): not "several values"."""
    found = _src(
        "async function geocode(address: string) {\n"
        "  const url = new URL('https://maps.googleapis.com/maps/api/geocode/json');\n"
        "  url.searchParams.append('address', address);\n  return fetch(url.toString());\n}\n"
        "async function places(q: string) {\n"
        "  const url = new URL('https://maps.googleapis.com/maps/api/place/textsearch/json');\n"
        "  return fetch(url.toString());\n}\n"
        "let client;\nfunction init() { client = axios.create({ baseURL: 'https://api.acme.test' }); }\n"
        "async function send(url) { await fetch(url); await client.post('/messages'); }\n"
        "import axios from 'axios';\n"
    )
    assert [(getattr(c, "entry", 0) or c.line, getattr(c, "url", ""), getattr(c, "reason", "")) for c in found] == [  # type: ignore[union-attr]
        (4, "https://maps.googleapis.com/maps/api/geocode/json", ""),
        (8, "https://maps.googleapis.com/maps/api/place/textsearch/json", ""),
        (12, "", "the URL comes from url, a parameter"),  # the parameter, not the handlers' url
        (12, "https://api.acme.test/messages", ""),  # let client; assigned in init()
    ]


def test_placeholders_are_named_for_what_is_substituted() -> None:
    (c,) = _src(
        "const NWS = 'https://api.weather.gov';\n"
        "await fetch(`${NWS}/points/${latitude.toFixed(4)},${longitude.toFixed(4)}/${encodeURIComponent(office)}`);\n",
        "js",
    )
    assert isinstance(c, ObservedCall)
    assert c.url == "https://api.weather.gov/points/{latitude},{longitude}/{office}"


def test_undici_and_superagent() -> None:
    found = _src(
        "import { request, fetch as ufetch } from 'undici';\nimport superagent from 'superagent';\n"
        "await request('https://api.example.com/u', { method: 'PUT' });\n"
        "await ufetch('https://api.example.com/f');\n"
        "await superagent.post('https://api.example.com/s').send({ a: 1 });\n",
        "js",
    )
    assert [(c.entry, c.method, c.url, c.via) for c in found] == [  # type: ignore[union-attr]
        (3, "PUT", "https://api.example.com/u", "undici"),
        (4, "GET", "https://api.example.com/f", "fetch"),
        (5, "POST", "https://api.example.com/s", "superagent"),
    ]


def test_the_ai_sdk_mcp_client_names_its_server_but_no_tool() -> None:
    (u,) = _src(
        "import { experimental_createMCPClient } from 'ai';\n"
        "const mcpClient = await experimental_createMCPClient({\n"
        "  transport: { type: 'sse', url: 'https://mcp.example.com/sse' } });\n"
        "const tools = await mcpClient.tools();\n"
    )
    assert isinstance(u, UnresolvedCall)
    assert (u.line, u.via) == (4, "ai-sdk")
    assert "MCP server https://mcp.example.com/sse" in u.reason


def test_a_reader_failure_is_an_unresolved_call_not_an_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    from ramscope.evidence import code_js

    def broken(*_a: object, **_k: object) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(code_js._Reader, "_call", broken)
    (u,) = _src("await fetch('https://api.example.com/x');\n", "js")
    assert isinstance(u, UnresolvedCall)
    assert u.reason == "the reader could not finish this file (KeyError)"


def test_a_declaration_file_has_no_calls() -> None:
    src = b"declare function fetch(url: 'https://api.example.com/x'): Promise<Response>;\nfetch('https://a.test/');\n"
    assert list(read_js(src, "types/index.d.ts", dialect="ts")) == []
    assert len(list(read_js(src, "types/index.ts", dialect="ts"))) == 1


def test_a_client_instance_called_as_a_function_is_read() -> None:
    (c,) = _src(
        "import axios from 'axios';\nconst api = axios.create({ baseURL: 'https://api.acme.test/v2' });\n"
        "export const users = () => api('/users', { method: 'post' });\nexport const n = () => compute(1);\n"
    )
    assert isinstance(c, ObservedCall)
    assert (c.method, c.url) == ("POST", "https://api.acme.test/v2/users")


def test_an_mcp_tool_on_a_server_without_a_url_keeps_its_name() -> None:
    """A stdio (or untold) server's tool call is unresolved, yet names its tool, so the draft report
    lists the call site by the tool (it was listed only among the unresolved, nameless)."""
    src = b"""
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const client = new Client({ name: "agent", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: "server" }));
const result = await client.callTool({ name: "create_issue", arguments: { title: "x" } });
"""
    found = [c for c in read_js(src, "agent.ts", dialect="ts") if isinstance(c, UnresolvedCall)]
    assert [(c.line, c.via, c.operation) for c in found] == [(6, "mcp-sdk", "create_issue")]
