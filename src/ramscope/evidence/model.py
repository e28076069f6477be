"""What every evidence reader yields: :class:`ObservedCall`, free of secrets.

A call keeps the method, the URL with its query *names* only (no values, no user info, no
fragment), the status, and what kind of credential was presented, never the credential. A reader
looks at header values only to classify them (:mod:`._auth`), then drops them.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import SplitResult, urlsplit

from .redact import redact_path

if TYPE_CHECKING:
    from .stepup import StepUp

__all__ = [
    "AuthKind",
    "EvidenceFormat",
    "EvidenceSummary",
    "ObservedCall",
    "Principal",
    "UnresolvedCall",
    "http_method",
    "origin_of",
    "redact_url",
    "strip_url",
]


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
    #: Source code, read statically (never imported or run): a call site is a call.
    CODE = "code"


@dataclass(frozen=True, slots=True)
class ObservedCall:
    """One request seen in the evidence (an HTTP exchange, or an MCP ``tools/call``)."""

    #: ISO 8601 in UTC, "" when the evidence gives none.
    time: str
    #: Upper-case HTTP method; for MCP ``tools/call`` the JSON-RPC method.
    method: str
    #: ``scheme://host[:port]/path``: the query, user info and fragment dropped, credential-shaped path
    #: segments replaced (:mod:`.redact`; done here too, so no reader or consumer can keep a secret).
    url: str
    status: int | None = None
    auth: AuthKind = AuthKind.UNKNOWN
    principal: Principal = Principal.UNKNOWN
    #: MCP: the server URL (also in ``url``) and the tool called.
    tool: str = ""
    #: MCP: the tool's annotations as the log showed them (``destructiveHint`` ...), else empty.
    destructive: bool | None = None
    fmt: EvidenceFormat = EvidenceFormat.HAR
    #: The evidence file, and the entry's position in it (1-based), for messages. For source code,
    #: the file and the call's line: ``f"{source}:{entry}"`` is the call site.
    source: str = ""
    entry: int = 0
    #: Code: the operation as the code names it, where the client names operations rather than URLs:
    #: a Discovery method id (``gmail.users.messages.list``), a REST operationId (``issues/create``),
    #: a Slack method (``chat.postMessage``), ``METHOD /path`` as the provider's docs spell it (Graph).
    operation: str = ""
    #: Code: the SDK or client the call came through (``googleapiclient``, ``octokit``, ``httpx`` ...).
    via: str = ""
    #: Code: the spec the code itself names for the call, when it does (a Discovery document's URL for
    #: ``build("gmail", "v1")``, an OpenAPI toolset's spec), else "" (the host index decides).
    spec: str = ""
    #: What the server's answer said the call needs (a 403 insufficient_scope challenge, a tool result's
    #: ``_meta["mcp/www_authenticate"]``, GitHub's accepted-scopes headers): :mod:`.stepup`.
    step_up: StepUp | None = None
    #: Why the entry could not be read whole (a URL or field over the bound, a method that is no HTTP
    #: token, no absolute URL but a ``Host`` header), else "". Such a call is known by its host only
    #: (``url`` is ``scheme://host/``): it is never matched to an operation, so ``audit`` holds it
    #: undeclared (fail closed) and ``draft`` reports it unmatched.
    unreadable: str = ""

    def __post_init__(self) -> None:
        redacted = redact_url(self.url)
        if redacted != self.url:
            object.__setattr__(self, "url", redacted)

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
        if self.unreadable:
            return f"{self.method or '(unreadable method)'} {self.url} (not read whole: {self.unreadable})"
        if self.tool:
            return f"MCP tool {self.tool!r} at {self.url}"
        if self.operation:
            return f"{self.operation} ({self.via}) at {self.source}:{self.entry}" if self.via else self.operation
        return f"{self.method} {self.url}"

    @property
    def site(self) -> str:
        """``file:line`` for a call read from code, else ""."""
        return f"{self.source}:{self.entry}" if self.fmt is EvidenceFormat.CODE else ""


@dataclass(frozen=True, slots=True)
class UnresolvedCall:
    """A call site the code reader found but cannot tell statically (a URL built at run time, a
    method name from a variable): an ``unresolved-call`` finding, never dropped and never guessed."""

    #: The source file, and the call's line (1-based).
    source: str
    line: int
    #: The SDK or client the call goes through, as far as the reader can tell.
    via: str
    #: Why it cannot be resolved, in words (``the URL is built at run time``).
    reason: str
    #: The call as written, shortened and made safe to show (:func:`ramscope._text`).
    text: str = ""
    #: What the code does name of the call, when it names some (an MCP tool on a server whose URL is not known).
    operation: str = ""

    @property
    def site(self) -> str:
        return f"{self.source}:{self.line}"


@dataclass(frozen=True, slots=True)
class EvidenceSummary:
    """What reading one evidence file gave: how many calls, and how many entries could not be read."""

    source: str
    fmt: EvidenceFormat
    calls: int
    skipped: int
    #: reason -> count, for the entries that could not be read, and those read in part.
    reasons: dict[str, int] = field(default_factory=dict)
    #: Entries read in part: counted as calls to their host (in ``calls``), never matched to an operation.
    partial: int = 0


def strip_url(raw: str) -> str | None:
    """``raw`` without query, user info or fragment, or ``None`` when it is no absolute http(s) URL.

    The whole query goes, names too: a bare ``?<token>`` has its secret where a name would be; path
    parameters go as well, and credential-shaped path segments are replaced (:func:`.redact.redact_path`).
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
    return f"{scheme}://{netloc}{redact_path(p.path or '/')}"


#: An HTTP method is an RFC 9110 token (``UPLOAD-V2`` and other extension methods included).
_METHOD = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}")


def http_method(raw: str) -> str | None:
    """``raw`` upper-cased when it is an HTTP method (a token of at most 32 characters), else ``None``."""
    m = raw.strip()
    return m.upper() if _METHOD.fullmatch(m) else None


def origin_of(raw: str, cap: int) -> str | None:
    """``scheme://host[:port]/`` of a URL too long (or too odd) to keep, when its authority ends within
    its first ``cap`` characters; else ``None`` (no readable host)."""
    head = raw.lstrip()[:cap]
    start = head.find("://")
    if start < 0:
        return None
    end = start + 3
    while end < len(head) and head[end] not in "/?#":
        end += 1
    if end >= cap:
        return None  # the authority runs past the bound
    return strip_url(head[:end] + "/")


def redact_url(url: str) -> str:
    """``url`` (``scheme://authority/path``) with its path redacted (:func:`.redact.redact_path`)."""
    i = url.find("/", url.find("://") + 3) if "://" in url else url.find("/")
    return url if i < 0 else url[:i] + redact_path(url[i:])
