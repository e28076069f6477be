"""Making strangers' strings safe to show, and the one list of characters that hide.

Card and spec strings reach terminals, Markdown and HTML. On a terminal an ESC
can move the cursor, recolour, retitle the window or plant an OSC 8 link; a
bidi override (U+202E) can make ``evil.com/moc.elgoog`` read as something else;
invisible characters (zero-width space, combining grapheme joiner, variation
selectors, tag characters ...) hide differences between look-alike names and
ids. ``for_terminal`` turns every such character into a visible escape, so what
is shown is what is there; ``strip_invisible`` removes the invisible ones before
names are compared (``ramscope.naming``).

Which characters hide is Unicode's decision, not ours: the whole
``Default_Ignorable_Code_Point`` property (:data:`DEFAULT_IGNORABLE`) plus the
``Bidi_Control`` characters (:data:`BIDI_CONTROLS`). Every output escaping and the
display-name comparison use these two tables, here and nowhere else.
"""

from __future__ import annotations

import re

__all__ = [
    "BIDI_CONTROLS",
    "DEFAULT_IGNORABLE",
    "for_terminal",
    "is_invisible",
    "one_line",
    "strip_invisible",
]

#: Unicode ``Default_Ignorable_Code_Point``, as listed in DerivedCoreProperties.txt (Unicode 15.1 and
#: 16.0 list the same 4,174 code points): (first, last, what). Derived there as
#: Other_Default_Ignorable_Code_Point + Cf (format) + Variation_Selector - White_Space - FFF9..FFFB
#: - 13430..1343F - Prepended_Concatenation_Mark. Written out rather than computed because Python's
#: ``unicodedata`` has no such property; ``tests/test_text.py`` checks the table against every Cf
#: character this Python knows, and the ranges include the unassigned code points Unicode reserves
#: as ignorable, so characters assigned there later are covered already.
DEFAULT_IGNORABLE: tuple[tuple[int, int, str], ...] = (
    (0x00AD, 0x00AD, "SOFT HYPHEN"),
    (0x034F, 0x034F, "COMBINING GRAPHEME JOINER"),
    (0x061C, 0x061C, "ARABIC LETTER MARK"),
    (0x115F, 0x1160, "HANGUL CHOSEONG FILLER, HANGUL JUNGSEONG FILLER"),
    (0x17B4, 0x17B5, "KHMER VOWEL INHERENT AQ, AA"),
    (0x180B, 0x180F, "MONGOLIAN FREE VARIATION SELECTORS ONE-FOUR, MONGOLIAN VOWEL SEPARATOR"),
    (0x200B, 0x200F, "ZERO WIDTH SPACE, ZWNJ, ZWJ, LEFT-TO-RIGHT MARK, RIGHT-TO-LEFT MARK"),
    (0x202A, 0x202E, "LEFT-TO-RIGHT EMBEDDING .. RIGHT-TO-LEFT OVERRIDE"),
    (0x2060, 0x206F, "WORD JOINER, INVISIBLE OPERATORS, ISOLATES, deprecated format characters (2065 reserved)"),
    (0x3164, 0x3164, "HANGUL FILLER"),
    (0xFE00, 0xFE0F, "VARIATION SELECTOR-1 .. VARIATION SELECTOR-16"),
    (0xFEFF, 0xFEFF, "ZERO WIDTH NO-BREAK SPACE (BOM)"),
    (0xFFA0, 0xFFA0, "HALFWIDTH HANGUL FILLER"),
    (0xFFF0, 0xFFF8, "reserved"),
    (0x1BCA0, 0x1BCA3, "SHORTHAND FORMAT LETTER OVERLAP .. UP STEP"),
    (0x1D173, 0x1D17A, "MUSICAL SYMBOL BEGIN BEAM .. END PHRASE"),
    (0xE0000, 0xE0FFF, "LANGUAGE TAG, TAG SPACE .. CANCEL TAG, VARIATION SELECTOR-17 .. -256, reserved"),
)

#: Unicode ``Bidi_Control`` (PropList.txt): the characters that reorder what surrounds them. All are
#: default-ignorable too; listed so the intent is explicit and checked.
BIDI_CONTROLS: tuple[tuple[int, str], ...] = (
    (0x061C, "ARABIC LETTER MARK"),
    (0x200E, "LEFT-TO-RIGHT MARK"),
    (0x200F, "RIGHT-TO-LEFT MARK"),
    (0x202A, "LEFT-TO-RIGHT EMBEDDING"),
    (0x202B, "RIGHT-TO-LEFT EMBEDDING"),
    (0x202C, "POP DIRECTIONAL FORMATTING"),
    (0x202D, "LEFT-TO-RIGHT OVERRIDE"),
    (0x202E, "RIGHT-TO-LEFT OVERRIDE"),
    (0x2066, "LEFT-TO-RIGHT ISOLATE"),
    (0x2067, "RIGHT-TO-LEFT ISOLATE"),
    (0x2068, "FIRST STRONG ISOLATE"),
    (0x2069, "POP DIRECTIONAL ISOLATE"),
)


def _char_class(ranges: list[tuple[int, int]]) -> str:
    return "".join(
        re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in ranges
    )


_HIDDEN_RANGES = [(lo, hi) for lo, hi, _ in DEFAULT_IGNORABLE] + [(cp, cp) for cp, _ in BIDI_CONTROLS]
_HIDDEN = re.compile(f"[{_char_class(_HIDDEN_RANGES)}]")

# Shown escaped besides the hidden ones: C0 and C1 controls and DEL (terminal escapes, line breaks),
# LINE and PARAGRAPH SEPARATOR (line breaks), the interlinear annotation controls (FFF9..FFFB: format
# characters that hide the annotated text, though not default-ignorable).
_CONTROLS = [(0x00, 0x1F), (0x7F, 0x9F), (0x2028, 0x2029), (0xFFF9, 0xFFFB)]
_UNSAFE = re.compile(f"[{_char_class(_CONTROLS + _HIDDEN_RANGES)}]")


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    if ch == "\r":
        return "\\r"
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    # Beyond the BMP, eight digits: "\ue0020" would read as U+E002 followed by "0".
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def is_invisible(ch: str) -> bool:
    """True for a default-ignorable or bidi-control character (one character)."""
    return _HIDDEN.fullmatch(ch) is not None


def strip_invisible(text: str) -> str:
    """``text`` without its default-ignorable and bidi-control characters (for comparing names)."""
    return _HIDDEN.sub("", text)


def for_terminal(text: str, *, max_len: int | None = None) -> str:
    """Escape control, bidi and invisible characters; optionally shorten with an ellipsis."""
    out = _UNSAFE.sub(_escape, text)
    if max_len is not None and len(out) > max_len:
        out = out[: max(0, max_len - 1)] + "…"
    return out


def one_line(text: str, *, max_len: int = 200) -> str:
    """Collapse whitespace runs (after escaping) for table cells and one-line messages."""
    return for_terminal(" ".join(text.split()), max_len=max_len)
