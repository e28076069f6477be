"""Intercom: the hand catalog (vendor/intercom/catalog.json) from Intercom's OAuth scopes page and the
scopes its API reference names in operation and tag descriptions, on the trimmed real
intercom/Intercom-OpenAPI file (tests/fixtures/specs/reach/intercom.json, MIT, see its SOURCES.md)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ramscope.outputs.report import Report
from ramscope.providers import snapshot_versions
from tests.support.httpserver import LocalHTTPServer
from tests.test_reach_derive import derive, one, server

__all__ = ["derive", "server"]  # the fixtures, shared with the other reach tests


def _catalog() -> str:
    return f"catalog:intercom@{snapshot_versions()['catalog:intercom']}"


def test_reading_articles_is_the_read_scope(derive: Callable[..., Report], server: LocalHTTPServer) -> None:
    """Listing articles and reading a draft need "Read and List articles" (the reference's read_articles_scope)."""
    _, a = one(derive, server, "/intercom.json", "listArticles")
    assert a.scopes == ["Read and List articles"]
    assert a.requirements_source == _catalog()
    _, b = one(derive, server, "/intercom.json", "retrieveArticleDraft")
    assert b.scopes == ["Read and List articles"]


@pytest.mark.parametrize(
    ("op", "scopes"),
    [
        ("listHelpCenterRedirects", ["read_help_center_redirects_scope"]),
        ("createHelpCenterRedirect", ["read_write_help_center_redirects_scope"]),
        ("searchContent", ["read_content"]),
        ("listOfficeHoursSchedules", ["read_write_office_hours"]),
        ("createOfficeHoursSchedule", ["read_write_office_hours"]),
        ("attachTagToInternalArticle", ["Read and Write Articles"]),
        ("collectProcedureAgentInput", ["Write conversations"]),
    ],
)
def test_scopes_the_reference_names(
    derive: Callable[..., Report], server: LocalHTTPServer, op: str, scopes: list[str]
) -> None:
    """Operations whose scope the API reference names ("Requires the `...` OAuth scope", or on the tag)."""
    _, a = one(derive, server, "/intercom.json", op)
    assert a.scopes == scopes
    assert a.requirements_source == _catalog()


@pytest.mark.parametrize("op", ["listCalls", "askFin", "listInternalArticles", "listAllCollections"])
def test_undocumented_families_stay_with_the_bare_token(
    derive: Callable[..., Report], server: LocalHTTPServer, op: str
) -> None:
    """Calls, Fin, internal article lists and help center collections: no scope named, the spec's bearer token."""
    _, a = one(derive, server, "/intercom.json", op, "AGENT")
    assert a.scopes == []
    assert a.requirements_source == "spec"


@pytest.mark.parametrize(
    ("op", "scopes"),
    [
        ("SearchContacts", ["Read and list users and companies"]),
        ("listAllCompanies", ["Read and list users and companies"]),
        ("searchConversations", ["Read conversations"]),
        ("searchTickets", ["Read tickets"]),
    ],
)
def test_searches_sent_as_post_are_reads(
    derive: Callable[..., Report], server: LocalHTTPServer, op: str, scopes: list[str]
) -> None:
    """Searching and listing by POST read data: the scopes page's read scope, not the family's write scope."""
    _, a = one(derive, server, "/intercom.json", op)
    assert a.scopes == scopes
    assert a.requirements_source == _catalog()
