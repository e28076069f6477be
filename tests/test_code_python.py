"""The Python reader on each SDK's idioms as its own docs write them (quickstarts and READMEs), and on what it
must not guess: every call site is found with its line, the operation as the code names it and the client it came
through; what cannot be told statically is an UnresolvedCall naming file and line."""

from __future__ import annotations

import textwrap

import pytest

from ramscope.evidence.code_python import read_python
from ramscope.evidence.model import ObservedCall, Principal, UnresolvedCall


def _read(src: str, hints: set[str] | None = None) -> list[ObservedCall | UnresolvedCall]:
    return list(read_python(textwrap.dedent(src).encode(), "agent.py", hints=hints))


def _calls(src: str) -> list[tuple[int, str, str]]:
    """(line, operation as named, via) of each resolved call."""
    out = []
    for c in _read(src):
        if isinstance(c, ObservedCall):
            named = c.tool or c.operation or f"{c.method} {c.path}"
            out.append((c.entry, named, c.via))
    return out


def _unresolved(src: str) -> list[tuple[int, str]]:
    return [(c.line, c.reason) for c in _read(src) if isinstance(c, UnresolvedCall)]


# --------------------------------------------------------------------------- google-api-python-client


GMAIL_QUICKSTART = """\
import os.path

from google.auth.transport.requests import Request
from google.oauth2.credentials import Credentials
from google_auth_oauthlib.flow import InstalledAppFlow
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError

SCOPES = ["https://www.googleapis.com/auth/gmail.readonly"]


def main():
    creds = None
    if os.path.exists("token.json"):
        creds = Credentials.from_authorized_user_file("token.json", SCOPES)
    if not creds or not creds.valid:
        if creds and creds.expired and creds.refresh_token:
            creds.refresh(Request())
        else:
            flow = InstalledAppFlow.from_client_secrets_file("credentials.json", SCOPES)
            creds = flow.run_local_server(port=0)
    try:
        service = build("gmail", "v1", credentials=creds)
        results = service.users().labels().list(userId="me").execute()
        labels = results.get("labels", [])
    except HttpError as error:
        print(f"An error occurred: {error}")
"""


def test_the_gmail_quickstart_is_labels_list_and_a_user_flow() -> None:
    hints: set[str] = set()
    calls = [c for c in _read(GMAIL_QUICKSTART, hints) if isinstance(c, ObservedCall)]
    assert [(c.entry, c.operation, c.via) for c in calls] == [(24, "gmail.users.labels.list", "googleapiclient")]
    assert calls[0].spec == "https://www.googleapis.com/discovery/v1/apis/gmail/v1/rest"
    assert calls[0].url == "https://gmail.googleapis.com/"
    assert hints == {"google:user"}


def test_a_service_in_an_attribute_a_helper_a_factory_keyword_arguments_and_pagination() -> None:
    src = """\
    from googleapiclient import discovery
    from google.oauth2 import service_account

    def get_service():
        creds = service_account.Credentials.from_service_account_file("key.json")
        return discovery.build(serviceName="drive", version="v3", credentials=creds)

    def list_all(svc):
        request = svc.files().list(pageSize=100)
        while request is not None:
            response = request.execute()
            request = svc.files().list_next(request, response)

    class Calendar:
        def __init__(self, creds):
            self.service = discovery.build("calendar", "v3", credentials=creds)

        def add(self, event):
            return self.service.events().insert(calendarId="primary", body=event).execute()

    list_all(get_service())
    """
    hints: set[str] = set()
    found = [(c.entry, c.operation) for c in _read(src, hints) if isinstance(c, ObservedCall)]
    # list_next pages the same files.list (one site, where the request is made).
    assert found == [(9, "drive.files.list"), (19, "calendar.events.insert")]
    assert hints == {"google:app"}


def test_batch_requests_and_a_resource_kept_in_a_variable() -> None:
    src = """\
    from googleapiclient.discovery import build
    from googleapiclient.http import BatchHttpRequest

    service = build("gmail", "v1")
    messages = service.users().messages()
    batch = service.new_batch_http_request(callback=print)
    batch.add(messages.get(userId="me", id="a"))
    batch.add(service.users().messages().modify(userId="me", id="a", body={}))
    batch.execute()
    other = BatchHttpRequest()
    other.add(service.users().threads().trash(userId="me", id="t"))
    """
    assert [op for _, op, _ in _calls(src)] == [
        "gmail.users.messages.get",
        "gmail.users.messages.modify",
        "gmail.users.threads.trash",
    ]


