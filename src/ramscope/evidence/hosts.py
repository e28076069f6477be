"""Which spec describes a URL: the author's ``--spec PREFIX=SPEC_URL`` first, then the shipped index.

The shipped index (``data/hosts.json.gz``, built by ``scripts/build_host_index.py``) maps API base
URLs to spec URLs: Google's APIs by Discovery ``rootUrl`` + ``servicePath``, GitHub, Microsoft
Graph, and APIs.guru's OpenAPI directory by server URL (``vendor/apis-guru/SOURCES.md``). Only
URLs are shipped; the specs are fetched through the spec store like any other.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from urllib.parse import urlsplit

import orjson

from ..errors import InputError

__all__ = ["HostIndex", "SpecHint", "parse_spec_option", "shipped_index"]


@dataclass(frozen=True, slots=True)
class SpecHint:
    """A spec that may describe a call: its URL, and the base URL prefix that led to it."""

    prefix: str
    spec_url: str
    #: "option" (``--spec``) or "index" (the shipped host index).
    source: str


def _norm_prefix(prefix: str) -> str | None:
    try:
        p = urlsplit(prefix.strip())
        port = p.port
    except ValueError:
        return None
    if p.scheme.lower() not in {"http", "https"} or not p.hostname:
        return None
    scheme = p.scheme.lower()
    host = p.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    default = 443 if scheme == "https" else 80
    netloc = host if port in (None, default) else f"{host}:{port}"
    path = p.path or "/"
    return f"{scheme}://{netloc}{path if path.endswith('/') else path + '/'}"


def parse_spec_option(text: str) -> tuple[str, str]:
    """``PREFIX=SPEC_URL`` -> (normalised prefix, spec URL); :class:`InputError` when malformed."""
    prefix, sep, spec = text.partition("=")
    norm = _norm_prefix(prefix) if sep else None
    if norm is None or not spec.strip():
        raise InputError(f"--spec {text!r}: expected PREFIX=SPEC_URL, PREFIX an http(s) URL")
    return norm, spec.strip()


def _ancestors(norm: str) -> Iterable[str]:
    """A normalised prefix's ancestors, longest first (``https://h/a/b/`` -> itself, ``.../a/``, ``.../``)."""
    scheme, _, rest = norm.partition("://")
    netloc, _, path = rest.partition("/")
    base = f"{scheme}://{netloc}/"
    segments = [s for s in path.split("/") if s]
    for k in range(len(segments), -1, -1):
        yield base + "".join(s + "/" for s in segments[:k])


class HostIndex:
    """Base URL prefixes -> spec URLs, the author's own before the shipped ones."""

    def __init__(self, shipped: Mapping[str, Sequence[str]], options: Sequence[tuple[str, str]] = ()) -> None:
        self._shipped = shipped
        self._options: dict[str, list[str]] = {}
        for prefix, spec in options:
            self._options.setdefault(prefix, []).append(spec)
        #: scheme://netloc/ -> the option prefixes on it, longest first (a call compares only its host's).
        self._by_origin: dict[str, list[str]] = {}
        for prefix in sorted(self._options, key=len, reverse=True):
            self._by_origin.setdefault(_origin(prefix), []).append(prefix)

    def with_options(self, options: Sequence[tuple[str, str]]) -> HostIndex:
        return HostIndex(self._shipped, options)

    def hints(self, url: str) -> tuple[SpecHint, ...]:
        """The specs that may describe ``url``: ``--spec`` prefixes (longest first), else the shipped index."""
        norm = _norm_prefix(url)
        if norm is None:
            return ()
        return self.hints_canonical(norm)

    def hints_canonical(self, norm: str) -> tuple[SpecHint, ...]:
        """:meth:`hints` of a URL already in canonical form ending in ``/`` (an :class:`ObservedCall`'s
        URL is canonical: lower-case scheme and host, no default port, no query)."""
        found = tuple(
            SpecHint(p, s, "option")
            for p in self._by_origin.get(_origin(norm), ())
            if norm.startswith(p)
            for s in self._options[p]
        )
        if not found:
            found = tuple(SpecHint(p, s, "index") for p in _ancestors(norm) for s in self._shipped.get(p, ()))
        return found


def _origin(prefix: str) -> str:
    scheme, _, rest = prefix.partition("://")
    return f"{scheme}://{rest.partition('/')[0]}/"


@cache
def _shipped() -> dict[str, tuple[str, ...]]:
    f = resources.files(__package__).joinpath("data").joinpath("hosts.json.gz")
    if not f.is_file():
        return {}
    doc = orjson.loads(gzip.decompress(f.read_bytes()))
    return {str(k): tuple(str(u) for u in v) for k, v in doc.get("prefixes", {}).items()}


def shipped_index(options: Sequence[tuple[str, str]] = ()) -> HostIndex:
    """The shipped host index, with the author's ``--spec`` options in front."""
    return HostIndex(_shipped(), options)
