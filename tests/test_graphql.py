"""GraphQL schemas as a spec kind: root fields as operations, Shopify's requiredAccess, the Linear catalog."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ramscope.derive.resolve import Target, Unresolved, resolve
from ramscope.errors import SpecError
from ramscope.specs import SpecKind, build_index, detect_kind
from ramscope.specs.graphql import (
    MAX_NESTING,
    SHOPIFY_ACCESS_SCOPES_USAGE,
    SHOPIFY_SCHEME,
    looks_like_sdl,
    parse_sdl,
    read_introspection,
    read_required_access,
    shopify_documented,
)
from ramscope.specs.model import SchemeRequirement
from tests._specs import FIXTURES, make_spec, rest_operation

SHOPIFY = FIXTURES / "graphql" / "shopify-admin-2026-10.trimmed.json"
LINEAR = FIXTURES / "graphql" / "linear-schema.trimmed.graphql"
LINEAR_URL = "https://raw.githubusercontent.com/linear/linear/master/packages/sdk/src/schema.graphql"


def _shopify():  # type: ignore[no-untyped-def]
    return build_index(make_spec(SHOPIFY.read_bytes(), "https://shopify.dev/admin_2026-10.json"))


def _alts(*scopes: tuple[str, ...], scheme: str = SHOPIFY_SCHEME) -> tuple[tuple[SchemeRequirement, ...], ...]:
    return tuple((SchemeRequirement(scheme, s),) for s in scopes)


def test_shopify_product_create_needs_write_products() -> None:
    """Mutation.productCreate reads write_products from its own requiredAccess; the staff permission is a note."""
    ix = _shopify()
    assert ix.kind is SpecKind.GRAPHQL
    op = ix.operation("Mutation.productCreate")
    assert op is not None
    assert op.requirements == _alts(("write_products",))
    assert op.security_source == "field"
    assert (op.method, op.path) == ("POST", "/admin/api/{api_version}/graphql.json")
    assert op.extra["also"] == "The user must have a permission to create products."


def test_shopify_orders_reads_its_return_type() -> None:
    """Query.orders says nothing itself: OrderConnection's nodes (Order) give any one of three read scopes."""
    op = _shopify().operation("Query.orders")
    assert op is not None
    assert op.requirements == _alts(("read_orders",), ("read_marketplace_orders",), ("read_quick_sale",))
    assert op.security_source == "return-type"
    assert op.extra["access_from_type"] == "Order"


def test_shopify_field_without_requirement_is_undetermined() -> None:
    """Query.app has no requiredAccess, nor has its return type: unknown, never "needs nothing"."""
    ix = _shopify()
    op = ix.operation("Query.app")
    assert op is not None
    assert op.requirements is None
    assert op.security_source == "undeclared"
    (diag,) = [d for d in ix.diagnostics if d.path == op.pointer]
    assert diag.code == "security-undeclared"


@pytest.mark.parametrize(
    "label",
    [
        "Mutation.metafieldsSet",  # "the same access level needed to mutate the owner resource": per argument
        "Mutation.bulkOperationRunQuery",  # "Only accessible by supported access tokens": a token kind, no scope
        "Query.checkoutProfiles",  # "access to the checkout and accounts editor": no page pairs it with a scope
    ],
)
def test_shopify_prose_the_grammar_cannot_read_is_unknown(label: str) -> None:
    """requiredAccess prose that names no scope (or one that depends on the call's input) stays undetermined."""
    ix = _shopify()
    op = ix.operation(label)
    assert op is not None
    assert op.requirements is None
    assert [d.code for d in ix.diagnostics if d.path == op.pointer] == ["graphql-access-unread"]


def test_shopify_node_stays_undetermined() -> None:
    """Query.node returns the Node interface, which states nothing: what it needs depends on the ID given."""
    ix = _shopify()
    op = ix.operation("Query.node")
    assert op is not None
    assert op.requirements is None
    assert op.security_source == "undeclared"
    assert [d.code for d in ix.diagnostics if d.path == op.pointer] == ["security-undeclared"]


