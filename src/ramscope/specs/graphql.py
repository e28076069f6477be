"""GraphQL schemas (an introspection result, or SDL) -> :class:`SpecIndex`.

Every root field is one operation: ``Query.orders``, ``Mutation.productCreate``,
``Subscription.issueUpdates`` (the root type's role, whatever the schema names it: Shopify's
query root is ``QueryRoot``). All of them are ``POST`` to the one endpoint (``/graphql``,
Shopify's ``/admin/api/{api_version}/graphql.json``), so a card names a GraphQL operation by
``operation_id``; the resolver also takes the bare field name where only one root type has it.

Where the requirements come from, in order:

1. **The schema's own data.** Shopify's introspection carries ``requiredAccess`` on fields and
   types ("`write_products` access scope. Also: The user must have a permission to create
   products."). The field's own text decides; without one, its return type's (through a
   ``...Connection``'s ``nodes``: ``Query.orders`` -> ``OrderConnection`` -> ``Order``). The scope
   clause is read by a small grammar (``a``, ``a or b``, ``a, b or c``, ``any of a, b``, ``a as well
   as any of b, c``, ``a and (b or c)``, Shopify's "`x` for queries and both `x` as well as `y` for
   mutations"); what follows "Also:" (a staff member's permissions, not the token's) is kept as a
   note. A scope family ("`shipping` access scopes") is its read scope in a query and its write scope in
   a mutation, only for the families a cited shopify.dev page pairs with their scopes. Text the grammar
   cannot read leaves the field undetermined, with a finding, never a guess.
2. **A provider catalog** keyed by root field, for a schema that says nothing (Linear:
   ``providers/data/linear.graphql.json``; monday.com: ``monday.graphql.json``, compiled from
   ``vendor/monday/catalog.json``; each entry with its source page), matched by the spec's URL. A
   catalog may list root fields it leaves undetermined with the reason (monday.com's page names no
   scope for them) and notes on the provider's tokens (``graphql-catalog-note``).
3. Otherwise undetermined (``security-undeclared``), never "needs nothing".

The SDL reader is this module's own: a tokenizer and an iterative reader of the definitions it
needs (schema, object and interface types with their fields, ``extend``), skipping argument lists,
inputs, enums, unions and directives by bracket counting. Bounded: bytes, tokens, bracket depth,
list-type depth, types and fields; nothing recurses on the input.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

import orjson

from ..diagnostics import Diagnostic, Severity, rule
from ..documents import FetchedSpec
from ..errors import SpecError
from ._doc import SECURITY_UNDECLARED, TextDocument, assign_keys
from .model import (
    FlowKind,
    OAuthFlow,
    OperationEntry,
    Requirement,
    Requirements,
    SchemeRequirement,
    SchemeType,
    SecurityScheme,
    SpecIndex,
    SpecKind,
    scheme_from_dict,
)
from .refs import RefLoader

__all__ = [
    "GRAPHQL_ACCESS_UNREAD",
    "GRAPHQL_CATALOG_NOTE",
    "MAX_SDL_BYTES",
    "MAX_SDL_TOKENS",
    "ROOTS",
    "GqlField",
    "GqlSchema",
    "GqlType",
    "GraphQLAdapter",
    "build_graphql_index",
    "looks_like_sdl",
    "parse_sdl",
    "read_introspection",
    "read_required_access",
]

#: GitHub's public SDL is 1.3 MB, Linear's 1.3 MB (about 200,000 tokens, read in 1.8 s); Shopify Admin's
#: introspection is 11 MB of JSON (read by orjson, not by this reader).
MAX_SDL_BYTES = 32 * 1024 * 1024
MAX_SDL_TOKENS = 5_000_000
MAX_TYPES = 100_000
MAX_FIELDS = 1_000_000
#: Bracket nesting (argument defaults, directive arguments) the skipper follows.
MAX_NESTING = 256
#: ``[[[T!]!]!]`` nesting of a type reference (introspection's ``ofType`` chain is bounded alike).
MAX_TYPE_DEPTH = 32
_MAX_TEXT = 4_000

#: The root roles, in the order their fields are listed.
ROOTS = ("query", "mutation", "subscription")
_ROOT_LABEL = {"query": "Query", "mutation": "Mutation", "subscription": "Subscription"}

GRAPHQL_ACCESS_UNREAD = rule(
    "graphql-access-unread",
    Severity.WARNING,
    "A GraphQL field's or type's requiredAccess text does not read as access scopes: what it needs is unknown.",
    stage="spec",
)
GRAPHQL_CATALOG_NOTE = rule(
    "graphql-catalog-note",
    Severity.INFO,
    "A GraphQL schema's provider catalog carries the provider's word on its tokens (what a personal token may do).",
    stage="spec",
)


# --------------------------------------------------------------------------- the schema, as read


@dataclass(frozen=True, slots=True)
class GqlField:
    name: str
    #: The named type under any list and non-null wrappers.
    type_name: str
    description: str = ""
    deprecated: bool = False
    deprecation_reason: str = ""
    required_access: str = ""


@dataclass(slots=True)
class GqlType:
    name: str
    kind: str
    description: str = ""
    fields: list[GqlField] = field(default_factory=list)
    required_access: str = ""


@dataclass(frozen=True, slots=True)
class GqlSchema:
    #: role ("query", "mutation", "subscription") -> the root type's name.
    roots: Mapping[str, str]
    types: Mapping[str, GqlType]
    description: str = ""
    #: "introspection" or "sdl".
    form: str = "sdl"


def _clip(text: Any) -> str:
    return text[:_MAX_TEXT] if isinstance(text, str) else ""


# --------------------------------------------------------------------------- introspection


def _schema_of(doc: Any) -> Mapping[str, Any] | None:
    if not isinstance(doc, dict):
        return None
    data = doc.get("data")
    inner = data.get("__schema") if isinstance(data, dict) else doc.get("__schema")
    return inner if isinstance(inner, dict) and isinstance(inner.get("types"), list) else None


def _named(ref: Any) -> str:
    """The named type under an introspection type reference's ``ofType`` chain ("" if malformed)."""
    for _ in range(MAX_TYPE_DEPTH):
        if not isinstance(ref, dict):
            return ""
        if ref.get("kind") in ("LIST", "NON_NULL"):
            ref = ref.get("ofType")
            continue
        name = ref.get("name")
        return name if isinstance(name, str) and _NAME.fullmatch(name) else ""
    return ""


