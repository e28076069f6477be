"""Which operation of a spec an observed call is: its concrete path against the spec's path templates.

The resolver (:mod:`ramscope.derive.resolve`) matches templates the way a card writes them
(``{calendarId}`` = ``{id}``); a recorded call has the values filled in (``/calendars/primary``).
This module finds the template a concrete path instantiates: literal segments beat parameters,
single-segment parameters beat Discovery's reserved expansion (``{+name}``), and a tie between two
operations is an ambiguity, never a guess. The operation found is then declared by name and
resolved through :func:`ramscope.derive.resolve.resolve` like any other (:mod:`.draft`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..specs.model import OperationEntry, SpecIndex, SpecKind

__all__ = ["Match", "OperationMatcher", "matcher_for"]

_PARAM = re.compile(r"\{([+#./;?&]?)[^{}]*\}")
#: Concrete paths matched per spec are remembered up to this many (a HAR repeats its URLs).
_MEMO = 65_536


@dataclass(frozen=True, slots=True)
class Match:
    """The operation a call is (``entry``), or the operations it could be (``ambiguous``), or neither."""

    entry: OperationEntry | None
    ambiguous: tuple[OperationEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class _Template:
    regex: re.Pattern[str]
    #: Higher is more specific: (literal segments, single-segment parameters, -multi-segment parameters).
    score: tuple[int, int, int]
    entry: OperationEntry


def _compile(template: str, entry: OperationEntry) -> tuple[_Template, int, str | None, bool] | None:
    """The template's matcher, its segment count, its first segment if literal, and whether it spans segments."""
    t = template.split("?", 1)[0].split("#", 1)[0]
    if not t.startswith("/"):
        t = "/" + t
    if len(t) > 1 and t.endswith("/"):
        t = t[:-1]
    segments = t.split("/")[1:]
    literal = single = multi = 0
    parts: list[str] = []
    for seg in segments:
        pos = 0
        out = []
        has_param = False
        for m in _PARAM.finditer(seg):
            out.append(re.escape(seg[pos : m.start()]))
            if m.group(1) in {"+", "#"} or m.group(0).endswith("*}"):
                out.append(".+")
                multi += 1
            else:
                out.append("[^/]+")
                single += 1
            has_param = True
            pos = m.end()
        out.append(re.escape(seg[pos:]))
        if not has_param:
            literal += 1
        parts.append("".join(out))
    try:
        regex = re.compile("/" + "/".join(parts) + "/?")
    except re.error:
        return None
    first = segments[0] if segments and "{" not in segments[0] else None
    return _Template(regex, (literal, single, -multi), entry), len(segments), first, multi > 0


class OperationMatcher:
    """The operations of one REST spec, bucketed for matching many calls fast."""

    def __init__(self, index: SpecIndex) -> None:
        self.index = index
        #: (method, segment count, first literal segment or None) -> templates.
        self._fixed: dict[tuple[str, int, str | None], list[_Template]] = {}
        #: method -> templates with a multi-segment parameter.
        self._spanning: dict[str, list[_Template]] = {}
        self._memo: dict[tuple[str, tuple[str, ...]], Match] = {}
        if index.kind not in {SpecKind.OPENAPI, SpecKind.DISCOVERY}:
            return
        for e in index.operations:
            if not e.method:
                continue
            for spelling in dict.fromkeys(p for p in (e.full_path, e.path, *e.alt_paths) if p):
                compiled = _compile(spelling, e)
                if compiled is None:
                    continue
                tpl, n, first, spanning = compiled
                if spanning:
                    self._spanning.setdefault(e.method, []).append(tpl)
                else:
                    self._fixed.setdefault((e.method, n, first), []).append(tpl)
        for bucket in (*self._fixed.values(), *self._spanning.values()):
            bucket.sort(key=lambda tpl: tpl.score, reverse=True)

    def match(self, method: str, paths: Sequence[str]) -> Match:
        """The operation ``method`` on any of ``paths`` (spellings of one call's path) instantiates."""
        key = (method, tuple(paths))
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        best: tuple[int, int, int] | None = None
        found: dict[str, OperationEntry] = {}
        fixed = self._fixed
        for p in key[1]:
            t = p[:-1] if len(p) > 1 and p.endswith("/") else p
            segments = t.split("/")
            n = len(segments) - 1
            buckets = (
                fixed.get((method, n, segments[1] if n else None)),
                fixed.get((method, n, None)),
                self._spanning.get(method),
            )
            for bucket in buckets:
                # Each bucket is sorted most specific first: the first template that matches sets the bar.
                for tpl in bucket or ():
                    if best is not None and tpl.score < best:
                        break
                    if tpl.regex.fullmatch(p) is None:
                        continue
                    if best is None or tpl.score > best:
                        best, found = tpl.score, {}
                    found[tpl.entry.key] = tpl.entry
        if not found:
            result = Match(None)
        elif len(found) == 1:
            result = Match(next(iter(found.values())))
        else:
            result = Match(None, tuple(found.values()))
        if len(self._memo) >= _MEMO:
            self._memo.clear()
        self._memo[key] = result
        return result


_MATCHERS: dict[tuple[str, str], OperationMatcher] = {}


def matcher_for(index: SpecIndex) -> OperationMatcher:
    """The matcher of ``index``, built once per spec (a few recent specs are kept)."""
    key = (index.url, index.sha256)
    hit = _MATCHERS.get(key)
    if hit is None:
        if len(_MATCHERS) >= 16:
            _MATCHERS.pop(next(iter(_MATCHERS)))
        hit = _MATCHERS[key] = OperationMatcher(index)
    return hit