def test_shopify_scope_family_is_the_write_scope_of_a_mutation() -> None:
    """deliveryProfileCreate: "Any of `shipping` access scopes or `manage_delivery_settings` user permission"
    is write_shipping for a mutation, the user permission kept as a note, the page naming the scope cited."""
    op = _shopify().operation("Mutation.deliveryProfileCreate")
    assert op is not None
    assert op.requirements == _alts(("write_shipping",))
    assert op.security_source == "field"
    assert op.extra["also"] == "or the user permission manage_delivery_settings"
    assert op.extra["scope_sources"] == ["https://shopify.dev/docs/api/admin-rest/latest/resources/carrierservice"]


def test_shopify_scope_families_are_the_read_scopes_of_a_query() -> None:
    """availableCarrierServices (through its return type): `orders` or `shipping` families -> their read scopes."""
    op = _shopify().operation("Query.availableCarrierServices")
    assert op is not None
    assert op.requirements == _alts(("read_orders",), ("read_shipping",))
    assert op.security_source == "return-type"
    assert op.extra["access_from_type"] == "DeliveryCarrierServiceAndLocations"
    assert op.extra["scope_sources"] == [
        "https://shopify.dev/docs/admin-api/access-scopes",
        "https://shopify.dev/docs/api/admin-graphql/2025-10/queries/appinstallation",
    ]


def test_shopify_refund_create_needs_write_orders() -> None:
    """refundCreate: `orders`, `marketplace_orders` or `buyer_membership_orders` access scope -> write_orders;
    the two families no cited page names stay out of the alternatives, said in the note."""
    op = _shopify().operation("Mutation.refundCreate")
    assert op is not None
    assert op.requirements == _alts(("write_orders",))
    assert "`marketplace_orders`, `buyer_membership_orders`" in op.extra["also"]


def test_shopify_families_with_a_stated_action() -> None:
    """Query.catalog: "products or product_listings read access scope" -> either read scope; the sentence about
    the user's permissions is a note."""
    op = _shopify().operation("Query.catalog")
    assert op is not None
    assert op.requirements == _alts(("read_products",), ("read_product_listings",))
    assert op.extra["also"] == "The user must have permission to view markets or customers or companies."


def test_shopify_connection_without_nodes_reads_its_edge_node() -> None:
    """customerSegmentMembers -> CustomerSegmentMemberConnection has only edges: edges.node's type speaks."""
    op = _shopify().operation("Query.customerSegmentMembers")
    assert op is not None
    assert op.requirements == _alts(("read_customers",))
    assert op.extra["access_from_type"] == "CustomerSegmentMember"


def test_shopify_dispute_reads_the_named_scope() -> None:
    """Query.dispute: "User must have `read_shopify_payments_disputes` access." names the scope itself."""
    op = _shopify().operation("Query.dispute")
    assert op is not None
    assert op.requirements == _alts(("read_shopify_payments_disputes",))


@pytest.mark.parametrize(
    ("label", "what"), [("Mutation.themeCreate", "themes"), ("Mutation.themeFilesUpsert", "theme files")]
)
def test_shopify_theme_mutations_need_write_themes_and_an_exemption(label: str, what: str) -> None:
    """Theme mutations: write_themes, and the note says Shopify's exemption is needed besides it."""
    op = _shopify().operation(label)
    assert op is not None
    assert op.requirements == _alts(("write_themes",))
    assert op.extra["also"] == (
        f"and an exemption from Shopify to modify {what}, granted to the app on request (Shopify's exception "
        "request form): write_themes alone is refused without it"
    )


def test_shopify_staff_only_text_defers_to_the_return_type() -> None:
    """marketByGeography: "The user must have markets API access." binds the staff member, so it is a note and
    the returned Market's requiredAccess ("`read_markets` for queries ...") gives the token's scope."""
    ix = _shopify()
    op = ix.operation("Query.marketByGeography")
    assert op is not None
    assert op.requirements == _alts(("read_markets",))
    assert op.security_source == "return-type"
    assert op.extra["access_from_type"] == "Market"
    assert op.extra["also"] == "The user must have markets API access."
    assert [d.code for d in ix.diagnostics if d.path == op.pointer] == []


