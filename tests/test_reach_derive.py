"""Reach in the derivation: provider quirks, vendor extensions and catalogs over a spec's wrong claim,
on trimmed real provider files (tests/fixtures/specs/reach, see its SOURCES.md) served from loopback."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.derive.policy import Policy, policy_from_dict
from ramscope.outputs.report import Report
from ramscope.providers import snapshot_versions
from tests.support.httpserver import LocalHTTPServer
from tests.test_derive import card

REACH = Path(__file__).parent / "fixtures" / "specs" / "reach"
HISTORY = ["channels:history", "groups:history", "im:history", "mpim:history"]


@pytest.fixture(scope="module")
def server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        for f in REACH.glob("*.json"):
            srv.route(f"/{f.name}", body=f.read_bytes())
        yield srv


@pytest.fixture(scope="module")
def derive(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Report]:
    cache = tmp_path_factory.mktemp("reach-cache")

    def run(manifest: dict[str, Any], policy: Policy | None = None) -> Report:
        settings = Settings(cache_dir=cache, allow_private_network=True, timeout=60)
        with Engine(settings, policy=policy) as engine:
            return engine.derive({"name": "reach test agent", "resourceAccessManifest": manifest})

    return run


def one(derive: Callable[..., Report], server: LocalHTTPServer, route: str, op: str, identity: str = "END_USER",
        policy: Policy | None = None) -> tuple[Report, Any]:  # fmt: skip
    report = derive(card(server, (route, "", {"operation_id": op}, {"identity": identity})), policy)
    return report, report.accesses[0]


def codes(report: Report) -> list[str]:
    return [d.code for d, _ in report.diagnostics]


def test_slack_history_is_one_of_four_scopes_and_ambiguous(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """Slack conversations.history: any one of the four history scopes, chosen by the conversation type."""
    report, a = one(derive, server, "/slack.json", "conversations_history")
    assert a.complete
    assert len(a.scopes) == 1
    assert a.scopes[0] in HISTORY
    assert a.choice["ambiguous"] is True
    assert sorted([a.scopes[0], *a.choice["candidates"]]) == HISTORY
    assert "ambiguous-scope-choice" in codes(report)
    (d,) = [d for d, _ in report.diagnostics if d.code == "ambiguous-scope-choice"]
    assert "conversation's type" in d.message
    assert a.requirements_source == "quirk:slack any-of; user token"


def test_slack_history_for_a_bot_is_a_bot_token_scope(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """An AGENT gets the bot-token alternatives (Slack bot token -> AGENT), still one of four, ambiguous."""
    _, a = one(derive, server, "/slack.json", "conversations_history", "AGENT")
    assert a.complete
    assert a.scopes[0] in HISTORY
    assert a.choice["ambiguous"] is True
    assert a.requirements_source == "quirk:slack any-of; bot token"
    assert [c["scheme"] for c in a.requirements[0]] in (["slackAuth"], ["slackAuth#bot"])


def test_slack_post_message_is_chat_write_not_the_retired_scopes(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """chat.postMessage's chat:write:user / chat:write:bot are read as chat:write, with the retirement said."""
    report, a = one(derive, server, "/slack.json", "chat_postMessage")
    assert a.scopes == ["chat:write"]
    assert a.choice["ambiguous"] is False
    assert "scope-deprecated" in codes(report)
    assert {n.get("deprecated_scope") for n in a.provider_notes} == {"chat:write:user", "chat:write:bot"}


