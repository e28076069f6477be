"""A small bank API and cards against it, for the CLI tests of what users see.

The scopes are laid out so that the tier's choice differs from each access's own: ``getBalance``
accepts ``accounts.read`` or ``overview.read``, ``listPayees`` accepts ``payees.read`` or
``overview.read``, all three read-only. Alone, each access gets its own read scope (grant sets of
two operations each, incomparable with ``overview.read``'s; the name breaks the tie); together,
``overview.read`` (two operations) beats ``accounts.read`` + ``payees.read`` (four), so the tier
asks for it alone. (A write scope there would not be traded in: a tier never raises the level.)
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.httpserver import LocalHTTPServer

SCOPES = {
    "accounts.read": "See your account balances and statements",
    "payees.read": "See the people you pay",
    "overview.read": "See your balances and the people you pay",
}


def _op(op_id: str, security: list[dict[str, list[str]]]) -> dict[str, Any]:
    return {"operationId": op_id, "security": security, "responses": {"200": {"description": "ok"}}}


BANK: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Bank API", "version": "1"},
    "components": {
        "securitySchemes": {
            "bank": {
                "type": "oauth2",
                "flows": {
                    "authorizationCode": {
                        "authorizationUrl": "https://auth.bank.example/authorize",
                        "tokenUrl": "https://auth.bank.example/token",
                        "scopes": SCOPES,
                    }
                },
            },
            "key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
        }
    },
    "paths": {
        "/balance": {"get": _op("getBalance", [{"bank": ["accounts.read"]}, {"bank": ["overview.read"]}])},
        "/payees": {"get": _op("listPayees", [{"bank": ["payees.read"]}, {"bank": ["overview.read"]}])},
        "/statements": {"get": _op("listStatements", [{"bank": ["accounts.read"]}])},
        "/contacts": {"get": _op("listContacts", [{"bank": ["payees.read"]}])},
        "/rates": {"get": _op("getRates", [{"key": []}])},
    },
}


def serve_bank(srv: LocalHTTPServer) -> str:
    srv.route("/bank.json", body=json.dumps(BANK).encode())
    srv.route("/down.json", status=503, body=b"down")
    return srv.url("/bank.json")


def bank_server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        serve_bank(srv)
        yield srv


def access(
    aid: str,
    op_id: str,
    *,
    identity: str = "END_USER",
    necessity: str = "REQUIRED",
    confirm: bool = False,
    resource: str = "bank",
) -> dict[str, Any]:
    """An access with its own operation (``op-<aid>``) on ``resource``."""
    return {
        "op": {"id": f"op-{aid}", "resource": resource, "api_operation_spec": {"operation_id": op_id}},
        "access": {
            "id": aid,
            "operation": f"op-{aid}",
            "identity_used": identity,
            "necessity": necessity,
            "confirmation_required": confirm,
            "access_justification": f"To {op_id} for you.",
        },
    }


def card(
    spec_url: str, *accesses: dict[str, Any], third_party: bool = False, name: str = "Bank agent"
) -> dict[str, Any]:
    """A card with the ``bank`` resource (and ``rates-3p``, a third party's copy of it, when asked)."""
    resources = [
        {
            "id": "bank",
            "interaction_protocol": "REST",
            "owner": "CONSUMER",
            "display_name": "Bank",
            "spec": {"spec_url": spec_url},
        }
    ]
    if third_party:
        resources.append(dict(copy.deepcopy(resources[0]), id="rates-3p", owner="THIRD_PARTY", display_name="Bank"))
    return {
        "name": name,
        "description": "Pays your bills",
        "resourceAccessManifest": {
            "resources": resources,
            "operations": [a["op"] for a in accesses],
            "resource_accesses": [a["access"] for a in accesses],
        },
    }


def write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc, indent=2) if not isinstance(doc, str) else doc, "utf-8")
    return path
