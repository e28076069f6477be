"""Consent-screen data, and its Markdown and HTML renderings.

Per 2P (consumer-owned) resource: the permissions to grant, with the provider's
own scope descriptions, and for each access the justification, necessity and
whether the agent asks before acting (HITL). Per 3P resource: the data-egress
acknowledgment. Everything shown comes from strangers (the card and the specs),
so every renderer neutralises it: control, bidi and invisible characters become
visible escapes, Markdown and HTML metacharacters are escaped, and the HTML page
is self-contained with a Content-Security-Policy that forbids scripts and any
external fetch.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from .._text import for_terminal
from ..diagnostics import Severity
from ..naming import check_display_name
from .report import IDENTITIES, TIERS, Report

__all__ = ["consent_data", "md", "md_code", "render_html", "render_markdown"]

CONSENT_VERSION = 1


def consent_data(report: Report, *, description: str = "", provider: str = "") -> dict[str, Any]:
    """The consent screen as data: what to grant, to acknowledge, and why.

    The permissions shown are the ones the orchestrator requests: the cumulative OPTIONAL tier's
    scopes and credentials, each under the resources whose accesses it serves. That is not each
    access's own choice when one scope covers several accesses more narrowly than their own
    choices together. An invalid card offers nothing to grant: its data says why instead.
    """
    agent = {
        "name": report.card_name,
        "description": description,
        "provider": provider,
        "source": report.card_source,
        "sha256": report.card_sha256,
    }
    if not report.card_valid:
        return {
            "consent_version": CONSENT_VERSION,
            "agent": agent,
            "valid": False,
            "complete": False,
            "errors": [
                {"code": d.code, "path": d.path, "message": d.message}
                for d, source in report.diagnostics
                if source is None and d.severity is Severity.ERROR and not d.code.startswith("access-")
            ],
            "resources": [],
            "tiers": None,
            "other_permissions": [],
            "incomplete": [],
        }
    resources: dict[str, dict[str, Any]] = {}
    spec_by_resource: dict[str, Mapping[str, Any]] = {}
    for s in report.specs:
        for rid in s.resources:
            spec_by_resource.setdefault(rid, s.to_dict())
    for a in report.accesses:
        r = resources.setdefault(
            a.resource,
            {
                "id": a.resource,
                "display_name": a.display_name or a.resource,
                "owner": a.owner,
                "action": "acknowledge" if a.owner == "THIRD_PARTY" else "grant",
                "spec": _spec_summary(spec_by_resource.get(a.resource)),
                "name_check": _name_check(a.display_name or a.resource, spec_by_resource.get(a.resource)),
                "permissions": {},
                "credentials": {},
                "accesses": [],
                "complete": True,
            },
        )
        r["accesses"].append(
            {
                "id": a.id,
                "justification": a.justification,
                "necessity": a.necessity,
                "identity": a.identity,
                "confirmation_required": a.confirmation_required,
                "scopes": a.scopes,
                "complete": a.complete,
                "reason": a.reason_message if not a.complete else None,
                "hints": (a.target or {}).get("hints"),
                # Narrower permissions that reach only part of the data: the user may prefer one.
                "narrower": [
                    {"scopes": o["scopes"], "conditions": o["conditions"]} for o in (a.choice or {}).get("narrower", [])
                ],
            }
        )
        if not a.complete:
            r["complete"] = False
    other = _place_tier_permissions(report, resources)
    ordered = sorted(resources.values(), key=lambda r: (r["action"] != "grant", r["display_name"]))
    for r in ordered:
        r["permissions"] = sorted(r["permissions"].values(), key=lambda p: (_rank(p["necessity"]), p["scope"]))
    names = {r["id"]: r["display_name"] for r in ordered}
    tiers: dict[str, Any] = {}
    for name in TIERS:
        t = report.tiers[name]
        tiers[name] = {
            ident: {"scopes": t.identities[ident].scopes, "added_scopes": t.identities[ident].added_scopes}
            for ident in IDENTITIES
        } | {
            "acknowledgments": t.acknowledgments,
            "acknowledgment_names": [names.get(x, x) for x in t.acknowledgments],
            "confirmations": t.confirmations,
            "complete": t.complete,
        }
    return {
        "consent_version": CONSENT_VERSION,
        "agent": agent,
        "valid": True,
        "complete": report.complete,
        "errors": [],
        "resources": ordered,
        "tiers": tiers,
        "other_permissions": other,
        "incomplete": [
            {"access": a.id, "reason": a.reason, "message": a.reason_message} for a in report.accesses if not a.complete
        ],
    }


def _place_tier_permissions(report: Report, resources: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Put each scope and credential of the OPTIONAL tier (everything the agent may ask for) under
    the resources whose accesses it serves; return the ones that serve none (never dropped)."""
    by_id = {a.id: a for a in report.accesses}
    other: list[dict[str, Any]] = []
    tier = report.tiers[TIERS[-1]]
    for ident in IDENTITIES:
        for perm in tier.identities[ident].permissions:
            served = [by_id[x] for x in perm["accesses"] if x in by_id]
            necessity = "OPTIONAL"
            for a in served:
                necessity = _strongest(necessity, a.necessity)
            placed = False
            for rid in dict.fromkeys(a.resource for a in served):
                r = resources.get(rid)
                if r is None:
                    continue
                placed = True
                mine = [a.id for a in served if a.resource == rid]
                if perm["scope"] is not None:
                    # Per grant, not per scope string: Graph's delegated and application Mail.Read are two
                    # permissions (two namespaces), and only the application one needs an administrator.
                    _merge(r["permissions"], f"{perm['namespace']}\x00{perm['scope']}", perm, ident, necessity, mine)
                else:
                    key = f"{perm['namespace']}\x00{perm['scheme']}\x00{perm['type']}"
                    _merge(r["credentials"], key, perm, ident, necessity, mine)
            if not placed:
                other.append(dict(perm, identities=[ident], necessity=necessity))
    for r in resources.values():
        r["credentials"] = sorted(r["credentials"].values(), key=lambda c: (_rank(c["necessity"]), c["scheme"]))
    return other


