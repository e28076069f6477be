"""Rendering diagnostics: compiler-style text, JSON, and SARIF 2.1.0."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._text import for_terminal
from .._version import __version__
from ..card import Card
from ..diagnostics import Diagnostic, Severity, all_rules, count_by_severity

if TYPE_CHECKING:
    from .report import Report, StoredReport

__all__ = [
    "CardDiagnostics",
    "Finding",
    "diagnostic_line",
    "findings",
    "is_failing",
    "render_json",
    "render_sarif",
    "render_text",
    "rules_markdown",
    "summary_line",
]

INFORMATION_URI = "https://github.com/a2aproject/A2A/issues/1426"
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


@dataclass(frozen=True, slots=True)
class CardDiagnostics:
    card: Card
    diagnostics: Sequence[Diagnostic]


def summary_line(diags: Sequence[Diagnostic]) -> str:
    c = count_by_severity(diags)
    parts = []
    for sev in Severity:
        n = c[sev]
        if n:
            parts.append(f"{n} {sev.value}{'' if n == 1 else 's'}")
    return ", ".join(parts) if parts else "no problems"


def diagnostic_line(source: str, position: tuple[int, int] | None, d: Finding) -> str:
    """One finding the way compilers print them: ``file:line:col: severity[code] path: message``."""
    where = for_terminal(source)
    if position:
        where += f":{position[0]}:{position[1]}"
    return f"{where}: {d.severity}[{d.code}] {for_terminal(d.path or '/')}: {for_terminal(d.message)}"


def render_text(results: Sequence[CardDiagnostics], *, min_severity: Severity = Severity.INFO) -> str:
    lines: list[str] = []
    for res in results:
        shown = [d for d in res.diagnostics if d.severity.rank <= min_severity.rank]
        # File order where positions are known: the order a reader walks the file in.
        positioned = [(res.card.position(d.path), i, d) for i, d in enumerate(shown)]
        positioned.sort(key=lambda t: (t[0] or (0, 0), t[1]))
        for pos, _, d in positioned:
            lines.append(diagnostic_line(res.card.source, pos, Finding.of(d)))
            if d.hint:
                lines.append(f"    hint: {for_terminal(d.hint)}")
        lines.append(f"{for_terminal(res.card.source)}: {summary_line(res.diagnostics)}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class Finding:
    """A diagnostic as a report holds it (a :class:`Diagnostic` and its source, or its JSON)."""

    code: str
    severity: str
    path: str
    message: str
    hint: str | None = None
    #: The spec URL a finding points into; None: the card.
    source: str | None = None

    @classmethod
    def of(cls, d: Diagnostic, source: str | None = None) -> Finding:
        return cls(d.code, d.severity.value, d.path, d.message, d.hint, source)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Finding:
        return cls(
            str(doc.get("code", "")),
            str(doc.get("severity", "")),
            str(doc.get("path") or ""),
            str(doc.get("message", "")),
            doc.get("hint") if isinstance(doc.get("hint"), str) else None,
            doc.get("source") if isinstance(doc.get("source"), str) else None,
        )

    @property
    def rank(self) -> int:
        try:
            return Severity(self.severity).rank
        except ValueError:
            return 0  # an unknown severity from a saved report is shown, not hidden


#: Errors that make a report's exit code non-zero: the card's own (1) and each access whose permissions
#: are unknown (3). Other errors (a spec that could not be fetched ...) are the reasons for those.
_FAILING_STAGES = frozenset({"parse", "validate"})
_FAILING_CODES = frozenset({"access-unresolved", "access-undetermined"})


def is_failing(d: Finding) -> bool:
    if d.severity != Severity.ERROR.value or d.source is not None:
        return False
    if d.code in _FAILING_CODES:
        return True
    stage = {r.code: r.stage for r in all_rules()}.get(d.code)
    return stage in _FAILING_STAGES


def findings(report: Report | StoredReport) -> list[Finding]:
    # The report model is not needed to validate a card (start-up, issue 36): imported when a report is read.
    from .report import Report  # noqa: PLC0415

    if isinstance(report, Report):
        return [Finding.of(d, source) for d, source in report.diagnostics]
    diags = report.to_dict().get("diagnostics")
    return [Finding.from_json(d) for d in diags if isinstance(d, dict)] if isinstance(diags, list) else []


def _card_json(res: CardDiagnostics) -> dict[str, Any]:
    c = count_by_severity(res.diagnostics)
    return {
        "card": {"source": res.card.source, "sha256": res.card.sha256, "shape": res.card.shape.value},
        "valid": c[Severity.ERROR] == 0,
        "summary": {sev.value: c[sev] for sev in Severity},
        "diagnostics": [_with_position(res.card, d) for d in res.diagnostics],
    }


def _with_position(card: Card, d: Diagnostic) -> dict[str, Any]:
    out = d.to_dict()
    pos = card.position(d.path)
    if pos:
        out["line"], out["column"] = pos
    return out


def render_json(results: Sequence[CardDiagnostics]) -> list[dict[str, Any]]:
    return [_card_json(r) for r in results]


def render_sarif(results: Sequence[CardDiagnostics]) -> dict[str, Any]:
    rules = all_rules()
    index = {r.code: i for i, r in enumerate(rules)}
    sarif_results: list[dict[str, Any]] = []
    artifacts: list[dict[str, Any]] = []
    for art_index, res in enumerate(results):
        uri = sarif_uri(res.card.source)
        artifacts.append({"location": {"uri": uri}, "hashes": {"sha-256": res.card.sha256}})
        for d in res.diagnostics:
            region: dict[str, Any] = {}
            pos = res.card.position(d.path)
            if pos:
                region = {"startLine": pos[0], "startColumn": pos[1]}
            physical: dict[str, Any] = {"artifactLocation": {"uri": uri, "index": art_index}}
            if region:
                physical["region"] = region
            message = d.message + (f" (hint: {d.hint})" if d.hint else "")
            item: dict[str, Any] = {
                "ruleId": d.code,
                "level": _SARIF_LEVEL[d.severity],
                "message": {"text": sarif_text(message)},
                "locations": [
                    {
                        "physicalLocation": physical,
                        "logicalLocations": [{"fullyQualifiedName": d.path or "/", "kind": "element"}],
                    }
                ],
            }
            if d.code in index:
                item["ruleIndex"] = index[d.code]
            sarif_results.append(item)
    return sarif_log(
        [
            sarif_rule(
                r.code,
                r.summary,
                f"{r.summary} (stage: {r.stage})",
                _SARIF_LEVEL[r.severity],
                {"stage": r.stage},
            )
            for r in rules
        ],
        sarif_results,
        artifacts,
    )


def sarif_text(text: str) -> str:
    """A SARIF plain-text message: ``[``, ``]`` and ``\\`` escaped (SARIF 2.1.0 §3.11.6), so a
    stranger's ``[Approved](https://evil.example/phish)`` in a card shows as text, never as a link."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def sarif_uri(source: str) -> str:
    """A SARIF artifact URI for a card: a relative path percent-encoded (``%``, ``#``, ``?`` ... are
    the file's own characters: ``cards/..%2Fsrc%2Fapp.py#.json`` must not land on ``src/app.py``),
    an absolute one as a ``file:`` URI, a URL as given."""
    if "://" in source:
        return source
    from pathlib import Path, PurePath  # noqa: PLC0415 - SARIF only; pathlib costs start-up (issue 36)
    from urllib.parse import quote  # noqa: PLC0415

    path = PurePath(source)
    if path.is_absolute():
        return Path(source).as_uri()
    return quote(path.as_posix(), safe="/")


