"""``export --format github-app``: a GitHub App manifest's ``default_permissions``, and an OAuth App's classic scopes.

Manifest shape (https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest):
``name``, ``url`` (required: the app's homepage), ``hook_attributes`` (``url``, ``active``),
``redirect_url``, ``callback_urls``, ``setup_url``, ``description``, ``public``, ``default_events``,
``default_permissions`` (permission -> ``read``, ``write`` or ``admin``), ``request_oauth_on_install``,
``setup_on_update``. The tiers fill ``default_permissions`` from the fine-grained permissions of
GitHub App tokens (user-to-server for END_USER, installation for AGENT); what is the author's to say
is left to the author: ``url`` (required) is a placeholder, ``hook_attributes`` (whose ``url`` is
required) is left out, so no webhook is configured until the author adds one. A GitHub App has no
optional permissions: the optional tiers' permissions are listed apart.

An OAuth App (or a classic token) uses classic scopes instead; ``oauth_app.scopes`` lists the
classic pick the report gives each access beside its fine-grained one.
"""

from __future__ import annotations

from typing import Any

from ._out import envelope, left_out, require
from ._read import Permission, Reading

__all__ = ["LEVELS", "export_github"]

FORMAT = "github-app"
LEVELS = ("none", "read", "write", "admin")
_APP_SCHEMES = ("github-user", "github-installation")


def export_github(reading: Reading) -> dict[str, Any]:
    github = [p for p in reading.of("github") if p.scope]
    require(bool(github), FORMAT, "GitHub permissions (GitHub App permissions, OAuth App classic scopes)", reading)
    perms: dict[str, str] = {}
    optional: dict[str, str] = {}
    kept: list[Permission] = []
    skipped: list[dict[str, Any]] = []
    for p in github:
        assert p.scope is not None
        name, _, level = p.scope.partition(":")
        if p.scheme not in _APP_SCHEMES or level not in LEVELS[1:]:
            if p.scheme == "github-classic":
                kept.append(p)  # carried below, in the classic list
                continue
            skipped.append(
                {
                    "permission": p.scope,
                    "kind": "scope",
                    "provider": "github",
                    "identity": p.identity,
                    "tier": p.tier,
                    "accesses": list(p.accesses),
                    "reason": f"not a GitHub App permission (scheme {p.scheme}, level {level or 'none'})",
                }
            )
            continue
        kept.append(p)
        into = perms if p.required else optional
        into[name] = max(level, into.get(name, level), key=LEVELS.index)
    # An optional tier's permission is optional only where it raises the required level.
    optional = {n: lv for n, lv in optional.items() if LEVELS.index(lv) > LEVELS.index(perms.get(n, "none"))}
    default = dict(sorted({**perms, **optional}.items()))
    manifest: dict[str, Any] = {
        "name": (reading.card_name or "ramscope agent")[:34],
        # Required by GitHub, and only the author knows it: a placeholder GitHub refuses until it is filled.
        "url": "<https URL of the app's homepage>",
        "public": False,
        "default_permissions": default,
        "default_events": [],
    }
    classic_req: set[str] = set()
    classic_opt: set[str] = set()
    classic_missing: list[dict[str, Any]] = []
    for a in reading.in_tiers():
        if not a.complete or a.identity != "END_USER":
            continue
        if not any(a.id in p.accesses for p in github):
            continue
        if a.classic_scopes is None:
            classic_missing.append({"access": a.id, "why": a.classic_why or "no classic scope does this operation"})
            continue
        (classic_req if a.necessity == "REQUIRED" else classic_opt).update(a.classic_scopes)
    body = {
        "manifest": manifest,
        "tiers": {
            "required": dict(sorted(perms.items())),
            "optional": dict(sorted(optional.items())),
            "note": "a GitHub App has no optional permissions: default_permissions holds every exported tier's; "
            "the optional ones are listed here so the author can leave them out",
        },
        "author": {
            "url": "required: the app's homepage",
            "hook_attributes": "left out: add {url, active} (url required) and default_events for webhooks",
        },
        "oauth_app": {
            "scopes": sorted(classic_req),
            "optional_scopes": sorted(classic_opt - classic_req),
            "not_expressible": classic_missing,
        },
    }
    return envelope(reading, FORMAT, body, skipped + left_out(reading, FORMAT, kept + _unsupported(github, kept)))


def _unsupported(github: list[Permission], kept: list[Permission]) -> list[Permission]:
    keep = set(map(id, kept))
    return [p for p in github if id(p) not in keep]