def _merge(
    into: dict[str, dict[str, Any]], key: str, perm: Mapping[str, Any], ident: str, necessity: str, accesses: list[str]
) -> None:
    entry = into.setdefault(
        key,
        {
            "scope": perm["scope"],
            "namespace": perm["namespace"],
            "scheme": perm["scheme"],
            "type": perm["type"],
            "description": perm["description"],
            "name": perm.get("name"),
            "admin_consent": bool(perm.get("admin_consent")),
            # What the provider charges for it (its class, what requesting it triggers): the report's cost.
            "cost": perm.get("cost"),
            "identities": [],
            "necessity": necessity,
            "accesses": [],
        },
    )
    if ident not in entry["identities"]:
        entry["identities"].append(ident)
    entry["necessity"] = _strongest(entry["necessity"], necessity)
    entry["accesses"] += [a for a in accesses if a not in entry["accesses"]]
    if entry["description"] is None:
        entry["description"] = perm["description"]
    if perm.get("warning") and not entry.get("warning"):
        entry["warning"] = perm["warning"]


def _spec_summary(spec: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if spec is None:
        return None
    return {
        "url": spec.get("url"),
        "final_url": spec.get("final_url"),
        "title": spec.get("title"),
        "kind": spec.get("kind"),
    }


def _name_check(display_name: str, spec: Mapping[str, Any] | None) -> dict[str, Any]:
    """The display name against the provider's own title and host (``ramscope.naming``)."""
    if spec is None:
        return {"status": "unchecked", "provider_title": None, "host": None, "claimed_providers": [], "message": None}
    url = spec.get("final_url") or spec.get("url")
    return check_display_name(display_name, url=url, title=spec.get("title")).to_dict()


_NECESSITY_ORDER = {"REQUIRED": 0, "RECOMMENDED": 1, "OPTIONAL": 2}
_WHOSE = {"END_USER": "you (on your behalf)", "AGENT": "the agent's own account"}


def _whose(identities: list[str]) -> str:
    return ", ".join(_WHOSE.get(i, i.lower()) for i in identities)


def _rank(n: str) -> int:
    return _NECESSITY_ORDER.get(n, -1)


def _strongest(a: str, b: str) -> str:
    return a if _rank(a) <= _rank(b) else b


# --------------------------------------------------------------------------- Markdown

# What can make inline text into markup: emphasis, code, links and images ([ ] and !), raw HTML
# and autolinks (< >), entities (&), table cells (|); plus ".", ":", "/" and "@", because GFM's
# extended autolinks turn a bare "https://...", "www...." or "a@b.example" in a text run into a
# link and an escape splits the run. Text is always inline (whitespace is collapsed), so
# line-start syntax (#, -, 1.) cannot arise.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]!|<>~&.:/@])")
_BACKTICKS = re.compile(r"`+")


def md(text: object) -> str:
    """Markdown-safe inline text: visible escapes for hidden characters, metacharacters escaped."""
    return _MD_SPECIAL.sub(r"\\\1", for_terminal(" ".join(str(text).split())))


def md_code(text: object, *, in_table: bool = False) -> str:
    """A Markdown code span holding ``text`` literally (backslash escapes do not work inside one).

    The fence is one backtick longer than the longest run inside; in a table cell ``|`` is
    escaped, since GFM tables split rows on it even inside code spans (and drop the backslash).
    """
    body = for_terminal(" ".join(str(text).split()))
    if in_table:
        body = body.replace("|", "\\|")
    fence = "`" * (max((len(m) for m in _BACKTICKS.findall(body)), default=0) + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def _title(agent: Mapping[str, Any]) -> str:
    """The agent's name; a bare manifest has none: its file's stem, not a path to escape."""
    if agent.get("name"):
        return str(agent["name"])
    source = str(agent.get("source") or "")
    if not source or source == "-":
        return "This agent"
    name = PurePath(source).name
    for suffix in (".json", ".yaml", ".yml", ".ram"):  # petstore.ram.yaml -> petstore
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def _permission_rows(r: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The table's rows: the tier's scopes, then its credentials, for one resource."""
    rows = [
        dict(
            p,
            label=p.get("name") or p["scope"],
            what=(p["description"] or "(no description)")
            + (" An administrator of your organisation must approve it." if p.get("admin_consent") else "")
            + _cost_note(p.get("cost"))
            + (f" Warning: {p['warning']}" if p.get("warning") else ""),
        )
        for p in r["permissions"]
    ]
    rows += [
        dict(c, label=c["scheme"], what=f"a credential ({c['type']}), not an OAuth scope") for c in r["credentials"]
    ]
    return rows


#: How the consent screen says a provider's class of a permission, for the person granting it.
_CLASS_NOTE = {
    "restricted": "Google classes it restricted: wide access to your data.",
    "sensitive": "Google classes it sensitive.",
    "marketplace-ineligible": "Slack does not list apps that ask for it in its Marketplace.",
    "protected-customer-data-level-1": "It reads protected customer data (Shopify level 1).",
    "protected-customer-data-level-2": "It reads protected customer data: names, addresses, phones, emails "
    "(Shopify level 2).",
}


def _cost_note(cost: Any) -> str:
    cls = cost.get("class") if isinstance(cost, Mapping) else None
    note = _CLASS_NOTE.get(str(cls)) if cls else None
    return f" {note}" if note else ""


def render_markdown(data: Mapping[str, Any]) -> str:
    agent = data["agent"]
    if not data.get("valid", True):
        lines = [f"# {md(_title(agent))}: this card is invalid", ""]
        lines += ["Nothing can be granted to an agent whose card is invalid. Its errors:", ""]
        lines += [f"- {md_code(e['code'])} at {md_code(e['path'] or '/')}: {md(e['message'])}" for e in data["errors"]]
        return "\n".join(lines) + "\n"
    lines = [f"# {md(_title(agent))} asks for access", ""]
    if agent.get("description"):
        lines += [md(agent["description"]), ""]
    if not data["complete"]:
        lines += [
            "> **Warning: incomplete.** Some permissions could not be determined; "
            "do not treat what follows as everything this agent can touch.",
            "",
        ]
        lines += [f"> - {md_code(i['access'])}: {md(i['message'] or i['reason'])}" for i in data["incomplete"]]
        lines.append("")
    for r in data["resources"]:
        owner = "third party: your data leaves for this service" if r["action"] == "acknowledge" else "yours"
        lines += [f"## {md(r['display_name'])} ({owner})", ""]
        check = r.get("name_check") or {}
        if check.get("provider_title") or check.get("host"):
            said = [f"Provider's name for it: {md(check['provider_title'])}"] if check.get("provider_title") else []
            said += [f"served from {md(check['host'])}"] if check.get("host") else []
            lines += ["; ".join(said), ""]
        if check.get("status") == "impersonation":
            lines += [f"> **Warning: this name may be misleading.** {md(check['message'])}", ""]
        elif check.get("status") == "mismatch":
            lines += [f"> **Note:** {md(check['message'])}", ""]
        rows = _permission_rows(r)
        if rows:
            lines += [
                "| Permission | What the provider says it allows | Needed | Used by | For |",
                "|---|---|---|---|---|",
            ]
            for p in rows:
                lines.append(
                    f"| {md_code(p['label'], in_table=True)} | {md(p['what'])} | "
                    f"{md(p['necessity'].lower())} | {md(_whose(p['identities']))} | "
                    f"{', '.join(md_code(a, in_table=True) for a in p['accesses'])} |"
                )
            lines.append("")
        lines.append("Why:")
        lines.append("")
        for a in r["accesses"]:
            hitl = "asks you first" if a["confirmation_required"] else "does not ask first"
            state = "" if a["complete"] else f" **(unknown permissions: {md(a['reason'])})**"
            lines.append(
                f"- {md(a['justification'] or '(no reason given)')} ({md(a['necessity'].lower())}; {hitl}){state}"
            )
            for o in a.get("narrower") or ():
                lines.append(
                    f"  - narrower, where it suffices ({md('; '.join(o['conditions']))}): "
                    + ", ".join(md_code(x) for x in o["scopes"])
                )
        lines.append("")
    for p in data.get("other_permissions", []):
        lines.append(f"- Also requested: {md_code(p['scope'] or p['scheme'])} ({md(p['type'])})")
    lines += ["## Consent in steps", ""]
    for name, t in data["tiers"].items():
        added = t["END_USER"]["added_scopes"]
        acks = ", ".join(md(x) for x in t["acknowledgment_names"]) or "none"
        lines.append(
            f"- **{name.lower()}**: you grant {', '.join(md_code(s) for s in added) or 'nothing new'}; "
            f"acknowledge: {acks}"
        )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- HTML

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'; base-uri 'none'"


def h(text: object) -> str:
    """HTML-safe text: visible escapes for hidden characters, then entity escaping (quotes too)."""
    return html.escape(for_terminal(" ".join(str(text).split())), quote=True)


def render_html(data: Mapping[str, Any]) -> str:
    agent = data["agent"]
    valid = data.get("valid", True)
    title = f"{_title(agent)} asks for access" if valid else f"{_title(agent)}: this card is invalid"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{h(title)}</title>",
        "<style>",
        "body{font:15px/1.45 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}",
        "h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.3rem}",
        ".third{color:#8a4b00}.warn{background:#fff4e5;border:1px solid #f0a020;padding:.6rem 1rem;border-radius:6px}",
        "table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{text-align:left;padding:.35rem .5rem;"
        "border-bottom:1px solid #eee;vertical-align:top}code{font-size:.85em;background:#f4f4f6;padding:0 .2rem;"
        "border-radius:3px;word-break:break-all}.tag{font-size:.8em;padding:0 .4rem;border-radius:9px;background:#eef}"
        ".req{background:#fde2e2}.rec{background:#fff1cc}.opt{background:#e4f5e4}",
        "</style></head><body>",
        f"<h1>{h(title)}</h1>",
    ]
    if not valid:
        items = "".join(
            f"<li><code>{h(e['code'])}</code> at <code>{h(e['path'] or '/')}</code>: {h(e['message'])}</li>"
            for e in data["errors"]
        )
        parts.append(
            '<div class="warn" role="alert"><strong>Nothing can be granted</strong> to an agent whose card is '
            f"invalid. Its errors:<ul>{items}</ul></div></body></html>"
        )
        return "\n".join(parts) + "\n"
    if agent.get("description"):
        parts.append(f"<p>{h(agent['description'])}</p>")
    if not data["complete"]:
        items = "".join(
            f"<li><code>{h(i['access'])}</code>: {h(i['message'] or i['reason'])}</li>" for i in data["incomplete"]
        )
        parts.append(
            '<div class="warn" role="alert"><strong>Incomplete.</strong> Some permissions could not be determined; '
            f"this page does not show everything the agent can touch.<ul>{items}</ul></div>"
        )
    for r in data["resources"]:
        third = r["action"] == "acknowledge"
        owner = "third party &mdash; your data leaves for this service" if third else "yours"
        cls = ' class="third"' if third else ""
        parts.append(f"<section><h2{cls}>{h(r['display_name'])} <small>({owner})</small></h2>")
        check = r.get("name_check") or {}
        said = [f"Provider&rsquo;s name for it: {h(check['provider_title'])}"] if check.get("provider_title") else []
        said += [f"served from <code>{h(check['host'])}</code>"] if check.get("host") else []
        if said:
            parts.append(f"<p>{'; '.join(said)}</p>")
        if check.get("status") == "impersonation":
            parts.append(
                '<div class="warn" role="alert"><strong>This name may be misleading.</strong> '
                f"{h(check['message'])}</div>"
            )
        elif check.get("status") == "mismatch":
            parts.append(f"<p><em>Note:</em> {h(check['message'])}</p>")
        perm_rows = _permission_rows(r)
        if perm_rows:
            rows = "".join(
                f"<tr><td><code>{h(p['label'])}</code></td><td>{h(p['what'])}</td>"
                f"<td>{_tag(p['necessity'])}</td><td>{h(_whose(p['identities']))}</td>"
                f"<td>{', '.join(f'<code>{h(a)}</code>' for a in p['accesses'])}</td></tr>"
                for p in perm_rows
            )
            parts.append(
                "<table><thead><tr><th>Permission</th><th>What the provider says it allows</th><th>Needed</th>"
                f"<th>Used by</th><th>For</th></tr></thead><tbody>{rows}</tbody></table>"
            )
        why: list[str] = []
        for a in r["accesses"]:
            hitl = "asks you first" if a["confirmation_required"] else "does not ask first"
            state = "" if a["complete"] else f" <strong>(unknown permissions: {h(a['reason'])})</strong>"
            why.append(
                f"<li>{h(a['justification'] or '(no reason given)')} {_tag(a['necessity'])} &middot; {hitl}{state}</li>"
            )
        parts.append(f"<p>Why:</p><ul>{''.join(why)}</ul></section>")
    for p in data.get("other_permissions", []):
        parts.append(f"<p>Also requested: <code>{h(p['scope'] or p['scheme'])}</code> ({h(p['type'])})</p>")
    parts.append("<h2>Consent in steps</h2><ol>")
    for name, t in data["tiers"].items():
        added = ", ".join(f"<code>{h(s)}</code>" for s in t["END_USER"]["added_scopes"]) or "nothing new"
        acks = ", ".join(h(x) for x in t["acknowledgment_names"]) or "none"
        parts.append(f"<li>{_tag(name)} you grant {added}; acknowledge: {acks}</li>")
    parts.append("</ol></body></html>")
    return "\n".join(parts) + "\n"


def _tag(necessity: str) -> str:
    cls = {"REQUIRED": "req", "RECOMMENDED": "rec", "OPTIONAL": "opt"}.get(necessity, "")
    return f'<span class="tag {cls}">{h(necessity.lower())}</span>'
