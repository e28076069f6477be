"""Issue 30, item 12: the GraphQL SDL tokenizer read strings with a repeated group of alternatives, which
keeps a backtracking entry per character: an unterminated triple quote before 30 MB of text (a 29 KB
gzip) took 5.8 GB and 16 s to fail (the test uses 8 MB). Strings are now scanned by search: the same
input fails at once, in the memory of the text. Peak RSS is measured in a child process (`ru_maxrss`)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ramscope.errors import SpecError
from ramscope.specs.graphql import _tokens, parse_sdl

#: Builds each SDL from its gzip in the child, parses it, prints how much the peak RSS grew (MiB).
_CHILD = r"""
import gzip, json, resource, sys
from ramscope.errors import SpecError
from ramscope.specs.graphql import parse_sdl
out = []
for head, unit, count in json.loads(sys.argv[1]):
    packed = gzip.compress(b"type Query { a: String }\n" + head.encode() + unit.encode() * count, 6)
    text = gzip.decompress(packed).decode()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        parse_sdl(text)
        err = ""
    except SpecError as exc:
        err = str(exc)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out.append({"packed": len(packed), "grew_mib": (after - before) / 1024, "error": err})
    del text
print(json.dumps(out))
"""

CASES = [
    ('"""', "x", 8_000_000, "unterminated block string"),
    ('"', "x", 8_000_000, "unterminated string"),
    ('"""', '\\"""', 2_000_000, "unterminated block string"),
    ('"', "\\x", 4_000_000, "unterminated string"),
    # A run of backslashes (no quote after it): the closing-quote search is possessive (was +490 MiB at 16 M).
    ('"', "\\\\", 4_000_000, "unterminated string"),
]


def test_unterminated_strings_fail_in_bounded_memory() -> None:
    """An unterminated block string, string, block of escaped triples, string of escapes: each a small
    download, each refused, none growing the peak RSS (was ~1,500 MiB for the block at 8 MB, 5,800 at 30)."""
    arg = json.dumps([c[:3] for c in CASES])
    out = subprocess.run([sys.executable, "-c", _CHILD, arg], capture_output=True, text=True, timeout=600, check=True)
    for got, (_, _, _, error) in zip(json.loads(out.stdout), CASES, strict=True):
        assert got["packed"] < 64 * 1024  # a small download
        assert error in got["error"]
        # The first case's text is still held when the next is built: only growth past it counts.
        assert got["grew_mib"] < 24, got


def test_strings_tokenize_as_graphql_says() -> None:
    toks = [(t.kind, t.value) for t in _tokens('"""a\\"""b""" "x\\"y" "" """""" q')]
    assert toks == [
        ("block", '"""a\\"""b"""'),
        ("string", '"x\\"y"'),
        ("string", '""'),
        ("block", '""""""'),
        ("name", "q"),
    ]


def test_a_string_may_not_span_lines() -> None:
    with pytest.raises(SpecError, match="unterminated string"):
        parse_sdl('type Query {\n  "a\n  b" a: String\n}\n')
