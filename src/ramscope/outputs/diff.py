"""Comparing two permission reports: what a new version of a card asks for that the old did not.

Works on report dicts (``Report.to_dict()`` or a saved ``derive`` JSON), so a
reviewer can diff a report exported last release against today's card.
Fail closed: if either side is incomplete the diff says so, since "nothing new"
cannot be claimed about permissions that were not determined.

``risks`` lists everything a reviewer must look at, and makes ``ramscope diff`` exit 4: a new
scope, grant or credential, a new third-party data egress (acknowledgment), a human confirmation
the new version no longer asks for, an identity the agent did not act as before (or an access
acting as another identity), and a new or changed operation that may destroy (DELETE, an MCP
tool that may be destructive, or any whose effect is unknown) run without confirmation. The same
access id and scopes can hide another operation (GET became DELETE): ``changed`` compares each
access's operation (resource, method, path, tool, skill, effect) as well as its fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._text import for_terminal
from ..errors import InputError
from ..governance.facts import Effect, access_effect
from .report import IDENTITIES, TIERS

__all__ = [
    "admin_diff",
    "check_report_shape",
    "diff_reports",
    "render_admin_text",
    "render_diff_text",
    "report_difference",
    "risk_line",
]

DIFF_VERSION = 1


def _creds(tier: Mapping[str, Any]) -> set[tuple[str, str, str]]:
    return {(c["namespace"], c["scheme"], c["type"]) for c in tier.get("credentials", [])}


def _grants(tier: Mapping[str, Any]) -> set[tuple[str, str]]:
    return {(g["namespace"], g["scope"]) for g in tier.get("grants", [])}


def _strs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _objs(v: Any, keys: tuple[str, ...]) -> bool:
    return isinstance(v, list) and all(isinstance(x, dict) and all(isinstance(x.get(k), str) for k in keys) for x in v)


def check_report_shape(doc: Mapping[str, Any], *, source: str = "") -> None:
    """Raise :class:`InputError` unless ``doc`` has the shape :func:`diff_reports` reads.

    A saved report given to ``diff`` is a stranger's file like any card: checked here, a malformed
    one is a clear error instead of a KeyError or TypeError deep in the comparison.
    """

    def bad(where: str, what: str) -> InputError:
        return InputError(f"not a ramscope report: {what}", source=source or None, pointer=where)

    if not isinstance(doc.get("card"), dict):
        raise bad("/card", "'card' is not an object")
    tiers = doc.get("tiers")
    if not isinstance(tiers, dict):
        raise bad("/tiers", "'tiers' is not an object")
    for name in TIERS:
        tier = tiers.get(name)
        if not isinstance(tier, dict):
            raise bad(f"/tiers/{name}", f"tier {name} is missing or not an object")
        for key in ("acknowledgments", "confirmations"):
            if key in tier and not _strs(tier[key]):
                raise bad(f"/tiers/{name}/{key}", f"{key} is not a list of strings")
        if "acknowledgments" not in tier:
            raise bad(f"/tiers/{name}/acknowledgments", "acknowledgments are missing")
        for ident in IDENTITIES:
            it = tier.get(ident)
            if not isinstance(it, dict) or not _strs(it.get("scopes")):
                raise bad(f"/tiers/{name}/{ident}", f"{name} {ident} has no list of scopes")
            if not _objs(it.get("grants", []), ("namespace", "scope")):
                raise bad(f"/tiers/{name}/{ident}/grants", "grants are not {namespace, scope} objects")
            if not _objs(it.get("credentials", []), ("namespace", "scheme", "type")):
                raise bad(f"/tiers/{name}/{ident}/credentials", "credentials are not {namespace, scheme, type} objects")
    accesses: Any = doc.get("accesses")
    if not _objs(accesses, ("id",)):
        raise bad("/accesses", "accesses are not a list of objects with string ids")
    for i, a in enumerate(accesses):
        if a.get("scopes") is not None and not _strs(a["scopes"]):
            raise bad(f"/accesses/{i}/scopes", "scopes are not a list of strings")


#: What two derivations of the same card, with the same options, specs and ramscope, may differ in:
#: when and how a spec was obtained (fetched now or read from the cache or a cassette, and where that
#: file is), the names the card and the policy were read by, the generator, and the diagnostics
#: (said, never judged). Everything else, what ``check`` and ``diff`` judge included, must be equal.
_VOLATILE: dict[str, frozenset[str]] = {
    "": frozenset({"generator", "diagnostics"}),
    "/card": frozenset({"source"}),
    "/policy": frozenset({"source"}),
    "/specs/*": frozenset({"fetched_at", "origin", "provenance"}),
}


def report_difference(saved: Any, fresh: Any, where: str = "") -> str | None:
    """The JSON pointer of the first place a saved report says other than a fresh derivation of its
    card, or ``None`` when they agree on everything but what :data:`_VOLATILE` names.

    A saved report is a claim about a card; ``check`` and ``diff`` judge it only once it is shown to
    be what the card derives (issue 30: a report with its scopes removed, card path and sha256 kept,
    passed ``check``)."""
    if isinstance(saved, dict) and isinstance(fresh, dict):
        pattern = "/".join("*" if part.isdigit() else part for part in where.split("/"))
        skip = _VOLATILE.get(pattern, frozenset())
        for key in sorted((set(saved) | set(fresh)) - skip):
            if key not in saved or key not in fresh:
                return f"{where}/{key}"
            found = report_difference(saved[key], fresh[key], f"{where}/{key}")
            if found is not None:
                return found
        return None
    if isinstance(saved, list) and isinstance(fresh, list):
        if len(saved) != len(fresh):
            return where or "/"
        for i, (a, b) in enumerate(zip(saved, fresh, strict=True)):
            found = report_difference(a, b, f"{where}/{i}")
            if found is not None:
                return found
        return None
    # bool is an int to Python (True == 1): a report saying `true` where the card derives `1` differs.
    return None if type(saved) is type(fresh) and saved == fresh else (where or "/")


def diff_reports(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """What ``new`` asks for that ``old`` did not; raises :class:`InputError` for a malformed report."""
    check_report_shape(old)
    check_report_shape(new)
    tiers: dict[str, Any] = {}
    new_permissions = False
    risks: list[dict[str, str]] = []
    for name in TIERS:
        to, tn = old["tiers"][name], new["tiers"][name]
        entry: dict[str, Any] = {}
        for ident in IDENTITIES:
            a, b = to[ident], tn[ident]
            if _strs(a.get("accesses")) and _strs(b.get("accesses")) and b["accesses"] and not a["accesses"]:
                # The agent now acts as someone it did not act as before (its own account, or you).
                risks.append({"kind": "new-identity", "tier": name, "item": ident})
            added = sorted(set(b["scopes"]) - set(a["scopes"]))
            removed = sorted(set(a["scopes"]) - set(b["scopes"]))
            # A scope name can stay the same while its authorization server changes.
            added_grants = sorted(_grants(b) - _grants(a))
            removed_grants = sorted(_grants(a) - _grants(b))
            added_creds = sorted(_creds(b) - _creds(a))
            removed_creds = sorted(_creds(a) - _creds(b))
            entry[ident] = {
                "added_scopes": added,
                "removed_scopes": removed,
                "added_grants": [{"namespace": n, "scope": s} for n, s in added_grants],
                "removed_grants": [{"namespace": n, "scope": s} for n, s in removed_grants],
                "added_credentials": [{"namespace": n, "scheme": s, "type": t} for n, s, t in added_creds],
                "removed_credentials": [{"namespace": n, "scheme": s, "type": t} for n, s, t in removed_creds],
                "blast_radius": {"old": a.get("blast_radius"), "new": b.get("blast_radius")},
            }
            new_permissions |= bool(added or added_grants or added_creds)
            risks += [{"kind": "new-scope", "tier": name, "identity": ident, "item": s} for s in added]
            risks += [
                {"kind": "new-grant", "tier": name, "identity": ident, "item": f"{s} ({n})"}
                for n, s in added_grants
                if s not in added  # the same scope name behind another authorization server
            ]
            risks += [
                {"kind": "new-credential", "tier": name, "identity": ident, "item": f"{s} ({t})"}
                for _, s, t in added_creds
            ]
        added_acks = sorted(set(tn["acknowledgments"]) - set(to["acknowledgments"]))
        removed_acks = sorted(set(to["acknowledgments"]) - set(tn["acknowledgments"]))
        # Confirmations dropped in the new version mean the agent now acts without asking; an access
        # that left the tier (removed, or moved to another) asks nobody anything here.
        members = _tier_members(tn, new)
        added_conf = sorted((set(to.get("confirmations", [])) - set(tn.get("confirmations", []))) & members)
        entry["added_acknowledgments"] = added_acks
        entry["removed_acknowledgments"] = removed_acks
        entry["dropped_confirmations"] = added_conf
        new_permissions |= bool(added_acks)
        risks += [{"kind": "new-acknowledgment", "tier": name, "item": r} for r in added_acks]
        risks += [{"kind": "dropped-confirmation", "tier": name, "item": a} for a in added_conf]
        tiers[name] = entry
    old_acc = {a["id"]: a for a in old["accesses"]}
    new_acc = {a["id"]: a for a in new["accesses"]}
    changed = []
    for aid in sorted(old_acc.keys() & new_acc.keys()):
        a, b = old_acc[aid], new_acc[aid]
        sa, sb = set(a.get("scopes") or []), set(b.get("scopes") or [])
        fields = {
            k: {"old": a.get(k), "new": b.get(k)}
            for k in ("identity", "necessity", "confirmation_required", "operation", "complete")
            if a.get(k) != b.get(k)
        }
        # The same id and scopes can hide another operation: GET became DELETE, another tool, resource.
        op_a, op_b = _operation(a), _operation(b)
        if op_a != op_b:
            fields["target"] = {"old": op_a, "new": op_b}
        if sa != sb or fields:
            changed.append(
                {"id": aid, "added_scopes": sorted(sb - sa), "removed_scopes": sorted(sa - sb), "fields": fields}
            )
        if op_a != op_b and _unconfirmed_destructive(b):
            risks.append({"kind": "changed-destructive-operation", "tier": str(b.get("necessity")), "item": aid})
        if a.get("identity") != b.get("identity") and b.get("identity") not in (None, "IDENTITY_TYPE_UNSPECIFIED"):
            risks.append(
                {"kind": "changed-identity", "tier": str(b.get("necessity")), "item": f"{aid}: {b['identity']}"}
            )
    added_acc = sorted(new_acc.keys() - old_acc.keys())
    for aid in added_acc:
        if _unconfirmed_destructive(new_acc[aid]):
            risks.append({"kind": "new-destructive-operation", "tier": str(new_acc[aid].get("necessity")), "item": aid})
    complete = bool(old.get("complete", True)) and bool(new.get("complete", True))
    return {
        "diff_version": DIFF_VERSION,
        "old": old["card"],
        "new": new["card"],
        "new_permissions": new_permissions,
        "risks": risks,
        "complete": complete,
        "incomplete_accesses": {
            "old": [a["id"] for a in old["accesses"] if not a.get("complete", True)],
            "new": [a["id"] for a in new["accesses"] if not a.get("complete", True)],
        },
        "tiers": tiers,
        "accesses": {
            "added": added_acc,
            "added_operations": {aid: _operation(new_acc[aid]) for aid in added_acc},
            "removed": sorted(old_acc.keys() - new_acc.keys()),
            "changed": changed,
        },
    }


def _operation(access: Mapping[str, Any]) -> dict[str, Any]:
    """What an access does, as far as the report says: its resource and the operation it resolved
    to (HTTP method and path, MCP tool, A2A skill), and the strongest effect that implies."""
    target = access.get("target") if isinstance(access.get("target"), Mapping) else {}
    assert isinstance(target, Mapping)
    return {
        "resource": access.get("resource"),
        "kind": target.get("kind"),
        "operation_id": target.get("operation_id"),
        "method": target.get("method"),
        "path": target.get("path"),
        "tool": target.get("tool"),
        "skill": target.get("skill"),
        "effect": access_effect(access)[0].label,
    }


def _unconfirmed_destructive(access: Mapping[str, Any]) -> bool:
    """A destructive operation (or one whose effect is unknown: fail closed) the agent runs without asking."""
    return (
        access_effect(access)[0] in (Effect.DESTRUCTIVE, Effect.UNKNOWN)
        and access.get("confirmation_required") is not True
    )


def _tier_members(tier: Mapping[str, Any], report: Mapping[str, Any]) -> set[str]:
    """The ids of a tier's accesses (a report saved before tiers listed them: every access)."""
    lists = [tier[i].get("accesses") for i in IDENTITIES]
    if all(_strs(x) for x in lists):
        return {a for x in lists for a in x}
    return {a["id"] for a in report["accesses"]}


