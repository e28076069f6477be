"""The textbook approach, run as its own process by ``bench_naive.py``: prance, then openapi-core.

    python bench/_naive_child.py SPEC_FILE OPERATION_ID [OPERATION_ID ...]

1. ``prance.ResolvingParser(SPEC_FILE)`` (openapi-spec-validator backend) parses, validates and
   resolves every ``$ref``. A spec with recursive schemas makes prance's default raise; the usual
   remedy is then applied and the parse retried: leave internal references unresolved
   (``resolve_types=RESOLVE_FILES | RESOLVE_HTTP``).
2. ``openapi_core.OpenAPI.from_dict(...)`` with its default configuration (spec validation on).
3. Each operation id is looked up through openapi-core's spec path objects, and its ``security``
   (or the root's) read: what ramscope reports as the access's requirements.

Prints one JSON object: seconds per phase, how prance was run, and what was found. Needs
``pip install -e '.[bench]'`` in an environment of its own (see bench/README.md).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def main(argv: list[str]) -> int:
    path, wanted = argv[0], argv[1:]
    out: dict[str, Any] = {"spec": path}
    t0 = time.perf_counter()
    import prance
    from openapi_core import OpenAPI
    from prance.util.resolver import RESOLVE_FILES, RESOLVE_HTTP
    from prance.util.url import ResolutionError

    out["import_s"] = time.perf_counter() - t0
    t = time.perf_counter()
    try:
        parser = prance.ResolvingParser(path, backend="openapi-spec-validator", strict=False)
        out["prance_mode"] = "default"
    except ResolutionError as exc:
        if "Recursion" not in str(exc):
            raise
        out["prance_default_failed_s"] = time.perf_counter() - t
        parser = prance.ResolvingParser(
            path, backend="openapi-spec-validator", strict=False, resolve_types=RESOLVE_FILES | RESOLVE_HTTP
        )
        out["prance_mode"] = "internal refs left unresolved (recursive schemas)"
    out["prance_s"] = time.perf_counter() - t
    t = time.perf_counter()
    api = OpenAPI.from_dict(parser.specification)
    out["openapi_core_s"] = time.perf_counter() - t
    t = time.perf_counter()
    spec = api.spec
    root_security = (spec / "security").read_value() if "security" in spec else None
    found: dict[str, Any] = {}
    for _key, item in (spec / "paths").items():
        for method in METHODS:
            if method not in item:
                continue
            op = item / method
            if "operationId" not in op:
                continue
            oid = (op / "operationId").read_value()
            if oid in wanted and oid not in found:
                found[oid] = (op / "security").read_value() if "security" in op else root_security
    out["lookup_s"] = time.perf_counter() - t
    out["found"] = sorted(found)
    out["missing"] = sorted(set(wanted) - set(found))
    out["total_s"] = time.perf_counter() - t0
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
