"""Print the reach audit: sampled operations per provider, derived as a card would name them, beside the
verdict of checking each pick against the provider's documentation (docs/reach-audit.md).

    python scripts/reach_audit.py [--specs DIR] [--second]

Reads the providers' local files (the names in scripts/reach_table.py's APIS, under ``--specs``,
default /tmp/rs/reach), serves each from a loopback server and derives the sampled operations in one
manifest per file and identity. The verdicts and evidence pages are written below by hand: the pick
column is what the code says today, so a changed pick shows beside a verdict that no longer fits it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from reach_table import PUBLISHED, fetched_spec  # noqa: E402 - the table's reading of the same local copies
from tests.support.httpserver import LocalHTTPServer  # noqa: E402 - loopback only, as the tests serve specs

# Verdicts: ok (the docs name this permission for this operation); ok-ambiguous (the docs list several and the
# data addressed decides: said so); fixed (was wrong, fixed: the test is named); wrong (wrong,
# left: see docs/reach-audit.md); broad (the docs' permission, but a narrower one is documented without an
# endpoint mapping); spec (the provider's own machine-readable data, not re-read against prose).
SLACK = "https://api.slack.com/methods/"
JIRA = "https://developer.atlassian.com/cloud/jira/platform/rest/v3/"
CONF = "https://developer.atlassian.com/cloud/confluence/rest/v2/"
NOTION = "https://developers.notion.com/reference/capabilities"
ASANA = "https://developers.asana.com/docs/oauth-scopes"
HUBSPOT = "https://developers.hubspot.com/docs/api/scopes"
FIGMA = "https://developers.figma.com/docs/rest-api/scopes"
INTERCOM = "https://developers.intercom.com/docs/build-an-integration/learn-more/authentication/oauth-scopes"
ZOOM = "https://developers.zoom.us/docs/api/meetings/"
BOX = "https://developer.box.com/guides/api-calls/permissions-and-errors/scopes/"
DOCUSIGN = "https://developers.docusign.com/platform/auth/reference/scopes/"
ZENDESK = "https://developer.zendesk.com/api-reference/ticketing/oauth/oauth_tokens/#scopes"
STRIPE = "https://docs.stripe.com/keys/restricted-api-keys"
DROPBOX = "https://www.dropbox.com/developers/documentation/http/documentation"
GITLAB = "https://docs.gitlab.com/user/profile/personal_access_tokens/#personal-access-token-scopes"
SENTRY = "https://docs.sentry.io/api/permissions/"
DATADOG = "https://docs.datadoghq.com/account_management/rbac/permissions/"
PD = "https://developer.pagerduty.com/docs/oauth-functionality"
XERO = "https://developer.xero.com/documentation/guides/oauth2/scopes/"
CRM = "/crm/objects/2026-09-beta"

#: (API, file under --specs, identity, operation: an operationId or "METHOD /path", verdict, evidence)
SAMPLE: list[tuple[str, str, str, str, str, str]] = [
    ("Slack", "slack.json", "END_USER", "conversations_history", "ok-ambiguous", SLACK + "conversations.history"),
    ("Slack", "slack.json", "AGENT", "conversations_history", "ok-ambiguous", SLACK + "conversations.history"),
    ("Slack", "slack.json", "END_USER", "chat_postMessage", "ok", SLACK + "chat.postMessage"),
    ("Slack", "slack.json", "AGENT", "chat_postMessage", "ok", SLACK + "chat.postMessage"),
    ("Slack", "slack.json", "END_USER", "conversations_list", "ok-ambiguous", SLACK + "conversations.list"),
    ("Slack", "slack.json", "END_USER", "conversations_replies", "ok-ambiguous", SLACK + "conversations.replies"),
    ("Slack", "slack.json", "AGENT", "users_list", "ok", SLACK + "users.list"),
    ("Slack", "slack.json", "AGENT", "reactions_add", "ok", SLACK + "reactions.add"),
    ("Slack", "slack.json", "END_USER", "search_messages", "ok", SLACK + "search.messages"),
    ("Slack", "slack.json", "AGENT", "search_messages", "ok", SLACK + "search.messages"),
    ("Slack", "slack.json", "END_USER", "chat_delete", "ok", SLACK + "chat.delete"),
    ("Slack", "slack.json", "AGENT", "conversations_create", "fixed", SLACK + "conversations.create"),
    ("Slack", "slack.json", "AGENT", "conversations_join", "fixed", SLACK + "conversations.join"),
    ("Slack", "slack.json", "END_USER", "admin_users_invite", "ok", SLACK + "admin.users.invite"),
    ("Slack", "slack.json", "AGENT", "users_profile_set", "ok", SLACK + "users.profile.set"),
    ("Slack", "slack.json", "AGENT", "files_upload", "wrong", SLACK + "files.upload"),
    (
        "Jira",
        "jira.json",
        "END_USER",
        "getIssue",
        "ok",
        JIRA + "api-group-issues/#api-rest-api-3-issue-issueidorkey-get",
    ),
    ("Jira", "jira.json", "END_USER", "createIssue", "ok", JIRA + "api-group-issues/#api-rest-api-3-issue-post"),
    (
        "Jira",
        "jira.json",
        "END_USER",
        "editIssue",
        "ok",
        JIRA + "api-group-issues/#api-rest-api-3-issue-issueidorkey-put",
    ),
    (
        "Jira",
        "jira.json",
        "END_USER",
        "deleteIssue",
        "ok",
        JIRA + "api-group-issues/#api-rest-api-3-issue-issueidorkey-delete",
    ),
    ("Jira", "jira.json", "END_USER", "searchForIssuesUsingJqlPost", "ok", JIRA + "api-group-issue-search/"),
    ("Jira", "jira.json", "END_USER", "addComment", "ok", JIRA + "api-group-issue-comments/"),
    (
        "Jira",
        "jira.json",
        "END_USER",
        "doTransition",
        "ok",
        JIRA + "api-group-issues/#api-rest-api-3-issue-issueidorkey-transitions-post",
    ),
    ("Jira", "jira.json", "END_USER", "addWorklog", "ok", JIRA + "api-group-issue-worklogs/"),
    ("Jira", "jira.json", "END_USER", "getProject", "ok", JIRA + "api-group-projects/"),
    ("Jira", "jira.json", "END_USER", "createProject", "ok", JIRA + "api-group-projects/#api-rest-api-3-project-post"),
    ("Jira", "jira.json", "END_USER", "getCurrentUser", "ok", JIRA + "api-group-myself/"),
    ("Jira", "jira.json", "END_USER", "setApplicationProperty", "ok", JIRA + "api-group-jira-settings/"),
    ("Confluence", "confluence.json", "END_USER", "getPageById", "ok", CONF + "api-group-page/#api-pages-id-get"),
    ("Confluence", "confluence.json", "END_USER", "createPage", "ok", CONF + "api-group-page/#api-pages-post"),
    ("Confluence", "confluence.json", "END_USER", "updatePage", "ok", CONF + "api-group-page/#api-pages-id-put"),
    ("Confluence", "confluence.json", "END_USER", "deletePage", "ok", CONF + "api-group-page/#api-pages-id-delete"),
    ("Confluence", "confluence.json", "END_USER", "getSpaces", "ok", CONF + "api-group-space/#api-spaces-get"),
    (
        "Confluence",
        "confluence.json",
        "END_USER",
        "createBlogPost",
        "ok",
        CONF + "api-group-blog-post/#api-blogposts-post",
    ),
    ("Confluence", "confluence.json", "END_USER", "getLabels", "ok", CONF + "api-group-label/#api-labels-get"),
    ("Confluence", "confluence.json", "END_USER", "deleteAttachment", "ok", CONF + "api-group-attachment/"),
    (
        "Confluence",
        "confluence.json",
        "END_USER",
        "createAttachmentProperty",
        "ok",
        CONF + "api-group-content-properties/",
    ),
    ("Confluence", "confluence.json", "END_USER", "createFooterComment", "ok", CONF + "api-group-comment/"),
    ("Notion", "notion.json", "END_USER", "retrieve-a-page", "ok", NOTION),
    ("Notion", "notion.json", "END_USER", "post-page", "ok", NOTION),
    ("Notion", "notion.json", "END_USER", "patch-page", "ok", NOTION),
    ("Notion", "notion.json", "END_USER", "post-search", "ok", NOTION),
    ("Notion", "notion.json", "END_USER", "get-users", "ok", NOTION),
    ("Notion", "notion.json", "END_USER", "get-self", "ok", "https://developers.notion.com/reference/get-self"),
    ("Notion", "notion.json", "END_USER", "create-a-comment", "ok", NOTION),
    ("Notion", "notion.json", "END_USER", "retrieve-a-comment", "ok", NOTION),
    (
        "Notion",
        "notion.json",
        "END_USER",
        "delete-a-block",
        "ok",
        "https://developers.notion.com/reference/delete-a-block",
    ),
    ("Notion", "notion.json", "END_USER", "query-data-source", "ok", NOTION),
    ("Asana", "asana.yaml", "END_USER", "getTask", "ok", ASANA),
    ("Asana", "asana.yaml", "END_USER", "createTask", "ok", ASANA),
    ("Asana", "asana.yaml", "END_USER", "updateTask", "ok", ASANA),
    ("Asana", "asana.yaml", "END_USER", "deleteTask", "ok", ASANA),
    ("Asana", "asana.yaml", "END_USER", "searchTasksForWorkspace", "ok", ASANA),
    ("Asana", "asana.yaml", "END_USER", "getProject", "ok", ASANA),
    ("Asana", "asana.yaml", "END_USER", "createStoryForTask", "ok", ASANA),
    ("Asana", "asana.yaml", "END_USER", "getWorkspaces", "ok", ASANA),
    ("Asana", "asana.yaml", "END_USER", "addUserForWorkspace", "ok", ASANA),
    (
        "Asana",
        "asana.yaml",
        "AGENT",
        "getAuditLogEvents",
        "fixed",
        "https://developers.asana.com/docs/audit-log-events",
    ),
    (
        "Asana",
        "asana.yaml",
        "END_USER",
        "getAuditLogEvents",
        "fixed",
        "https://developers.asana.com/docs/audit-log-events",
    ),
    ("HubSpot", "hubspot/035.json", "END_USER", f"GET {CRM}/contacts", "fixed", HUBSPOT),
    ("HubSpot", "hubspot/035.json", "END_USER", f"POST {CRM}/contacts", "fixed", HUBSPOT),
    ("HubSpot", "hubspot/035.json", "END_USER", f"POST {CRM}/contacts/search", "fixed", HUBSPOT),
    ("HubSpot", "hubspot/035.json", "END_USER", f"POST {CRM}/contacts/batch/read", "fixed", HUBSPOT),
    ("HubSpot", "hubspot/035.json", "END_USER", f"DELETE {CRM}/contacts/{{contactId}}", "fixed", HUBSPOT),
    ("HubSpot", "hubspot/041.json", "END_USER", f"GET {CRM}/0-3", "fixed", HUBSPOT),
    ("HubSpot", "hubspot/041.json", "END_USER", f"POST {CRM}/0-3", "fixed", HUBSPOT),
    ("HubSpot", "hubspot/086.json", "END_USER", f"GET {CRM}/tickets", "fixed", HUBSPOT),
    ("HubSpot", "hubspot/059.json", "END_USER", f"GET {CRM}/notes", "wrong", HUBSPOT),
    ("HubSpot", "hubspot/038.json", "END_USER", "GET /crm/owners/2026-09", "ok", HUBSPOT),
    ("HubSpot", "hubspot/104.json", "END_USER", "POST /files/2026-09-beta/files", "spec", HUBSPOT),
    ("HubSpot", "hubspot/119.json", "END_USER", "GET /settings/users/2026-09-beta", "ok-ambiguous", HUBSPOT),
    ("Figma", "figma.yaml", "END_USER", "getFile", "ok", FIGMA),
    ("Figma", "figma.yaml", "END_USER", "getFileNodes", "ok", FIGMA),
    ("Figma", "figma.yaml", "END_USER", "getImages", "ok", FIGMA),
    ("Figma", "figma.yaml", "END_USER", "getComments", "ok", FIGMA),
    ("Figma", "figma.yaml", "END_USER", "postComment", "ok", FIGMA),
    ("Figma", "figma.yaml", "END_USER", "deleteComment", "ok", FIGMA),
    ("Figma", "figma.yaml", "END_USER", "getMe", "ok", FIGMA),
    ("Figma", "figma.yaml", "END_USER", "getFileVersions", "ok", FIGMA),
    ("Figma", "figma.yaml", "END_USER", "getTeamProjects", "ok", FIGMA),
    (
        "Figma",
        "figma.yaml",
        "END_USER",
        "getActivityLogs",
        "ok",
        "https://developers.figma.com/docs/rest-api/activity-logs",
    ),
    ("Figma", "figma.yaml", "END_USER", "postVariables", "ok", FIGMA),
    (
        "Intercom",
        "intercom.yaml",
        "END_USER",
        "identifyAdmin",
        "ok",
        "https://developers.intercom.com/docs/references/rest-api/api.intercom.io/admins/identifyadmin",
    ),
    ("Intercom", "intercom.yaml", "END_USER", "listAdmins", "ok", INTERCOM),
    ("Intercom", "intercom.yaml", "END_USER", "setAwayAdmin", "ok", INTERCOM),
    ("Intercom", "intercom.yaml", "END_USER", "ListContacts", "ok", INTERCOM),
    ("Intercom", "intercom.yaml", "END_USER", "ShowContact", "ok", INTERCOM),
    ("Intercom", "intercom.yaml", "END_USER", "CreateContact", "ok", INTERCOM),
    ("Intercom", "intercom.yaml", "END_USER", "SearchContacts", "fixed", INTERCOM),
    ("Intercom", "intercom.yaml", "END_USER", "searchConversations", "fixed", INTERCOM),
    ("Intercom", "intercom.yaml", "END_USER", "retrieveConversation", "ok", INTERCOM),
    ("Intercom", "intercom.yaml", "END_USER", "replyConversation", "ok", INTERCOM),
    ("Intercom", "intercom.yaml", "END_USER", "searchTickets", "fixed", INTERCOM),
    ("Intercom", "intercom.yaml", "END_USER", "createArticle", "ok", INTERCOM),
    (
        "Zoom",
        "zoom/meetings.json",
        "END_USER",
        "GET /users/{userId}/meetings",
        "spec",
        ZOOM,
    ),
    (
        "Zoom",
        "zoom/meetings.json",
        "END_USER",
        "POST /users/{userId}/meetings",
        "spec",
        ZOOM,
    ),
    (
        "Zoom",
        "zoom/meetings.json",
        "END_USER",
        "GET /meetings/{meetingId}",
        "spec",
        ZOOM,
    ),
    (
        "Zoom",
        "zoom/meetings.json",
        "END_USER",
        "PATCH /meetings/{meetingId}",
        "spec",
        ZOOM,
    ),
    (
        "Zoom",
        "zoom/meetings.json",
        "END_USER",
        "DELETE /meetings/{meetingId}",
        "spec",
        ZOOM,
    ),
    (
        "Zoom",
        "zoom/meetings.json",
        "AGENT",
        "POST /users/{userId}/meetings",
        "spec",
        ZOOM,
    ),
    ("Zoom", "zoom/meetings.json", "END_USER", "GET /past_meetings/{meetingId}/participants", "spec", ZOOM),
    ("Box", "box.json", "END_USER", "get_files_id", "ok", BOX),
    ("Box", "box.json", "END_USER", "get_files_id_content", "ok", BOX),
    ("Box", "box.json", "END_USER", "post_files_content", "ok", BOX),
    ("Box", "box.json", "END_USER", "delete_files_id", "ok", BOX),
    ("Box", "box.json", "END_USER", "post_folders", "ok", BOX),
    ("Box", "box.json", "END_USER", "get_search", "ok", BOX),
    ("Box", "box.json", "END_USER", "get_users_me", "fixed", "https://developer.box.com/reference/get-users-me/"),
    ("Box", "box.json", "END_USER", "post_users", "ok", BOX),
    ("Box", "box.json", "END_USER", "post_collaborations", "ok", BOX),
    ("Box", "box.json", "END_USER", "get_events", "spec", "https://developer.box.com/reference/get-events/"),
    ("Box", "box.json", "END_USER", "post_groups", "ok", BOX),
    ("DocuSign", "docusign.json", "END_USER", "Envelopes_PostEnvelopes", "ok", DOCUSIGN),
    ("DocuSign", "docusign.json", "END_USER", "Envelopes_GetEnvelope", "ok", DOCUSIGN),
    ("DocuSign", "docusign.json", "END_USER", "Envelopes_GetEnvelopes", "ok", DOCUSIGN),
    ("DocuSign", "docusign.json", "END_USER", "Templates_GetTemplates", "ok", DOCUSIGN),
    ("DocuSign", "docusign.json", "END_USER", "Users_PostUsers", "ok", DOCUSIGN),
    ("DocuSign", "docusign.json", "END_USER", "Accounts_GetAccount", "ok", DOCUSIGN),
    ("DocuSign", "docusign.json", "END_USER", "ConnectOAuthConfig_DeleteConnectOAuthConfig", "ok", DOCUSIGN),
    ("Zendesk", "zendesk.yaml", "END_USER", "GET /api/v2/tickets", "broad", ZENDESK),
    ("Zendesk", "zendesk.yaml", "END_USER", "POST /api/v2/tickets", "broad", ZENDESK),
    ("Zendesk", "zendesk.yaml", "END_USER", "PUT /api/v2/tickets/{ticket_id}", "broad", ZENDESK),
    ("Zendesk", "zendesk.yaml", "END_USER", "DELETE /api/v2/tickets/{ticket_id}", "broad", ZENDESK),
    ("Zendesk", "zendesk.yaml", "END_USER", "GET /api/v2/users/me", "ok", ZENDESK),
    ("Zendesk", "zendesk.yaml", "END_USER", "POST /api/v2/users", "broad", ZENDESK),
    ("Zendesk", "zendesk.yaml", "END_USER", "GET /api/v2/search", "ok", ZENDESK),
    ("Zendesk", "zendesk.yaml", "END_USER", "POST /api/v2/macros", "broad", ZENDESK),
    ("Stripe", "stripe.json", "AGENT", "PostCharges", "ok", STRIPE),
    ("Stripe", "stripe.json", "AGENT", "GetCustomers", "ok", STRIPE),
    ("Stripe", "stripe.json", "AGENT", "PostCustomers", "ok", STRIPE),
    ("Stripe", "stripe.json", "AGENT", "DeleteCustomersCustomer", "ok", STRIPE),
    ("Stripe", "stripe.json", "AGENT", "PostRefunds", "ok", STRIPE),
    ("Stripe", "stripe.json", "AGENT", "GetInvoices", "ok", STRIPE),
    ("Stripe", "stripe.json", "AGENT", "PostPaymentIntents", "ok", STRIPE),
    ("Stripe", "stripe.json", "AGENT", "GetBalance", "ok", STRIPE),
    ("Stripe", "stripe.json", "AGENT", "PostPayouts", "ok", STRIPE),
    ("Stripe", "stripe.json", "AGENT", "PostWebhookEndpoints", "ok", STRIPE),
    ("Dropbox", "dropbox/files.stone", "END_USER", "files/download", "ok", DROPBOX + "#files-download"),
    ("Dropbox", "dropbox/files.stone", "END_USER", "files/upload", "ok", DROPBOX + "#files-upload"),
    ("Dropbox", "dropbox/files.stone", "END_USER", "files/list_folder", "ok", DROPBOX + "#files-list_folder"),
    ("Dropbox", "dropbox/files.stone", "END_USER", "files/delete_v2", "ok", DROPBOX + "#files-delete"),
    ("Dropbox", "dropbox/files.stone", "END_USER", "files/search_v2", "ok", DROPBOX + "#files-search"),
    ("Dropbox", "dropbox/files.stone", "END_USER", "files/get_metadata", "ok", DROPBOX + "#files-get_metadata"),
    ("Dropbox", "dropbox/files.stone", "END_USER", "files/move_v2", "ok", DROPBOX + "#files-move"),
    (
        "Dropbox",
        "dropbox/sharing.stone",
        "END_USER",
        "sharing/create_shared_link_with_settings",
        "ok",
        DROPBOX + "#sharing-create_shared_link_with_settings",
    ),
    (
        "Dropbox",
        "dropbox/users.stone",
        "END_USER",
        "users/get_current_account",
        "ok",
        DROPBOX + "#users-get_current_account",
    ),
    ("Dropbox", "dropbox/team.stone", "END_USER", "team/members/list_v2", "ok", DROPBOX + "#team-members-list_v2"),
    ("Dropbox", "dropbox/team.stone", "AGENT", "team/members/list_v2", "ok", DROPBOX + "#team-members-list_v2"),
    ("GitLab", "gitlab.json", "END_USER", "getV3ProjectsId", "wrong", GITLAB),
    ("GitLab", "gitlab.json", "END_USER", "deleteV3ProjectsId", "wrong", GITLAB),
    ("GitLab", "gitlab.json", "END_USER", "getV3Users", "wrong", GITLAB),
    ("Sentry", "sentry.json", "END_USER", "listOrganizations", "ok", SENTRY),
    ("Sentry", "sentry.json", "END_USER", "listOrganizationIssues", "ok", SENTRY),
    ("Sentry", "sentry.json", "END_USER", "getOrganizationIssue", "ok", SENTRY),
    ("Sentry", "sentry.json", "END_USER", "updateOrganizationIssue", "ok", SENTRY),
    ("Sentry", "sentry.json", "END_USER", "deleteOrganizationIssue", "ok", SENTRY),
    ("Sentry", "sentry.json", "END_USER", "getProjectEvent", "ok", SENTRY),
    ("Sentry", "sentry.json", "END_USER", "listOrganizationMembers", "ok", SENTRY),
    ("Sentry", "sentry.json", "END_USER", "addOrganizationMember", "ok", SENTRY),
    ("Sentry", "sentry.json", "END_USER", "createOrganizationRelease", "ok-ambiguous", SENTRY),
    ("Sentry", "sentry.json", "END_USER", "updateProject", "ok", SENTRY),
    ("Sentry", "sentry.json", "END_USER", "deleteProject", "ok", SENTRY),
    ("Datadog", "datadog/v1.yaml", "AGENT", "ListMonitors", "spec", DATADOG),
    ("Datadog", "datadog/v1.yaml", "AGENT", "CreateMonitor", "ok-ambiguous", DATADOG),
    ("Datadog", "datadog/v1.yaml", "AGENT", "DeleteMonitor", "ok-ambiguous", DATADOG),
    ("Datadog", "datadog/v1.yaml", "AGENT", "ListDashboards", "spec", DATADOG),
    ("Datadog", "datadog/v1.yaml", "AGENT", "CreateDashboard", "spec", DATADOG),
    ("Datadog", "datadog/v1.yaml", "AGENT", "QueryMetrics", "spec", DATADOG),
    ("Datadog", "datadog/v1.yaml", "AGENT", "GetUsageSummary", "spec", DATADOG),
    ("Datadog", "datadog/v2.yaml", "AGENT", "ListIncidents", "spec", DATADOG),
    ("Datadog", "datadog/v2.yaml", "AGENT", "CreateIncident", "spec", DATADOG),
    ("Datadog", "datadog/v2.yaml", "AGENT", "CreateUser", "spec", DATADOG),
    ("Datadog", "datadog/v2.yaml", "AGENT", "ListLogsGet", "spec", DATADOG),
    ("PagerDuty", "pagerduty.json", "END_USER", "listIncidents", "spec", PD),
    ("PagerDuty", "pagerduty.json", "END_USER", "createIncident", "spec", PD),
    ("PagerDuty", "pagerduty.json", "END_USER", "updateIncident", "spec", PD),
    ("PagerDuty", "pagerduty.json", "END_USER", "createIncidentNote", "spec", PD),
    ("PagerDuty", "pagerduty.json", "END_USER", "listOnCalls", "spec", PD),
    ("PagerDuty", "pagerduty.json", "END_USER", "deleteService", "spec", PD),
    ("PagerDuty", "pagerduty.json", "END_USER", "createUser", "spec", PD),
    ("PagerDuty", "pagerduty.json", "END_USER", "getCurrentUser", "ok", PD),
    (
        "PagerDuty",
        "pagerduty.json",
        "AGENT",
        "getCurrentUser",
        "fixed",
        "https://github.com/PagerDuty/api-schema/blob/main/reference/REST/openapiv3.json (getCurrentUser)",
    ),
    ("PagerDuty", "pagerduty.json", "AGENT", "listIncidents", "spec", PD),
    ("Xero", "xero.yaml", "END_USER", "getInvoices", "ok", XERO),
    ("Xero", "xero.yaml", "END_USER", "createInvoices", "ok", XERO),
    ("Xero", "xero.yaml", "END_USER", "updateInvoice", "ok", XERO),
    ("Xero", "xero.yaml", "END_USER", "getContacts", "ok", XERO),
    ("Xero", "xero.yaml", "END_USER", "createContacts", "ok", XERO),
    ("Xero", "xero.yaml", "END_USER", "getAccounts", "ok", XERO),
    ("Xero", "xero.yaml", "END_USER", "getOrganisations", "ok", XERO),
    ("Xero", "xero.yaml", "END_USER", "createPayment", "ok", XERO),
    ("Xero", "xero.yaml", "END_USER", "getReportProfitAndLoss", "ok", XERO),
    ("Xero", "xero.yaml", "END_USER", "deleteAccount", "ok", XERO),
]


SHOPIFY = "https://shopify.dev/docs/api/admin-graphql/latest/"
SHOPIFY_SCOPES = "https://shopify.dev/docs/api/usage/access-scopes"
LINEAR = "https://developers.linear.app/docs/oauth/authentication"
MONDAY = "https://developer.monday.com/api-reference/reference/"
STRIPE_PERM = "https://docs.stripe.com/keys/restricted-api-keys"
DS_ESIGN = "https://developers.docusign.com/docs/esign-rest-api/reference/"

#: The second reviewer's sample (docs/reach-audit.md, second section): the GraphQL providers the first
#: sample left to their unit tests, and operations of Dropbox, Stripe and DocuSign the first did not take.
SAMPLE2: list[tuple[str, str, str, str, str, str]] = [
    ("Shopify", "shopify-admin.json", "END_USER", "Query.products", "spec", SHOPIFY + "queries/products"),
    ("Shopify", "shopify-admin.json", "END_USER", "Query.product", "spec", SHOPIFY + "queries/product"),
    (
        "Shopify",
        "shopify-admin.json",
        "END_USER",
        "Mutation.productCreate",
        "spec",
        SHOPIFY + "mutations/productCreate",
    ),
    (
        "Shopify",
        "shopify-admin.json",
        "END_USER",
        "Mutation.productUpdate",
        "spec",
        SHOPIFY + "mutations/productUpdate",
    ),
    (
        "Shopify",
        "shopify-admin.json",
        "END_USER",
        "Mutation.productDelete",
        "spec",
        SHOPIFY + "mutations/productDelete",
    ),
    ("Shopify", "shopify-admin.json", "END_USER", "Query.orders", "spec", SHOPIFY + "queries/orders"),
    ("Shopify", "shopify-admin.json", "END_USER", "Query.order", "spec", SHOPIFY + "queries/order"),
    ("Shopify", "shopify-admin.json", "END_USER", "Mutation.orderUpdate", "spec", SHOPIFY + "mutations/orderUpdate"),
    ("Shopify", "shopify-admin.json", "END_USER", "Query.customers", "spec", SHOPIFY + "queries/customers"),
    (
        "Shopify",
        "shopify-admin.json",
        "END_USER",
        "Mutation.customerCreate",
        "spec",
        SHOPIFY + "mutations/customerCreate",
    ),
    (
        "Shopify",
        "shopify-admin.json",
        "END_USER",
        "Query.inventoryItems",
        "ok-ambiguous",
        SHOPIFY + "queries/inventoryItems",
    ),
    (
        "Shopify",
        "shopify-admin.json",
        "END_USER",
        "Mutation.inventoryAdjustQuantities",
        "spec",
        SHOPIFY + "mutations/inventoryAdjustQuantities",
    ),
    ("Shopify", "shopify-admin.json", "END_USER", "Query.locations", "ok-ambiguous", SHOPIFY + "queries/locations"),
    ("Shopify", "shopify-admin.json", "END_USER", "Query.draftOrders", "spec", SHOPIFY + "queries/draftOrders"),
    ("Shopify", "shopify-admin.json", "END_USER", "Mutation.refundCreate", "spec", SHOPIFY + "mutations/refundCreate"),
    ("Shopify", "shopify-admin.json", "END_USER", "Query.shop", "ok", SHOPIFY + "queries/shop"),
    ("Shopify", "shopify-admin.json", "END_USER", "Query.staffMember", "spec", SHOPIFY + "queries/staffMember"),
    ("Linear", "linear.graphql", "END_USER", "Query.issue", "ok", LINEAR),
    ("Linear", "linear.graphql", "END_USER", "Query.issues", "ok", LINEAR),
    ("Linear", "linear.graphql", "END_USER", "Mutation.issueCreate", "ok", LINEAR),
    ("Linear", "linear.graphql", "END_USER", "Mutation.issueUpdate", "ok", LINEAR),
    ("Linear", "linear.graphql", "END_USER", "Mutation.issueDelete", "ok", LINEAR),
    ("Linear", "linear.graphql", "END_USER", "Mutation.commentCreate", "ok", LINEAR),
    ("Linear", "linear.graphql", "END_USER", "Query.comments", "ok", LINEAR),
    ("Linear", "linear.graphql", "END_USER", "Query.projects", "ok", LINEAR),
    ("Linear", "linear.graphql", "END_USER", "Mutation.projectCreate", "ok", LINEAR),
    ("Linear", "linear.graphql", "END_USER", "Query.teams", "ok", LINEAR),
    ("Linear", "linear.graphql", "END_USER", "Mutation.teamCreate", "ok", LINEAR),
    ("Linear", "linear.graphql", "END_USER", "Query.viewer", "ok", LINEAR),
    ("Linear", "linear.graphql", "END_USER", "Query.users", "ok", LINEAR),
    ("Linear", "linear.graphql", "END_USER", "Mutation.userUpdate", "ok", LINEAR),
    ("Linear", "linear.graphql", "END_USER", "Query.auditEntries", "fixed", "https://linear.app/docs/audit-log"),
    ("Linear", "linear.graphql", "END_USER", "Mutation.organizationUpdate", "wrong", LINEAR),
    ("Linear", "linear.graphql", "END_USER", "Mutation.webhookCreate", "ok", LINEAR),
    ("monday.com", "monday.graphql", "END_USER", "Query.boards", "ok", MONDAY + "boards"),
    ("monday.com", "monday.graphql", "END_USER", "Query.items", "ok", MONDAY + "items"),
    ("monday.com", "monday.graphql", "END_USER", "Mutation.create_item", "ok", MONDAY + "items"),
    ("monday.com", "monday.graphql", "END_USER", "Mutation.change_column_value", "ok", MONDAY + "columns"),
    ("monday.com", "monday.graphql", "END_USER", "Mutation.delete_item", "ok", MONDAY + "items"),
    ("monday.com", "monday.graphql", "END_USER", "Query.updates", "ok", MONDAY + "updates"),
    ("monday.com", "monday.graphql", "END_USER", "Mutation.create_update", "ok", MONDAY + "updates"),
    ("monday.com", "monday.graphql", "END_USER", "Query.users", "ok", MONDAY + "users"),
    ("monday.com", "monday.graphql", "END_USER", "Query.me", "ok", MONDAY + "me"),
    ("monday.com", "monday.graphql", "END_USER", "Mutation.create_board", "ok", MONDAY + "boards"),
    ("monday.com", "monday.graphql", "END_USER", "Query.workspaces", "ok", MONDAY + "workspaces"),
    ("monday.com", "monday.graphql", "END_USER", "Mutation.add_users_to_board", "ok", MONDAY + "boards"),
    ("monday.com", "monday.graphql", "END_USER", "Mutation.deactivate_users", "fixed", MONDAY + "users"),
    ("monday.com", "monday.graphql", "END_USER", "Query.audit_logs", "fixed", MONDAY + "audit-logs"),
    ("monday.com", "monday.graphql", "END_USER", "Mutation.create_webhook", "ok", MONDAY + "webhooks"),
    ("monday.com", "monday.graphql", "END_USER", "Query.account", "ok", MONDAY + "account"),
    ("Dropbox", "dropbox/files.stone", "END_USER", "files/copy_v2", "ok", DROPBOX + "#files-copy"),
    ("Dropbox", "dropbox/files.stone", "END_USER", "files/create_folder_v2", "ok", DROPBOX + "#files-create_folder"),
    ("Dropbox", "dropbox/files.stone", "END_USER", "files/list_revisions", "ok", DROPBOX + "#files-list_revisions"),
    ("Dropbox", "dropbox/files.stone", "END_USER", "files/restore", "ok", DROPBOX + "#files-restore"),
    (
        "Dropbox",
        "dropbox/files.stone",
        "END_USER",
        "files/get_temporary_link",
        "ok",
        DROPBOX + "#files-get_temporary_link",
    ),
    ("Dropbox", "dropbox/files.stone", "END_USER", "files/get_thumbnail_v2", "ok", DROPBOX + "#files-get_thumbnail"),
    (
        "Dropbox",
        "dropbox/sharing.stone",
        "END_USER",
        "sharing/list_shared_links",
        "ok",
        DROPBOX + "#sharing-list_shared_links",
    ),
    ("Dropbox", "dropbox/sharing.stone", "END_USER", "sharing/share_folder", "ok", DROPBOX + "#sharing-share_folder"),
    (
        "Dropbox",
        "dropbox/sharing.stone",
        "END_USER",
        "sharing/add_folder_member",
        "ok",
        DROPBOX + "#sharing-add_folder_member",
    ),
    ("Dropbox", "dropbox/sharing.stone", "END_USER", "sharing/list_folders", "ok", DROPBOX + "#sharing-list_folders"),
    ("Dropbox", "dropbox/users.stone", "END_USER", "users/get_account", "ok", DROPBOX + "#users-get_account"),
    ("Dropbox", "dropbox/users.stone", "END_USER", "users/get_space_usage", "ok", DROPBOX + "#users-get_space_usage"),
    ("Dropbox", "dropbox/team.stone", "END_USER", "team/members/add_v2", "ok", DROPBOX + "#team-members-add"),
    ("Dropbox", "dropbox/team.stone", "END_USER", "team/get_info", "ok", DROPBOX + "#team-get_info"),
    (
        "Dropbox",
        "dropbox/file_requests.stone",
        "END_USER",
        "file_requests/create",
        "ok",
        DROPBOX + "#file_requests-create",
    ),
    ("Dropbox", "dropbox/team_log.stone", "END_USER", "team_log/get_events", "ok", DROPBOX + "#team_log-get_events"),
    ("Stripe", "stripe.json", "AGENT", "GetCustomersCustomer", "ok", STRIPE_PERM),
    ("Stripe", "stripe.json", "AGENT", "PostCustomersCustomer", "ok", STRIPE_PERM),
    ("Stripe", "stripe.json", "AGENT", "GetCharges", "ok", STRIPE_PERM),
    ("Stripe", "stripe.json", "AGENT", "PostChargesChargeCapture", "ok", STRIPE_PERM),
    ("Stripe", "stripe.json", "AGENT", "GetPaymentIntents", "ok", STRIPE_PERM),
    ("Stripe", "stripe.json", "AGENT", "PostPaymentIntentsIntentConfirm", "ok", STRIPE_PERM),
    ("Stripe", "stripe.json", "AGENT", "PostPaymentIntentsIntentCancel", "ok", STRIPE_PERM),
    ("Stripe", "stripe.json", "AGENT", "GetRefunds", "ok", STRIPE_PERM),
    ("Stripe", "stripe.json", "AGENT", "GetSubscriptions", "ok", STRIPE_PERM),
    ("Stripe", "stripe.json", "AGENT", "PostSubscriptions", "ok", STRIPE_PERM),
    ("Stripe", "stripe.json", "AGENT", "DeleteSubscriptionsSubscriptionExposedId", "ok", STRIPE_PERM),
    ("Stripe", "stripe.json", "AGENT", "PostSubscriptionsSubscriptionExposedId", "ok", STRIPE_PERM),
    ("Stripe", "stripe.json", "AGENT", "GetProducts", "ok", STRIPE_PERM),
    ("Stripe", "stripe.json", "AGENT", "PostPrices", "ok", STRIPE_PERM),
    ("Stripe", "stripe.json", "AGENT", "GetEvents", "ok", STRIPE_PERM),
    ("Stripe", "stripe.json", "AGENT", "GetAccount", "ok", STRIPE_PERM),
    ("Stripe", "stripe.json", "AGENT", "PostCheckoutSessions", "ok", STRIPE_PERM),
    ("DocuSign", "docusign.json", "END_USER", "Users_GetUsers", "ok", DS_ESIGN),
    ("DocuSign", "docusign.json", "END_USER", "Users_PutUsers", "ok", DS_ESIGN),
    ("DocuSign", "docusign.json", "END_USER", "Users_DeleteUsers", "ok", DS_ESIGN),
    ("DocuSign", "docusign.json", "END_USER", "Groups_PostGroups", "ok", DS_ESIGN),
    ("DocuSign", "docusign.json", "END_USER", "Groups_GetGroups", "ok", DS_ESIGN),
    ("DocuSign", "docusign.json", "END_USER", "PermissionProfiles_PostPermissionProfiles", "ok", DS_ESIGN),
    ("DocuSign", "docusign.json", "END_USER", "Connect_PostConnectConfiguration", "fixed", DS_ESIGN),
    ("DocuSign", "docusign.json", "END_USER", "Brands_PostBrands", "ok", DS_ESIGN),
    ("DocuSign", "docusign.json", "END_USER", "AccountCustomFields_PostAccountCustomFields", "ok", DS_ESIGN),
    ("DocuSign", "docusign.json", "END_USER", "Accounts_DeleteAccount", "fixed", DS_ESIGN),
    ("DocuSign", "docusign.json", "END_USER", "Envelopes_PutEnvelope", "ok", DS_ESIGN),
    ("DocuSign", "docusign.json", "END_USER", "Recipients_PostRecipients", "ok", DS_ESIGN),
    ("DocuSign", "docusign.json", "END_USER", "UserSignatures_PostUserSignatures", "ok", DS_ESIGN),
]


class _Published:
    """The spec store, except that a published URL of a local copy is answered from the copy."""

    def __init__(self, store: Any, local: dict[str, bytes]) -> None:
        self._store = store
        self._local = local

    def get(self, url: str, *, kind_hint: Any = None) -> Any:
        if url in self._local:
            return fetched_spec(self._local[url], url, "text/plain")
        return self._store.get(url, kind_hint=kind_hint)

    def prefetch(self, urls: Any, *, on_ready: Any = None) -> dict[str, Any]:
        urls = list(urls)
        out = {u: self.get(u, kind_hint=k) for u, k in urls if u in self._local}
        for u, k in urls:
            if u in self._local and on_ready is not None:
                on_ready(u, k)
        out.update(self._store.prefetch([(u, k) for u, k in urls if u not in self._local], on_ready=on_ready))
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def _manifest(url: str, ops: list[str], identity: str) -> dict[str, Any]:
    resources, operations, accesses = [], [], []
    for i, op in enumerate(ops):
        method, _, path = (
            op.partition(" ") if op.startswith(("GET ", "POST ", "PUT ", "PATCH ", "DELETE ")) else ("", "", "")
        )
        resources.append(
            {
                "id": f"r{i}",
                "interaction_protocol": "REST",
                "owner": "CONSUMER",
                "display_name": "spec",
                "spec": {"spec_url": url, "resource_path": path},
            }
        )
        selector = {"http_method": method} if method else {"operation_id": op}
        operations.append({"id": f"o{i}", "resource": f"r{i}", "api_operation_spec": selector})
        accesses.append(
            {
                "id": f"a{i}",
                "operation": f"o{i}",
                "identity_used": identity,
                "necessity": "REQUIRED",
                "access_justification": "the reach audit samples it",
            }
        )
    return {"resources": resources, "operations": operations, "resource_accesses": accesses}


def _pick(access: Any) -> tuple[str, str]:
    if not access.complete or access.scopes is None:
        return "undetermined" + ("; administrator" if _administrator(access) else ""), ""
    choice = access.choice or {}
    pick = ", ".join(access.scopes) if access.scopes else "bare credential (no scope named)"
    if choice.get("ambiguous"):
        pick += " (ambiguous: also " + ", ".join(choice.get("candidates") or ()) + ")"
    if _administrator(access):
        pick += "; administrator"
    return pick, str(access.requirements_source or "")


def _administrator(access: Any) -> bool:
    """The report says the caller must be an administrator (a provider's note, or the pick itself)."""
    notes = access.provider_notes or ()
    return any(n.get("principal") == "administrator" for n in notes) or (access.choice or {}).get("fallback") == "admin"


def derive(
    specs: Path, sample: list[tuple[str, str, str, str, str, str]]
) -> dict[tuple[str, str, str], tuple[str, str]]:
    from ramscope import Settings
    from ramscope.derive import Engine
    from ramscope.store import SpecStore

    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for _, fname, identity, op, _, _ in sample:
        groups[(fname, identity)].append(op)
    out: dict[tuple[str, str, str], tuple[str, str]] = {}
    files = {Path(f).name: (specs / f).read_bytes() for f, _ in groups}
    with LocalHTTPServer() as srv, tempfile.TemporaryDirectory() as cache:
        for name, body in files.items():
            srv.route(f"/{name}", body=body)
        settings = Settings(cache_dir=Path(cache), allow_private_network=True, timeout=120)
        published = {url: files[name] for name, url in PUBLISHED.items() if name in files}
        with SpecStore(settings) as real, Engine(settings, store=_Published(real, published)) as engine:
            for (fname, identity), ops in groups.items():
                name = Path(fname).name
                url = PUBLISHED.get(name, srv.url(f"/{name}"))
                report = engine.derive({"name": "reach audit", "resourceAccessManifest": _manifest(url, ops, identity)})
                for op, access in zip(ops, report.accesses, strict=True):
                    out[(fname, identity, op)] = _pick(access)
    return out


def markdown(
    picks: dict[tuple[str, str, str], tuple[str, str]], sample: list[tuple[str, str, str, str, str, str]]
) -> str:
    rows = [
        "| API | identity | operation | pick | from | verdict | evidence |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for api, fname, identity, op, verdict, url in sample:
        pick, src = picks[(fname, identity, op)]
        rows.append(f"| {api} | {identity} | `{op}` | {pick} | {src} | {verdict} | {url} |")
    return "\n".join(rows) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--specs", type=Path, default=Path("/tmp/rs/reach"), help="directory of the providers' specs")
    ap.add_argument(
        "--second", action="store_true", help="the second reviewer's sample (GraphQL, Dropbox, Stripe, DocuSign)"
    )
    args = ap.parse_args()
    sample = SAMPLE2 if args.second else SAMPLE
    print(markdown(derive(args.specs, sample), sample), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