def read_introspection(doc: Any) -> GqlSchema:
    """The schema of an introspection result (``{"data": {"__schema": ...}}`` or the bare ``__schema``)."""
    schema = _schema_of(doc)
    if schema is None:
        raise SpecError("unsupported spec: not a GraphQL introspection result")
    raw_types = schema["types"]
    if len(raw_types) > MAX_TYPES:
        raise SpecError(f"unsupported spec: a GraphQL schema of more than {MAX_TYPES:,} types")
    types: dict[str, GqlType] = {}
    n_fields = 0
    for t in raw_types:
        if not isinstance(t, dict) or not isinstance(t.get("name"), str) or not _NAME.fullmatch(t["name"]):
            continue
        gt = GqlType(
            t["name"], str(t.get("kind") or ""), _clip(t.get("description")), [], _clip(t.get("requiredAccess"))
        )
        raw_fields = t.get("fields")
        for f in raw_fields if isinstance(raw_fields, list) else ():
            n_fields += 1
            if n_fields > MAX_FIELDS:
                raise SpecError(f"unsupported spec: a GraphQL schema of more than {MAX_FIELDS:,} fields")
            if not isinstance(f, dict) or not isinstance(f.get("name"), str) or not _NAME.fullmatch(f["name"]):
                continue
            gt.fields.append(
                GqlField(
                    f["name"],
                    _named(f.get("type")),
                    _clip(f.get("description")),
                    f.get("isDeprecated") is True,
                    _clip(f.get("deprecationReason")),
                    _clip(f.get("requiredAccess")),
                )
            )
        types[gt.name] = gt
    roots: dict[str, str] = {}
    for role in ROOTS:
        ref = schema.get(f"{role}Type")
        name = ref.get("name") if isinstance(ref, dict) else None
        if isinstance(name, str) and name in types:
            roots[role] = name
    return GqlSchema(roots, types, _clip(schema.get("description")), "introspection")


# --------------------------------------------------------------------------- SDL

_NAME = re.compile(r"[_A-Za-z][_0-9A-Za-z]{0,255}")
_TOKEN = re.compile(
    r"(?P<skip>[\s,\ufeff]+|#[^\n\r]*)"
    r"|(?P<name>[_A-Za-z][_0-9A-Za-z]*)"
    r"|(?P<number>-?[0-9][0-9.eE+\-]*)"
    r"|(?P<punct>\.\.\.|[!$&():=@\[\]{|}])"
)
#: Strings are scanned by hand, not by a regex: a repeated group of alternatives (``(?:\\.|[^"])*``) keeps
#: a backtracking entry per character, so one unterminated ``"""`` before 60 MB of text cost 2.4 GB
#: (issue 30, item 12). A search for the closing quote (after an even run of backslashes) is linear and holds
#: nothing.
_STRING_CLOSE = re.compile(r'(?<!\\)(?:\\\\)*+"')  # possessive: a run of backslashes holds no backtracking
#: The ``"""`` escape is the only one of a block string: any ``"""`` after a backslash is not its end.
_BLOCK_END = re.compile(r'(?<!\\)"""')
_KEYWORDS = ("schema", "type", "interface", "input", "enum", "union", "scalar", "directive", "extend")
#: What SDL opens with: comments, then a description or a definition keyword (``type Query {``).
_SDL_HEAD = re.compile(
    r'\A(?:[ \t\r\n]*#[^\n]*\n)*[ \t\r\n]*(?:"|(?:extend[ \t]+)?(?:schema\s*[{@]|'
    r"(?:type|interface|input|enum|union|scalar)[ \t]+[_A-Za-z][_0-9A-Za-z]*[ \t]*(?:[{@=\r\n]|implements\b|$))|"
    r"directive[ \t]+@)"
)
#: Horizontal space only before the keyword: ``^\s*`` would let every line start rescan the blank lines
#: after it (quadratic; a head of newlines took minutes).
_SDL_ROOT = re.compile(
    r"(?m)^[ \t]*(?:extend[ \t]+)?(?:schema\s*\{|type[ \t]+(?:Query|Mutation|Subscription|QueryRoot)\b)"
)
_SDL_EXT = (".graphql", ".graphqls", ".gql", ".sdl")


def looks_like_sdl(head: str, url: str = "") -> bool:
    """Is this GraphQL SDL (``head``: its first characters)? A definition opens it and a root type or a
    ``schema`` block appears; at a ``.graphql`` URL the opening definition suffices."""
    if not _SDL_HEAD.match(head):
        return False
    if _SDL_ROOT.search(head):
        return True
    return url.lower().split("?")[0].split("#")[0].endswith(_SDL_EXT)


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str
    value: str


def _tokens(text: str) -> Iterator[_Tok]:
    pos = 0
    n = len(text)
    count = 0
    while pos < n:
        if text[pos] == '"':
            end = _block_end(text, pos) if text.startswith('"""', pos) else _string_end(text, pos)
            kind = "block" if text.startswith('"""', pos) else "string"
            value = text[pos:end]
            pos = end
        else:
            m = _TOKEN.match(text, pos)
            if m is None:
                raise SpecError(f"unsupported spec: GraphQL SDL with an unreadable character at offset {pos}")
            pos = m.end()
            kind = m.lastgroup or ""
            if kind == "skip":
                continue
            value = m.group()
        count += 1
        if count > MAX_SDL_TOKENS:
            raise SpecError(f"unsupported spec: GraphQL SDL of more than {MAX_SDL_TOKENS:,} tokens")
        yield _Tok(kind, value)


def _block_end(text: str, pos: int) -> int:
    """The end of the block string opening at ``pos`` (``\"""`` inside it is an escaped quote triple)."""
    m = _BLOCK_END.search(text, pos + 3)
    if m is None:
        raise SpecError(f"unsupported spec: GraphQL SDL with an unterminated block string at offset {pos}")
    return m.end()


def _string_end(text: str, pos: int) -> int:
    """The end of the one-line string opening at ``pos``: its first quote after an even run of backslashes."""
    eol = len(text)
    for stop in ("\n", "\r"):
        j = text.find(stop, pos, eol)
        if j >= 0:
            eol = j
    m = _STRING_CLOSE.search(text, pos + 1, eol)
    if m is None:
        raise SpecError(f"unsupported spec: GraphQL SDL with an unterminated string at offset {pos}")
    return m.end()


def _string_value(tok: _Tok) -> str:
    if tok.kind == "block":
        lines = tok.value[3:-3].replace('\\"""', '"""').splitlines()
        return _clip("\n".join(line.strip() for line in lines).strip())
    try:
        value = orjson.loads(tok.value)
    except orjson.JSONDecodeError:
        value = tok.value[1:-1]
    return _clip(value)


