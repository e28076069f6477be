"""``ramscope export``: what a card may do, as rules a gateway enforces.

Two forms, both built from the report alone:

- **Cedar** (:func:`cedar_policies`, :func:`cedar_schema`): one ``permit`` per resource access.
  The principal is the agent (``Ramscope::Agent``); the action is the HTTP method
  (``Ramscope::Action::"POST"``), an MCP tool call (``"mcp:tools/call"``) or an A2A message
  (``"a2a:SendMessage"``); the resource is an ``HttpEndpoint`` (host, concrete request path,
  matched against the operation's path template with ``like``), an ``McpTool`` (server URL,
  tool) or an ``A2aSkill`` (agent card URL, skill). Conditions: the identity the access uses
  (``context.identity``), and for accesses with ``confirmation_required``,
  ``context.confirmed == true``. Cedar denies whatever no policy permits, so every undeclared
  operation, tool, method and every unconfirmed HITL call is denied.
- **JSON** (:func:`allowlist`): the same facts as an allowlist (host, method, path template and
  an anchored regular expression; server and tool; agent and skill) for gateways without Cedar.

Exact, and fail closed (issue 22): each HTTP permit is on the API's own hosts (``target.servers``:
OpenAPI ``servers``, Discovery ``rootUrl``) and its exact path template (:func:`path_template`:
one non-empty, slash-free, non-dot segment per parameter; Discovery ``{+name}`` only as its
``flatPath`` or ``pattern`` spells it out). An access the derivation could not resolve, or whose
permissions were not determined, has nothing to permit: it is left out (so denied) and listed
under ``not_exported``. An invalid card's report exports nothing (:class:`InputError`). The
principal is the card's sha256, which the card cannot choose.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from . import facts

__all__ = [
    "A2A_ACTION",
    "HTTP_METHODS",
    "MCP_ACTION",
    "NAMESPACE",
    "PathTemplate",
    "agent_id",
    "allowlist",
    "api_hosts",
    "cedar_policies",
    "cedar_schema",
    "cedar_schema_json",
    "cedar_string",
    "exportable",
    "path_template",
]

NAMESPACE = "Ramscope"
HTTP_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE", "POST", "PUT", "PATCH", "DELETE")
MCP_ACTION = "mcp:tools/call"
A2A_ACTION = "a2a:SendMessage"
ALLOWLIST_VERSION = 1
_PARAM = re.compile(r"\{[^{}]*\}")
_RESERVED = re.compile(r"\{\+([^{}]*)\}")


def cedar_string(text: str) -> str:
    """A Cedar string literal; quotes, backslashes and every non-printable character escaped."""
    out = ['"']
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch.isprintable() and ch.isascii():
            out.append(ch)
        else:
            out.append(f"\\u{{{ord(ch):x}}}")
    out.append('"')
    return "".join(out)


def _literal(text: str) -> str:
    return cedar_string(text)[1:-1].replace("*", "\\*")


#: What a request path may spell a dot segment with: RFC 3986 names ".", and a gateway that
#: passes the path undecoded lets a server decode %2e itself.
_DOTS = (".", "%2e", "%2E")
_ENCODED_SLASHES = ("%2F", "%2f")


@dataclass(frozen=True, slots=True)
class PathTemplate:
    """A path template as the export allows it: literal text and parameters, each parameter
    exactly one non-empty segment (or part of one) that is no dot segment.

    ``pieces`` alternates literal text and parameters: ``pieces[0]`` and every even index are
    literal (possibly ""), every odd index is a parameter's name. ``deny[i]``: for the parameter at
    ``pieces[2 * i + 1]``, the exact values that would make its segment ``.`` or ``..``.
    """

    pieces: tuple[str, ...]
    deny: tuple[tuple[str, ...], ...]

    @property
    def text(self) -> str:
        return "".join(p if i % 2 == 0 else "{" + p + "}" for i, p in enumerate(self.pieces))


def _dot_values(before: str, after: str) -> tuple[str, ...]:
    """Values of a parameter that, between ``before`` and ``after`` (the literal text of its own
    segment), make the segment ``.`` or ``..``, in each spelling a server may decode."""
    literal = before + after
    if literal.strip(".") or len(literal) >= 2:
        return ()
    out: list[str] = []
    for total in (1, 2):
        n = total - len(literal)
        if n >= 1:
            out += ["".join(combo) for combo in itertools.product(_DOTS, repeat=n)]
    return tuple(out)


def path_template(target: Mapping[str, Any]) -> PathTemplate | str:
    """The exact path template of an HTTP operation, or why none can be given.

    Every ``{name}`` is one segment. A Discovery ``{+name}`` (RFC 6570 reserved expansion, which
    may hold slashes) is spelled out by the method's ``flatPath`` when the report carries it, else
    by the parameter's ``pattern``; without either it could stand for any path under its prefix,
    so the operation is not exported. OpenAPI has no reserved expansion in paths: its ``{+p}`` is
    an ordinary parameter named ``+p``.
    """
    path = target.get("path")
    if not isinstance(path, str) or not path.startswith("/"):
        return f"the operation has no path template ({path!r})"
    discovery = target.get("kind") == "google-discovery"
    if discovery and "{+" in path:
        flat = target.get("flat_path")
        if isinstance(flat, str) and flat.startswith("/") and "{+" not in flat:
            path = flat
        else:
            hints = target.get("hints")
            patterns = hints.get("reserved_patterns") if isinstance(hints, Mapping) else None
            expanded = _expand_reserved(path, patterns if isinstance(patterns, Mapping) else {})
            if expanded is None:
                return (
                    f"the path {path!r} has a reserved expansion ({{+...}}) bounded by neither a flatPath nor "
                    "a pattern ramscope can read: it could stand for any path under its prefix"
                )
            path = expanded
    literals = _PARAM.split(path)
    names = [p[1:-1] for p in _PARAM.findall(path)]
    pieces: list[str] = [literals[0]]
    for name, lit in zip(names, literals[1:], strict=True):
        pieces += [name, lit]
    deny: list[tuple[str, ...]] = []
    for i in range(len(names)):
        before, after = pieces[2 * i], pieces[2 * i + 2]
        if not before and i > 0:
            return f"the path {path!r} has two parameters with nothing between them: no one value of each"
        if "{" in before or "}" in before or "{" in after or "}" in after:
            return f"the path {path!r} has unbalanced braces"
        # The literal text of the parameter's own segment, each side: the dot segments it could form.
        seg_before = before.rsplit("/", 1)[-1] if "/" in before or i == 0 else None
        seg_after = after.split("/", 1)[0] if "/" in after or i == len(names) - 1 else None
        alone = seg_before is not None and seg_after is not None
        deny.append(_dot_values(seg_before or "", seg_after or "") if alone else ())
    return PathTemplate(tuple(pieces), tuple(deny))


#: A Discovery parameter pattern ramscope reads: anchored, literal text and "[^/]+" segments only
#: (Google writes them as ``^projects/[^/]+/secrets/[^/]+$``). Anything else is not read.
_PATTERN_PART = re.compile(r"\[\^/\][+*]|\\[.\-:_~@/]|[A-Za-z0-9_\-:~@/]")


def _expand_reserved(path: str, patterns: Mapping[str, Any]) -> str | None:
    out: list[str] = []
    pos = 0
    for m in _RESERVED.finditer(path):
        out.append(path[pos : m.start()])
        pattern = patterns.get(m.group(1))
        if not isinstance(pattern, str):
            return None
        body = pattern.removeprefix("^").removesuffix("$")
        if not (pattern.startswith("^") and pattern.endswith("$")) or not body:
            return None
        parts = _PATTERN_PART.findall(body)
        if "".join(parts) != body:
            return None
        n = 0
        for part in parts:
            if part.startswith("[^/]"):
                out.append("{" + f"{m.group(1)}.{n}" + "}")
                n += 1
            else:
                out.append(part[-1])
        pos = m.end()
    out.append(path[pos:])
    return "".join(out)


def _like_conditions(template: PathTemplate) -> list[str]:
    """Cedar ``like`` conditions matching exactly the paths of a template.

    ``like``'s ``*`` matches any text, ``/`` and nothing included, so ``/calendars/*/events`` alone
    would permit ``/calendars/a/b/events`` and ``/calendars//events``. A path fills every parameter
    without a slash exactly when it has as many slashes as the template's literal text, so each
    parameter gets a ``!(... like ...)`` refusing a slash inside it; then one refusing it empty,
    and one for each value that would make its segment a dot segment (``..``, ``%2e%2e`` ...):
    with the slashes fixed, each of those patterns matches only paths where that parameter has
    exactly that value.
    """
    pieces = template.pieces
    n = len(pieces) // 2

    def pattern(i: int | None = None, fill: str = "") -> str:
        out = [_literal(pieces[0])]
        for k in range(n):
            out.append(fill if k == i else "*")
            out.append(_literal(pieces[2 * k + 2]))
        return '"' + "".join(out) + '"'

    conds = [f"resource.path like {pattern()}"]
    for i in range(n):
        conds.append(f"!(resource.path like {pattern(i, '*/*')})")
        conds.append(f"!(resource.path like {pattern(i, '')})")
        # An encoded slash is one segment here and two to a server that decodes it before routing.
        conds += [f"!(resource.path like {pattern(i, f'*{slash}*')})" for slash in _ENCODED_SLASHES]
        conds += [f"!(resource.path like {pattern(i, _literal(v))})" for v in template.deny[i]]
    return conds


def _regex(template: PathTemplate) -> str:
    """An anchored regular expression (``\\A ... \\Z``: ``$`` would also match before a final
    newline) matching exactly the template's paths, the same as the Cedar conditions."""
    pieces = template.pieces
    out = ["\\A", re.escape(pieces[0])]
    for i in range(len(pieces) // 2):
        after = pieces[2 * i + 2]
        if template.deny[i]:
            end = re.escape(after.split("/", 1)[0]) + ("/" if "/" in after else "\\Z")
            out.append("(?!(?:" + "|".join(re.escape(v) for v in template.deny[i]) + ")" + end + ")")
        out.append("(?:(?!%2[fF])[^/])+")
        out.append(re.escape(after))
    return "".join(out) + "\\Z"


def agent_id(report: Mapping[str, Any]) -> str:
    """The Cedar principal of a card: its sha256, which the card cannot choose (its ``name`` it can:
    two cards naming themselves alike would share every permit), else its path."""
    card = report.get("card") if isinstance(report.get("card"), Mapping) else {}
    assert isinstance(card, Mapping)
    digest = card.get("sha256")
    if isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest):
        return f"sha256:{digest}"
    return str(card.get("source") or "agent")


