"""Where each alternative came from, and what vendor extensions and provider quirks add to one access's choice

* where each alternative came from (``alternatives[].source``, and ``requirements_source`` naming
  the extension or quirk that gave the pick);
* alternatives *offered*, not required (Atlassian's granular scopes while they are Beta, an
  anonymous alternative that depends on a site setting): listed in ``options``, chosen only when
  the policy prefers them;
* alternatives chosen by the data the call addresses (Slack's history scopes, one per conversation
  type): the choice is ambiguous, with every alternative listed;
* notes of the provider that are no permission (Box: an administrator; Salesforce, ClickUp: least
  privilege is not expressible in the token; retired scopes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..diagnostics import Diagnostic
from ..manifest import ResourceAccess
from ..providers import quirks
from ..specs.extensions import alternative_sources, offered_requirements
from ..specs.mcp import BASELINE_SOURCE
from ..specs.model import OperationEntry, SchemeRequirement, SpecIndex
from .policy import Policy
from .privilege import AMBIGUOUS, TOKEN_SCOPES, Alternative, Choice, GrantSpace, SpecGrants
from .rules import MCP_BASELINE_ONLY, NOT_EXPRESSIBLE, REQUIRES_ADMIN, SCOPE_DEPRECATED

__all__ = [
    "BASELINE_REVIEW",
    "baseline_floor",
    "contextual_choice",
    "label_sources",
    "notes",
    "offered",
    "pick_source",
    "token_scopes",
]

#: What a reviewer does with an access whose only known need is an MCP server's baseline.
BASELINE_REVIEW = (
    "record the tool's step-up challenge (a 403 insufficient_scope answering its tools/call, or a result's "
    '_meta["mcp/www_authenticate"], in an MCP log or a HAR: `ramscope draft` writes it, `ramscope audit` checks '
    "it), ask the server to declare the tool's securitySchemes, or pin the tool's scopes with a policy [[pin]]"
)


def offered(
    grants: SpecGrants, entry: OperationEntry, policy: Policy
) -> tuple[list[Alternative], list[dict[str, Any]]]:
    """The alternatives offered beside the requirements: those the policy prefers (to be added to
    the candidates), and every offered one as an ``options`` record."""
    chosen: list[Alternative] = []
    records: list[dict[str, Any]] = []
    items = list(offered_requirements(entry.extra))
    for key in ("quirks", "catalog"):
        q = entry.extra.get(key)
        if isinstance(q, Mapping):
            for item in q.get("offered") or ():
                req = tuple(
                    SchemeRequirement(str(sch), tuple(str(x) for x in sc)) for sch, sc in item.get("requirement") or ()
                )
                items.append((str(item.get("source", "")), req, item))
    for source, req, item in items:
        alt = grants.alternatives_of((req,))[0]
        # An unscoped credential (Stripe's secret key) is preferred only by a policy naming it: scopes
        # are what `prefer` globs match, and an empty list would match every glob.
        preferred = bool(alt.scopes) and policy.preferred(alt.scopes)
        if preferred:
            chosen.append(alt)
        record: dict[str, Any] = {
            "source": source,
            "scopes": alt.scopes,
            "requirement": [{"scheme": t.scheme, "scopes": list(t.scopes)} for t in req],
            "state": item.get("state"),
            "kind": item.get("kind") or ("anonymous" if not req else None),
            "condition": item.get("condition"),
            "reference": item.get("reference"),
            "considered": preferred,
        }
        records.append(record)
    return chosen, records


def label_sources(
    alternatives: Sequence[Alternative], listed: list[dict[str, Any]], entry: OperationEntry, default: str
) -> None:
    """``source`` on each listed alternative (in the order :func:`choice._filter` lists them)."""
    sources = alternative_sources(entry.extra)
    for alt, rec in zip(alternatives, listed, strict=False):
        rec["source"] = sources.get(alt.terms, default)


def pick_source(alt: Alternative, entry: OperationEntry, default: str) -> str:
    """Where the picked alternative came from: the extension or quirk that made it, else ``default``."""
    return alternative_sources(entry.extra).get(alt.terms, default)


def contextual_choice(
    a: ResourceAccess, entry: OperationEntry, space: GrantSpace, candidates: Sequence[Alternative], choice: Choice
) -> tuple[Choice, Diagnostic | None]:
    """Where the provider says the data addressed decides between alternatives (Slack: the
    conversation's type), no grant-set order may decide: every candidate is a rival."""
    q = entry.extra.get("quirks")
    ctx = q.get("contextual") if isinstance(q, Mapping) else None
    if not isinstance(ctx, Mapping) or len(candidates) < 2:
        return choice, None
    rivals = tuple((alt, space.granted(alt.atoms)) for alt in candidates if alt.atoms != choice.alternative.atoms)
    names = [", ".join(alt.scopes) or "(none)" for alt in (choice.alternative, *(r for r, _ in rivals))]
    diag = AMBIGUOUS(
        a.loc.pointer,
        f"access {a.id!r}: which of {'; '.join(names)} it needs depends on {ctx.get('decided_by')}, which the "
        f"card does not say: any one of them, not all (source: {ctx.get('source')}); {names[0]} is listed first",
        data={"candidates": names, "decided_by": ctx.get("decided_by"), "source": ctx.get("source")},
    )
    return Choice(choice.alternative, choice.granted, rivals), diag


def notes(a: ResourceAccess, index: SpecIndex, entry: OperationEntry) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
    """The provider's notes on the access that are no permission, as records and diagnostics."""
    out: list[dict[str, Any]] = []
    diags: list[Diagnostic] = []
    ext = entry.extra.get("extensions")
    for n in (ext.get("notes") or ()) if isinstance(ext, Mapping) else ():
        out.append(dict(n))
        diags.append(REQUIRES_ADMIN(a.loc.pointer, f"access {a.id!r}: {n.get('message')} ({n.get('source')})"))
    q = entry.extra.get("quirks")
    q = q if isinstance(q, Mapping) else {}
    for n in q.get("admin") or ():
        # A provider's documented role requirement on the calling user: no permission, said as a note.
        out.append({"source": f"quirk:{q.get('provider')}", "principal": "administrator", "message": n.get("message"),
                    "reference": n.get("source")})  # fmt: skip
        diags.append(REQUIRES_ADMIN(a.loc.pointer, f"access {a.id!r}: {n.get('message')} ({n.get('source')})"))
    for d in q.get("deprecated") or ():
        out.append(
            {
                "source": f"quirk:{q.get('provider')}",
                "deprecated_scope": d.get("scope"),
                "replacement": d.get("replacement"),
                "reference": d.get("source"),
            }
        )
        repl = d.get("replacement")
        diags.append(
            SCOPE_DEPRECATED(
                a.loc.pointer,
                f"access {a.id!r}: the spec names the retired scope {d.get('scope')!r}"
                + (f", replaced by {repl!r}" if repl else "; the operation's other alternatives are used")
                + f" ({d.get('source')})",
            )
        )
    nope = quirks.not_expressible(index)
    if nope is not None:
        out.append({"source": f"quirk:{nope.name}", "not_expressible": nope.message, "reference": nope.source})
        diags.append(NOT_EXPRESSIBLE(a.loc.pointer, f"access {a.id!r}: {nope.message} ({nope.source})"))
    return out, diags


def token_scopes(grants: SpecGrants, alt: Alternative) -> list[dict[str, Any]]:
    """The scopes of an alternative's terms that are no permission over data (``offline_access``,
    ``openid``), each with its authorization server and why: listed apart, never in ``scopes``."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for term in alt.terms:
        for scope in term.scopes:
            if scope in TOKEN_SCOPES:
                ns = grants.atom_for(term.scheme).namespace
                out.setdefault((ns, scope), {"scope": scope, "namespace": ns, "why": TOKEN_SCOPES[scope]})
    return [out[k] for k in sorted(out)]


def baseline_floor(
    a: ResourceAccess, index: SpecIndex, entry: OperationEntry, alt: Alternative, grants: SpecGrants
) -> tuple[dict[str, Any], Diagnostic] | None:
    """An MCP tool whose only known requirement is the server's baseline (``scopes_supported``): the
    floor, stated as such, and the finding that makes the access incomplete. None for any other access.

    MCP 2026-07-28 calls ``scopes_supported`` "the minimal set of scopes necessary for basic
    functionality"; an operation that needs more gets it by step-up (403 ``insufficient_scope`` naming
    the scope). So the baseline is what the tool needs at least, never what it needs."""
    if entry.security_source != BASELINE_SOURCE:
        return None
    version = index.extra.get("protocol_version")
    baseline = index.extra.get("baseline_scopes")
    floor: dict[str, Any] = {
        "source": BASELINE_SOURCE,
        "spec_url": index.url,
        "scopes": alt.scopes,
        "grants": [{"namespace": t.namespace, "scope": t.scope} for t in sorted(alt.atoms) if t.is_scope],
        "baseline": list(baseline) if isinstance(baseline, list) else alt.scopes,
        "token_scopes": token_scopes(grants, alt),
        "protocol_version": version if isinstance(version, str) else None,
        "why": "the server's protected-resource metadata scopes_supported is its baseline (MCP 2026-07-28: "
        '"the minimal set of scopes necessary for basic functionality"); a tool that needs more is granted it '
        "by step-up, so the baseline is a floor, not what this tool needs",
        "review": BASELINE_REVIEW,
    }
    shown = ", ".join(alt.scopes) or "no scope"
    diag = MCP_BASELINE_ONLY(
        a.loc.pointer,
        f"access {a.id!r}: tool {entry.key!r} of {index.url} declares nothing of its own and no challenge names its "
        f"scope; the server's baseline ({shown}) is the least it needs, not what it needs",
        hint=BASELINE_REVIEW,
        data={"reason": BASELINE_SOURCE, "floor": alt.scopes, "spec_url": index.url, "tool": entry.key},
    )
    return floor, diag
