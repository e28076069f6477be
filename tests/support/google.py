"""Google's Discovery directory and documents, served to a SpecStore by an in-process transport.

A universe is refreshed only from ``https://www.googleapis.com`` (issue 22), so the tests answer
those URLs themselves (``httpx.MockTransport``): nothing leaves the process.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import httpx
import orjson

from ramscope.providers.refresh import GOOGLE_DIRECTORY

#: The three real documents the tests use, and their URLs as Google's directory lists them.
DOCS = {
    "sheets.v4.json": "https://sheets.googleapis.com/$discovery/rest?version=v4",
    "drive.v3.json": "https://www.googleapis.com/discovery/v1/apis/drive/v3/rest",
    "slides.v1.json": "https://slides.googleapis.com/$discovery/rest?version=v1",
}


class FakeGoogle:
    """Answers the directory and each listed document; counts the requests per URL."""

    def __init__(self, documents: Path, names: Iterable[str] = tuple(DOCS)) -> None:
        self.bodies: dict[str, bytes] = {DOCS[n]: (documents / n).read_bytes() for n in names}
        self.statuses: dict[str, int] = {}
        self.extra: list[str] = []
        self.hits: dict[str, int] = {}

    def listing(self) -> bytes:
        items = [{"id": url, "discoveryRestUrl": url} for url in [*self.bodies, *self.statuses, *self.extra]]
        return orjson.dumps({"kind": "discovery#directoryList", "items": items})

    def url(self, name: str) -> str:
        """The URL of a document by file name (so ``tests.test_derive.card`` can name it)."""
        return DOCS[name.rsplit("/", 1)[-1]]

    def handler(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        self.hits[url] = self.hits.get(url, 0) + 1
        if url == GOOGLE_DIRECTORY:
            return _answer(200, self.listing())
        if url in self.statuses:
            return _answer(self.statuses[url], b"{}")
        body = self.bodies.get(url)
        return _answer(404, b"{}") if body is None else _answer(200, body)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handler)


def _answer(status: int, body: bytes) -> httpx.Response:
    # A stream, not ``content=``: the store reads the raw stream, as from a socket.
    return httpx.Response(status, stream=httpx.ByteStream(body), headers={"content-type": "application/json"})


def doc_values(documents: Path, names: Iterable[str]) -> list[Mapping[str, object]]:
    return [orjson.loads((documents / n).read_bytes()) for n in names]
