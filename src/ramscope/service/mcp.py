"""``ramscope mcp``: an MCP server on stdio (the official ``mcp`` SDK's MCPServer) for coding agents
writing a card, asking "what does this need, and why?" while they write.

Tools (each takes the card JSON object as ``card``; ``path`` instead names a card file inside a root
the client granted, and nothing outside one is read):

* ``validate_card``: the card's diagnostics. Reads nothing, fetches nothing.
* ``derive_card``: the permission report (``ramscope derive``). Fetches the specs the card names.
* ``card_scopes``: the least-privilege scopes of a cumulative tier (``ramscope scopes``).
* ``explain_access``: why each access (or one) gets its permission: the alternatives, the rivals,
  what the choice reaches, where the requirements came from.
* ``draft_card``: a card drafted from recorded traffic (``ramscope draft``): evidence files (HAR,
  OTLP/JSON, MCP JSON-RPC logs) inside a granted root; no ``card`` (it makes one).

Annotations say what each tool does to the world: none writes anything the user sees (the spec cache
is a cache), so all are read-only, not destructive, idempotent; those that derive fetch specs from
the servers a card names, so they are open-world.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import unquote, urlsplit

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from .. import __version__
from .._parse import read_bytes
from ..errors import InputError
from .core import Service
from .operations import Answer, CardSource, Refusal, ServiceLimits
from .operations import derive as op_derive
from .operations import draft as op_draft
from .operations import explain as op_explain
from .operations import scopes as op_scopes
from .operations import validate as op_validate

__all__ = ["TOOLS", "create_server", "run_stdio"]

TOOLS = ("validate_card", "derive_card", "card_scopes", "explain_access", "draft_card")

_INSTRUCTIONS = (
    "ramscope derives least-privilege permission sets (OAuth scopes and other credentials) from the Resource "
    "Access Manifest of an A2A agent card. Pass the card JSON object as `card`. validate_card checks it without "
    "fetching anything; derive_card, card_scopes and explain_access fetch the API specs the card names."
)

CardArg = Annotated[
    dict[str, Any] | None,
    Field(description="The agent card (or bare manifest) as a JSON object. Give this or `path`."),
]
PathArg = Annotated[
    str | None,
    Field(description="A card file inside a root the client granted (absolute, or relative to the only root)."),
]

_READ_ONLY = {"read_only_hint": True, "destructive_hint": False, "idempotent_hint": True}


def create_server(service: Service) -> MCPServer[Any]:
    """The MCP server; its tools run on ``service``'s engines."""
    server: MCPServer[Any] = MCPServer(
        "ramscope", version=__version__, instructions=_INSTRUCTIONS, warn_on_duplicate_tools=True
    )
    limits = service.limits

    async def source(card: dict[str, Any] | None, path: str | None, ctx: Context) -> CardSource:
        if (card is None) == (path is None):
            raise ToolError("give the card as `card` (its JSON object) or as `path`, one of them")
        if card is not None:
            return CardSource(doc=card, label="card")
        assert path is not None
        return CardSource(data=await _read_in_roots(path, ctx, limits), label=path)

    async def run(op: Callable[..., Answer], src: CardSource, **kw: Any) -> dict[str, Any]:
        try:
            answer = await service.answer(lambda engine, usage: op(engine, usage, src, limits, **kw))
        except Refusal as r:
            raise ToolError(f"{r.code}: {r.message}") from None
        return _doc(answer)

    @server.tool(
        name="validate_card",
        title="Validate an agent card's Resource Access Manifest",
        description="The card's diagnostics (code, severity, JSON pointer, message); `valid` is false when any "
        "is an error. Fetches nothing.",
        annotations=ToolAnnotations(title="Validate a card", open_world_hint=False, **_READ_ONLY),
    )
    async def validate_card(ctx: Context, card: CardArg = None, path: PathArg = None) -> dict[str, Any]:
        return await run(op_validate, await source(card, path, ctx))

    @server.tool(
        name="derive_card",
        title="Derive a card's least-privilege permissions",
        description="The permission report of `ramscope derive` (docs/report.md): per access its least-privilege "
        "scopes and why; per cumulative tier (REQUIRED, RECOMMENDED, OPTIONAL) and identity (END_USER, AGENT) the "
        "set to ask for. `complete` is false when some access's permissions could not be determined. Fetches the "
        "specs the card names (cached).",
        annotations=ToolAnnotations(title="Derive permissions", open_world_hint=True, **_READ_ONLY),
    )
    async def derive_card(ctx: Context, card: CardArg = None, path: PathArg = None) -> dict[str, Any]:
        return await run(op_derive, await source(card, path, ctx))

    @server.tool(
        name="card_scopes",
        title="The scopes a card needs",
        description="The least-privilege scopes of a cumulative tier for an identity (`ramscope scopes`), the "
        "credentials that are not scopes, and the accesses whose permissions are unknown.",
        annotations=ToolAnnotations(title="Scopes of a tier", open_world_hint=True, **_READ_ONLY),
    )
    async def card_scopes(
        ctx: Context,
        card: CardArg = None,
        path: PathArg = None,
        tier: Literal["required", "recommended", "optional"] = "optional",
        identity: Literal["end_user", "agent", "all"] = "all",
    ) -> dict[str, Any]:
        return await run(op_scopes, await source(card, path, ctx), tier=tier, identity=identity)

    @server.tool(
        name="explain_access",
        title="Why an access gets its permission",
        description="For each access (or the one named by `access`): the permission chosen and how, every "
        "alternative the spec allows with what it grants, the rivals it was weighed against, what the choice "
        "reaches (blast radius), and where the requirements came from (spec, catalog, policy).",
        annotations=ToolAnnotations(title="Explain a permission", open_world_hint=True, **_READ_ONLY),
    )
    async def explain_access(
        ctx: Context,
        card: CardArg = None,
        path: PathArg = None,
        access: Annotated[str | None, Field(description="An access id of the card; all when omitted.")] = None,
    ) -> dict[str, Any]:
        return await run(op_explain, await source(card, path, ctx), access=access)

    @server.tool(
        name="draft_card",
        title="Draft a card from recorded traffic",
        description="A card (a bare manifest) drafted from evidence files, as `ramscope draft`: HAR, OTLP/JSON "
        "traces or MCP JSON-RPC logs, each a path inside a root the client granted, and/or `code` (the agent's "
        "source files or directories inside granted roots, read statically, never run); `specs` are PREFIX=SPEC_URL "
        "hints for hosts the shipped index does not know. Answers the card and the draft report (calls matched, "
        "calls unmatched with their nearest operations). Reads the files, fetches the specs; writes nothing.",
        annotations=ToolAnnotations(title="Draft a card", open_world_hint=True, **_READ_ONLY),
    )
    async def draft_card(
        ctx: Context,
        evidence: Annotated[
            list[str], Field(description="Evidence files inside granted roots (may be empty when `code` is given).")
        ],
        specs: Annotated[list[str] | None, Field(description="PREFIX=SPEC_URL hints.")] = None,
        code: Annotated[
            list[str] | None,
            Field(description="Source files or directories inside granted roots, read statically (as `--code`)."),
        ] = None,
    ) -> dict[str, Any]:
        if not evidence and not code:
            raise ToolError("give `evidence` files, `code` paths, or both")
        paths = [str(await _in_roots(p, ctx)) for p in evidence]
        # A directory is walked with no symlink followed out of it, so inside a granted root it stays there.
        sources = [str(await _in_roots(p, ctx, directory=True)) for p in code or []]
        try:
            answer = await service.answer(
                lambda engine, usage: op_draft(engine, usage, paths, specs or [], code=sources)
            )
        except Refusal as r:
            raise ToolError(f"{r.code}: {r.message}") from None
        return _doc(answer)

    return server


