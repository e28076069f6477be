"""Build cassettes/travel-agent.yaml, the cassette the README example replays.

Nothing in it was recorded from the network: each interaction is *synthesized*
from a copy of the document that a package ships, and says which one. Run::

    pip install google-api-python-client
    python cassettes/synthesize_travel_agent.py

What it holds, and what it does not:

* GET https://www.googleapis.com/discovery/v1/apis/calendar/v3/rest: Google's
  Calendar v3 Discovery document as shipped in google-api-python-client's
  ``discovery_cache`` (the same document Google serves at that URL, at the
  revision the package was built with).
* The OpenHolidays Swagger document is not included: no installable package
  ships a copy, and ramscope does not invent specs.
* The Maps Grounding Lite MCP server is not included: its "spec" is a JSON-RPC
  conversation, which the MCP adapter records once it exists.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import sys
from pathlib import Path

from ramscope.store import Cassette

CALENDAR_URL = "https://www.googleapis.com/discovery/v1/apis/calendar/v3/rest"
HERE = Path(__file__).resolve().parent


def _packaged_calendar_doc() -> tuple[Path, str]:
    spec = importlib.util.find_spec("googleapiclient")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("google-api-python-client is not installed (pip install google-api-python-client)")
    doc = Path(next(iter(spec.submodule_search_locations))) / "discovery_cache" / "documents" / "calendar.v3.json"
    version = importlib.metadata.version("google-api-python-client")
    return doc, version


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
            "note": "Synthesized for the README example from documents shipped in packages; nothing here was "
            "recorded from the network. Regenerate with: python cassettes/synthesize_travel_agent.py",
        },
    )
    cassette.add_synthesized(
        url=CALENDAR_URL,
        body=doc.read_bytes(),
        media_type="application/json",
        source=f"google-api-python-client {version}: googleapiclient/discovery_cache/documents/calendar.v3.json",
        note="the Discovery document Google serves at this URL, at the revision the package shipped",
    )
    cassette.save()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