class _Reader:
    """An iterative reader over the token list."""

    def __init__(self, text: str) -> None:
        self.toks = list(_tokens(text))
        self.i = 0

    def peek(self, k: int = 0) -> _Tok | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def next(self) -> _Tok:
        tok = self.peek()
        if tok is None:
            raise SpecError("unsupported spec: GraphQL SDL ends in the middle of a definition")
        self.i += 1
        return tok

    def is_(self, value: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok is not None and tok.kind in ("punct", "name") and tok.value == value

    def expect_name(self) -> str:
        tok = self.next()
        if tok.kind != "name":
            raise SpecError(f"unsupported spec: GraphQL SDL: a name was expected, found {tok.value[:40]!r}")
        if len(tok.value) > 256:
            raise SpecError("unsupported spec: GraphQL SDL with a name longer than 256 characters")
        return tok.value

    def names(self, sep: str) -> list[str]:
        """``A | B | C`` (or with ``&``), a leading separator allowed, as SDL writes directive
        locations, implemented interfaces and union members."""
        if self.is_(sep):
            self.i += 1
        out = [self.expect_name()]
        while self.is_(sep):
            self.i += 1
            out.append(self.expect_name())
        return out

    def skip_balanced(self) -> None:
        """Skip a bracketed group starting at the current ``(``, ``[`` or ``{``."""
        depth = 0
        while True:
            tok = self.next()
            if tok.kind == "punct" and tok.value in "([{":
                depth += 1
                if depth > MAX_NESTING:
                    raise SpecError(f"unsupported spec: GraphQL SDL nested deeper than {MAX_NESTING}")
            elif tok.kind == "punct" and tok.value in ")]}":
                depth -= 1
                if depth <= 0:
                    return

    def description(self) -> str:
        tok = self.peek()
        if tok is not None and tok.kind in ("block", "string"):
            self.i += 1
            return _string_value(tok)
        return ""

    def directives(self) -> tuple[bool, str]:
        """Skip directives; whether ``@deprecated`` was among them, and its reason."""
        deprecated, reason = False, ""
        while self.is_("@"):
            self.i += 1
            name = self.expect_name()
            if name == "deprecated":
                deprecated = True
            if self.is_("("):
                start = self.i
                self.skip_balanced()
                if name == "deprecated":
                    reason = next((_string_value(t) for t in self.toks[start : self.i] if t.kind == "string"), "")
        return deprecated, reason

    def type_ref(self) -> str:
        """A type reference (``[Name!]!``): its named type."""
        depth = 0
        while self.is_("["):
            self.i += 1
            depth += 1
            if depth > MAX_TYPE_DEPTH:
                raise SpecError(f"unsupported spec: GraphQL SDL type nested deeper than {MAX_TYPE_DEPTH} lists")
        name = self.expect_name()
        if self.is_("!"):
            self.i += 1
        for _ in range(depth):
            if not self.is_("]"):
                raise SpecError(f"unsupported spec: GraphQL SDL: an unclosed list type around {name!r}")
            self.i += 1
            if self.is_("!"):
                self.i += 1
        return name


def parse_sdl(text: str) -> GqlSchema:
    """The object and interface types, their fields and the root types of GraphQL SDL."""
    if len(text) > MAX_SDL_BYTES:
        raise SpecError(f"unsupported spec: GraphQL SDL larger than {MAX_SDL_BYTES:,} characters")
    r = _Reader(text)
    types: dict[str, GqlType] = {}
    roots: dict[str, str] = {}
    n_fields = 0
    schema_description = ""
    while r.peek() is not None:
        desc = r.description()
        if r.peek() is None:
            break
        extend = r.is_("extend")
        if extend:
            r.i += 1
        tok = r.next()
        if tok.kind != "name" or tok.value not in _KEYWORDS:
            raise SpecError(f"unsupported spec: GraphQL SDL: a definition was expected, found {tok.value[:40]!r}")
        word = tok.value
        if word == "schema":
            schema_description = schema_description or desc
            r.directives()
            if r.is_("{"):
                r.i += 1
                while not r.is_("}"):
                    role = r.expect_name()
                    if not r.is_(":"):
                        raise SpecError("unsupported spec: GraphQL SDL: a schema entry without ':'")
                    r.i += 1
                    name = r.expect_name()
                    if role in ROOTS:
                        roots[role] = name
                r.i += 1
            continue
        if word == "directive":
            # directive @name(args) repeatable? on A | B
            if r.is_("@"):
                r.i += 1
            r.expect_name()
            if r.is_("("):
                r.skip_balanced()
            if r.is_("repeatable"):
                r.i += 1
            if r.is_("on"):
                r.i += 1
                r.names("|")
            continue
        name = r.expect_name()
        if word in ("type", "interface"):
            if r.is_("implements"):
                r.i += 1
                r.names("&")
            r.directives()
            gt = types.get(name)
            if gt is None:
                if len(types) >= MAX_TYPES:
                    raise SpecError(f"unsupported spec: GraphQL SDL of more than {MAX_TYPES:,} types")
                gt = types[name] = GqlType(name, "OBJECT" if word == "type" else "INTERFACE", desc)
            if r.is_("{"):
                r.i += 1
                while not r.is_("}"):
                    fdesc = r.description()
                    fname = r.expect_name()
                    if r.is_("("):
                        r.skip_balanced()
                    if not r.is_(":"):
                        raise SpecError(f"unsupported spec: GraphQL SDL: field {name}.{fname} has no type")
                    r.i += 1
                    tname = r.type_ref()
                    deprecated, reason = r.directives()
                    n_fields += 1
                    if n_fields > MAX_FIELDS:
                        raise SpecError(f"unsupported spec: GraphQL SDL of more than {MAX_FIELDS:,} fields")
                    gt.fields.append(GqlField(fname, tname, fdesc, deprecated, reason))
                r.i += 1
            continue
        # input, enum, union, scalar: nothing this reader needs; skip their bodies.
        r.directives()
        if word == "union" and r.is_("="):
            r.i += 1
            r.names("|")
        elif r.is_("{"):
            r.skip_balanced()
    for role in ROOTS:
        if role not in roots and _ROOT_LABEL[role] in types:
            roots[role] = _ROOT_LABEL[role]
    roots = {k: v for k, v in roots.items() if v in types}
    return GqlSchema(roots, types, schema_description, "sdl")


# --------------------------------------------------------------------------- requiredAccess

#: Admin API scopes (``read_orders``), Storefront's (``unauthenticated_read_...``), the Customer Account API's
#: (``customer_read_orders``).
_SHOPIFY_SCOPE = re.compile(r"(?:unauthenticated_|customer_)?(?:read|write)_[a-z0-9_]{1,80}")
_CLAUSE_TOKEN = re.compile(r"`([^`\n]{1,120})`|(\()|(\))|(,)|([A-Za-z_]+)|(\S)")
#: Words that carry no meaning in a scope clause ("Apps must have `x` access scope", "`x` is required").
_FILLER = frozenset(
    {
        *("apps", "must", "have", "requires", "require", "required", "is", "access", "allowed", "for", "with"),
        *("using", "offline", "tokens", "only", "the", "a", "scope", "scopes"),
    }
)
_QUERY_MUTATION = re.compile(
    r"`([^`]+)` for queries and both `([^`]+)` as well as `([^`]+)` for mutations\.?", re.IGNORECASE
)

#: Scope families: requiredAccess sometimes names a family ("Any of `shipping` access scopes", "products or
#: product_listings read access scope") rather than a scope. A family is read only where a Shopify page lists
#: its scopes: family -> action -> (scope, page). A query (or subscription) needs the read scope, a mutation
#: the write scope; a family or action not listed here is not guessed.
_ACCESS_SCOPES_PAGE = "https://shopify.dev/docs/admin-api/access-scopes"
_SCOPE_FAMILIES: Mapping[str, Mapping[str, tuple[str, str]]] = {
    # "read_orders, write_orders: Access to Abandoned checkouts, Customer, Fulfillment, Order, and Transaction."
    "orders": {"read": ("read_orders", _ACCESS_SCOPES_PAGE), "write": ("write_orders", _ACCESS_SCOPES_PAGE)},
    # "read_products, write_products: Access to Product, Product Variant, ..."
    "products": {"read": ("read_products", _ACCESS_SCOPES_PAGE), "write": ("write_products", _ACCESS_SCOPES_PAGE)},
    # "read_product_listings: Access to Product Listing, and Collection Listing." (no write scope listed)
    "product_listings": {"read": ("read_product_listings", _ACCESS_SCOPES_PAGE)},
    # The CarrierService reference calls it the "shipping access scope" and names write_shipping; the
    # appInstallation example lists the granted handles read_shipping ("Read shipping rates, countries, and
    # provinces") and write_shipping ("Modify shipping rates, countries, and provinces").
    # "read_fulfillments, write_fulfillments: Access to Fulfillment Service."
    "fulfillments": {
        "read": ("read_fulfillments", _ACCESS_SCOPES_PAGE),
        "write": ("write_fulfillments", _ACCESS_SCOPES_PAGE),
    },
    "shipping": {
        "read": ("read_shipping", "https://shopify.dev/docs/api/admin-graphql/2025-10/queries/appinstallation"),
        "write": ("write_shipping", "https://shopify.dev/docs/api/admin-rest/latest/resources/carrierservice"),
    },
}
#: "products or product_listings read access scope": families by bare word, the action said once.
_FAMILY_ACTION = re.compile(
    r"(?P<fams>[a-z][a-z_]{0,60}(?:(?:,| or)\s+[a-z][a-z_]{0,60}){0,8})\s+(?P<action>read|write)\s+access\s+scopes?"
)
#: "Apps will need one of the following: `fulfillments`, `products` or `custom_fulfillment_services` (in case
#: of custom fulfillment service). <more sentences>" (FulfillmentService).
_ONE_OF = re.compile(r"Apps will need one of the following: (?P<items>[^.]{1,600})\.(?:\s+(?P<rest>.*))?", re.DOTALL)
_ONE_OF_ITEM = re.compile(r"`(?P<name>[a-z][a-z0-9_]{0,80})`(?:\s*\((?P<cond>in case of [^)]{1,120})\))?")
#: "User must have `read_shopify_payments_disputes` access." (a scope name, in scope syntax).
_USER_MUST_HAVE = re.compile(r"User must have `(?P<scope>[^`]{1,120})` access")
#: "The user needs write_themes and an exemption from Shopify to modify themes." (theme mutations)
_EXEMPTION = re.compile(
    r"The user needs (?P<scope>(?:read|write)_[a-z_]{1,60}) and an exemption from Shopify to modify "
    r"(?P<what>[a-z ]{1,40}?)\.(?P<rest>.*)",
    re.DOTALL,
)

#: A field's requiredAccess that speaks of the staff member only ("The user must have markets API access."):
#: it binds the user, not the token, so it is a note and the return type's requiredAccess speaks for the token.
_STAFF_ONLY = re.compile(r"The user must [^`\n]{1,200}")

#: Shopify's API access-scopes page: per scope pair, the objects it grants ("`read_locations`,`write_locations` |
#: `Location`").
SHOPIFY_ACCESS_SCOPES_USAGE = "https://shopify.dev/docs/api/usage/access-scopes"


@dataclass(frozen=True, slots=True)
class ShopifyDocumented:
    """A root field the schema leaves unread or silent, read from what a shopify.dev page states.

    Each holds only for the schema it was read against: the field must still return ``returns``, its
    requiredAccess (its own, else its return type's) must still start with ``text`` ("" for none) and, where
    given, its description must still say ``description`` (what a ``Count`` counts)."""

    returns: str
    text: str
    alternatives: tuple[tuple[str, ...], ...]
    source: str
    #: What the page states and how it applies (kept in ``target.hints.documented``).
    why: str
    description: str = ""


#: Keyed by root field. Only what a page states; a field whose need depends on its arguments (metafield owner
#: types, webhook topics, saved-search resource types, node IDs) is not here.
SHOPIFY_DOCUMENTED: Mapping[str, ShopifyDocumented] = {
    "Query.checkoutBranding": ShopifyDocumented(
        "CheckoutBranding",
        "access to checkout branding settings",
        (("read_checkout_branding_settings",),),
        SHOPIFY_ACCESS_SCOPES_USAGE,
        "the access-scopes page pairs `read_checkout_branding_settings`, `write_checkout_branding_settings` with "
        "`CheckoutBranding`, the type this query returns and whose requiredAccess asks for access to checkout "
        "branding settings: a query needs the read scope",
    ),
    "Mutation.checkoutBrandingUpsert": ShopifyDocumented(
        "CheckoutBrandingUpsertPayload",
        "access to checkout branding settings",
        (("write_checkout_branding_settings",),),
        SHOPIFY_ACCESS_SCOPES_USAGE,
        "the access-scopes page pairs `read_checkout_branding_settings`, `write_checkout_branding_settings` with "
        "`CheckoutBranding`, which this mutation writes (its payload's `checkoutBranding`): a mutation needs the "
        "write scope",
    ),
    "Query.locationsCount": ShopifyDocumented(
        "Count",
        "",
        (("read_locations",),),
        SHOPIFY_ACCESS_SCOPES_USAGE,
        "it returns the count of locations; the access-scopes page: `read_locations`, `write_locations` grant "
        "`Location`",
        description=r"\bcount of locations\b",
    ),
    "Query.segmentsCount": ShopifyDocumented(
        "Count",
        "",
        (("read_customers",),),
        SHOPIFY_ACCESS_SCOPES_USAGE,
        "it returns the number of segments; the access-scopes page: `read_customers`, `write_customers` grant "
        "`Customer`, `Segment`, `Company`, `CompanyLocation`",
        description=r"\bnumber of segments\b",
    ),
}


def shopify_documented(label: str, returns: str, text: str, description: str) -> ShopifyDocumented | None:
    """The documented reading of a root field, where it still fits the schema (see :class:`ShopifyDocumented`)."""
    doc = SHOPIFY_DOCUMENTED.get(label)
    if doc is None or doc.returns != returns:
        return None
    said = text.strip()
    if (doc.text and not said.startswith(doc.text)) or (not doc.text and said):
        return None
    if doc.description and not re.search(doc.description, description):
        return None
    return doc


@dataclass(frozen=True, slots=True)
class AccessReading:
    """What a requiredAccess text says: scope alternatives (OR of AND-sets), or why it cannot be read."""

    alternatives: tuple[tuple[str, ...], ...] | None
    #: The staff member's permissions ("Also: ..."), user permissions listed as alternatives, in words.
    note: str = ""
    problem: str = ""
    #: The pages that name the scopes a family stood for ("`shipping` access scopes" -> write_shipping).
    family_sources: tuple[str, ...] = ()


def _family_scope(family: str, role: str) -> tuple[str, str] | None:
    """The scope (and its page) a family name stands for in a query or a mutation, where a page lists it."""
    return _SCOPE_FAMILIES.get(family, {}).get("write" if role == "mutation" else "read")


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def read_required_access(text: str, role: str = "query") -> AccessReading:
    """Read Shopify's requiredAccess prose into scope alternatives (see the module docstring).

    ``role`` ("query" or "mutation") picks the side of "... for queries and ... for mutations".
    """
    text = text.strip()
    main, _, also = text.partition("Also:")
    note = also.strip()
    main = main.strip()
    m = _QUERY_MUTATION.fullmatch(main)
    if m is not None:
        scopes = (m.group(1),) if role != "mutation" else (m.group(2), m.group(3))
        if not all(_SHOPIFY_SCOPE.fullmatch(s) for s in scopes):
            return AccessReading(None, note, "a scope name that is not one")
        return AccessReading((tuple(sorted(set(scopes))),), note)
    m = _EXEMPTION.fullmatch(main)
    if m is not None:
        # The theme mutations: the scope, and an exemption Shopify grants the app on request (an exception
        # form); without the exemption the scope alone is refused, and no scope the app asks for expresses it.
        gate = (
            f"and an exemption from Shopify to modify {m.group('what')}, granted to the app on request "
            f"(Shopify's exception request form): {m.group('scope')} alone is refused without it"
        )
        return AccessReading(((m.group("scope"),),), _join(gate, note))
    m = _ONE_OF.fullmatch(main)
    if m is not None:
        return _read_one_of(m.group("items"), (m.group("rest") or "").strip(), note, role)
    m = _USER_MUST_HAVE.fullmatch(main.rstrip("."))
    if m is not None:
        scope = m.group("scope")
        if not _SHOPIFY_SCOPE.fullmatch(scope):
            return AccessReading(None, note, "a scope name that is not one")
        return AccessReading(((scope,),), note)
    # The first sentence carries the scopes; a second one is advice ("Please contact Shopify Support ...").
    first, *rest = re.split(r"(?<=[a-z`)])\.(?:\s|$)", main, maxsplit=1)
    first = first.strip().rstrip(".")
    m = _FAMILY_ACTION.fullmatch(first)
    if m is not None:
        # "products or product_listings read access scope": each family with the action said once.
        fams = [f for f in re.split(r",|\s+or\s+|\s+", m.group("fams")) if f and f != "or"]
        found = [_SCOPE_FAMILIES.get(f, {}).get(m.group("action")) for f in fams]
        if not all(found):
            return AccessReading(None, note, "a scope family no Shopify page pairs with this action")
        # A second sentence about the user ("The user must have permission to view markets ...") is the staff
        # member's, as "Also:" is.
        staff = rest[0].strip() if rest and rest[0].strip().lower().startswith(("the user", "user")) else ""
        return AccessReading(
            tuple((x[0],) for x in found if x),
            _join(staff, note),
            family_sources=tuple(dict.fromkeys(x[1] for x in found if x)),
        )
    tokens: list[tuple[str, str]] = []
    for t in _CLAUSE_TOKEN.finditer(first):
        name, lp, rp, comma, word, other = t.groups()
        if name is not None:
            tokens.append(("name", name))
        elif lp or rp or comma:
            tokens.append(("punct", lp or rp or comma))
        elif word is not None:
            w = word.lower()
            if w in _FILLER:
                continue
            tokens.append(("word", w))
        else:
            return AccessReading(None, note, f"unexpected {other!r}")
    return _read_clause(tokens, note, role)


def _read_one_of(items: str, rest: str, note: str, role: str) -> AccessReading:
    """ "Apps will need one of the following: `a`, `b` or `c` (in case of ...)": any one of them. An item bound
    to a case ("in case of custom fulfillment service") holds only then: it is kept out of the alternatives and
    said in the note, as the sentences after the list (other ways in, the users') are."""
    parts = [p.strip() for p in re.split(r",|\s+or\s+", items) if p.strip()]
    alts: list[tuple[str, ...]] = []
    sources: list[str] = []
    aside: list[str] = []
    for part in parts:
        m = _ONE_OF_ITEM.fullmatch(part)
        if m is None:
            return AccessReading(None, note, "the text does not read as access scopes")
        name = m.group("name")
        hit = (name, "") if _SHOPIFY_SCOPE.fullmatch(name) else _family_scope(name, role)
        if m.group("cond") or hit is None:
            aside.append(f"`{name}`" + (f" ({m.group('cond')})" if m.group("cond") else ""))
            continue
        alts.append((hit[0],))
        if hit[1]:
            sources.append(hit[1])
    if not alts:
        return AccessReading(None, note, "no item of the list reads as an access scope")
    also = f"also accepted, not read: {', '.join(aside)}" if aside else ""
    return AccessReading(
        tuple(dict.fromkeys(alts)), _join(also, rest, note), family_sources=tuple(dict.fromkeys(sources))
    )


def _read_clause(tokens: list[tuple[str, str]], note: str, role: str = "query") -> AccessReading:
    """A tiny grammar: ``expr := and_list``; ``and_list := or_list (("and" | "as well as") or_list)*``;
    ``or_list := item (("," | "or") item)*``; ``item := ["any of"] NAME ["user permission"] | "(" expr ")"``.
    Evaluated iteratively into AND-sets (an OR of AND-sets), user permissions set aside."""
    pos = 0
    user_perms: list[str] = []
    #: Families an or-list offered that no page pairs (dropped: the other alternatives still suffice).
    unpaired: list[str] = []
    sources: list[str] = []

    def peek(v: str) -> bool:
        return pos < len(tokens) and tokens[pos][1] == v

    # Shunting to a flat form: parentheses allowed one level deep (the only shape Shopify writes).
    def or_list() -> list[frozenset[str]] | None:
        nonlocal pos
        out: list[frozenset[str]] = []
        dropped = 0
        while True:
            if peek("any"):
                pos += 1
                if not peek("of"):
                    return None
                pos += 1
            if peek("("):
                pos += 1
                inner = and_list(nested=True)
                if inner is None or not peek(")"):
                    return None
                pos += 1
                out.extend(inner)
            elif pos < len(tokens) and tokens[pos][0] == "name":
                name = tokens[pos][1]
                pos += 1
                if peek("user") and pos + 1 < len(tokens) and tokens[pos + 1][1] in ("permission", "permissions"):
                    pos += 2
                    user_perms.append(name)
                elif _SHOPIFY_SCOPE.fullmatch(name):
                    out.append(frozenset((name,)))
                elif re.fullmatch(r"[a-z][a-z0-9_]{0,80}", name):
                    # A family ("`shipping` access scopes"): its read or write scope, where a page lists it.
                    hit = _family_scope(name, role)
                    if hit is None:
                        unpaired.append(name)
                        dropped += 1
                    else:
                        out.append(frozenset((hit[0],)))
                        sources.append(hit[1])
                else:
                    return None
            else:
                return None
            if peek(",") or peek("or"):
                pos += 1
                continue
            # Dropping an alternative keeps the rest sufficient; a list of nothing but unpaired families is unread.
            return out if out or not dropped else None

    def and_list(nested: bool = False) -> list[frozenset[str]] | None:
        nonlocal pos
        result = or_list()
        if result is None:
            return None
        while True:
            if peek("and"):
                pos += 1
            elif peek("as") and pos + 2 < len(tokens) and tokens[pos + 1][1] == "well" and tokens[pos + 2][1] == "as":
                pos += 3
            else:
                return result
            right = or_list()
            if right is None or not right or not result:
                return None
            result = [a | b for a in result for b in right]
            if len(result) > 64:
                return None

    alts = and_list()
    if alts is None or pos != len(tokens):
        return AccessReading(None, note, "the text does not read as access scopes")
    perms = f"or the user permission {', '.join(user_perms)}" if user_perms else ""
    listed = ", ".join(f"`{u}`" for u in dict.fromkeys(unpaired))
    dropped = (
        f"also accepted, not read: the {listed} access scopes (no page in ramscope's family table names "
        "their read and write scopes)"
        if unpaired
        else ""
    )
    note = _join(perms, dropped, note)
    if not alts:
        return AccessReading(None, note, "it names user permissions only, no access scope")
    uniq = tuple(dict.fromkeys(tuple(sorted(a)) for a in alts))
    return AccessReading(uniq, note, family_sources=tuple(dict.fromkeys(sources)))


# --------------------------------------------------------------------------- catalogs (schemas that say nothing)


@dataclass(frozen=True, slots=True)
class GraphQLCatalog:
    """A provider's published scopes for the root fields of a schema that carries none."""

    name: str
    version: str
    url_patterns: tuple[re.Pattern[str], ...]
    endpoint: str
    scheme: SecurityScheme
    #: "Mutation.issueCreate" -> (alternatives, source page, why)
    fields: Mapping[str, tuple[tuple[tuple[str, ...], ...], str, str]]
    #: role -> (alternatives, source page, why), for root fields the catalog does not list by name
    defaults: Mapping[str, tuple[tuple[tuple[str, ...], ...], str, str]]
    #: Root fields whose own description a rule reads ("admin"): pattern -> (alternatives, source, why).
    description_rules: tuple[tuple[re.Pattern[str], tuple[tuple[str, ...], ...], str, str], ...] = ()
    #: Root fields the provider's pages leave without a scope: label -> (reason, source page).
    undetermined: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    #: The provider's word on its tokens: (message, source page).
    notes: tuple[tuple[str, str], ...] = ()
    #: Root fields the provider's pages say only an administrator may call: label -> (message, source page).
    #: A role of the calling user, no scope: said as the administrator's note beside whatever scope (or
    #: undetermined) the field has.
    administrator: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    def lookup(self, role: str, label: str, description: str) -> tuple[tuple[tuple[str, ...], ...], str, str] | None:
        hit = self.fields.get(label)
        if hit is not None:
            return hit
        for pattern, alts, source, why in self.description_rules:
            if role == "mutation" and pattern.search(description):
                return alts, source, why
        return self.defaults.get(role)


def _alts(raw: Any) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(str(s) for s in alt) for alt in raw)


