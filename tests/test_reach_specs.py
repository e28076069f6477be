"""Vendor extensions read beside `security`, and provider quirks applied to an index, on trimmed real
provider files (tests/fixtures/specs/reach/SOURCES.md) and hand-written shapes where no license allows."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from ramscope.providers import CATALOGS, catalog, quirks
from ramscope.specs import build_index
from ramscope.specs.model import SchemeRequirement as T
from ramscope.specs.model import SpecIndex
from tests._specs import fixture_spec


def index(name: str) -> SpecIndex:
    return build_index(fixture_spec(f"reach/{name}"))


def op(ix: SpecIndex, op_id: str):  # type: ignore[no-untyped-def]
    (entry,) = ix.by_operation_id[op_id]
    return entry


def test_atlassian_beta_granular_scopes_are_offered_not_required() -> None:
    """Jira getIssue keeps read:jira-work; the Beta granular set is recorded as offered."""
    e = op(index("jira.json"), "getIssue")
    assert (T("OAuth2", ("read:jira-work",)),) in e.requirements
    assert not any("read:issue:jira" in t.scopes for alt in e.requirements for t in alt)
    (offered,) = e.extra["extensions"]["offered"]
    assert offered["state"] == "Beta"
    assert offered["kind"] == "granular"
    assert ["OAuth2", sorted(offered["requirement"][0][1])] == offered["requirement"][0]
    assert "read:issue:jira" in offered["requirement"][0][1]


def test_datadog_x_permission_scopes_the_application_key() -> None:
    """Datadog: {apiKeyAuth, appKeyAuth} becomes {apiKeyAuth, x-permission:[dashboards_read]}."""
    ix = index("datadog-v1.json")
    e = op(ix, "GetDashboard")
    assert e.requirements == (
        (T("AuthZ", ("dashboards_read",)),),
        (T("apiKeyAuth"), T("x-permission", ("dashboards_read",))),
    )
    assert e.security_source == "operation+x-permission"
    assert "x-permission" in ix.scheme_map


def test_datadog_v2_log_query_gets_its_read_permission() -> None:
    """Datadog v2 ListLogs (a read-only query): the application key is scoped to logs_read_data."""
    e = op(index("datadog-v2.json"), "ListLogs")
    assert e.requirements == (
        (T("AuthZ", ("logs_read_data",)),),
        (T("apiKeyAuth"), T("x-permission", ("logs_read_data",))),
    )
    assert e.security_source == "operation+x-permission"


def test_datadog_v2_root_security_is_scoped_too() -> None:
    """Datadog v2 ListLogsGet inherits the root security: its key pair is scoped, the bare AuthZ stays."""
    e = op(index("datadog-v2.json"), "ListLogsGet")
    assert e.requirements == ((T("AuthZ"),), (T("apiKeyAuth"), T("x-permission", ("logs_read_data",))))
    assert e.security_source == "root+x-permission"


def test_datadog_v2_monitor_write_gets_its_write_permission() -> None:
    """Datadog v2: a monitor read gets monitors_read; a notification-rule write its write permission."""
    ix = index("datadog-v2.json")
    assert (T("apiKeyAuth"), T("x-permission", ("monitors_read",))) in op(ix, "GetMonitorNotificationRule").requirements
    assert op(ix, "CreateMonitorNotificationRule").requirements == (
        (T("AuthZ"),),
        (T("apiKeyAuth"), T("x-permission", ("monitor_config_policy_write",))),
    )


def test_datadog_v2_or_list_is_any_one_and_list_all_of() -> None:
    """Datadog v2 operator OR: one key alternative per permission; AND: one alternative holding them all."""
    ix = index("datadog-v2.json")
    assert op(ix, "ListIncidentRules").requirements == (
        (T("AuthZ", ("incident_settings_read",)),),
        (T("apiKeyAuth"), T("x-permission", ("incident_settings_read",))),
        (T("apiKeyAuth"), T("x-permission", ("incident_notification_settings_read",))),
    )
    assert op(ix, "CreateOnCallPageFromIncident").requirements == (
        (T("AuthZ", ("incident_write",)),),
        (T("apiKeyAuth"), T("x-permission", ("incident_write", "oncall_page"))),
    )


def test_datadog_v2_intake_and_open_operations_stay_credential_only() -> None:
    """Datadog v2 SubmitLog (API key only) and the OPEN key checks name no permission: security as is."""
    ix = index("datadog-v2.json")
    submit = op(ix, "SubmitLog")
    assert submit.requirements == ((T("apiKeyAuth"),),)
    assert "extensions" not in submit.extra
    assert op(ix, "Validate").requirements == ((T("apiKeyAuth"),),)
    keys = op(ix, "ValidateAPIKey")
    assert keys.requirements == ((T("apiKeyAuth"), T("appKeyAuth")), (T("AuthZ"),))
    assert keys.security_source == "operation"


def test_pagerduty_scope_is_an_alternative_beside_the_api_key() -> None:
    """PagerDuty: the account-wide key stays; the scoped OAuth alternative is added."""
    ix = index("shapes-pagerduty.json")
    assert op(ix, "listIncidents").requirements == ((T("api_key"),), (T("x-pd-requires-scope", ("incidents.read",)),))
    assert op(ix, "listAbilities").requirements == ((T("api_key"),),)


def test_pagerduty_write_scope_and_the_operations_that_name_none() -> None:
    """PagerDuty createIncident gets incidents.write; automation actions and /v3 schedules name no scope
    (68 of 465 in PagerDuty/api-schema, none "Scoped OAuth requires:"): the account API key only."""
    ix = index("shapes-pagerduty.json")
    assert op(ix, "createIncident").requirements == ((T("api_key"),), (T("x-pd-requires-scope", ("incidents.write",)),))
    for op_id in ("getAllAutomationActions", "listSchedulesV3"):
        e = op(ix, op_id)
        assert e.requirements == ((T("api_key"),),)
        assert "extensions" not in e.extra


def test_cloudflare_token_groups_are_any_one_of() -> None:
    """Cloudflare: the API token term becomes one alternative per permission group; the global key stays."""
    e = op(index("shapes-cloudflare.json"), "notification-policies-list")
    groups = [alt[0].scopes[0] for alt in e.requirements if alt[0].scheme == "x-api-token-group"]
    assert groups == [
        "Zero Trust: PII Read", "Notifications Write", "Notifications Read", "Account Settings Write",
        "Account Settings Read",
    ]  # fmt: skip
    assert (T("api_email"), T("api_key")) in e.requirements
    assert not any(alt == (T("api_token"),) for alt in e.requirements)


def test_zoom_granular_scopes_are_any_one_of_and_classic_ones_offered() -> None:
    """Zoom: each granular scope of `x-extensions` is an alternative of its own, in place of `security`'s one
    requirement naming all four beside the Authorization header; the classic scopes are offered."""
    e = op(index("shapes-zoom.json"), "meetings")
    assert e.requirements == (
        (T("openapi_oauth", ("meeting:read:list_meetings",)),),
        (T("openapi_oauth", ("meeting:read:list_meetings:admin",)),),
    )
    assert e.security_source == "operation+x-granular-scopes"
    offered = e.extra["extensions"]["offered"]
    assert [(o["source"], o["kind"], o["requirement"]) for o in offered] == [
        ("x-macro-scopes", "classic", [["openapi_oauth", ["meeting:read:admin"]]]),
        ("x-macro-scopes", "classic", [["openapi_oauth", ["meeting:read"]]]),
    ]
    assert offered[0]["reference"] == "https://developers.zoom.us/docs/integrations/migrate/"


def test_zoom_a_single_list_is_read_alone() -> None:
    """Zoom operations with classic scopes only (devices) or granular only (recording analytics)."""
    ix = index("shapes-zoom.json")
    assert op(ix, "listDevices").requirements == (
        (T("openapi_oauth", ("device:read:admin",)),),
        (T("openapi_oauth", ("device:write:admin",)),),
    )
    assert op(ix, "listDevices").security_source == "operation+x-macro-scopes"
    assert op(ix, "analytics_details").security_source == "operation+x-granular-scopes"
    assert len(op(ix, "analytics_details").requirements) == 3


def test_confluence_v2_granular_scopes_are_current_and_required() -> None:
    """Confluence v2 lists only granular scopes, as `Current`: they are the requirement, nothing is offered."""
    ix = index("shapes-confluence.json")
    e = op(ix, "getPageById")
    assert e.requirements == ((T("basicAuth"),), (T("oAuthDefinitions", ("read:page:confluence",)),))
    assert "offered" not in e.extra.get("extensions", {})
    assert op(ix, "createSpaceProperty").requirements[1] == (
        T("oAuthDefinitions", ("read:space:confluence", "write:space:confluence")),
    )


def test_box_requires_admin_is_a_note_not_a_permission() -> None:
    """Box x-box-requires-admin: requirements unchanged, a note with its source."""
    e = op(index("box.json"), "post_metadata_templates_schema")
    assert e.requirements == ((T("OAuth2Security"),),)
    assert e.extra["extensions"]["notes"][0]["source"] == "x-box-requires-admin"


def test_slack_quirks_split_any_of_and_token_types() -> None:
    """Slack: conversations.history is eight alternatives (4 scopes x user/bot), marked contextual."""
    ix = quirks.apply(index("slack.json"))
    e = op(ix, "conversations_history")
    assert len(e.requirements) == 8
    assert {alt[0].scheme for alt in e.requirements} == {"slackAuth", "slackAuth#bot"}
    assert e.extra["quirks"]["contextual"]["source"] == "https://api.slack.com/methods/conversations.history"
    assert op(ix, "search_messages").requirements == ((T("slackAuth", ("search:read",)),),)


def test_slack_none_scope_is_any_token() -> None:
    """Slack's pseudo-scope `none`: a token of either type, no scope."""
    e = op(quirks.apply(index("slack.json")), "api_test")
    assert e.requirements == ((T("slackAuth"),), (T("slackAuth#bot"),))


