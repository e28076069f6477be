"""Which specs a set of cards needs, and fetching them all (``ramscope fetch``).

A card names spec URLs in two places: each resource's ``spec.spec_url`` and
each operation's ``api_operation_spec.spec_url``. The resource's interaction
protocol says how to obtain it: REST specs are documents (the adapter tells
OpenAPI from Discovery by content), MCP and A2A need their protocol's fetcher.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..card import Card
from ..documents import SpecKind
from ..errors import FetchError
from ..manifest import InteractionProtocol
from .model import FetchedSpec
from .store import SpecStore

__all__ = ["FetchOutcome", "SpecRef", "fetch_refs", "kind_for_protocol", "spec_refs"]

_KINDS: dict[InteractionProtocol, SpecKind | None] = {
    InteractionProtocol.REST: None,
    InteractionProtocol.MCP: SpecKind.MCP,
    InteractionProtocol.A2A: SpecKind.A2A,
}


def kind_for_protocol(protocol: InteractionProtocol) -> SpecKind | None:
    """The kind hint for a resource's protocol (``None``: a document, kind decided by content)."""
    return _KINDS.get(protocol)


@dataclass(frozen=True, slots=True)
class SpecRef:
    """One spec URL and everything in the cards that needs it."""

    url: str
    kind: SpecKind | None
    protocol: InteractionProtocol
    #: ``source#resource-id`` of each resource (or operation) that names this URL.
    users: tuple[str, ...]

    @property
    def protocol_name(self) -> str:
        p = self.protocol
        return p.name.lower() if p is not InteractionProtocol.INTERACTION_PROTOCOL_UNSPECIFIED else "unspecified"


def spec_refs(cards: Iterable[Card]) -> list[SpecRef]:
    """Every distinct (URL, kind) the cards need, in first-seen order."""
    found: dict[tuple[str, SpecKind | None], tuple[InteractionProtocol, list[str]]] = {}

    def add(url: str, protocol: InteractionProtocol, user: str) -> None:
        url = url.strip()
        if not url:
            return
        slot = found.setdefault((url, kind_for_protocol(protocol)), (protocol, []))
        if user not in slot[1]:
            slot[1].append(user)

    for card in cards:
        m = card.manifest
        for r in m.resources:
            add(r.spec_url, r.interaction_protocol, f"{card.source}#{r.id}")
        for op in m.operations:
            spec = op.api_operation_spec
            if spec is None or not spec.spec_url:
                continue
            res = m.resource(op.resource)
            protocol = res.interaction_protocol if res else InteractionProtocol.INTERACTION_PROTOCOL_UNSPECIFIED
            add(spec.spec_url, protocol, f"{card.source}#{op.id}")
    return [SpecRef(url, kind, proto, tuple(users)) for (url, kind), (proto, users) in found.items()]


@dataclass(frozen=True, slots=True)
class FetchOutcome:
    ref: SpecRef
    spec: FetchedSpec | None = None
    error: FetchError | None = None

    @property
    def ok(self) -> bool:
        return self.spec is not None


def fetch_refs(store: SpecStore, refs: Iterable[SpecRef]) -> list[FetchOutcome]:
    """Fetch every ref concurrently through the store; failures are outcomes, not exceptions."""
    refs = list(refs)
    store.prefetch((r.url, r.kind) for r in refs)
    out: list[FetchOutcome] = []
    for r in refs:
        try:
            out.append(FetchOutcome(r, spec=store.get(r.url, kind_hint=r.kind)))  # answered by the run's memo
        except FetchError as exc:
            out.append(FetchOutcome(r, error=exc))
    return out
