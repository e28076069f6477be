"""One card's derivation, stage by stage: resolution (:mod:`.resolution`), the grant space and
choices (:mod:`.choice`), A2A footprints (:mod:`.footprint`), tiers (:mod:`.tiers`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..card import Card
from ..diagnostics import Diagnostic, has_errors
from ..governance.skills import find_skill_extension
from ..naming import display_name_diagnostics
from ..outputs.report import (
    Report,
    SkillRecord,
    TierRecord,
)
from ..specs.model import SpecKind
from ..validate import validate
from .choice import Choosing
from .footprint import Footprints
from .resolution import MAX_SUGGESTED_ACCESSES, Resolution
from .rules import (
    PIN_UNUSED,
)
from .state import Outcome, Pending
from .tiers import Tiers

if TYPE_CHECKING:
    from .engine import Engine
    from .privilege import Atom


class CardRun(Resolution, Choosing, Footprints, Tiers):
    """The derivation of one card (and, nested, of the agents it delegates to)."""

    def __init__(self, engine: Engine, card: Card, *, depth: int = 0, path: tuple[str, ...] = ()) -> None:
        self.engine = engine
        self.card = card
        self.policy = engine.policy
        self.diags: list[tuple[Diagnostic, str | None]] = []
        self.used_pins: set[int] = set()
        #: How many agents deep this card is (0: the card the user gave).
        self.depth = depth
        #: The agents on the way here, by card URL and content hash, for cycle detection.
        self.path = (*path, card.source, f"sha256:{card.sha256}")
        #: Unresolved accesses still offered "did you mean" suggestions (each costs a similarity search).
        self.suggestions_left = MAX_SUGGESTED_ACCESSES
        #: Remote agents' manifests derived for this card, by (card URL, sha256), with the first access
        #: that showed them: each is derived and embedded once, later accesses refer to it.
        self.footprints: dict[tuple[str, str], tuple[str, Report]] = {}
        #: The specs this card's accesses loaded. Not the engine's (every card's so far): a report
        #: must not depend on which cards were derived before it.
        self.used_specs: set[tuple[str, SpecKind | None]] = set()
        self.scope_info: dict[Atom, dict[str, Any]] = {}
        self.reach_caches = {}

    def run(self) -> Report:
        card_diags = validate(self.card)
        self.diags.extend((d, None) for d in card_diags)
        m = self.card.manifest
        self.engine.prefetch_card(self.card)
        first = [self._access(i, a) for i, a in enumerate(m.resource_accesses)]
        pending = [p for p in first if isinstance(p, Pending)]
        self.space = self._space(pending)
        outcomes = [self._resolved(p) if isinstance(p, Pending) else p for p in first]
        for i, pin in enumerate(self.policy.pins):
            if i not in self.used_pins:
                what = f"access {pin.access!r}" if pin.access else f"operation {pin.operation!r}"
                self.diags.append((PIN_UNUSED("", f"policy pin for {what} matched nothing in this card"), None))
        valid = not has_errors(card_diags)
        tiers = _mark_valid(self._tiers(outcomes), valid)
        skills = self._skills(outcomes, valid)
        specs = self._spec_records()
        names = ((r.id, r.display_name, r.loc.of("display_name")) for r in m.resources)
        self.diags.extend((d, None) for d in display_name_diagnostics(names, [s.to_dict() for s in specs]))
        return Report(
            card_name=self.card.name,
            card_source=self.card.source,
            card_sha256=self.card.sha256,
            card_valid=valid,
            specs=specs,
            accesses=[o.record for o in outcomes],
            tiers=tiers,
            diagnostics=list(dict.fromkeys(self.diags)),
            policy=self.policy.to_dict()
            if (self.policy.pins or self.policy.exclude or self.policy.prefer or self.policy.catalog_for)
            else None,
            providers=self._providers(pending),
            skills=skills,
            card=self.card,
        )

    def _skills(self, outcomes: Sequence[Outcome], valid: bool) -> dict[str, SkillRecord] | None:
        """Each mapped skill's own cumulative tiers, solved over that skill's accesses alone
        (``ramscope.governance.skills``); ``None`` for a card without the per-skill extension."""
        sets, _ = find_skill_extension(self.card)
        if sets is None:
            return None
        known = {o.access.id for o in outcomes}
        out: dict[str, SkillRecord] = {}
        for s in sets.skills:
            if s.skill_id in out:
                continue  # mapped twice: a validation error; the first mapping is used
            wanted = set(s.resource_accesses)
            mine = [o for o in outcomes if o.access.id in wanted]
            out[s.skill_id] = SkillRecord(
                accesses=[o.access.id for o in mine],
                tiers=_mark_valid(self._tiers(mine), valid),
                unknown_accesses=[a for a in s.resource_accesses if a not in known],
            )
        return out

    def _nested(self, card: Card, depth: int) -> Report:
        return CardRun(self.engine, card, depth=depth, path=self.path).run()


def _mark_valid(tiers: dict[str, TierRecord], valid: bool) -> dict[str, TierRecord]:
    """An invalid card's tiers say so (they are not complete, whatever their accesses)."""
    if valid:
        return tiers
    return {
        name: replace(
            t,
            card_valid=False,
            identities={i: replace(it, card_valid=False) for i, it in t.identities.items()},
        )
        for name, t in tiers.items()
    }
