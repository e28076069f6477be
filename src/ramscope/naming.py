"""Does a resource's display name tell the truth about whose service it is?

The consent screen shows the card's ``display_name`` ("Google Calendar"), which the
card's author wrote. What the user is really trusting is whoever serves the spec:
its host and its own title. Two checks, on data (no network):

* **impersonation** (warning): the display name names a well-known provider
  (Google, Microsoft, GitHub, Slack, Salesforce, Amazon/AWS, Atlassian, Dropbox,
  Stripe, ...) or one of its products (Gmail, Azure, Jira ...), and the spec is not
  served from one of that provider's domains. Names are compared after NFKC,
  case folding, removal of invisible characters and a small map of Cyrillic/Greek
  look-alikes and digit swaps, so "Gооgle" (Cyrillic o's) and "G00gle" count too.
* **mismatch** (info): the spec has a title of its own and the display name
  shares no significant word with it nor with the spec host's labels.

The travel example's "Google Calendar Events", whose spec is Google's Calendar
Discovery document served from www.googleapis.com ("Calendar API"), passes both;
"Google Calendar" on a spec served from evil.example is an impersonation.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from ._text import strip_invisible
from .diagnostics import Diagnostic, Severity, rule

__all__ = [
    "DISPLAY_NAME_IMPERSONATION",
    "DISPLAY_NAME_MISMATCH",
    "PROVIDERS",
    "NameCheck",
    "check_display_name",
    "display_name_diagnostics",
]

_S = "consent"
DISPLAY_NAME_IMPERSONATION = rule(
    "display-name-impersonation",
    Severity.WARNING,
    "A resource's display name names a well-known provider, but its spec is not served from that provider's domains.",
    stage=_S,
)
DISPLAY_NAME_MISMATCH = rule(
    "display-name-mismatch",
    Severity.INFO,
    "A resource's display name shares no word with its spec's own title or host.",
    stage=_S,
)

#: Well-known providers: the words that name them (brand and product names) and the domains
#: their specs are served from (a host matches a domain or any subdomain of it).
PROVIDERS: Mapping[str, tuple[frozenset[str], tuple[str, ...]]] = {
    "Google": (
        frozenset({"google", "gmail", "youtube", "gcp", "firebase", "googleapis"}),
        ("google.com", "googleapis.com", "googleusercontent.com", "google.dev", "youtube.com", "firebase.com"),
    ),
    "Microsoft": (
        frozenset({"microsoft", "azure", "outlook", "onedrive", "sharepoint", "office365", "msgraph"}),
        (
            "microsoft.com",
            "microsoftonline.com",
            "office.com",
            "office365.com",
            "azure.com",
            "windows.net",
            "live.com",
            "outlook.com",
            "sharepoint.com",
            "azure-api.net",
        ),
    ),
    "GitHub": (frozenset({"github"}), ("github.com", "githubusercontent.com", "ghe.com")),
    "GitLab": (frozenset({"gitlab"}), ("gitlab.com",)),
    "Slack": (frozenset({"slack"}), ("slack.com", "slack-edge.com")),
    "Salesforce": (frozenset({"salesforce"}), ("salesforce.com", "force.com")),
    "Amazon": (frozenset({"amazon", "aws"}), ("amazon.com", "amazonaws.com", "aws.amazon.com", "aws.dev")),
    "Atlassian": (
        frozenset({"atlassian", "jira", "confluence", "trello", "bitbucket"}),
        ("atlassian.com", "atlassian.net", "bitbucket.org", "trello.com"),
    ),
    "Dropbox": (frozenset({"dropbox"}), ("dropbox.com", "dropboxapi.com")),
    "Stripe": (frozenset({"stripe"}), ("stripe.com",)),
    "PayPal": (frozenset({"paypal"}), ("paypal.com",)),
    "Okta": (frozenset({"okta"}), ("okta.com", "oktapreview.com")),
    "Zoom": (frozenset({"zoom"}), ("zoom.us",)),
    "Twilio": (frozenset({"twilio"}), ("twilio.com",)),
    "Zendesk": (frozenset({"zendesk"}), ("zendesk.com",)),
    "HubSpot": (frozenset({"hubspot"}), ("hubspot.com", "hubapi.com")),
    "Shopify": (frozenset({"shopify"}), ("shopify.com", "myshopify.com")),
    "Meta": (
        frozenset({"facebook", "instagram", "whatsapp"}),
        ("facebook.com", "instagram.com", "whatsapp.com", "meta.com"),
    ),
    "LinkedIn": (frozenset({"linkedin"}), ("linkedin.com",)),
    "OpenAI": (frozenset({"openai", "chatgpt"}), ("openai.com",)),
    "Anthropic": (frozenset({"anthropic"}), ("anthropic.com",)),
}

# Look-alikes folded to the Latin letter they imitate (the common Cyrillic and Greek ones), and
# digit swaps. Applied only to find provider names, never to what is displayed.
_LOOKALIKES = str.maketrans(
    {
        "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j",
        "ѕ": "s", "ԁ": "d", "һ": "h", "ӏ": "l", "ԛ": "q", "ԝ": "w", "ɡ": "g", "ɩ": "i",
        "α": "a", "ο": "o", "ρ": "p", "ν": "v", "ι": "i", "κ": "k", "τ": "t", "υ": "u", "ε": "e",
        "0": "o", "1": "l",
    }
)  # fmt: skip
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[^\W_]+")
#: Words that say nothing about whose service it is.
_STOPWORDS = frozenset(
    (  # noqa: SIM905 - a word list reads better as words
        "a an the and of for to in on by with from your my our api apis v1 v2 v3 v4 rest service services tool "
        "tools mcp server agent skill skills endpoint spec openapi swagger http https www com org net io dev app "
        "apps online cloud platform events event data s"
    ).split()
)

Status = Literal["ok", "impersonation", "mismatch"]


@dataclass(frozen=True, slots=True)
class NameCheck:
    """The verdict on one display name, with what it was compared against."""

    status: Status
    display_name: str
    #: The spec's own title ("" when unknown) and the host it is served from ("" when unknown).
    provider_title: str = ""
    host: str = ""
    #: The providers the display name names, e.g. ("Google",).
    claimed: tuple[str, ...] = ()
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "provider_title": self.provider_title or None,
            "host": self.host or None,
            "claimed_providers": list(self.claimed),
            "message": self.message or None,
        }


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", strip_invisible(text)).casefold().translate(_LOOKALIKES)


def _words(text: str) -> list[str]:
    """Lower-case words, camelCase split, look-alikes folded."""
    split = _CAMEL.sub(" ", unicodedata.normalize("NFKC", strip_invisible(text)))
    return _WORD.findall(_fold(split))


# Brand word -> providers, and the brands long enough to be recognised glued to another word
# ("googlecalendar"); short brands must stand alone. Built once: every display name of a batch
# is checked against them.
_BY_WORD: dict[str, list[str]] = {}
_GLUED: list[tuple[str, str]] = []
for _name, (_brand_words, _) in PROVIDERS.items():
    for _b in _brand_words:
        _BY_WORD.setdefault(_b, []).append(_name)
        if len(_b) >= 5:
            _GLUED.append((_b, _name))


def _claimed(words: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for word in words:
        named = list(_BY_WORD.get(word, ()))
        named += [name for brand, name in _GLUED if word.startswith(brand)]
        # Report providers in the declaration order of PROVIDERS, as before.
        for name in PROVIDERS:
            if name in named and name not in out:
                out.append(name)
    return tuple(out)


def _host(url: str | None) -> str:
    if not url:
        return ""
    try:
        host = urlsplit(url.strip()).hostname or ""
    except ValueError:
        return ""
    return host.rstrip(".").lower()


def _served_by(host: str, provider: str) -> bool:
    return any(host == d or host.endswith("." + d) for d in PROVIDERS[provider][1])


def _related(a: str, b: str) -> bool:
    """Same word, or one a plural/stem of the other ("holiday"/"holidays", "calendar"/"calendars")."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 4 and long_.startswith(short)


