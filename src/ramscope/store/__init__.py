"""Obtaining specs: the guarded HTTP client, the on-disk cache, cassettes, offline mode.

Network and disk access for specs live here and nowhere else. Everything is
reached through one :class:`SpecStore` per run::

    from ramscope import Settings
    from ramscope.store import SpecStore

    with SpecStore(Settings(cache_dir=Path("specs_cache"))) as store:
        spec = store.get("https://example.com/openapi.json")      # FetchedSpec
        many = store.prefetch([(url, None) for url in urls])        # url -> FetchedSpec | FetchError

Modules: ``guard`` (which URLs and addresses may be fetched), ``http`` (pinned
connections, deadlines, bounded bodies), ``cache`` (diskcache without pickle),
``cassette`` (VCR-layout record/replay), ``fetchers`` (the plug-in point for
protocol fetchers), ``mcp`` (an MCP server's tools/list and authorization,
captured), ``a2a`` (a remote agent card, with the well-known fallbacks),
``store`` (the facade), ``plan`` (which specs a card needs).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ..documents import SpecKind
from .a2a import fetch_a2a
from .cache import CACHE_ENTRY_CORRUPT, SpecCache
from .fetchers import FetchContext, Fetcher, FetcherResult, register_fetcher, registered_fetchers
from .guard import AddressPolicy, CheckedURL, address_refusal, check_url, parse_numeric_host
from .keys import body_digest, exchange_key
from .mcp import fetch_mcp
from .model import Exchange, FetchedSpec, Origin
from .plan import FetchOutcome, SpecRef, fetch_refs, kind_for_protocol, spec_refs
from .store import INSECURE_FETCH, MAX_REDIRECTS, STALE_SPEC, Clock, SpecStore

if TYPE_CHECKING:
    from .cassette import Cassette, Interaction, ReplayTransport
    from .http import Connector, GuardedTransport, Resolver, SystemResolver, connect_socket
    from .store import USER_AGENT

#: Imported on first use: the HTTP stack (httpx, httpcore, h2, ssl) and PyYAML cost more to
#: import than a warm run, answered from the cache, takes for everything else.
_LAZY = {
    "Cassette": ".cassette",
    "Interaction": ".cassette",
    "ReplayTransport": ".cassette",
    "Connector": ".http",
    "GuardedTransport": ".http",
    "Resolver": ".http",
    "SystemResolver": ".http",
    "connect_socket": ".http",
    "USER_AGENT": ".store",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module, __name__), name)


__all__ = [
    "CACHE_ENTRY_CORRUPT",
    "INSECURE_FETCH",
    "MAX_REDIRECTS",
    "STALE_SPEC",
    "USER_AGENT",
    "AddressPolicy",
    "Cassette",
    "CheckedURL",
    "Clock",
    "Connector",
    "Exchange",
    "FetchContext",
    "FetchOutcome",
    "FetchedSpec",
    "Fetcher",
    "FetcherResult",
    "GuardedTransport",
    "Interaction",
    "Origin",
    "ReplayTransport",
    "Resolver",
    "SpecCache",
    "SpecRef",
    "SpecStore",
    "SystemResolver",
    "address_refusal",
    "body_digest",
    "check_url",
    "connect_socket",
    "exchange_key",
    "fetch_a2a",
    "fetch_mcp",
    "fetch_refs",
    "kind_for_protocol",
    "parse_numeric_host",
    "register_fetcher",
    "registered_fetchers",
    "spec_refs",
]

# The protocol fetchers plug in through the registry like any other: every store created
# after `import ramscope.store` has them.
register_fetcher(SpecKind.MCP, fetch_mcp)
register_fetcher(SpecKind.A2A, fetch_a2a)