def risk_line(r: Mapping[str, str]) -> str:
    """One risk as one line: ``kind: TIER [IDENTITY] what``."""
    t = for_terminal
    kind, tier, item = r["kind"], r["tier"], t(r["item"])
    what = {
        "dropped-confirmation": f"no longer asks before access '{item}'",
        "new-acknowledgment": f"your data now goes to the third party '{item}'",
        "new-identity": f"the agent now acts as {item}",
        "new-destructive-operation": f"new access '{item}' may delete or destroy without asking",
        "changed-destructive-operation": f"access '{item}' now may delete or destroy, without asking",
        "changed-identity": f"access now acts as another identity: {item}",
    }.get(kind, item)
    ident = f" {r['identity']}" if "identity" in r else ""
    return f"{kind}: {tier}{ident} {what}"


def _op_text(op: Mapping[str, Any]) -> str:
    t = for_terminal
    if op.get("tool"):
        what = f"tool {t(str(op['tool']))}"
    elif op.get("method") or op.get("path"):
        what = f"{t(str(op.get('method') or '?'))} {t(str(op.get('path') or '?'))}"
    elif op.get("skill"):
        what = f"skill {t(str(op['skill']))}"
    else:
        what = "unresolved"
    return f"{what} on {t(str(op.get('resource')))}, {t(str(op.get('effect')))}"


