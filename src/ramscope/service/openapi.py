"""The OpenAPI 3.1 document of ``ramscope serve`` (served at ``/openapi.json``).

Written out by hand: the API is small, and the document is a contract other languages generate
clients from, so it is kept exact rather than inferred. ``tests/test_service_http.py`` validates it
with openapi-spec-validator and checks that it names every route the application serves.
"""

from __future__ import annotations

from typing import Any

from .. import __version__

__all__ = ["openapi_document"]

_JSON = "application/json"
_ANY_OBJECT: dict[str, Any] = {"type": "object", "additionalProperties": True}
_CARD_BODY: dict[str, Any] = {
    "description": "An A2A agent card (v0.3 or v1.0) carrying a Resource Access Manifest, or a bare manifest, "
    "as one JSON object. Leave the body empty when `url` is given.",
    "required": False,
    "content": {_JSON: {"schema": _ANY_OBJECT}},
}
_URL_PARAM: dict[str, Any] = {
    "name": "url",
    "in": "query",
    "required": False,
    "description": "Fetch the card from this URL (the card itself, or the agent's base URL: its well-known card "
    "path is tried) through the same guarded store as every spec: public http(s) addresses only unless the "
    "server runs with --allow-private-network.",
    "schema": {"type": "string", "format": "uri"},
}
_EXIT_HEADER: dict[str, Any] = {
    "X-Ramscope-Exit-Code": {
        "description": "The exit code the CLI gives for the same input (docs/cli.md).",
        "schema": {"type": "integer"},
    },
    "X-Ramscope-Policy": {
        "description": "On a server with --policy: whether the card got it (it is one --policy-card names).",
        "schema": {"type": "string", "enum": ["applied", "not-applied"]},
    },
}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {_JSON: {"schema": {"$ref": "#/components/schemas/Error"}}}}


def _ok(description: str, schema: dict[str, Any] | None = None, media: str = _JSON) -> dict[str, Any]:
    return {"description": description, "headers": _EXIT_HEADER, "content": {media: {"schema": schema or _ANY_OBJECT}}}


def _common_errors() -> dict[str, Any]:
    return {
        "400": _error("The input cannot be read: not a JSON object, a query parameter not allowed, a URL refused."),
        "401": _error("A bearer token is required (the server was given --token-file) and none or another came."),
        "413": _error("The body is over the size limit."),
        "403": _error("A POST from a web page of another origin (Origin, Sec-Fetch-Site)."),
        "408": _error("The request's body did not arrive within the read timeout."),
        "415": _error("A POST must be sent as application/json, an empty body included."),
        "502": _error("The card could not be fetched from `url`."),
        "503": _error("Every worker stayed busy until the request's deadline."),
        "504": _error("Not answered within the request deadline."),
    }


def _card_op(op_id: str, summary: str, ok: dict[str, Any], params: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "post": {
            "operationId": op_id,
            "summary": summary,
            "parameters": [_URL_PARAM, *params],
            "requestBody": _CARD_BODY,
            "responses": {
                "200": ok,
                "422": {**ok, "description": "The card is invalid (CLI exit 1); the body says why."},
                **_common_errors(),
            },
        }
    }