def api_hosts(access: Mapping[str, Any], target: Mapping[str, Any]) -> list[str] | str:
    """The hosts the API itself is served from (OpenAPI ``servers``, Discovery ``rootUrl``), or why
    they are unknown. Not the spec's host: a spec may be served from one host and describe an
    API on another."""
    if not isinstance(target.get("servers"), list):
        return "the report does not name the API's servers (derive it again with this version)"
    hosts = facts.api_hosts({**access, "target": target})
    return hosts or "the API's server URLs name no host"


def exportable(access: Mapping[str, Any]) -> dict[str, Any] | str:
    """The allowlist entry of one access, or why it cannot be exported."""
    target = access.get("target")
    ident = access.get("identity")
    if ident not in facts.IDENTITIES:
        return f"identity {ident!r} is not END_USER or AGENT"
    if not isinstance(target, Mapping):
        return f"the access did not resolve to an operation ({access.get('reason') or 'unresolved'})"
    if access.get("complete") is not True:
        # Resolved, but no alternative fits its identity (or its permissions are otherwise unknown):
        # what it may do was not determined, so nothing is permitted.
        return f"its permissions were not determined ({access.get('reason') or 'incomplete'})"
    base = {
        "access": access.get("id"),
        "identity": ident,
        "confirmation_required": access.get("confirmation_required") is True,
    }
    kind = target.get("kind")
    if kind == "mcp":
        tool = target.get("tool") or target.get("operation_id")
        if not isinstance(tool, str) or not tool:
            return "the MCP target names no tool"
        return {**base, "kind": "mcp", "server": str(access.get("spec_url") or ""), "tool": tool}
    if kind == "a2a":
        url = access.get("spec_url")
        footprint = access.get("footprint")
        if isinstance(footprint, Mapping) and isinstance(footprint.get("card_url"), str):
            url = footprint["card_url"]
        skill = target.get("skill")
        return {**base, "kind": "a2a", "agent": str(url or ""), "skill": skill if isinstance(skill, str) else None}
    if kind == "graphql":
        # Every field is POST to one endpoint: a permit on the request line would allow every query
        # and mutation of the API, not this field.
        return "a GraphQL field cannot be told from the HTTP request (every field is one POST endpoint)"
    method = str(target.get("method") or "").upper()
    if method not in HTTP_METHODS:
        return f"the operation has no HTTP method ({method or 'no method'})"
    template = path_template(target)
    if isinstance(template, str):
        return template
    hosts = api_hosts(access, target)
    if isinstance(hosts, str):
        return hosts
    entry: dict[str, Any] = {**base, "kind": "http", "host": hosts[0], "hosts": hosts, "method": method}
    entry["path"] = template.text
    if template.text != target.get("path"):
        entry["spec_path"] = target.get("path")
    entry["path_regex"] = _regex(template)
    return entry


