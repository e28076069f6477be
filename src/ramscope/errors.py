"""The exceptions ramscope raises.

Exceptions are for "cannot continue". Everything that can be reported and
worked around (an unknown field, a dangling reference, a spec that declares no
security) is a :class:`ramscope.diagnostics.Diagnostic` instead.

The hierarchy::

    RamscopeError
     ├── InputError           a card, policy or other input file cannot be read or parsed
     │    └── LimitError        ... because it exceeds a size, depth or expansion bound
     ├── FetchError           a spec cannot be obtained (network, cache, cassette)
     │    ├── BlockedURLError   refused by the URL / address guard (SSRF)
     │    ├── SpecTooLargeError the body grew past --max-spec-bytes
     │    ├── FetchTimeoutError the server was too slow
     │    ├── OfflineMissError  --offline and the cache has no entry
     │    └── CassetteMissError replaying and no recorded exchange matches
     ├── SpecError            a spec was obtained but cannot be understood
     ├── PolicyError          a policy file is malformed
     └── OutputError          an output file (-o) cannot or must not be written

Every error carries a one-line message meant for the user; the CLI prints
``ramscope: error: <message>`` and never a traceback.
"""

from __future__ import annotations

__all__ = [
    "BlockedURLError",
    "CassetteMissError",
    "FetchError",
    "FetchTimeoutError",
    "InputError",
    "LimitError",
    "OfflineMissError",
    "OutputError",
    "PolicyError",
    "RamscopeError",
    "SpecError",
    "SpecTooLargeError",
]


class RamscopeError(Exception):
    """Base class of every error ramscope raises on purpose."""

    #: A short stable identifier, used as the ``reason`` code in reports.
    code = "error"


class InputError(RamscopeError):
    """An input file cannot be read or parsed.

    ``source`` names the file (or ``<stdin>``), ``line``/``column`` are 1-based
    when known, ``pointer`` is a JSON pointer into the document when known.
    """

    code = "bad-input"

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
        pointer: str | None = None,
    ) -> None:
        self.source = source
        self.line = line
        self.column = column
        self.pointer = pointer
        self.detail = message
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.source or ""
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        if self.pointer:
            where += f" (at {self.pointer})" if where else f"at {self.pointer}"
        return f"{where}: {self.detail}" if where else self.detail


class LimitError(InputError):
    """An input exceeds a configured bound (size, nesting depth, alias expansion)."""

    code = "limit-exceeded"


class FetchError(RamscopeError):
    """A spec could not be obtained. ``url`` is the URL that was asked for."""

    code = "fetch-failed"

    def __init__(self, message: str, *, url: str | None = None) -> None:
        self.url = url
        self.detail = message
        super().__init__(f"{url}: {message}" if url else message)


class BlockedURLError(FetchError):
    """The URL or an address it resolves to is refused by the guard."""

    code = "url-blocked"


class SpecTooLargeError(FetchError):
    """The (decompressed) body exceeded the byte limit."""

    code = "spec-too-large"


class FetchTimeoutError(FetchError):
    """Connecting, reading or the whole exchange took longer than allowed."""

    code = "fetch-timeout"


class OfflineMissError(FetchError):
    """Offline mode, and neither the cache nor a cassette holds the URL."""

    code = "offline-miss"


class CassetteMissError(FetchError):
    """Replaying a cassette and no recorded exchange matches the request."""

    code = "cassette-miss"


class SpecError(RamscopeError):
    """A fetched document is not a spec ramscope understands, or is malformed."""

    code = "spec-invalid"

    def __init__(self, message: str, *, url: str | None = None, pointer: str | None = None) -> None:
        self.url = url
        self.pointer = pointer
        self.detail = message
        where = url or ""
        if pointer:
            where += f"#{pointer}"
        super().__init__(f"{where}: {message}" if where else message)


class PolicyError(InputError):
    """A policy file is malformed."""

    code = "bad-policy"


class OutputError(RamscopeError):
    """An output file (``-o``) cannot, or must not, be written: its directory is missing, it is a device,
    a socket or a directory, or it is a card being read. ``path`` names it."""

    code = "bad-output"

    def __init__(self, message: str, *, path: str) -> None:
        self.path = path
        self.detail = message
        super().__init__(f"{path}: {message}")