@functools.lru_cache(maxsize=4096)
def check_display_name(display_name: str, *, url: str | None, title: str | None) -> NameCheck:
    """Check ``display_name`` against the spec served from ``url`` (its final URL) titled ``title``.

    Pure, so memoised: a registry's batch names the same services over and over.
    """
    host = _host(url)
    title = title or ""
    words = _words(display_name)
    claimed = _claimed(words)
    foreign = [p for p in claimed if host and not _served_by(host, p)]
    if foreign:
        where = f"served from {host}"
        if title:
            where += f", whose own title is {title!r}"
        message = f"the display name {display_name!r} names {', '.join(foreign)}, but the spec is {where}"
        return NameCheck("impersonation", display_name, title, host, tuple(foreign), message)
    significant = [w for w in words if w not in _STOPWORDS and len(w) > 1]
    if title and significant:
        theirs = [w for w in _words(title) + re.split(r"[.\-]", host) if w]
        if not any(_related(w, t) for w in significant for t in theirs):
            message = f"the display name {display_name!r} shares no word with the spec's own title {title!r}" + (
                f" or its host {host}" if host else ""
            )
            return NameCheck("mismatch", display_name, title, host, claimed, message)
    return NameCheck("ok", display_name, title, host, claimed)


def display_name_diagnostics(
    resources: Iterable[tuple[str, str, str]], specs: Iterable[Mapping[str, Any]]
) -> list[Diagnostic]:
    """Diagnostics for ``(resource id, display name, JSON pointer)`` triples against report spec records."""
    by_resource: dict[str, Mapping[str, Any]] = {}
    for s in specs:
        for rid in s.get("resources") or ():
            by_resource.setdefault(rid, s)
    out: list[Diagnostic] = []
    for rid, name, pointer in resources:
        spec = by_resource.get(rid)
        if not name or spec is None:
            continue
        check = check_display_name(name, url=spec.get("final_url") or spec.get("url"), title=spec.get("title"))
        if check.status == "impersonation":
            out.append(
                DISPLAY_NAME_IMPERSONATION(
                    pointer,
                    f"resource {rid!r}: {check.message}",
                    hint="a consent screen shows this name; name the service after whoever serves the spec",
                    data=check.to_dict(),
                )
            )
        elif check.status == "mismatch":
            out.append(DISPLAY_NAME_MISMATCH(pointer, f"resource {rid!r}: {check.message}", data=check.to_dict()))
    return out