@pytest.mark.parametrize(
    ("label", "scope", "also"),
    [
        ("Query.checkoutBranding", "read_checkout_branding_settings", "the shop must be on a Plus plan or a "
         "Development store plan."),
        ("Mutation.checkoutBrandingUpsert", "write_checkout_branding_settings", "the shop must be on a Plus plan or "
         "a Development store plan. User must have `preferences` permission to modify."),
    ],
)  # fmt: skip
def test_shopify_checkout_branding_reads_the_access_scopes_page(label: str, scope: str, also: str) -> None:
    """The text "access to checkout branding settings" names no scope; the access-scopes page pairs
    read_/write_checkout_branding_settings with CheckoutBranding: the query reads, the upsert writes; the plan
    condition and the staff permission are notes."""
    ix = _shopify()
    op = ix.operation(label)
    assert op is not None
    assert op.requirements == _alts((scope,))
    assert op.security_source == "docs"
    assert op.extra["scope_sources"] == [SHOPIFY_ACCESS_SCOPES_USAGE]
    assert op.extra["also"] == also
    assert [d.code for d in ix.diagnostics if d.path == op.pointer] == []


@pytest.mark.parametrize(("label", "scope"), [("Query.locationsCount", "read_locations"),
                                              ("Query.segmentsCount", "read_customers")])  # fmt: skip
def test_shopify_counts_of_a_listed_object_read_the_access_scopes_page(label: str, scope: str) -> None:
    """locationsCount ("the count of locations") and segmentsCount ("the number of segments") return a bare Count;
    the access-scopes page names the scope granting Location (read_locations) and Segment (read_customers)."""
    op = _shopify().operation(label)
    assert op is not None
    assert op.requirements == _alts((scope,))
    assert op.security_source == "docs"
    assert op.extra["scope_sources"] == ["https://shopify.dev/docs/api/usage/access-scopes"]


@pytest.mark.parametrize(
    "label",
    [
        "Query.eventsCount",  # a count of events: no page names a scope for Event
        "Mutation.tagsAdd",  # orders, draft orders, customers, products or articles: decided by the ID, no page
    ],
)
def test_shopify_fields_no_page_covers_stay_undetermined(label: str) -> None:
    """Root fields with nothing on them, their return type or a shopify.dev page stay undetermined."""
    ix = _shopify()
    op = ix.operation(label)
    assert op is not None
    assert op.requirements is None
    assert op.security_source == "undeclared"
    assert [d.code for d in ix.diagnostics if d.path == op.pointer] == ["security-undeclared"]


@pytest.mark.parametrize(
    ("label", "returns", "text", "description"),
    [
        ("Query.locationsCount", "Count", "", "Returns the count of products."),  # counts something else now
        ("Query.locationsCount", "LocationCount", "", "Returns the count of locations."),  # another type
        ("Query.locationsCount", "Count", "`read_inventory` access scope.", "The count of locations."),  # says its own
        ("Query.checkoutBranding", "CheckoutBranding", "access to checkout settings.", ""),  # other words
        ("Query.eventsCount", "Count", "", "Count of events."),  # never read
    ],
)
def test_shopify_documented_readings_hold_only_for_the_schema_they_were_read_against(
    label: str, returns: str, text: str, description: str
) -> None:
    """A documented reading applies only while the field still returns, says and describes what it was read for."""
    assert shopify_documented(label, returns, text, description) is None
    assert shopify_documented("Query.locationsCount", "Count", "", "Returns the count of locations.") is not None


