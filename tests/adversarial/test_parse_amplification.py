"""Parse amplification: a small text that parses large is refused by its node count (issue 22, item 9).

Bytes alone do not bound memory: 60 MiB of ``{},`` (61 KB gzipped) built ~2 GB of dicts. Every parse
now bounds nodes too, before building them: JSON by a count of its separators, YAML by an event scan
where its separators allow more nodes than the bound, libyaml's node graph at one million nodes.
"""

from __future__ import annotations

import pytest

from ramscope import InputError, LimitError, _parse
from ramscope._parse import Limits, check_json_nodes, json_nodes_at_most, parse_bytes, yaml_nodes_at_most
from ramscope.errors import SpecError
from ramscope.specs._doc import SPEC_LIMITS, parse_spec_body


def test_the_json_bound_is_an_upper_bound() -> None:
    """``1 + 2 × (commas + "{" + "[")`` is never below the values and keys a document builds."""
    assert json_nodes_at_most(b'{"a": [1, 2], "b": {}}') == 1 + 2 * (2 + 2 + 1)
    assert json_nodes_at_most("[{},{}]") == 1 + 2 * (1 + 2 + 1)


def test_a_json_spec_that_builds_more_than_the_bound_is_refused_before_parsing() -> None:
    """12 MB of ``{},`` (4.1 million dicts, 16 million by the bound) is an unsupported spec, not 0.5 GB of dicts."""
    body = b"[" + b"{}," * 4_100_000 + b"{}]"
    with pytest.raises(SpecError, match="more than 8,000,000 values and keys"):
        parse_spec_body(body, source="https://specs.example.com/bomb.json")


def test_commas_inside_strings_do_not_count() -> None:
    """A document over the cheap bound only because of prose is counted again without its strings, and read."""
    body = b'{"description": "' + b"," * 9_000_000 + b'"}'
    assert json_nodes_at_most(body) > SPEC_LIMITS.max_yaml_nodes
    check_json_nodes(body, SPEC_LIMITS.max_yaml_nodes, "x")
    assert len(parse_spec_body(body, source="x")["description"]) == 9_000_000


def test_a_card_in_json_is_bounded_by_its_limits() -> None:
    """Cards (strict JSON) use the same bound, from ``Limits.max_yaml_nodes``."""
    text = ("[" + "{}," * 200 + "{}]").encode()
    with pytest.raises(LimitError, match="more than 100 values and keys"):
        parse_bytes(text, source="card.json", limits=Limits(max_yaml_nodes=100), fmt="json")


def test_yaml_read_fast_is_counted_before_rapidyaml_builds_its_tree() -> None:
    """A YAML spec whose separators allow more nodes than the bound is counted by events, and refused."""
    text = b"x: [" + b"a," * 2000 + b"a]\n"
    assert yaml_nodes_at_most(text) > 1000
    with pytest.raises(LimitError, match="more than 1,000 nodes"):
        parse_bytes(text, source="s.yaml", limits=Limits(positions=False, max_yaml_nodes=1000), fmt="yaml")


def test_yaml_under_the_bound_by_events_is_read() -> None:
    """The event count is exact where the separator count is not: ``a-b`` is one node."""
    text = b"x: [" + b"a-b-c," * 300 + b"a]\n"
    assert yaml_nodes_at_most(text) > 1000
    doc = parse_bytes(text, source="s.yaml", limits=Limits(positions=False, max_yaml_nodes=1000), fmt="yaml")
    assert len(doc.value["x"]) == 301


def test_libyamls_node_graph_is_capped_whatever_the_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """A document handed to libyaml (an anchor) is refused past LIBYAML_MAX_NODES, though the spec bound is higher."""
    monkeypatch.setattr(_parse, "LIBYAML_MAX_NODES", 1000)
    text = b"y: &x 1\nx:\n" + b"- {}\n" * 2000
    with pytest.raises(InputError, match="more than 1,000 nodes"):
        parse_bytes(text, source="s.yaml", limits=SPEC_LIMITS, fmt="yaml")
