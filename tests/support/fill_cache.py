"""Run as a separate process: fill a cache directory from a local server (the two-process cache test).

    python -m tests.support.fill_cache CACHE_DIR URL [URL ...]

Prints one JSON line: {url: origin or error}.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ramscope.config import Settings
from ramscope.errors import FetchError
from ramscope.store import SpecStore


def main(argv: list[str]) -> int:
    cache_dir, *urls = argv
    settings = Settings(cache_dir=Path(cache_dir), allow_private_network=True, jobs=4, timeout=30.0)
    with SpecStore(settings) as store:
        results = store.prefetch((u, None) for u in urls)
    out = {u: r.code if isinstance(r, FetchError) else r.origin.value for u, r in results.items()}
    print(json.dumps(out))
    return 0 if all(v in ("network", "cache") for v in out.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
