"""Making strangers' strings safe to show.

Card and spec strings reach terminals, Markdown and HTML. On a terminal an ESC
can move the cursor, recolour, retitle the window or plant an OSC 8 link; a
bidi override (U+202E) can make ``evil.com/moc.elgoog`` read as something else;
zero-width characters hide differences between look-alike ids. ``for_terminal``
turns every such character into a visible escape, so what is shown is what is
there.
"""

from __future__ import annotations

import re

__all__ = ["for_terminal", "one_line"]

# C0 and C1 controls, DEL; bidi embeddings, overrides, isolates and marks; zero-width
# and other invisible formatting characters; line/paragraph separators.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\u3164\ufeff\uffa0\ufff9-\ufffb]"
)


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    if ch == "\r":
        return "\\r"
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: str, *, max_len: int | None = None) -> str:
    """Escape control, bidi and invisible characters; optionally shorten with an ellipsis."""
    out = _UNSAFE.sub(_escape, text)
    if max_len is not None and len(out) > max_len:
        out = out[: max(0, max_len - 1)] + "…"
    return out


def one_line(text: str, *, max_len: int = 200) -> str:
    """Collapse whitespace runs (after escaping) for table cells and one-line messages."""
    return for_terminal(" ".join(text.split()), max_len=max_len)
