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
