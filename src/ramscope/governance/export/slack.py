"""``export --format slack-manifest``: a Slack app manifest whose ``oauth_config.scopes`` the tiers fill.

Shape (https://docs.slack.dev/reference/app-manifest; optional scopes since Slack's changelog of
2026-03-12, https://docs.slack.dev/changelog/2026/03/12/optional-scopes): ``oauth_config.scopes``
has ``bot`` and ``user`` (required) and ``bot_optional`` and ``user_optional``. A bot token is the
agent's own (``AGENT``); a user token acts for the user (``END_USER``); the report says which token
type each scope is for (a ``#bot`` scheme or server). A manifest needs ``display_information.name``
(at most 35 characters), and a bot user when it asks for bot scopes.
"""

from __future__ import annotations

from typing import Any

from ._out import envelope, left_out, require
from ._read import Permission, Reading

__all__ = ["MAX_NAME", "export_slack", "is_bot_scope"]

FORMAT = "slack-manifest"
MAX_NAME = 35


def is_bot_scope(p: Permission) -> bool:
    return p.scheme.endswith("#bot") or p.namespace.endswith("#bot")


def export_slack(reading: Reading) -> dict[str, Any]:
    slack = [p for p in reading.of("slack") if p.scope]
    require(bool(slack), FORMAT, "Slack scopes (bot and user tokens)", reading)
    groups: dict[str, list[str]] = {"bot": [], "user": [], "bot_optional": [], "user_optional": []}
    for p in slack:
        assert p.scope is not None
        key = ("bot" if is_bot_scope(p) else "user") + ("" if p.required else "_optional")
        groups[key].append(p.scope)
    scopes: dict[str, list[str]] = {}
    for key, values in groups.items():
        required = set(groups[key.removesuffix("_optional")]) if key.endswith("_optional") else set()
        # A scope both required and optional (two accesses, two tiers) is required.
        kept = sorted({v for v in values if v not in required})
        if kept:
            scopes[key] = kept
    name = (reading.card_name or "ramscope agent").strip()[:MAX_NAME] or "ramscope agent"
    manifest: dict[str, Any] = {
        "_metadata": {"major_version": 1, "minor_version": 1},
        "display_information": {"name": name},
    }
    if "bot" in scopes or "bot_optional" in scopes:
        manifest["features"] = {"bot_user": {"display_name": name, "always_online": False}}
    manifest["oauth_config"] = {"scopes": scopes}
    body = {"manifest": manifest}
    return envelope(reading, FORMAT, body, left_out(reading, FORMAT, slack))
