"""A provider's scope asked for by a spec that is not the provider's (issue 22, item 4).

A spec names its token endpoint and describes its scopes in its own words. Naming Google's token
endpoint puts its scopes in Google's namespace, where ``gmail.readonly`` is what Google says it is,
whatever the spec calls it ("See today's weather forecast"). So where a scope belongs to a known
universe or catalog of its authorization server, the provider's own description is the one shown
(report, consent screen), and a warning names both sides when

* the spec describes the scope otherwise (``provider-scope-redescribed``), or
* none of the spec's hosts (where it is served, its API servers) is the provider's
  (``provider-scope-borrowed``).

Issue 30: the borrowing warning holds for every provider ramscope ships data for (a universe, a
catalog, quirks), not Google and Microsoft only: a scope whose authorization server is on a
provider's own domain (Slack's ``slack.com/oauth/v2/authorize``, GitHub's ``github.com/login/oauth``)
is that provider's, and a spec none of whose hosts is on those domains is borrowing it. Where ramscope
has no description of the provider's own, the warning says so (the spec's words are not the
provider's).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from ..diagnostics import Diagnostic
from ..providers import GOOGLE, MICROSOFT, catalog
from ..specs.model import SpecIndex
from .privilege import Alternative, Atom, GrantSpace
from .records import _descriptions
from .rules import PROVIDER_SCOPE_BORROWED as BORROWED
from .rules import PROVIDER_SCOPE_REDESCRIBED as REDESCRIBED

__all__ = ["BORROWED", "REDESCRIBED", "ProviderScope", "described", "provider_scope", "scope_warnings"]

#: Per authorization server: who it is, and the hosts its own APIs and specs are on.
_PROVIDERS: dict[str, tuple[str, re.Pattern[str]]] = {
    GOOGLE: ("Google", re.compile(r"(?:^|\.)googleapis\.com\Z")),
    MICROSOFT: (
        "Microsoft",
        re.compile(r"(?:^|\.)(?:microsoft\.com|office\.com|office365\.com|azure\.com|microsoftonline\.com)\Z"),
    ),
}


#: Providers with a shipped catalog (``providers.CATALOGS``, beside Microsoft Graph above): their own
#: registrable domains, where their authorization servers and APIs are.
_CATALOG_DOMAINS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("GitHub", ("github.com",)),
    ("Notion", ("notion.com", "notion.so")),
    ("DocuSign", ("docusign.com", "docusign.net")),
    ("Stripe", ("stripe.com",)),
    ("Intercom", ("intercom.io", "intercom.com")),
    ("Zendesk", ("zendesk.com",)),
)


def _domain_pattern(domains: tuple[str, ...]) -> re.Pattern[str]:
    # At a label boundary and at the end: ``api.notslack.com`` and ``slack.com.evil.example`` are not Slack's.
    return re.compile(r"(?:^|\.)(?:" + "|".join(re.escape(d) for d in domains) + r")\Z")


@cache
def _by_domain() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(provider, own-domain pattern) of every provider with shipped data but a universe's."""
    from ..providers.quirks import provider_domains  # noqa: PLC0415 - loads quirks.json

    out = [(label, _domain_pattern(doms)) for label, doms in _CATALOG_DOMAINS]
    out.extend((name.capitalize(), _domain_pattern(doms)) for name, doms in provider_domains())
    return tuple(out)


def _provider_of(namespace: str) -> tuple[str, re.Pattern[str]] | None:
    """Who ``namespace`` (an authorization server, normalised) belongs to, and that provider's hosts."""
    if namespace in _PROVIDERS:
        return _PROVIDERS[namespace]
    try:
        host = (urlsplit(namespace.split("#", 1)[0]).hostname or "").lower()
    except ValueError:
        return None
    if not host:
        return None
    return next(((label, pat) for label, pat in _by_domain() if pat.search(host)), None)


@dataclass(frozen=True, slots=True)
class ProviderScope:
    provider: str
    #: Where the provider's data comes from: the universe or catalog name.
    source: str
    description: str | None


