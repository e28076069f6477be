"""Rule globs compiled once, and matched without running every glob of a large list.

A rules file is a stranger's file: one of 200,000 globs (3.4 MB) made ``check`` take ~15 s per
card, because ``fnmatch`` keeps only the last 32,768 compiled patterns and recompiled each glob on
every value (issue 22). A :class:`GlobSet` reads each glob once for the literal text a match must
hold: what it starts with (a value is looked up once per distinct prefix length), else what it
ends with (the same, backwards), else its longest literal run (a substring test). Only a glob
whose literal text the value holds is run as a regular expression, compiled the first time.

Matching is ``fnmatch.fnmatchcase``'s: case-sensitive, the same on every platform; ``*`` also
matches ``/``.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence

__all__ = ["GlobSet"]

_WILD = re.compile(r"[*?\[]")
_LITERAL_RUN = re.compile(r"[^*?\[\]]+")
#: Literal prefixes and suffixes are filed under at most this many characters: a list of distinct
#: long prefixes then costs at most ``_KEY`` dictionary lookups per value.
_KEY = 24


class GlobSet:
    """An ordered list of globs; :meth:`first` names the first (in the order given) that matches."""

    __slots__ = ("_compiled", "_exact", "_middle", "_plen", "_prefixed", "_slen", "_suffixed", "globs")

    def __init__(self, globs: Iterable[str]) -> None:
        self.globs: tuple[str, ...] = tuple(globs)
        #: A glob without wildcards matches only itself: value -> its first position.
        self._exact: dict[str, int] = {}
        self._prefixed: dict[str, list[int]] = {}
        self._suffixed: dict[str, list[int]] = {}
        #: Globs with no literal prefix or suffix: (position, a literal run every match contains).
        self._middle: list[tuple[int, str]] = []
        self._compiled: dict[int, re.Pattern[str]] = {}
        for i, g in enumerate(self.globs):
            m = _WILD.search(g)
            if m is None:
                self._exact.setdefault(g, i)
                continue
            if m.start():
                self._prefixed.setdefault(g[: min(m.start(), _KEY)], []).append(i)
                continue
            tail = len(g) - max(g.rfind("*"), g.rfind("?"), g.rfind("]"), g.rfind("[")) - 1
            if tail:
                self._suffixed.setdefault(g[len(g) - min(tail, _KEY) :], []).append(i)
                continue
            # Inside [...] a run is a set of characters, not text a match must contain.
            runs = [] if "[" in g else _LITERAL_RUN.findall(g)
            self._middle.append((i, max(runs, key=len, default="")))
        self._plen = sorted({len(k) for k in self._prefixed})
        self._slen = sorted({len(k) for k in self._suffixed})

    def __len__(self) -> int:
        return len(self.globs)

    def __bool__(self) -> bool:
        return bool(self.globs)

    def first(self, value: str) -> str | None:
        """The first glob (in the order given) that ``value`` matches, or ``None``."""
        candidates: list[int] = [i for i, run in self._middle if run in value]
        exact = self._exact.get(value)
        if exact is not None:
            candidates.append(exact)
        for n in self._plen:
            if n > len(value):
                break
            candidates += self._prefixed.get(value[:n], ())
        for n in self._slen:
            if n > len(value):
                break
            candidates += self._suffixed.get(value[len(value) - n :], ())
        for i in sorted(candidates):
            if i == exact or self._regex(i).match(value):
                return self.globs[i]
        return None

    def any(self, values: Sequence[str]) -> bool:
        return any(self.first(v) is not None for v in values)

    def _regex(self, i: int) -> re.Pattern[str]:
        rx = self._compiled.get(i)
        if rx is None:
            rx = self._compiled[i] = re.compile(fnmatch.translate(self.globs[i]))
        return rx