@pytest.mark.parametrize(
    ("text", "role", "alternatives", "note"),
    [
        ("`write_products` access scope.", "mutation", (("write_products",),), ""),
        ("Apps must have `write_discounts` access scope.", "mutation", (("write_discounts",),), ""),
        (
            "`read_orders` access scope, `read_marketplace_orders` access scope or `read_quick_sale` access scope.",
            "query",
            (("read_orders",), ("read_marketplace_orders",), ("read_quick_sale",)),
            "",
        ),
        (
            "Any of `write_content`, `write_online_store_pages` access scopes.",
            "mutation",
            (("write_content",), ("write_online_store_pages",)),
            "",
        ),
        (
            "`write_products` access scope as well as any of `write_own_subscription_contracts`, "
            "`write_purchase_options` access scopes. Also: The user must have `manage_orders_information` permissions.",
            "mutation",
            (("write_own_subscription_contracts", "write_products"), ("write_products", "write_purchase_options")),
            "The user must have `manage_orders_information` permissions.",
        ),
        (
            "`read_returns` access scope and (`read_orders` access scope or `read_marketplace_orders` access scope).",
            "query",
            (("read_orders", "read_returns"), ("read_marketplace_orders", "read_returns")),
            "",
        ),
        (
            "`read_markets` for queries and both `read_markets` as well as `write_markets` for mutations.",
            "query",
            (("read_markets",),),
            "",
        ),
        (
            "`read_markets` for queries and both `read_markets` as well as `write_markets` for mutations.",
            "mutation",
            (("read_markets", "write_markets"),),
            "",
        ),
        (
            "Requires `read_analytics_annotations` or `write_analytics_annotations` access scope.",
            "query",
            (("read_analytics_annotations",), ("write_analytics_annotations",)),
            "",
        ),
        (
            "`read_x` access scope. Please contact Shopify Support to enable this scope for your app.",
            "query",
            (("read_x",),),
            "",
        ),
        (
            "Any of `shipping` access scopes or `manage_delivery_settings` user permission.",
            "query",
            (("read_shipping",),),
            "or the user permission manage_delivery_settings",
        ),
        (
            "Any of `assigned_shipping` or `shipping` access scopes or `manage_delivery_settings` user permission.",
            "mutation",
            (("write_shipping",),),
            "or the user permission manage_delivery_settings; also accepted, not read: the `assigned_shipping` "
            "access scopes (no page in ramscope's family table names their read and write scopes)",
        ),
        ("Any of `locations` or `assigned_shipping` access scopes.", "query", None, ""),
        ("`write_products` access scope and `buyer_membership_orders` access scope.", "mutation", None, ""),
        ("products or product_listings write access scope.", "mutation", None, ""),
        ("products read access scope.", "query", (("read_products",),), ""),
        (
            "User must have `read_shopify_payments_disputes` access.",
            "query",
            (("read_shopify_payments_disputes",),),
            "",
        ),
        ("User must have `payouts` access.", "query", None, ""),
        (
            "Apps will need one of the following: `fulfillments`, `products` or `custom_fulfillment_services` "
            "(in case of custom fulfillment service). Users with access to the app will have access to them.",
            "query",
            (("read_fulfillments",), ("read_products",)),
            "also accepted, not read: `custom_fulfillment_services` (in case of custom fulfillment service); "
            "Users with access to the app will have access to them.",
        ),
        ("Apps will need one of the following: `custom_fulfillment_services`.", "query", None, ""),
        ("Apps will need one of the following: `products` (in case of a product).", "query", None, ""),
        ("The user needs write_themes and an exemption from Shopify.", "mutation", None, ""),
        ("The user must have access to payouts.", "query", None, ""),
        ("access to the checkout and accounts editor.", "query", None, ""),
    ],
)
def test_required_access_grammar(
    text: str, role: str, alternatives: tuple[tuple[str, ...], ...] | None, note: str
) -> None:
    """Shopify's requiredAccess shapes read as OR-of-AND scope sets; anything else reads as nothing."""
    reading = read_required_access(text, role)
    assert reading.alternatives == alternatives
    if alternatives is not None:
        assert reading.note == note


