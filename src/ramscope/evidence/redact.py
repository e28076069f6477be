"""Credential-shaped URL path segments, replaced before a call leaves its reader.

A query string is dropped whole (:func:`.model.strip_url`), but a path can carry a secret as well:
a JWT as a segment, a Telegram bot token (``/bot<id>:<secret>/``), the secret of a Slack
(``/services/T…/B…/<secret>``) or Discord (``/api/webhooks/<id>/<token>``) webhook, a session id as a
path parameter (``;jsessionid=…``), an API key as a long random segment. Every such segment becomes
:data:`PLACEHOLDER`, which is one non-empty segment and so still instantiates the spec path template
that had a parameter there (``/bot{token}/getMe`` matches ``/bot{redacted}/getMe``); path parameters
(everything from a ``;`` in a segment) are dropped as the query is. The rule is in docs/evidence.md.

Redaction errs towards hiding: an identifier that merely looks random (a commit SHA, a Drive file id)
is replaced too, which costs nothing for matching (a template has a parameter there), while a secret
that survived would be printed in the card, the report, stderr and every audit format.
"""

from __future__ import annotations

import math
import re
from urllib.parse import unquote

__all__ = ["PLACEHOLDER", "credential_shaped", "redact_path"]

#: What a credential-shaped segment is replaced with (braces never occur in a recorded path unencoded).
PLACEHOLDER = "{redacted}"

#: A JWT / JWS / JWE anywhere in a segment: base64url JSON header (``{"`` is ``eyJ``), a dot, more.
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}")
#: A Telegram bot token (``123456789:AA…``, docs: core.telegram.org/bots/api#authorizing-your-bot),
#: with the ``bot`` of ``/bot<token>/`` kept so the template ``/bot{token}/…`` still matches.
_BOT_TOKEN = re.compile(r"^(bot)?\d{3,}:[A-Za-z0-9_-]{10,}$", re.IGNORECASE)
#: Token alphabet of the generic rule (base64, base64url, hex, and the separators keys use).
_TOKENISH = re.compile(r"^[A-Za-z0-9_\-+=.~]+$")
_HEX = re.compile(r"^[0-9a-fA-F-]+$")
#: Webhook forms whose secret is a fixed segment however short or plain it is: a pattern over the
#: leading segments and the index of the secret segment (later segments, ``/messages/…``, are kept).
_WEBHOOKS: tuple[tuple[re.Pattern[str], int], ...] = (
    # Slack incoming webhooks: /services/T<team>/B<bot>/<secret>
    # (docs.slack.dev/messaging/sending-messages-using-incoming-webhooks).
    (re.compile(r"^services/T[A-Z0-9]+/B[A-Z0-9]+/"), 3),
    # Slack workflow triggers: /triggers/T<team>/<id>/<secret>; legacy workflow webhooks
    # /workflows/T<team>/A<app>/<id>/<secret>.
    (re.compile(r"^triggers/T[A-Z0-9]+/\d+/"), 3),
    (re.compile(r"^workflows/T[A-Z0-9]+/A[A-Z0-9]+/\d+/"), 4),
    # Discord: /api[/v<N>]/webhooks/<id>/<token>[/messages/…] (discord.com/developers/docs/resources/webhook).
    (re.compile(r"^api/webhooks/\d+/"), 3),
    (re.compile(r"^api/v\d+/webhooks/\d+/"), 4),
)
#: Generic rule: a segment of at least this many characters of the token alphabet ...
_MIN_LEN = 20
#: ... (hex, a key or a digest: from this length, with letters and digits) ...
_MIN_HEX = 32
#: ... whose letter and digit runs (``Simulated`` ``Box`` ``V`` ``3``) are this long on average at most
#: (words are ~5; random base62 ~1.6), with an entropy of 3 bits a character at least ...
_MAX_PIECE = 3.0
#: ... or, from this length, with two digits, runs of 4 characters on average at most and an entropy of
#: 4 bits a character; or from 40 characters with 4.5 bits (no English identifier reaches it).
_LONG = 32
_MAX_PIECE_LONG = 4.0
#: Segments longer than this are redacted without looking (nothing legitimate is a 256-character word).
_ALWAYS = 256
_PIECE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
#: A quick screen: a path none of whose segments is long, with no ``;`` and no ``:``, has nothing to redact.
_SCREEN = re.compile(r"[^/]{20,}|;|:|services/|triggers/|workflows/|webhooks/")


def _entropy(s: str) -> float:
    n = len(s)
    counts: dict[str, int] = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def credential_shaped(segment: str) -> bool:
    """Whether one (already percent-decoded) path segment looks like a credential.

    Measured (tests/test_evidence_redact.py): of the 29,221 distinct literal path segments of the
    APIs.guru directory's 2,639 specs and Google's 610 Discovery documents, 4 are called
    credential-shaped (3 of them 72 random characters); of random base64url keys of 15 and 24 bytes the
    generic rule misses about 1 in 100 and 1 in 900; of 32 bytes or more, and of hex keys of 16 bytes or
    more, none of 100,000. The known forms (JWT, Telegram, Slack, Discord, path parameters) never escape.
    """
    n = len(segment)
    if n > _ALWAYS or _JWT.search(segment) or _BOT_TOKEN.match(segment):
        return True
    if n < _MIN_LEN or not _TOKENISH.match(segment):
        return False
    digits = sum(ch.isdigit() for ch in segment)
    if digits == n:
        return False  # a number (an id)
    if _HEX.match(segment):
        return n >= _MIN_HEX and digits > 0 and _entropy(segment) >= 2.5
    pieces = _PIECE.findall(segment)
    mean = sum(map(len, pieces)) / len(pieces) if pieces else 0.0
    if mean <= _MAX_PIECE and _entropy(segment) >= 3.0:
        return True
    bits = _entropy(segment)
    return (n >= _LONG and digits >= 2 and mean <= _MAX_PIECE_LONG and bits >= 4.0) or (n >= 40 and bits >= 4.5)


def _redact_segment(segment: str) -> str:
    if _BOT_TOKEN.match(segment) and segment[:3].lower() == "bot":
        return segment[:3] + PLACEHOLDER
    try:
        decoded = unquote(segment, errors="strict")
    except UnicodeDecodeError:
        decoded = segment
    return PLACEHOLDER if credential_shaped(decoded) or credential_shaped(segment) else segment


def redact_path(path: str) -> str:
    """``path`` (``/a/b``, no query) with path parameters dropped and credential-shaped segments replaced."""
    if not _SCREEN.search(path):
        return path
    segments = path.split("/")
    # Path parameters (RFC 3986 3.3 ``;``): dropped as a query is, so ``/login;jsessionid=…`` is ``/login``.
    segments = [s.split(";", 1)[0] if ";" in s else s for s in segments]
    lead = "/".join(segments[1:])
    secret = -1
    for pattern, index in _WEBHOOKS:
        if pattern.match(lead):
            secret = index + 1  # segments[0] is the empty string before the first "/"
            break
    out = [segments[0]]
    for i, seg in enumerate(segments[1:], start=1):
        if i == secret and seg:
            out.append(PLACEHOLDER)
        elif seg and seg != PLACEHOLDER:
            out.append(_redact_segment(seg))
        else:
            out.append(seg)
    return "/".join(out)