@cache
def graphql_catalogs() -> tuple[GraphQLCatalog, ...]:
    """The GraphQL catalogs shipped in ``ramscope/providers/data/*.graphql.json``."""
    out = []
    folder = resources.files("ramscope.providers") / "data"
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if not item.name.endswith(".graphql.json"):
            continue
        doc = orjson.loads(item.read_bytes())
        if doc.get("format") != 1 or doc.get("kind") != "graphql-catalog":
            raise ValueError(f"providers/data/{item.name}: not a GraphQL catalog of format 1")
        out.append(
            GraphQLCatalog(
                name=doc["name"],
                version=doc["version"],
                url_patterns=tuple(re.compile(p) for p in doc["urls"]),
                endpoint=doc["endpoint"],
                scheme=scheme_from_dict(doc["scheme"]),
                fields={k: (_alts(v["alternatives"]), v["source"], v.get("why", "")) for k, v in doc["fields"].items()},
                defaults={
                    k: (_alts(v["alternatives"]), v["source"], v.get("why", "")) for k, v in doc["defaults"].items()
                },
                description_rules=tuple(
                    (re.compile(r["description"]), _alts(r["alternatives"]), r["source"], r.get("why", ""))
                    for r in doc.get("description_rules", ())
                ),
                undetermined={k: (str(v["reason"]), str(v["source"])) for k, v in doc.get("undetermined", {}).items()},
                notes=tuple((str(n["message"]), str(n["source"])) for n in doc.get("notes", ())),
                administrator={
                    k: (str(v["message"]), str(v["source"])) for k, v in doc.get("administrator", {}).items()
                },
            )
        )
    return tuple(out)