def render_diff_text(d: Mapping[str, Any]) -> str:
    t = for_terminal
    lines = [f"old: {t(d['old'].get('source') or '')}  new: {t(d['new'].get('source') or '')}"]
    for side in ("old", "new"):
        if d[side].get("valid") is False:
            lines.append(f"! the {side} card is invalid: what it asks for may be more than its report shows")
    for name, entry in d["tiers"].items():
        for ident in IDENTITIES:
            e = entry[ident]
            for s in e["added_scopes"]:
                lines.append(f"+ {name:<11} {ident:<8} scope {t(s)}")
            for s in e["removed_scopes"]:
                lines.append(f"- {name:<11} {ident:<8} scope {t(s)}")
            for c in e["added_credentials"]:
                lines.append(f"+ {name:<11} {ident:<8} credential {t(c['scheme'])} ({t(c['type'])})")
            for c in e["removed_credentials"]:
                lines.append(f"- {name:<11} {ident:<8} credential {t(c['scheme'])} ({t(c['type'])})")
        for r in entry["added_acknowledgments"]:
            lines.append(f"+ {name:<11} acknowledge {t(r)}")
        for r in entry["removed_acknowledgments"]:
            lines.append(f"- {name:<11} acknowledge {t(r)}")
        for a in entry["dropped_confirmations"]:
            lines.append(f"! {name:<11} no longer asks before {t(a)}")
    for r in d.get("risks", []):
        if r["kind"] == "new-identity":
            lines.append(f"! {r['tier']:<11} the agent now acts as {t(r['item'])}")
    acc = d["accesses"]
    for a in acc["added"]:
        op = acc.get("added_operations", {}).get(a)
        lines.append(f"+ access {t(a)}" + (f" ({_op_text(op)})" if op else ""))
    lines += [f"- access {t(a)}" for a in acc["removed"]]
    for c in acc["changed"]:
        f = c["fields"]
        if "target" in f:
            lines.append(f"~ access {t(c['id'])}: {_op_text(f['target']['old'])} -> {_op_text(f['target']['new'])}")
        for k in ("identity", "confirmation_required"):
            if k in f:
                lines.append(f"~ access {t(c['id'])}: {k} {t(str(f[k]['old']))} -> {t(str(f[k]['new']))}")
    for r in d.get("risks", []):
        if r["kind"] in ("new-destructive-operation", "changed-destructive-operation", "changed-identity"):
            lines.append(f"! {risk_line(r)}")
    if not d["complete"]:
        lines.append("! incomplete: some permissions are unknown on one side; this diff may not show everything")
    if d["new"].get("valid") is False:
        lines.append("the new card is invalid")
    elif d["new_permissions"]:
        lines.append("new permissions needed")
    elif d.get("risks"):
        lines.append("new risks: review needed")
    else:
        lines.append("no new permissions")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- for administrators (diff --format admin)

