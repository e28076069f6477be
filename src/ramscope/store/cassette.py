"""Cassettes: recorded HTTP exchanges in VCR.py's YAML layout, replayed by an httpx transport.

Layout (VCR.py's, which users know, plus a ``ramscope`` block of provenance)::

    version: 1
    ramscope: {recorded_at: ..., recorded_with: ramscope X.Y.Z, note: ...}
    interactions:
    - request: {method: GET, uri: https://..., body: null, headers: {user-agent: [...]}}
      response:
        status: {code: 200, message: OK}
        headers: {content-type: [application/json]}
        body: {string: '...'}          # or {base64_string: ...} when not UTF-8 text
      ramscope: {recorded_at: ..., synthesized: false, source: network, server_address: ...}

``synthesized: true`` marks an interaction reconstructed from published
documentation (or a packaged copy of a document) rather than recorded from the
server; the provenance travels with the spec into the report, so nobody
mistakes one for the other.

Threat model pieces defended here: a cassette is an input file and may come
from a stranger (a shared reproduction). It is read through
:mod:`ramscope._parse` (size bound, safe loader only, alias-bomb and nesting
bounds); its bodies are data, never code. Replay never touches the network and
never resolves names, but the store still applies the URL guard to every
request (a cassette cannot smuggle a request to 169.254.169.254 past the
policy). Recording redacts credentials, cookies and MCP session ids, so a committed cassette
does not leak them. Bodies are recorded decoded (no ``Content-Encoding``), so a
cassette is readable and diffable.
"""

from __future__ import annotations

import base64
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import yaml

from .._parse import Limits, parse_bytes, read_bytes
from .._version import __version__
from ..errors import CassetteMissError, InputError
from .keys import canonical_url, raw_body_digest
from .model import rfc3339

__all__ = ["CASSETTE_VERSION", "Cassette", "Interaction", "ReplayTransport"]

CASSETTE_VERSION = 1
_LIMITS = Limits(max_bytes=512 * 1024 * 1024, max_depth=64, strict_keys=False, positions=False)
_REDACTED = "<redacted by ramscope>"
_SENSITIVE = re.compile(r"authorization|cookie|api[-_]?key|token|secret|password|session[-_]?key", re.IGNORECASE)
# An MCP session id is a bearer of the live session (the spec asks servers for a
# cryptographically secure one). Replaced, not blanked: replay sends back what it was given,
# and the placeholder stays a valid id (visible ASCII only, MCP transports spec).
_SESSION_HEADER = "mcp-session-id"
_SESSION_PLACEHOLDER = "redacted-by-ramscope"
# Not meaningful once the body is stored decoded, or per-connection only.
_DROP_RESPONSE = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"})
# Text that YAML carries unchanged: no CR (block scalars normalise line breaks), no
# controls, no BOM, no YAML 1.1 line breaks, no non-characters.
_NOT_YAML_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
_REPLAY_PIECE = 64 * 1024


#: Builds the InputError for a problem at a pointer below the interaction being read.
_Fail = Callable[[str, str], InputError]


def _now_rfc3339() -> str:
    return rfc3339(datetime.now(UTC))


