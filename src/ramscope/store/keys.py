"""How exchanges are identified: cache keys and cassette match keys.

A request is identified by its method, its URL (as httpx normalises it, without
the fragment) and the SHA-256 of its canonical JSON body. Canonical means sorted
keys and compact separators, so the same JSON-RPC call written by two clients,
or by hand in a synthesized cassette, matches. The client's self-description is
left out of the digest: ``params.clientInfo`` (MCP ``initialize``) and
``params._meta["io.modelcontextprotocol/clientInfo"]`` (the stateless 2026-07-28
protocol, which moved it into every request's ``_meta``). It carries ramscope's
own version, and a version bump must not invalidate every recorded MCP conversation.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

__all__ = ["NO_BODY", "body_digest", "canonical_url", "document_key", "exchange_key", "raw_body_digest"]

#: The digest of "no body at all" (GET, DELETE): empty, so keys stay readable.
NO_BODY = ""
_META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"


def canonical_url(url: str | httpx.URL) -> str:
    """The URL as httpx sends it: no fragment, an empty path written as "/"."""
    import httpx  # noqa: PLC0415 - see document_key

    u = url if isinstance(url, httpx.URL) else httpx.URL(url)
    if u.fragment:
        u = u.copy_with(fragment=None)
    if u.path == "/":  # httpx reports "/" for an empty path too, but prints it as written
        u = u.copy_with(path="/")
    return str(u)


def body_digest(json_body: Any) -> str:
    """SHA-256 of the canonical JSON of ``json_body``, the client's self-description removed."""
    if json_body is None:
        return NO_BODY
    doc = json_body
    if isinstance(doc, dict) and isinstance(params := doc.get("params"), dict):
        if "clientInfo" in params:
            params = {k: v for k, v in params.items() if k != "clientInfo"}
        meta = params.get("_meta")
        if isinstance(meta, dict) and _META_CLIENT_INFO in meta:
            params = {**params, "_meta": {k: v for k, v in meta.items() if k != _META_CLIENT_INFO}}
        doc = {**doc, "params": params}
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def raw_body_digest(content: bytes) -> str:
    """The digest of a request body as sent: canonical when it is JSON, else of the bytes."""
    if not content:
        return NO_BODY
    try:
        doc = json.loads(content)
    except ValueError:
        return hashlib.sha256(content).hexdigest()
    return body_digest(doc)


def exchange_key(method: str, url: str | httpx.URL, digest: str = NO_BODY) -> str:
    """The cache key of an exchange: ``spec:GET:<url>`` for plain GETs, else ``xchg:...``."""
    method = method.upper()
    if method == "GET" and digest == NO_BODY:
        return document_key(canonical_url(url))
    return f"xchg:{method}:{canonical_url(url)}:{digest}"


def document_key(canonical: str) -> str:
    """``exchange_key("GET", url)`` for a URL already in :func:`canonical_url` form, without parsing it again."""
    return f"spec:GET:{canonical}"
