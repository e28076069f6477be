"""Recording evidence with real clients, the way users do: a HAR-recording httpx transport, the
OpenTelemetry SDK's httpx instrumentation with its OTLP/JSON file exporter (in a child process, each
with its semantic-convention setting), and a JSON-RPC log tapped around the official ``mcp`` client."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

__all__ = ["HarRecorder", "jwt", "record_mcp_log", "record_otlp"]


def jwt(claims: Mapping[str, Any]) -> str:
    """An unsigned JWT with these claims (what a JWT access token looks like to its bearer)."""

    def part(d: Mapping[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"


class HarRecorder(httpx.BaseTransport):
    """An httpx transport that sends for real and writes every exchange as a HAR 1.2 entry (as Dev
    Proxy, mitmproxy or a browser would: headers, cookies, query string, bodies and all)."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()
        self.entries: list[dict[str, Any]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        started = datetime.now(UTC).isoformat()
        body = request.read()
        response = self._inner.handle_request(request)
        content = response.read()
        self.entries.append(
            {
                "startedDateTime": started,
                "time": 1,
                "request": {
                    "method": request.method,
                    "url": str(request.url),
                    "httpVersion": "HTTP/1.1",
                    "headers": [{"name": k, "value": v} for k, v in request.headers.multi_items()],
                    "queryString": [{"name": k, "value": v} for k, v in request.url.params.multi_items()],
                    "cookies": [
                        {"name": c.split("=", 1)[0].strip(), "value": c.split("=", 1)[-1]}
                        for c in request.headers.get("cookie", "").split(";")
                        if c.strip()
                    ],
                    "postData": {"mimeType": request.headers.get("content-type", ""), "text": body.decode()},
                    "headersSize": -1,
                    "bodySize": len(body),
                },
                "response": {
                    "status": response.status_code,
                    "statusText": response.reason_phrase,
                    "httpVersion": "HTTP/1.1",
                    "headers": [{"name": k, "value": v} for k, v in response.headers.multi_items()],
                    "cookies": [],
                    "content": {
                        "size": len(content),
                        "mimeType": response.headers.get("content-type", ""),
                        "text": content.decode(),
                    },
                    "redirectURL": "",
                    "headersSize": -1,
                    "bodySize": len(content),
                },
                "cache": {},
                "timings": {"send": 0, "wait": 1, "receive": 0},
            }
        )
        return httpx.Response(response.status_code, headers=response.headers, content=content, request=request)

    def write(self, path: Path) -> Path:
        har = {
            "log": {"version": "1.2", "creator": {"name": "ramscope-tests", "version": "1"}, "entries": self.entries}
        }
        path.write_text(json.dumps(har, indent=1), "utf-8")
        return path


_OTLP_CHILD = textwrap.dedent(
    """
    import json, sys
    import httpx
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    out, requests = sys.argv[1], json.loads(sys.argv[2])
    provider = TracerProvider()
    exporter = FileSpanExporter(out)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with httpx.Client() as client:
        HTTPXClientInstrumentor().instrument_client(client, tracer_provider=provider)
        for r in requests:
            client.request(r["method"], r["url"], headers=r.get("headers"), content=r.get("body"))
    provider.shutdown()
    """
)


def record_otlp(path: Path, requests: list[dict[str, Any]], *, stable_semconv: bool) -> Path:
    """Make ``requests`` with httpx instrumented by the OpenTelemetry SDK; the file exporter writes
    OTLP/JSON to ``path``. ``stable_semconv``: the current HTTP attribute names (else the old ones).
    The Authorization header is captured, as a deployment that records request headers does."""
    env = {**os.environ, "OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_CLIENT_REQUEST": "authorization,cookie"}
    env["OTEL_SEMCONV_STABILITY_OPT_IN"] = "http" if stable_semconv else ""
    done = subprocess.run(
        [sys.executable, "-c", _OTLP_CHILD, str(path), json.dumps(requests)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return path


class _Tap:
    """A stream wrapper that logs every JSON-RPC message passing through it."""

    def __init__(
        self, inner: Any, log: list[dict[str, Any]], server: str, direction: str, headers: Mapping[str, str]
    ) -> None:
        self._inner, self._log, self._server, self._direction, self._headers = inner, log, server, direction, headers

    def _note(self, item: Any) -> None:
        from mcp.client.streamable_http import jsonrpc_message_adapter
        from mcp.shared.message import SessionMessage

        if isinstance(item, SessionMessage):
            line: dict[str, Any] = {
                "time": datetime.now(UTC).isoformat(),
                "server": self._server,
                "direction": self._direction,
                "message": jsonrpc_message_adapter.dump_python(
                    item.message, by_alias=True, exclude_none=True, mode="json"
                ),
            }
            if self._direction == "send":
                line["headers"] = dict(self._headers)
            self._log.append(line)

    async def send(self, item: Any) -> None:
        self._note(item)
        await self._inner.send(item)

    async def receive(self) -> Any:
        item = await self._inner.receive()
        self._note(item)
        return item

    def __aiter__(self) -> _Tap:
        return self

    async def __anext__(self) -> Any:
        item = await self._inner.__anext__()
        self._note(item)
        return item

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> _Tap:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


def record_mcp_log(path: Path, url: str, calls: list[tuple[str, dict[str, Any]]], headers: Mapping[str, str]) -> Path:
    """Call tools with the official ``mcp`` client (Streamable HTTP), logging every JSON-RPC message
    with the server URL, one a line (what an MCP proxy or inspector logs)."""
    import anyio
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    log: list[dict[str, Any]] = []

    async def main() -> None:
        async with (
            httpx2.AsyncClient(headers=dict(headers)) as client,
            streamable_http_client(url, http_client=client) as (read, write),
            ClientSession(_Tap(read, log, url, "receive", headers), _Tap(write, log, url, "send", headers)) as s,
        ):
            await s.initialize()
            await s.list_tools()
            for name, arguments in calls:
                await s.call_tool(name, arguments)

    anyio.run(main)
    path.write_text("".join(json.dumps(line) + "\n" for line in log), "utf-8")
    return path
