"""Build cassettes/travel-agent.yaml, the cassette the README example replays.

Nothing in it was recorded from the network: each interaction is *synthesized*,
from a copy of a document that a package ships or from published documentation,
and says which. Run::

    pip install google-api-python-client
    python cassettes/synthesize_travel_agent.py

What it holds, and what it does not:

* GET https://www.googleapis.com/discovery/v1/apis/calendar/v3/rest: Google's
  Calendar v3 Discovery document as shipped in google-api-python-client's
  ``discovery_cache`` (the same document Google serves at that URL, at the
  revision the package was built with).
* GET https://openholidaysapi.org/swagger/v1/swagger.json: OpenHolidays'
  OpenAPI document, which no installable package ships. It is *reconstructed*
  in ``cassettes/sources/openholidays-swagger.json`` from what is published:
  the API's documentation (www.openholidaysapi.org: the endpoints Countries,
  Languages, Subdivisions, Groups, PublicHolidays(ByDate),
  SchoolHolidays(ByDate), Statistics) and the operation summaries and
  parameters that clients generated from the real swagger.json carry. Like
  the real document it is OpenAPI 3.0.1 as Swashbuckle writes it, with no
  operationIds (the proposal's own example notes this) and no security
  declared (the API is public, no key). Its schemas are abbreviated; only the
  paths, methods and security matter to ramscope. Because it declares no
  security, ramscope reports the access as undetermined unless a policy
  asserts otherwise: ``examples/travel-agent.policy.toml`` does, citing the
  provider's documentation.
* POST https://mapstools.googleapis.com/mcp and its protected-resource metadata
  URLs: the unauthenticated MCP conversation with Google's Maps Grounding Lite
  server, which cannot be recorded from here. It is reconstructed from what
  Google publishes, and nothing more than the conversation mechanically needs:

  - "Authenticate to Google and Google Cloud MCP servers"
    (docs.cloud.google.com/mcp/authenticate-mcp): Google's remote MCP servers
    implement the MCP authorization spec, and "services that don't use IAM,
    like Google Maps, do accept API keys";
  - Maps Grounding Lite is called with an ``X-Goog-Api-Key`` header in
    Google's examples; the documented tools of mapstools.googleapis.com include
    ``search_places``, ``lookup_weather`` and ``compute_routes``.

  So the server is synthesized as an API-key server that demands a credential
  before it lists anything: every POST (``server/discover``, then the
  ``initialize`` fallback) answers HTTP 403 with Google's standard error body
  for a missing key, and both protected-resource metadata URLs and the
  2025-03-26 authorization-server metadata URL on its origin answer 404 (it
  publishes no OAuth metadata for key callers). The tool list itself is not
  synthesized: ramscope then reports ``lookup_weather`` as unverified, with the
  server-wide requirement, an API key, which an AGENT identity can use. The
  request bodies are ramscope's own deterministic requests (``clientInfo``
  left out: cassette matching ignores it).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from ramscope.store import Cassette, Interaction
from ramscope.store.mcp import initialize_request, legacy_as_metadata_url, prm_urls, server_discover_request

CALENDAR_URL = "https://www.googleapis.com/discovery/v1/apis/calendar/v3/rest"
MAPS_MCP_URL = "https://mapstools.googleapis.com/mcp"
MAPS_SOURCE = (
    "Google Cloud documentation, 'Authenticate to Google and Google Cloud MCP servers' "
    "(docs.cloud.google.com/mcp/authenticate-mcp): Google's remote MCP servers implement the MCP authorization "
    "spec, and services that don't use IAM, like Google Maps, accept API keys; Google's Maps Grounding Lite "
    "examples send an X-Goog-Api-Key header; documented tools of mapstools.googleapis.com include search_places, "
    "lookup_weather, compute_routes"
)
#: Google's standard error body for a request without an API key.
GOOGLE_MISSING_KEY = {
    "error": {"code": 403, "message": "The request is missing a valid API key.", "status": "PERMISSION_DENIED"}
}
HERE = Path(__file__).resolve().parent


def _packaged_calendar_doc() -> tuple[Path, str]:
    spec = importlib.util.find_spec("googleapiclient")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("google-api-python-client is not installed (pip install google-api-python-client)")
    doc = Path(next(iter(spec.submodule_search_locations))) / "discovery_cache" / "documents" / "calendar.v3.json"
    version = importlib.metadata.version("google-api-python-client")
    return doc, version


def _without_client_info(body: dict[str, Any]) -> bytes:
    """The request as ramscope sends it, minus its own version (cassette matching ignores clientInfo)."""
    params = dict(body.get("params") or {})
    params.pop("clientInfo", None)
    if isinstance(params.get("_meta"), dict):
        params["_meta"] = {k: v for k, v in params["_meta"].items() if k != "io.modelcontextprotocol/clientInfo"}
    return orjson.dumps({**body, "params": params})


def add_maps_grounding_lite(cassette: Cassette) -> None:
    """The unauthenticated conversation with Maps Grounding Lite, reconstructed from Google's documentation."""
    now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    denied = orjson.dumps(GOOGLE_MISSING_KEY)
    for request, step in ((server_discover_request(), "server/discover"), (initialize_request(), "initialize")):
        cassette.append(
            Interaction(
                method="POST",
                uri=MAPS_MCP_URL,
                request_body=_without_client_info(request),
                status=403,
                reason="Forbidden",
                request_headers=(("accept", "application/json, text/event-stream"),),
                response_headers=(("content-type", "application/json"),),
                body=denied,
                recorded_at=now,
                synthesized=True,
                source=MAPS_SOURCE,
                extra={"note": f"{step} without an API key: Google's standard 403 for a missing key"},
            )
        )
    for url in [*prm_urls(MAPS_MCP_URL), legacy_as_metadata_url(MAPS_MCP_URL)]:
        cassette.append(
            Interaction(
                method="GET",
                uri=url,
                request_body=None,
                status=404,
                reason="Not Found",
                body=b"",
                recorded_at=now,
                synthesized=True,
                source=MAPS_SOURCE,
                extra={"note": "no OAuth metadata (protected-resource, or the 2025-03-26 origin's) for API-key callers"},
            )
        )