#: Where each provider's permissions are approved, as an administrator calls it.
_TARGETS = {
    "microsoft-graph": "Microsoft Entra (the app registration's API permissions)",
    "google": "Google (the OAuth consent screen)",
    "slack": "Slack (the app manifest)",
    "github": "GitHub (the GitHub App's permissions)",
    "hubspot": "HubSpot (the app's scopes in app-hsmeta.json)",
    "atlassian": "Atlassian (the Forge manifest's or the OAuth 2.0 (3LO) app's scopes)",
    "mcp": "MCP authorization servers (the agent's scope allowlist)",
    "other": "other authorization servers (the agent's scope allowlist)",
}


def _reading(report: Mapping[str, Any]) -> Any:
    from ..governance.export import read_report  # noqa: PLC0415 (only this diff reads reports as exporters do)

    card = report.get("card")
    if isinstance(card, Mapping) and card.get("valid") is not True:
        # What an invalid card needs is unknown: nothing of it counts as approved before.
        report = {**report, "card": {**card, "valid": True}, "tiers": {}, "accesses": []}
    return read_report(report)


def admin_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """What an administrator must newly approve between two reports, per target, with the plain diff beside.

    A permission counts as approved before only if the old card's tiers asked for it (same identity,
    scope and authorization server); one the old card asked for only in an optional tier and the new
    one requires is said as such. An invalid old card approves nothing.
    """
    from ..governance.export.atlassian import product_of  # noqa: PLC0415
    from ..governance.export.entra import needs_admin_consent  # noqa: PLC0415
    from ..governance.export.google import scope_class  # noqa: PLC0415
    from ..governance.export.hubspot import SCOPE_LISTS  # noqa: PLC0415
    from ..governance.export.slack import is_bot_scope  # noqa: PLC0415

    d = diff_reports(old, new)
    before, after = _reading(old), _reading(new)
    was = {(p.identity, p.scope, p.namespace, p.scheme): p for p in before.permissions}
    items: dict[str, list[dict[str, Any]]] = {}
    for p in after.permissions:
        key = (p.identity, p.scope, p.namespace, p.scheme)
        old_p = was.get(key)
        if old_p is not None and (old_p.required or not p.required):
            continue
        change = "now required" if old_p is not None else "new"
        entry: dict[str, Any] = {
            "change": change,
            "permission": p.name,
            "scope": p.scope,
            "identity": p.identity,
            "tier": p.tier,
            "accesses": list(p.accesses),
            "authorization_server": p.namespace.split("#", 1)[0],
        }
        if p.scope is None:
            entry["action"] = f"issue the agent its credential {p.scheme} ({p.type})"
        elif p.provider == "microsoft-graph":
            role = "application" in p.scheme
            admin = role or needs_admin_consent(p)
            kind = "application permission" if role else "delegated permission"
            entry["action"] = (
                f"grant admin consent for {p.name} ({kind})"
                if admin
                else f"add {p.name} ({kind}); each user consents at sign-in unless you grant it for all"
            )
            entry["admin_consent"] = admin
        elif p.provider == "google":
            cls = scope_class(p.scope)
            entry["class"] = cls
            entry["action"] = f"add {p.scope} to the consent screen" + (
                "" if cls == "non-sensitive" else f" ({cls}: Google's verification may be needed before release)"
            )
        elif p.provider == "slack":
            token = "bot" if is_bot_scope(p) else "user"
            optional = "" if p.required else " optional"
            entry["action"] = (
                f"approve the{optional} {token} scope {p.scope}: the app must be reinstalled (or re-approved) in each "
                "workspace"
            )
        elif p.provider == "github":
            entry["action"] = f"each installation's owner must accept the new permission {p.scope}"
        elif p.provider == "hubspot":
            entry["action"] = f"add {p.scope} to the app's {SCOPE_LISTS[p.tier]} (app-hsmeta.json)"
        elif p.provider == "atlassian":
            product = product_of(p.scope) or "its product's"
            entry["action"] = (
                f"add {p.scope} to the Forge manifest's permissions.scopes (then `forge install --upgrade` on each "
                f"site), or to the OAuth 2.0 (3LO) app's {product} API scopes in the developer console"
            )
        else:
            entry["action"] = f"allow {p.scope} for the agent at {entry['authorization_server']}"
        items.setdefault(p.provider, []).append(entry)
    old_tools = {(a.server, a.tool) for a in before.in_tiers() if a.kind == "mcp" and a.complete}
    tools = [
        {"server": a.server, "tool": a.tool, "access": a.id, "tier": a.necessity, "asks_first": a.confirmation_required}
        for a in after.in_tiers()
        if a.kind == "mcp" and a.complete and a.tool and (a.server, a.tool) not in old_tools
    ]
    now = {(p.identity, p.scope, p.namespace, p.scheme) for p in after.permissions}
    revoke = [
        {"permission": p.name, "identity": p.identity, "provider": p.provider} for k, p in was.items() if k not in now
    ]
    return {
        "admin_diff_version": 1,
        "old": d["old"],
        "new": d["new"],
        "targets": {k: {"where": _TARGETS.get(k, k), "approve": v} for k, v in items.items()},
        "gateway_tools": tools,
        "no_longer_needed": revoke,
        "complete": d["complete"],
        "diff": d,
    }