def test_asana_empty_scopes_mean_default() -> None:
    """Asana: oauth2 [] is the full-access `default` scope."""
    e = op(quirks.apply(index("asana.json")), "addUserForWorkspace")
    assert (T("oauth2", ("default",)),) in e.requirements


def test_asana_audit_log_takes_a_service_accounts_token_only() -> None:
    """Asana's audit log refuses OAuth tokens: only the personal access token (a Service Account's) stays,
    with an administrator's note naming the page."""
    e = op(quirks.apply(index("asana.json")), "getAuditLogEvents")
    assert e.requirements == ((T("personalAccessToken"),),)
    (note,) = e.extra["quirks"]["admin"]
    assert note["source"].startswith("https://developers.asana.com/docs/audit-log-events")


def test_quirks_leave_other_providers_alone() -> None:
    """No quirk matches the Datadog spec: the index is returned as is."""
    ix = index("datadog-v1.json")
    assert quirks.apply(ix) is ix


def test_every_quirk_names_its_source() -> None:
    """Each quirk entry of the shipped data carries a source page."""
    provs, nope, version = quirks.load()
    assert version
    for q in provs:
        raw = q.raw
        for key in ("scope_lists", "empty_scopes", "anonymous", "allowed_for", "empty_scopes_by_method"):
            if key in raw:
                assert raw[key]["source"].startswith("https://"), (q.name, key)
        for d in (*raw.get("deprecated", ()), *raw.get("empty_scopes_by_path", ())):
            assert d["source"].startswith("https://"), (q.name, d)
    assert {n.name for n in nope} == {"salesforce", "clickup", "quickbooks"}
    assert all(n.source.startswith("https://") for n in nope)



