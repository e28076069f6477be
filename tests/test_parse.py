"""Bounded parsing of untrusted JSON and YAML: one clear error, never a traceback or a hang."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ramscope import InputError, LimitError, load_card
from ramscope._parse import Limits, json_positions, parse_bytes


def _alias_bomb(levels: int = 12) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("content", "suffix", "error", "match"),
    [
        ('{"a": [1, 2,, 3]}', ".json", InputError, r":1:13: invalid JSON"),
        ("a: [1, 2\nb: 3\n", ".yaml", InputError, r":2:2: invalid YAML"),
        ("a: 1\na: 2\n", ".yaml", InputError, r":2:1: duplicate key 'a'"),
        ('{"a": 1,\n "a": 2}', ".json", InputError, r":2:2: duplicate key 'a'"),
        (_alias_bomb(), ".yaml", LimitError, r"alias bomb"),
        ("a: &x [*x]\n", ".yaml", InputError, r"refers to itself"),
        ("[" * 5000 + "]" * 5000, ".json", LimitError, r"nesting is too deep"),
        ("[" * 5000 + "]" * 5000, ".yaml", LimitError, r"nesting is too deep"),
        ("a: !!python/object:os.system {}\n", ".yaml", InputError, r"unsupported YAML"),
        ("", ".json", InputError, r"invalid JSON"),
        ("", ".yaml", InputError, r"is empty"),
        (b"\xff\xfe{\x00}\x00", ".json", InputError, r"UTF-16"),
        (b'{"a": "\xc0\xaf"}', ".json", InputError, r":1:8: is not valid UTF-8: byte 0xc0"),
        (b'{"a": "\x00"}', ".json", InputError, r"invalid JSON"),
        (b"a: \x00\n", ".yaml", InputError, r"invalid YAML"),
    ],
    ids=[
        "json-syntax",
        "yaml-syntax",
        "yaml-duplicate-key",
        "json-duplicate-key",
        "yaml-alias-bomb",
        "yaml-recursive-alias",
        "json-deep",
        "yaml-deep",
        "yaml-python-tag",
        "json-empty",
        "yaml-empty",
        "utf16",
        "overlong-utf8",
        "json-nul",
        "yaml-nul",
    ],
)
def test_bad_input_gives_one_clear_error(
    write_card: Callable[..., Path], content: str | bytes, suffix: str, error: type[Exception], match: str
) -> None:
    """Each malformed input is refused with an error naming file, line and column where known."""
    path = write_card(content, suffix=suffix, raw=True)
    with pytest.raises(error, match=match) as info:
        load_card(path)
    assert str(info.value).startswith(str(path))


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    """Missing files and directories are input errors that name the path."""
    with pytest.raises(InputError, match="no such file"):
        load_card(tmp_path / "nope.json")
    with pytest.raises(InputError, match="is a directory"):
        load_card(tmp_path)


def test_oversize_file_is_refused_before_reading(tmp_path: Path) -> None:
    """A 50 MB file is refused from its size alone, without parsing it."""
    path = tmp_path / "big.json"
    with path.open("wb") as fh:
        fh.truncate(50 * 1024 * 1024)
    with pytest.raises(LimitError, match="over the limit"):
        load_card(path)


def test_bom_is_accepted(write_card: Callable[..., Path], seed_manifest: dict[str, Any]) -> None:
    """A UTF-8 byte order mark is dropped, as editors on some systems add one."""
    path = write_card(b"\xef\xbb\xbf" + json.dumps(seed_manifest).encode(), raw=True)
    assert len(load_card(path).manifest.resources) == 3


def test_yaml_scalars_stay_json_compatible() -> None:
    """Dates and integer keys in YAML come out as strings, as they would from JSON."""
    doc = parse_bytes(b"version: 2024-01-02\n200: ok\nflag: true\n", source="x.yaml", fmt="yaml").value
    assert doc == {"version": "2024-01-02", "200": "ok", "flag": True}


@pytest.mark.parametrize("positions", [True, False])
def test_yaml_plain_equals_sign_is_a_string(positions: bool) -> None:
    """A plain ``=`` (YAML 1.1's "value" type; Zendesk's trigger examples have ``change: =``) is "="."""
    doc = parse_bytes(b"change: =\nitems: [=, x]\n", source="s.yaml", fmt="yaml", limits=Limits(positions=positions))
    assert doc.value == {"change": "=", "items": ["=", "x"]}


def test_yaml_flow_style_with_brace_is_sniffed() -> None:
    """A document starting with '{' that is YAML, not JSON, still loads when sniffing."""
    doc = parse_bytes(b"{a: 1, b: [x, y]}", source="<stdin>").value
    assert doc == {"a": 1, "b": ["x", "y"]}


def test_specs_may_relax_duplicate_keys() -> None:
    """Specs (not cards) may be parsed leniently with the fast parser."""
    value = parse_bytes(b'{"a": 1, "a": 2}', source="s", limits=Limits(strict_keys=False)).value
    assert value == {"a": 2}


def test_json_positions_cover_nested_values() -> None:
    """The position index knows objects, arrays, keys with slashes and escapes."""
    text = '{\n  "a/b": [1, {"c": "x\\"y"}],\n  "d": {}\n}'
    pos = json_positions(text)
    assert pos[""] == (1, 1)
    assert pos["/a~1b"] == (2, 10)
    assert pos["/a~1b/0"] == (2, 11)
    assert pos["/a~1b/1/c"] == (2, 20)
    assert pos["/d"] == (3, 8)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
    max_leaves=25,
)


@given(_json)
@settings(max_examples=200)
def test_positions_agree_with_the_parser(value: Any) -> None:
    """Every pointer into any JSON document gets the position where its value's text starts."""
    text = json.dumps(value, indent=1)
    pos = json_positions(text)
    lines = text.splitlines()
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        ptr, v = stack.pop()
        line, col = pos[ptr]
        assert json.JSONDecoder().raw_decode(lines[line - 1][col - 1 :] + "\n".join(["", *lines[line:]]))[0] == v
        if isinstance(v, dict):
            stack.extend((f"{ptr}/{k.replace('~', '~0').replace('/', '~1')}", c) for k, c in v.items())
        elif isinstance(v, list):
            stack.extend((f"{ptr}/{i}", c) for i, c in enumerate(v))


@given(st.binary(max_size=200))
@settings(max_examples=300)
def test_arbitrary_bytes_never_crash(data: bytes) -> None:
    """Random bytes as a card give a Card or an InputError, nothing else."""
    with contextlib.suppress(InputError):
        load_card(data, name="fuzz")
