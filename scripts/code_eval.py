"""Score ``ramscope draft --code`` against hand-labelled calls of real open-source agents and Google's samples.

    python scripts/code_eval.py checkout --repos DIR [--mirrors /work/.mirror]
    python scripts/code_eval.py --repos DIR [--ramscope CMD] [--labels DIR] [--json FILE] [-v]

The labels (tests/fixtures/code-eval/*.json) name, per repository and commit, each call a file makes to an external
API, by hand, as the code names its operation (a Discovery method id, a GitHub REST operationId, a Slack method,
``METHOD /path`` or ``METHOD URL``, an MCP tool), plus lines that look like calls and are not (``not_calls``), calls
that cannot be told statically (``unresolved``) and lines neither rewarded nor penalised (``ignore``). No code of
those repositories is committed here: ``checkout`` writes each labelled commit from a stored mirror into DIR
(``git archive``), or check them out yourself as ``DIR/OWNER+NAME`` at the labelled commit.

Scoring runs ``CMD --offline --cache-dir EMPTY draft --code DIR/OWNER+NAME -o card.json --report report.json``
per repository, as the issue's benchmark does (offline, empty cache: no spec can be fetched), and reads the draft
report's ``call_sites`` in the labelled files. A site matches a label when its operation (or its method + URL)
names the same operation within ``--tolerance`` lines (a call spanning lines is labelled on its first line).
Recall = labelled calls matched / labelled calls; precision = matched sites / all sites reported in labelled
files (minus ``ignore`` lines). See docs/code-eval.md.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import shlex
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
LABELS = ROOT / "tests" / "fixtures" / "code-eval"
MIRRORS = Path("/work/.mirror")

_HTTP = re.compile(r"^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+(\S+)$", re.IGNORECASE)
# A leading version segment some namings keep and others drop (Graph's v1.0/beta, Notion's and Stripe's v1).
_VERSION = re.compile(r"^(v\d+(\.\d+)?|beta)$")
_JS = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")


@dataclass(frozen=True, slots=True)
class Label:
    repo: str
    path: str
    line: int
    ops: tuple[str, ...]
    family: str
    held_out: bool
    note: str = ""
    #: The statement's first and last lines where a reader may name the call anywhere in it (a toolset's
    #: constructor that lists its tools); the label's own line otherwise.
    span: tuple[int, int] | None = None

    def distance(self, line: int) -> int:
        lo, hi = self.span or (self.line, self.line)
        return 0 if lo <= line <= hi else min(abs(line - lo), abs(line - hi))


@dataclass(frozen=True, slots=True)
class Mark:
    """A labelled line that is not a call to score: a non-call, an unresolvable call, or one to ignore."""

    kind: str  # "not_call" | "unresolved" | "ignore"
    line: int
    why: str
    accept: tuple[str, ...] = ()


@dataclass(slots=True)
class FileLabels:
    repo: str
    path: str
    family: str
    held_out: bool
    calls: list[Label] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Repo:
    name: str
    commit: str
    license: str
    held_out: bool
    files: tuple[FileLabels, ...]


def load_labels(directory: Path) -> list[Repo]:
    repos: list[Repo] = []
    for p in sorted(directory.glob("*.json")):
        doc = json.loads(p.read_text("utf-8"))
        if not isinstance(doc, list):
            raise SystemExit(f"{p}: expected a JSON array of repositories")
        for i, r in enumerate(doc):
            where = f"{p}: [{i}]"
            try:
                held_out = "seen" not in r
                files = tuple(_file(r["repo"], held_out, f) for f in r["files"])
                repos.append(Repo(r["repo"], r["commit"], r["license"], held_out, files))
            except (KeyError, TypeError, ValueError) as e:
                raise SystemExit(f"{where}: malformed label ({e!r})") from None
    names = [r.name for r in repos]
    dup = [n for n, c in Counter(names).items() if c > 1]
    if dup:
        raise SystemExit(f"{directory}: repositories labelled twice: {', '.join(dup)}")
    return repos


def _file(repo: str, held_out: bool, f: Mapping[str, Any]) -> FileLabels:
    fl = FileLabels(repo, f["path"], f["family"], held_out)
    for c in f["calls"]:
        if isinstance(c, list):
            line, op, *rest = c
            fl.calls.append(Label(repo, fl.path, int(line), (op,), fl.family, held_out, rest[0] if rest else ""))
        else:
            ops = (c["op"], *c.get("also", ()))
            fam = c.get("family", fl.family)
            span = c.get("span")
            fl.calls.append(
                Label(
                    repo,
                    fl.path,
                    int(c["line"]),
                    ops,
                    fam,
                    held_out,
                    c.get("note", ""),
                    (int(span[0]), int(span[1])) if span else None,
                )
            )
    for kind, key in (("not_call", "not_calls"), ("unresolved", "unresolved"), ("ignore", "ignore")):
        for m in f.get(key, ()):
            if isinstance(m, list):
                fl.marks.append(Mark(kind, int(m[0]), " ".join(str(x) for x in m[1:])))
            else:
                fl.marks.append(Mark(kind, int(m["line"]), m.get("why", ""), tuple(m.get("accept", ()))))
    return fl


# -- operation names ------------------------------------------------------------------------------------------------


def _norm(op: str) -> tuple[Any, ...]:
    op = op.strip()
    m = _HTTP.match(op)
    if not m:
        return ("name", op)
    method, target = m.group(1).upper(), m.group(2)
    host = None
    if "://" in target:
        u = urlsplit(target)
        host, target = u.hostname, u.path
    target = target.split("?", 1)[0].split("#", 1)[0]
    segs = tuple(s.lower() for s in target.strip("/").split("/") if s)
    return ("http", method, host, segs)


def _placeholder(seg: str) -> bool:
    return seg.startswith("{") and "}" in seg


def _segs_equal(a: Sequence[str], b: Sequence[str]) -> bool:
    return len(a) == len(b) and all(x == y or _placeholder(x) or _placeholder(y) for x, y in zip(a, b, strict=True))


def same_operation(a: str, b: str) -> bool:
    """Whether two namings are one operation: equal names, or one HTTP method and path template (a ``{name}``
    segment matches any segment; hosts must agree when both name one; a leading version segment may be absent)."""
    na, nb = _norm(a), _norm(b)
    if na[0] != nb[0]:
        return False
    if na[0] == "name":
        return bool(na[1] == nb[1])
    if na[1] != nb[1] or (na[2] and nb[2] and na[2] != nb[2]):
        return False
    sa, sb = na[3], nb[3]
    if _segs_equal(sa, sb):
        return True
    for long, short in ((sa, sb), (sb, sa)):
        if len(long) == len(short) + 1 and _VERSION.match(long[0]) and _segs_equal(long[1:], short):
            return True
    return False


def site_names(site: Mapping[str, Any]) -> list[str]:
    """Every naming of a reported call site: its operation, its method + URL, its tool."""
    out: list[str] = []
    for key in ("operation", "tool"):
        v = site.get(key)
        if isinstance(v, str) and v:
            out.append(v)
    method, url = site.get("method"), site.get("url")
    if isinstance(method, str) and method and isinstance(url, str) and url:
        out.append(f"{method} {url}")
    return out


def _matches(names: Iterable[str], ops: Iterable[str]) -> bool:
    ops = tuple(ops)
    return any(same_operation(n, o) for n in names for o in ops)


# -- scoring --------------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Tally:
    tp: int = 0
    fn: int = 0
    fp: int = 0

    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None


@dataclass(slots=True)
class Result:
    tallies: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    misses: list[dict[str, Any]] = field(default_factory=list)
    false_positives: list[dict[str, Any]] = field(default_factory=list)
    unresolved_expected: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)

    def add(self, keys: Iterable[str], what: str) -> None:
        for k in keys:
            t = self.tallies[k]
            setattr(t, what, getattr(t, what) + 1)


def language(path: str) -> str:
    return "python" if path.endswith(".py") else "ts/js" if path.endswith(_JS) else "other"


def score_file(
    fl: FileLabels, sites: list[Mapping[str, Any]], unresolved: list[Mapping[str, Any]], tol: int, res: Result
) -> None:
    """Match one file's reported sites against its labels (greedy by label line, the nearest site first)."""
    lang = language(fl.path)
    split = "held-out" if fl.held_out else "seen"
    free = list(sites)
    for lab in sorted(fl.calls, key=lambda x: x.line):
        best: Mapping[str, Any] | None = None
        for s in free:
            line = s.get("line")
            if (
                isinstance(line, int)
                and lab.distance(line) <= tol
                and _matches(site_names(s), lab.ops)
                and (best is None or lab.distance(line) < lab.distance(int(best["line"])))
            ):
                best = s
        keys = ("overall", f"lang:{lang}", f"family:{lab.family}", f"repo:{fl.repo}", f"set:{split}")
        if best is not None:
            free.remove(best)
            res.add(keys, "tp")
        else:
            near = [
                f"{s.get('line')}:{'|'.join(site_names(s)) or '-'}"
                for s in sites
                if isinstance(s.get("line"), int) and lab.distance(int(s["line"])) <= tol
            ]
            unres = [
                f"{u.get('line')}: {u.get('reason')}"
                for u in unresolved
                if isinstance(u.get("line"), int) and lab.distance(int(u["line"])) <= tol
            ]
            res.add(keys, "fn")
            res.misses.append(
                {
                    "repo": fl.repo,
                    "site": f"{fl.path}:{lab.line}",
                    "expected": lab.ops[0],
                    "family": lab.family,
                    "reported_near": near,
                    "unresolved_near": unres,
                }
            )
    for s in free:
        raw = s.get("line")
        at = raw if isinstance(raw, int) else -(10**9)
        mark = min((m for m in fl.marks if abs(m.line - at) <= tol), key=lambda m: abs(m.line - at), default=None)
        names = site_names(s)
        if mark and mark.kind == "ignore":
            continue
        if mark and mark.kind == "unresolved" and mark.accept and _matches(names, mark.accept):
            continue
        fam = fl.family
        res.add(("overall", f"lang:{lang}", f"family:{fam}", f"repo:{fl.repo}", f"set:{split}"), "fp")
        res.false_positives.append(
            {
                "repo": fl.repo,
                "site": f"{fl.path}:{s.get('line')}",
                "reported": names,
                "via": s.get("via"),
                "family": fam,
                "labelled": f"{mark.kind} at {mark.line}: {mark.why}" if mark else None,
            }
        )
    for m in fl.marks:
        if m.kind != "unresolved":
            continue
        flagged = any(isinstance(u.get("line"), int) and abs(int(u["line"]) - m.line) <= tol for u in unresolved)
        res.unresolved_expected.append(
            {"repo": fl.repo, "site": f"{fl.path}:{m.line}", "why": m.why, "flagged": flagged}
        )


