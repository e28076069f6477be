"""The SDK tables the code readers consult (``data/code_*.json.gz``, rebuilt by ``scripts/build_code_tables.py``).

Data, not code per SDK: Google's Discovery APIs and their resource/method chains (from the Discovery
documents google-api-python-client bundles), GitHub's REST operations and PyGithub's documented
``:calls:`` endpoints, slack_sdk's method names. Loaded once, lazily.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import orjson

__all__ = ["DISCOVERY_URL", "GITHUB_API", "Tables", "kebab", "tables"]

#: How the host index (and so the spec store) names a Discovery document.
DISCOVERY_URL = "https://www.googleapis.com/discovery/v1/apis/{name}/{version}/rest"
GITHUB_API = "https://api.github.com"
_UNSTABLE = re.compile(r"alpha|beta|preview|internal", re.IGNORECASE)
_VERSIONED = re.compile(r"_v\d+\w*")


def _load(name: str) -> dict[str, Any]:
    f = resources.files(__package__).joinpath("data").joinpath(name)
    doc = orjson.loads(gzip.decompress(f.read_bytes()))
    return doc if isinstance(doc, dict) else {}


def kebab(name: str) -> str:
    """githubkit's method name to the operationId's verb: ``list_for_repo`` -> ``list-for-repo``."""
    return name.replace("_", "-")


@dataclass(frozen=True)
class Tables:
    #: Discovery API name -> version -> base URL (rootUrl + servicePath).
    google_apis: dict[str, dict[str, str]]
    #: ``users.messages.list`` -> ["gmail:v1", ...].
    google_chains: dict[str, list[str]]
    #: api:version -> chain -> method id, where it is not ``api.chain``.
    google_ids: dict[str, dict[str, str]]
    #: GAPIC client (``google.apps.chat_v1.ChatServiceClient``) -> {"api", "version", "methods": {name: method id}}.
    gapic: dict[str, dict[str, Any]]
    #: GitHub REST operationId -> [METHOD, path].
    github_ops: dict[str, list[str]]
    #: PyGithub class -> method -> {"calls": [[METHOD, path, operationId]], "returns": class}.
    pygithub: dict[str, dict[str, Any]]
    #: slack_sdk method name -> Web API method.
    slack: dict[str, str]
    #: notion-client endpoint chain (``blocks.children.list``) -> [METHOD, path].
    notion: dict[str, list[str]]
    #: stripe-python: ``StripeClient`` chain (``customers.create``) and classic resource call (``Customer.create``)
    #: -> [METHOD, path].
    stripe_chains: dict[str, list[str]]
    stripe_resources: dict[str, list[str]]
    #: python-asana: ``TasksApi`` -> ``create_task`` -> [METHOD, path under https://app.asana.com/api/1.0].
    asana: dict[str, dict[str, list[str]]]
    sources: tuple[str, ...]

    def google_version(self, api: str, chain: str, version: str | None = None) -> str | None:
        """The version of ``api`` whose Discovery document has ``chain``: the one named, else the only one,
        else the stable one when one stable version has it; ``None`` when none has it."""
        versions = [k.partition(":")[2] for k in self.google_chains.get(chain, ()) if k.partition(":")[0] == api]
        if version is not None:
            return version if version in versions else None
        if len(versions) == 1:
            return versions[0]
        stable = [v for v in versions if not _UNSTABLE.search(v)]
        return stable[-1] if len(stable) == 1 else None

    def google_method_id(self, api: str, version: str, chain: str) -> str:
        """The Discovery method id of ``chain`` in ``api`` ``version`` (``admin`` ``directory_v1`` ``users.list`` ->
        ``directory.users.list``)."""
        return self.google_ids.get(f"{api}:{version}", {}).get(chain, f"{api}.{chain}")

    def google_by_id(self, method_id: str) -> tuple[str, str, str] | None:
        """(api, version, chain) of a Discovery method id, the stable version where several have it."""
        api, _, chain = method_id.partition(".")
        version = self.google_version(api, chain) if chain else None
        if version is not None and self.google_method_id(api, version, chain) == method_id:
            return api, version, chain
        hits = self._exceptions().get(method_id, [])
        stable = [h for h in hits if not _UNSTABLE.search(h[1])]
        pick = stable or hits
        return pick[-1] if pick else None

    def _exceptions(self) -> dict[str, list[tuple[str, str, str]]]:
        cached: dict[str, list[tuple[str, str, str]]] | None = getattr(self, "_by_id_cache", None)
        if cached is None:
            cached = {}
            for key, chains in self.google_ids.items():
                api, _, version = key.partition(":")
                for chain, mid in chains.items():
                    cached.setdefault(mid, []).append((api, version, chain))
            object.__setattr__(self, "_by_id_cache", cached)
        return cached

    def gapic_client(self, path: str) -> str | None:
        """The GAPIC client a dotted import path names (``google.apps.chat.ChatServiceAsyncClient`` ->
        ``google.apps.chat_v1.ChatServiceClient``), or ``None``."""
        cls = path.rpartition(".")[2].replace("AsyncClient", "Client")
        bare = _VERSIONED.sub("", path.rpartition(".")[0])
        for key in self.gapic:
            package, _, name = key.rpartition(".")
            if name == cls and bare.startswith(_VERSIONED.sub("", package)):
                return key
        return None

    def gapic_packages(self) -> list[tuple[str, str]]:
        """(unversioned package ``google.apps.chat``, client key) pairs, for methods of a client made elsewhere."""
        return [(_VERSIONED.sub("", k.rpartition(".")[0]), k) for k in self.gapic]

    def google_apis_of(self, chain: str) -> set[str]:
        return {k.partition(":")[0] for k in self.google_chains.get(chain, ())}

    @property
    def slack_methods(self) -> frozenset[str]:
        return frozenset(self.slack.values())


@cache
def tables() -> Tables:
    g, gh, sl = _load("code_google.json.gz"), _load("code_github.json.gz"), _load("code_slack.json.gz")
    return Tables(
        google_apis=g.get("apis", {}),
        google_chains=g.get("chains", {}),
        google_ids=g.get("ids", {}),
        gapic=g.get("gapic", {}),
        github_ops=gh.get("operations", {}),
        pygithub=gh.get("pygithub", {}),
        slack=sl.get("methods", {}),
        notion=(sl.get("notion") or {}).get("routes", {}),
        stripe_chains=(sl.get("stripe") or {}).get("chains", {}),
        stripe_resources=(sl.get("stripe") or {}).get("resources", {}),
        asana=(sl.get("asana") or {}).get("classes", {}),
        sources=tuple(str(d.get("source", "")) for d in (g, gh, sl)),
    )
