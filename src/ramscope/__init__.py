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

# Imported for their diagnostic rules, so all_rules() and SARIF output list every rule.
from . import resolve as _resolve  # noqa: F401
from . import specs as _specs  # noqa: F401
from ._version import __version__
from .card import Card, CardShape, load_card
from .config import Settings
from .derive import Engine, derive
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
from .policy import Policy, load_policy
from .providers import Catalog, CatalogEntry, Permission, Universe, canonical_server
from .refresh import refresh_google
from .specs import strict as _strict  # noqa: F401
from .store import FetchedSpec, Origin, SpecStore
from .validate import validate

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
