"""The shipped manifest schema is generated from the model, and the two agree."""

from __future__ import annotations

from typing import Any

import jsonschema
import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from ramscope.manifest import MESSAGE_TYPES, ResourceAccessManifest, message_fields
from ramscope.schema import generate_manifest_schema, load_schema, render

from .test_manifest import manifests


def test_shipped_schema_is_the_generated_one() -> None:
    """Regenerate with `python -m ramscope.schema` when the model changes."""
    assert render(load_schema("manifest")) == render(generate_manifest_schema())


def test_schema_lists_every_model_field_in_both_spellings() -> None:
    """Each message's schema has exactly the model's fields, snake_case and camelCase."""
    schema = load_schema("manifest")
    for cls in MESSAGE_TYPES:
        node = schema if cls is ResourceAccessManifest else schema["$defs"][cls.__name__]
        names = {n for fi in message_fields(cls) for n in (fi.name, fi.camel)}
        assert set(node["properties"]) == names, cls.__name__


_VALIDATOR = jsonschema.Draft202012Validator(load_schema("manifest"))


def _valid(m: ResourceAccessManifest) -> bool:
    """What the schema requires beyond types: ids, enums and spec URLs given."""
    return (
        all(r.id and r.interaction_protocol and r.owner and r.spec and r.spec.spec_url for r in m.resources)
        and all(o.id and o.resource for o in m.operations)
        and all(a.id and a.operation and a.identity_used and a.necessity for a in m.resource_accesses)
    )


@given(manifests, st.sampled_from(["snake", "camel"]))
@settings(max_examples=200)
def test_model_dumps_validate_against_the_schema(m: ResourceAccessManifest, style: Any) -> None:
    """A dump of any complete manifest validates; the schema never rejects what the model writes."""
    doc = orjson.loads(orjson.dumps(m.to_dict(style)))
    errors = list(_VALIDATOR.iter_errors(doc))
    if _valid(m):
        assert errors == []
    else:
        assert errors
