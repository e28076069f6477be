"""Run-wide settings, shared by the CLI and the library API.

The CLI builds one :class:`Settings` from its options; library users build it
directly. Every stage reads the fields it needs and nothing else.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DEFAULT_CACHE_DIR", "PROJECT_CACHE_DIR", "Settings", "default_cache_dir"]

#: The project-local cache directory the documentation suggests (``--cache-dir specs_cache`` or
#: ``RAMSCOPE_CACHE_DIR=specs_cache``). Never the default: see :func:`default_cache_dir`.
PROJECT_CACHE_DIR = "specs_cache"
#: Kept for callers that imported it; the default is now the user's cache directory.
DEFAULT_CACHE_DIR = PROJECT_CACHE_DIR
_MiB = 1024 * 1024


def default_cache_dir() -> Path:
    """``$RAMSCOPE_CACHE_DIR``, else the user's cache directory (``$XDG_CACHE_HOME/ramscope``,
    ``~/.cache/ramscope``, ``~/Library/Caches/ramscope``, ``%LOCALAPPDATA%\\ramscope\\Cache``).

    Not the working directory: a repository that ships a crafted ``specs_cache/`` beside its cards
    would otherwise decide what ramscope reports there (issue 14). A cache is as trusted as whoever
    can write it, and the user's own cache directory is written by the user only.
    """
    env = os.environ.get("RAMSCOPE_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs  # noqa: PLC0415 - only when no directory is given

    return Path(platformdirs.user_cache_dir("ramscope", appauthor=False))


@dataclass(frozen=True, slots=True)
class Settings:
    cache_dir: Path = field(default_factory=default_cache_dir)
    #: Never touch the network: only the cache and a cassette answer.
    offline: bool = False
    #: Replay recorded exchanges from this file (and, with ``record``, record into it).
    cassette: Path | None = None
    record: bool = False
    #: Lift the address check of the URL guard (loopback, private, link-local ...).
    allow_private_network: bool = False
    #: Total seconds allowed for one exchange (connect + read included).
    timeout: float = 30.0
    #: Total seconds allowed for every exchange of one spec URL together: an MCP conversation (every
    #: tools/list page, the metadata look-ups), a document and its redirects.
    spec_deadline: float = 300.0
    max_spec_bytes: int = 64 * _MiB
    #: Concurrent fetches.
    jobs: int = 8
    #: Seconds a cached spec stays fresh when the server says nothing.
    cache_ttl: float = 24 * 3600.0
    #: The longest a cached spec stays fresh, whatever the server says (a longer ``max-age`` is cut
    #: to this). An entry claiming more, or fetched in the future, was not written by ramscope under
    #: these settings: it is distrusted (a miss, reported). At least ``cache_ttl``.
    cache_max_ttl: float = 7 * 24 * 3600.0
    #: Refetch even fresh cache entries.
    refresh: bool = False
    #: Show progress bars (the CLI turns this off when not on a terminal).
    progress: bool = False
    #: How deep to follow A2A agents that carry their own manifest.
    max_depth: int = 3
    #: Also validate OpenAPI specs strictly (sandboxed; needs the ``validate`` extra).
    validate_specs: bool = False
    #: ``derive``: reuse the stored report of a card derived before from the same bytes, settings,
    #: policy and code, when every spec it read is still in the same state (:mod:`ramscope.derive.reuse`).
    reuse: bool = True

    def __post_init__(self) -> None:
        # Library callers pass strings as often as Paths; every stage joins paths with ``/``.
        if not isinstance(self.cache_dir, Path):
            object.__setattr__(self, "cache_dir", Path(self.cache_dir))
        if self.cassette is not None and not isinstance(self.cassette, Path):
            object.__setattr__(self, "cassette", Path(self.cassette))