def test_linear_catalog_gives_each_root_field_its_scope() -> None:
    """Linear's SDL says nothing; the catalog (matched by URL) does, with the narrow create scopes first."""
    ix = build_index(make_spec(LINEAR.read_bytes(), LINEAR_URL, media_type="text/plain"))
    assert ix.kind is SpecKind.GRAPHQL
    assert ix.spec_version == "sdl"
    reqs = {op.key: op.requirements for op in ix.operations}
    s = "linear_oauth2"
    assert reqs["Mutation.issueCreate"] == _alts(("issues:create",), ("write",), scheme=s)
    assert reqs["Mutation.commentCreate"] == _alts(("comments:create",), ("write",), scheme=s)
    assert reqs["Mutation.userSuspend"] == _alts(("admin",), scheme=s)
    assert reqs["Mutation.teamDelete"] == _alts(("write",), scheme=s)
    assert reqs["Query.issues"] == _alts(("read",), scheme=s)
    assert reqs["Subscription.issueUpdated"] == _alts(("read",), scheme=s)
    op = ix.operation("Mutation.issueCreate")
    assert op is not None
    assert op.security_source == "catalog:linear@2026-12-01"
    assert op.extra["source_page"] == "https://linear.app/developers/oauth-2-0-authentication"
    (scheme,) = ix.schemes
    assert scheme.flows[0].authorization_url == "https://linear.app/oauth/authorize"
    assert scheme.flows[0].token_url == "https://api.linear.app/oauth/token"


def test_linear_audit_log_says_only_a_workspace_admin() -> None:
    """auditEntries keeps the read scope Linear gives queries and says only a workspace administrator may
    read the audit log (https://linear.app/docs/audit-log); other queries carry no such note."""
    sdl = b"type Query { auditEntries(first: Int): AuditEntryConnection!\n issues: AuditEntryConnection! }\n"
    sdl += b"type AuditEntryConnection { id: ID }\n"
    ix = build_index(make_spec(sdl, LINEAR_URL, media_type="text/plain"))
    audit, issues = ix.operation("Query.auditEntries"), ix.operation("Query.issues")
    assert audit is not None
    assert issues is not None
    assert audit.requirements == _alts(("read",), scheme="linear_oauth2")
    assert audit.extra["quirks"] == {
        "provider": "linear",
        "admin": [
            {
                "message": "only workspace administrators can access the audit log (an Enterprise plan feature)",
                "source": "https://linear.app/docs/audit-log",
            }
        ],
    }
    assert "quirks" not in issues.extra


def test_schema_without_requirements_or_catalog_is_undetermined() -> None:
    """The same SDL at a URL no catalog covers: every root field unknown, said once for all."""
    ix = build_index(make_spec(LINEAR.read_bytes(), "https://example.com/schema.graphql"))
    assert ix.security_declared is False
    assert all(op.requirements is None for op in ix.operations)
    assert [(d.code, d.data) for d in ix.diagnostics] == [("security-undeclared", {"affects": "all"})]


@pytest.mark.parametrize(
    ("body", "url", "kind"),
    [
        (b'{"data": {"__schema": {"queryType": {"name": "Q"}, "types": []}}}', "", SpecKind.GRAPHQL),
        (b'{"__schema": {"types": []}}', "", SpecKind.GRAPHQL),
        (b"type Query {\n  a: Int\n}\n", "", SpecKind.GRAPHQL),
        (b'"""The schema"""\nschema { query: Root }\n', "", SpecKind.GRAPHQL),
        (b"# generated\nscalar Date\n", "https://x.test/api.graphql", SpecKind.GRAPHQL),
        (b"type: object\nopenapi: 3.0.0\npaths: {}\n", "https://x.test/a.graphql", SpecKind.OPENAPI),
    ],
)
def test_detection_by_content_and_extension(body: bytes, url: str, kind: SpecKind) -> None:
    """Introspection JSON and SDL are told by content; an SDL without a root type needs a .graphql URL."""
    assert detect_kind(body, "text/plain", url=url) is kind