def catalog_for(url: str) -> GraphQLCatalog | None:
    for cat in graphql_catalogs():
        if any(p.search(url) for p in cat.url_patterns):
            return cat
    return None


# --------------------------------------------------------------------------- Shopify's scheme

SHOPIFY_SCHEME = "shopify_access_scopes"
SHOPIFY_ENDPOINT = "/admin/api/{api_version}/graphql.json"
#: Shopify's OAuth endpoints live on each shop's own host.
SHOPIFY_AUTHORIZE = "https://{shop}.myshopify.com/admin/oauth/authorize"
SHOPIFY_TOKEN = "https://{shop}.myshopify.com/admin/oauth/access_token"


SHOPIFY_CUSTOMER_SCHEME = "shopify_customer_account"
SHOPIFY_CUSTOMER_ENDPOINT = "/customer/api/{api_version}/graphql"
SHOPIFY_CUSTOMER_AUTHORIZE = "https://shopify.com/authentication/{shop_id}/oauth/authorize"
SHOPIFY_CUSTOMER_TOKEN = "https://shopify.com/authentication/{shop_id}/oauth/token"


def _shopify_scheme(scopes: list[str], *, customer: bool) -> SecurityScheme:
    listed = tuple((s, "") for s in sorted(set(scopes)))
    if customer:
        # The Customer Account API acts for a signed-in customer only (authorization code with PKCE).
        return SecurityScheme(
            SHOPIFY_CUSTOMER_SCHEME,
            SchemeType.OAUTH2,
            "Shopify Customer Account API: a customer's delegated token (authorization code); "
            "https://shopify.dev/docs/api/customer",
            flows=(
                OAuthFlow(
                    FlowKind.AUTHORIZATION_CODE,
                    authorization_url=SHOPIFY_CUSTOMER_AUTHORIZE,
                    token_url=SHOPIFY_CUSTOMER_TOKEN,
                    scopes=listed,
                ),
            ),
            namespace="https://shopify.com/customer-account-api",
        )
    return SecurityScheme(
        SHOPIFY_SCHEME,
        SchemeType.OAUTH2,
        "Shopify access scopes, granted to the app on a shop: authorization code grant (a merchant installs the "
        "app; online tokens act for a staff member) or client credentials grant (an app of the shop's own "
        "organisation); https://shopify.dev/docs/apps/build/authentication-authorization",
        flows=(
            OAuthFlow(
                FlowKind.AUTHORIZATION_CODE, authorization_url=SHOPIFY_AUTHORIZE, token_url=SHOPIFY_TOKEN, scopes=listed
            ),
            OAuthFlow(FlowKind.CLIENT_CREDENTIALS, token_url=SHOPIFY_TOKEN, scopes=listed),
        ),
        namespace="https://shopify.com/admin-api",
    )


