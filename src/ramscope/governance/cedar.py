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

Fail closed: an access the derivation could not resolve to an operation has no method, path
or tool to permit; it is left out (so denied) and listed under ``not_exported``.

The host of an HTTP operation is the API server's when the report names one
(``target.server_url``), else the host its spec was served from (the report carries no API
base URL yet; for Google's Discovery APIs the two agree).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from . import facts

__all__ = [
    "A2A_ACTION",
    "HTTP_METHODS",
    "MCP_ACTION",
    "NAMESPACE",
    "allowlist",
    "cedar_policies",
    "cedar_schema",
    "cedar_schema_json",
    "cedar_string",
    "exportable",
]

NAMESPACE = "Ramscope"
HTTP_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE", "POST", "PUT", "PATCH", "DELETE")
MCP_ACTION = "mcp:tools/call"
A2A_ACTION = "a2a:SendMessage"
ALLOWLIST_VERSION = 1
_PARAM = re.compile(r"\{[^{}]*\}")


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


def _like_conditions(template: str) -> list[str]:
    """Cedar ``like`` conditions matching exactly the paths of a template.

    ``like``'s ``*`` also matches ``/``, so ``/calendars/*/events`` alone would permit
    ``/calendars/a/b/events``. A path fills every parameter without a slash exactly when it has
    as many slashes as the template's literal text, so for each plain ``{param}`` one ``!(... like
    ...)`` refuses the same pattern with a slash inside that parameter. Reserved expansions
    (Discovery's ``{+name}``) may hold slashes and get no such guard.
    """
    literals = _PARAM.split(template)
    params = _PARAM.findall(template)
    wild = ["*"] * len(params)

    def pattern(fills: list[str]) -> str:
        out = [_literal(literals[0])]
        for fill, lit in zip(fills, literals[1:], strict=True):
            out.append(fill + _literal(lit))
        return '"' + "".join(out) + '"'

    conds = [f"resource.path like {pattern(wild)}"]
    for i, p in enumerate(params):
        if p.startswith("{+"):
            continue
        fills = list(wild)
        fills[i] = "*/*"
        conds.append(f"!(resource.path like {pattern(fills)})")
    return conds


def _regex(template: str) -> str:
    literals = _PARAM.split(template)
    params = _PARAM.findall(template)
    out = ["^", re.escape(literals[0])]
    for p, lit in zip(params, literals[1:], strict=True):
        out.append(".+" if p.startswith("{+") else "[^/]+")
        out.append(re.escape(lit))
    return "".join(out) + "$"


def _agent_id(report: Mapping[str, Any]) -> str:
    card = report.get("card") if isinstance(report.get("card"), Mapping) else {}
    assert isinstance(card, Mapping)
    return str(card.get("name") or card.get("source") or "agent")


def _server_host(access: Mapping[str, Any], target: Mapping[str, Any]) -> str:
    for key in ("server_url", "base_url"):
        host = facts.host_of(target.get(key))
        if host:
            return host
    return facts.host_of(access.get("spec_url"))


def exportable(access: Mapping[str, Any]) -> dict[str, Any] | str:
    """The allowlist entry of one access, or why it cannot be exported."""
    target = access.get("target")
    ident = access.get("identity")
    if ident not in facts.IDENTITIES:
        return f"identity {ident!r} is not END_USER or AGENT"
    if not isinstance(target, Mapping):
        return f"the access did not resolve to an operation ({access.get('reason') or 'unresolved'})"
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
    method = str(target.get("method") or "").upper()
    path = target.get("path")
    if method not in HTTP_METHODS or not isinstance(path, str) or not path.startswith("/"):
        return f"the operation has no HTTP method and path template ({method or 'no method'}, {path!r})"
    host = _server_host(access, target)
    if not host:
        return "the operation's host is unknown"
    return {**base, "kind": "http", "host": host, "method": method, "path": path, "path_regex": _regex(path)}


def allowlist(report: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the card may call, for gateways that do not speak Cedar; anything else is denied."""
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
        "agent": _agent_id(report),
        "card": dict(report["card"]) if isinstance(report.get("card"), Mapping) else None,
        "default": "deny",
        "context": {
            "identity": "END_USER or AGENT: whose credentials the call uses",
            "confirmed": "true when the user confirmed this call (required where confirmation_required)",
        },
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
            conds = [f"resource.host == {cedar_string(e['host'])}", *_like_conditions(e["path"])]
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
        "  // The gateway fills in the request's host and its concrete path (no query string).\n"
        "  entity HttpEndpoint = { host: String, path: String };\n"
        "  entity McpTool = { server: String, tool: String };\n"
        '  // skill: the skill id the message is for ("" for the agent as a whole).\n'
        "  entity A2aSkill = { agent: String, skill: String };\n"
        f"  action {methods} appliesTo {{ principal: Agent, resource: HttpEndpoint, {ctx} }};\n"
        f"  action {cedar_string(MCP_ACTION)} appliesTo {{ principal: Agent, resource: McpTool, {ctx} }};\n"
        f"  action {cedar_string(A2A_ACTION)} appliesTo {{ principal: Agent, resource: A2aSkill, {ctx} }};\n"
        "}\n"
    )
