"""Google Discovery documents -> SpecIndex: scopes, inferred schemes, flatPath, servicePath."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from ramscope.derive.resolve import Target, Unresolved, resolve
from ramscope.specs import FlowKind, SchemeRequirement, SchemeType, SpecIndex, SpecKind, build_index
from tests._specs import make_spec, rest_operation


def discovery(path: Path, name: str) -> tuple[SpecIndex, dict[str, Any]]:
    body = (path / name).read_bytes()
    return build_index(make_spec(body, f"https://www.googleapis.com/discovery/v1/apis/{name}")), orjson.loads(body)


def scopes_of(index: SpecIndex, method_id: str) -> list[str]:
    (entry,) = index.by_operation_id[method_id]
    assert entry.requirements is not None
    assert all(len(alt) == 1 and alt[0].scheme == "Oauth2" and len(alt[0].scopes) == 1 for alt in entry.requirements)
    return [alt[0].scopes[0] for alt in entry.requirements]


# --------------------------------------------------------------------------- real documents (reference facts)


def test_gmail_messages_send_lists_its_five_scopes(discovery_documents: Path) -> None:
    """Reference fact for derivation: gmail.users.messages.send accepts any one of five scopes."""
    index, _ = discovery(discovery_documents, "gmail.v1.json")
    assert scopes_of(index, "gmail.users.messages.send") == [
        "https://mail.google.com/",
        "https://www.googleapis.com/auth/gmail.addons.current.action.compose",
        "https://www.googleapis.com/auth/gmail.compose",
        "https://www.googleapis.com/auth/gmail.modify",
        "https://www.googleapis.com/auth/gmail.send",
    ]
    (entry,) = index.by_operation_id["gmail.users.messages.send"]
    assert (entry.method, entry.full_path) == ("POST", "/gmail/v1/users/{userId}/messages/send")


def test_drive_files_list_scopes(discovery_documents: Path) -> None:
    """Reference fact: drive.files.list accepts any one of eight scopes."""
    index, _ = discovery(discovery_documents, "drive.v3.json")
    assert scopes_of(index, "drive.files.list") == [
        "https://www.googleapis.com/auth/drive",
        "https://www.googleapis.com/auth/drive.appdata",
        "https://www.googleapis.com/auth/drive.file",
        "https://www.googleapis.com/auth/drive.meet.readonly",
        "https://www.googleapis.com/auth/drive.metadata",
        "https://www.googleapis.com/auth/drive.metadata.readonly",
        "https://www.googleapis.com/auth/drive.photos.readonly",
        "https://www.googleapis.com/auth/drive.readonly",
    ]
    assert index.base_paths == ("/drive/v3",)


def test_calendar_events_insert_scopes_and_descriptions(discovery_documents: Path) -> None:
    """Reference fact: calendar.events.insert's scopes (four in the bundled document) with their descriptions."""
    index, doc = discovery(discovery_documents, "calendar.v3.json")
    assert scopes_of(index, "calendar.events.insert") == [
        "https://www.googleapis.com/auth/calendar",
        "https://www.googleapis.com/auth/calendar.app.created",
        "https://www.googleapis.com/auth/calendar.events",
        "https://www.googleapis.com/auth/calendar.events.owned",
    ]
    oauth = index.scheme_map["Oauth2"]
    want = doc["auth"]["oauth2"]["scopes"]["https://www.googleapis.com/auth/calendar.events"]["description"]
    assert oauth.scope_description("https://www.googleapis.com/auth/calendar.events") == want
    assert [s for s, _ in oauth.flows[0].scopes] == list(doc["auth"]["oauth2"]["scopes"])  # document order


def test_seed_calendar_path_resolves(discovery_documents: Path) -> None:
    """The seed's /calendar/v3/calendars/{calendarId}/events + POST resolves to calendar.events.insert."""
    index, _ = discovery(discovery_documents, "calendar.v3.json")
    got = resolve(*rest_operation("", "post", "/calendar/v3/calendars/{calendarId}/events"), index)
    assert isinstance(got, Target)
    assert got.entry.operation_id == "calendar.events.insert"
    assert got.matched_by == "path_method"
    # ... and without the servicePath, with another parameter name and a trailing slash.
    got = resolve(*rest_operation("", "POST", "calendars/{id}/events/"), index)
    assert isinstance(got, Target)
    assert got.entry.operation_id == "calendar.events.insert"


def test_reserved_expansion_paths_match_through_flat_path(discovery_documents: Path) -> None:
    """{+name} paths are ambiguous on their own; the flatPath spelling finds the one method."""
    index, _ = discovery(discovery_documents, "run.v2.json")
    (entry,) = index.by_operation_id["run.projects.locations.services.get"]
    assert entry.path == "v2/{+name}"
    assert "v2/projects/{projectsId}/locations/{locationsId}/services/{servicesId}" in entry.alt_paths
    got = resolve(*rest_operation("", "GET", "/v2/projects/{p}/locations/{l}/services/{s}"), index)
    assert isinstance(got, Target)
    assert got.entry is entry
    got = resolve(*rest_operation("", "GET", "/v2/{+name}"), index)
    assert isinstance(got, Unresolved)
    assert got.reason == "ambiguous-operation"
    assert any(s.startswith("run.projects.locations.services.get (") for s in got.suggestions)


