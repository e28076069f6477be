"""Rendering diagnostics: compiler-style text, JSON, and SARIF 2.1.0."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._text import for_terminal
from .._version import __version__
from ..card import Card
from ..diagnostics import Diagnostic, Severity, all_rules, count_by_severity

__all__ = ["CardDiagnostics", "render_json", "render_sarif", "render_text", "rules_markdown", "summary_line"]

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


def render_text(results: Sequence[CardDiagnostics], *, min_severity: Severity = Severity.INFO) -> str:
    lines: list[str] = []
    for res in results:
        shown = [d for d in res.diagnostics if d.severity.rank <= min_severity.rank]
        # File order where positions are known: the order a reader walks the file in.
        positioned = [(res.card.position(d.path), i, d) for i, d in enumerate(shown)]
        positioned.sort(key=lambda t: (t[0] or (0, 0), t[1]))
        for pos, _, d in positioned:
            where = for_terminal(res.card.source)
            if pos:
                where += f":{pos[0]}:{pos[1]}"
            lines.append(
                f"{where}: {d.severity.value}[{d.code}] {for_terminal(d.path or '/')}: {for_terminal(d.message)}"
            )
            if d.hint:
                lines.append(f"    hint: {for_terminal(d.hint)}")
        lines.append(f"{for_terminal(res.card.source)}: {summary_line(res.diagnostics)}")
    return "\n".join(lines) + "\n"


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
        artifacts.append({"location": {"uri": res.card.source}, "hashes": {"sha-256": res.card.sha256}})
        for d in res.diagnostics:
            region: dict[str, Any] = {}
            pos = res.card.position(d.path)
            if pos:
                region = {"startLine": pos[0], "startColumn": pos[1]}
            physical: dict[str, Any] = {"artifactLocation": {"uri": res.card.source, "index": art_index}}
            if region:
                physical["region"] = region
            message = d.message + (f" (hint: {d.hint})" if d.hint else "")
            item: dict[str, Any] = {
                "ruleId": d.code,
                "level": _SARIF_LEVEL[d.severity],
                "message": {"text": message},
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
                        "rules": [
                            {
                                "id": r.code,
                                "name": "".join(p.title() for p in r.code.split("-")),
                                "shortDescription": {"text": r.summary},
                                "fullDescription": {"text": f"{r.summary} (stage: {r.stage})"},
                                "defaultConfiguration": {"level": _SARIF_LEVEL[r.severity]},
                                "properties": {"stage": r.stage},
                            }
                            for r in rules
                        ],
                    }
                },
                "artifacts": artifacts,
                "results": sarif_results,
                "columnKind": "unicodeCodePoints",
            }
        ],
    }


def rules_markdown() -> str:
    """The table of every diagnostic rule, as the README shows it (a test keeps the two equal)."""
    lines = ["| code | severity | stage | meaning |", "| --- | --- | --- | --- |"]
    lines += [f"| `{r.code}` | {r.severity.value} | {r.stage} | {r.summary} |" for r in all_rules()]
    return "\n".join(lines) + "\n"
