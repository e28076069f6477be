"""What the store hands to the rest of ramscope: bytes plus provenance (defined in
:mod:`ramscope.documents`, the model the store and the spec adapters share)."""

from __future__ import annotations

from ..documents import Exchange, FetchedSpec, Origin, media_type_of, rfc3339

__all__ = ["Exchange", "FetchedSpec", "Origin", "media_type_of", "rfc3339"]
