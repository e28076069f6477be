"""Where a governance finding points in the card: a JSON pointer and its line and column.

Reports name accesses and resources by id; the card loader keeps, for every parsed object,
the JSON pointer it was read from and the source position of every pointer. A
:class:`Locator` joins the two, so a finding about access ``x`` lands on ``x``'s line in the
card, where code scanning shows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..card import Card

__all__ = ["Locator", "Position"]


@dataclass(frozen=True, slots=True)
class Position:
    pointer: str
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True, slots=True)
class Locator:
    """Pointers of a card's accesses and resources; empty (pointer "" only) without a card."""

    accesses: Mapping[str, str] = field(default_factory=dict)
    resources: Mapping[str, str] = field(default_factory=dict)
    card: Card | None = None

    @classmethod
    def for_card(cls, card: Card) -> Locator:
        m = card.manifest
        return cls(
            accesses={a.id: a.loc.pointer for a in m.resource_accesses if a.id},
            resources={r.id: r.loc.pointer for r in m.resources if r.id},
            card=card,
        )

    def at(self, pointer: str) -> Position:
        pos = self.card.position(pointer) if self.card is not None else None
        return Position(pointer, pos[0], pos[1]) if pos else Position(pointer)

    def access(self, access_id: str | None, field_name: str = "") -> Position:
        ptr = self.accesses.get(access_id or "")
        if ptr is None:
            return self.at(self.card.manifest_pointer if self.card is not None else "")
        if field_name:
            sub = _field(self.card, "access", access_id or "", field_name)
            if sub is not None:
                return self.at(sub)
        return self.at(ptr)

    def resource(self, resource_id: str) -> Position:
        ptr = self.resources.get(resource_id)
        if ptr is None:
            return self.at(self.card.manifest_pointer if self.card is not None else "")
        return self.at(ptr)


def _field(card: Card | None, what: str, ident: str, name: str) -> str | None:
    if card is None:
        return None
    for a in card.manifest.resource_accesses:
        if a.id == ident:
            ptr = a.loc.of(name)
            # Only a field written in the card has a position; else the access itself is shown.
            return ptr if card.position(ptr) is not None else None
    return None