def _doc(answer: Answer) -> dict[str, Any]:
    if answer.doc is not None:
        return dict(answer.doc)
    import orjson  # noqa: PLC0415

    loaded: dict[str, Any] = orjson.loads(answer.body)
    return loaded


async def _read_in_roots(path: str, ctx: Context, limits: ServiceLimits) -> bytes:
    """The bytes of ``path``, if it lies inside a root the client granted (see :func:`_in_roots`)."""
    real = await _in_roots(path, ctx)
    try:
        data, _label = read_bytes(real, max_bytes=limits.max_body_bytes)
    except InputError as exc:
        raise ToolError(str(exc)) from None
    return data


async def _in_roots(path: str, ctx: Context, *, directory: bool = False) -> Path:
    """``path`` resolved, if it is a regular file inside a root the client granted (symbolic links
    resolved before the check); a tool error otherwise. A client that grants no roots gets nothing."""
    caps = ctx.client_capabilities
    if caps is None or caps.roots is None:
        raise ToolError("reading a card by `path` needs the client to grant roots; pass the card as `card`")
    try:
        listed = await ctx.session.list_roots()
    except Exception as exc:
        raise ToolError(f"the client did not list its roots: {exc}") from None
    roots = [r for r in (_root_dir(str(root.uri)) for root in listed.roots) if r is not None]
    if not roots:
        raise ToolError("the client granted no file roots; pass the card as `card`")
    given = Path(path)
    if not given.is_absolute():
        if len(roots) != 1:
            raise ToolError("a relative `path` needs exactly one root; give an absolute path")
        given = roots[0] / given
    real = Path(os.path.realpath(given))
    if not any(real == root or root in real.parents for root in roots):
        raise ToolError(f"{path} is outside the roots the client granted")
    if directory and real.is_dir():
        return real
    if not real.is_file():  # a directory, a device, a FIFO (whose open would wait for a writer)
        raise ToolError(f"{path} is not a regular file")
    return real


def _root_dir(uri: str) -> Path | None:
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return Path(os.path.realpath(unquote(parts.path)))


#: Bytes a message may take beyond its arguments' bound (the JSON-RPC envelope, names, a tier ...).
ENVELOPE_BYTES = 64 * 1024
#: Levels a tool call wraps a card in: the message, ``params``, ``arguments``.
ENVELOPE_DEPTH = 3


def run_stdio(service: Service) -> None:
    """Serve MCP on stdin/stdout until the client closes them, every message bounded before it is
    parsed (:mod:`.mcp_stdio`): ``--max-body-bytes`` (and the envelope) in bytes, the card's nesting
    bound (and the envelope's levels) in depth."""
    import anyio  # noqa: PLC0415

    from .mcp_stdio import bounded_stdio_streams  # noqa: PLC0415

    server = create_server(service)
    limits = service.limits
    lowlevel = server._lowlevel_server  # the SDK's run_stdio_async, over a bounded transport

    async def main() -> None:
        async with bounded_stdio_streams(
            max_line=limits.max_body_bytes + ENVELOPE_BYTES,
            max_depth=limits.max_depth + ENVELOPE_DEPTH,
            max_nodes=limits.card_limits().max_yaml_nodes,
        ) as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    anyio.run(main)
