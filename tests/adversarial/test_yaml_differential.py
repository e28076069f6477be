"""Differential fuzzing of the YAML fast path against libyaml (issue 22, item 5).

rapidyaml reads specs five times faster than libyaml, but a spec must mean one thing: wherever the
fast path gives a value it must be the one libyaml gives, and where libyaml refuses a document the
fast path must refuse it too (hand it over). Three seeded generators write documents from the
classes where the two parsers were found to differ (lone CR, ``? k\\n:x: y``, a comment in a flow
mapping, a BOM at the start of a line, keys Python's dict merges), among ordinary YAML:

* ``soup``: lines of keys, values, indicators, comments, explicit keys, flow openers and closers,
  with indentation and every line break libyaml knows;
* ``structured``: real documents (``yaml.safe_dump`` of random values, block and flow style),
  mutated by one to three of the hostile edits;
* ``chars``: short strings over YAML's indicator characters, CR and BOM included.

The default run reads 3,000 documents (1,000 per generator); ``-m slow`` reads 120,000.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from ramscope._parse import _FALLBACK, _fast_yaml, _parse_yaml_libyaml, parse_bytes
from ramscope.errors import RamscopeError
from ramscope.specs._doc import SPEC_LIMITS
from tests.test_yaml_parser import _canon

KEYS = ["a", "b", "k", "security", "x y", "'q'", '"d"', "1", "0x1", "yes", "no", "0", "~", "null", ":x", "-a", "?b"]
KEYS += ["a#b", "a:b", "<<", "x\ufeff", "true", "'1'"]
VALUES = ["1", "b", "yes", "~", "", "012", "1e3", "'s'", '"t"', "[1, 2]", "{a: b}", "[]", "{}", "x #c", "x#c"]
VALUES += ["a: b", "-", "- x", "|", ">-", "'it''s'", '"\\t"', "[o, {p: q}]", ".inf", "2024-01-01", "x y", "&a 1"]
VALUES += ["*a", "!!str 1", "? x", ":x", "[read]", "{o: [read]}"]
#: Line breaks: libyaml's (LF, CRLF, a lone CR, NEL, U+2028) in the proportions a hostile host might use.
BREAKS = ["\n"] * 12 + ["\r\n"] * 3 + ["\r", "\x85", "\u2028"]
#: What may start a line: mostly nothing; a BOM (libyaml skips it at column 0), a tab, a comment ended by a lone CR.
PREFIXES = [""] * 20 + ["\ufeff", "\t", " \ufeff", "# c\r"]
LINE_EDGES = ["{", "}", "[", "]", "{a: b #c", "a: b #c", "}, ", "c: d}", "  text", "security: [{o: [read]}]"]


def soup(r: random.Random) -> str:
    """A few lines of YAML-ish text, each built from one of the line forms libyaml knows."""
    lines = []
    for _ in range(r.randint(1, 7)):
        indent = " " * r.choice([0, 0, 0, 1, 2, 2, 4, 6])
        k, v = r.choice(KEYS), r.choice(VALUES)
        body = r.choice(
            [
                f"{k}: {v}",
                f"{k}: {v}",
                f"{k}:",
                f"- {v}",
                f"- {k}: {v}",
                f"? {k}",
                f":{k}: {v}",
                f": {v}",
                "# " + r.choice(["note", "x: y", "{", "]"]),
                r.choice(LINE_EDGES),
                v,
                f"{k}: {v} #" + r.choice(["c", " c: d", "}"]),
            ]
        )
        lines.append(r.choice(PREFIXES) + indent + body + r.choice(BREAKS))
    text = "".join(lines)
    return text.rstrip("\n") if r.random() < 0.2 else text


def _random_value(r: random.Random, depth: int = 0) -> Any:
    kind = r.randrange(6 if depth < 3 else 3)
    if kind == 0:
        return r.choice(["x", "yes", "1", "012", "~", "a #b", "x: y", "-", "1e3", "", "é", ":k", "\ufeffz", "a\rb"])
    if kind == 1:
        return r.randint(-5, 5)
    if kind == 2:
        return r.choice([None, True, False, 1.5])
    if kind == 3:
        return [_random_value(r, depth + 1) for _ in range(r.randint(0, 3))]
    keys = ["a", "b", "c", "1", "yes", ":k", "? q", "x y", "0", "false"]
    return {r.choice(keys): _random_value(r, depth + 1) for _ in range(r.randint(0, 3))}


def structured(r: random.Random) -> str:
    """A real YAML document, then up to three hostile edits of its lines."""
    value = {"paths": _random_value(r), "security": _random_value(r)}
    text = yaml.safe_dump(
        value, default_flow_style=r.choice([False, True, None]), width=r.choice([20, 80]), allow_unicode=True
    )
    lines = text.split("\n")
    for _ in range(r.randint(0, 3)):
        i = r.randrange(len(lines))
        line = lines[i]
        lines[i] = r.choice(
            [
                line + " #c",
                "\ufeff" + line,
                line + "\r",
                "# c\r" + line,
                line.replace(" ", "\t", 1),
                "? " + line,
                ":" + line,
                line + "\r      security: [{o: [read]}]",
            ]
        )
    return r.choice(["\n", "\r\n", "\r"]).join(lines)


CHARS = "ab:- \n'\"[]{},#&*!|>?%\t~01\r\ufeffy"


def chars(r: random.Random) -> str:
    """Up to 30 characters over YAML's indicators, the line breaks and the BOM."""
    return "".join(r.choice(CHARS) for _ in range(r.randint(1, 30)))


