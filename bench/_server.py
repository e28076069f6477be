"""The benchmarks' spec server, in a process of its own: ``tests.support.httpserver.LocalHTTPServer``.

Started by ``_common.Context``; prints its base URL (127.0.0.1, a free port), then reads one
JSON object per line on stdin, ``{"route": "/1/spec.json", "file": "...", "latency": 0.2}``,
serves that file at that route (after that latency) and answers ``ok``. It stops at end of input.

In a process of its own, serving a 47 MB spec competes with nothing in the benchmark process,
and the benchmark process stays small (see ``_spawner.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.httpserver import LocalHTTPServer


def main() -> int:
    with LocalHTTPServer() as server:
        print(server.base_url, flush=True)
        for line in sys.stdin:
            if not line.strip():
                continue
            req = json.loads(line)
            server.route(req["route"], body=Path(req["file"]).read_bytes(), latency=float(req.get("latency", 0)))
            print("ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