def render_admin_text(a: Mapping[str, Any]) -> str:
    """What an administrator must newly approve, in words, one target at a time."""
    t = for_terminal
    lines = [
        "What an administrator must newly approve: "
        f"{t(a['old'].get('source') or '')} -> {t(a['new'].get('source') or '')}"
    ]
    if a["old"].get("valid") is False:
        lines.append("! the old card is invalid: nothing it asked for counts as approved before")
    if a["new"].get("valid") is False:
        lines.append("! the new card is invalid: nothing derived from it should be approved")
    for target in a["targets"].values():
        lines.append("")
        lines.append(target["where"])
        for e in target["approve"]:
            served = ", ".join(t(x) for x in e["accesses"])
            when = "required" if e["tier"] == "REQUIRED" else f"{e['tier'].lower()} tier"
            why = " (now required; was optional)" if e["change"] == "now required" else ""
            lines.append(f"  - {t(e['action'])}{why} [{when}, {e['identity']}; for {served or 'the tier'}]")
    if a["gateway_tools"]:
        lines.append("")
        lines.append("MCP gateways (ToolHive, agentgateway): permit the new tools")
        for tool in a["gateway_tools"]:
            first = "; the agent asks the user first" if tool["asks_first"] else ""
            lines.append(f"  - {t(tool['tool'])} on {t(tool['server'])} [{tool['tier'].lower()}{first}]")
    if a["no_longer_needed"]:
        lines.append("")
        lines.append("No longer needed (can be revoked):")
        lines += [f"  - {t(r['permission'])} ({r['identity']})" for r in a["no_longer_needed"]]
    if not a["complete"]:
        lines.append("")
        lines.append("! incomplete: some permissions are unknown on one side; there may be more to approve")
    lines.append("")
    if a["new"].get("valid") is False:
        lines.append("the new card is invalid: approve nothing derived from it")
    elif a["targets"] or a["gateway_tools"]:
        lines.append("approval needed")
    elif a["diff"]["risks"]:
        lines.append("nothing new to approve, but new risks: see `ramscope diff`")
    else:
        lines.append("nothing new to approve")
    return "\n".join(lines) + "\n"
