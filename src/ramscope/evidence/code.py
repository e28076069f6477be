"""Reading an agent's source for the calls it makes: files and directories given by ``--code``.

The walk is bounded (files, bytes per file, bytes in all, time), skips dependency and build trees
(``node_modules``, ``.git``, virtual environments, ``site-packages``, ``dist``, ``build``), follows no
symlink out of the root given, and names each file by its path under that root as given (``src/agent.py``
for ``--code src``), so a finding's ``file:line`` (and SARIF's location) is where a reviewer finds it.

Python goes to :mod:`.code_python` (``ast``), TypeScript/JavaScript to :mod:`.code_js` (when installed);
MCP client configurations (``.mcp.json``, ``mcp.json``, ``claude_desktop_config.json``, ``.cursor/mcp.json``,
``.vscode/mcp.json``) name servers by URL. Nothing read is imported, compiled to run or executed.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from ..errors import InputError
from .code_python import PREFILTER, read_python
from .model import AuthKind, EvidenceFormat, EvidenceSummary, ObservedCall, Principal, UnresolvedCall, strip_url

__all__ = ["CodeLimits", "CodeRead", "McpServer", "read_code"]

_SKIP_DIRS = frozenset(
    {
        "node_modules",
        ".git",
        ".hg",
        ".svn",
        "venv",
        ".venv",
        "env",
        ".env",
        "site-packages",
        "dist-packages",
        "dist",
        "build",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".next",
        "bower_components",
    }
)
_PY = frozenset({".py"})
_JS = {".js": "js", ".mjs": "js", ".cjs": "js", ".jsx": "jsx", ".ts": "ts", ".mts": "ts", ".cts": "ts", ".tsx": "tsx"}
_MCP_CONFIGS = frozenset({".mcp.json", "mcp.json", "claude_desktop_config.json"})
#: Whose credential the code shows, per provider family, to the principal its calls carry.
_FAMILY = {"googleapiclient": "google", "msgraph-sdk": "graph", "PyGithub": "github", "githubkit": "github"}


@dataclass(frozen=True, slots=True)
class CodeLimits:
    max_files: int = 50_000
    #: A source file larger than this is skipped (generated bundles, vendored minified code).
    max_file_bytes: int = 2 * 1024 * 1024
    max_total_bytes: int = 1024 * 1024 * 1024
    max_seconds: float = 600.0


@dataclass(frozen=True, slots=True)
class McpServer:
    """An MCP server an MCP client configuration names."""

    file: str
    name: str
    url: str


@dataclass(slots=True)
class CodeRead:
    """What reading the code gave beside its calls (filled while :func:`read_code` streams)."""

    summaries: list[EvidenceSummary] = field(default_factory=list)
    unresolved: list[UnresolvedCall] = field(default_factory=list)
    servers: list[McpServer] = field(default_factory=list)
    hints: set[str] = field(default_factory=set)
    files: int = 0


@dataclass(slots=True)
class _Stats:
    label: str
    calls: int = 0
    skipped: int = 0
    reasons: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        self.skipped += 1
        self.reasons[reason] = self.reasons.get(reason, 0) + 1


def _js_reader() -> Callable[..., Iterator[ObservedCall | UnresolvedCall]] | None:
    try:
        mod = importlib.import_module("ramscope.evidence.code_js")
    except ImportError:
        return None
    reader = getattr(mod, "read_js", None)
    return reader if callable(reader) else None


def _files(root: Path, label: str, stats: _Stats, limits: CodeLimits) -> Iterator[tuple[Path, str]]:
    """(path, label) of each file under ``root``, dependency trees and outward symlinks skipped."""
    if root.is_file():
        yield root, label
        return
    real_root = os.path.realpath(root)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.endswith(".egg-info"))
        rel_dir = os.path.relpath(dirpath, root)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_symlink():
                target = os.path.realpath(path)
                if os.path.commonpath([real_root, target]) != real_root:
                    stats.skip("a symlink out of the root")
                    continue
            rel = PurePosixPath(*Path(rel_dir).parts, name) if rel_dir != "." else PurePosixPath(name)
            yield path, (str(PurePosixPath(label) / rel) if label not in {"", "."} else str(rel))


def _kind(path: Path) -> tuple[str, str] | None:
    name = path.name
    if name in _MCP_CONFIGS or (name == "mcp.json" and path.parent.name in {".cursor", ".vscode"}):
        return "mcp-config", ""
    suffix = path.suffix.lower()
    if suffix in _PY:
        return "python", ""
    if suffix in _JS and not name.endswith((".min.js", ".d.ts")):
        return "js", _JS[suffix]
    return None


def _mcp_config(data: bytes, label: str) -> list[McpServer]:
    """Remote servers of an MCP client configuration (``mcpServers`` of Claude / Cursor, ``servers`` of VS Code)."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return []
    out = []
    if isinstance(doc, dict):
        for key in ("mcpServers", "servers"):
            block = doc.get(key)
            if not isinstance(block, dict):
                continue
            for name, entry in block.items():
                if isinstance(entry, dict) and isinstance(entry.get("url") or entry.get("serverUrl"), str):
                    url = strip_url(str(entry.get("url") or entry.get("serverUrl")))
                    if url:
                        out.append(McpServer(label, str(name), url))
    return out