def test_sdl_without_root_type_elsewhere_is_not_graphql() -> None:
    """``scalar Date`` alone, at a URL that says nothing, is not taken for a GraphQL schema."""
    with pytest.raises(SpecError, match="unsupported spec"):
        detect_kind(b"scalar Date\n", "text/plain")


@pytest.mark.parametrize(
    "head",
    [
        "scalar X\n" + "\n" * 65_000,
        "scalar X\n" + " \t\n" * 20_000,
        "#\n" * 30_000 + " " * 5_000,
        "type Query" + " " * 65_000,
    ],
)
def test_recognising_sdl_is_linear_in_the_head(head: str) -> None:
    """Blank lines after a definition are not rescanned from every line start (once quadratic: minutes)."""
    assert looks_like_sdl(head) is ("Query" in head)


def test_sdl_reader_reads_extensions_and_deprecation() -> None:
    """``extend type`` adds fields; @deprecated marks them; lists and non-null unwrap to the named type."""
    schema = parse_sdl(
        "type Query { a(x: [Int!] = [1, 2]): [[A!]!]! }\n"
        'extend type Query { b: B @deprecated(reason: "use a") }\n'
        "interface I { c: Int }\nunion U = | A | B\ninput In { x: Int = 1 }\nenum E { X Y }\n"
        "directive @d(a: Int) repeatable on FIELD_DEFINITION | OBJECT\n"
    )
    q = schema.types["Query"]
    assert [(f.name, f.type_name, f.deprecated, f.deprecation_reason) for f in q.fields] == [
        ("a", "A", False, ""),
        ("b", "B", True, "use a"),
    ]
    assert schema.roots == {"query": "Query"}


@pytest.mark.parametrize(
    "text",
    [
        "type Query { a(x: " + "[" * (MAX_NESTING + 2) + "1" + "]" * (MAX_NESTING + 2) + "): Int }",
        "type Query { a: " + "[" * 40 + "Int" + "]" * 40 + " }",
        "type Query { a: Int",
        "type Query { a }",
        "type Query { 1: Int }",
    ],
)
def test_sdl_reader_is_bounded_and_fails_closed(text: str) -> None:
    """Over-deep nesting and malformed SDL raise SpecError ("unsupported spec"), nothing else."""
    with pytest.raises(SpecError, match="unsupported spec"):
        parse_sdl(text)


def test_introspection_reader_bounds_the_type_chain() -> None:
    """An ofType chain deeper than the bound gives no named type rather than walking on."""
    ref: dict[str, object] = {"kind": "OBJECT", "name": "T"}
    for _ in range(100):
        ref = {"kind": "NON_NULL", "ofType": ref}
    schema = read_introspection(
        {"__schema": {"queryType": {"name": "Q"}, "types": [{"name": "Q", "fields": [{"name": "f", "type": ref}]}]}}
    )
    assert schema.types["Q"].fields[0].type_name == ""


_names = st.text(alphabet=string.ascii_letters + "_", min_size=1, max_size=12).filter(
    lambda s: s not in ("type", "schema", "extend", "implements", "interface", "input", "enum", "union")
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_names, min_size=1, max_size=8, unique=True), st.lists(_names, min_size=1, max_size=8, unique=True))
def test_sdl_round_trip_of_names(queries: list[str], mutations: list[str]) -> None:
    """Root fields written as SDL come back as Query.<name> / Mutation.<name>, in order, none lost."""
    sdl = "type Query {\n" + "".join(f'  "doc"\n  {q}(a: Int = 1): [T!]!\n' for q in queries) + "}\n"
    sdl += "type Mutation {\n" + "".join(f"  {m}: T @deprecated\n" for m in mutations) + "}\n"
    ix = build_index(make_spec(sdl, "https://x.test/schema.graphql", media_type="text/plain"))
    assert [op.key for op in ix.operations] == [f"Query.{q}" for q in queries] + [f"Mutation.{m}" for m in mutations]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet='type Query{}()[]!:@"#\n ,abc=|&', max_size=300))
