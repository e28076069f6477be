"""The extension point for protocol-specific fetchers (MCP conversations, A2A fallbacks).

A plain REST spec is one GET. Some spec kinds are not: an MCP server has no
document to GET, its "spec" is a JSON-RPC conversation (initialize,
tools/list, maybe a 401 challenge and protected-resource metadata); an A2A
card may need a well-known-path fallback. Those live with their adapters in
``ramscope.specs``; they plug in here::

    from ramscope.store import FetchContext, FetcherResult, register_fetcher

    def fetch_mcp(ctx: FetchContext, url: str) -> FetcherResult:
        init = ctx.exchange("POST", url, json_body={...}, headers={...}, until=...)
        ...
        return FetcherResult(body=capture, media_type="application/json", final_url=url)

    register_fetcher(SpecKind.MCP, fetch_mcp)

A fetcher sees the store only through :class:`FetchContext`: the guarded,
limited, cached, recorded :meth:`~ramscope.store.SpecStore.exchange`, and the
run's settings. The store turns its :class:`FetcherResult` into a
:class:`~ramscope.store.model.FetchedSpec` (sha256, fetched_at, origin from the
exchanges it made) and caches it under ``spec:<kind>:<url>``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..config import Settings
from ..documents import SpecKind
from .model import Exchange, Origin

if TYPE_CHECKING:
    from .store import SpecStore

__all__ = ["FetchContext", "Fetcher", "FetcherResult", "register_fetcher", "registered_fetchers"]


@dataclass(frozen=True, slots=True)
class FetcherResult:
    """What a fetcher obtained: the bytes that stand for the spec, and where from."""

    body: bytes = field(repr=False)
    media_type: str
    final_url: str
    status: int = 200
    #: Response headers worth keeping (lower-case names); ``Cache-Control`` here sets freshness.
    headers: Mapping[str, str] = field(default_factory=dict)
    #: Kind-specific provenance (MCP protocol version, the well-known path used ...).
    provenance: Mapping[str, Any] = field(default_factory=dict)


class FetchContext:
    """A fetcher's view of the store for one spec."""

    def __init__(self, store: SpecStore, url: str, kind: SpecKind) -> None:
        self._store = store
        self.url = url
        self.kind = kind
        #: Every exchange made so far, in order (the origin of the result is derived from them).
        self.exchanges: list[Exchange] = []

    @property
    def settings(self) -> Settings:
        return self._store.settings

    def exchange(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        json_body: object = None,
        cache: bool = True,
        until: Callable[[bytes], bool] | None = None,
    ) -> Exchange:
        """:meth:`SpecStore.exchange <ramscope.store.SpecStore.exchange>`, remembered for provenance."""
        ex = self._store.exchange(method, url, headers=headers, json_body=json_body, cache=cache, until=until)
        self.exchanges.append(ex)
        return ex

    def origin(self) -> Origin:
        """Network if any exchange went to the network, else cassette if any was replayed, else cache."""
        origins = {ex.origin for ex in self.exchanges}
        for o in (Origin.NETWORK, Origin.CASSETTE):
            if o in origins:
                return o
        return Origin.CACHE


class Fetcher(Protocol):
    """Obtains one spec of a kind; raises :class:`~ramscope.errors.FetchError` subclasses."""

    def __call__(self, ctx: FetchContext, url: str, /) -> FetcherResult: ...


_REGISTRY: dict[SpecKind, Fetcher] = {}
_REGISTRY_LOCK = threading.Lock()


def register_fetcher(kind: SpecKind, fetcher: Fetcher, *, replace: bool = False) -> None:
    """Make ``fetcher`` the way stores created from now on obtain specs of ``kind``."""
    with _REGISTRY_LOCK:
        if kind in _REGISTRY and _REGISTRY[kind] is not fetcher and not replace:
            raise ValueError(f"a fetcher for {kind.value} specs is already registered")
        _REGISTRY[kind] = fetcher


def registered_fetchers() -> dict[SpecKind, Fetcher]:
    with _REGISTRY_LOCK:
        return dict(_REGISTRY)
