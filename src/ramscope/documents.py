"""The documents ramscope reads, as both the store and the spec adapters know them.

The store (``ramscope.store``) fetches documents and hands over bytes plus provenance
(:class:`FetchedSpec`); the adapters (``ramscope.specs``) read them. What both need lives here,
so neither imports the other: the kinds of spec (:class:`SpecKind`), a fetched document and how it
was obtained, the MCP capture format the store writes and the MCP adapter reads, and how an A2A
agent card is recognised.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .diagnostics import Diagnostic

__all__ = [
    "CAPTURE_FORMAT",
    "Exchange",
    "FetchedSpec",
    "Origin",
    "SpecKind",
    "camel_to_snake",
    "looks_like_card",
    "media_type_of",
    "rfc3339",
]


class SpecKind(enum.StrEnum):
    OPENAPI = "openapi"
    DISCOVERY = "google-discovery"
    MCP = "mcp"
    A2A = "a2a"
    GRAPHQL = "graphql"
    STONE = "stone"


#: The format of ramscope's own JSON capture of an MCP server's answers (the "document" of an
#: MCP resource): the store writes it, the MCP adapter reads it.
CAPTURE_FORMAT = "ramscope-mcp-capture/1"


def camel_to_snake(name: str) -> str:
    """``supportedInterfaces`` -> ``supported_interfaces``: ProtoJSON names to proto names."""
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def looks_like_card(doc: Any) -> bool:
    """An object with a ``name`` and one of ``supportedInterfaces`` (1.0), ``url`` (0.3) or ``skills``."""
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("name"), str)
        and any(k in doc or camel_to_snake(k) in doc for k in ("supportedInterfaces", "url", "skills"))
    )


class Origin(enum.StrEnum):
    NETWORK = "network"
    CACHE = "cache"
    CASSETTE = "cassette"


def rfc3339(moment: datetime) -> str:
    """``2026-11-29T21:57:00Z``: UTC, whole seconds, the report's timestamp form (naive means UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def media_type_of(content_type: str | None) -> str:
    if not content_type:
        return "application/octet-stream"
    return content_type.split(";", 1)[0].strip().lower() or "application/octet-stream"


