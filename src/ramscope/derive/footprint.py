"""What delegating to a remote A2A agent exposes: its own manifest, derived in turn (bounded by
depth, cycles said once, each agent embedded once per card)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..card import load_card
from ..errors import RamscopeError
from ..manifest import (
    ResourceAccess,
)
from ..outputs.report import (
    Report,
)
from ..specs.model import SpecIndex
from .rules import (
    A2A_CYCLE,
    FOOTPRINT_INCOMPLETE,
    FOOTPRINT_TRUNCATED,
)
from .state import RunState


class Footprints(RunState):
    """A2A footprints."""

    def _footprint(self, a: ResourceAccess, index: SpecIndex) -> dict[str, Any] | None:
        """What delegating to a remote agent exposes: its own manifest, derived in turn."""
        extra = index.extra
        doc = extra.get("card")
        if not extra.get("has_manifest") or not isinstance(doc, Mapping):
            return None
        url = str(extra.get("card_url") or index.url)
        if url in self.path or f"sha256:{index.sha256}" in self.path:
            chain = [p for p in self.path if not p.startswith("sha256:")] + [url]
            self.diags.append(
                (A2A_CYCLE(a.loc.pointer, f"access {a.id!r}: agents delegate in a cycle: {' -> '.join(chain)}"), None)
            )
            return {"card_url": url, "cycle": chain}
        depth = self.depth + 1
        if depth > self.engine.settings.max_depth:
            self.diags.append(
                (
                    FOOTPRINT_TRUNCATED(
                        a.loc.pointer,
                        f"access {a.id!r}: {url} carries its own manifest, deeper than --max-depth "
                        f"{self.engine.settings.max_depth}; not derived",
                    ),
                    None,
                )
            )
            return {"card_url": url, "depth": depth, "truncated": True}
        seen = self.footprints.get((url, index.sha256))
        if seen is not None:
            # Derived already for an earlier access of this card: the same agent at the same depth on
            # the same path gives the same report. Embedding it again for every access multiplied
            # the work and the report by (accesses per card) ** depth.
            first, nested = seen
            self._check_footprint(a, url, nested)
            return {
                "card_url": url,
                "name": nested.card_name,
                "depth": depth,
                "complete": nested.complete and nested.card_valid,
                "same_as": first,
            }
        try:
            nested_card = load_card(doc, name=url)
        except RamscopeError as exc:
            self._check_footprint(a, url, None, f"could not be read: {exc}")
            return {"card_url": url, "depth": depth, "complete": False, "error": str(exc)}
        nested = self._nested(nested_card, depth)
        self.footprints[(url, index.sha256)] = (a.id, nested)
        self._check_footprint(a, url, nested)
        body = nested.to_dict()
        body.pop("generator", None)
        return {
            "card_url": url,
            "name": nested.card_name,
            "depth": depth,
            "complete": nested.complete and nested.card_valid,
            "report": body,
        }

    def _check_footprint(
        self, a: ResourceAccess, url: str, nested: Report | None, why: str = "could not be derived completely"
    ) -> None:
        """A footprint that is not whole is a warning on the access: what delegating exposes is unknown."""
        if nested is None or not nested.complete or not nested.card_valid:
            self.diags.append(
                (FOOTPRINT_INCOMPLETE(a.loc.pointer, f"access {a.id!r}: the manifest of {url} {why}"), None)
            )
