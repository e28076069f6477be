"""How derivation facts become report JSON: targets, requirements, credentials, labels."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..specs.model import SchemeRequirement, SchemeType, SpecIndex, SpecKind
from .privilege import (
    Alternative,
    Atom,
)
from .resolve import Target


def _enum_name(v: Any) -> str:
    return str(v.name)


def _alt_label(alt: Alternative) -> str:
    parts = alt.scopes or sorted({f"{a.scheme or a.namespace} ({a.type.value})" for a in alt.atoms})
    return " + ".join(parts) if parts else "(anonymous)"


def _credentials(atoms: Iterable[Atom]) -> list[dict[str, Any]]:
    return [
        {"scheme": a.scheme, "type": a.type.value, "namespace": a.namespace} for a in sorted(atoms) if not a.is_scope
    ]


def _descriptions(index: SpecIndex, alt: Alternative) -> dict[str, str]:
    out: dict[str, str] = {}
    for t in alt.terms:
        scheme = index.scheme_map.get(t.scheme)
        if scheme is None:
            continue
        for s in t.scopes:
            d = scheme.scope_description(s)
            if d:
                out[s] = d
    return out


def _term_json(index: SpecIndex, t: SchemeRequirement) -> dict[str, Any]:
    scheme = index.scheme_map.get(t.scheme)
    return {
        "scheme": t.scheme,
        "type": scheme.type.value if scheme is not None else SchemeType.UNKNOWN.value,
        "scopes": list(t.scopes),
    }


def _requirements_json(index: SpecIndex, reqs: Any) -> list[list[dict[str, Any]]] | None:
    if reqs is None:
        return None
    return [[_term_json(index, t) for t in alt] for alt in reqs]


def _target_dict(found: Target) -> dict[str, Any]:
    e = found.entry
    kind = found.index.kind
    out: dict[str, Any] = {
        "kind": kind.value,
        "key": e.key,
        "operation_id": e.operation_id or None,
        "method": e.method or None,
        "path": (e.full_path or e.path) or None,
        "tool": e.operation_id if kind is SpecKind.MCP else None,
        "skill": e.operation_id if kind is SpecKind.A2A and e.operation_id else None,
        "matched_by": found.matched_by,
        "title": e.title or None,
        "security_source": e.security_source or None,
    }
    if kind in (SpecKind.OPENAPI, SpecKind.DISCOVERY):
        # Where the API is served (OpenAPI servers, Discovery rootUrl), not where its spec is: what an
        # export allows and where a third party's data goes (issue 22).
        # An operation's (or its path item's) own servers replace the root's.
        own = e.extra.get("servers")
        raw = (
            (own or found.index.extra.get("servers"))
            if kind is SpecKind.OPENAPI
            else [found.index.extra.get("rootUrl")]
        )
        out["servers"] = [u for u in raw if isinstance(u, str) and u] if isinstance(raw, list) else []
    elif kind is SpecKind.STONE:
        # Dropbox routes name their own host (api, content, notify).
        host = e.extra.get("host")
        out["servers"] = [f"https://{host}"] if isinstance(host, str) and host else []
    if kind is SpecKind.DISCOVERY and e.alt_paths:
        # flatPath with the service path: one segment per parameter, what {+name} stands for here.
        out["flat_path"] = e.alt_paths[-1]
    hints = {k: v for k, v in e.extra.items() if k != "servers"}
    if hints:
        out["hints"] = hints
    return out