def read_code(
    roots: Sequence[str | os.PathLike[str]], info: CodeRead, *, limits: CodeLimits = CodeLimits()
) -> Iterator[ObservedCall]:
    """The calls the code under ``roots`` makes (a call site each); unresolved sites, MCP servers of client
    configurations and per-root summaries go to ``info``. A root that does not exist is an InputError."""
    started = time.monotonic()
    total = 0
    js = _js_reader()
    pending: list[ObservedCall] = []
    for root_arg in roots:
        label = os.fspath(root_arg)
        root = Path(label)
        if not root.exists():
            raise InputError("no such file or directory (--code)", source=label)
        stats = _Stats(label)
        if root.is_file():
            label = root.name if os.path.isabs(label) else PurePosixPath(Path(label)).as_posix()
        else:
            label = "" if os.path.isabs(os.fspath(root_arg)) else PurePosixPath(Path(os.fspath(root_arg))).as_posix()
        for path, name in _files(root, label, stats, limits):
            kind = _kind(path)
            if kind is None:
                continue
            if info.files >= limits.max_files:
                stats.skip(f"more than {limits.max_files} files")
                continue
            if time.monotonic() - started > limits.max_seconds:
                stats.skip(f"over the {limits.max_seconds:g} s bound")
                continue
            try:
                size = path.stat().st_size
                if size > limits.max_file_bytes:
                    stats.skip(f"a file over {limits.max_file_bytes} bytes")
                    continue
                if total + size > limits.max_total_bytes:
                    stats.skip(f"over {limits.max_total_bytes} bytes in all")
                    continue
                data = path.read_bytes()[: limits.max_file_bytes]
            except OSError:
                stats.skip("unreadable")
                continue
            total += len(data)
            info.files += 1
            what, dialect = kind
            if what == "mcp-config":
                info.servers.extend(_mcp_config(data, name))
                continue
            if what == "js":
                if js is None:
                    stats.skip("TypeScript/JavaScript (the reader ramscope.evidence.code_js is not installed)")
                    continue
                items: Any = js(data, name, dialect=dialect)
            elif not any(word in data for word in PREFILTER):
                continue  # names no client ramscope knows: nothing to read
            else:
                items = read_python(data, name, hints=info.hints, open_file=_opener(root, label, limits))
            try:
                for item in items:
                    if isinstance(item, UnresolvedCall):
                        info.unresolved.append(item)
                    else:
                        stats.calls += 1
                        pending.append(item)
            except (RecursionError, MemoryError, ValueError):
                stats.skip("a file the reader could not finish")
        info.summaries.append(
            EvidenceSummary(stats.label, EvidenceFormat.CODE, stats.calls, stats.skipped, stats.reasons)
        )
    # Whose credential: the code's own evidence (a user OAuth flow, a service account key) per provider.
    for call in pending:
        yield _with_identity(call, info.hints)


def _opener(root: Path, label: str, limits: CodeLimits) -> Callable[[str], bytes | None]:
    """Reads a file the code names (an OpenAPI toolset's spec) by its label, only inside the root."""
    base = root if root.is_dir() else root.parent
    real_root = os.path.realpath(base)
    prefix = "" if label in {"", "."} or root.is_file() else label.rstrip("/") + "/"

    def read(target: str) -> bytes | None:
        rel = target[len(prefix) :] if prefix and target.startswith(prefix) else target
        if rel.startswith(("/", "..")):
            return None
        path = os.path.realpath(base / rel)
        if os.path.commonpath([real_root, path]) != real_root or not os.path.isfile(path):
            return None
        try:
            with open(path, "rb") as f:
                return f.read(limits.max_file_bytes + 1)[: limits.max_file_bytes]
        except OSError:
            return None

    return read


def _with_identity(call: ObservedCall, hints: set[str]) -> ObservedCall:
    family = _FAMILY.get(call.via)
    if family is None:
        return call
    user, app = f"{family}:user" in hints, f"{family}:app" in hints
    if user == app:
        return call
    return replace(call, auth=AuthKind.BEARER, principal=Principal.USER if user else Principal.APP)