@dataclass(frozen=True, slots=True, init=False)
class FetchedSpec:
    """A spec document as obtained, with where and when it came from.

    For REST specs and A2A cards ``body`` is the document as served. For an MCP
    server it is ramscope's own JSON *capture* of the conversation (the tools
    listed, the authorization challenge and metadata), since an MCP server has
    no document to GET.

    A spec answered from the cache may come without its body, with a
    ``body_loader`` instead: the body is then read (and verified) on first use of
    :attr:`body`, so a run that finds the spec's index already cached by
    ``sha256`` never reads it. ``size`` is known either way.
    """

    #: The URL that was asked for (the card's ``spec_url``).
    url: str
    #: Where the body finally came from, after redirects or well-known fallbacks.
    final_url: str
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
    #: Findings about how the spec was obtained (plain http, a discarded corrupt cache
    #: entry, a stale entry used offline). Their ``path`` is "": the caller knows which
    #: resource needed the spec and re-points them with ``dataclasses.replace``.
    diagnostics: tuple[Diagnostic, ...] = field(default=(), compare=False)
    #: The body's length in bytes.
    size: int = 0
    _body: bytes | None = field(default=None, repr=False, compare=False)
    _body_loader: Callable[[], bytes] | None = field(default=None, repr=False, compare=False)

    def __init__(
        self,
        url: str,
        final_url: str,
        body: bytes | None = None,
        media_type: str = "application/octet-stream",
        sha256: str = "",
        fetched_at: datetime | None = None,
        origin: Origin | None = None,
        status: int = 200,
        etag: str | None = None,
        last_modified: str | None = None,
        headers: Mapping[str, str] | None = None,
        provenance: Mapping[str, Any] | None = None,
        diagnostics: tuple[Diagnostic, ...] = (),
        *,
        body_loader: Callable[[], bytes] | None = None,
        size: int | None = None,
        _body: bytes | None = None,
        _body_loader: Callable[[], bytes] | None = None,
    ) -> None:
        # ``_body``/``_body_loader``: what ``dataclasses.replace`` passes back.
        body = body if body is not None else _body
        body_loader = body_loader if body_loader is not None else _body_loader
        # Both: the body is in memory now, and the loader reads it back after :meth:`release_body`.
        if body is None and body_loader is None:
            raise ValueError("a FetchedSpec needs either its body or a body_loader")
        if body is None and size is None:
            raise ValueError("a FetchedSpec without its body needs the body's size")
        set_ = object.__setattr__
        set_(self, "url", url)
        set_(self, "final_url", final_url)
        set_(self, "media_type", media_type)
        set_(self, "sha256", sha256)
        if not sha256 or fetched_at is None or origin is None:
            raise ValueError("a FetchedSpec needs sha256, fetched_at and origin")
        set_(self, "fetched_at", fetched_at)
        set_(self, "origin", origin)
        set_(self, "status", status)
        set_(self, "etag", etag)
        set_(self, "last_modified", last_modified)
        set_(self, "headers", {} if headers is None else headers)
        set_(self, "provenance", {} if provenance is None else provenance)
        set_(self, "diagnostics", diagnostics)
        set_(self, "size", len(body) if body is not None else size)
        set_(self, "_body", body)
        set_(self, "_body_loader", body_loader)

    @property
    def body(self) -> bytes:
        """The document's bytes (read from the cache on first use when they came without them)."""
        body = self._body
        if body is None:
            assert self._body_loader is not None
            body = self._body_loader()
            object.__setattr__(self, "_body", body)
        return body

    def release_body(self) -> bool:
        """Drop the body from memory if it can be read back (from the cache); ``True`` if it was.

        Specs run to tens of MiB and a card names many: once a spec's index is built (or while it
        waits, prefetched, to be indexed) its bytes need not stay in memory (issue 14).
        """
        if self._body_loader is None:
            return False
        object.__setattr__(self, "_body", None)
        return True

    @property
    def body_loaded(self) -> bool:
        """Whether :attr:`body` is in memory already (reading it costs nothing)."""
        return self._body is not None

    def to_record(self) -> dict[str, Any]:
        """The store's part of a report ``specs`` entry (docs/report.md); the caller adds
        ``resource`` and ``kind``."""
        return {
            "url": self.url,
            "final_url": self.final_url,
            "sha256": self.sha256,
            "origin": self.origin.value,
            "fetched_at": rfc3339(self.fetched_at),
            "media_type": self.media_type,
            "bytes": self.size,
            "synthesized": bool(self.provenance.get("synthesized", False)),
        }


@dataclass(frozen=True, slots=True)
class Exchange:
    """One guarded HTTP exchange as the store performed, replayed or remembered it.

    Unlike :meth:`SpecStore.get <ramscope.store.SpecStore.get>`, an exchange with
    a 4xx/5xx status is a result, not an error: protocol fetchers need the 401
    and its ``WWW-Authenticate`` challenge.
    """

    method: str
    #: The URL asked for (normalised by httpx, no fragment).
    url: str
    final_url: str
    status: int
    #: Response headers in order, names lower-cased, repeats kept (``WWW-Authenticate``).
    header_items: tuple[tuple[str, str], ...]
    body: bytes = field(repr=False)
    origin: Origin
    fetched_at: datetime
    reason: str = ""
    #: False when the caller's ``until`` stopped reading before the body ended.
    complete: bool = True
    #: Each redirect target followed, in order.
    redirects: tuple[str, ...] = ()
    provenance: Mapping[str, Any] = field(default_factory=dict, compare=False)
    diagnostics: tuple[Diagnostic, ...] = field(default=(), compare=False)
    #: The body's SHA-256 (hex) when the store already knows it (hashed while downloading,
    #: or recorded in the verified cache entry); otherwise it is computed when asked for.
    digest: str = field(default="", repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def headers(self) -> dict[str, str]:
        """Headers as a dict; repeated fields joined with ", " (RFC 9110 5.3)."""
        out: dict[str, str] = {}
        for k, v in self.header_items:
            out[k] = f"{out[k]}, {v}" if k in out else v
        return out

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def header_all(self, name: str) -> list[str]:
        n = name.lower()
        return [v for k, v in self.header_items if k == n]

    @property
    def media_type(self) -> str:
        return media_type_of(self.header("content-type"))

    @property
    def sha256(self) -> str:
        return self.digest or hashlib.sha256(self.body).hexdigest()