OPENHOLIDAYS_URL = "https://openholidaysapi.org/swagger/v1/swagger.json"
OPENHOLIDAYS_DOC = HERE / "sources" / "openholidays-swagger.json"


def add_openholidays(cassette: Cassette) -> None:
    """The OpenHolidays OpenAPI document, reconstructed from published documentation (see the module docstring)."""
    cassette.add_synthesized(
        url=OPENHOLIDAYS_URL,
        body=OPENHOLIDAYS_DOC.read_bytes(),
        media_type="application/json",
        source="reconstructed from the OpenHolidays API documentation (https://www.openholidaysapi.org/en/) and "
        "the operation summaries/parameters of clients generated from its swagger.json; schemas abbreviated",
        note="not recorded: no installable package ships this document",
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--out", type=Path, default=HERE / "travel-agent.yaml")
    p.add_argument("--discovery-doc", type=Path, help="calendar.v3.json to use instead of the installed package's")
    p.add_argument("--package-version", default=None, help="version to name when --discovery-doc is given")
    args = p.parse_args(argv)
    if args.discovery_doc:
        doc, version = args.discovery_doc, args.package_version or "unknown"
    else:
        doc, version = _packaged_calendar_doc()
    cassette = Cassette(
        args.out,
        meta={
            "note": "Synthesized for the README example from documents shipped in packages and from published "
            "documentation; nothing here was recorded from the network. Regenerate with: "
            "python cassettes/synthesize_travel_agent.py",
        },
    )
    cassette.add_synthesized(
        url=CALENDAR_URL,
        body=doc.read_bytes(),
        media_type="application/json",
        source=f"google-api-python-client {version}: googleapiclient/discovery_cache/documents/calendar.v3.json",
        note="the Discovery document Google serves at this URL, at the revision the package shipped",
    )
    add_openholidays(cassette)
    add_maps_grounding_lite(cassette)
    cassette.save()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
