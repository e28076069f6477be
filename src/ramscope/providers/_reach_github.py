"""GitHub's permissions classed: fine-grained ``<permission>:<level>`` atoms and classic OAuth scopes.

Fine-grained permissions (GitHub Apps, fine-grained personal access tokens) say their level in the
atom: ``read`` < ``write`` < ``admin`` (GitHub: "Permissions for GitHub Apps",
https://docs.github.com/en/rest/authentication/permissions-required-for-github-apps). Which data
they reach is the repositories or organisation the token was granted (chosen at installation or
token creation), so none is a slice of it.

Classic OAuth scopes (OAuth Apps, classic personal access tokens) are classed by GitHub's naming
(``read:org`` < ``write:org`` < ``admin:org``) and, for the bare names (``repo``, ``public_repo``,
``notifications`` ...), by the reviewed table (``data/reach.json``, section ``github``), each entry
citing GitHub's scope table (https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/scopes-for-oauth-apps).
"""

from __future__ import annotations

from .reach import Level, Principal, Reach

__all__ = ["classify_github"]

_FINE_SOURCE = "https://docs.github.com/en/rest/authentication/permissions-required-for-github-apps"
_LEVELS = {"read": Level.READ, "write": Level.WRITE, "admin": Level.MANAGE}


def classify_github(scope: str, name: str, description: str, *, app_only: bool) -> Reach:
    """The class of a GitHub fine-grained permission or classic scope."""
    principal = Principal.APP if app_only else Principal.USER
    perm, sep, lv = name.rpartition(":")
    if sep and lv in _LEVELS and perm:
        why = f"the fine-grained level {lv!r}"
        if app_only:
            why += "; an installation token: the app holds it without a signed-in user"
        return Reach(scope, _LEVELS[lv], principal, source=_FINE_SOURCE, why=why)
    return _classic(scope, name, principal)


_CLASSIC_SOURCE = (
    "https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/scopes-for-oauth-apps#available-scopes"
)
_PREFIXES = (
    ("read:", Level.READ),
    ("write:", Level.WRITE),
    ("delete:", Level.WRITE),
    ("admin:", Level.MANAGE),
    ("manage_", Level.MANAGE),
)


def _classic(scope: str, name: str, principal: Principal) -> Reach:
    """A classic scope by GitHub's naming (``read:org`` < ``write:org`` < ``admin:org``); the bare names
    (``repo``, ``gist``, ``notifications`` ...) are classed in the reviewed table (``data/reach.json``)."""
    for prefix, level in _PREFIXES:
        if name.startswith(prefix):
            why = f"a classic scope named {prefix!r}: {level.name.lower()}"
            return Reach(scope, level, principal, source=_CLASSIC_SOURCE, why=why)
    return Reach(scope, Level.UNKNOWN, principal, source="none", why="a classic scope the naming does not class")
