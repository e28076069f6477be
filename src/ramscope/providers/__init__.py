"""Provider knowledge: permission universes and permission catalogs, compiled and shipped.

Two kinds of data feed ``privilege`` beside the specs (``DESIGN.md``):

* **universes** (:mod:`.universe`): per authorization server, which operations each scope opens
  across every API behind it (Google: all Discovery APIs);
* **catalogs** (:mod:`.catalog`): per API, the provider's published requirements where its spec
  declares none (Microsoft Graph, GitHub).

Both are compiled by ``scripts/build_providers.py`` from upstream files (vendored under
``vendor/`` with their licenses, or a package that ships them) into ``ramscope/providers/data``,
loaded lazily, and never fetched here: this package does not touch the network. A refreshed
universe (``ramscope universe refresh``) is handed in by the caller as bytes.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from importlib import resources

from .authserver import GOOGLE, MICROSOFT, canonical_server, normalise_url
from .catalog import Catalog, CatalogEntry, CatalogError, Permission
from .universe import Universe, UniverseError

__all__ = [
    "CATALOGS",
    "GOOGLE",
    "MICROSOFT",
    "UNIVERSES",
    "Catalog",
    "CatalogEntry",
    "CatalogError",
    "Permission",
    "Universe",
    "UniverseError",
    "canonical_server",
    "catalog",
    "catalog_for_servers",
    "catalog_requirements",
    "normalise_url",
    "shipped_universe",
    "snapshot_versions",
]

#: Shipped universes: canonical server -> (name, data file).
UNIVERSES: dict[str, tuple[str, str]] = {GOOGLE: ("google", "google.universe.json.gz")}

#: Shipped catalogs: name -> (provider module with ``normalise_path``, data file).
CATALOGS: dict[str, tuple[str, str]] = {
    "microsoft-graph": ("ramscope.providers.graph", "microsoft-graph.catalog.json.gz"),
    "github": ("ramscope.providers.github", "github.catalog.json.gz"),
    "notion": ("ramscope.providers.notion", "notion.catalog.json.gz"),
    "docusign": ("ramscope.providers.docusign", "docusign.catalog.json.gz"),
    "stripe-restricted-keys": ("ramscope.providers.stripe", "stripe-restricted-keys.catalog.json.gz"),
    "intercom": ("ramscope.providers.intercom", "intercom.catalog.json.gz"),
    "zendesk": ("ramscope.providers.zendesk", "zendesk.catalog.json.gz"),
}


def _data(name: str) -> bytes | None:
    f = resources.files(__name__).joinpath("data", name)
    return f.read_bytes() if f.is_file() else None


@cache
def shipped_universe(server: str) -> Universe | None:
    """The universe shipped for canonical ``server``, or ``None`` (then the card's specs are it)."""
    hit = UNIVERSES.get(server)
    if hit is None:
        return None
    data = _data(hit[1])
    if data is None:
        return None
    from .universe import decode  # noqa: PLC0415 - the codec is needed only when a universe is

    return decode(data)


@cache
def catalog(name: str) -> Catalog | None:
    """The shipped catalog ``name``, or ``None`` when there is none of that name."""
    hit = CATALOGS.get(name)
    if hit is None:
        return None
    data = _data(hit[1])
    if data is None:
        return None
    module = importlib.import_module(hit[0])
    from .catalog import decode  # noqa: PLC0415

    return decode(data, module.normalise_path, getattr(module, "twins", None))


def catalog_for_servers(server_urls: Sequence[str], *, plan: str | None = None) -> Catalog | None:
    """The shipped catalog serving any of these (normalised) server URLs, if one does. ``plan`` is the
    spec's own ``info.x-github-plan``: a provider module's ``MARKED_SERVERS[plan]`` serve only a spec
    that carries that marker (GitHub Enterprise Server's ``/api/v3`` on any host)."""
    import re  # noqa: PLC0415

    for name, (module, fname) in CATALOGS.items():
        if not resources.files(__name__).joinpath("data", fname).is_file():
            continue
        mod = importlib.import_module(module)
        patterns = mod.SERVERS + (getattr(mod, "MARKED_SERVERS", {}).get(plan, ()) if plan else ())
        if any(re.search(p, u) for p in patterns for u in server_urls):
            return catalog(name)
    return None


@cache
def snapshot_versions() -> dict[str, str]:
    """``universe:<name>`` / ``catalog:<name>`` / ``quirks`` / ``reach`` -> version of every shipped snapshot.

    From the small ``versions.json`` the build writes beside them, so a reuse key does not have to
    decode every snapshot.
    """
    import orjson  # noqa: PLC0415

    from .costs import cost_table_version  # noqa: PLC0415
    from .quirks import data_version  # noqa: PLC0415
    from .reach import reach_table_version  # noqa: PLC0415

    data = _data("versions.json")
    out = {str(k): str(v) for k, v in orjson.loads(data).items()} if data else {}
    # The provider quirks and the reviewed reach classes are shipped data too: a report derived with
    # others is not reused.
    out["quirks"] = data_version()
    out["reach"] = reach_table_version()
    from .mcp_catalog import data_version as mcp_catalog_version  # noqa: PLC0415

    out["mcp-catalog"] = mcp_catalog_version()

    # What each permission costs (``costs.json``) is in the report: one derived with other costs is not reused.
    out["costs"] = cost_table_version()
    return out


#: Which delegated scheme of Microsoft Graph's catalog a policy's ``accounts`` setting leaves out.
_GRAPH_OTHER_ACCOUNTS = {
    "work": "microsoft-graph-delegated-personal",
    "personal": "microsoft-graph-delegated-work",
}


def catalog_requirements(
    cat: Catalog, entry: CatalogEntry, *, accounts: str = "work", github: str = "fine-grained"
) -> CatalogEntry:
    """``entry`` with the alternatives a derivation considers: for Microsoft Graph, the delegated
    permissions of one account kind (work or school by default, personal by policy); for GitHub, one
    token family (fine-grained by default, classic by policy), unless the endpoint has no alternative
    of that family for a user (notifications: fine-grained tokens cannot call it), then the other's."""
    if cat.name == "github":
        from .github import CLASSIC, FAMILIES, USER  # noqa: PLC0415 - the provider's names

        keep = set(FAMILIES.get(github, FAMILIES["fine-grained"]))
        user_scheme = CLASSIC if github == "classic" else USER
        if not any(t.scheme == user_scheme for alt in entry.requirements for t in alt):
            keep |= {USER, CLASSIC}
        reqs = tuple(alt for alt in entry.requirements if all(t.scheme in keep for t in alt))
        cond = tuple(c for c in entry.conditional if c[0] in keep)
        return replace(entry, requirements=reqs, conditional=cond)
    if cat.name != "microsoft-graph":
        return entry
    drop = _GRAPH_OTHER_ACCOUNTS.get(accounts, "")
    reqs = tuple(alt for alt in entry.requirements if not any(t.scheme == drop for t in alt))
    least = {k: v for k, v in entry.least.items() if k != drop}
    return replace(entry, requirements=reqs, least=least)
