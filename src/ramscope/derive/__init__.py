"""The pipeline: card → specs → targets → requirements → least-privilege sets → report.

The stages, one module each:

* :mod:`.engine`: what cards share in a run (:class:`Engine`: the spec store, built indexes,
  grant machinery, universes, catalogs, stored-report reuse), and :func:`derive`;
* :mod:`.run`: one card, stage by stage —
  :mod:`.resolution` (each access to its operation, or to a provider catalog's requirements),
  :mod:`.choice` (the card's grant space; each access's least-privilege choice),
  :mod:`.footprint` (what delegating to a remote agent exposes),
  :mod:`.tiers` (one set per cumulative tier and identity);
* :mod:`.records` and :mod:`.rules`: report JSON helpers and the stage's diagnostics.

Fail closed: every access ends either with its permissions derived, or marked
incomplete with a reason code and message (``spec-unavailable``,
``operation-not-found``, ``security-undeclared``, ``no-compatible-alternative``
...). Incomplete accesses have ``scopes``/``requirements`` of ``None`` and make
every tier that contains them incomplete.
"""

from __future__ import annotations

from .._lazy import callable_module
from .engine import Engine, derive

__all__ = ["Engine", "derive"]

# `ramscope.derive(card)` is the public API; once imported, this package is what the name is bound to.
callable_module(__name__, derive)