GENERATORS: dict[str, Callable[[random.Random], str]] = {"soup": soup, "structured": structured, "chars": chars}


def _libyaml(text: str) -> tuple[str, str]:
    try:
        return ("ok", _canon(_parse_yaml_libyaml(text, "x.yaml", SPEC_LIMITS).value))
    except RamscopeError as exc:
        return ("error", str(exc))


def differences(generator: str, seed: int, count: int) -> tuple[list[tuple[str, str, str]], int]:
    """(text, fast value, libyaml's outcome) for every document read otherwise; and how many the fast path read."""
    r = random.Random(f"{generator}:{seed}")
    make = GENERATORS[generator]
    found: list[tuple[str, str, str]] = []
    fast_read = 0
    for _ in range(count):
        text = make(r)
        fast = _fast_yaml(text, SPEC_LIMITS)
        if fast is _FALLBACK:
            continue
        fast_read += 1
        expected = _libyaml(text)
        if expected != ("ok", _canon(fast)):
            found.append((text, _canon(fast), repr(expected)))
    return found, fast_read


REFUSED = "refused"
# The classes issue 22 named, each with libyaml's reading.
NAMED = {
    # A lone CR ends the comment for libyaml, so the operation's own `security` applies.
    "lone-cr": ("paths:\n  /x:\n    get:\n      # note\r      security: [{o: [read]}]\n", None),
    "explicit-key-then-colon-scalar": ("? k\n:x: y\n", {"k": None, ":x": "y"}),
    "comment-in-top-level-flow-mapping": ("{a: b #c\n}\n", {"a": "b"}),
    "comment-in-nested-flow-mapping": ("x:\n  {a: b #c\n  }\n", {"x": {"a": "b"}}),
    # libyaml refuses a BOM past the start of the stream; rapidyaml read it into the key.
    "bom-at-line-start": ("a: 1\n\ufeffb: 2\n", REFUSED),
    "bool-and-int-keys-python-merges": ("0x1: a\nyes: b\n", {"1": "b"}),
}


@pytest.mark.parametrize(("text", "value"), list(NAMED.values()), ids=list(NAMED))
def test_named_classes_read_as_libyaml_reads_them(text: str, value: Any) -> None:
    """Each class the issue names reads exactly as libyaml reads it, through the spec parser."""
    expected = _libyaml(text)
    fast = _fast_yaml(text, SPEC_LIMITS)
    assert fast is _FALLBACK or ("ok", _canon(fast)) == expected
    if value == REFUSED:
        assert expected[0] == "error"
        with pytest.raises(RamscopeError):
            parse_bytes(text.encode(), source="x.yaml", limits=SPEC_LIMITS, fmt="yaml")
        return
    if value is not None:
        assert expected == ("ok", _canon(value))
    got = parse_bytes(text.encode(), source="x.yaml", limits=SPEC_LIMITS, fmt="yaml").value
    assert ("ok", _canon(got)) == expected


def test_a_lone_cr_keeps_the_operations_own_security() -> None:
    """The issue's exploit: the operation's ``security`` is read, so the root ``admin`` does not apply."""
    text = "security: [{o: [admin]}]\npaths:\n  /x:\n    get:\n      # note\r      security: [{o: [read]}]\n"
    got = parse_bytes(text.encode(), source="x.yaml", limits=SPEC_LIMITS, fmt="yaml").value
    assert got["paths"]["/x"]["get"] == {"security": [{"o": ["read"]}]}


@pytest.mark.parametrize("generator", sorted(GENERATORS))
def test_generated_documents_read_as_libyaml_reads_them(generator: str) -> None:
    """1,000 documents per generator: no value differs, and nothing libyaml refuses is read."""
    found, fast_read = differences(generator, seed=0, count=1000)
    assert found == []
    assert fast_read > 0


@pytest.mark.slow
@pytest.mark.parametrize("generator", sorted(GENERATORS))
def test_forty_thousand_documents_per_generator_read_as_libyaml_reads_them(generator: str) -> None:
    """120,000 documents in all (40,000 per generator, other seeds): zero differences."""
    found, fast_read = differences(generator, seed=1, count=40_000)
    assert found == []
    assert fast_read > 0