def test_slack_bot_manages_public_channels_with_channels_manage(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """channels:write is a user-token scope: a bot creating a conversation gets channels:manage among the four
    (the conversation's type decides, ambiguous), and joining one channels:join; a user keeps channels:write."""
    _, bot = one(derive, server, "/slack.json", "conversations_create", "AGENT")
    assert bot.scopes == ["channels:manage"]
    assert bot.choice["ambiguous"] is True
    assert bot.choice["candidates"] == ["groups:write", "im:write", "mpim:write"]
    _, join = one(derive, server, "/slack.json", "conversations_join", "AGENT")
    assert join.scopes == ["channels:join"]
    assert join.requirements_source == "quirk:slack channels:write is channels:join on a bot token; bot token"
    _, user = one(derive, server, "/slack.json", "conversations_join")
    assert user.scopes == ["channels:write"]


def test_jira_get_issue_is_classic_with_granular_offered(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """Jira getIssue: read:jira-work (Current), the Beta granular set offered beside it, the anonymous
    alternative offered with its condition, not picked."""
    _, a = one(derive, server, "/jira.json", "getIssue")
    assert a.scopes == ["read:jira-work"]
    assert a.requirements_source == "spec"
    granular = [o for o in a.options if o["kind"] == "granular"]
    assert len(granular) == 1
    assert "read:issue:jira" in granular[0]["scopes"]
    assert granular[0]["state"] == "Beta"
    assert granular[0]["source"] == "x-atlassian-oauth2-scopes"
    assert granular[0]["considered"] is False
    anonymous = [o for o in a.options if o["kind"] == "anonymous"]
    assert anonymous
    assert anonymous[0]["source"] == "quirk:atlassian"


def test_jira_granular_when_the_policy_asks(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """A policy preferring granular scopes (*:jira) gets the granular set picked."""
    policy = policy_from_dict({"prefer": ["*:jira"]})
    _, a = one(derive, server, "/jira.json", "getIssue", policy=policy)
    assert "read:issue:jira" in a.scopes
    assert "read:jira-work" not in a.scopes
    assert any(o["considered"] for o in a.options)


def test_notion_retrieve_page_needs_read_content_never_none(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """Notion "retrieve a page": the spec's security [] is overridden by the Notion catalog, with a warning."""
    report, a = one(derive, server, "/notion.json", "retrieve-a-page")
    assert a.complete
    assert a.scopes == ["read_content"]
    assert a.choice["method"] != "none-required"
    assert a.requirements_source == f"catalog:notion@{snapshot_versions()['catalog:notion']}"
    (d,) = [d for d, _ in report.diagnostics if d.code == "catalog-overrides-spec"]
    assert "no authorization ([])" in d.message
    assert "catalog:notion" in d.message


@pytest.mark.parametrize(
    ("op", "scopes"),
    [("post-page", ["insert_content"]), ("create-a-comment", ["insert_comments"]), ("patch-page", ["update_content"])],
)
def test_notion_other_operations(
    derive: Callable[..., Report], server: LocalHTTPServer, op: str, scopes: list[str]
) -> None:
    """Other Notion operations get their documented capability."""
    _, a = one(derive, server, "/notion.json", op)
    assert a.scopes == scopes


def test_notion_users_without_email_is_offered_not_a_coin_toss(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """Listing Notion users: user information without email does the job (the same users, fewer fields) and is
    picked (issue 35: the narrowest of the capabilities Notion documents); with email, which includes it, is
    set aside as the broader, never an "ambiguous" tie between the two capabilities."""
    report, a = one(derive, server, "/notion.json", "get-users")
    assert a.scopes == ["read_user_without_email"]
    assert a.choice["ambiguous"] is False
    why = {tuple(x["scopes"]): x["set_aside"] for x in a.alternatives if x.get("compatible", True)}
    assert why[("read_user_with_email",)] == (
        "broader: the provider documents it as including read_user_without_email, which is listed and does the job"
    )
    assert "ambiguous-scope-choice" not in codes(report)


def test_notion_agent_uses_the_internal_integration(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """An AGENT reads a page with an internal integration's read-content capability."""
    _, a = one(derive, server, "/notion.json", "retrieve-a-page", "AGENT")
    assert a.scopes == ["read_content"]
    assert a.requirements[0][0]["scheme"] in ("notion-internal", "notion-public")


def test_datadog_app_key_scoped_by_x_permission(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Datadog: an AGENT's application key is scoped to the x-permission permission."""
    _, a = one(derive, server, "/datadog-v1.json", "GetDashboard", "AGENT")
    assert a.scopes == ["dashboards_read"]
    assert a.requirements_source == "x-permission"


@pytest.mark.parametrize(
    ("op", "scopes"),
    [
        ("ListLogs", ["logs_read_data"]),
        ("ListLogsGet", ["logs_read_data"]),
        ("GetMonitorNotificationRule", ["monitors_read"]),
        ("CreateMonitorNotificationRule", ["monitor_config_policy_write"]),
        ("CreateOnCallPageFromIncident", ["incident_write", "oncall_page"]),
    ],
)
def test_datadog_v2_app_key_gets_the_operations_permission(
    derive: Callable[..., Report], server: LocalHTTPServer, op: str, scopes: list[str]
) -> None:
    """Datadog v2: an AGENT's application key is scoped to x-permission (reads read, writes write, AND all)."""
    _, a = one(derive, server, "/datadog-v2.json", op, "AGENT")
    assert a.scopes == scopes
    assert a.requirements_source == "x-permission"


def test_datadog_v2_or_list_is_any_one_and_ambiguous(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Datadog v2 ListIncidentRules (operator OR): one of its two permissions, never both; the tie is reported."""
    report, a = one(derive, server, "/datadog-v2.json", "ListIncidentRules", "AGENT")
    assert a.scopes == ["incident_notification_settings_read"]
    (diag,) = [d for d, _ in report.diagnostics if d.code == "ambiguous-scope-choice"]
    assert diag.data["candidates"] == ["incident_notification_settings_read", "incident_settings_read"]


def test_datadog_v2_intake_is_the_bare_api_key(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Datadog v2 SubmitLog takes an API key only: no permission is named, none is invented."""
    _, a = one(derive, server, "/datadog-v2.json", "SubmitLog", "AGENT")
    assert a.complete
    assert a.scopes == []
    assert a.requirements == [[{"scheme": "apiKeyAuth", "type": "apiKey", "scopes": []}]]


def test_pagerduty_scope_from_its_extension(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """PagerDuty: x-pd-requires-scope is the scoped-OAuth alternative an END_USER can use."""
    _, a = one(derive, server, "/shapes-pagerduty.json", "listIncidents")
    assert a.scopes == ["incidents.read"]
    assert a.requirements_source == "x-pd-requires-scope"


def test_pagerduty_write_is_its_write_scope(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """PagerDuty createIncident: the scoped-OAuth write scope, for a user or for the app itself."""
    for identity in ("END_USER", "AGENT"):
        _, a = one(derive, server, "/shapes-pagerduty.json", "createIncident", identity)
        assert a.scopes == ["incidents.write"]
        assert a.requirements_source == "x-pd-requires-scope"


@pytest.mark.parametrize(("op", "scope"), [("getAllAutomationActions", "read"), ("listSchedulesV3", "read")])
def test_pagerduty_classic_oauth_where_no_scoped_scope_is_named(
    derive: Callable[..., Report], server: LocalHTTPServer, op: str, scope: str
) -> None:
    """PagerDuty operations with no x-pd-requires-scope (automation actions, /v3 schedules): a user's
    Classic User OAuth token with `read` (all the user's resources, read-only) rather than the
    account-wide API key; an AGENT, which holds no classic token, keeps the key."""
    _, a = one(derive, server, "/shapes-pagerduty.json", op)
    assert (a.complete, a.scopes) == (True, [scope])
    assert a.requirements_source == "quirk:pagerduty added pagerduty-classic-oauth"
    assert [t["scheme"] for alt in a.requirements for t in alt] == ["api_key", "pagerduty-classic-oauth"]
    _, b = one(derive, server, "/shapes-pagerduty.json", op, "AGENT")
    assert b.scopes == []
    assert [t["scheme"] for alt in b.requirements for t in alt] == ["api_key", "pagerduty-classic-oauth"]


def test_pagerduty_current_user_is_a_users_credential_only(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """GET /users/me "will not work" with an account-level key: a user gets the classic read token, an app
    identity no answer (not the account's API key)."""
    _, a = one(derive, server, "/shapes-pagerduty.json", "getCurrentUser")
    assert a.scopes == ["read"]
    assert a.requirements_source == "quirk:pagerduty added pagerduty-classic-oauth; a user's credential only"
    report, b = one(derive, server, "/shapes-pagerduty.json", "getCurrentUser", "AGENT")
    assert b.complete is False
    assert b.scopes is None
    assert "access-undetermined" in codes(report)


def test_pagerduty_classic_oauth_is_not_offered_beside_a_scoped_scope(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """Where PagerDuty names a scoped-OAuth scope, the classic all-resources token is not added beside it."""
    _, a = one(derive, server, "/shapes-pagerduty.json", "createIncident")
    assert a.scopes == ["incidents.write"]
    assert "pagerduty-classic-oauth" not in [t["scheme"] for alt in a.requirements for t in alt]


def test_figma_activity_logs_are_an_organization_admins(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Figma's activity logs: org:activity_log_read, which only an Enterprise organization's admin can grant,
    so the pick says it is an administrator's permission."""
    report, a = one(derive, server, "/figma.json", "getActivityLogs")
    assert a.scopes == ["org:activity_log_read"]
    assert a.choice["reach"]["org:activity_log_read"]["principal"] == "admin"
    assert a.choice["fallback"] == "admin"
    assert "administrator-permission" in codes(report)


def test_figma_get_file_is_file_content_read(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Figma getFile: any one of file_content:read and the retired files:read -> file_content:read."""
    _, a = one(derive, server, "/figma.json", "getFile")
    assert a.scopes == ["file_content:read"]


def test_xero_read_is_the_read_only_scope(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Xero getInvoices: accounting.transactions or .read, any one: the read-only one is least."""
    _, a = one(derive, server, "/xero.json", "getInvoices")
    assert a.scopes == ["accounting.transactions.read"]


def test_box_admin_operation_says_so(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Box x-box-requires-admin: a provider note and a requires-admin warning."""
    report, a = one(derive, server, "/box.json", "post_metadata_templates_schema", "AGENT")
    assert [n["source"] for n in a.provider_notes] == ["x-box-requires-admin"]
    assert "requires-admin" in codes(report)


def test_stripe_restricted_key_beside_the_secret_key(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Stripe: listing customers needs a restricted key with Customers: Read, beside the secret key."""
    report, a = one(derive, server, "/stripe.json", "GetCustomers", "AGENT")
    assert a.scopes == ["rak_customer_read"]
    assert a.scope_names == {"rak_customer_read": "Customers: Read"}
    version = snapshot_versions()["catalog:stripe-restricted-keys"]
    assert a.requirements_source == f"catalog:stripe-restricted-keys@{version}"
    assert {alt["source"] for alt in a.alternatives} == {a.requirements_source}
    secret = [o for o in a.options if o["kind"] == "full-access"]
    assert [o["source"] for o in secret] == ["spec", "spec"]
    assert "catalog-overrides-spec" not in codes(report)


def test_stripe_write_and_read_only_resources(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Creating a customer needs Customers: Write; the balance is read-only."""
    _, a = one(derive, server, "/stripe.json", "PostCustomers", "AGENT")
    assert a.scopes == ["rak_customer_write"]
    _, b = one(derive, server, "/stripe.json", "GetBalance", "AGENT")
    assert b.scopes == ["rak_balance_read"]


def test_docusign_needs_signature_from_its_catalog(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """DocuSign (no security in its spec): signature for a user; signature + impersonation for the JWT grant."""
    _, a = one(derive, server, "/docusign.json", "Envelopes_GetEnvelope")
    assert a.scopes == ["signature"]
    _, b = one(derive, server, "/docusign.json", "Envelopes_PostEnvelopes", "AGENT")
    assert b.scopes == ["impersonation", "signature"]
    assert b.admin_consent == ["impersonation"]


def test_docusign_account_administrator_operations_say_so(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """Creating a Connect configuration and closing the account: DocuSign's reference says "you must be an
    account administrator" (admin), so the report adds the administrator's note beside signature; creating
    users, whose reference says nothing of the kind, gets none."""
    report, a = one(derive, server, "/docusign.json", "Connect_PostConnectConfiguration")
    assert a.scopes == ["signature"]
    (note,) = a.provider_notes
    assert note["principal"] == "administrator"
    assert note["source"] == "quirk:docusign"
    assert note["message"] == (
        "the calling user must be a DocuSign account administrator, as the operation's reference says ('To use "
        "this function, you must be an account administrator and Connect must be enabled on your account.')"
    )
    assert "requires-admin" in codes(report)
    _, b = one(derive, server, "/docusign.json", "Accounts_DeleteAccount")
    assert [n["principal"] for n in b.provider_notes] == ["administrator"]
    _, c = one(derive, server, "/docusign.json", "Users_PostUsers")
    assert c.scopes == ["signature"]
    assert list(c.provider_notes) == []


def test_gitlab_read_api_for_reads_api_for_writes(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """GitLab: a GET needs read_api (api also does); a POST needs api."""
    _, a = one(derive, server, "/shapes-gitlab.json", "listProjectIssues", "AGENT")
    assert a.scopes == ["read_api"]
    _, b = one(derive, server, "/shapes-gitlab.json", "createProjectIssue", "AGENT")
    assert b.scopes == ["api"]


def test_sentry_bearer_scopes_are_any_one_of(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Sentry: event:admin / event:read / event:write on its bearer token: one of them, event:read least."""
    _, a = one(derive, server, "/shapes-sentry.json", "List an Issue's Events", "AGENT")
    assert a.scopes == ["event:read"]
    assert a.requirements_source == "quirk:sentry any-of"


@pytest.mark.parametrize(
    ("op", "write"),
    [("deleteOrganizationDetector", ["alerts:write"]), ("createOrganizationDashboard", ["org:write"])],
)
def test_sentry_write_listing_org_read_picks_a_write_scope(
    derive: Callable[..., Report], server: LocalHTTPServer, op: str, write: list[str]
) -> None:
    """Sentry lists org:read among the ways to delete a detector or create a dashboard (a setting may let
    members write alerts); the pick is the least listed write scope, with both readings stated."""
    report, a = one(derive, server, "/shapes-sentry.json", op)
    assert a.scopes == write
    (d,) = [d for d, _ in report.diagnostics if d.code == "provider-data-suspect"]
    assert d.data == {"read": ["org:read"], "write": write}


def test_salesforce_is_not_expressible(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """A Salesforce API: least privilege is not expressible in the token, said as a warning with its source."""
    report, a = one(derive, server, "/shapes-salesforce.json", "query", "AGENT")
    assert "not-expressible-in-token" in codes(report)
    assert a.provider_notes[0]["source"] == "quirk:salesforce"


def test_intercom_scopes_from_its_catalog(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Intercom: listing contacts needs "Read and list users and companies"; one contact, the one-user scope;
    a reply, "Write conversations"; the help center (no scope named by Intercom) stays with the bare token."""
    _, a = one(derive, server, "/intercom.json", "ListContacts")
    assert a.scopes == ["Read and list users and companies"]
    _, b = one(derive, server, "/intercom.json", "ShowContact")
    assert b.scopes == ["Read one user and one company"]
    _, c = one(derive, server, "/intercom.json", "replyConversation", "AGENT")
    assert c.scopes == ["Write conversations"]
    _, d = one(derive, server, "/intercom.json", "listAllCollections", "AGENT")
    assert d.requirements_source == "spec"
    assert d.scopes == []


def test_box_scopes_by_path(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Box: reading a file needs root_readonly; creating a user, manage_managed_users (Box's scopes page)."""
    _, a = one(derive, server, "/box.json", "get_files_id")
    assert a.scopes == ["root_readonly"]
    assert a.requirements_source == "quirk:box scopes-by-path"
    _, b = one(derive, server, "/box.json", "post_users")
    assert b.scopes == ["manage_managed_users"]


def test_zendesk_read_for_gets_write_for_writes(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Zendesk (basicAuth only in its spec): a GET needs the OAuth scope read, a POST or PUT write, per
    Zendesk's scopes page, narrowed to the resource where Zendesk names it (tickets:read, issue 35; the
    broad read stays listed); the basic credential stays offered as full access."""
    report, a = one(derive, server, "/shapes-zendesk.json", "ListTickets")
    assert a.scopes == ["tickets:read"]
    assert ["read"] in [x["scopes"] for x in a.alternatives or []]
    assert a.requirements_source == f"catalog:zendesk@{snapshot_versions()['catalog:zendesk']}"
    assert [(o["source"], o["kind"]) for o in a.options] == [("spec", "full-access")]
    assert a.provider_notes == []
    assert "requires-admin" not in codes(report)
    _, b = one(derive, server, "/shapes-zendesk.json", "CreateTicket")
    assert b.scopes == ["tickets:write"]
    _, c = one(derive, server, "/shapes-zendesk.json", "ShowTicket", "AGENT")
    assert c.scopes == ["tickets:read"]
    _, d = one(derive, server, "/shapes-zendesk.json", "ShowUser")
    assert d.scopes == ["users:read"]


def test_zendesk_admin_only_endpoints_say_administrator(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """An endpoint Zendesk allows for admins only (its "Allowed For" section) gets a requires-admin note;
    one also allowed for some agents does not."""
    report, a = one(derive, server, "/shapes-zendesk.json", "UpdateAccountSettings", "AGENT")
    assert a.scopes == ["write"]
    assert [(n["source"], n["principal"]) for n in a.provider_notes] == [("quirk:zendesk", "administrator")]
    assert a.provider_notes[0]["message"].endswith("(Allowed For: Admins)")
    assert a.provider_notes[0]["reference"].startswith("https://developer.zendesk.com/")
    assert "requires-admin" in codes(report)
    _, b = one(derive, server, "/shapes-zendesk.json", "ListAuditLogs", "AGENT")
    assert b.scopes == ["auditlogs:read"]
    assert [n["principal"] for n in b.provider_notes] == ["administrator"]
    report, c = one(derive, server, "/shapes-zendesk.json", "DeleteTicket", "AGENT")
    assert c.scopes == ["tickets:write"]
    assert c.provider_notes == []
    assert "requires-admin" not in codes(report)


def test_zendesk_patch_and_the_token_endpoint_keep_the_spec_credential(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """Zendesk's scopes page names no scope for PATCH, and the grant-type token endpoint is not under
    /api/v2: both stay with the spec's basic credential, no scope guessed."""
    _, a = one(derive, server, "/shapes-zendesk.json", "UpdateDecisionApprovalRequest", "AGENT")
    assert a.requirements_source == "spec"
    assert a.scopes == []
    _, b = one(derive, server, "/shapes-zendesk.json", "CreateTokenForGrantType", "AGENT")
    assert b.requirements_source == "spec"
    assert b.scopes == []


def test_quickbooks_accounting_scope_for_every_operation_and_not_expressible(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """QuickBooks Online: every Accounting API operation (a read as a write) needs
    com.intuit.quickbooks.accounting, its only scope, and the report says least privilege below it is not
    expressible in the token; the Payments API needs com.intuit.quickbooks.payment."""
    report, a = one(derive, server, "/shapes-quickbooks.json", "readInvoice")
    assert a.scopes == ["com.intuit.quickbooks.accounting"]
    assert a.requirements_source == "quirk:quickbooks scopes-by-method"
    assert "not-expressible-in-token" in codes(report)
    assert a.provider_notes[-1]["source"] == "quirk:quickbooks"
    _, b = one(derive, server, "/shapes-quickbooks.json", "createInvoice")
    assert b.scopes == ["com.intuit.quickbooks.accounting"]
    report, c = one(derive, server, "/shapes-quickbooks-payments.json", "createCharge")
    assert c.scopes == ["com.intuit.quickbooks.payment"]
    assert c.requirements_source == "quirk:quickbooks-payments scopes-by-method"
    assert "not-expressible-in-token" in codes(report)


def test_cloudflare_reads_pick_a_read_group_writes_a_write_group(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """Cloudflare's x-api-token-group: a GET picks the Read group of those listed (also where `security`
    names only the global key), a DELETE the Write group."""
    _, a = one(derive, server, "/shapes-cloudflare.json", "email-routing-routing-rules-get-routing-rule", "AGENT")
    assert a.scopes == ["Email Routing Rules Read"]
    assert a.requirements_source == "x-api-token-group"
    _, b = one(derive, server, "/shapes-cloudflare.json", "worker-delete-script-secret", "AGENT")
    assert b.scopes == ["Workers Scripts Write"]


def test_asana_audit_log_is_no_users_oauth_call(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Asana's audit log: never the user's full-access `default` OAuth scope; a user gets no answer and an app
    the Service Account's personal access token, both with the administrator's note."""
    report, a = one(derive, server, "/asana.json", "getAuditLogEvents")
    assert a.complete is False
    assert "requires-admin" in codes(report)
    report, b = one(derive, server, "/asana.json", "getAuditLogEvents", "AGENT")
    assert (b.complete, b.scopes) == (True, [])
    assert [t["scheme"] for alt in b.requirements for t in alt] == ["personalAccessToken"]
    assert "requires-admin" in codes(report)


def test_jira_administer_jira_operation_says_administrator(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """Jira getBanner: manage:jira-configuration, and the report says the user must be a Jira administrator."""
    report, a = one(derive, server, "/jira.json", "getBanner")
    assert a.scopes == ["manage:jira-configuration"]
    assert "requires-admin" in codes(report)
    report, b = one(derive, server, "/jira.json", "deleteFilter")
    assert b.scopes == ["write:jira-work"]
    assert "requires-admin" not in codes(report)


def test_slack_admin_methods_say_an_org_admin_installs(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """admin.users.invite: admin.users:write on a user token, with the note that an Enterprise Grid org admin
    or owner must install the app; chat.postMessage gets no such note."""
    report, a = one(derive, server, "/slack.json", "admin_users_invite")
    assert a.scopes == ["admin.users:write"]
    assert "requires-admin" in codes(report)
    report, _ = one(derive, server, "/slack.json", "chat_postMessage")
    assert "requires-admin" not in codes(report)
