"""Classifying a request's credential without keeping it.

Header values are looked at here and nowhere else, and only their form is kept: the scheme of an
``Authorization`` header, whether a JWT says user or application, a GitHub token's prefix. Nothing
read here is returned but an :class:`AuthKind` and a :class:`Principal`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable

import orjson

from .model import AuthKind, Principal

__all__ = ["API_KEY_HEADERS", "API_KEY_PARAMS", "Credentials", "jwt_claims"]

#: Request headers that carry an API key (lower case).
API_KEY_HEADERS = frozenset(
    {
        "x-api-key",
        "api-key",
        "apikey",
        "x-goog-api-key",
        "ocp-apim-subscription-key",
        "x-functions-key",
        "x-auth-token",
        "x-apikey",
        "private-token",
    }
)
#: Query parameters that carry an API key.
API_KEY_PARAMS = frozenset({"key", "api_key", "apikey", "api-key", "x-api-key"})
#: Query parameters that carry a bearer token (RFC 6750 section 2.3).
TOKEN_PARAMS = frozenset({"access_token"})
#: What recorders put in place of a credential they hide (OpenTelemetry's sanitizer writes "[REDACTED]").
_REDACTED = frozenset({"redacted", "", "filtered", "hidden", "masked"})
_CREDENTIAL_HEADERS = frozenset({"authorization", "cookie", *API_KEY_HEADERS})
#: A JWT's payload is read only up to this size (a hostile header could be megabytes).
_MAX_JWT = 16 * 1024
#: GitHub token prefixes (docs: "About authentication to GitHub"): whose token it is.
_GITHUB_PREFIXES = (
    ("ghp_", Principal.USER),
    ("gho_", Principal.USER),
    ("ghu_", Principal.USER),
    ("github_pat_", Principal.USER),
    ("ghs_", Principal.APP),
)


def jwt_claims(token: str) -> dict[str, object] | None:
    """The claims of a JWT, read without verifying it (``None`` when it is no JWT)."""
    parts = token.split(".")
    if len(parts) != 3 or len(token) > _MAX_JWT:
        return None
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = orjson.loads(base64.urlsafe_b64decode(payload.encode("ascii")))
    except (ValueError, binascii.Error, UnicodeError):
        return None
    return claims if isinstance(claims, dict) else None


def _principal(token: str) -> Principal:
    for prefix, who in _GITHUB_PREFIXES:
        if token.startswith(prefix):
            return who
    claims = jwt_claims(token)
    if claims is None:
        return Principal.UNKNOWN
    # Microsoft identity platform: delegated tokens carry ``scp``, application tokens ``roles``
    # (and ``idtyp: app``); OAuth 2.0 client-credentials tokens elsewhere have sub == client_id.
    if claims.get("idtyp") == "app":
        return Principal.APP
    if "scp" in claims:
        return Principal.USER
    if "roles" in claims:
        return Principal.APP
    sub, client = claims.get("sub"), claims.get("client_id") or claims.get("azp")
    if isinstance(sub, str) and sub and sub == client:
        return Principal.APP
    return Principal.USER if isinstance(sub, str) and sub else Principal.UNKNOWN


class Credentials:
    """Accumulates what one request shows (headers, cookies, query names) and says what kind it was."""

    __slots__ = ("auth", "principal", "redacted")

    def __init__(self) -> None:
        self.redacted = False
        self.auth: AuthKind | None = None
        self.principal = Principal.UNKNOWN

    def _set(self, kind: AuthKind, principal: Principal = Principal.UNKNOWN) -> None:
        # The strongest evidence wins: an Authorization header over an API key over a cookie.
        order = (AuthKind.BEARER, AuthKind.BASIC, AuthKind.API_KEY, AuthKind.COOKIE)
        if self.auth is None or order.index(kind) < order.index(self.auth):
            self.auth = kind
            self.principal = principal

    def header(self, name: str, value: str) -> None:
        n = name.lower()
        if n not in _CREDENTIAL_HEADERS:
            n = n.strip()
            if n not in _CREDENTIAL_HEADERS:
                return  # most headers (User-Agent, Accept ...) carry no credential
        if n in _CREDENTIAL_HEADERS and value.strip().strip("[]<>*").lower() in _REDACTED:
            self.redacted = True  # a credential was sent, but the recorder hid its kind as well
        elif n == "authorization":
            scheme, _, rest = value.strip().partition(" ")
            s = scheme.lower()
            if s in {"bearer", "token", "dpop"}:
                self._set(AuthKind.BEARER, _principal(rest.strip()))
            elif s == "basic":
                self._set(AuthKind.BASIC)
            elif s:
                # A bare key ("Authorization: sk-..."), or a signature scheme (AWS SigV4, HMAC):
                # the caller's own key either way.
                self._set(AuthKind.API_KEY)
        elif n in API_KEY_HEADERS:
            self._set(AuthKind.API_KEY)
        elif n == "cookie" and value.strip():
            self._set(AuthKind.COOKIE)

    def headers(self, pairs: Iterable[tuple[str, str]]) -> None:
        for name, value in pairs:
            self.header(name, value)

    def query(self, name: str, value: str = "") -> None:
        n = name.strip().lower()
        if n in TOKEN_PARAMS:
            self._set(AuthKind.BEARER, _principal(value.strip()))
        elif n in API_KEY_PARAMS:
            self._set(AuthKind.API_KEY)

    def cookie(self) -> None:
        self._set(AuthKind.COOKIE)

    def result(self, *, seen: bool) -> tuple[AuthKind, Principal]:
        """The credential kind; ``seen``: the evidence recorded the request's headers at all."""
        if self.auth is not None:
            return self.auth, self.principal
        return (AuthKind.NONE if seen and not self.redacted else AuthKind.UNKNOWN), Principal.UNKNOWN