def allowlist(report: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the card may call, for gateways that do not speak Cedar; anything else is denied.

    Raises :class:`~ramscope.errors.InputError` for the report of an invalid card: what such a card
    declares may be less or other than what it does, and nothing is exported from it.
    """
    card = report.get("card") if isinstance(report.get("card"), Mapping) else None
    if card is None or card.get("valid") is not True:
        raise InputError(
            "the card is invalid (see `ramscope validate`): nothing is exported from it",
            source=str(card.get("source")) if card is not None and card.get("source") else None,
        )
    allow: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for a in report.get("accesses") or []:
        if not isinstance(a, Mapping):
            continue
        entry = exportable(a)
        if isinstance(entry, str):
            skipped.append({"access": a.get("id"), "reason": entry})
        else:
            allow.append(entry)
    return {
        "allowlist_version": ALLOWLIST_VERSION,
        "agent": agent_id(report),
        "agent_name": str(card.get("name") or ""),
        "card": dict(card),
        "default": "deny",
        "context": {
            "identity": "END_USER or AGENT: whose credentials the call uses",
            "confirmed": "true when the user confirmed this call (required where confirmation_required)",
        },
        "path_regex": "matched against the request's path as sent (no query string), undecoded; anchored (\\A ... \\Z)",
        "allow": allow,
        "not_exported": skipped,
    }


def cedar_policies(report: Mapping[str, Any]) -> str:
    """One Cedar ``permit`` per exportable access; a comment for each access left out."""
    doc = allowlist(report)
    agent = f"{NAMESPACE}::Agent::{cedar_string(doc['agent'])}"
    card = doc["card"] or {}
    out = [
        "// Generated by ramscope export --format cedar: what this agent may do, and nothing else",
        "// (Cedar denies every request no policy permits).",
        f"// card: {_comment(str(card.get('source', '')))} sha256: {_comment(str(card.get('sha256', '')))}",
        "",
    ]
    for e in doc["allow"]:
        if e["kind"] == "http":
            action = f"{NAMESPACE}::Action::{cedar_string(e['method'])}"
            rtype = f"{NAMESPACE}::HttpEndpoint"
            on_host = [f"resource.host == {cedar_string(h)}" for h in e["hosts"]]
            template = path_template({"kind": "", "path": e["path"]})
            assert isinstance(template, PathTemplate)  # e["path"] is one path_template gave
            conds = [on_host[0] if len(on_host) == 1 else "(" + " || ".join(on_host) + ")", *_like_conditions(template)]
        elif e["kind"] == "mcp":
            action = f"{NAMESPACE}::Action::{cedar_string(MCP_ACTION)}"
            rtype = f"{NAMESPACE}::McpTool"
            conds = [f"resource.server == {cedar_string(e['server'])}", f"resource.tool == {cedar_string(e['tool'])}"]
        else:
            action = f"{NAMESPACE}::Action::{cedar_string(A2A_ACTION)}"
            rtype = f"{NAMESPACE}::A2aSkill"
            conds = [f"resource.agent == {cedar_string(e['agent'])}"]
            if e["skill"] is not None:
                conds.append(f"resource.skill == {cedar_string(e['skill'])}")
        conds.append(f"context.identity == {cedar_string(e['identity'])}")
        if e["confirmation_required"]:
            conds.append("context.confirmed == true")
        out.append(f"@id({cedar_string('access:' + str(e['access']))})")
        out.append("permit (")
        out.append(f"    principal == {agent},")
        out.append(f"    action == {action},")
        out.append(f"    resource is {rtype}")
        out.append(") when {")
        out.append("    " + " &&\n    ".join(conds))
        out.append("};")
        out.append("")
    for s in doc["not_exported"]:
        out.append(f"// not exported (denied): access {_comment(str(s['access']))}: {_comment(s['reason'])}")
    return "\n".join(out).rstrip("\n") + "\n"


def _comment(text: str) -> str:
    # A comment runs to the end of the line: a newline in a stranger's string would end it and
    # let the rest be read as policy text.
    return "".join(ch if ch.isprintable() else f"\\u{{{ord(ch):x}}}" for ch in text)


_CONTEXT = {
    "type": "Record",
    "attributes": {
        "identity": {"type": "String", "required": True},
        "confirmed": {"type": "Boolean", "required": True},
    },
}


def _str_attrs(*names: str) -> dict[str, Any]:
    return {"type": "Record", "attributes": {n: {"type": "String", "required": True} for n in names}}


def cedar_schema_json() -> dict[str, Any]:
    """The Cedar schema (JSON form) every exported policy set validates against."""
    http = {
        m: {
            "appliesTo": {"principalTypes": ["Agent"], "resourceTypes": ["HttpEndpoint"], "context": _CONTEXT},
        }
        for m in HTTP_METHODS
    }
    return {
        NAMESPACE: {
            "entityTypes": {
                "Agent": {"shape": _str_attrs()},
                "HttpEndpoint": {"shape": _str_attrs("host", "path")},
                "McpTool": {"shape": _str_attrs("server", "tool")},
                "A2aSkill": {"shape": _str_attrs("agent", "skill")},
            },
            "actions": {
                **http,
                MCP_ACTION: {
                    "appliesTo": {"principalTypes": ["Agent"], "resourceTypes": ["McpTool"], "context": _CONTEXT}
                },
                A2A_ACTION: {
                    "appliesTo": {"principalTypes": ["Agent"], "resourceTypes": ["A2aSkill"], "context": _CONTEXT}
                },
            },
        }
    }


def cedar_schema() -> str:
    """The same schema in Cedar's own schema syntax (``.cedarschema``)."""
    ctx = "context: { identity: String, confirmed: Bool }"
    methods = ", ".join(cedar_string(m) for m in HTTP_METHODS)
    return (
        "// The schema of ramscope's exported policies (ramscope export --format cedar-schema).\n"
        f"namespace {NAMESPACE} {{\n"
        "  entity Agent;\n"
        "  // The gateway fills in the request's host and its concrete path as sent (undecoded, no query string).\n"
        "  entity HttpEndpoint = { host: String, path: String };\n"
        "  entity McpTool = { server: String, tool: String };\n"
        '  // skill: the skill id the message is for ("" for the agent as a whole).\n'
        "  entity A2aSkill = { agent: String, skill: String };\n"
        f"  action {methods} appliesTo {{ principal: Agent, resource: HttpEndpoint, {ctx} }};\n"
        f"  action {cedar_string(MCP_ACTION)} appliesTo {{ principal: Agent, resource: McpTool, {ctx} }};\n"
        f"  action {cedar_string(A2A_ACTION)} appliesTo {{ principal: Agent, resource: A2aSkill, {ctx} }};\n"
        "}\n"
    )