# --------------------------------------------------------------------------- the adapter


class GraphQLAdapter:
    """The :class:`~ramscope.specs.Adapter` for GraphQL schemas: introspection JSON, or SDL text."""

    kind = SpecKind.GRAPHQL

    def sniff(self, doc: Any) -> str | None:
        if isinstance(doc, TextDocument):
            return "sdl" if looks_like_sdl(doc.head, doc.url) else None
        return "introspection" if _schema_of(doc) is not None else None

    def sniff_text(self, head: str, url: str) -> bool:
        return looks_like_sdl(head, url)

    def build(self, doc: Any, spec: FetchedSpec, *, spec_version: str, load_ref: RefLoader | None = None) -> SpecIndex:
        schema = parse_sdl(doc.text) if isinstance(doc, TextDocument) else read_introspection(doc)
        return build_graphql_index(schema, spec, spec_version=spec_version)


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _return_access(schema: GqlSchema, type_name: str) -> tuple[str, str]:
    """The requiredAccess of a field's return type, following a ``...Connection`` to its nodes."""
    t = schema.types.get(type_name)
    if t is None:
        return "", ""
    if t.required_access:
        return t.required_access, t.name
    if t.name.endswith("Connection"):
        node = next((f.type_name for f in t.fields if f.name == "nodes"), "")
        if not node:
            # A connection without ``nodes`` (CustomerSegmentMemberConnection) lists its nodes under
            # ``edges { node }``: the same node type, the same statement about it.
            edge = schema.types.get(next((f.type_name for f in t.fields if f.name == "edges"), ""))
            node = next((f.type_name for f in edge.fields if f.name == "node"), "") if edge else ""
        nt = schema.types.get(node)
        if nt is not None and nt.required_access:
            return nt.required_access, nt.name
    return "", ""


