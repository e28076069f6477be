"""Step-up evidence: what a server said an operation needs, read from its answers in the evidence.

A server that refuses a call for want of scope says which scope it wanted; a reader that sees the
answer keeps that, and nothing else of it (values are bounded, header values are never kept whole):

* ``WWW-Authenticate: Bearer error="insufficient_scope", scope="..."`` on a 401/403 (RFC 6750 3.1;
  MCP 2026-07-28 step-up: authoritative for that operation), in a HAR entry's response or an MCP
  log line's response headers;
* an MCP tool result whose ``_meta["mcp/www_authenticate"]`` carries such a challenge (SEP-1488, the
  OpenAI Apps SDK form);
* GitHub's REST response headers: ``X-Accepted-OAuth-Scopes`` (the classic scopes the endpoint accepts,
  any one of them) beside ``X-OAuth-Scopes`` (those the token had), and
  ``X-Accepted-GitHub-Permissions`` (fine-grained: sets separated by ``;``, any one set, each
  ``name=level`` joined by ``,``, all of the set;
  https://github.blog/changelog/2023-08-10-x-accepted-github-permissions-header-for-fine-grained-permission-actors).

``draft`` writes each tool's or endpoint's evidenced requirement into the drafted operation and its
report; ``audit`` holds it against the card's derived scopes (:func:`findings`): a requirement the
tier of the access would not grant is ``missing-grant``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..diagnostics import Diagnostic, Severity, rule
from ..store._challenge import parse_www_authenticate
from .rules import MISSING_GRANT

__all__ = [
    "INTERESTING_HEADERS",
    "STEP_UP_OBSERVED",
    "StepUp",
    "describe",
    "draft_diagnostics",
    "draft_records",
    "findings",
    "from_headers",
    "from_log_line",
    "from_tool_result",
    "from_www_authenticate",
]

#: Response headers a reader keeps (lower-case) for :func:`from_headers`; nothing else of a response.
INTERESTING_HEADERS = frozenset(
    {"www-authenticate", "x-accepted-oauth-scopes", "x-oauth-scopes", "x-accepted-github-permissions"}
)
_MAX_VALUE = 4096
_MAX_SCOPES = 64
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,256}\Z")  # RFC 6749 3.3 scope-token
_LEVELS = {"read": 1, "write": 2, "admin": 3}


@dataclass(frozen=True, slots=True)
class StepUp:
    """What one answer said the operation needs."""

    #: ``insufficient_scope`` (a challenge), ``mcp/www_authenticate`` (a tool result's ``_meta``),
    #: ``x-accepted-oauth-scopes``, ``x-accepted-github-permissions``.
    kind: str
    #: Alternatives (any one suffices), each the scopes all needed. A challenge is one alternative.
    alternatives: tuple[tuple[str, ...], ...]
    #: The scopes the token had, when the answer says so (GitHub's ``X-OAuth-Scopes``).
    held: tuple[str, ...] = ()
    #: The HTTP status of the answer (403, 401 ...), or None (a tool result, a 200 with headers).
    status: int | None = None

    @property
    def scopes(self) -> list[str]:
        return sorted({s for alt in self.alternatives for s in alt})

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "alternatives": [list(a) for a in self.alternatives],
            "held": list(self.held),
            "status": self.status,
        }


def _scopes(text: str) -> tuple[str, ...]:
    out = [s for s in text[:_MAX_VALUE].split() if _SCOPE.match(s)]
    return tuple(dict.fromkeys(out[:_MAX_SCOPES]))


def _listed(text: str) -> tuple[str, ...]:
    out = [s.strip() for s in text[:_MAX_VALUE].split(",")]
    return tuple(dict.fromkeys(s for s in out[:_MAX_SCOPES] if s and _SCOPE.match(s)))


#: GitHub's MCP server challenges with the token's scopes and the tool's together, and says the tool's in
#: its error_description (github/github-mcp-server pkg/http/middleware/scope_challenge.go).
_ADDITIONAL = re.compile(r"^Additional scopes required: (?P<list>.+)$")


def from_www_authenticate(values: Iterable[str], status: int | None = None, kind: str = "") -> StepUp | None:
    """A Bearer ``insufficient_scope`` challenge naming its ``scope``, or None.

    The challenge's ``scope`` is what the client is to request (MCP 2026-07-28: the scopes it had and
    the operation's, together, where a server says so); where the ``error_description`` says which of
    them are the additional ones (GitHub's "Additional scopes required: repo"), those are the
    operation's need and the rest were held."""
    for c in parse_www_authenticate(v[:_MAX_VALUE] for v in values if isinstance(v, str)):
        if c.scheme.lower() != "bearer" or c.params.get("error") != "insufficient_scope":
            continue
        scopes = _scopes(c.params.get("scope", ""))
        if not scopes:
            continue
        m = _ADDITIONAL.match(c.params.get("error_description", "")[:_MAX_VALUE])
        needed = _listed(m.group("list")) if m else ()
        if needed and set(needed) <= set(scopes):
            held = tuple(s for s in scopes if s not in needed)
            return StepUp(kind or "insufficient_scope", (needed,), held=held, status=status)
        return StepUp(kind or "insufficient_scope", (scopes,), status=status)
    return None


def _github_permissions(text: str) -> tuple[tuple[str, ...], ...]:
    alts: list[tuple[str, ...]] = []
    for group in text[:_MAX_VALUE].split(";")[:_MAX_SCOPES]:
        names: list[str] = []
        for part in group.split(","):
            name, _, level = part.strip().partition("=")
            name, level = name.strip(), level.strip().lower()
            if name and level in _LEVELS and _SCOPE.match(name):
                names.append(f"{name}:{level}")
        if names:
            alts.append(tuple(dict.fromkeys(names)))
    return tuple(dict.fromkeys(alts))


def from_headers(headers: Mapping[str, Sequence[str]], status: int | None) -> StepUp | None:
    """What a response's headers say the request needed (names lower-case), or None."""
    challenge = from_www_authenticate(headers.get("www-authenticate", ()), status)
    if challenge is not None and status in (401, 403):
        return challenge
    held = tuple(s for v in headers.get("x-oauth-scopes", ()) for s in _listed(v))
    accepted = tuple(s for v in headers.get("x-accepted-oauth-scopes", ()) for s in _listed(v))
    if accepted:
        return StepUp("x-accepted-oauth-scopes", tuple((s,) for s in accepted), held=held, status=status)
    fine = tuple(a for v in headers.get("x-accepted-github-permissions", ()) for a in _github_permissions(v))
    if fine:
        return StepUp("x-accepted-github-permissions", fine, status=status)
    return None


def from_tool_result(result: Mapping[str, Any]) -> StepUp | None:
    """A tool result carrying ``_meta["mcp/www_authenticate"]`` (a challenge, or a list of them), or None."""
    meta = result.get("_meta")
    value = meta.get("mcp/www_authenticate") if isinstance(meta, Mapping) else None
    values = (
        [value]
        if isinstance(value, str)
        else [v for v in value if isinstance(v, str)][:8]
        if isinstance(value, list)
        else []
    )
    return from_www_authenticate(values, None, "mcp/www_authenticate") if values else None


_RESPONSE_HEADER_KEYS = ("response_headers", "responseHeaders")
_ANSWER_DIRECTIONS = frozenset({"receive", "recv", "received", "in", "incoming", "response", "server"})


def _pairs(raw: Any) -> list[tuple[Any, Any]]:
    """A headers value as logs write it: a mapping, ``[name, value]`` pairs, or HAR's ``{name, value}`` objects."""
    if isinstance(raw, Mapping):
        return list(raw.items())[:256]
    out: list[tuple[Any, Any]] = []
    for p in raw[:256] if isinstance(raw, list) else ():
        if isinstance(p, list) and len(p) == 2:
            out.append((p[0], p[1]))
        elif isinstance(p, Mapping):
            out.append((p.get("name"), p.get("value")))
    return out


def _header_map(raw: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k, v in _pairs(raw):
        name = str(k).lower()
        if name not in INTERESTING_HEADERS:
            continue
        values = [v] if isinstance(v, str) else [x for x in v if isinstance(x, str)] if isinstance(v, list) else []
        out.setdefault(name, []).extend(x[:_MAX_VALUE] for x in values[:8])
    return out


def from_log_line(line: Mapping[str, Any], msg: Mapping[str, Any] | None) -> tuple[StepUp | None, int | None]:
    """What an MCP log line that answers a request says it needed, and the line's HTTP status: the
    response's headers (``response_headers``, or ``headers`` on a line that is an answer), its ``status``,
    and a tool result's ``_meta["mcp/www_authenticate"]``."""
    status = line.get("status")
    code = status if isinstance(status, int) and not isinstance(status, bool) and 100 <= status < 600 else None
    raw = next((line[k] for k in _RESPONSE_HEADER_KEYS if k in line), None)
    if raw is None and (code is not None or str(line.get("direction", "")).lower() in _ANSWER_DIRECTIONS):
        raw = line.get("headers")
    found = from_headers(_header_map(raw), code) if raw is not None else None
    if found is None and msg is not None and isinstance(msg.get("result"), Mapping):
        found = from_tool_result(msg["result"])
    return found, code


# --------------------------------------------------------------------------- draft

STEP_UP_OBSERVED = rule(
    "step-up-observed",
    Severity.INFO,
    "The evidence shows a server saying what an operation needs (a step-up challenge, a tool result's "
    '_meta["mcp/www_authenticate"], GitHub\'s accepted-scopes headers); the draft records it with the operation.',
    stage="evidence",
)
#: Distinct step-ups kept per drafted operation.
MAX_PER_OPERATION = 16


def describe(seen: Sequence[tuple[StepUp, str]]) -> str:
    """The sentence a drafted operation's description carries for its evidenced step-ups."""
    if not seen:
        return ""
    parts = [f"{' or '.join(' '.join(a) for a in step.alternatives)} ({step.kind}, {where})" for step, where in seen]
    return " Step-up observed: the server asked for " + "; ".join(parts) + "."


def draft_records(
    op_id: str, access_ids: Sequence[str], tool: str, spec_url: str, seen: Sequence[tuple[StepUp, str]]
) -> list[dict[str, Any]]:
    """The draft report's ``step_up`` entries of one operation, each with a policy pin a reviewer may adopt."""
    out: list[dict[str, Any]] = []
    for step, where in seen:
        first = list(step.alternatives[0]) if step.alternatives else []
        out.append(
            {
                "operation": op_id,
                "accesses": list(access_ids),
                "tool": tool or None,
                "spec_url": spec_url,
                **step.to_dict(),
                "evidence": where,
                "pin": [
                    {"access": a, "scopes": first, "reason": f"step-up observed ({step.kind}) at {where}"}
                    for a in access_ids
                ]
                if step.kind in ("insufficient_scope", "mcp/www_authenticate")
                else [],
            }
        )
    return out


def draft_diagnostics(records: Sequence[Mapping[str, Any]]) -> list[Diagnostic]:
    return [
        STEP_UP_OBSERVED(
            "",
            f"operation {r['operation']!r}: the server asked for "
            + " or ".join(" ".join(a) for a in r["alternatives"])
            + f" ({r['kind']}, {r['evidence']}); written into its description and the draft report"
            + ("; the report's pin makes it the access's scopes under --policy" if r["pin"] else ""),
            data={"operation": r["operation"], "alternatives": r["alternatives"], "kind": r["kind"]},
        )
        for r in records
    ]


# --------------------------------------------------------------------------- audit


def _covers(held: set[str], scope: str, hierarchy: Mapping[str, Sequence[str]]) -> bool:
    """Does a set of granted scopes include ``scope``, by name, by a provider's hierarchy (GitHub's
    ``repo`` includes ``security_events``), or by level (``issues:write`` includes ``issues:read``)?"""
    if scope in held:
        return True
    if any(scope in hierarchy.get(h, ()) for h in held):
        return True
    name, _, level = scope.rpartition(":")
    if name and level in _LEVELS:
        return any(
            h.rpartition(":")[0] == name and _LEVELS.get(h.rpartition(":")[2], 0) >= _LEVELS[level] for h in held
        )
    return False


def findings(
    evidenced: Sequence[tuple[Sequence[str], Any, StepUp]],
    tier_scopes: Mapping[str, set[str]],
    hierarchies: Mapping[str, Mapping[str, Sequence[str]]],
) -> list[Diagnostic]:
    """``missing-grant`` for each evidenced requirement the card's tier for the access would not grant.

    ``evidenced``: (access ids, the call, what its answer said); ``tier_scopes``: access id -> the
    scopes of the tier that access is in, for its identity; ``hierarchies``: access id -> the scope
    hierarchy its server documents (may be empty). A challenge's scopes are all needed; of several
    alternatives (GitHub's accepted scopes), any one does. Reported once per access and requirement.
    """
    out: list[Diagnostic] = []
    seen: set[tuple[str, tuple[tuple[str, ...], ...]]] = set()
    for ids, call, step in evidenced:
        for access in ids:
            key = (access, step.alternatives)
            if key in seen or access not in tier_scopes:
                continue
            seen.add(key)
            held = tier_scopes[access]
            hierarchy = hierarchies.get(access, {})
            if any(all(_covers(held, s, hierarchy) for s in alt) for alt in step.alternatives):
                continue
            wanted = " or ".join(" ".join(alt) for alt in step.alternatives)
            where = f"{call.source}:{call.entry}" if call.source else "the evidence"
            out.append(
                MISSING_GRANT(
                    "",
                    f"access {access!r}: {call.label} was answered with a step-up ({step.kind}) asking for {wanted} "
                    f"({where}), which the card's tier for it does not include ("
                    + (", ".join(sorted(held)) or "no scope")
                    + ")",
                    hint="declare the scope for the tool (its securitySchemes, or a policy [[pin]]) or check why the "
                    "server asks for it",
                    data={
                        "access": access,
                        "step_up": step.to_dict(),
                        "tier_scopes": sorted(held),
                        "evidence": where,
                    },
                )
            )
    return out