def run_draft(
    cmd: Sequence[str], root: Path, work: Path, timeout: float
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    cache = work / "cache"
    cache.mkdir()
    card, report = work / "card.json", work / "report.json"
    argv = [
        *cmd,
        "--offline",
        "--cache-dir",
        str(cache),
        "draft",
        "--code",
        str(root),
        "-o",
        str(card),
        "--report",
        str(report),
    ]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=timeout, cwd=work)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        rc, err = None, f"timed out after {timeout:g} s"
    info: dict[str, Any] = {
        "rc": rc,
        "seconds": round(time.perf_counter() - t0, 2),
        "stderr_tail": err.strip().splitlines()[-3:],
    }
    if not report.is_file():
        return None, info
    try:
        doc = json.loads(report.read_text("utf-8"))
    except ValueError as e:
        info["error"] = f"report is not JSON: {e}"
        return None, info
    return (doc if isinstance(doc, dict) else None), info


def _by_file(items: Iterable[Any], root: Path) -> dict[str, list[Mapping[str, Any]]]:
    """Report entries by file, relative to the repository root (a label may be relative to the root given, to the
    working directory, or absolute, depending on how the root was named)."""
    out: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for it in items:
        if not (isinstance(it, Mapping) and isinstance(it.get("file"), str)):
            continue
        f = it["file"].replace("\\", "/").removeprefix("./")
        if f.startswith("/"):
            with contextlib.suppress(ValueError):
                f = Path(f).relative_to(root).as_posix()
        elif f.startswith(root.name + "/"):
            f = f[len(root.name) + 1 :]
        out[f].append(it)
    return out


