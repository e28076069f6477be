"""The compact cached index: the same SpecIndex as the one built, decoded only as far as it is used."""

from __future__ import annotations

import re
import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ramscope.derive.privilege import SpecGrants
from ramscope.specs import build_index, normalize_path
from ramscope.specs.compact import CompactError, CompactOperations, decode, encode
from ramscope.specs.model import (
    OperationEntry,
    RowOperations,
    SchemeRequirement,
    SpecIndex,
    SpecKind,
    entry_row,
    row_entry,
)
from tests._specs import fixture_spec, make_spec


def _doc() -> dict[str, Any]:
    """Many shapes at once: shared and own security, public, undeclared-by-operation, duplicate ids,
    several servers (alternative paths), a non-ASCII id, a deprecated operation."""
    paths: dict[str, Any] = {
        "/pets/{petId}": {
            "get": {"operationId": "getPet", "summary": "Get a pet", "description": "d" * 50},
            "delete": {"operationId": "deletePet", "security": [{"oauth": ["pets:write"]}], "deprecated": True},
        },
        "/pets": {
            "get": {"operationId": "listPets", "security": [{"oauth": ["pets:read"]}, {"key": []}]},
            "post": {"operationId": "dup", "security": [{}]},
        },
        "/stores//{id}/": {"put": {"operationId": "dup"}, "get": {"operationId": "Ünïcode-id"}},
        "/open": {"get": {"security": []}},
    }
    for i in range(40):
        paths[f"/things/{i}/{{x}}"] = {"get": {"operationId": f"thing{i}", "security": [{"oauth": [f"s{i % 3}"]}]}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Pets", "version": "2"},
        "servers": [{"url": "https://api.example.com/v1"}, {"url": "https://eu.example.com/v2/"}],
        "security": [{"oauth": ["pets:read"]}],
        "components": {
            "securitySchemes": {
                "oauth": {
                    "type": "oauth2",
                    "flows": {
                        "authorizationCode": {
                            "authorizationUrl": "https://auth.example.com/a",
                            "tokenUrl": "https://auth.example.com/t",
                            "scopes": {"pets:read": "read", "pets:write": "write"},
                        }
                    },
                },
                "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
            }
        },
        "paths": paths,
    }


def _round_trip(index: SpecIndex) -> SpecIndex:
    again, built_from, deps = decode(encode(index, built_from="https://b/", deps=[("https://d/", "0" * 64)]))
    assert (built_from, deps) == ("https://b/", [("https://d/", "0" * 64)])
    return again


@pytest.mark.parametrize(
    "spec",
    [
        make_spec(_doc()),
        fixture_spec("swagger2-security.json"),
        fixture_spec("oas31-security.yaml"),
        fixture_spec("hostile-refs.json"),
    ],
    ids=["varied", "swagger2", "oas31-yaml", "hostile-refs"],
)
def test_round_trip_is_the_same_index(spec: Any) -> None:
    """Decoded, the index equals the one built: fields, every operation, every lookup, the grant groups."""
    built = build_index(spec)
    again = _round_trip(built)
    assert isinstance(again.operations, CompactOperations)
    assert again == built
    assert list(again.operations) == list(built.operations)
    assert dict(again.by_operation_id) == dict(built.by_operation_id)
    assert dict(again.by_method_path) == dict(built.by_method_path)
    assert again.requirement_groups() == built.requirement_groups()
    assert again.to_dict() == built.to_dict()


@pytest.mark.parametrize(
    "spec",
    [make_spec(_doc()), fixture_spec("swagger2-security.json"), fixture_spec("hostile-refs.json")],
    ids=["varied", "swagger2", "hostile-refs"],
)
def test_a_fresh_index_holds_rows_that_are_its_entries(spec: Any) -> None:
    """An OpenAPI index is built as rows (RowOperations, entries made when asked): the same
    operations, look-ups, groups and encoded bytes as the index of its entries in a tuple."""
    built = build_index(spec)
    assert isinstance(built.operations, RowOperations)
    entries = SpecIndex(**{**vars(built), "operations": tuple(built.operations)})
    assert list(built.operations) == list(entries.operations)
    assert [row_entry(entry_row(e)) for e in entries.operations] == list(entries.operations)
    assert dict(built.by_operation_id) == dict(entries.by_operation_id)
    assert dict(built.by_method_path) == dict(entries.by_method_path)
    assert built.requirement_groups() == entries.requirement_groups()
    assert encode(built, built_from="b", deps=[]) == encode(entries, built_from="b", deps=[])
    assert built.operations[-1] == entries.operations[-1]
    assert built.operations[1:3] == entries.operations[1:3]
    with pytest.raises(IndexError):
        built.operations[len(entries.operations)]


