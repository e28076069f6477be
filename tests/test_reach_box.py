"""Box: scopes by path prefix from Box's own pages (scopes, Box Sign, Box Relay, Box AI, integration
mappings, terms of service, legal holds, retention), on the trimmed real box/box-openapi file
(tests/fixtures/specs/reach/box.json, Apache-2.0, see its SOURCES.md) served from loopback."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ramscope.outputs.report import Report
from tests.support.httpserver import LocalHTTPServer
from tests.test_reach_derive import codes, derive, one, server

__all__ = ["derive", "server"]  # the fixtures, shared with the other reach tests

BY_PATH = "quirk:box scopes-by-path"


def test_download_is_read_only(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Downloading a file (GET /files/{id}/content) needs root_readonly, the least of its two scopes."""
    _, a = one(derive, server, "/box.json", "get_files_id_content")
    assert a.scopes == ["root_readonly"]
    assert a.requirements_source == BY_PATH


def test_upload_is_read_write(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Uploading a file (POST /files/content on upload.box.com) needs root_readwrite."""
    _, a = one(derive, server, "/box.json", "post_files_content")
    assert a.scopes == ["root_readwrite"]
    assert a.requirements_source == BY_PATH


@pytest.mark.parametrize("op", ["post_sign_requests", "get_sign_requests"])
def test_sign_requests_need_the_sign_scope_with_read_write(
    derive: Callable[..., Report], server: LocalHTTPServer, op: str
) -> None:
    """Box Sign's endpoints need sign_requests.readwrite and the read-write scope it depends on."""
    _, a = one(derive, server, "/box.json", op)
    assert a.scopes == ["root_readwrite", "sign_requests.readwrite"]
    assert a.requirements_source == BY_PATH


def test_box_ai_needs_ai_readwrite(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Asking Box AI (POST /ai/ask) needs ai.readwrite."""
    _, a = one(derive, server, "/box.json", "post_ai_ask")
    assert a.scopes == ["ai.readwrite"]


def test_relay_start_needs_manage_triggers(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Starting a Box Relay flow needs manage_triggers with the read-write scope."""
    _, a = one(derive, server, "/box.json", "post_workflows_id_start")
    assert a.scopes == ["manage_triggers", "root_readwrite"]


def test_integration_mappings_say_administrator(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Slack integration mappings: manage_enterprise_properties, and the caller must be an admin or co-admin."""
    report, a = one(derive, server, "/box.json", "get_integration_mappings_slack")
    assert a.scopes == ["manage_enterprise_properties"]
    assert [(n["source"], n["principal"]) for n in a.provider_notes] == [("quirk:box", "administrator")]
    assert a.provider_notes[0]["reference"].startswith("https://developer.box.com/reference/get-integration-mappings")
    assert "requires-admin" in codes(report)


def test_terms_of_service_edit_is_admin_its_read_undetermined(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """Creating terms of service needs manage_enterprise_properties (an admin's); reading them names no
    scope for an end user, so GET stays the bare token, never a guessed scope."""
    report, a = one(derive, server, "/box.json", "post_terms_of_services")
    assert a.scopes == ["manage_enterprise_properties"]
    assert "requires-admin" in codes(report)
    _, b = one(derive, server, "/box.json", "get_terms_of_services")
    assert b.scopes == []
    assert b.requirements_source == "spec"


def test_shared_folder_link_is_read_only(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """GET /shared_items#folders is GET /shared_items: root_readonly (the fragment names a variation)."""
    _, a = one(derive, server, "/box.json", "get_shared_items#folders")
    assert a.scopes == ["root_readonly"]


def test_legal_holds_and_retention_need_gcm(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Legal holds need manage_legal_holds and retention manage_data_retention, each with enterprise_content
    (GCM), the scope Box's pages say they depend on."""
    _, a = one(derive, server, "/box.json", "get_legal_hold_policies")
    assert a.scopes == ["enterprise_content", "manage_legal_holds"]
    _, b = one(derive, server, "/box.json", "get_retention_policies")
    assert b.scopes == ["enterprise_content", "manage_data_retention"]


def test_device_pin_delete_but_not_read(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Deleting a device pin needs manage_enterprise_properties (it allows editing and deleting device pins)."""
    _, a = one(derive, server, "/box.json", "delete_device_pinners_id")
    assert a.scopes == ["manage_enterprise_properties"]


def test_shield_stays_credential_only(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Shield information barriers: Box names no scope for them; the bare token, no guess."""
    _, a = one(derive, server, "/box.json", "get_shield_information_barriers")
    assert a.scopes == []
    assert a.requirements_source == "spec"


def test_the_current_user_reads_itself_with_the_bare_token(
    derive: Callable[..., Report], server: LocalHTTPServer
) -> None:
    """GET /users/me (the caller itself; Box's reference names no scope) is not under /users' Manage users
    scope, an enterprise administrator's; listing the enterprise's users still is."""
    _, a = one(derive, server, "/box.json", "get_users_me")
    assert a.scopes == []
    assert a.requirements_source == "spec"
    _, b = one(derive, server, "/box.json", "get_users")
    assert b.scopes == ["manage_managed_users"]