def repo_dir(base: Path, name: str) -> Path | None:
    for cand in (base / name.replace("/", "+"), base / name):
        if cand.is_dir():
            return cand
    return None


def score(repos: list[Repo], base: Path, cmd: Sequence[str], tol: int, timeout: float, only: set[str]) -> Result:
    res = Result()
    for repo in repos:
        if only and repo.name not in only:
            continue
        root = repo_dir(base, repo.name)
        if root is None:
            raise SystemExit(f"{base}: no checkout of {repo.name} (run: {Path(__file__).name} checkout --repos {base})")
        with tempfile.TemporaryDirectory(prefix="code-eval-") as tmp:
            report, info = run_draft(cmd, root.resolve(), Path(tmp), timeout)
        info["repo"] = repo.name
        if report is None:
            info["error"] = info.get("error", "no draft report was written")
            sites_by, unres_by = {}, {}
        else:
            sites_by = _by_file(report.get("call_sites") or (), root.resolve())
            unres_by = _by_file(report.get("unresolved") or (), root.resolve())
            info["call_sites"] = len(report.get("call_sites") or ())
            info["call_sites_more"] = report.get("call_sites_more", 0)
            skipped = [e for e in report.get("evidence") or () if isinstance(e, Mapping) and e.get("skipped")]
            labelled = {f.path for f in repo.files}
            info["labelled_files_skipped"] = [
                {"file": e.get("file"), "reasons": e.get("reasons")} for e in skipped if e.get("file") in labelled
            ]
        res.runs.append(info)
        for fl in repo.files:
            score_file(fl, sites_by.get(fl.path, []), unres_by.get(fl.path, []), tol, res)
    return res