def test_a_service_from_another_module_is_named_by_its_chain_when_one_api_has_it() -> None:
    src = """\
    from .auth import service

    def send(raw):
        return service.users().messages().send(userId="me", body={"raw": raw}).execute()

    def listing():
        return service.files().list().execute()

    def query(db):
        return db.session().query().execute()
    """
    assert _calls(src) == [(4, "gmail.users.messages.send", "googleapiclient")]
    assert _unresolved(src) == [
        (7, "the service is not known, and 2 Discovery APIs have files.list (dfareporting, drive)")
    ]


def test_a_service_whose_api_is_a_variable_or_unknown_is_unresolved() -> None:
    src = """\
    from googleapiclient.discovery import build

    def make(name):
        return build(name, "v1")

    def run(api):
        svc = build(api, "v1")
        svc.users().messages().list(userId="me").execute()
        gm = build("gmail", "v1")
        gm.users().nosuch().list().execute()
    """
    assert _calls(src) == []
    reasons = _unresolved(src)
    assert reasons[0] == (8, "the Google API the service is built for is not a literal")
    assert reasons[1][0] == 10
    assert "no Discovery document of gmail" in reasons[1][1]


# --------------------------------------------------------------------------- Microsoft Graph


def test_msgraph_sdk_as_its_readme_writes_it() -> None:
    src = """\
    import asyncio
    from azure.identity import ClientSecretCredential
    from msgraph import GraphServiceClient
    from msgraph.generated.users.item.send_mail.send_mail_post_request_body import SendMailPostRequestBody

    credential = ClientSecretCredential("tenant_id", "client_id", "client_secret")
    scopes = ["https://graph.microsoft.com/.default"]
    client = GraphServiceClient(credentials=credential, scopes=scopes)

    async def get_user():
        user = await client.users.by_user_id("userPrincipalName").get()
        messages = await client.users.by_user_id("x").mail_folders.by_mail_folder_id("inbox").messages.get()
        body = SendMailPostRequestBody()
        await client.users.by_user_id("x").send_mail.post(body)
        await client.me.messages.by_message_id("m").delete()

    asyncio.run(get_user())
    """
    hints: set[str] = set()
    found = [(c.entry, c.operation, c.url) for c in _read(src, hints) if isinstance(c, ObservedCall)]
    assert found == [
        (11, "GET /users/{user-id}", "https://graph.microsoft.com/v1.0/users/{user-id}"),
        (
            12,
            "GET /users/{user-id}/mailFolders/{mailFolder-id}/messages",
            "https://graph.microsoft.com/v1.0/users/{user-id}/mailFolders/{mailFolder-id}/messages",
        ),
        (14, "POST /users/{user-id}/sendMail", "https://graph.microsoft.com/v1.0/users/{user-id}/sendMail"),
        (15, "DELETE /me/messages/{message-id}", "https://graph.microsoft.com/v1.0/me/messages/{message-id}"),
    ]
    assert hints == {"graph:app"}


def test_a_graph_client_passed_in_with_its_annotation_and_the_beta_sdk() -> None:
    src = """\
    from msgraph import GraphServiceClient
    from msgraph_beta import GraphServiceClient as BetaClient

    async def inbox(client: GraphServiceClient):
        return await client.me.messages.get()

    async def beta(client: BetaClient):
        return await client.me.events.get()
    """
    assert [(line, op) for line, op, _ in _calls(src)] == [(5, "GET /me/messages"), (8, "GET /me/events")]
    urls = [c.url for c in _read(src) if isinstance(c, ObservedCall)]
    assert urls[1] == "https://graph.microsoft.com/beta/me/events"


# --------------------------------------------------------------------------- GitHub


def test_pygithub_from_its_documented_calls() -> None:
    src = """\
    from github import Auth, Github

    auth = Auth.Token("access_token")
    g = Github(auth=auth)
    repo = g.get_repo("PyGithub/PyGithub")
    issue = repo.create_issue(title="This is a new issue")
    for pr in repo.get_pulls(state="open"):
        pr.create_issue_comment("hello")
    g.get_user("octocat").get_repos()
    """
    found = _calls(src)
    assert found == [
        (5, "repos/get", "PyGithub"),
        (6, "issues/create", "PyGithub"),
        (7, "pulls/list", "PyGithub"),
        (8, "issues/create-comment", "PyGithub"),
        (9, "users/get-by-username", "PyGithub"),
        (9, "repos/list-for-user", "PyGithub"),
    ]


