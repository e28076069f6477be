"""monday.com's GraphQL schema with its hand catalog: each root field's scope from its object's API reference page."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from ramscope.derive.resolve import Target, resolve
from ramscope.providers.catalog import CatalogError
from ramscope.providers.graphql_hand import build_graphql_hand
from ramscope.specs import SpecKind, build_index
from ramscope.specs.model import SchemeRequirement, SpecIndex
from tests._specs import FIXTURES, make_spec, rest_operation

ROOT = Path(__file__).resolve().parent.parent
MONDAY = FIXTURES / "graphql" / "monday-schema.trimmed.graphql"
MONDAY_URL = (
    "https://raw.githubusercontent.com/mondaycom/mcp/master/packages/agent-toolkit/src/monday-graphql/schema.graphql"
)
REF = "https://developer.monday.com/api-reference/reference/"
AUTH_PAGE = "https://developer.monday.com/api-reference/docs/authentication"


def _monday(url: str = MONDAY_URL) -> SpecIndex:
    return build_index(make_spec(MONDAY.read_bytes(), url, media_type="text/plain"))


def _scope(scope: str) -> tuple[tuple[SchemeRequirement, ...], ...]:
    return ((SchemeRequirement("monday_oauth2", (scope,)),),)


@pytest.mark.parametrize(
    ("label", "scope", "page"),
    [
        ("Query.boards", "boards:read", "boards"),
        ("Query.items", "boards:read", "items"),
        ("Query.users", "users:read", "users"),
        ("Query.updates", "updates:read", "updates"),
        ("Query.me", "me:read", "me"),
        ("Mutation.create_item", "boards:write", "items"),
        ("Mutation.create_update", "updates:write", "updates"),
        ("Mutation.create_board", "boards:write", "boards"),
        ("Mutation.delete_board", "boards:write", "boards"),
        ("Mutation.change_column_value", "boards:write", "columns"),
        ("Mutation.create_notification", "notifications:write", "notification"),
        ("Mutation.create_webhook", "webhooks:write", "webhooks"),
        ("Mutation.create_team", "teams:write", "teams"),
        ("Mutation.create_department", "departments:write", "departments"),
        ("Mutation.backfill_items", "boards:write", "backfill-items-api-reference"),
        ("Mutation.create_view", "boards:write", "board-views"),
        ("Mutation.change_item_position", "boards:write", "items"),
        ("Mutation.create_portfolio", "boards:write", "portfolio"),
        ("Query.connection_board_ids", "boards:read", "connect"),
    ],
)
def test_each_root_field_gets_the_scope_its_page_states(label: str, scope: str, page: str) -> None:
    """Reads take the object's read scope, writes its write scope, each traced to the object's page."""
    ix = _monday()
    op = ix.operation(label)
    assert op is not None
    assert op.requirements == _scope(scope)
    assert op.security_source == "catalog:monday@2026-12-01"
    assert op.extra["source_page"] == REF + page
    assert (op.method, op.path) == ("POST", "/v2")


def test_the_schema_is_read_as_graphql_with_monday_oauth() -> None:
    """The SDL is a GraphQL spec; its scheme is monday's OAuth with the scopes the schema's enum lists."""
    ix = _monday()
    assert (ix.kind, ix.spec_version, ix.title) == (SpecKind.GRAPHQL, "sdl", "monday GraphQL API")
    (scheme,) = ix.schemes
    assert scheme.name == "monday_oauth2"
    (flow,) = scheme.flows
    assert (flow.authorization_url, flow.token_url) == (
        "https://auth.monday.com/oauth2/authorize",
        "https://auth.monday.com/oauth2/token",
    )
    enum = re.findall(r'"Permission scope: (\S+)"', MONDAY.read_text("utf-8"))
    assert len(enum) == 21
    assert sorted(s for s, _ in flow.scopes) == sorted(enum)


@pytest.mark.parametrize(
    ("label", "reason"),
    [
        ("Query.audit_logs", "manage_account_security"),
        ("Query.favorites", "favorites page's Queries section names no scope"),
        ("Query.complexity", "the complexity page names no scope"),
        ("Mutation.clear_item_updates", "pages disagree"),
        ("Mutation.update_users_role", "only admins can use it"),
        ("Mutation.create_form", "the form page names no scope"),
        ("Query.validations", "edit the board's column settings, on Pro and Enterprise accounts only"),
    ],
)
def test_a_field_no_page_gives_a_scope_is_undetermined_with_its_reason(label: str, reason: str) -> None:
    """Never "none needed" and never guessed from the name: unknown, with why, as a finding."""
    ix = _monday()
    op = ix.operation(label)
    assert op is not None
    assert op.requirements is None
    assert reason in op.extra["undetermined"]
    (diag,) = [d for d in ix.diagnostics if d.path == op.pointer]
    assert diag.code == "security-undeclared"
    assert diag.message.startswith(f"{label}: ")
    assert reason in diag.message
    assert diag.message.endswith("what it needs is unknown, not nothing")


def test_what_the_page_says_beside_the_scope_is_kept() -> None:
    """Admin-only and account-permission remarks ride along in the hints' why; they are no scope."""
    ix = _monday()
    backfill, department = ix.operation("Mutation.backfill_items"), ix.operation("Mutation.create_department")
    assert backfill is not None
    assert department is not None
    assert backfill.extra["why"] == "backfill items: Required scope: boards:write (account admin only)"
    assert department.extra["why"] == (
        "departments: Required scope: departments:write (Enterprise plans; account-level permission "
        "manage_account_users_permission)"
    )