def test_discovery_round_trip(discovery_documents: Any) -> None:
    """A real Discovery document (its pointers are not OpenAPI ones) survives the round trip."""
    built = build_index(make_spec((discovery_documents / "gmail.v1.json").read_bytes()))
    again = _round_trip(built)
    assert list(again.operations) == list(built.operations)
    assert dict(again.by_method_path) == dict(built.by_method_path)


def test_lookups_decode_only_what_they_return() -> None:
    """Resolving an operation decodes that operation, not the other 46."""
    again = _round_trip(build_index(make_spec(_doc())))
    ops = again.operations
    assert isinstance(ops, CompactOperations)
    assert ops.decoded == 0
    (entry,) = again.by_operation_id["listPets"]
    assert entry.operation_id == "listPets"
    assert again.by_method_path.get(("GET", "/v1/pets/{}")) == [again.by_operation_id["getPet"][0]]
    assert again.by_operation_id.get("nope") is None
    assert again.by_method_path.get(("GET", "/nope")) is None
    assert ops.decoded == 2
    assert len(ops) == 47


def test_hash_collisions_cost_nothing_but_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tables hold CRC-32s, not keys: with every key colliding, look-ups still answer exactly."""
    import ramscope.specs.compact as compact

    monkeypatch.setattr(compact, "_crc32", lambda data, value=0: 7)
    built = build_index(make_spec(_doc()))
    again = _round_trip(built)
    for op_id, entries in built.by_operation_id.items():
        assert again.by_operation_id[op_id] == entries
    for key, entries in built.by_method_path.items():
        assert again.by_method_path[key] == entries
    assert again.by_operation_id.get("nope") is None
    assert again.by_method_path.get(("GET", "/pets/{}/nope")) is None


def test_duplicate_ids_and_spellings() -> None:
    """Several operations under one id or one path spelling come back together, in spec order."""
    built = build_index(make_spec(_doc()))
    again = _round_trip(built)
    assert [e.key for e in again.by_operation_id["dup"]] == [e.key for e in built.by_operation_id["dup"]]
    assert len(again.by_operation_id["dup"]) == 2
    assert again.by_method_path[("PUT", "/stores/{}")] == built.by_method_path[("PUT", "/stores/{}")]
    assert again.by_operation_id["Ünïcode-id"][0].path == "/stores//{id}/"


def test_grants_from_the_compact_form_are_the_same() -> None:
    """SpecGrants works from the requirement groups: same masks, counts and choices as from the built index."""
    built = build_index(make_spec(_doc()))
    a, b = SpecGrants(built), SpecGrants(_round_trip(built))
    assert (a.public_mask, a.unknown_mask, a.protected_count, a.n_ops) == (
        b.public_mask,
        b.unknown_mask,
        b.protected_count,
        b.n_ops,
    )
    for entry in built.operations:
        for alt_a, alt_b in zip(a.alternatives(entry), b.alternatives(entry), strict=True):
            assert alt_a == alt_b
            assert a.granted(alt_a.atoms) == b.granted(alt_b.atoms)
    read = a.alternatives(built.by_operation_id["listPets"][0])[0]
    mask = a.granted(read.atoms)
    assert [o.key for o in a.operations_in(mask)] == [o.key for o in b.operations_in(mask)]
    assert [o.key for o in b.operations_in(mask, limit=3)] == [o.key for o in a.operations_in(mask)][:3]


def test_sequence_behaviour() -> None:
    """Indexing, negative indexing, slices, equality with tuples both ways, hashing."""
    built = build_index(make_spec(_doc()))
    ops = _round_trip(built).operations
    assert ops[0] == built.operations[0]
    assert ops[-1] == built.operations[-1]
    assert ops[1:3] == built.operations[1:3]
    assert ops == built.operations
    assert built.operations == ops
    assert ops != built.operations[:-1]
    assert hash(ops) == hash(tuple(built.operations))
    with pytest.raises(IndexError):
        ops[len(ops)]


def test_empty_index() -> None:
    index = SpecIndex(kind=SpecKind.OPENAPI, url="https://x/", sha256="0" * 64)
    again = _round_trip(index)
    assert again == index
    assert len(again.operations) == 0
    assert again.by_operation_id.get("x") is None
    assert again.requirement_groups() == ()


def test_odd_records_round_trip() -> None:
    """Fields the compact form abbreviates when usual are kept when unusual."""
    odd = OperationEntry(
        key="GET /a",
        operation_id="",
        method="GET",
        path="/a",
        full_path="/elsewhere/a",
        alt_paths=("/x/a",),
        requirements=((SchemeRequirement("s", ("b", "a")),), ()),
        security_source="operation",
        extra={"source": "other.json#/p"},
        pointer="/x-custom/0",
    )
    index = SpecIndex(kind=SpecKind.OPENAPI, url="https://x/", sha256="0" * 64, base_paths=("/v1",), operations=(odd,))
    assert _round_trip(index).operations[0] == odd


@pytest.mark.parametrize(
    "mangle",
    [
        lambda b: b[:10],
        lambda b: b"XXXX" + b[4:],
        lambda b: b[:4] + struct.pack("<I", 99) + b[8:],
        lambda b: b[:12] + struct.pack("<II", len(b) - 4, 100) + b[20:],
        lambda b: b[: len(b) - 3],
    ],
    ids=["truncated", "magic", "version", "section-past-end", "short-records"],
)
def test_malformed_bytes_are_rejected(mangle: Any) -> None:
    """Anything that is not a compact index of this version is refused (and then rebuilt by load_index)."""
    data = encode(build_index(make_spec(_doc())), built_from="u", deps=[])
    with pytest.raises(CompactError):
        decode(mangle(data))


_PARAM = re.compile(r"\{[^{}]*\}")


def _normalize_reference(path: str) -> str:
    """normalize_path as first written: the fast one must agree with it everywhere."""
    p = _PARAM.sub("{}", path.strip())
    if not p.startswith("/"):
        p = "/" + p
    while len(p) > 1 and p.endswith("/"):
        p = p[:-1]
    return re.sub(r"/{2,}", "/", p)


@settings(max_examples=2000)
@given(st.text(alphabet="/{}ab+ \t", max_size=14))
def test_normalize_path_fast_path_agrees(path: str) -> None:
    assert normalize_path(path) == _normalize_reference(path)


@settings(max_examples=3000)
@given(
    st.text(alphabet="/ab+ .", min_size=1, max_size=8).map(lambda b: "/" + b),
    st.text(alphabet="/{}ab+ \t", max_size=12).map(lambda p: "/" + p),
)
def test_base_prefix_lemma(base: str, path: str) -> None:
    """What lets the compact index file base + path spellings under the path alone."""
    from hypothesis import assume

    from ramscope.specs.compact import _clean_base, _prefixable

    assume(_clean_base(base) and _prefixable(path, normalize_path(path).encode()))
    assert normalize_path(base + path) == base + normalize_path(path)


def test_an_index_orjson_cannot_encode_is_used_not_cached() -> None:
    """Integers beyond 64 bits (YAML allows them) in an index's facts: the index is returned, not cached."""
    from ramscope.specs import load_index
    from tests.test_spec_cache import FakeSource

    source = FakeSource({"https://specs.example.com/a.yaml": {}})
    yaml_body = b"openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /x:\n    get:\n      operationId: x\n"
    source.specs["https://specs.example.com/a.yaml"] = make_spec(
        yaml_body, "https://specs.example.com/a.yaml", media_type="application/yaml"
    )
    import ramscope.specs as specs_pkg

    real = specs_pkg.build_index

    def huge(spec: Any, **kw: Any) -> SpecIndex:
        from dataclasses import replace

        return replace(real(spec, **kw), extra={"n": 2**70})

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(specs_pkg, "build_index", huge)
        index = load_index("https://specs.example.com/a.yaml", source)
    assert index.extra == {"n": 2**70}
    assert source.artifacts == {}


def test_the_compact_form_knows_every_field() -> None:
    """A field added to OperationEntry or SpecIndex must be added to the compact form (and this list)."""
    from dataclasses import fields

    assert [f.name for f in fields(OperationEntry)] == [
        "key", "operation_id", "method", "path", "full_path", "alt_paths", "requirements",
        "security_source", "title", "description", "deprecated", "extra", "pointer",
    ]  # fmt: skip
    assert [f.name for f in fields(SpecIndex)] == [
        "kind", "url", "sha256", "title", "version", "spec_version", "base_paths", "operations",
        "schemes", "security_declared", "diagnostics", "extra",
    ]  # fmt: skip