@pytest.mark.parametrize("name", ["notion", "docusign", "stripe-restricted-keys", "intercom", "zendesk"])
def test_hand_catalog_snapshots_are_current_and_every_entry_names_its_page(name: str) -> None:
    """Each shipped hand catalog is what vendor/<name>/catalog.json builds to; each entry cites its page."""
    root = Path(__file__).resolve().parent.parent
    module = importlib.import_module(CATALOGS[name][0])
    shipped = root / "src" / "ramscope" / "providers" / "data" / CATALOGS[name][1]
    assert module.build(root / "vendor" / name) == shipped.read_bytes(), f"run: build_providers.py --only {name}"
    cat = catalog(name)
    assert cat is not None
    assert all(e.notes[0].startswith("source: https://") for e in cat.entries)


def test_notion_overrides_its_spec_and_stripe_sits_beside_it() -> None:
    """Notion's catalog overrides its spec (with the capabilities page); Stripe's sits beside the secret key."""
    notion, stripe = catalog("notion"), catalog("stripe-restricted-keys")
    assert notion is not None
    assert stripe is not None
    assert notion.source["overrides_spec"]["reference"] == "https://developers.notion.com/reference/capabilities"
    assert "overrides_spec" not in stripe.source
    assert stripe.source["beside_spec"]["reference"] == "https://docs.stripe.com/keys/restricted-api-keys"


def test_a_hostile_any_of_product_is_not_expanded() -> None:
    """A spec claiming Slack's server with many terms of many scopes keeps the alternative as written."""
    from ramscope.specs.model import OperationEntry

    ix = index("slack.json")
    terms = tuple(T(f"slackAuth{i}", tuple(f"s{i}:{j}" for j in range(8))) for i in range(4))
    schemes = tuple(
        type(s)(f"slackAuth{i}", s.type, flows=s.flows) for i in range(4) for s in ix.schemes if s.name == "slackAuth"
    )
    from dataclasses import replace

    hostile = replace(ix, operations=(OperationEntry("x", "x", "GET", "/x", requirements=(terms,)),),
                      schemes=ix.schemes + schemes)  # fmt: skip
    (e,) = quirks.apply(hostile).operations
    assert e.requirements == (terms,)