@cache
def _graph_descriptions() -> Mapping[str, str]:
    cat = catalog("microsoft-graph")
    if cat is None:
        return {}
    out: dict[str, str] = {}
    for perm in cat.permissions.values():
        for name in (perm.scope, perm.short, f"https://graph.microsoft.com/{perm.short}"):
            out.setdefault(name, perm.description)
    return out


def provider_scope(space: GrantSpace, atom: Atom) -> ProviderScope | None:
    """What the provider says of ``atom``, if it is a scope of a known universe, catalog or quirks'
    provider (the description ``None`` where ramscope has none of the provider's own)."""
    if not atom.is_scope:
        return None
    if atom.namespace not in _PROVIDERS:
        found = _provider_of(atom.namespace)
        return ProviderScope(found[0], "its authorization server", None) if found is not None else None
    label = _PROVIDERS[atom.namespace][0]
    for u in space.universes:
        if u.server == atom.namespace and (atom.namespace, atom.scope) in u.by_scope:
            return ProviderScope(label, f"universe {u.name}", u.descriptions.get(atom.scope))
    if atom.namespace == MICROSOFT and (d := _graph_descriptions().get(atom.scope)) is not None:
        return ProviderScope(label, "catalog microsoft-graph", d)
    return None


def _hosts(index: SpecIndex) -> list[str]:
    # Where the spec is served, its API servers (OpenAPI ``servers``), its root (Discovery ``rootUrl``).
    servers = index.extra.get("servers") or ()
    urls = [index.url, *(servers if isinstance(servers, list | tuple) else ()), index.extra.get("rootUrl") or ""]
    out = []
    for u in urls:
        try:
            host = (urlsplit(str(u)).hostname or "").lower()
        except ValueError:
            continue
        if host:
            out.append(host)
    return out


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def scope_warnings(
    space: GrantSpace, atom: Atom, index: SpecIndex, spec_description: str | None, pointer: str
) -> tuple[str | None, list[Diagnostic]]:
    """The description to show for ``atom`` as ``index`` asks for it, and the warnings it earns."""
    known = provider_scope(space, atom)
    if known is None:
        return spec_description, []
    diags = []
    data: dict[str, Any] = {
        "scope": atom.scope,
        "namespace": atom.namespace,
        "provider": known.provider,
        "spec": index.url,
        "provider_description": known.description,
        "spec_description": spec_description,
    }
    borrowed = _borrowing(atom, index)
    hosts = _hosts(index)
    if borrowed:
        diags.append(
            BORROWED(
                pointer,
                f"{index.url} (hosts {', '.join(sorted(set(hosts)))}) is not {known.provider}'s, but asks for "
                f"{known.provider}'s scope {atom.scope} ({known.source}: {known.description or 'no description'})",
                data=data,
            )
        )
    if spec_description and known.description and not _same(spec_description, known.description):
        diags.append(
            REDESCRIBED(
                pointer,
                f"{index.url} describes {known.provider}'s scope {atom.scope} as {spec_description!r}; "
                f"{known.provider} describes it as {known.description!r}, which is shown",
                data=data,
            )
        )
    # A borrower's words are not what the provider's scope means: with none of the provider's own, none.
    return (known.description or (None if borrowed else spec_description)), diags


def _borrowing(atom: Atom, index: SpecIndex) -> bool:
    """Whether ``index`` asks for a provider's scope ``atom`` while none of its hosts is the provider's."""
    owner = _provider_of(atom.namespace)
    if owner is None:
        return False
    hosts = _hosts(index)
    return bool(hosts) and not any(owner[1].search(h) for h in hosts)


def described(space: GrantSpace, index: SpecIndex, alt: Alternative) -> dict[str, str]:
    """An alternative's scope descriptions as a report shows them: the provider's where it has one (and
    none of a spec's own words for a provider's scope it borrows)."""
    out = _descriptions(index, alt)
    for atom in alt.atoms:
        known = provider_scope(space, atom)
        if known is not None and known.description:
            out[atom.scope] = known.description
        elif known is not None and _borrowing(atom, index):
            out.pop(atom.scope, None)
    return out
