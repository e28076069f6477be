"""OpenTelemetry traces as OTLP/JSON (the collector's file exporter, the SDK's JSON file exporter).

Each line is an ``ExportTraceServiceRequest``; the HTTP client spans (kind CLIENT, or any span
with an HTTP method and URL) become calls. Both generations of the HTTP semantic conventions are
read: ``http.request.method`` / ``url.full`` / ``server.address`` / ``http.response.status_code``
(stable since 1.23) and ``http.method`` / ``http.url`` / ``net.peer.name`` / ``http.status_code``.
Captured request headers (``http.request.header.authorization``) are classified, then dropped.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, BinaryIO

from ._auth import Credentials
from ._lines import json_documents
from ._source import DEFAULT_LIMITS, EvidenceLimits
from .model import EvidenceFormat, ObservedCall, http_method, origin_of, strip_url
from .stats import ReadStats

__all__ = ["read_otlp"]

_CLIENT = {3, "3", "SPAN_KIND_CLIENT"}
_SERVER_SIDE = {2, "2", "SPAN_KIND_SERVER", 5, "5", "SPAN_KIND_CONSUMER"}
_HEADER = "http.request.header."


def read_otlp(
    stream: BinaryIO, label: str, stats: ReadStats, limits: EvidenceLimits = DEFAULT_LIMITS
) -> Iterator[ObservedCall]:
    n = 0
    for doc in json_documents(stream, label, stats, limits):
        resource_spans = _get(doc, "resourceSpans", "resource_spans")
        if not isinstance(resource_spans, list):
            stats.skip("not an OTLP trace export")
            continue
        for rs in resource_spans:
            scopes = _get(rs, "scopeSpans", "scope_spans", "instrumentationLibrarySpans")
            if not isinstance(scopes, list):
                stats.skip("resource without scopeSpans")
                continue
            for ss in scopes:
                spans = _get(ss, "spans")
                if not isinstance(spans, list):
                    continue
                for span in spans:
                    n += 1
                    call = _call(span, label, n, stats, limits)
                    if call is not None:
                        yield call


def _get(obj: Any, *names: str) -> Any:
    if not isinstance(obj, dict):
        return None
    for name in names:
        if name in obj:
            return obj[name]
    return None


def _value(v: Any) -> Any:
    """An OTLP AnyValue as a Python value (arrays as lists)."""
    if not isinstance(v, dict):
        return None
    for key in ("stringValue", "intValue", "boolValue", "doubleValue"):
        if key in v:
            return v[key]
    arr = v.get("arrayValue")
    if isinstance(arr, dict) and isinstance(arr.get("values"), list):
        return [_value(x) for x in arr["values"]]
    return None


def _attributes(span: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    attrs = span.get("attributes")
    if isinstance(attrs, list):
        for a in attrs:
            if isinstance(a, dict) and isinstance(a.get("key"), str):
                out[a["key"]] = _value(a.get("value"))
    return out


def _str(a: Mapping[str, Any], *keys: str) -> str:
    for k in keys:
        v = a.get(k)
        if isinstance(v, str) and v:
            return v
    return ""


def _int(a: Mapping[str, Any], *keys: str) -> int | None:
    for k in keys:
        v = a.get(k)
        if isinstance(v, bool):
            continue
        try:
            i = int(v) if isinstance(v, int | str) else None
        except ValueError:
            i = None
        if i is not None and 0 <= i < 1000:
            return i
    return None


def _url(a: Mapping[str, Any]) -> str:
    full = _str(a, "url.full", "http.url")
    if full:
        return full
    host = _str(a, "server.address", "net.peer.name", "http.host")
    if not host:
        return ""
    scheme = _str(a, "url.scheme", "http.scheme") or "https"
    port = _int_port(a.get("server.port", a.get("net.peer.port")))
    path = _str(a, "url.path", "http.target") or "/"
    netloc = host if port is None or (scheme, port) in {("https", 443), ("http", 80)} else f"{host}:{port}"
    return f"{scheme}://{netloc}{path if path.startswith('/') else '/' + path}"


def _host_origin(a: Mapping[str, Any], cap: int) -> str | None:
    """``https://host/`` from the span's server address alone (its URL unreadable), else ``None``."""
    host = _str(a, "server.address", "net.peer.name", "http.host")
    return strip_url(f"https://{host}/") if host and len(host) <= min(cap, 1024) else None


def _int_port(v: Any) -> int | None:
    try:
        p = int(v) if isinstance(v, int | str) and not isinstance(v, bool) else None
    except ValueError:
        return None
    return p if p is not None and 0 < p < 65536 else None


def _time(span: Mapping[str, Any]) -> str:
    raw = span.get("startTimeUnixNano")
    try:
        ns = int(raw) if isinstance(raw, int | str) and not isinstance(raw, bool) else 0
        return datetime.fromtimestamp(ns / 1e9, UTC).isoformat().replace("+00:00", "Z") if ns > 0 else ""
    except (ValueError, OverflowError, OSError):
        return ""


def _call(span: Any, label: str, n: int, stats: ReadStats, limits: EvidenceLimits) -> ObservedCall | None:
    if not isinstance(span, dict):
        stats.skip("span is not an object")
        return None
    kind = span.get("kind")
    a = _attributes(span)
    raw_method = _str(a, "http.request.method", "http.method")
    if kind in _SERVER_SIDE or not raw_method:
        return None  # not an outgoing HTTP call: neither read nor lost
    cap = limits.max_field
    raw_url = _url(a)
    method = http_method(raw_method[:64])
    url = strip_url(raw_url) if raw_url and len(raw_url) <= cap else None
    unreadable = (
        f"URL over {cap} bytes"
        if len(raw_url) > cap
        else "HTTP span without an absolute URL"
        if url is None
        else "not an HTTP method"
        if method is None
        else ""
    )
    if unreadable:
        # Fail closed: a span not read whole is still a call to its host, when the host can be read.
        origin = url or origin_of(raw_url, cap) or _host_origin(a, cap)
        if origin is None:
            stats.skip(f"{unreadable}, no readable host")
            return None
        if method is None and not unreadable.startswith("not an HTTP"):
            unreadable += ", not an HTTP method"
        stats.part(unreadable)
        return ObservedCall(
            time=_time(span),
            method=method or "",
            url=origin,
            status=_int(a, "http.response.status_code", "http.status_code"),
            fmt=EvidenceFormat.OTLP,
            source=label,
            entry=n,
            unreadable=unreadable,
        )
    if url is None or method is None:  # pragma: no cover - said above
        return None
    creds = Credentials()
    seen = False
    for key, value in a.items():
        if key.startswith(_HEADER):
            seen = True
            values = value if isinstance(value, list) else [value]
            for v in values:
                if isinstance(v, str):
                    creds.header(key[len(_HEADER) :], v)
    if "?" in raw_url:
        for part in raw_url.split("?", 1)[1].split("#", 1)[0].split("&"):
            name, _, value = part.partition("=")
            creds.query(name, value)
    auth, principal = creds.result(seen=seen)
    stats.calls += 1
    return ObservedCall(
        time=_time(span),
        method=method,
        url=url,
        status=_int(a, "http.response.status_code", "http.status_code"),
        auth=auth,
        principal=principal,
        fmt=EvidenceFormat.OTLP,
        source=label,
        entry=n,
    )