def test_openapi_reader_keeps_atlassians_permissions_required_paragraph() -> None:
    """Jira's "Permissions required" paragraph is kept (bounded) beside the cut description."""
    ix = index("jira.json")
    assert op(ix, "getBanner").extra["permissions_required"] == (
        "*Administer Jira* [global permission](https://confluence.atlassian.com/x/x4dKLg)."
    )
    assert op(ix, "deleteFilter").extra["permissions_required"].startswith("Permission to access Jira, however")
    assert "permissions_required" not in op(ix, "createIssue").extra


def test_jira_administer_jira_only_operations_get_the_administrators_note() -> None:
    """Only the exact "*Administer Jira* global permission" paragraph is an administrator's note; "the creator
    of the filter or a user with Administer Jira" is not."""
    ix = quirks.apply(index("jira.json"))
    (note,) = op(ix, "getBanner").extra["quirks"]["admin"]
    assert note["message"].startswith("the calling user must have the Administer Jira global permission")
    assert "admin" not in op(ix, "deleteFilter").extra.get("quirks", {})


def test_openapi_reader_keeps_the_allowed_for_roles_before_cutting_the_description() -> None:
    """The bullets of an "Allowed For" section are kept (the description itself is cut to 400 characters)."""
    ix = index("shapes-zendesk.json")
    assert op(ix, "DeleteTicket").extra["allowed_for"] == ["Admins", "Agents with permission to delete tickets"]
    assert op(ix, "ListAuditLogs").extra["allowed_for"] == ["Admins on accounts that have audit log access"]
    assert "allowed_for" not in op(ix, "ListTickets").extra


@pytest.mark.parametrize(
    ("description", "roles"),
    [
        ("x\n\n#### Allowed for\n\n* Admins, Agents\n", ["Admins, Agents"]),
        ("## Allowed For\n- Agents\n- End users\n\n## Next\n* not a role\n", ["Agents", "End users"]),
        ("Allowed For: Admins", []),
        ("#### Allowed For\n\n" + "".join(f"* role {i}\n" for i in range(9)), []),
        ("#### Allowed For\n\n* Admins\n" + "x" * 20_000, []),
    ],
)
def test_allowed_for_is_a_short_bounded_list(description: str, roles: list[str]) -> None:
    """Only a heading's bullet list, at most 8 bullets, in a description of at most 20,000 characters."""
    from ramscope.specs.openapi import allowed_for

    assert allowed_for(description) == roles


def test_zendesk_admin_note_only_for_administrators_only() -> None:
    """The Zendesk quirk notes "administrator" where every role listed is an admin one, never where an
    agent or end user may call the endpoint too."""
    ix = quirks.apply(index("shapes-zendesk.json"))
    noted = sorted(e.operation_id for e in ix.operations if (e.extra.get("quirks") or {}).get("admin"))
    assert noted == ["ListAuditLogs", "UpdateAccountSettings"]
    (note,) = op(ix, "UpdateAccountSettings").extra["quirks"]["admin"]
    assert note["message"].endswith("(Allowed For: Admins)")
    assert note["source"].startswith("https://developer.zendesk.com/api-reference/introduction/doc-conventions/")
    assert op(ix, "UpdateAccountSettings").requirements == ((T("basicAuth"),),)


def test_zendesk_catalog_matches_the_host_only() -> None:
    """The catalog's paths are Zendesk's own (/api/v2/...): a spec whose server carries /api/v2 is not
    matched (its paths would start below it), nor is a host that only ends in zendesk.com."""
    from ramscope.providers import catalog_for_servers

    hit = catalog_for_servers(["https://acme.zendesk.com"])
    assert hit is not None
    assert hit.name == "zendesk"
    assert catalog_for_servers(["https://acme.zendesk.com/api/v2"]) is None
    assert catalog_for_servers(["https://evilzendesk.com"]) is None


def test_cloudflare_token_groups_beside_a_key_only_security() -> None:
    """Cloudflare lists API-token groups on operations whose `security` names only the global key pair
    (email routing): each group is an alternative beside the key pair, never dropped."""
    e = op(index("shapes-cloudflare.json"), "email-routing-routing-rules-get-routing-rule")
    assert e.requirements == (
        (T("api_email"), T("api_key")),
        (T("x-api-token-group", ("Email Routing Rules Write",)),),
        (T("x-api-token-group", ("Email Routing Rules Read",)),),
    )
