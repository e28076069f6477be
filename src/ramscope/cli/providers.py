"""The provider data command: ``universe`` (show or refresh the permission universes and catalogs)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from .._text import for_terminal
from ._common import (
    EXIT_OK,
    Command,
    open_engine,
    write_json,
)

if TYPE_CHECKING:
    pass


def _configure_universe(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "action",
        choices=("show", "refresh"),
        help="show: the universes and catalogs in use and their versions; refresh: rebuild Google's "
        "universe from its Discovery directory over https, or Microsoft Graph's catalog from Microsoft's "
        "newest permissions.json, through the spec cache (not from a cassette); Google's refresh is all or "
        "nothing: any failed document, or a result losing APIs or methods of the shipped universe, stores "
        "nothing (exit 2) unless --force",
    )
    p.add_argument(
        "name",
        nargs="?",
        choices=("google", "microsoft-graph"),
        default="google",
        help="the universe or catalog (default google)",
    )
    p.add_argument(
        "--directory",
        default=None,
        metavar="URL",
        help="the Discovery directory to read: only Google's, https://www.googleapis.com/discovery/v1/apis",
    )
    p.add_argument("--url", default=None, metavar="URL", help="microsoft-graph: the permissions.json to read")
    p.add_argument(
        "--force",
        action="store_true",
        help="refresh google: store the universe even if some documents failed or it loses APIs or methods",
    )
    p.add_argument("--format", choices=("json", "text"), default="text")


def _run_universe(args: argparse.Namespace) -> int:
    from .. import providers
    from ..providers.refresh import GOOGLE_DIRECTORY, refresh_google

    if args.action == "refresh" and args.name != "google":
        return _refresh_catalog(args)
    with open_engine(args) as engine:
        if args.action == "refresh":
            from ..providers import GOOGLE

            result = refresh_google(
                engine.store,
                directory=args.directory or GOOGLE_DIRECTORY,
                force=args.force,
                current=engine.universe(GOOGLE),
            )
            u = result.universe
            doc: dict[str, Any] = {
                "refreshed": u.summary(),
                "documents": result.documents,
                "failed": [{"url": url, "error": why} for url, why in result.failed],
                "changes": result.changes.to_dict(),
                "against_shipped": result.against_shipped.to_dict(),
            }
            for url, why in result.failed:
                sys.stderr.write(f"ramscope: warning: {for_terminal(url)}: {for_terminal(why)}\n")
        else:
            universes = []
            for server in providers.UNIVERSES:
                used = engine.universe(server)
                shipped = providers.shipped_universe(server)
                universes.append(
                    {
                        **(used.summary() if used is not None else {"server": server}),
                        "refreshed": used is not None and shipped is not None and used.version != shipped.version,
                    }
                )
            catalogs = [
                c.summary() | {"refreshed": c is not providers.catalog(name)}
                for name in providers.CATALOGS
                if (c := engine.catalog(name)) is not None
            ]
            doc = {"universes": universes, "catalogs": catalogs}
    if args.format == "json":
        write_json(sys.stdout, doc)
        return EXIT_OK
    if args.action == "refresh":
        u = result.universe
        sys.stdout.write(
            f"{u.name}: {len(u.ops)} operations from {result.documents} documents, version {u.version}"
            + (f" ({len(result.failed)} documents failed)" if result.failed else "")
            + "\n"
        )
        for line in result.changes.lines():
            sys.stdout.write(f"  {for_terminal(line)}\n")
        return EXIT_OK
    for item in doc["universes"]:
        origin = "refreshed" if item.get("refreshed") else "shipped"
        sys.stdout.write(
            f"universe {item.get('name', '-')}: {item['server']} version {item.get('version', '-')} ({origin}, "
            f"{item.get('operations', 0)} operations)\n"
        )
    for item in doc["catalogs"]:
        origin = "refreshed" if item.get("refreshed") else "shipped"
        sys.stdout.write(f"catalog {item['name']}: version {item['version']} ({origin}, {item['entries']} entries)\n")
    return EXIT_OK


def _refresh_catalog(args: argparse.Namespace) -> int:
    from ..providers.refresh import GRAPH_PERMISSIONS, refresh_catalog

    with open_engine(args) as engine:
        result = refresh_catalog(engine.store, args.name, url=args.url or GRAPH_PERMISSIONS)
    if args.format == "json":
        write_json(
            sys.stdout,
            {
                "refreshed": {
                    "name": result.name,
                    "version": result.version,
                    "entries": result.entries,
                    "url": result.url,
                    "sha256": result.sha256,
                    "ids_version": result.ids_version,
                }
            },
        )
        return EXIT_OK
    sys.stdout.write(f"{result.name}: {result.entries} entries, version {result.version}\n")
    if result.name == "microsoft-graph":
        ids = result.ids_version or "not refreshed (provisioningInfo.json unreadable): the shipped ids stay"
        sys.stdout.write(f"{result.name} permission ids: {ids}\n")
    return EXIT_OK


COMMANDS: list[Command] = [
    Command("universe", "show or refresh the permission universes and catalogs", _configure_universe, _run_universe),
]
