"""Notion: integration capabilities per endpoint, compiled by hand from developers.notion.com.

The OpenAPI file Notion ships with its MCP server declares ``security: []`` on 23 of its 24
operations, yet every call needs an integration token, and the integration's *capabilities*
(read, update, insert content; read, insert comments; user information with or without email)
decide what it may do (https://developers.notion.com/reference/capabilities). This catalog says
so per endpoint, each entry with its reference page, and overrides the spec's claim for
``api.notion.com`` (``catalog-overrides-spec``). Two schemes: a public integration authorized by
a user (OAuth, END_USER) and an internal integration's own token (AGENT).
"""

from __future__ import annotations

from pathlib import Path

from .hand import build_hand, normalise_path

__all__ = ["NAME", "SERVERS", "build", "normalise_path"]

NAME = "notion"
SERVERS: tuple[str, ...] = (r"^https://api\.notion\.com(/v1)?$",)


def build(vendor_dir: Path) -> bytes:
    return build_hand(vendor_dir)
