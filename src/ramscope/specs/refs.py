"""``$ref`` resolution for the few places an index needs it, safely.

Only what the index reads is ever dereferenced (path items, security schemes),
lazily, one chain at a time; nothing is inlined and the document is never walked
as a whole. Internal refs are JSON pointers (RFC 6901 escapes, percent-decoding
of the URI fragment). Chains are bounded in length and cycles are reported.

External refs are the dangerous part: a spec is untrusted input, and a ref is an
instruction to read something. The rules:

* a ref is resolved against the URL of the document it appears in;
* only ``http``/``https`` targets, on the same scheme, host and port as the spec,
  with no credentials, whose path stays inside the spec's directory once ``..``
  segments (also spelled ``%2e%2e``) are removed; encoded slashes and backslashes
  are refused outright, since servers disagree on what they mean;
* ``file:`` and every other scheme are refused;
* the target is obtained only through the caller's :data:`RefLoader` (the spec
  store, with its own SSRF guard), never by opening a file or a socket here; the
  final URL after redirects must pass the same check;
* each external document is parsed once per resolver, and at most
  ``max_documents`` of them are read.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

from ..documents import FetchedSpec
from ..errors import FetchError, SpecError
from ._doc import parse_spec_body

__all__ = ["RefFailure", "RefLoader", "RefResolver", "check_ref_target", "resolve_pointer"]

#: Fetches an absolute URL (the pipeline backs it with the spec store); raises FetchError.
RefLoader = Callable[[str], FetchedSpec]

_DEFAULT_PORTS = {"http": 80, "https": 443}
_ENCODED_DOT = re.compile("%2e", re.IGNORECASE)
_ENCODED_SEPARATOR = re.compile("%2f|%5c", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class RefFailure:
    """Why a ref chain could not be followed. ``code`` is a diagnostic code."""

    code: str  # "ref-refused" | "ref-cycle" | "ref-unresolved"
    message: str
    ref: str


@dataclass(frozen=True, slots=True)
class Resolved:
    value: Any
    #: URL of the document the value lives in ("" for the root document without a URL).
    doc_url: str
    #: JSON pointer of the value inside that document.
    pointer: str


def resolve_pointer(doc: Any, fragment: str) -> Any:
    """The value at a URI fragment holding a JSON pointer. Raises ``LookupError``."""
    pointer = unquote(fragment)
    if pointer == "":
        return doc
    if not pointer.startswith("/"):
        raise LookupError(f"fragment {fragment!r} is not a JSON pointer (plain-name anchors are not supported)")
    cur = doc
    for raw in pointer.split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(cur, dict):
            if token not in cur:
                raise LookupError(f"no {token!r} at {pointer!r}")
            cur = cur[token]
        elif isinstance(cur, list):
            if not token.isdigit() or (len(token) > 1 and token.startswith("0")) or int(token) >= len(cur):
                raise LookupError(f"no item {token!r} at {pointer!r}")
            cur = cur[int(token)]
        else:
            raise LookupError(f"{pointer!r} goes through a scalar")
    return cur


def _origin(url: str) -> tuple[str, str, int] | None:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    try:
        port = parts.port or _DEFAULT_PORTS[scheme]
    except ValueError:
        return None
    return scheme, parts.hostname.lower(), port


def _clean_path(path: str) -> str | None:
    """The path with encoded dots decoded and dot segments removed; None if it hides separators."""
    if "\\" in path or _ENCODED_SEPARATOR.search(path):
        return None
    path = _ENCODED_DOT.sub(".", path) or "/"
    cleaned = posixpath.normpath(path)
    if cleaned.startswith("//"):  # normpath keeps a leading double slash (POSIX)
        cleaned = "/" + cleaned.lstrip("/")
    if path.endswith("/") and not cleaned.endswith("/"):
        cleaned += "/"
    return cleaned


def check_ref_target(target: str, spec_url: str) -> str | None:
    """Why an absolute ref target may not be read for the spec at ``spec_url``; ``None`` if it may."""
    scheme = urlsplit(target).scheme.lower()
    if scheme == "file":
        return "file: refs are never followed"
    if scheme not in _DEFAULT_PORTS:
        return f"{scheme or 'scheme-less'} refs are not followed; only http(s) refs next to the spec"
    base = _origin(spec_url)
    if base is None:
        return "the spec has no http(s) URL, so no external ref can be checked against it"
    t = urlsplit(target)
    if t.username is not None or t.password is not None:
        return "refs carrying credentials are refused"
    if _origin(target) != base:
        return f"other origin than the spec ({t.scheme}://{t.netloc})"
    path = _clean_path(t.path)
    if path is None:
        return "encoded slashes or backslashes in a ref path are refused"
    spec_path = urlsplit(spec_url).path or "/"
    directory = spec_path[: spec_path.rfind("/") + 1] or "/"
    base_dir = _clean_path(directory) or "/"
    if not path.startswith(base_dir):
        return f"escapes the spec's directory {base_dir!r}"
    return None


class RefResolver:
    """Follows ``$ref`` chains in one spec, loading sibling documents through ``load_ref``."""

    def __init__(
        self,
        root: Any,
        spec_url: str,
        load_ref: RefLoader | None = None,
        *,
        max_hops: int = 64,
        max_documents: int = 32,
    ) -> None:
        self._spec_url = urldefrag(spec_url)[0]
        self._docs: dict[str, Any] = {self._spec_url: root}
        self._failed: dict[str, RefFailure] = {}
        self._load_ref = load_ref
        self._max_hops = max_hops
        self._max_documents = max_documents
        #: External documents read: (url, sha256), in reading order.
        self.loaded: list[tuple[str, str]] = []

    @property
    def spec_url(self) -> str:
        return self._spec_url

    def deref(self, node: Any, *, doc_url: str | None = None, pointer: str = "") -> Resolved | RefFailure:
        """Follow ``node``'s ``$ref`` chain (if any) to a value that is not a ref."""
        cur_url = self._spec_url if doc_url is None else doc_url
        cur, cur_ptr = node, pointer
        seen: list[str] = []
        while isinstance(cur, dict) and "$ref" in cur:
            ref = cur["$ref"]
            if not isinstance(ref, str):
                return RefFailure("ref-unresolved", f"$ref is not a string ({type(ref).__name__})", str(ref))
            if len(seen) >= self._max_hops:
                return RefFailure("ref-unresolved", f"more than {self._max_hops} chained refs", ref)
            target_doc, fragment = self._target(ref, cur_url)
            if isinstance(target_doc, RefFailure):
                return target_doc
            key = f"{target_doc}#{fragment}"
            if key in seen:
                chain = " -> ".join([*seen, key])
                return RefFailure("ref-cycle", f"$ref cycle: {chain}", ref)
            seen.append(key)
            doc = self._document(target_doc, ref)
            if isinstance(doc, RefFailure):
                return doc
            try:
                cur = resolve_pointer(doc, fragment)
            except LookupError as exc:
                return RefFailure("ref-unresolved", f"$ref {ref!r} points at nothing: {exc}", ref)
            cur_url, cur_ptr = target_doc, unquote(fragment)
        return Resolved(cur, cur_url, cur_ptr)

    def _target(self, ref: str, cur_url: str) -> tuple[str | RefFailure, str]:
        """(absolute document URL, fragment) of a ref, or the reason it is refused."""
        if ref.startswith("#"):
            return cur_url, ref[1:]
        target = urljoin(cur_url, ref) if cur_url else ref
        doc, fragment = urldefrag(target)
        if urlsplit(ref).scheme.lower() == "file" or urlsplit(doc).scheme.lower() == "file":
            return RefFailure("ref-refused", f"$ref {ref!r} refused: file: refs are never followed", ref), ""
        if not urlsplit(doc).scheme:
            return RefFailure(
                "ref-refused", f"$ref {ref!r} refused: the spec has no URL to resolve it against", ref
            ), ""
        if doc == self._spec_url:
            return doc, fragment
        why = check_ref_target(doc, self._spec_url)
        if why is not None:
            return RefFailure("ref-refused", f"$ref {ref!r} refused: {why}", ref), ""
        return doc, fragment

    def _document(self, url: str, ref: str) -> Any:
        if url in self._docs:
            return self._docs[url]
        if url in self._failed:
            failed = self._failed[url]
            return RefFailure(failed.code, failed.message, ref)
        failure = self._load(url, ref)
        if isinstance(failure, RefFailure):
            self._failed[url] = failure
        return failure if isinstance(failure, RefFailure) else self._docs[url]

    def _load(self, url: str, ref: str) -> RefFailure | None:
        if self._load_ref is None:
            return RefFailure("ref-unresolved", f"$ref {ref!r} not followed: no loader for external documents", ref)
        if len(self.loaded) >= self._max_documents:
            return RefFailure(
                "ref-refused", f"$ref {ref!r} refused: more than {self._max_documents} external documents", ref
            )
        try:
            fetched = self._load_ref(url)
        except FetchError as exc:
            return RefFailure("ref-unresolved", f"$ref {ref!r} could not be fetched: {exc}", ref)
        final = urldefrag(fetched.final_url or url)[0]
        if final != url:
            why = check_ref_target(final, self._spec_url)
            if why is not None:
                return RefFailure("ref-refused", f"$ref {ref!r} refused: redirected to {final}: {why}", ref)
        try:
            doc = parse_spec_body(fetched.body, source=url, media_type=fetched.media_type)
        except SpecError as exc:
            return RefFailure("ref-unresolved", f"$ref {ref!r}: {exc.detail}", ref)
        finally:
            fetched.release_body()  # parsed (or not parseable): the bytes need not stay in memory
        self.loaded.append((url, fetched.sha256))
        self._docs[url] = doc
        return None
