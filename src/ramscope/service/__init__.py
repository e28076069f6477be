"""ramscope as a resident process: an HTTP JSON API (``ramscope serve``, :mod:`.http`) and an MCP
server on stdio (``ramscope mcp``, :mod:`.mcp`), both over the same :class:`~ramscope.derive.Engine`
the CLI uses. This package owns no derivation logic: it parses requests, bounds them, runs the
library's calls in worker threads (:mod:`.pool`), and renders what they return (:mod:`.operations`).

Both transports need the ``serve`` extra (``pip install 'ramscope[serve]'``): Starlette and uvicorn
for HTTP, the official ``mcp`` SDK for MCP. Importing this package alone needs neither.
"""

from __future__ import annotations

from .core import Service
from .operations import Answer, CardSource, Refusal, ServiceLimits
from .pool import PolicyCards

__all__ = ["Answer", "CardSource", "PolicyCards", "Refusal", "Service", "ServiceLimits"]