# -- output ---------------------------------------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "  n/a" if x is None else f"{100 * x:5.1f}"


def render(res: Result, verbose: bool) -> str:
    lines = []
    for info in res.runs:
        extra = f", error: {info['error']}" if info.get("error") else ""
        skipped = info.get("labelled_files_skipped") or []
        extra += f", labelled files skipped: {len(skipped)}" if skipped else ""
        extra += (
            f", {info['call_sites_more']} call sites beyond the report's list" if info.get("call_sites_more") else ""
        )
        lines.append(
            f"ran {info['repo']}: rc {info['rc']}, {info['seconds']} s, {info.get('call_sites', 0)} call sites{extra}"
        )
    lines.append("")
    lines.append(f"{'scope':52} {'calls':>5} {'found':>5} {'false+':>6} {'recall':>6} {'precision':>9}")
    order = ("overall", "set:", "lang:", "family:", "repo:")
    for prefix in order:
        for k in sorted(k for k in res.tallies if (k == prefix if prefix == "overall" else k.startswith(prefix))):
            t = res.tallies[k]
            lines.append(f"{k:52} {t.tp + t.fn:5} {t.tp:5} {t.fp:6} {_pct(t.recall()):>6} {_pct(t.precision()):>9}")
    flagged = sum(1 for u in res.unresolved_expected if u["flagged"])
    lines.append("")
    lines.append(f"unresolvable calls flagged unresolved-call: {flagged} of {len(res.unresolved_expected)}")
    limit = None if verbose else 25
    by_file = Counter(f"{m['repo']} {m['site'].rsplit(':', 1)[0]}" for m in res.misses)
    if by_file:
        lines.append("\nfiles with the most misses:")
        lines.extend(f"  {n:3}  {k}" for k, n in by_file.most_common(10))
    lines.append(f"\nmisses ({len(res.misses)}):")
    for m in res.misses[:limit]:
        near = f"  [reported near: {', '.join(m['reported_near'])}]" if m["reported_near"] else ""
        unres = f"  [unresolved near: {'; '.join(m['unresolved_near'])}]" if m["unresolved_near"] else ""
        lines.append(f"  {m['repo']} {m['site']}  {m['expected']}{near}{unres}")
    lines.append(f"\nfalse positives ({len(res.false_positives)}):")
    for f in res.false_positives[:limit]:
        why = f"  [{f['labelled']}]" if f["labelled"] else ""
        lines.append(f"  {f['repo']} {f['site']}  {' | '.join(f['reported']) or '-'} via {f['via']}{why}")
    missed_unres = [u for u in res.unresolved_expected if not u["flagged"]]
    if missed_unres:
        lines.append(f"\nunresolvable calls not flagged ({len(missed_unres)}):")
        for u in missed_unres[:limit]:
            lines.append(f"  {u['repo']} {u['site']}  {u['why']}")
    return "\n".join(lines)


