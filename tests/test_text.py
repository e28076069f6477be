"""ramscope._text: the one place that knows which characters are invisible or reorder text (issue 14,
item 16). Every human-readable output escapes them and the display-name check ignores them."""

from __future__ import annotations

import itertools
import sys
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from ramscope._text import BIDI_CONTROLS, DEFAULT_IGNORABLE, for_terminal, is_invisible, strip_invisible
from ramscope.naming import check_display_name

#: The issue's examples, each a member of Unicode's Default_Ignorable_Code_Point.
ISSUE_EXAMPLES = [0x034F, 0xFE00, 0xFE0F, 0xE0100, 0xE01EF, 0x180B, 0x180D, 0xE0000, 0xE0020, 0xE007F]
ISSUE_EXAMPLES += [0x1D173, 0x1D17A, 0x1BCA0, 0x1BCA3, 0x00AD]

#: Format characters (Cf) that Default_Ignorable_Code_Point leaves out by its derivation in
#: DerivedCoreProperties.txt: the interlinear annotation controls (FFF9..FFFB), the Egyptian
#: hieroglyph format controls (13430..1343F) and the Prepended_Concatenation_Mark characters.
_CF_NOT_IGNORABLE = {*range(0xFFF9, 0xFFFC), *range(0x13430, 0x13440), *range(0x0600, 0x0606), 0x06DD, 0x070F}
_CF_NOT_IGNORABLE |= {0x0890, 0x0891, 0x08E2, 0x110BD, 0x110CD}

_IGNORABLE = {cp for lo, hi, _ in DEFAULT_IGNORABLE for cp in range(lo, hi + 1)}
_invisible_cp = st.sampled_from(sorted(_IGNORABLE | {cp for cp, _ in BIDI_CONTROLS}))
_unsafe_cp = st.sampled_from(sorted(_IGNORABLE | {cp for cp, _ in BIDI_CONTROLS} | {0x1B, 0x9B, 0x7F, 0x2028}))


def test_every_issue_example_is_invisible_and_escaped() -> None:
    for cp in ISSUE_EXAMPLES:
        ch = chr(cp)
        assert is_invisible(ch), hex(cp)
        assert ch not in for_terminal(f"a{ch}b"), hex(cp)
    assert for_terminal("scope\U000e0020") == "scope\\U000e0020"  # unambiguous beyond the BMP
    assert for_terminal("soft\u00adhyphen") == "soft\\xadhyphen"


def test_the_table_holds_every_format_character_the_derivation_includes() -> None:
    """Every Cf code point (per this Python's unicodedata) is in the table, but for the derivation's exclusions."""
    missing = [
        hex(cp)
        for cp in range(sys.maxunicode + 1)
        if unicodedata.category(chr(cp)) == "Cf" and cp not in _CF_NOT_IGNORABLE and cp not in _IGNORABLE
    ]
    assert missing == []


def test_the_table_is_sorted_and_disjoint() -> None:
    bounds = [(lo, hi) for lo, hi, _ in DEFAULT_IGNORABLE]
    assert all(lo <= hi for lo, hi in bounds)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(bounds))
    assert len(_IGNORABLE) == 4174  # Unicode 15.1 / 16.0: 4,174 code points


def test_bidi_controls_are_the_unicode_bidi_control_property() -> None:
    """Bidi_Control (PropList.txt): ALM, LRM, RLM, the embeddings/overrides and the isolates, all escaped."""
    assert {cp for cp, _ in BIDI_CONTROLS} == {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}
    assert all(is_invisible(chr(cp)) for cp, _ in BIDI_CONTROLS)


@settings(max_examples=300, deadline=None)
@given(st.text(), st.lists(st.tuples(st.integers(min_value=0), _unsafe_cp), max_size=6))
def test_for_terminal_never_lets_an_unsafe_character_through(text: str, inserts: list[tuple[int, int]]) -> None:
    for pos, cp in inserts:
        i = pos % (len(text) + 1)
        text = text[:i] + chr(cp) + text[i:]
    out = for_terminal(text)
    assert not any(is_invisible(ch) or unicodedata.category(ch) == "Cc" for ch in out)
    assert "\u2028" not in out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=15), _invisible_cp), min_size=1, max_size=4))
def test_invisible_characters_do_not_hide_an_impersonation(inserts: list[tuple[int, int]]) -> None:
    """'Goo\\u034fgle Calendar' on a foreign host was not flagged; any invisible character anywhere is folded."""
    name = "Google Calendar"
    for pos, cp in inserts:
        i = pos % (len(name) + 1)
        name = name[:i] + chr(cp) + name[i:]
    check = check_display_name(name, url="https://evil.example/calendar.json", title="")
    assert check.status == "impersonation", ascii(name)
    assert strip_invisible(name) == "Google Calendar"


def test_the_issue_name_is_flagged() -> None:
    assert check_display_name("Goo\u034fgle Calendar", url="https://evil.example/c.json", title="").status == (
        "impersonation"
    )
