"""The diagnostics the derivation stage emits (``ramscope.diagnostics`` rules)."""

from __future__ import annotations

from ..diagnostics import Severity, rule

_S = "derive"
ACCESS_UNRESOLVED = rule(
    "access-unresolved",
    Severity.ERROR,
    "An access could not be resolved to an operation of its spec; its permissions are unknown.",
    stage=_S,
)
ACCESS_UNDETERMINED = rule(
    "access-undetermined",
    Severity.ERROR,
    "An access was resolved but its permissions cannot be determined (undeclared or unusable security).",
    stage=_S,
)
MCP_BASELINE_ONLY = rule(
    "mcp-baseline-only",
    Severity.WARNING,
    "An MCP tool declares no requirement of its own and no challenge names its scope: the server's baseline "
    "(scopes_supported) is a floor, not its need, so the access is incomplete.",
    stage=_S,
)
CATALOG_NO_ENTRY = rule(
    "catalog-no-entry",
    Severity.INFO,
    "The spec declares no security and the provider's permission catalog lists no permission for this operation.",
    stage=_S,
)
CATALOG_LEAST_DIFFERS = rule(
    "catalog-least-differs",
    Severity.INFO,
    "The provider marks other permissions least privileged than the narrowest by grant set; the marked one is used.",
    stage=_S,
)
UNIVERSE_UNREADABLE = rule(
    "universe-refresh-unreadable",
    Severity.WARNING,
    "A refreshed permission universe in the cache could not be read; the shipped snapshot was used.",
    stage=_S,
)
PIN_NOT_ALTERNATIVE = rule(
    "pin-not-an-alternative",
    Severity.WARNING,
    "A policy pin names scopes that are not one of the operation's declared alternatives.",
    stage=_S,
)
PIN_UNUSED = rule("policy-pin-unused", Severity.WARNING, "A policy pin matched no access or operation.", stage=_S)
A2A_CYCLE = rule(
    "a2a-cycle",
    Severity.WARNING,
    "Following remote agents' manifests leads back to an agent already on the path; it is not derived again.",
    stage=_S,
)
FOOTPRINT_TRUNCATED = rule(
    "footprint-truncated",
    Severity.INFO,
    "A remote agent's own manifest lies deeper than --max-depth and was not derived.",
    stage=_S,
)
FOOTPRINT_INCOMPLETE = rule(
    "footprint-incomplete",
    Severity.WARNING,
    "A remote agent's own manifest could not be derived completely: delegating to it exposes unknown permissions.",
    stage=_S,
)
CATALOG_OVERRIDES_SPEC = rule(
    "catalog-overrides-spec",
    Severity.WARNING,
    "The provider documents other requirements than its spec declares; its catalog's are used, not the spec's.",
    stage=_S,
)
NOT_EXPRESSIBLE = rule(
    "not-expressible-in-token",
    Severity.WARNING,
    "The provider's tokens cannot express least privilege for this access (what it reaches is set elsewhere).",
    stage=_S,
)
SCOPE_DEPRECATED = rule(
    "scope-deprecated",
    Severity.INFO,
    "The spec names a scope its provider has retired; the provider's replacement is used.",
    stage=_S,
)
REQUIRES_ADMIN = rule(
    "requires-admin",
    Severity.WARNING,
    "The provider says this operation needs an administrator, whatever the token's permissions.",
    stage=_S,
)
NARROWER_OPTION = rule(
    "narrower-option",
    Severity.INFO,
    "Permissions narrower than the pick reach only a slice of the data (files the app created, metadata only ...); "
    "they are offered with their condition, not picked.",
    stage=_S,
)
ADMIN_ONLY = rule(
    "administrator-permission",
    Severity.WARNING,
    "The pick is an administrator's permission, as no user's own alternative does the job as narrowly: "
    "only an organisation's administrator can grant it.",
    stage=_S,
)
ROLE_ONLY = rule(
    "role-bound-permission",
    Severity.WARNING,
    "The pick is a role-bound permission (a YouTube content owner's, a reseller's, a teacher's), as no ordinary "
    "account's alternative does the job as narrowly: only the holder of that role can use it.",
    stage=_S,
)
SLICE_ONLY = rule(
    "slice-permission-only",
    Severity.WARNING,
    "Every alternative of the operation reaches only a slice of the data; the pick does the job only inside it.",
    stage=_S,
)
PROVIDER_DATA_SUSPECT = rule(
    "provider-data-suspect",
    Severity.WARNING,
    "The provider's data makes a permission least that contradicts the method or the resource family; both readings "
    "are stated and the consistent one is picked.",
    stage=_S,
)
PROVIDER_SCOPE_REDESCRIBED = rule(
    "provider-scope-redescribed",
    Severity.WARNING,
    "A spec describes a provider's scope in other words than the provider: the provider's description is shown.",
    stage=_S,
)
PROVIDER_SCOPE_BORROWED = rule(
    "provider-scope-borrowed",
    Severity.WARNING,
    "A spec that is not the provider's asks for a scope of the provider's authorization server.",
    stage=_S,
)