def test_githubkit_sync_and_async() -> None:
    src = """\
    from githubkit import GitHub

    github = GitHub("<your_token_here>")

    async def main():
        resp = github.rest.repos.get("owner", "repo")
        issue = await github.rest.issues.async_create("owner", "repo", title="x")
        github.rest.issues.no_such_method("owner", "repo")
    """
    assert _calls(src) == [(6, "repos/get", "githubkit"), (7, "issues/create", "githubkit")]
    assert _unresolved(src) == [(8, "no GitHub REST operation issues/no-such-method")]


# --------------------------------------------------------------------------- Slack


def test_slack_sdk_web_client_and_bolt_listeners() -> None:
    src = """\
    import os
    from slack_sdk import WebClient
    from slack_bolt import App

    client = WebClient(token=os.environ["SLACK_BOT_TOKEN"])
    response = client.chat_postMessage(channel="#random", text="Hello world!")
    client.api_call("reactions.add", json={"name": "thumbsup"})
    client.conversations_history(channel="C1")

    app = App(token=os.environ.get("SLACK_BOT_TOKEN"))

    @app.message("hello")
    def message_hello(message, say, client):
        say(f"Hey there <@{message['user']}>!")
        client.users_info(user=message["user"])
    """
    assert [(line, op) for line, op, _ in _calls(src)] == [
        (6, "chat.postMessage"),
        (7, "reactions.add"),
        (8, "conversations.history"),
        (14, "chat.postMessage"),
        (15, "users.info"),
    ]


# --------------------------------------------------------------------------- plain HTTP


def test_plain_http_literals_constants_fstrings_and_base_urls() -> None:
    src = """\
    import os
    import aiohttp
    import httpx
    import requests
    import urllib.request

    API = "https://api.notion.com/v1"

    class Notion:
        def __init__(self):
            self.base = "https://api.notion.com/v1"

        def page(self, page_id):
            return requests.get(f"{self.base}/pages/{page_id}", headers={})

    def search():
        return requests.post(API + "/search", json={})

    def with_client(db):
        with httpx.Client(base_url="https://api.linear.app") as client:
            client.post("/graphql", json={})
            client.request("DELETE", f"/v1/items/{db}")

    async def fetch(session_id):
        async with aiohttp.ClientSession() as session:
            async with session.get(f"https://api.example.com/sessions/{session_id}?verbose=1") as resp:
                return await resp.json()

    def legacy():
        req = urllib.request.Request("https://api.example.com/v1/jobs", method="PUT")
        urllib.request.urlopen(req)
        urllib.request.urlopen("https://api.example.com/v1/health")

    def runtime(url, method):
        requests.get(url)
        requests.request(method, "https://api.example.com/x")
        httpx.get(f"{os.environ['HOST']}/v1/x")
        {}.get("not-http")
    """
    assert [(line, op, via) for line, op, via in _calls(src)] == [
        (14, "GET /v1/pages/{page_id}", "requests"),
        (17, "POST /v1/search", "requests"),
        (21, "POST /graphql", "httpx"),
        (22, "DELETE /v1/items/{db}", "httpx"),
        (26, "GET /sessions/{session_id}", "aiohttp"),
        (31, "PUT /v1/jobs", "urllib"),
        (32, "GET /v1/health", "urllib"),
    ]
    assert _unresolved(src) == [
        (35, "the URL is built at run time"),
        (36, "the HTTP method is not a literal"),
        (37, "the URL's scheme and host are built at run time"),
    ]


# --------------------------------------------------------------------------- MCP


