"""What the store hands to the rest of ramscope: bytes plus provenance."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["FetchedSpec", "Origin"]


class Origin(enum.StrEnum):
    NETWORK = "network"
    CACHE = "cache"
    CASSETTE = "cassette"


@dataclass(frozen=True, slots=True)
class FetchedSpec:
    """A spec document as obtained, with where and when it came from.

    For REST specs and A2A cards ``body`` is the document as served. For an MCP
    server it is ramscope's own JSON *capture* of the conversation (the tools
    listed, the authorization challenge and metadata), since an MCP server has
    no document to GET.
    """

    #: The URL that was asked for (the card's ``spec_url``).
    url: str
    #: Where the body finally came from, after redirects or well-known fallbacks.
    final_url: str
    body: bytes = field(repr=False)
    media_type: str
    sha256: str
    fetched_at: datetime
    origin: Origin
    status: int = 200
    etag: str | None = None
    last_modified: str | None = None
    #: Response headers that matter downstream (lower-case names).
    headers: Mapping[str, str] = field(default_factory=dict, compare=False)
    #: Free-form provenance (cassette file, ``synthesized`` flag, MCP protocol version ...).
    provenance: Mapping[str, Any] = field(default_factory=dict, compare=False)
