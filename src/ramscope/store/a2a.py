"""The A2A fetcher: a remote agent's card, from its URL or from its base URL's well-known paths.

A RAM resource of protocol A2A names either the card itself or the agent's
base URL. The order::

    spec_url ends in .json           → GET it; that is the card (or an error)
    otherwise                        → GET spec_url; a JSON object that looks like a card is used
      then, first card wins:           <url>/.well-known/agent-card.json     (A2A 0.3 and 1.0)
                                       <origin>/.well-known/agent-card.json
                                       <url>/.well-known/agent.json          (A2A 0.2 and earlier)
                                       <origin>/.well-known/agent.json

"Looks like a card": an object with a ``name`` and one of ``supportedInterfaces``
(1.0), ``url`` (0.3) or ``skills``. Each attempt goes through the store's
guarded, bounded exchange and is recorded in the result's provenance
(``a2a_attempts``); none giving a card is a :class:`~ramscope.errors.FetchError`
listing what was tried. The card's bytes are returned as served, and the URL it
finally came from is the spec's ``final_url``: the identity of the remote agent
for depth limits and cycle detection.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson

from ..documents import looks_like_card
from ..errors import FetchError
from .fetchers import FetchContext, FetcherResult
from .model import Exchange

__all__ = ["WELL_KNOWN_PATHS", "card_candidates", "fetch_a2a", "looks_like_card"]

#: Current first, then the path A2A 0.2 used.
WELL_KNOWN_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
_ACCEPT = "application/json, application/a2a+json;q=0.9, */*;q=0.5"
#: Response headers that carry freshness and validators into the store's cache of the result.
_KEPT = ("cache-control", "expires", "date", "age", "etag", "last-modified")


def card_candidates(url: str) -> list[str]:
    """The well-known URLs tried for a base URL, in order, without repeats."""
    parts = urlsplit(url)
    base = parts.path.rstrip("/")
    out: list[str] = []
    for suffix in WELL_KNOWN_PATHS:
        for path in (base + suffix, suffix):
            out.append(urlunsplit((parts.scheme, parts.netloc, path, "", "")))
    return list(dict.fromkeys(out))


def _attempt(ctx: FetchContext, url: str, attempts: list[dict[str, Any]], *, require_card: bool) -> Exchange | None:
    """GET ``url``; the exchange if it holds a card (or any JSON), else ``None`` with the reason recorded."""
    try:
        ex = ctx.exchange("GET", url, headers={"accept": _ACCEPT})
    except FetchError as exc:
        attempts.append({"url": url, "status": None, "outcome": f"{exc.code}: {exc.detail}"[:300]})
        return None
    if not ex.ok:
        attempts.append({"url": url, "status": ex.status, "outcome": f"HTTP {ex.status}"})
        return None
    if not ex.body:
        attempts.append({"url": url, "status": ex.status, "outcome": "empty body"})
        return None
    if not require_card:
        attempts.append({"url": url, "status": ex.status, "outcome": "document"})
        return ex
    try:
        doc = orjson.loads(ex.body)
    except orjson.JSONDecodeError:
        attempts.append({"url": url, "status": ex.status, "outcome": f"not JSON ({ex.media_type})"})
        return None
    if not looks_like_card(doc):
        attempts.append({"url": url, "status": ex.status, "outcome": "JSON, but not an agent card"})
        return None
    attempts.append({"url": url, "status": ex.status, "outcome": "card"})
    return ex


def fetch_a2a(ctx: FetchContext, url: str) -> FetcherResult:
    """The agent card ``url`` names, directly or through the well-known paths."""
    attempts: list[dict[str, Any]] = []
    if urlsplit(url).path.lower().endswith(".json"):
        # Named outright: whatever JSON is there is judged by the adapter, which says what it found.
        found = _attempt(ctx, url, attempts, require_card=False)
    else:
        found = _attempt(ctx, url, attempts, require_card=True)
        for candidate in card_candidates(url):
            if found is not None:
                break
            found = _attempt(ctx, candidate, attempts, require_card=True)
    if found is None:
        tried = "; ".join(f"{a['url']}: {a['outcome']}" for a in attempts)
        raise FetchError(f"no A2A agent card found (tried {tried})", url=url)
    headers = {k: v for k in _KEPT if (v := found.header(k)) is not None}
    provenance = {"a2a_attempts": attempts, "a2a_card_url": found.final_url}
    return FetcherResult(
        body=found.body,
        media_type=found.media_type,
        final_url=found.final_url,
        status=found.status,
        headers=headers,
        provenance=provenance,
    )
