"""What issue 36's speed-ups may not change: each faster form answers what the plain one did.

* which of a spec's diagnostics bear on one operation: the indexed look-up, against a scan of all;
* the node bounds of JSON and YAML texts: one ``translate`` pass, against a ``count`` per mark;
* the single report's JSON, written a top-level value at a time, against the document in one piece;
* building an index leaves no cyclic garbage, so the parsed tree goes by reference counting
  (a cycle through the OpenAPI builder left Graph beta's 335,000 nodes to the collector).
"""

from __future__ import annotations

import datetime
import gc
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ramscope._parse import json_nodes_at_most, yaml_nodes_at_most
from ramscope.cli._common import pretty_json, write_pretty_json
from ramscope.diagnostics import Diagnostic, Severity
from ramscope.documents import FetchedSpec, Origin
from ramscope.specs import build_index, relevant_diagnostics
from ramscope.specs.model import OperationEntry, SchemeRequirement, SpecIndex, SpecKind

_INHERITED = frozenset({"root", "server", "card"})


def _scan(index: SpecIndex, entry: OperationEntry | None) -> tuple[Diagnostic, ...]:
    """The reference: every diagnostic tested against the entry, as ramscope did before the index."""
    if entry is None:
        return tuple(d for d in index.diagnostics if d.data.get("affects") == "all" or "skipped_path" in d.data)
    terms = {t for alt in entry.requirements or () for t in alt}
    schemes = {t.scheme for t in terms}
    out = []
    for d in index.diagnostics:
        data, affects = d.data, d.data.get("affects")
        if affects == "all" or (affects == "root-security" and entry.security_source in _INHERITED):
            out.append(d)
        elif "scheme" in data:
            scheme = data["scheme"]
            if scheme in schemes and (
                "scope" not in data or any(t.scheme == scheme and data["scope"] in t.scopes for t in terms)
            ):
                out.append(d)
        elif (
            "skipped_path" not in data
            and entry.pointer
            and (d.path == entry.pointer or d.path.startswith(entry.pointer + "/"))
        ):
            out.append(d)
    return tuple(out)


_names = st.sampled_from(["a", "b", "c"])
_scopes = st.sampled_from(["r", "w", "x"])
_paths = st.sampled_from(["", "/paths/~1a", "/paths/~1a/get", "/paths/~1ab", "/paths/~1a-b", "/paths/~1a/get/x", "/x"])
_data = st.one_of(
    st.just({}),
    st.fixed_dictionaries({"affects": st.sampled_from(["all", "root-security", "other"])}),
    st.fixed_dictionaries({"scheme": _names}),
    st.fixed_dictionaries({"scheme": _names, "scope": _scopes}),
    st.fixed_dictionaries({"skipped_path": _paths}),
    st.fixed_dictionaries({"affects": st.just("all"), "skipped_path": _paths}),
)
_diagnostics = st.lists(
    st.builds(lambda p, d, i: Diagnostic(f"c{i}", Severity.WARNING, p, "m", data=d), _paths, _data, st.integers(0, 9)),
    max_size=30,
)
_requirements = st.lists(
    st.lists(st.builds(SchemeRequirement.of, _names, st.lists(_scopes, max_size=3)), max_size=3).map(tuple),
    max_size=4,
).map(tuple)
_entries = st.one_of(
    st.none(),
    st.builds(
        lambda reqs, src, ptr: OperationEntry(
            key="k", operation_id="k", requirements=reqs, security_source=src, pointer=ptr
        ),
        st.one_of(st.none(), _requirements),
        st.sampled_from(["operation", "root", "server", "card", "undeclared"]),
        _paths,
    ),
)


@settings(max_examples=200, deadline=None)
@given(_diagnostics, st.lists(_entries, min_size=1, max_size=4))
def test_the_indexed_look_up_answers_what_the_scan_did(diagnostics: list[Diagnostic], entries: list) -> None:
    index = SpecIndex(kind=SpecKind.OPENAPI, url="https://a.example/s", sha256="0" * 64, diagnostics=tuple(diagnostics))
    for entry in entries:  # several look-ups share the one index built on the first
        assert relevant_diagnostics(index, entry) == _scan(index, entry)


@given(st.binary(max_size=400))
def test_the_json_node_bound_counts_each_mark_once(data: bytes) -> None:
    assert json_nodes_at_most(data) == 1 + 2 * (data.count(b",") + data.count(b"{") + data.count(b"["))
    text = data.decode("latin-1")
    assert json_nodes_at_most(text) == json_nodes_at_most(data)


@given(st.binary(max_size=400))
def test_the_yaml_node_bound_counts_each_mark_once(data: bytes) -> None:
    assert yaml_nodes_at_most(data) == 1 + 2 * sum(
        data.count(c) for c in (b"\n", b"\r", b",", b"[", b"{", b"-", b"?", b":")
    )


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _json, max_size=6) | _json)
def test_the_streamed_report_is_the_document_written_whole(doc: Any) -> None:
    out = io.StringIO()
    write_pretty_json(out.write, doc)
    assert json.loads(out.getvalue()) == json.loads(json.dumps(doc))
    try:
        orjson.dumps(doc)
    except TypeError:
        return  # the stdlib writes what orjson refuses (integers past 64 bits), value by value
    assert out.getvalue() == pretty_json(doc)


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _json, max_size=6))
def test_pretty_json_writes_what_the_stdlib_writes_but_for_float_spelling(doc: dict[str, Any]) -> None:
    def floats_as_repr(v: Any) -> Any:
        if isinstance(v, float):
            return orjson.loads(orjson.dumps(v))
        return v

    assert json.loads(pretty_json(doc)) == json.loads(json.dumps(doc, indent=2, ensure_ascii=False))
    if "e" not in json.dumps(doc):  # exponents are spelt 1e-7 by orjson, 1e-07 by the stdlib
        assert pretty_json(doc) == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


_SPECS = Path(__file__).resolve().parent / "fixtures" / "specs"


def _fetched(path: Path, url: str) -> FetchedSpec:
    body = path.read_bytes()
    return FetchedSpec(
        url=url,
        final_url=url,
        body=body,
        media_type="application/json",
        sha256=hashlib.sha256(body).hexdigest(),
        fetched_at=datetime.datetime.now(datetime.UTC),
        origin=next(iter(Origin)),
    )


def _discovery() -> Path:
    googleapiclient = pytest.importorskip("googleapiclient")
    return Path(googleapiclient.__file__).parent / "discovery_cache" / "documents" / "gmail.v1.json"


@pytest.mark.parametrize(
    ("name", "where", "most"),
    [
        ("openapi", lambda: _SPECS / "reach" / "asana.json", 0),
        ("swagger", lambda: _SPECS / "swagger2-security.json", 0),
        ("discovery", _discovery, 0),
        # The scope-clause parser's mutually recursive closures (a few hundred objects), never the tree.
        ("graphql", lambda: _SPECS / "graphql" / "shopify-admin-2026-10.trimmed.json", 1_000),
    ],
)
def test_building_an_index_leaves_no_cyclic_garbage(name: str, where: Any, most: int) -> None:
    spec = _fetched(where(), f"https://{name}.example/spec.json")
    gc.collect()
    gc.disable()
    try:
        index = build_index(spec)
        assert index.operations
        del index
        assert gc.collect() <= most
    finally:
        gc.enable()
