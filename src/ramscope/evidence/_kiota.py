"""Microsoft Graph's Kiota SDKs (msgraph-sdk for Python, @microsoft/msgraph-sdk for TypeScript):
a request-builder chain to the method and path Microsoft's docs spell.

Both SDKs are generated from the same OpenAPI description, one request builder per path segment:
``client.users.by_user_id(x).mail_folders.by_mail_folder_id(y).messages.get()`` (Python) and
``client.users.byUserId(x).mailFolders.byMailFolderId(y).messages.get()`` (TypeScript) are both
``GET /users/{user-id}/mailFolders/{mailFolder-id}/messages``. A code reader hands the chain's
attribute names (and whether each is called with an argument) to :func:`graph_call`; it never
guesses a segment it cannot read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["GRAPH_METHODS", "graph_call", "kiota_segment"]

#: A request builder's terminal methods, and the HTTP method each sends.
GRAPH_METHODS = {"get": "GET", "post": "POST", "patch": "PATCH", "put": "PUT", "delete": "DELETE"}
# Builder members that are no path segment: they configure the request or switch its base URL.
_NOT_SEGMENTS = frozenset({"with_url", "withUrl", "request_configuration", "to_get_request_information"})
_BY_ID = re.compile(r"^by_?([A-Za-z0-9_]+?)_?[Ii]d$")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def kiota_segment(name: str, called: bool) -> str | None:
    """The path segment of one builder member: ``mail_folders`` → ``mailFolders``, ``by_user_id(x)`` →
    ``{user-id}``; ``None`` for a member that is no segment."""
    if name in _NOT_SEGMENTS:
        return None
    m = _BY_ID.match(name)
    if called and m:
        key = _camel(m.group(1).strip("_"))
        return "{" + key[:1].lower() + key[1:] + "-id}"
    return _camel(name)


def graph_call(chain: Sequence[tuple[str, bool]]) -> tuple[str, str] | None:
    """``(METHOD, /path)`` of a chain below the client (``[("me", False), ("messages", False), ("get", True)]``),
    or ``None`` when the chain does not end in a request method or names no segment."""
    if len(chain) < 2:
        return None
    last, called = chain[-1]
    method = GRAPH_METHODS.get(last)
    if method is None or not called:
        return None
    segments = [s for s in (kiota_segment(n, c) for n, c in chain[:-1]) if s is not None]
    if not segments:
        return None
    return method, "/" + "/".join(segments)