def _redact(headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple(
        (k, _SESSION_PLACEHOLDER if k.lower() == _SESSION_HEADER else _REDACTED if _SENSITIVE.search(k) else v)
        for k, v in headers
    )


@dataclass(frozen=True, slots=True)
class Interaction:
    """One request and its response, with ramscope's provenance."""

    method: str
    uri: str
    request_body: bytes | None
    status: int
    body: bytes = field(repr=False)
    reason: str = ""
    request_headers: tuple[tuple[str, str], ...] = ()
    response_headers: tuple[tuple[str, str], ...] = ()
    recorded_at: str = ""
    synthesized: bool = False
    #: "network" for recordings; for synthesized entries, where the body came from.
    source: str = "network"
    #: Anything else under the interaction's ``ramscope`` key (server address, notes).
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def match_key(self) -> tuple[str, str, str]:
        return (self.method.upper(), canonical_url(self.uri), raw_body_digest(self.request_body or b""))

    def provenance(self) -> dict[str, Any]:
        out: dict[str, Any] = {"synthesized": self.synthesized, "source": self.source}
        if self.recorded_at:
            out["recorded_at"] = self.recorded_at
        out.update({k: v for k, v in self.extra.items() if k not in out})
        return out

    # ---- VCR layout

    def to_dict(self) -> dict[str, Any]:
        ram: dict[str, Any] = {
            "recorded_at": self.recorded_at,
            "synthesized": self.synthesized,
            "source": self.source,
        }
        ram.update({k: v for k, v in self.extra.items() if k not in ram})
        return {
            "request": {
                "method": self.method,
                "uri": self.uri,
                "body": None if self.request_body is None else self.request_body.decode("utf-8", "replace"),
                "headers": _headers_to_vcr(self.request_headers),
            },
            "response": {
                "status": {"code": self.status, "message": self.reason},
                "headers": _headers_to_vcr(self.response_headers),
                "body": _body_to_vcr(self.body),
            },
            "ramscope": ram,
        }

    @classmethod
    def from_dict(cls, d: Any, *, source: str, pointer: str) -> Interaction:
        def fail(msg: str, where: str) -> InputError:
            return InputError(f"not a cassette interaction: {msg}", source=source, pointer=pointer + where)

        if not isinstance(d, Mapping):
            raise fail("expected a mapping", "")
        req, resp = d.get("request"), d.get("response")
        if not isinstance(req, Mapping) or not isinstance(resp, Mapping):
            raise fail("needs 'request' and 'response' mappings", "")
        method, uri = req.get("method"), req.get("uri")
        if not isinstance(method, str) or not isinstance(uri, str):
            raise fail("request needs a string 'method' and 'uri'", "/request")
        try:
            canonical_url(uri)
        except (httpx.InvalidURL, TypeError, ValueError) as exc:
            raise fail(f"request uri is not a valid URL: {exc}", "/request/uri") from None
        req_body = req.get("body")
        if req_body is not None and not isinstance(req_body, str):
            raise fail("request body must be a string or null", "/request/body")
        status = resp.get("status")
        code = status.get("code") if isinstance(status, Mapping) else None
        if not isinstance(code, int) or isinstance(code, bool) or not 100 <= code <= 599:
            raise fail("response status needs an integer 'code' between 100 and 599", "/response/status")
        message = status.get("message") if isinstance(status, Mapping) else ""
        ram = d.get("ramscope") or {}
        if not isinstance(ram, Mapping):
            raise fail("'ramscope' must be a mapping", "/ramscope")
        return cls(
            method=method.upper(),
            uri=uri,
            request_body=None if req_body is None else req_body.encode("utf-8"),
            status=code,
            reason=message if isinstance(message, str) else "",
            request_headers=_headers_from_vcr(req.get("headers"), fail, "/request/headers"),
            response_headers=_headers_from_vcr(resp.get("headers"), fail, "/response/headers"),
            body=_body_from_vcr(resp.get("body"), fail),
            recorded_at=str(ram.get("recorded_at") or ""),
            synthesized=ram.get("synthesized") is True,
            source=str(ram.get("source") or ("documentation" if ram.get("synthesized") is True else "network")),
            extra={k: v for k, v in ram.items() if k not in ("recorded_at", "synthesized", "source")},
        )


def _headers_to_vcr(items: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k, v in items:
        out.setdefault(k, []).append(v)
    return out


def _headers_from_vcr(raw: Any, fail: _Fail, where: str) -> tuple[tuple[str, str], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise fail("headers must be a mapping of name to a list of values", where)
    out: list[tuple[str, str]] = []
    for name, values in raw.items():
        for v in values if isinstance(values, list) else [values]:
            if not isinstance(v, str | int | float):
                raise fail(f"header {name!r} has a value that is not text", where)
            out.append((str(name).lower(), str(v)))
    return tuple(out)


def _body_to_vcr(body: bytes) -> dict[str, str]:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and not _NOT_YAML_TEXT.search(text):
        return {"string": text}
    return {"base64_string": base64.b64encode(body).decode("ascii")}


def _body_from_vcr(raw: Any, fail: _Fail) -> bytes:
    if raw is None:
        return b""
    if isinstance(raw, str):  # some hand-written cassettes put the string directly
        return raw.encode("utf-8")
    if not isinstance(raw, Mapping):
        raise fail("response body must be a mapping with 'string' or 'base64_string'", "/response/body")
    if isinstance(raw.get("base64_string"), str):
        try:
            return base64.b64decode(raw["base64_string"], validate=True)
        except ValueError:
            raise fail("response body 'base64_string' is not valid base64", "/response/body") from None
    if isinstance(raw.get("string"), str):
        return str(raw["string"]).encode("utf-8")
    if raw.get("string") is None and "string" in raw:
        return b""
    raise fail("response body must have 'string' or 'base64_string'", "/response/body")


class _Dumper(yaml.SafeDumper):
    """safe_dump, with multi-line strings as literal blocks so recorded specs stay readable."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)


class Cassette:
    """An ordered list of interactions, loaded from or saved to one YAML file.

    Thread-safe: replay and recording happen from the store's worker threads.
    Several recorded interactions with the same match key are replayed in
    order, the last one repeating (a conversation that asks the same thing
    twice gets the answers it got).
    """

    def __init__(
        self,
        path: Path,
        interactions: Iterable[Interaction] = (),
        *,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.path = path
        self.meta: dict[str, Any] = dict(meta or {})
        self._lock = threading.Lock()
        self._interactions: list[Interaction] = list(interactions)
        self._index: dict[tuple[str, str, str], list[Interaction]] = {}
        self._cursor: dict[tuple[str, str, str], int] = {}
        for i in self._interactions:
            self._index.setdefault(i.match_key, []).append(i)

    @property
    def interactions(self) -> list[Interaction]:
        with self._lock:
            return list(self._interactions)

    # ---- replay

    def find(self, method: str, url: str | httpx.URL, content: bytes) -> Interaction | None:
        key = (method.upper(), canonical_url(url), raw_body_digest(content))
        with self._lock:
            found = self._index.get(key)
            if not found:
                return None
            n = self._cursor.get(key, 0)
            self._cursor[key] = n + 1
            return found[min(n, len(found) - 1)]

    # ---- recording

    def append(self, interaction: Interaction) -> None:
        with self._lock:
            self._interactions.append(interaction)
            self._index.setdefault(interaction.match_key, []).append(interaction)

    def record(
        self,
        *,
        method: str,
        url: str,
        request_headers: Iterable[tuple[str, str]],
        request_body: bytes | None,
        status: int,
        reason: str,
        response_headers: Iterable[tuple[str, str]],
        body: bytes,
        extra: Mapping[str, Any] | None = None,
    ) -> Interaction:
        """Append an exchange that really happened (credentials redacted, body decoded)."""
        interaction = Interaction(
            method=method.upper(),
            uri=url,
            request_body=request_body or None,
            status=status,
            reason=reason,
            request_headers=_redact(request_headers),
            response_headers=_redact((k, v) for k, v in response_headers if k.lower() not in _DROP_RESPONSE),
            body=body,
            recorded_at=_now_rfc3339(),
            synthesized=False,
            source="network",
            extra=dict(extra or {}),
        )
        self.append(interaction)
        return interaction

    def add_synthesized(
        self,
        *,
        url: str,
        body: bytes,
        source: str,
        media_type: str = "application/json",
        method: str = "GET",
        request_body: bytes | None = None,
        status: int = 200,
        note: str = "",
    ) -> Interaction:
        """Append an interaction reconstructed from documentation or a packaged copy, marked as such."""
        extra = {"note": note} if note else {}
        interaction = Interaction(
            method=method.upper(),
            uri=url,
            request_body=request_body,
            status=status,
            reason="OK" if status == 200 else "",
            response_headers=(("content-type", media_type),),
            body=body,
            recorded_at=_now_rfc3339(),
            synthesized=True,
            source=source,
            extra=extra,
        )
        self.append(interaction)
        return interaction

    # ---- files

    def to_dict(self) -> dict[str, Any]:
        with self._lock:
            # Stable order for readable diffs; same-key interactions keep their order.
            items = sorted(self._interactions, key=lambda i: (i.uri, i.method))
        meta = {"recorded_at": _now_rfc3339(), "recorded_with": f"ramscope {__version__}"}
        meta.update(self.meta)
        return {"version": CASSETTE_VERSION, "ramscope": meta, "interactions": [i.to_dict() for i in items]}

    def dumps(self) -> str:
        return yaml.dump(self.to_dict(), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)

    def save(self) -> None:
        """Write atomically: a temporary file in the same directory, then a rename."""
        text = self.dumps()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            # mkstemp makes the file private; a cassette is meant to be shared and committed.
            os.fchmod(fd, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: Path) -> Cassette:
        """Read a cassette; :class:`~ramscope.errors.InputError` names the file and the place of a problem."""
        data, source = read_bytes(path, max_bytes=_LIMITS.max_bytes)
        doc = parse_bytes(data, source=source, limits=_LIMITS, fmt="yaml").value
        if not isinstance(doc, Mapping) or not isinstance(doc.get("interactions", []), list):
            raise InputError("not a cassette: expected a mapping with an 'interactions' list", source=source)
        version = doc.get("version", CASSETTE_VERSION)
        if version != CASSETTE_VERSION:
            raise InputError(f"cassette version {version!r} is not supported (expected 1)", source=source)
        interactions = [
            Interaction.from_dict(d, source=source, pointer=f"/interactions/{n}")
            for n, d in enumerate(doc.get("interactions") or [])
        ]
        meta = doc.get("ramscope")
        return cls(path, interactions, meta=meta if isinstance(meta, Mapping) else {})


class _Pieces(httpx.SyncByteStream):
    def __init__(self, body: bytes) -> None:
        self._body = body

    def __iter__(self) -> Iterator[bytes]:
        for i in range(0, len(self._body), _REPLAY_PIECE):
            yield self._body[i : i + _REPLAY_PIECE]


class ReplayTransport(httpx.BaseTransport):
    """Answers every request from a cassette; never opens a socket, never resolves a name.

    An unmatched request raises :class:`~ramscope.errors.CassetteMissError`
    naming the method, the URL and the cassette file.
    """

    def __init__(self, cassette: Cassette) -> None:
        self.cassette = cassette

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        content = request.read()
        url = str(request.url)
        found = self.cassette.find(request.method, request.url, content)
        if found is None:
            raise CassetteMissError(
                f"no recorded exchange for {request.method} {url} in cassette {self.cassette.path} "
                "(re-record it with --record, or add the interaction)",
                url=url,
            )
        headers = [(k, v) for k, v in found.response_headers if k not in _DROP_RESPONSE]
        return httpx.Response(
            status_code=found.status,
            headers=headers,
            stream=_Pieces(found.body),
            extensions={
                "reason_phrase": found.reason.encode("ascii", "replace"),
                "http_version": b"HTTP/1.1",
                "ramscope_provenance": {"cassette": str(self.cassette.path), **found.provenance()},
            },
        )
