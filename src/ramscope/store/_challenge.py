"""Parsing ``WWW-Authenticate`` (RFC 9110 11.6.1) without trusting the server to be tidy.

::

    WWW-Authenticate = #challenge
    challenge        = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
    auth-param       = token BWS "=" BWS ( token / quoted-string )

A field may carry several challenges, and a response several fields; commas
separate both challenges and parameters, so a comma followed by ``name=`` goes
on with the current challenge and a comma followed by a bare token starts the
next one. Parameter names are case-insensitive (lower-cased here); values are
unquoted. What cannot be parsed ends that field's parsing, and what was read
until then is kept: a hostile header yields fewer challenges, never an
exception. Counts are bounded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["Challenge", "parse_www_authenticate"]

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_WS = re.compile(r"[ \t]*")
_MAX_CHALLENGES = 32
_MAX_PARAMS = 64


@dataclass(frozen=True, slots=True)
class Challenge:
    #: As the server wrote it ("Bearer", "bearer" ...); compare case-insensitively.
    scheme: str
    #: Parameter names lower-cased, values unquoted.
    params: dict[str, str] = field(default_factory=dict)
    token68: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"scheme": self.scheme, "params": dict(self.params), "token68": self.token68}


def parse_www_authenticate(values: Iterable[str]) -> list[Challenge]:
    """The challenges of every ``WWW-Authenticate`` field value, in order."""
    out: list[Challenge] = []
    for value in values:
        _parse_field(value, out)
        if len(out) >= _MAX_CHALLENGES:
            return out[:_MAX_CHALLENGES]
    return out


def _skip(s: str, i: int) -> int:
    m = _WS.match(s, i)
    return m.end() if m else i


def _param(s: str, i: int) -> tuple[str, str, int] | None:
    """``name = value`` at ``i``: (name, value, end), or None if there is none."""
    m = _TOKEN.match(s, i)
    if m is None:
        return None
    j = _skip(s, m.end())
    if j >= len(s) or s[j] != "=":
        return None
    j = _skip(s, j + 1)
    if j < len(s) and s[j] == '"':
        buf: list[str] = []
        k = j + 1
        while k < len(s):
            ch = s[k]
            if ch == "\\" and k + 1 < len(s):
                buf.append(s[k + 1])
                k += 2
                continue
            if ch == '"':
                return m.group().lower(), "".join(buf), k + 1
            buf.append(ch)
            k += 1
        return None  # unterminated quoted string
    v = _TOKEN.match(s, j)
    if v is None:
        return None
    return m.group().lower(), v.group(), v.end()


def _parse_field(s: str, out: list[Challenge]) -> None:
    i = 0
    n = len(s)
    while i < n and len(out) < _MAX_CHALLENGES:
        i = _skip(s, i)
        while i < n and s[i] == ",":  # empty list elements are allowed (RFC 9110 5.6.1)
            i = _skip(s, i + 1)
        if i >= n:
            return
        m = _TOKEN.match(s, i)
        if m is None:
            return
        scheme = m.group()
        i = _skip(s, m.end())
        params: dict[str, str] = {}
        token68: str | None = None
        first = _param(s, i)
        if first is None:
            t = _TOKEN68.match(s, i)
            if t is not None:
                j = _skip(s, t.end())
                if j >= n or s[j] == ",":
                    token68, i = t.group(), j
        else:
            name, value, i = first
            params.setdefault(name, value)
            while len(params) < _MAX_PARAMS:
                j = _skip(s, i)
                if j >= n or s[j] != ",":
                    i = j
                    break
                k = _skip(s, j + 1)
                while k < n and s[k] == ",":
                    k = _skip(s, k + 1)
                nxt = _param(s, k)
                if nxt is None:
                    i = j  # a comma and then a new challenge (or junk)
                    break
                name, value, i = nxt
                params.setdefault(name, value)
        out.append(Challenge(scheme, params, token68))
        i = _skip(s, i)
        if i < n and s[i] != ",":
            return  # junk where a comma was due: keep what was read