def _shopify_field(
    schema: GqlSchema,
    f: GqlField,
    role: str,
    label: str,
    ptr: str,
    extra: dict[str, Any],
    diags: list[Diagnostic],
    silent: list[tuple[str, str, str]],
    *,
    admin: bool,
) -> tuple[tuple[tuple[str, ...], ...] | None, str]:
    """A Shopify root field's scope alternatives (``None``: unknown) and where they came from: its own
    requiredAccess, else its return type's, else a shopify.dev page (:data:`SHOPIFY_DOCUMENTED`, Admin API only).
    Records hints in ``extra`` and a finding in ``diags`` or ``silent`` where it stays unknown."""
    text, where = (f.required_access, "field") if f.required_access else ("", "")
    staff = ""
    if text and _STAFF_ONLY.fullmatch(text.strip().rstrip(".")):
        # "The user must have markets API access.": the staff member's, as "Also:" is; the type speaks for the token.
        staff, text, where = text.strip(), "", ""
    if not text:
        text, owner = _return_access(schema, f.type_name)
        where = "return-type" if text else ""
        if text:
            extra["access_from_type"] = owner
    reading = read_required_access(text, role) if text else None
    if text:
        extra["required_access"] = text
    note = _join(staff, reading.note if reading else "")
    if note:
        extra["also"] = note
    if reading is not None and reading.alternatives is not None:
        if reading.family_sources:
            # A scope family ("`shipping` access scopes") was read into scopes: the pages naming them.
            extra["scope_sources"] = list(reading.family_sources)
        return reading.alternatives, where
    doc = shopify_documented(label, f.type_name, text, f.description) if admin else None
    if doc is not None:
        extra["scope_sources"] = [doc.source]
        extra["documented"] = doc.why
        if text and doc.text:
            # What the text says beyond the access it names ("and the shop must be on a Plus plan ...").
            rest = text.strip()[len(doc.text) :].strip()
            rest = rest[4:] if rest.startswith("and ") else rest
            if rest:
                extra["also"] = _join(rest, staff)
        return doc.alternatives, "docs"
    if reading is not None:
        diags.append(
            GRAPHQL_ACCESS_UNREAD(
                ptr,
                f"{label}: requiredAccess {text[:200]!r} does not read as access scopes "
                f"({reading.problem}); what it needs is unknown",
            )
        )
        return None, where
    silent.append((ptr, label, ""))
    return None, "undeclared"