def test_enterprise_only_and_column_type_pages_are_cited_as_stated() -> None:
    """Portfolio's plan remark rides in the why; the status column's typed mutation cites the status page."""
    ix = _monday()
    portfolio, status = ix.operation("Mutation.create_portfolio"), ix.operation("Mutation.update_status_column")
    assert portfolio is not None
    assert status is not None
    assert portfolio.extra["why"] == "portfolio: Required scope: boards:write (Enterprise plans only)"
    assert status.requirements == _scope("boards:write")
    assert status.extra["source_page"] == "https://developer.monday.com/api-reference/docs/status"
    assert status.extra["why"] == "status column: Required scope: boards:write"


def test_a_field_that_needs_only_a_token_is_a_token_with_no_scope() -> None:
    """template_installation_status: "none beyond a valid API token", so a monday token, no particular scope."""
    op = _monday().operation("Query.template_installation_status")
    assert op is not None
    assert op.requirements == ((SchemeRequirement("monday_oauth2", ()),),)
    assert op.extra["why"] == "templates: Required scope: none beyond a valid API token"
    assert op.extra["source_page"] == REF + "templates"


def test_personal_tokens_carry_every_scope_and_say_so() -> None:
    """monday's word on personal tokens is one note on the index, with its page."""
    ix = _monday()
    (note,) = [d for d in ix.diagnostics if d.code == "graphql-catalog-note"]
    assert "personal API tokens have all permission scopes" in note.message
    assert note.data == {"source": AUTH_PAGE}
    assert ix.extra["provider_notes"] == [{"message": note.message[len("monday: ") : -len(f" ({AUTH_PAGE})")],
                                           "source": AUTH_PAGE}]  # fmt: skip


@pytest.mark.parametrize(
    "url",
    [
        "https://api.monday.com/v2/get_schema?format=sdl",
        "https://github.com/mondaycom/mcp/blob/master/packages/agent-toolkit/src/monday-graphql/schema.graphql",
    ],
)
def test_the_catalog_follows_monday_urls(url: str) -> None:
    """monday's API host and the schema's home in mondaycom/mcp are matched."""
    op = _monday(url).operation("Mutation.create_item")
    assert op is not None
    assert op.requirements == _scope("boards:write")


@pytest.mark.parametrize("url", ["https://example.com/monday.graphql", "https://api.monday.com.evil.test/v2/schema"])
def test_the_same_schema_elsewhere_is_undetermined(url: str) -> None:
    """At a URL no catalog covers, every root field is unknown, said once for all; no note."""
    ix = _monday(url)
    assert ix.security_declared is False
    assert all(op.requirements is None for op in ix.operations)
    assert [(d.code, d.data) for d in ix.diagnostics] == [("security-undeclared", {"affects": "all"})]


def test_a_card_names_a_monday_operation_by_root_field() -> None:
    """``Mutation.create_item`` or the bare ``create_item`` (one root type has it) resolve to the same field."""
    ix = _monday()
    for op_id in ("Mutation.create_item", "create_item"):
        resource, op = rest_operation(op_id, "POST", spec_url=MONDAY_URL)
        found = resolve(resource, op, ix)
        assert isinstance(found, Target), found
        assert found.entry.key == "Mutation.create_item"


# --------------------------------------------------------------------------- the hand catalog's compiler


