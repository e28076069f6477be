"""What every evidence reader yields: :class:`ObservedCall`, free of secrets.

A call keeps the method, the URL with its query *names* only (no values, no user info, no
fragment), the status, and what kind of credential was presented, never the credential. A reader
looks at header values only to classify them (:mod:`._auth`), then drops them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from urllib.parse import SplitResult, urlsplit

__all__ = ["AuthKind", "EvidenceFormat", "EvidenceSummary", "ObservedCall", "Principal", "strip_url"]


class AuthKind(enum.StrEnum):
    BEARER = "bearer"
    BASIC = "basic"
    API_KEY = "api_key"
    COOKIE = "cookie"
    #: The request carried no credential that the evidence shows.
    NONE = "none"
    #: The evidence does not record request headers (most traces), so nothing is known.
    UNKNOWN = "unknown"


class Principal(enum.StrEnum):
    """Whose token a bearer credential is, when its form tells (a JWT's claims, a GitHub prefix)."""

    USER = "user"
    APP = "app"
    UNKNOWN = ""


class EvidenceFormat(enum.StrEnum):
    HAR = "har"
    OTLP = "otlp"
    MCP = "mcp"


@dataclass(frozen=True, slots=True)
class ObservedCall:
    """One request seen in the evidence (an HTTP exchange, or an MCP ``tools/call``)."""

    #: ISO 8601 in UTC, "" when the evidence gives none.
    time: str
    #: Upper-case HTTP method; for MCP ``tools/call`` the JSON-RPC method.
    method: str
    #: ``scheme://host[:port]/path``: the query, user info and fragment dropped.
    url: str
    status: int | None = None
    auth: AuthKind = AuthKind.UNKNOWN
    principal: Principal = Principal.UNKNOWN
    #: MCP: the server URL (also in ``url``) and the tool called.
    tool: str = ""
    #: MCP: the tool's annotations as the log showed them (``destructiveHint`` ...), else empty.
    destructive: bool | None = None
    fmt: EvidenceFormat = EvidenceFormat.HAR
    #: The evidence file, and the entry's position in it (1-based), for messages.
    source: str = ""
    entry: int = 0

    @property
    def parts(self) -> SplitResult:
        return urlsplit(self.url)

    @property
    def origin(self) -> str:
        p = self.parts
        return f"{p.scheme}://{p.netloc}".lower()

    @property
    def host(self) -> str:
        return (self.parts.hostname or "").lower()

    @property
    def path(self) -> str:
        # ``url`` is canonical (strip_url): its path starts at the first "/" after the authority.
        i = self.url.find("/", self.url.find("://") + 3)
        return self.url[i:] if i >= 0 else "/"

    @property
    def label(self) -> str:
        """How messages name the call: ``GET https://host/path`` or ``tools/call tool @ server``."""
        if self.tool:
            return f"MCP tool {self.tool!r} at {self.url}"
        return f"{self.method} {self.url}"


@dataclass(frozen=True, slots=True)
class EvidenceSummary:
    """What reading one evidence file gave: how many calls, and how many entries could not be read."""

    source: str
    fmt: EvidenceFormat
    calls: int
    skipped: int
    #: reason -> count, for the entries that could not be read.
    reasons: dict[str, int] = field(default_factory=dict)


def strip_url(raw: str) -> str | None:
    """``raw`` without query, user info or fragment, or ``None`` when it is no absolute http(s) URL.

    The whole query goes, names too: a bare ``?<token>`` has its secret where a name would be.
    """
    try:
        p = urlsplit(raw.strip())
        port = p.port
    except ValueError:
        return None
    scheme = p.scheme.lower()
    host = (p.hostname or "").lower()
    if scheme not in {"http", "https", "ws", "wss"} or not host:
        return None
    if ":" in host:
        host = f"[{host}]"
    # Canonical (lower-case scheme and host, no default port): prefixes compare as plain strings.
    default = {"http": 80, "ws": 80, "https": 443, "wss": 443}[scheme]
    netloc = host if port is None or port == default else f"{host}:{port}"
    return f"{scheme}://{netloc}{p.path or '/'}"
