"""Zendesk Support: OAuth scopes by HTTP method, compiled by hand from developer.zendesk.com.

Zendesk's OpenAPI description (developer.zendesk.com/zendesk/oas.yaml) names only HTTP basic
authentication: an email with a password or an API token, which acts with the user's full access.
An OAuth access token carries scopes, which Zendesk documents by method
(https://developer.zendesk.com/api-reference/ticketing/oauth/oauth_tokens/#scopes): ``read`` gives
access to GET endpoints, ``write`` to POST, PUT and DELETE endpoints. This catalog says so for every
path under ``/api/v2`` (and ``/api/lotus``) and sits beside the spec (``beside_spec``): the basic
credential stays listed as full access, the scoped token is the requirement.

Zendesk also names resources a scope can be narrowed to (``tickets:read``, ``users:write`` ...): each
is mapped to the API path of the resource of that name (``/api/v2/tickets``, ``/api/v2/users``;
``auditlogs``: ``/api/v2/audit_logs``, ``hc``: ``/api/v2/help_center``), where it is the narrower
alternative beside the broad ``read`` / ``write``; resources naming no path of the API
(``any_channel``, ``web_widget``) are not mapped. PATCH is named by neither scope and stays with the
spec's credential.
"""

from __future__ import annotations

from pathlib import Path

from .hand import build_hand, normalise_path

__all__ = ["NAME", "SERVERS", "build", "normalise_path"]

NAME = "zendesk"
#: The host only: the catalog's paths are Zendesk's own (``/api/v2/...``), so a spec whose server
#: carries ``/api/v2`` (its paths then start below it) is not matched rather than matched wrongly.
SERVERS: tuple[str, ...] = (r"^https://[a-z0-9][a-z0-9-]*\.zendesk\.com$",)


def build(vendor_dir: Path) -> bytes:
    return build_hand(vendor_dir)