def _reqs(scheme: str, alts: tuple[tuple[str, ...], ...]) -> Requirements:
    out: list[Requirement] = [(SchemeRequirement.of(scheme, a),) for a in alts]
    return tuple(out)


#: Shopify's own hosts (label boundary, end anchored): the developer site and its schema proxies, shops'
#: ``*.myshopify.com`` Admin API, ``shopify.com``'s Customer Account API.
_SHOPIFY_HOST = re.compile(r"(?:^|\.)(?:shopify\.dev|shopify\.com|myshopify\.com)\Z")


def _shopify_url(url: str) -> bool:
    """Whether a schema served from ``url`` is Shopify's (https, on one of Shopify's own hosts)."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
    except ValueError:
        return False
    return parts.scheme == "https" and bool(_SHOPIFY_HOST.search(host))


def build_graphql_index(schema: GqlSchema, spec: FetchedSpec, *, spec_version: str = "sdl") -> SpecIndex:
    diags: list[Diagnostic] = []
    url = spec.final_url or spec.url
    # Shopify's readings are for Shopify's schema, told by where it comes from, never by its content: a
    # foreign introspection result with a stray requiredAccess gets no Shopify scopes (issue 30, item 13).
    has_access = _shopify_url(url) and any(
        t.required_access or any(f.required_access for f in t.fields) for t in schema.types.values()
    )
    # The Customer Account API's requiredAccess names customer_ scopes; its endpoint and OAuth server are its own.
    customer = has_access and any(
        "`customer_read_" in x or "`customer_write_" in x
        for t in schema.types.values()
        for x in (t.required_access, *(f.required_access for f in t.fields))
    )
    shopify_scheme = SHOPIFY_CUSTOMER_SCHEME if customer else SHOPIFY_SCHEME
    catalog = None if has_access else catalog_for(url)
    if has_access:
        endpoint = SHOPIFY_CUSTOMER_ENDPOINT if customer else SHOPIFY_ENDPOINT
    else:
        endpoint = catalog.endpoint if catalog else "/graphql"
    entries: list[OperationEntry] = []
    #: (pointer, label, why its requirements are unknown: "" for "the schema states none")
    silent: list[tuple[str, str, str]] = []
    shopify_scopes: list[str] = []
    for role in ROOTS:
        type_name = schema.roots.get(role)
        if type_name is None:
            continue
        root = schema.types[type_name]
        label_root = _ROOT_LABEL[role]
        for f in root.fields:
            label = f"{label_root}.{f.name}"
            ptr = f"/types/{_escape(type_name)}/fields/{_escape(f.name)}"
            extra: dict[str, Any] = {"root_type": type_name, "field": f.name, "returns": f.type_name}
            reqs: Requirements | None = None
            source = "undeclared"
            if has_access:
                alts, source = _shopify_field(schema, f, role, label, ptr, extra, diags, silent, admin=not customer)
                if alts is not None:
                    reqs = _reqs(shopify_scheme, alts)
                    shopify_scopes.extend(s for a in alts for s in a)
            elif catalog is not None:
                hit = catalog.lookup(role, label, f.description)
                if hit is not None:
                    alts, page, why = hit
                    reqs = _reqs(catalog.scheme.name, alts)
                    source = f"catalog:{catalog.name}@{catalog.version}"
                    extra["source_page"] = page
                    if why:
                        extra["why"] = why
                else:
                    reason, page = catalog.undetermined.get(label) or (
                        f"the {catalog.name} catalog gives it no scope: no page of the provider's that it was compiled "
                        "from names one",
                        "",
                    )
                    extra["undetermined"] = reason
                    if page:
                        extra["source_page"] = page
                    silent.append((ptr, label, reason))
                admin = catalog.administrator.get(label)
                if admin is not None:
                    # The shape the derivation reads a provider's role requirement from (quirks' "admin").
                    extra["quirks"] = {"provider": catalog.name, "admin": [{"message": admin[0], "source": admin[1]}]}
            entries.append(
                OperationEntry(
                    key=label,
                    operation_id=label,
                    method="POST",
                    path=endpoint,
                    full_path=endpoint,
                    requirements=reqs,
                    security_source=source,
                    title=label,
                    description=f.description,
                    deprecated=f.deprecated,
                    extra=extra,
                    pointer=ptr,
                )
            )
    declared = any(e.requirements is not None for e in entries)
    if not declared:
        diags.append(
            SECURITY_UNDECLARED(
                "",
                "the GraphQL schema carries no access requirements (no requiredAccess) and no provider catalog "
                "covers its URL: what its root fields need is unknown, not nothing",
                data={"affects": "all"},
            )
        )
    else:
        for ptr, label, reason in silent:
            diags.append(
                SECURITY_UNDECLARED(
                    ptr,
                    f"{label}: {reason}: what it needs is unknown, not nothing"
                    if reason
                    else f"{label} states no required access, on the field or its return type: what it needs is "
                    "unknown, not nothing",
                )
            )
    if catalog is not None:
        for message, page in catalog.notes:
            diags.append(GRAPHQL_CATALOG_NOTE("", f"{catalog.name}: {message} ({page})", data={"source": page}))
    schemes: tuple[SecurityScheme, ...] = ()
    if has_access and shopify_scopes:
        schemes = (_shopify_scheme(shopify_scopes, customer=customer),)
    elif catalog is not None:
        schemes = (catalog.scheme,)
    title = (
        ("Shopify Customer Account API (GraphQL)" if customer else "Shopify Admin API (GraphQL)")
        if has_access
        else (f"{catalog.name} GraphQL API" if catalog else (schema.description[:200] or "GraphQL schema"))
    )
    return SpecIndex(
        kind=SpecKind.GRAPHQL,
        url=spec.url,
        sha256=spec.sha256,
        title=title,
        spec_version=spec_version,
        base_paths=(),
        operations=tuple(assign_keys(entries, diags)),
        schemes=schemes,
        security_declared=declared,
        diagnostics=tuple(diags),
        extra={
            "roots": dict(schema.roots),
            "endpoint": endpoint,
            "form": schema.form,
            **({"catalog": f"{catalog.name}@{catalog.version}"} if catalog else {}),
            **(
                {"provider_notes": [{"message": m, "source": s} for m, s in catalog.notes]}
                if catalog is not None and catalog.notes
                else {}
            ),
        },
    )