def openapi_document() -> dict[str, Any]:
    report_ref = {"$ref": "#/components/schemas/Report"}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "ramscope",
            "version": __version__,
            "summary": "Least-privilege permission sets from the Resource Access Manifest of A2A agent cards.",
            "description": "The HTTP API of `ramscope serve` (docs/service.md). Each POST answers what the CLI "
            "command of the same name writes with --format json; the CLI's exit code is the status (1 -> 422, "
            "2 -> 400; 0, 3, 4 and 5 are answers: 200) and the `X-Ramscope-Exit-Code` header.",
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "security": [{"bearer": []}, {}],
        "paths": {
            "/v1/derive": _card_op(
                "derive",
                "The permission report of a card (`ramscope derive`): `complete: false` when some access is "
                "undetermined (200; a spec that could not be fetched is such an access).",
                _ok("The report (docs/report.md).", report_ref),
                [],
            ),
            "/v1/scopes": _card_op(
                "scopes",
                "The least-privilege scopes of a cumulative tier (`ramscope scopes`).",
                _ok("The scopes, and the credentials and undetermined accesses beside them."),
                [
                    {
                        "name": "tier",
                        "in": "query",
                        "schema": {"type": "string", "enum": ["required", "recommended", "optional"]},
                    },
                    {
                        "name": "identity",
                        "in": "query",
                        "schema": {"type": "string", "enum": ["end_user", "agent", "all"]},
                    },
                ],
            ),
            "/v1/consent": _card_op(
                "consent",
                "Consent-screen data (`ramscope consent`): JSON, Markdown or HTML.",
                {
                    "description": "The consent data or page.",
                    "headers": _EXIT_HEADER,
                    "content": {
                        _JSON: {"schema": _ANY_OBJECT},
                        "text/markdown": {"schema": {"type": "string"}},
                        "text/html": {"schema": {"type": "string"}},
                    },
                },
                [{"name": "format", "in": "query", "schema": {"type": "string", "enum": ["json", "markdown", "html"]}}],
            ),
            "/v1/validate": _card_op(
                "validate",
                "The card's diagnostics (`ramscope validate --format json`); fetches nothing but a `url` card.",
                _ok("The diagnostics."),
                [],
            ),
            "/v1/check": {
                "post": {
                    "operationId": "check",
                    "summary": "Judge a card by an organisation's rules (`ramscope check --format json`).",
                    "requestBody": {
                        "required": True,
                        "content": {
                            _JSON: {
                                "schema": {
                                    "type": "object",
                                    "required": ["card", "rules"],
                                    "additionalProperties": False,
                                    "properties": {
                                        "card": {
                                            **_ANY_OBJECT,
                                            "description": "A card (a saved report is refused: the service "
                                            "cannot verify it against its card).",
                                        },
                                        "rules": {
                                            "description": "The rules (docs/rules.md): TOML, or its tables as JSON.",
                                            "oneOf": [{"type": "string"}, _ANY_OBJECT],
                                        },
                                    },
                                }
                            }
                        },
                    },
                    "responses": {
                        "200": _ok("The check results (exit code 5 when an error-severity rule failed)."),
                        "422": _ok("The card is invalid."),
                        **_common_errors(),
                    },
                }
            },
            "/v1/diff": {
                "post": {
                    "operationId": "diff",
                    "summary": "Permissions added or removed between two cards (`ramscope diff`; no saved reports).",
                    "requestBody": {
                        "required": True,
                        "content": {
                            _JSON: {
                                "schema": {
                                    "type": "object",
                                    "required": ["old", "new"],
                                    "additionalProperties": False,
                                    "properties": {"old": _ANY_OBJECT, "new": _ANY_OBJECT},
                                }
                            }
                        },
                    },
                    "responses": {
                        "200": _ok("The difference (exit code 4 when the new card needs more or adds a risk)."),
                        "422": _ok("The new card is invalid."),
                        **_common_errors(),
                    },
                }
            },
            "/v1/health": {
                "get": {
                    "operationId": "health",
                    "summary": "Liveness, version and the worker pool's state; no token needed.",
                    "security": [],
                    "responses": {"200": {"description": "Up.", "content": {_JSON: {"schema": _ANY_OBJECT}}}},
                }
            },
            "/openapi.json": {
                "get": {
                    "operationId": "openapi",
                    "summary": "This document; no token needed.",
                    "security": [],
                    "responses": {"200": {"description": "OpenAPI 3.1.", "content": {_JSON: {"schema": _ANY_OBJECT}}}},
                }
            },
        },
        "components": {
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "The token of --token-file (required when the server listens beyond loopback).",
                }
            },
            "schemas": {
                "Report": {
                    **_ANY_OBJECT,
                    "description": "A derive report; its JSON Schema is `ramscope schema report`.",
                    "required": ["report_version", "card", "complete", "accesses", "tiers"],
                },
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {
                        "error": {
                            "type": "object",
                            "required": ["status", "code", "message"],
                            "properties": {
                                "status": {"type": "integer"},
                                "code": {"type": "string"},
                                "message": {"type": "string"},
                            },
                        },
                        "diagnostics": {"type": "array", "items": _ANY_OBJECT},
                    },
                },
            },
        },
    }