def test_google_oauth_scheme_is_inferred_with_both_flows(discovery_documents: Path) -> None:
    """Discovery names no flows: the Oauth2 scheme gets authorization code and client credentials, marked inferred."""
    index, _ = discovery(discovery_documents, "calendar.v3.json")
    oauth = index.scheme_map["Oauth2"]
    assert oauth.type is SchemeType.OAUTH2
    assert oauth.inferred
    assert oauth.flow_kinds == {FlowKind.AUTHORIZATION_CODE, FlowKind.CLIENT_CREDENTIALS}
    assert index.kind is SpecKind.DISCOVERY
    assert index.spec_version == "v1"
    assert index.security_declared


# --------------------------------------------------------------------------- synthetic documents


def doc_with(methods: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "kind": "discovery#restDescription",
        "discoveryVersion": "v1",
        "name": "demo",
        "version": "v9",
        "title": "Demo API",
        "rootUrl": "https://demo.googleapis.com/",
        "servicePath": "demo/v9/",
        "parameters": {"key": {"type": "string", "location": "query", "description": "API key."}},
        "auth": {"oauth2": {"scopes": {"https://s/read": {"description": "Read"}}}},
        "resources": {"things": {"methods": methods}},
        **extra,
    }


def method(mid: str, http: str, path: str, **extra: Any) -> dict[str, Any]:
    return {"id": mid, "httpMethod": http, "path": path, **extra}


def test_methods_without_scopes_are_unknown_not_nothing() -> None:
    """A method without scopes declares nothing (issue 14, item 6): unknown, never "needs nothing" nor a
    guessed API key; the document's other methods still declare, so the spec counts as declared."""
    d = doc_with(
        {
            "list": method("demo.things.list", "GET", "things"),
            "get": method("demo.things.get", "GET", "things/{id}", scopes=["https://s/read"]),
        }
    )
    index = build_index(make_spec(d))
    entry = index.operation("demo.things.list")
    assert entry is not None
    assert (entry.requirements, entry.security_source) == (None, "undeclared")
    assert index.security_declared is True
    (diag,) = [x for x in index.diagnostics if x.code == "security-undeclared"]
    assert diag.path == entry.pointer
    assert "key" not in index.scheme_map


def test_methods_with_an_empty_scope_list_are_unknown() -> None:
    """`scopes: []` declares nothing either."""
    index = build_index(make_spec(doc_with({"list": method("demo.things.list", "GET", "things", scopes=[])})))
    assert (index.operations[0].requirements, index.operations[0].security_source) == (None, "undeclared")


def test_a_document_declaring_nothing_is_undeclared() -> None:
    """No `auth` and no method with scopes: security_declared False, one spec-wide warning, every method unknown."""
    d = doc_with({"list": method("demo.things.list", "GET", "things")})
    del d["parameters"], d["auth"]
    index = build_index(make_spec(d))
    assert (index.operations[0].requirements, index.operations[0].security_source) == (None, "undeclared")
    assert index.security_declared is False
    assert index.schemes == ()
    assert [(x.code, x.data) for x in index.diagnostics] == [("security-undeclared", {"affects": "all"})]


def test_nested_resources_and_top_level_methods() -> None:
    """Methods at the top level and in deeply nested resources are all indexed, in document order."""
    deep: dict[str, Any] = {"methods": {"get": method("demo.a.b.c.d.get", "GET", "a/{a}/b/{b}/c/{c}/d/{d}")}}
    for name in "dcb":
        deep = {"resources": {name: deep}}
    d = doc_with({"list": method("demo.things.list", "GET", "things")})
    d["resources"]["a"] = deep
    d["methods"] = {"ping": method("demo.ping", "GET", "ping", scopes=["https://s/read", "https://s/read"])}
    index = build_index(make_spec(d))
    assert [o.operation_id for o in index.operations] == ["demo.ping", "demo.things.list", "demo.a.b.c.d.get"]
    assert index.operations[0].requirements == ((SchemeRequirement("Oauth2", ("https://s/read",)),),)
    assert index.operations[2].pointer == "/resources/a/resources/b/resources/c/resources/d/methods/get"


def test_same_method_and_path_twice_is_ambiguous() -> None:
    """If two methods share (HTTP method, path), resolving by path reports both; by id each is found."""
    index = build_index(
        make_spec(
            doc_with(
                {
                    "get": method("demo.things.get", "GET", "v1/{+name}"),
                    "getOther": method("demo.things.getOther", "GET", "v1/{+parent}"),
                }
            )
        )
    )
    got = resolve(*rest_operation("", "GET", "/demo/v9/v1/{name}"), index)
    assert isinstance(got, Unresolved)
    assert got.reason == "ambiguous-operation"
    assert len(got.suggestions) == 2
    assert isinstance(resolve(*rest_operation("demo.things.getOther"), index), Target)


def test_undeclared_scope_and_malformed_method() -> None:
    """A scope missing from auth.oauth2.scopes is an info; a method without a path is skipped with a warning."""
    index = build_index(
        make_spec(
            doc_with(
                {
                    "a": method("demo.a", "GET", "a", scopes=["https://s/other"]),
                    "b": {"id": "demo.b", "httpMethod": "GET"},
                }
            )
        )
    )
    assert [o.operation_id for o in index.operations] == ["demo.a"]
    assert sorted(d.code for d in index.diagnostics) == ["invalid-operation", "undeclared-scope"]


@pytest.mark.parametrize(
    ("service_path", "full"), [("demo/v9/", "/demo/v9/things"), ("", "/things"), ("/x/", "/x/things")]
)
def test_service_path_joins(service_path: str, full: str) -> None:
    """full_path is "/" + servicePath + path, whatever slashes servicePath carries."""
    d = doc_with({"list": method("demo.things.list", "GET", "things")}, servicePath=service_path)
    assert build_index(make_spec(d)).operations[0].full_path == full