def test_mcp_client_tool_calls_on_a_server_named_by_url() -> None:
    src = """\
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.sse import sse_client
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamablehttp_client

    async def main():
        async with streamablehttp_client("https://mcp.example.com/mcp") as (read_stream, write_stream, _):
            async with ClientSession(read_stream, write_stream) as session:
                await session.initialize()
                result = await session.call_tool("add", {"a": 5, "b": 3})
                await session.call_tool(name="search", arguments={})

    async def legacy(name):
        async with sse_client(url="https://legacy.example.com/sse") as streams:
            async with ClientSession(*streams) as session:
                await session.call_tool(name, {})

    async def local():
        async with stdio_client(StdioServerParameters(command="python", args=["server.py"])) as (read, write):
            async with ClientSession(read, write) as session:
                await session.call_tool("echo", {})
    """
    calls = [c for c in _read(src) if isinstance(c, ObservedCall)]
    assert [(c.entry, c.tool, c.url) for c in calls] == [
        (10, "add", "https://mcp.example.com/mcp"),
        (11, "search", "https://mcp.example.com/mcp"),
    ]
    assert _unresolved(src) == [
        (16, "the tool name is not a literal"),
        (21, "tool 'echo' of an MCP server run locally over stdio (no URL)"),
    ]


# --------------------------------------------------------------------------- markers and bad input


def test_a_marker_names_an_unresolved_calls_operation() -> None:
    src = """\
    import requests

    def send(service, url, raw):
        requests.post(url, json={})  # ramscope: POST https://api.example.com/v1/items
        # ramscope: gmail.users.messages.send
        service.send(raw)
        requests.get(url)  # ramscope: not.a.known-operation
        x = 1  # ramscope: issues/create
    """
    found = _read(src)
    assert [(c.entry, c.operation or f"{c.method} {c.path}", c.via) for c in found if isinstance(c, ObservedCall)] == [
        (4, "POST /v1/items", "marker"),
        (6, "gmail.users.messages.send", "marker"),
        (8, "issues/create", "marker"),
    ]
    bad = [c for c in found if isinstance(c, UnresolvedCall)]
    # The call stays unresolved, and the marker that names nothing known is a finding of its own.
    assert [(c.line, c.via) for c in bad] == [(7, "requests"), (7, "marker")]
    assert "not.a.known-operation" in bad[1].reason


@pytest.mark.parametrize("src", [b"def broken(:\n", b"\xff\xfe\x00garbage", b"x = (" * 200 + b"\n"])
def test_source_that_does_not_parse_is_one_unresolved_call_not_an_error(src: bytes) -> None:
    found = list(read_python(src, "bad.py"))
    assert len(found) == 1
    assert isinstance(found[0], UnresolvedCall)
    assert found[0].source == "bad.py"


def test_deeply_nested_expressions_do_not_crash_the_reader() -> None:
    src = "import requests\nx = " + "[" * 90 + "requests.get('https://api.example.com/deep')" + "]" * 90 + "\n"
    found = list(read_python(src.encode(), "deep.py"))
    assert all(isinstance(c, ObservedCall | UnresolvedCall) for c in found)


def test_principal_is_left_to_the_walker() -> None:
    """The reader reports hints; it does not set the principal itself (the walk sees every file first)."""
    calls = [c for c in _read(GMAIL_QUICKSTART) if isinstance(c, ObservedCall)]
    assert calls[0].principal is Principal.UNKNOWN


def test_method_ids_that_are_not_the_api_name_and_media_downloads() -> None:
    """Admin SDK's directory_v1 names its methods ``directory.*``; ``files().get_media`` is files.get, executed by
    MediaIoBaseDownload (the Drive download guide's idiom)."""
    src = """\
    import io
    from googleapiclient.discovery import build
    from googleapiclient.http import MediaIoBaseDownload

    service = build("admin", "directory_v1", credentials=None)
    results = service.users().list(customer="my_customer", maxResults=10).execute()

    drive = build("drive", "v3")
    request = drive.files().get_media(fileId="f")
    file = io.BytesIO()
    downloader = MediaIoBaseDownload(file, request)
    """
    assert [(line, op) for line, op, _ in _calls(src)] == [(6, "directory.users.list"), (9, "drive.files.get")]


def test_an_adk_mcp_toolset_calls_the_tools_of_its_filter() -> None:
    """ADK's McpToolset on a Streamable HTTP server (as Google's enterprise-ai-agent sample writes it)."""
    src = """\
    from google.adk.agents.llm_agent import LlmAgent
    from google.adk.tools.mcp_tool.mcp_toolset import McpToolset, StreamableHTTPConnectionParams

    search = McpToolset(
        connection_params=StreamableHTTPConnectionParams(url="https://discoveryengine.googleapis.com/mcp"),
        tool_filter=["search", "fetch"],
    )
    everything = McpToolset(connection_params=StreamableHTTPConnectionParams(url="https://other.example/mcp"))
    agent = LlmAgent(name="a", tools=[search, everything])
    """
    found = [(c.entry, c.tool, c.url) for c in _read(src) if isinstance(c, ObservedCall)]
    assert found == [
        (4, "search", "https://discoveryengine.googleapis.com/mcp"),
        (4, "fetch", "https://discoveryengine.googleapis.com/mcp"),
    ]
    assert _unresolved(src) == [(8, "an MCP toolset without a literal tool_filter exposes every tool its server lists")]