def test_the_shipped_catalog_is_the_vendor_file_compiled() -> None:
    """providers/data/monday.graphql.json is exactly vendor/monday/catalog.json compiled (rebuild after edits)."""
    shipped = (ROOT / "src" / "ramscope" / "providers" / "data" / "monday.graphql.json").read_bytes()
    assert build_graphql_hand(ROOT / "vendor" / "monday") == shipped
    doc = orjson.loads(shipped)
    assert (len(doc["fields"]), len(doc["undetermined"]), doc["defaults"]) == (124, 75, {})
    assert all(e["source"].startswith(("https://developer.monday.com/api-reference/reference/",
                                        "https://developer.monday.com/api-reference/docs/"))
               for e in doc["fields"].values())  # fmt: skip


def _write(tmp_path: Path, **changes: Any) -> Path:
    doc = orjson.loads((ROOT / "vendor" / "monday" / "catalog.json").read_bytes())
    doc.update(changes)
    folder = tmp_path / "monday"
    folder.mkdir()
    (folder / "catalog.json").write_bytes(orjson.dumps(doc))
    return folder


def _obj(page: str, fields: dict[str, str]) -> dict[str, Any]:
    return {"object": page, "page": REF + page, "fields": fields}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"objects": [_obj("items", {"Mutation.x": "boards:write"}),
                         _obj("updates", {"Mutation.x": "updates:write"})]},
            "list it under undetermined",
        ),
        (
            {"objects": [_obj("items", {"Mutation.x": "boards:write"})],
             "undetermined": {"Mutation.x": {"reason": "r", "source": REF}}},
            "both given a scope and listed as undetermined",
        ),
        ({"objects": [_obj("items", {"Mutation.x": "items:admin"})]}, "which the scheme does not list"),
        ({"objects": [_obj("items", {"create_item": "boards:write"})]}, "is not a root field label"),
        ({"objects": [dict(_obj("items", {"Mutation.x": "boards:write"}), notes={"Mutation.y": "admins"})]},
         "has notes on fields it does not list"),
    ],
)  # fmt: skip
def test_the_compiler_refuses_a_catalog_that_would_guess(tmp_path: Path, changes: dict[str, Any], message: str) -> None:
    """Disagreeing pages, a field both scoped and unknown, a scope monday has not, a bare name: refused."""
    with pytest.raises(CatalogError, match=message):
        build_graphql_hand(_write(tmp_path, **changes))


SUPPORT_USER_TYPE = (
    "https://support.monday.com/hc/en-us/articles/360002426980-How-do-I-activate-deactivate-or-change-a-user-s-type-"
)


@pytest.mark.parametrize(
    ("label", "scope", "source"),
    [
        ("Query.audit_logs", None, REF + "audit-logs"),
        ("Mutation.backfill_items", "boards:write", REF + "backfill-items-api-reference"),
    ],
)
def test_fields_only_an_admin_may_call_say_administrator(label: str, scope: str | None, source: str) -> None:
    """The audit logs (account admins on Enterprise) and backfilling items (account admin only) keep their
    scope or stay undetermined, and carry the administrator's note the derivation reports."""
    op = _monday().operation(label)
    assert op is not None
    assert op.requirements == (None if scope is None else _scope(scope))
    ((note,),) = [op.extra["quirks"]["admin"]]
    assert op.extra["quirks"]["provider"] == "monday"
    assert note["source"] == source


def test_user_deactivation_is_an_account_admins() -> None:
    """deactivate_users (no scope on its page: undetermined) says an account admin must call it; a field no
    page calls an admin's gets no note."""
    sdl = b"type Query { me: User }\ntype Mutation { deactivate_users(user_ids: [ID!]!): User\n create_item: User }\n"
    sdl += b"type User { id: ID! }\n"
    ix = build_index(make_spec(sdl, MONDAY_URL, media_type="text/plain"))
    deactivate, create = ix.operation("Mutation.deactivate_users"), ix.operation("Mutation.create_item")
    assert deactivate is not None
    assert create is not None
    assert deactivate.requirements is None
    assert deactivate.extra["quirks"]["admin"] == [
        {
            "message": "you must be an admin of the account to activate or deactivate users (the users API page says "
            "only admins can use this mutation)",
            "source": SUPPORT_USER_TYPE,
        }
    ]
    assert "quirks" not in create.extra


def test_the_compiler_refuses_an_administrator_note_on_a_field_it_does_not_know(tmp_path: Path) -> None:
    """An administrator's note only beside a field the catalog lists or leaves undetermined."""
    with pytest.raises(CatalogError, match="neither listed nor undetermined"):
        build_graphql_hand(_write(tmp_path, administrator={"Mutation.nowhere": {"message": "m", "source": REF}}))