def sarif_rule(rule_id: str, summary: str, full: str, level: str, properties: dict[str, Any]) -> dict[str, Any]:
    """One SARIF ``reportingDescriptor``: the rule's id, a PascalCase name, its texts and level."""
    return {
        "id": rule_id,
        "name": "".join(p.title() for p in rule_id.replace("_", "-").split("-")),
        "shortDescription": {"text": sarif_text(summary)},
        "fullDescription": {"text": sarif_text(full)},
        "defaultConfiguration": {"level": level},
        "properties": properties,
    }


def sarif_log(
    rules: list[dict[str, Any]],
    results: list[dict[str, Any]],
    artifacts: list[dict[str, Any]],
    **run: Any,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one ramscope run (``validate`` and ``check`` both write one)."""
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "ramscope",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                **run,
                "artifacts": artifacts,
                "results": results,
                "columnKind": "unicodeCodePoints",
            }
        ],
    }


def rules_markdown() -> str:
    """The table of every diagnostic rule, as the README shows it (a test keeps the two equal)."""
    lines = ["| code | severity | stage | meaning |", "| --- | --- | --- | --- |"]
    lines += [f"| `{r.code}` | {r.severity.value} | {r.stage} | {r.summary} |" for r in all_rules()]
    return "\n".join(lines) + "\n"