def test_gapic_clients_as_the_chat_and_meet_samples_write_them() -> None:
    """google-apps-chat / google-apps-meet: each client method is the Discovery method its REST rule is."""
    src = """\
    from google.apps import chat_v1 as google_chat
    from google.apps import meet_v2
    from authentication_utils import create_client_with_user_credentials

    def main():
        client = google_chat.ChatServiceClient(credentials=None)
        client.create_message(google_chat.CreateMessageRequest(parent="spaces/S"))
        meet = meet_v2.SpacesServiceAsyncClient()
        meet.create_space(request=meet_v2.CreateSpaceRequest())
        other = create_client_with_user_credentials()
        other.list_memberships(google_chat.ListMembershipsRequest(parent="spaces/S"))
        client.common_project_path("p")
    """
    assert [(line, op) for line, op, _ in _calls(src)] == [
        (7, "chat.spaces.messages.create"),
        (9, "meet.spaces.create"),
        (11, "chat.spaces.members.list"),
    ]
    specs = {c.spec for c in _read(src) if isinstance(c, ObservedCall)}
    assert specs == {
        "https://www.googleapis.com/discovery/v1/apis/chat/v1/rest",
        "https://www.googleapis.com/discovery/v1/apis/meet/v2/rest",
    }


def test_tools_of_servers_without_a_url_are_unresolved_but_named() -> None:
    """A stdio server, or a client whose server is a parameter: the tool is named, the server cannot be told."""
    src = """\
    from mcp.client import Client
    import httpx2

    async def main(target):
        async with Client(target) as client:
            await client.call_tool("divide", {"a": 6, "b": 2})
        with httpx2.Client() as http:
            http.post("https://api.groq.com/openai/v1/chat/completions", json={})
    """
    found = _read(src)
    unresolved = [(c.line, c.operation) for c in found if isinstance(c, UnresolvedCall)]
    assert unresolved == [(6, "divide")]
    assert _calls(src) == [(8, "POST /openai/v1/chat/completions", "httpx2")]


def test_adk_google_api_toolsets_and_openapi_toolsets() -> None:
    """ADK's CalendarToolset(tool_filter=[...]) is those Calendar methods; an OpenAPIToolset's spec (inline, or a
    file of the tree read through open_file) gives its operations on its server."""
    spec = (
        '{"openapi": "3.0.0", "servers": [{"url": "https://petstore3.swagger.io/api/v3"}], "paths": {'
        '"/pet/{petId}": {"get": {"operationId": "getPetById"}, "delete": {"operationId": "deletePet"}},'
        '"/store/order": {"post": {"operationId": "placeOrder"}}}}'
    )
    src = """\
    from google.adk.tools.google_api_tool import CalendarToolset, GmailToolset
    from google.adk.tools.openapi_tool.openapi_spec_parser.openapi_toolset import OpenAPIToolset

    calendar = CalendarToolset(tool_filter=["calendar_events_list", "calendar_events_quick_add"])
    gmail = GmailToolset(client_id="x", client_secret="y")
    with open("specs/petstore.json") as f:
        petstore = OpenAPIToolset(spec_str=f.read(), spec_str_type="json", tool_filter=["get_pet_by_id"])
    """
    opened: list[str] = []

    def open_file(label: str) -> bytes | None:
        opened.append(label)
        return spec.encode() if label == "agents/specs/petstore.json" else None

    found = list(read_python(textwrap.dedent(src).encode(), "agents/agent.py", open_file=open_file))
    calls = [(c.entry, c.operation or f"{c.method} {c.url}") for c in found if isinstance(c, ObservedCall)]
    assert calls == [
        (4, "calendar.events.list"),
        (4, "calendar.events.quickAdd"),
        (7, "GET https://petstore3.swagger.io/api/v3/pet/{petId}"),
    ]
    assert opened == ["agents/specs/petstore.json"]
    assert [(c.line, c.reason) for c in found if isinstance(c, UnresolvedCall)] == [
        (5, "GmailToolset without a literal tool_filter exposes every method of gmail v1")
    ]


