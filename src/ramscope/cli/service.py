"""The resident commands: ``serve`` (the HTTP JSON API) and ``mcp`` (an MCP server on stdio).

Both keep one process, and its engines, for many derivations (``ramscope.service``); both need the
``serve`` extra, and say so when it is missing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError
from ._common import EXIT_OK, Command, fail, positive_float, positive_int

if TYPE_CHECKING:
    from ..derive.policy import Policy
    from ..service import PolicyCards, Service

#: What to install when Starlette, uvicorn or the MCP SDK is missing.
SERVE_EXTRA = "pip install 'ramscope[serve]'"


def _port(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535, got {v}")
    return v


def _service_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--policy-card",
        action="append",
        default=[],
        metavar="CARD",
        help="a card the global --policy is for (a card file, or sha256:HEX of its bytes); repeatable. "
        "--policy needs at least one: other cards are derived without it",
    )
    p.add_argument(
        "--workers",
        type=positive_int,
        default=4,
        metavar="N",
        help="derivations at a time, each in its own thread with its own engine (default 4)",
    )
    p.add_argument(
        "--deadline",
        type=positive_float,
        default=60.0,
        metavar="SECONDS",
        help="time allowed per request, waiting for a worker included (default 60)",
    )
    p.add_argument(
        "--max-body-bytes",
        type=positive_int,
        default=1024 * 1024,
        metavar="N",
        help="largest request body, and largest card (default 1 MiB)",
    )


def _configure_serve(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--host",
        default="127.0.0.1",
        metavar="H",
        help="address to listen on (default 127.0.0.1); beyond loopback, --token-file is required",
    )
    p.add_argument("--port", type=_port, default=8321, metavar="N", help="port (default 8321; 0 picks a free one)")
    p.add_argument(
        "--token-file",
        type=Path,
        metavar="F",
        help="clients must send 'Authorization: Bearer <the token in F>' (at least 16 characters)",
    )
    _service_options(p)


def _missing(exc: ImportError) -> int:
    return fail(f"this command needs the serve extra: {SERVE_EXTRA} ({exc.name or exc} is not installed)")


def _service(args: argparse.Namespace) -> Service:
    import gc

    from ..derive.policy import load_policy
    from ..service import Service, ServiceLimits
    from ._common import settings_from_args

    policy = load_policy(args.policy) if args.policy else None
    policy_cards = _policy_cards(args, policy)
    settings = settings_from_args(args)  # (the service turns progress bars off: stdout is MCP's channel)
    limits = ServiceLimits(max_body_bytes=args.max_body_bytes, deadline=args.deadline)
    service = Service(settings, policy, policy_cards=policy_cards, limits=limits, workers=args.workers)
    service.warm()
    # What is alive now lives as long as the process: out of every collection (as the CLI's runs).
    gc.freeze()
    return service


_HEX = frozenset("0123456789abcdef")


def _policy_cards(args: argparse.Namespace, policy: Policy | None) -> PolicyCards | None:
    """The cards named by ``--policy-card``, by digest; refused without ``--policy``, and ``--policy``
    refused without them (a policy's pins match ids a stranger's card can choose)."""
    from ..card import load_card
    from ..service import PolicyCards

    named: list[str] = args.policy_card
    if policy is None:
        if named:
            raise InputError("--policy-card names the cards the global --policy is for: give --policy FILE too")
        return None
    if not named and not args.quiet:
        sys.stderr.write(
            f"ramscope: warning: a {args.command} process's --policy applies only to the cards you name, and none "
            "is named: every card is derived without it (a policy's pins match the ids a card chooses, and a "
            "stranger's card can choose yours); add --policy-card CARD (a card file, or sha256:HEX of its bytes) "
            "for each card it is for\n"
        )
    cards, digests = [], []
    for item in named:
        if item.startswith("sha256:"):
            digest = item[7:].lower()
            if len(digest) != 64 or not set(digest) <= _HEX:
                raise InputError(f"--policy-card {item!r}: expected sha256: and 64 hex digits")
            digests.append(digest)
        else:
            cards.append(load_card(item))
    return PolicyCards.of_cards(cards, digests)


def _run_serve(args: argparse.Namespace) -> int:
    if args.record:
        return fail("serve cannot --record: a resident process never ends a run; record with `ramscope fetch`")
    try:
        from ..service.http import check_bind, read_token, serve
    except ImportError as exc:
        return _missing(exc)
    token = read_token(args.token_file) if args.token_file else None
    check_bind(args.host, token)
    service = _service(args)

    def ready(url: str) -> None:
        # The first line of stdout is the address (with --port 0, the only way to learn it).
        sys.stdout.write(url + "\n")
        sys.stdout.flush()
        if not args.quiet:
            sys.stderr.write(f"ramscope: serving {url} (POST /v1/derive ...; /openapi.json describes the API)\n")

    try:
        serve(service, host=args.host, port=args.port, token=token, ready=ready)
    finally:
        service.close()
    return EXIT_OK


def _run_mcp(args: argparse.Namespace) -> int:
    if args.record:
        return fail("mcp cannot --record: a resident process never ends a run; record with `ramscope fetch`")
    try:
        from ..service.mcp import run_stdio
    except ImportError as exc:
        return _missing(exc)
    service = _service(args)
    try:
        run_stdio(service)
    finally:
        service.close()
    return EXIT_OK


COMMANDS: list[Command] = [
    Command("serve", "an HTTP JSON API over one resident engine (docs/service.md)", _configure_serve, _run_serve),
    Command(
        "mcp", "an MCP server on stdio: validate, derive, scopes, explain (docs/service.md)", _service_options, _run_mcp
    ),
]
