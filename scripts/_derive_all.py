"""Derive one access per operation of a real spec, served from a loopback server: what the coverage
scripts count (which permission each operation gets, and its class)."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@contextmanager
def serve(body: bytes) -> Iterator[str]:
    """``body`` at http://127.0.0.1:PORT/spec.json until the block ends (loopback only)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/spec.json"
    finally:
        srv.shutdown()
        srv.server_close()


def derive_operations(
    spec: bytes, operation_ids: Iterable[str], identity: str = "END_USER", policy: Any = None
) -> list[dict[str, Any]]:
    """Each operation's access in the report's JSON form, in order."""
    from ramscope import Settings
    from ramscope.derive import Engine

    ids = list(operation_ids)
    with serve(spec) as url, tempfile.TemporaryDirectory() as cache:
        manifest = {
            "resources": [
                {
                    "id": "r",
                    "interaction_protocol": "REST",
                    "owner": "CONSUMER",
                    "display_name": "spec",
                    "spec": {"spec_url": url, "resource_path": ""},
                }
            ],
            "operations": [
                {"id": f"o{i}", "resource": "r", "api_operation_spec": {"operation_id": op}} for i, op in enumerate(ids)
            ],
            "resource_accesses": [
                {
                    "id": f"a{i}",
                    "operation": f"o{i}",
                    "identity_used": identity,
                    "necessity": "OPTIONAL",
                    "access_justification": "coverage count",
                }
                for i in range(len(ids))
            ],
        }
        settings = Settings(cache_dir=Path(cache), allow_private_network=True, timeout=120)
        with Engine(settings, policy=policy) as engine:
            report = engine.derive({"name": "coverage", "resourceAccessManifest": manifest})
        out: list[dict[str, Any]] = report.to_dict()["accesses"]
        return out


def level_counts(accesses: list[dict[str, Any]], method: str = "GET") -> dict[str, Any]:
    """Of the accesses on ``method`` operations: how many were derived, how many picks are above read
    (write or manage), and how many of those had a read alternative the identity could use (wrong)."""
    from ramscope.providers.reach import classify

    def level(scope: str, reach: dict[str, Any] | None) -> str:
        hit = (reach or {}).get(scope)
        return str(hit["level"]) if hit else classify(scope).level.name.lower()

    derived = above = wrong = 0
    examples: list[str] = []
    for a in accesses:
        if not a.get("complete") or (a.get("target") or {}).get("method") != method:
            continue
        derived += 1
        reach = (a.get("choice") or {}).get("reach")
        if all(level(s, reach) == "read" for s in a["scopes"] or []):
            continue
        above += 1
        reads = [
            alt["scopes"]
            for alt in a.get("alternatives") or []
            if alt.get("compatible")
            and alt["scopes"]
            and all(level(s, alt.get("reach")) == "read" for s in alt["scopes"])
        ]
        if reads:
            wrong += 1
            if len(examples) < 10:
                examples.append(f"{a['target']['operation_id']}: {a['scopes']} although {reads[0]} is listed")
    return {"derived": derived, "above_read": above, "above_read_with_a_read_listed": wrong, "examples": examples}


def operation_ids(doc: dict[str, Any], method: str = "get") -> list[str]:
    return [
        op["operationId"]
        for item in (doc.get("paths") or {}).values()
        for m, op in item.items()
        if m == method and isinstance(op, dict) and op.get("operationId")
    ]
