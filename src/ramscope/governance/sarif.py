"""Rendering ``check`` results: compiler-style text and SARIF 2.1.0 for code scanning.

In SARIF each rule of the rules file is a ``reportingDescriptor``; each finding a result on the
card's line and column (``physicalLocation``) with its JSON pointer (``logicalLocations``); a
waived finding carries an external ``suppression`` with the waiver's justification, which
code scanning shows as dismissed rather than open.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from .._text import for_terminal
from ..outputs.diagnostics import sarif_log, sarif_rule, sarif_text, sarif_uri
from .check import CardResult, exit_code
from .rules import RuleSet

__all__ = ["render_sarif", "render_text"]


def render_text(results: Sequence[CardResult]) -> str:
    lines: list[str] = []
    for res in results:
        for f in res.findings:
            where = for_terminal(res.card)
            if f.position.line is not None:
                where += f":{f.position.line}:{f.position.column}"
            tag = " (waived)" if f.suppressed else ""
            lines.append(
                f"{where}: {f.severity}[{for_terminal(f.rule)}]{tag} {for_terminal(f.position.pointer or '/')}: "
                f"{for_terminal(f.message)}"
            )
            if f.suppressed:
                lines.append(f"    justification: {for_terminal(f.suppressed)}")
        counts = {
            sev: sum(1 for f in res.findings if f.severity == sev and not f.suppressed)
            for sev in ("error", "warning", "note")
        }
        waived = sum(1 for f in res.findings if f.suppressed)
        parts = [f"{n} {sev}{'' if n == 1 else 's'}" for sev, n in counts.items() if n]
        if waived:
            parts.append(f"{waived} waived")
        verdict = "passed" if res.passed else "FAILED"
        extra = "" if res.complete else " (derivation incomplete)"
        lines.append(f"{for_terminal(res.card)}: {verdict}{extra}: {', '.join(parts) or 'no findings'}")
    lines.append(f"exit code {exit_code(results)}")
    return "\n".join(lines) + "\n"


def render_sarif(results: Sequence[CardResult], rules: RuleSet) -> dict[str, Any]:
    index = {r.id: i for i, r in enumerate(rules.rules)}
    level = {"error": "error", "warning": "warning", "note": "note"}
    artifacts: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for art, res in enumerate(results):
        uri = sarif_uri(res.card)
        artifact: dict[str, Any] = {"location": {"uri": uri}}
        if res.sha256:
            artifact["hashes"] = {"sha-256": res.sha256}
        artifacts.append(artifact)
        for f in res.findings:
            physical: dict[str, Any] = {"artifactLocation": {"uri": uri, "index": art}}
            if f.position.line is not None:
                physical["region"] = {"startLine": f.position.line, "startColumn": f.position.column or 1}
            item: dict[str, Any] = {
                "ruleId": f.rule,
                "ruleIndex": index[f.rule],
                "level": level[f.severity],
                "message": {"text": sarif_text(f.message)},
                "locations": [
                    {
                        "physicalLocation": physical,
                        "logicalLocations": [{"fullyQualifiedName": f.position.pointer or "/", "kind": "element"}],
                    }
                ],
                # Stable across line moves: the same rule on the same access of the same card.
                "partialFingerprints": {
                    "ramscopeFinding/v1": hashlib.sha256(
                        "\x00".join((f.rule, res.card, f.access or "", f.message)).encode()
                    ).hexdigest()
                },
                "properties": {"kind": f.kind, "access": f.access, **dict(f.details)},
            }
            if f.suppressed:
                item["suppressions"] = [{"kind": "external", "justification": f.suppressed}]
            out.append(item)
    return sarif_log(
        [
            sarif_rule(
                r.id,
                r.summary,
                f"{r.summary} (rule kind: {r.kind})",
                level[r.severity],
                {"kind": r.kind, "tags": ["governance"]},
            )
            for r in rules.rules
        ],
        out,
        artifacts,
        automationDetails={"id": f"ramscope-check/{rules.source}"},
    )