def to_json(res: Result) -> dict[str, Any]:
    return {
        "tallies": {
            k: {
                "calls": t.tp + t.fn,
                "found": t.tp,
                "false_positives": t.fp,
                "recall": t.recall(),
                "precision": t.precision(),
            }
            for k, t in sorted(res.tallies.items())
        },
        "misses": res.misses,
        "false_positives": res.false_positives,
        "unresolved_expected": res.unresolved_expected,
        "runs": res.runs,
    }


# -- checkout -------------------------------------------------------------------------------------------------------


def checkout(repos: list[Repo], base: Path, mirrors: Path) -> int:
    base.mkdir(parents=True, exist_ok=True)
    status = 0
    for repo in repos:
        dest = base / repo.name.replace("/", "+")
        if dest.exists():
            print(f"{repo.name}: {dest} exists, kept")
            continue
        git_dir = mirrors / repo.name.replace("/", "+") / "repo"
        if not git_dir.is_dir():
            print(f"{repo.name}: no mirror at {git_dir}", file=sys.stderr)
            status = 2
            continue
        p = subprocess.run(
            ["git", "--git-dir", str(git_dir), "archive", "--format=tar", repo.commit], check=False, capture_output=True
        )
        dest.mkdir()
        if p.returncode == 0:
            with tarfile.open(fileobj=io.BytesIO(p.stdout)) as tar:
                # The data filter refuses links out of the tree, absolute paths and device files.
                tar.extractall(dest, filter="data")
            print(f"{repo.name}: {repo.commit} → {dest}")
            continue
        # A stored snapshot lacks its largest blobs (binaries, bundles), which makes git archive fail: write the
        # regular files one by one and leave out the ones absent.
        missing = _blob_by_blob(git_dir, repo.commit, dest)
        if missing is None:
            print(
                f"{repo.name}: cannot read {repo.commit}: {p.stderr.decode(errors='replace').strip()}", file=sys.stderr
            )
            status = 2
            continue
        print(f"{repo.name}: {repo.commit} → {dest} ({len(missing)} files absent from the snapshot left out)")
    return status


def _blob_by_blob(git_dir: Path, commit: str, dest: Path) -> list[str] | None:
    ls = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", commit], check=False, capture_output=True
    )
    if ls.returncode != 0:
        return None
    missing: list[str] = []
    for entry in ls.stdout.split(b"\0"):
        if not entry:
            continue
        meta, _, raw = entry.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        path = raw.decode("utf-8", "surrogateescape")
        parts = Path(path).parts
        if kind != "blob" or mode == "120000" or Path(path).is_absolute() or ".." in parts:
            continue
        blob = subprocess.run(
            ["git", "--git-dir", str(git_dir), "cat-file", "blob", sha], check=False, capture_output=True
        )
        if blob.returncode != 0:
            missing.append(path)
            continue
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob.stdout)
    return missing


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    doc = (__doc__ or "").strip().splitlines()[0]
    if argv[:1] == ["checkout"]:
        ap = argparse.ArgumentParser(prog="code_eval.py checkout", description="write each labelled commit into DIR")
        ap.add_argument("--repos", type=Path, required=True)
        ap.add_argument("--mirrors", type=Path, default=MIRRORS, help="stored mirrors: MIRRORS/OWNER+NAME/repo")
        ap.add_argument("--labels", type=Path, default=LABELS)
        a = ap.parse_args(argv[1:])
        return checkout(load_labels(a.labels), a.repos, a.mirrors)
    ap = argparse.ArgumentParser(prog="code_eval.py", description=doc)
    ap.add_argument("--repos", type=Path, required=True, help="checkouts as DIR/OWNER+NAME (see: checkout)")
    ap.add_argument(
        "--ramscope",
        default=f"{shlex.quote(sys.executable)} -m ramscope",
        help="the command to run (default: this Python's -m ramscope)",
    )
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--tolerance", type=int, default=8, help="lines a site may sit from its label (default 8)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per repository's draft")
    ap.add_argument("--repo", action="append", default=[], help="score only this OWNER/NAME (repeatable)")
    ap.add_argument("--json", type=Path, help="also write the full result as JSON")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every miss and false positive")
    a = ap.parse_args(argv)
    repos = load_labels(a.labels)
    res = score(repos, a.repos, shlex.split(a.ramscope), a.tolerance, a.timeout, set(a.repo))
    print(render(res, a.verbose))
    if a.json:
        a.json.write_text(json.dumps(to_json(res), indent=1) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