def test_a2a_clients_name_the_remote_agents_card() -> None:
    src = """\
    import httpx
    from a2a.client import A2ACardResolver
    from google.adk.agents.remote_a2a_agent import AGENT_CARD_WELL_KNOWN_PATH, RemoteA2aAgent

    async def main(base):
        async with httpx.AsyncClient() as httpx_client:
            resolver = A2ACardResolver(httpx_client=httpx_client, base_url="https://travel.example.com")
            other = A2ACardResolver(httpx_client=httpx_client, base_url=base)

    prime = RemoteA2aAgent(name="prime", agent_card="https://prime.example.com/.well-known/agent-card.json")
    """
    found = [(c.entry, c.via, c.url) for c in _read(src) if isinstance(c, ObservedCall)]
    assert found == [
        (7, "a2a", "https://travel.example.com/.well-known/agent-card.json"),
        (10, "a2a", "https://prime.example.com/.well-known/agent-card.json"),
    ]
    assert _unresolved(src) == [(8, "the remote agent's card URL cannot be told statically")]


def test_notion_client_as_its_readme_writes_it() -> None:
    src = """\
    import os
    from notion_client import AsyncClient, Client

    notion = Client(auth=os.environ["NOTION_TOKEN"])
    notion.users.list()
    notion.databases.query(**{"database_id": "897e5a76-ae52-4b48-9fdf-e71f5945d1af"})
    notion.blocks.children.list(block_id="b")
    notion.search(query="External tasks")

    async def main():
        client = AsyncClient(auth=os.environ["NOTION_TOKEN"])
        await client.pages.create(parent={}, properties={})
    """
    assert [(line, op) for line, op, _ in _calls(src)] == [
        (5, "GET /v1/users"),
        (6, "POST /v1/databases/{database_id}/query"),
        (7, "GET /v1/blocks/{block_id}/children"),
        (8, "POST /v1/search"),
        (12, "POST /v1/pages"),
    ]


def test_stripe_classic_resources_and_the_stripe_client() -> None:
    src = """\
    import stripe
    from stripe import StripeClient

    stripe.api_key = "sk_test_..."
    customer = stripe.Customer.create(email="jenny.rosen@example.com")
    stripe.PaymentIntent.confirm("pi_123")
    session = stripe.checkout.Session.create(mode="payment", line_items=[])

    client = StripeClient("sk_test_...")
    client.v1.customers.retrieve("cus_123")
    client.customers.tax_ids.create("cus_123", params={})
    """
    assert [(line, op) for line, op, _ in _calls(src)] == [
        (5, "POST /v1/customers"),
        (6, "POST /v1/payment_intents/{intent}/confirm"),
        (7, "POST /v1/checkout/sessions"),
        (10, "GET /v1/customers/{customer}"),
        (11, "POST /v1/customers/{customer}/tax_ids"),
    ]


def test_python_asana_as_its_readme_writes_it() -> None:
    src = """\
    import asana
    from asana.rest import ApiException

    configuration = asana.Configuration()
    configuration.access_token = "<YOUR_ACCESS_TOKEN>"
    api_client = asana.ApiClient(configuration)
    tasks_api_instance = asana.TasksApi(api_client)
    task = tasks_api_instance.get_task("321654", {"opt_fields": "name"})
    tasks_api_instance.create_task({"data": {"name": "New Task"}}, {})
    """
    assert [(line, op) for line, op, _ in _calls(src)] == [
        (8, "GET /api/1.0/tasks/{task_gid}"),
        (9, "POST /api/1.0/tasks"),
    ]


def test_a_request_whose_execute_is_handed_on_uncalled_is_still_a_call() -> None:
    """google_workspace_mcp's idiom: ``await asyncio.to_thread(service.events().list(...).execute)``;
    the request is sent by the thread, so it is the call (it was silently dropped)."""
    src = """\
    import asyncio
    from googleapiclient.discovery import build

    async def events(creds):
        service = build("calendar", "v3", credentials=creds)
        result = await asyncio.to_thread(service.events().list(calendarId="primary").execute)
        return result

    async def send(service, msg):
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, service.users().messages().send(userId="me", body=msg).execute)
    """
    assert [(line, op) for line, op, _ in _calls(src)] == [
        (6, "calendar.events.list"),
        (11, "gmail.users.messages.send"),
    ]
