"""JSON Schemas (draft 2020-12) shipped with ramscope.

The manifest schema is *generated* from the model (one source of truth); the
shipped file ``schemas/manifest.schema.json`` is the generated text, and a test
keeps the two identical. Regenerate with ``python -m ramscope.schema``.
"""

from __future__ import annotations

import enum
import json
from typing import Any

from .manifest import ENUM_TYPES, MESSAGE_TYPES, enum_names, message_fields

__all__ = ["SCHEMA_NAMES", "generate_manifest_schema", "load_schema"]

SCHEMA_NAMES = ("manifest", "report", "skills-extension")
_ID_BASE = "https://ramscope.invalid/schemas/"

# Fields a *valid* manifest must give (the proto makes everything optional; the
# validator and this schema do not).
_REQUIRED: dict[str, tuple[str, ...]] = {
    "Resource": ("id", "interaction_protocol", "owner", "spec"),
    "ResourceSpec": ("spec_url",),
    "Operation": ("id", "resource"),
    "ResourceAccess": ("id", "operation", "identity_used", "necessity"),
}
_DESCRIPTIONS: dict[str, str] = {
    "ResourceAccessManifest": "An agent's external resource footprint (A2A proposal 1426).",
    "Resource": "An external entity (REST API, MCP tool, A2A agent) outside the agent's governance boundary.",
    "ResourceSpec": "Where the machine-readable contract of the resource is, and the path within it.",
    "Operation": "A functional action the agent performs on a resource.",
    "ApiOperationSpec": "How to find a REST operation in its spec: operationId, else resource_path + method.",
    "ResourceAccess": "One context in which the agent invokes an operation, with why, as whom, and how necessary.",
}


def _enum_schema(cls: type[enum.IntEnum]) -> dict[str, Any]:
    names = [n for n in enum_names(cls) if not n.endswith("UNSPECIFIED")]
    numbers = [m.value for m in cls if m.value != 0]
    return {
        "description": f"{cls.__name__}: by name, by prefixed name, or by number.",
        "oneOf": [{"type": "string", "enum": names}, {"type": "integer", "enum": numbers}],
    }


def _field_schema(fi: Any) -> dict[str, Any]:
    kind = fi.kind
    if kind == "string":
        out: dict[str, Any] = {"type": "string"}
        if fi.name.endswith("_url") and fi.name != "developer_documentation_url":
            out["format"] = "uri"
        return out
    if kind == "bool":
        return {"type": "boolean"}
    if kind == "enum":
        return {"$ref": f"#/$defs/{fi.target.__name__}"}
    if kind == "message":
        return {"$ref": f"#/$defs/{fi.target.__name__}"}
    if kind == "strings":
        return {"type": "array", "items": {"type": "string"}}
    return {"type": "array", "items": {"$ref": f"#/$defs/{fi.target.__name__}"}}


def _message_schema(cls: type[Any]) -> dict[str, Any]:
    props: dict[str, Any] = {}
    all_of: list[dict[str, Any]] = []
    required = _REQUIRED.get(cls.__name__, ())
    for fi in message_fields(cls):
        sch = _field_schema(fi)
        props[fi.name] = sch
        if fi.camel != fi.name:
            props[fi.camel] = sch
            all_of.append({"not": {"required": [fi.name, fi.camel]}})
        if fi.name in required:
            if fi.camel != fi.name:
                all_of.append({"anyOf": [{"required": [fi.name]}, {"required": [fi.camel]}]})
            else:
                all_of.append({"required": [fi.name]})
    out: dict[str, Any] = {
        "type": "object",
        "description": _DESCRIPTIONS.get(cls.__name__, ""),
        "properties": props,
        "additionalProperties": False,
    }
    if all_of:
        out["allOf"] = all_of
    return out


def generate_manifest_schema() -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for cls in MESSAGE_TYPES[1:]:
        defs[cls.__name__] = _message_schema(cls)
    for ecls in ENUM_TYPES:
        defs[ecls.__name__] = _enum_schema(ecls)
    root = _message_schema(MESSAGE_TYPES[0])
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": _ID_BASE + "manifest.schema.json",
        "title": "Resource Access Manifest",
        **root,
        "$defs": defs,
    }


def load_schema(name: str) -> dict[str, Any]:
    """A shipped schema by name (one of ``SCHEMA_NAMES``)."""
    if name not in SCHEMA_NAMES:
        raise ValueError(f"unknown schema {name!r}; expected one of {', '.join(SCHEMA_NAMES)}")
    from importlib import resources  # noqa: PLC0415 - only `ramscope schema` reads them

    text = resources.files("ramscope").joinpath("schemas", f"{name}.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    import pathlib

    target = pathlib.Path(__file__).with_name("schemas") / "manifest.schema.json"
    target.write_text(render(generate_manifest_schema()), encoding="utf-8")
    print(f"wrote {target}")
