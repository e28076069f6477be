"""ramscope: derive least-privilege permission sets from an A2A agent card's
Resource Access Manifest (RAM).

The public API::

    card = ramscope.load_card("examples/travel-agent.card.json")
    for d in ramscope.validate(card):
        print(d.severity.value, d.code, d.path, d.message)

    with ramscope.SpecStore(ramscope.Settings()) as store:   # guarded fetching, cache, cassettes
        spec = store.get("https://example.com/openapi.json")  # FetchedSpec, or a FetchError
        ramscope.refresh_google(store)                        # Google's permission universe, refreshed

    ramscope.canonical_server("https://oauth2.googleapis.com/token")  # "https://accounts.google.com"
"""

from typing import TYPE_CHECKING

from ._lazy import lazy_attributes
from ._version import __version__

# The public names are imported when first used (PEP 562), not with the package: ``ramscope
# --version`` and a warm derive import only what they use (issue 17: start-up was 0.26 s, 12x an
# empty interpreter). ``diagnostics.all_rules()`` imports every stage that declares rules.
_LAZY: dict[str, str] = {
    "AccessNecessity": ".manifest",
    "ApiOperationSpec": ".manifest",
    "BlockedURLError": ".errors",
    "Card": ".card",
    "CardShape": ".card",
    "CassetteMissError": ".errors",
    "Catalog": ".providers",
    "CatalogEntry": ".providers",
    "Diagnostic": ".diagnostics",
    "Engine": ".derive",
    "FetchError": ".errors",
    "FetchTimeoutError": ".errors",
    "FetchedSpec": ".store",
    "IdentityType": ".manifest",
    "InputError": ".errors",
    "InteractionProtocol": ".manifest",
    "LimitError": ".errors",
    "Manifest": ".manifest",
    "OfflineMissError": ".errors",
    "Operation": ".manifest",
    "Origin": ".store",
    "OutputError": ".errors",
    "Permission": ".providers",
    "Policy": ".derive.policy",
    "PolicyError": ".errors",
    "RamscopeError": ".errors",
    "Report": ".outputs.report",
    "Resource": ".manifest",
    "ResourceAccess": ".manifest",
    "ResourceAccessManifest": ".manifest",
    "ResourceOwner": ".manifest",
    "ResourceSpec": ".manifest",
    "Rule": ".diagnostics",
    "Settings": ".config",
    "Severity": ".diagnostics",
    "SpecError": ".errors",
    "SpecStore": ".store",
    "SpecTooLargeError": ".errors",
    "StoredReport": ".outputs.report",
    "Universe": ".providers",
    "all_rules": ".diagnostics",
    "canonical_server": ".providers",
    "derive": ".derive",
    "load_card": ".card",
    "load_policy": ".derive.policy",
    "parse_manifest": ".manifest",
    "refresh_google": ".providers.refresh",
    "validate": ".validate",
}

if TYPE_CHECKING:
    from .card import Card, CardShape, load_card
    from .config import Settings
    from .derive import Engine, derive
    from .derive.policy import Policy, load_policy
    from .diagnostics import Diagnostic, Rule, Severity, all_rules
    from .errors import (
        BlockedURLError,
        CassetteMissError,
        FetchError,
        FetchTimeoutError,
        InputError,
        LimitError,
        OfflineMissError,
        OutputError,
        PolicyError,
        RamscopeError,
        SpecError,
        SpecTooLargeError,
    )
    from .manifest import (
        AccessNecessity,
        ApiOperationSpec,
        IdentityType,
        InteractionProtocol,
        Manifest,
        Operation,
        Resource,
        ResourceAccess,
        ResourceAccessManifest,
        ResourceOwner,
        ResourceSpec,
        parse_manifest,
    )
    from .outputs.report import Report, StoredReport
    from .providers import Catalog, CatalogEntry, Permission, Universe, canonical_server
    from .providers.refresh import refresh_google
    from .store import FetchedSpec, Origin, SpecStore
    from .validate import validate


__getattr__ = lazy_attributes(__name__, _LAZY)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "AccessNecessity",
    "ApiOperationSpec",
    "BlockedURLError",
    "Card",
    "CardShape",
    "CassetteMissError",
    "Catalog",
    "CatalogEntry",
    "Diagnostic",
    "Engine",
    "FetchError",
    "FetchTimeoutError",
    "FetchedSpec",
    "IdentityType",
    "InputError",
    "InteractionProtocol",
    "LimitError",
    "Manifest",
    "OfflineMissError",
    "Operation",
    "Origin",
    "OutputError",
    "Permission",
    "Policy",
    "PolicyError",
    "RamscopeError",
    "Report",
    "Resource",
    "ResourceAccess",
    "ResourceAccessManifest",
    "ResourceOwner",
    "ResourceSpec",
    "Rule",
    "Settings",
    "Severity",
    "SpecError",
    "SpecStore",
    "SpecTooLargeError",
    "StoredReport",
    "Universe",
    "__version__",
    "all_rules",
    "canonical_server",
    "derive",
    "load_card",
    "load_policy",
    "parse_manifest",
    "refresh_google",
    "validate",
]