def test_sdl_reader_never_crashes(text: str) -> None:
    """Any text either parses or raises SpecError; the reader never crashes or loops."""
    try:
        schema = parse_sdl(text)
    except SpecError:
        return
    assert len(schema.types) <= len(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="`abcdefghijklmnopqrstuvwxyz_(),. ", max_size=200), st.sampled_from(["query", "mutation"]))
def test_required_access_reader_never_crashes(text: str, role: str) -> None:
    """Any requiredAccess text gives scope sets of Shopify-shaped names, or none; never an exception."""
    reading = read_required_access(text, role)
    for alt in reading.alternatives or ():
        assert alt
        assert all(s.startswith(("read_", "write_", "unauthenticated_")) for s in alt)


def _resolve(sdl: str, op_id: str, method: str = "", path: str = "") -> Target | Unresolved:
    ix = build_index(make_spec(sdl, "https://x.test/schema.graphql", media_type="text/plain"))
    resource, op = rest_operation(op_id, method, path)
    return resolve(resource, op, ix)


_TWO_ROOTS = "schema { query: Root mutation: Mut }\ntype Root { both: Int only: Int }\ntype Mut { both: Int }\n"


@pytest.mark.parametrize(
    ("op_id", "key"),
    [
        ("Query.only", "Query.only"),
        ("Root.only", "Query.only"),
        ("only", "Query.only"),
        ("Mutation.both", "Mutation.both"),
    ],
)
def test_resolving_a_root_field(op_id: str, key: str) -> None:
    """A root field is found by role, by the schema's own root type name, or by its bare name when unique."""
    found = _resolve(_TWO_ROOTS, op_id)
    assert isinstance(found, Target)
    assert (found.entry.key, found.matched_by) == (key, "operation_id")


def test_a_bare_name_in_two_roots_is_ambiguous() -> None:
    """``both`` is a query and a mutation: the resolver lists them, it does not pick."""
    found = _resolve(_TWO_ROOTS, "both")
    assert isinstance(found, Unresolved)
    assert (found.reason, found.suggestions) == (
        "ambiguous-operation",
        ("Query.both (POST /graphql)", "Mutation.both (POST /graphql)"),
    )


def test_an_unknown_field_is_not_found_with_suggestions() -> None:
    found = _resolve(_TWO_ROOTS, "Query.onyl")
    assert isinstance(found, Unresolved)
    assert found.reason == "operation-not-found"
    assert found.suggestions[0] == "Query.only (POST /graphql)"


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["__schema", "data", "types", "name", "fields", "type", "ofType", "kind", "queryType", "requiredAccess"]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_json)
def test_introspection_reader_never_crashes(doc: object) -> None:
    """Any JSON value either reads as a schema or raises SpecError; names that come back are GraphQL names."""
    try:
        schema = read_introspection(doc)
    except SpecError:
        return
    for name, t in schema.types.items():
        assert name == t.name
        assert all(f.name.isidentifier() for f in t.fields)


def test_customer_account_api_has_its_own_scheme_and_endpoint() -> None:
    """customer_ scopes mark Shopify's Customer Account API: a customer's authorization code, its own endpoint."""
    doc = {
        "data": {
            "__schema": {
                "queryType": {"name": "QueryRoot"},
                "types": [
                    {
                        "kind": "OBJECT",
                        "name": "QueryRoot",
                        "fields": [
                            {
                                "name": "order",
                                "type": {"kind": "OBJECT", "name": "Order"},
                                "requiredAccess": "`customer_read_orders` access scope.",
                            }
                        ],
                    }
                ],
            }
        }
    }
    ix = build_index(make_spec(doc, "https://shopify.com/customer-account/2026-10.json"))
    op = ix.operation("Query.order")
    assert op is not None
    assert op.requirements == _alts(("customer_read_orders",), scheme="shopify_customer_account")
    assert op.path == "/customer/api/{api_version}/graphql"
    (scheme,) = ix.schemes
    assert [f.kind.value for f in scheme.flows] == ["authorizationCode"]
