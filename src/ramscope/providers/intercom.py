"""Intercom: OAuth scopes per endpoint, compiled by hand from developers.intercom.com.

Intercom's OpenAPI description names only a bearer token; the scopes an app selects in the
Developer Hub decide what the token may do (https://developers.intercom.com/docs/build-an-integration/
learn-more/authentication/oauth-scopes). This catalog maps the path prefixes whose scope that page
names (contacts, companies, conversations, tags, events, tickets, admins, news, articles ...) and sits
beside the spec (``beside_spec``): the bare token stays listed, the scoped one is the requirement.
Paths the page names no scope for (help center, AI, Fin, calls, custom objects ...) are left out:
undetermined, not guessed. Two schemes: a public app authorized by OAuth (END_USER) and a private
app's access token (AGENT).
"""

from __future__ import annotations

from pathlib import Path

from .hand import build_hand, normalise_path

__all__ = ["NAME", "SERVERS", "build", "normalise_path"]

NAME = "intercom"
SERVERS: tuple[str, ...] = (r"^https://api(\.eu|\.au)?\.intercom\.io$",)


def build(vendor_dir: Path) -> bytes:
    return build_hand(vendor_dir)
