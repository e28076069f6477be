"""Helpers to make FetchedSpec objects and manifest operations in tests."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from ramscope.manifest import ApiOperationSpec, Loc, Operation, Resource, ResourceSpec
from ramscope.store.model import FetchedSpec, Origin

FIXTURES = Path(__file__).parent / "fixtures" / "specs"


def make_spec(
    body: bytes | str | dict[str, Any],
    url: str = "https://specs.example.com/apis/spec.json",
    *,
    media_type: str = "application/json",
    final_url: str | None = None,
) -> FetchedSpec:
    if isinstance(body, dict):
        body = orjson.dumps(body)
    elif isinstance(body, str):
        body = body.encode()
    return FetchedSpec(
        url=url,
        final_url=final_url or url,
        body=body,
        media_type=media_type,
        sha256=hashlib.sha256(body).hexdigest(),
        fetched_at=datetime.now(UTC),
        origin=Origin.CACHE,
    )


def fixture_spec(name: str, url: str | None = None) -> FetchedSpec:
    media = "application/yaml" if name.endswith((".yaml", ".yml")) else "application/json"
    return make_spec((FIXTURES / name).read_bytes(), url or f"https://specs.example.com/apis/{name}", media_type=media)


def rest_operation(
    operation_id: str = "",
    method: str = "",
    path: str = "",
    *,
    spec_url: str = "https://specs.example.com/apis/spec.json",
    operation_spec_url: str = "",
) -> tuple[Resource, Operation]:
    """A resource and an operation as the manifest parser would build them (with locations)."""
    resource = Resource(
        id="res",
        spec=ResourceSpec(spec_url=spec_url, resource_path=path, loc=Loc("/resources/0/spec")),
        loc=Loc("/resources/0"),
    )
    op = Operation(
        id="op",
        resource="res",
        api_operation_spec=ApiOperationSpec(
            spec_url=operation_spec_url,
            operation_id=operation_id,
            http_method=method,
            loc=Loc("/operations/0/api_operation_spec"),
        ),
        loc=Loc("/operations/0"),
    )
    return resource, op
