"""What one card's derivation carries between its stages.

:class:`RunState` declares the state and the cross-stage methods that the stage mixins
(:mod:`.resolution`, :mod:`.choice`, :mod:`.footprint`, :mod:`.tiers`) share; :class:`.run.CardRun`
puts them together."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..card import Card
from ..diagnostics import Diagnostic, has_errors
from ..manifest import (
    Operation,
    Resource,
    ResourceAccess,
)
from ..outputs.report import (
    AccessRecord,
    Report,
)
from ..providers.catalog import Catalog, CatalogEntry
from ..providers.reach import Reach
from ..specs.model import SpecIndex, SpecKind
from ..store import spec_refs
from ..validate import check_spec_url
from .policy import Policy
from .privilege import (
    Alternative,
    Atom,
    GrantSpace,
    SpecGrants,
)
from .resolve import Target

if TYPE_CHECKING:
    from .engine import Engine


@dataclass(slots=True)
class Outcome:
    """What the per-access stage decided, kept for the tier stage."""

    access: ResourceAccess
    key: str
    record: AccessRecord
    grants: SpecGrants | None = None
    #: The alternatives a tier may satisfy the access with: those its own choice judged able to do
    #: the job (``derive.choice._tier_alternatives``), ``own`` among them; never one it ruled out.
    candidates: tuple[Alternative, ...] = ()
    #: The access's own least-privilege choice, when it has one.
    own: Alternative | None = None


@dataclass(slots=True)
class Pending:
    """A resolved access waiting for the card's grant space before its choice is made."""

    access: ResourceAccess
    key: str
    base: dict[str, Any]
    resource: Resource
    operation: Operation
    found: Target
    #: Where its requirements come from: "spec", or the catalog that supplied them.
    catalog: Catalog | None = None
    catalog_entry: CatalogEntry | None = None
    #: The catalog's entry before the policy's choices (Graph accounts, GitHub token family).
    catalog_full: CatalogEntry | None = None


class RunState:
    """The state of one card's run, and the methods each stage offers the others."""

    engine: Engine
    card: Card
    policy: Policy
    diags: list[tuple[Diagnostic, str | None]]
    used_pins: set[int]
    depth: int
    path: tuple[str, ...]
    suggestions_left: int
    footprints: dict[tuple[str, str], tuple[str, Report]]
    used_specs: set[tuple[str, SpecKind | None]]
    space: GrantSpace
    #: grant -> what a catalog says of it beyond the spec: {"name": short name, "admin_consent": bool}
    scope_info: dict[Atom, dict[str, Any]]
    #: (id of the spec index, id of the catalog) -> (scheme, scope) -> the scope's reach class.
    reach_caches: dict[tuple[int, int], dict[tuple[str, str], Reach]]

    def _footprint(self, a: ResourceAccess, index: SpecIndex) -> dict[str, Any] | None:
        raise NotImplementedError

    def _nested(self, card: Card, depth: int) -> Report:
        raise NotImplementedError


def spec_urls(card: Card) -> list[tuple[str, SpecKind | None]]:
    """The (URL, kind) pairs worth fetching: the store's plan, minus URLs the card check refuses."""
    return [(r.url, r.kind) for r in spec_refs([card]) if not has_errors(check_spec_url(r.url, ""))]
