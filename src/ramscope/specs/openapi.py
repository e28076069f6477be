"""OpenAPI 2.0 (Swagger), 3.0, 3.1 (and 3.2) -> :class:`SpecIndex`, in one pass.

Semantics, exactly as the specifications say:

* an operation's ``security`` overrides the root ``security``; an operation
  without one inherits the root's;
* ``security: []`` means no authorization; ``{}`` inside the list is an
  alternative with no requirement, i.e. anonymous access is allowed;
* a spec that declares no requirement anywhere (GitHub's REST spec, for one,
  describes auth only in prose) says nothing: every operation's requirements are
  ``None`` ("unknown") and the index carries ``security_declared=False`` and a
  warning; it is never read as "needs nothing";
* a requirement naming an undefined scheme keeps its term and gets a diagnostic;
* a malformed ``security`` (``null``, a string, ...) makes its own operations'
  requirements unknown and declares nothing: "the spec declares security" comes
  from well-formed declarations only;
* ``security`` on a path item is not OpenAPI: it is diagnosed, and the item's
  operations without their own ``security`` are unknown.

Only path items and security schemes are dereferenced (see :mod:`.refs`); the
rest of the document (schemas, parameters, responses) is never touched, so
indexing costs a small fraction of parsing the JSON.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, NoReturn
from urllib.parse import urljoin, urlsplit

from ..diagnostics import Diagnostic, join_pointer
from ..documents import FetchedSpec
from ..errors import SpecError
from . import _doc
from ._doc import (
    INVALID_OPERATION,
    INVALID_SECURITY,
    INVALID_SECURITY_SCHEME,
    MISPLACED_SECURITY,
    REF_CYCLE,
    REF_REFUSED,
    REF_UNRESOLVED,
    SECURITY_UNDECLARED,
    UNDECLARED_SCOPE,
    UNDEFINED_SECURITY_SCHEME,
    assign_keys,
)
from .extensions import ExtensionReading, read_extensions
from .model import (
    FlowKind,
    OAuthFlow,
    Requirement,
    Requirements,
    Row,
    RowOperations,
    SchemeRequirement,
    SchemeType,
    SecurityScheme,
    SpecIndex,
    SpecKind,
    entry_row,
    row_entry,
)
from .refs import RefFailure, RefLoader, RefResolver
from .security import SchemeReader, scheme_type

__all__ = ["OpenAPIAdapter", "build_openapi_index"]

_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_METHODS_32 = (*_METHODS, "query")

_OPENAPI_VERSION = re.compile(r"^3\.[0-2](\.\d+)?(-[0-9A-Za-z.-]+)?$")

#: Swagger 2.0 ``flow`` values and the OAS 3 flows they became.
_SWAGGER_FLOWS = {
    "implicit": FlowKind.IMPLICIT,
    "password": FlowKind.PASSWORD,
    "application": FlowKind.CLIENT_CREDENTIALS,
    "accessCode": FlowKind.AUTHORIZATION_CODE,
}

_REF_RULES = {"ref-refused": REF_REFUSED, "ref-cycle": REF_CYCLE, "ref-unresolved": REF_UNRESOLVED}

_VARIABLE = re.compile(r"\{([^{}]*)\}")


class OpenAPIAdapter:
    """The :class:`~ramscope.specs.Adapter` for OpenAPI 2.0 / 3.x documents."""

    kind = SpecKind.OPENAPI

    def sniff(self, doc: Any) -> str | None:
        if not isinstance(doc, dict):
            return None
        if "swagger" in doc:
            version = str(doc["swagger"])
            if version == "2.0":
                return version
            raise SpecError(f"unsupported spec: Swagger {version!r}; ramscope reads Swagger 2.0 and OpenAPI 3.0-3.2")
        if "swaggerVersion" in doc:
            raise SpecError(
                f"unsupported spec: Swagger {doc['swaggerVersion']!r} (swaggerVersion); "
                "convert it to OpenAPI 3 (e.g. with swagger2openapi)"
            )
        if "openapi" in doc:
            version = str(doc["openapi"])
            if _OPENAPI_VERSION.match(version):
                return version
            raise SpecError(f"unsupported spec: OpenAPI {version!r}; ramscope reads Swagger 2.0 and OpenAPI 3.0-3.2")
        return None

    def build(self, doc: Any, spec: FetchedSpec, *, spec_version: str, load_ref: RefLoader | None = None) -> SpecIndex:
        return build_openapi_index(doc, spec, spec_version=spec_version, load_ref=load_ref)


def build_openapi_index(
    doc: Mapping[str, Any], spec: FetchedSpec, *, spec_version: str, load_ref: RefLoader | None = None
) -> SpecIndex:
    builder = _Builder(doc, spec, spec_version, load_ref)
    try:
        return builder.build()
    finally:
        # The builder and its scheme reader hold each other (the reader reports through a bound
        # method), and the builder holds the parsed document: left as it is, the whole tree (Graph
        # beta: 335,000 dicts and lists) waits for the cyclic collector, which then walks it once,
        # 0.3 s of a cold derive. Broken here, the tree goes by reference counting as it is dropped.
        builder.scheme_reader = None  # type: ignore[assignment]


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _norm_base(path: str) -> str:
    """A base path with one leading slash and no trailing one; "" for the root."""
    path = path.strip()
    if not path or path == "/":
        return ""
    if not path.startswith("/"):
        path = "/" + path
    return path.rstrip("/")


#: Operation descriptions are kept for display only; long ones (Graph's run to pages) are cut,
#: so the cached index stays small and loads much faster than the spec parses.
DESCRIPTION_LIMIT = 400


def _short(text: str) -> str:
    if len(text) <= DESCRIPTION_LIMIT:
        return text
    return text[: DESCRIPTION_LIMIT - 1].rstrip() + "…"


#: A Markdown heading naming the roles allowed to call an endpoint (Zendesk's reference writes
#: "#### Allowed For" and a bullet list in every operation's description), and its bullets.
_ALLOWED_HEADING = re.compile(r"^#{1,6}[ \t]*allowed[ \t]+for[ \t]*$", re.IGNORECASE | re.MULTILINE)
_NEXT_HEADING = re.compile(r"^#{1,6}[ \t]", re.MULTILINE)
_BULLET = re.compile(r"^[ \t]*[*-][ \t]+(\S[^\n]*)$", re.MULTILINE)
#: Longer descriptions are not searched; at most this many bullets of at most this many characters.
ALLOWED_FOR_SCAN = 20_000
ALLOWED_FOR_BULLETS = 8
ALLOWED_FOR_CHARS = 300


def allowed_for(description: str) -> list[str]:
    """The bullets of the description's "Allowed For" section (kept before the description is cut):
    what they mean is the provider's to say (a quirk reads them), the reader only keeps them."""
    # A heading needs a "#": most descriptions have none, and a substring test is cheaper than the search.
    if len(description) > ALLOWED_FOR_SCAN or "#" not in description:
        return []
    head = _ALLOWED_HEADING.search(description)
    if head is None:
        return []
    rest = description[head.end() :]
    nxt = _NEXT_HEADING.search(rest)
    bullets = _BULLET.findall(rest[: nxt.start()] if nxt else rest)
    if len(bullets) > ALLOWED_FOR_BULLETS:
        return []  # not a short list of roles: nothing is read from it
    return [b.strip()[:ALLOWED_FOR_CHARS] for b in bullets]


#: Atlassian's marker before an operation's "Permissions required" paragraph.
_REQUIRED = re.compile(r"\*\*\[Permissions\]\(#permissions\) required:\*\*[ \t]*")


def permissions_required(description: str) -> str:
    """The paragraph after Atlassian's "**Permissions required:**" marker (kept before the
    description is cut), at most ALLOWED_FOR_CHARS characters; what it means is a quirk's to say."""
    if len(description) > ALLOWED_FOR_SCAN or "(#permissions) required:" not in description:
        return ""
    m = _REQUIRED.search(description)
    if m is None:
        return ""
    return description[m.end() :].split("\n\n", 1)[0].strip()[:ALLOWED_FOR_CHARS]


def _substitute(url: str, variables: Mapping[str, Any]) -> str:
    """``url`` with each ``{variable}`` at its default (left as written when it has none)."""

    def sub(m: re.Match[str]) -> str:
        var = variables.get(m.group(1))
        default = var.get("default") if isinstance(var, dict) else None
        return str(default) if default is not None else m.group(0)

    return _VARIABLE.sub(sub, url)


def _join(base: str, path: str) -> str:
    if not base:
        return path
    return base + (path if path.startswith("/") else "/" + path)


def _operation_count(item: Mapping[str, Any], methods: tuple[str, ...], spec32: bool) -> int:
    n = sum(1 for m in methods if m in item)
    extra = item.get("additionalOperations") if spec32 else None
    return n + (len(extra) if isinstance(extra, dict) else 0)


class _Builder:
    def __init__(
        self, doc: Mapping[str, Any], spec: FetchedSpec, spec_version: str, load_ref: RefLoader | None
    ) -> None:
        self.doc = doc
        self.spec = spec
        self.spec_version = spec_version
        self.v2 = spec_version == "2.0"
        self.base_url = spec.final_url or spec.url
        self.refs = RefResolver(doc, self.base_url, load_ref)
        self.diags: list[Diagnostic] = []
        self.schemes: dict[str, SecurityScheme] = {}
        # Its findings go to self.diags as it is when they are found (path items swap the list).
        self.scheme_reader = SchemeReader(self._report)
        #: Schemes whose definition exists but could not be read (already diagnosed).
        self.broken_schemes: set[str] = set()
        self.oauth_scopes: dict[str, set[str]] = {}
        #: Undefined scheme name -> (first pointer, number of requirements naming it).
        self.undefined: dict[str, list[Any]] = {}
        self.undeclared_scopes: dict[tuple[str, str], str] = {}
        self.checked_terms: set[SchemeRequirement] = set()
        self.security_cache: dict[int, tuple[Any, Requirements | None]] = {}
        #: Whether the path item just indexed held a well-formed operation-level `security`.
        self._op_declared = False
        #: The spec's path items, and how many operations they have given so far (see _refuse_too_many).
        self._paths: Mapping[str, Any] = {}
        self._count = 0

    # ------------------------------------------------------------------ top level

    def build(self) -> SpecIndex:
        doc = self.doc
        info = doc.get("info")
        info = info if isinstance(info, dict) else {}
        self._read_schemes()
        root_bases = self._root_bases()

        root_declared = "security" in doc
        root_reqs: Requirements | None = None
        if root_declared:
            root_reqs = self._security(doc["security"], "/security")

        entries: list[Row] = []
        pending: list[int] = []  # operations with no security of their own and no root security
        # Only a well-formed declaration says "the writer thought about security here": a malformed one
        # (null, a string ...) is unknown for its own operations and says nothing about the others.
        op_declared = False
        all_bases: list[str] = list(root_bases)

        paths = doc.get("paths")
        if paths is not None and not isinstance(paths, dict):
            self.diags.append(INVALID_OPERATION("/paths", "paths is not an object; no operation can be read"))
            paths = None
        methods = _METHODS_32 if self.spec_version.startswith("3.2") else _METHODS
        spec32 = self.spec_version.startswith("3.2")
        #: Path items already indexed: one $ref'd by several paths gives each its operations, but its own
        #: findings are reported once (the first time), not once per path that refers to it.
        seen: set[int] = set()
        paths = paths or {}
        self._paths = paths
        for path, _, item_ptr, item, source in self._items(paths):
            repeat = id(item) in seen
            seen.add(id(item))
            findings, self.diags = self.diags, ([] if repeat else self.diags)
            try:
                self._index_item(path, item, source, item_ptr, methods, spec32, root_bases, all_bases, root_declared,
                                 root_reqs, entries, pending)  # fmt: skip
            finally:
                self.diags = findings
            op_declared = op_declared or self._op_declared

        declared = (root_declared and root_reqs is not None) or op_declared
        if declared:
            # The spec does declare security, just not for these: they need none.
            for i in pending:
                r = entries[i]
                entries[i] = (*r[:6], (), "none", *r[8:])
        else:
            self._undeclared_warning()
        if len({r[0] for r in entries}) != len(entries):  # rare: repeated ids, or an id like "GET /path"
            entries = [entry_row(e) for e in assign_keys([row_entry(r) for r in entries], self.diags)]
        self._flush_scheme_diagnostics()

        return SpecIndex(
            kind=SpecKind.OPENAPI,
            url=self.spec.url,
            sha256=self.spec.sha256,
            title=_str(info.get("title")),
            version=str(info.get("version", "")) if info.get("version") is not None else "",
            spec_version=self.spec_version,
            base_paths=tuple(dict.fromkeys(b for b in all_bases if b)),
            operations=RowOperations(entries),
            schemes=tuple(self.schemes.values()),
            security_declared=declared,
            diagnostics=tuple(self.diags),
            extra=self._extra(info),
        )

    def _extra(self, info: Mapping[str, Any]) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if servers := self._server_urls():
            extra["servers"] = servers
        # GitHub's own marker of which product a description is of (``ghes`` for Enterprise Server):
        # the GitHub catalog serves an ``/api/v3`` base path only with it (issue 30, item 16).
        plan = info.get("x-github-plan")
        if isinstance(plan, str) and len(plan) <= 64:
            extra["x-github-plan"] = plan
        return extra

    def _items(self, paths: Mapping[str, Any]) -> Iterator[tuple[str, Any, str, dict[str, Any], str]]:
        """(path, item as written, its pointer, the item with its $ref followed, where it came from)
        of every path item that can be read (the others are diagnosed by :meth:`_path_item`)."""
        for path, raw_item in paths.items():
            if path.startswith("x-"):
                continue
            item_ptr = "/paths/" + path.replace("~", "~0").replace("/", "~1")
            item, source = self._path_item(path, raw_item, item_ptr)
            if item is not None:
                yield path, raw_item, item_ptr, item, source

    def _refuse_too_many(self, paths: Mapping[str, Any], methods: tuple[str, ...], spec32: bool) -> NoReturn:
        """Refuse a spec of more than :data:`~ramscope.specs._doc.MAX_OPERATIONS` operations, saying why.

        ``$ref`` lets a small spec multiply: P path items referring to one shared item of A operations
        (OAS 3.2 ``additionalOperations`` has no fixed size) are P x A operations. Called as soon as the
        running count passes the bound, before the item that passes it is built; counts them all, to
        name the most-shared target.
        """
        total = 0
        by_ref: dict[str, list[int]] = {}
        for _, raw_item, _, item, _ in self._items(paths):
            n = _operation_count(item, methods, spec32)
            total += n
            if isinstance(raw_item, dict) and isinstance(ref := raw_item.get("$ref"), str):
                counts = by_ref.setdefault(ref, [0, 0])
                counts[0] += 1
                counts[1] += n
        why = ""
        if by_ref:
            ref, (refs, ops) = max(by_ref.items(), key=lambda kv: kv[1][1])
            why = f" ({ops:,} of them from {refs:,} path items that $ref {ref[:200]!r})"
        raise SpecError(
            f"the spec describes {total:,} operations{why}, more than {_doc.MAX_OPERATIONS:,} "
            "(ramscope's bound per spec); it is not indexed"
        )

    def _index_item(
        self,
        path: str,
        item: dict[str, Any],
        source: str,
        item_ptr: str,
        methods: tuple[str, ...],
        spec32: bool,
        root_bases: list[str],
        all_bases: list[str],
        root_declared: bool,
        root_reqs: Requirements | None,
        entries: list[Row],
        pending: list[int],
    ) -> None:
        """Index one path item's operations into ``entries``; sets ``self._op_declared``."""
        self._op_declared = False
        item_bases = root_bases
        #: The path item's own server URLs (absolute), where the API is for its operations.
        item_urls: list[str] | None = None
        if "servers" in item:
            item_bases = self._servers(item["servers"], root_bases, item_ptr + "/servers")
            all_bases.extend(item_bases)
            item_urls = self._absolute_servers(item["servers"])
        # (method, operation, its pointer if not the usual item_ptr/method): pointers are made only
        # when a finding or an unusual place needs one (Graph beta: 22,000 operations).
        ops: list[tuple[str, Any, str | None]] = [(m, item[m], None) for m in methods if m in item]
        if spec32 and isinstance(item.get("additionalOperations"), dict):
            ops.extend(
                (m, o, join_pointer(item_ptr, "additionalOperations", m))
                for m, o in item["additionalOperations"].items()
            )
        self._count += len(ops)
        if self._count > _doc.MAX_OPERATIONS:
            # Refused before this item is built; the full count names the most-shared $ref target.
            # Counting every spec up front instead would cost a pass over all paths (Graph beta: 0.07 s).
            self._refuse_too_many(self._paths, methods, spec32)
        item_security = "security" in item
        if item_security and all(isinstance(op, dict) and "security" in op for _, op, _ in ops):
            self.diags.append(
                MISPLACED_SECURITY(
                    item_ptr + "/security",
                    f"path {path}: `security` on a path item is not OpenAPI; "
                    "every operation here declares its own, which is what counts",
                )
            )
        for method, op, at in ops:
            if not isinstance(op, dict):
                op_ptr = at or f"{item_ptr}/{method}"
                self.diags.append(INVALID_OPERATION(op_ptr, f"{method.upper()} {path}: not an object; skipped"))
                continue
            bases = item_bases
            urls = item_urls
            if "servers" in op:
                bases = self._servers(op["servers"], item_bases, f"{at or f'{item_ptr}/{method}'}/servers")
                all_bases.extend(bases)
                urls = self._absolute_servers(op["servers"]) or item_urls
            if "security" in op:
                reqs = self._security(op["security"], f"{at or f'{item_ptr}/{method}'}/security")
                src = "operation" if reqs is not None else "invalid"
                self._op_declared = self._op_declared or reqs is not None
            elif item_security:
                # The writer put requirements where OpenAPI reads none. Whether they meant them for this
                # operation cannot be told, and inheriting the root's (or "none") could ask too little.
                self.diags.append(
                    MISPLACED_SECURITY(
                        at or f"{item_ptr}/{method}",
                        f"{method.upper()} {path}: `security` on its path item is not OpenAPI "
                        "(only the root and operations declare requirements); this operation declares "
                        "none of its own, so what it needs is unknown",
                    )
                )
                reqs, src = None, "invalid"
            elif root_declared:
                reqs, src = root_reqs, ("root" if root_reqs is not None else "invalid")
            else:
                reqs, src = None, "undeclared"
                pending.append(len(entries))
            row = self._row(method, path, op, item_ptr, at, bases, reqs, src, source)
            if urls:
                # Another API location than the root's: what an export allows and a rule judges (issue 22).
                row = (*row[:11], {**row[11], "servers": urls}, row[12])
            reading = read_extensions(op, reqs, self.schemes)
            if reading is not None:
                row = self._with_extensions(row, reading, pending, len(entries))
            entries.append(row)

    def _with_extensions(self, row: Row, reading: ExtensionReading, pending: list[int], i: int) -> Row:
        """The row with what its vendor extensions say (:mod:`.extensions`) beside its ``security``."""
        reqs, src = row[6], row[7]
        if reading.source:
            reqs = reading.requirements
            src = f"{src}+{reading.source}" if row[6] is not None else reading.source
            self._op_declared = True
            if i in pending:
                pending.remove(i)
            for s in reading.schemes:
                self.schemes.setdefault(s.name, s)
        extra = {**row[11], "extensions": dict(reading.extra)}
        return (*row[:6], reqs, src, *row[8:11], extra, row[12])

    # ------------------------------------------------------------------ path items

    def _path_item(self, path: str, raw: Any, ptr: str) -> tuple[dict[str, Any] | None, str]:
        """The path item (its ``$ref`` followed) and, if it came from elsewhere, where from."""
        if isinstance(raw, dict) and "$ref" in raw:
            got = self.refs.deref(raw, pointer=ptr)
            if isinstance(got, RefFailure):
                self.diags.append(
                    _REF_RULES[got.code](
                        ptr,
                        f"path {path}: {got.message}; its operations are left out of the index",
                        data={"skipped_path": path, "ref": got.ref},
                    )
                )
                return None, ""
            if not isinstance(got.value, dict):
                self.diags.append(
                    INVALID_OPERATION(
                        ptr, f"path {path}: $ref target is not an object; skipped", data={"skipped_path": path}
                    )
                )
                return None, ""
            # OAS 3.1 allows siblings next to a path item $ref; they win over the target's fields.
            merged = {**got.value, **{k: v for k, v in raw.items() if k != "$ref"}} if len(raw) > 1 else got.value
            source = f"{got.doc_url}#{got.pointer}" if got.doc_url != self.refs.spec_url else ""
            return merged, source
        if not isinstance(raw, dict):
            self.diags.append(
                INVALID_OPERATION(ptr, f"path {path}: not an object; skipped", data={"skipped_path": path})
            )
            return None, ""
        return raw, ""

    def _row(
        self,
        method: str,
        path: str,
        op: dict[str, Any],
        item_ptr: str,
        at: str | None,
        bases: list[str],
        reqs: Requirements | None,
        src: str,
        source: str,
    ) -> Row:
        """The operation's :data:`~ramscope.specs.model.Row` (``method`` as the spec spells it)."""
        upper = method.upper()
        op_id = op.get("operationId")
        if op_id is None:
            op_id = ""
        elif not isinstance(op_id, str):
            self.diags.append(
                INVALID_OPERATION(
                    join_pointer(at or f"{item_ptr}/{method}", "operationId"),
                    f"{upper} {path}: operationId is not a string; ignored",
                )
            )
            op_id = ""
        full = _join(bases[0], path) if bases else path
        alt: tuple[str, ...] = ()
        if len(bases) > 1:
            alt = tuple(dict.fromkeys(p for b in bases[1:] if (p := _join(b, path)) not in (path, full)))
        summary = op.get("summary")
        description = op.get("description")
        extra: dict[str, Any] = {"source": source} if source else {}
        if isinstance(description, str):
            roles = allowed_for(description)
            if roles:
                extra["allowed_for"] = roles
            required = permissions_required(description)
            if required:
                extra["permissions_required"] = required
            if len(description) > DESCRIPTION_LIMIT:
                description = _short(description)
        else:
            description = ""
        return (
            op_id or f"{upper} {path}",
            op_id,
            upper,
            path,
            full,
            alt,
            reqs,
            src,
            summary if isinstance(summary, str) else "",
            description,
            op.get("deprecated") is True,
            extra,
            at,  # None: the usual place (see Row); OAS 3.2 additionalOperations are elsewhere
        )

    # ------------------------------------------------------------------ servers

    def _server_urls(self) -> list[str]:
        """The API's root server URLs, absolute, variables at their defaults (what catalogs match on)."""
        out: list[str] = []
        if self.v2:
            host = self.doc.get("host")
            base = self.doc.get("basePath")
            schemes = self.doc.get("schemes")
            if isinstance(host, str) and host:
                listed = [x for x in schemes if isinstance(x, str)] if isinstance(schemes, list) else []
                scheme = listed[0] if listed else "https"
                out.append(f"{scheme}://{host}{_norm_base(base) if isinstance(base, str) else ''}")
        else:
            out = self._absolute_servers(self.doc.get("servers"))
        return out[:16]

    def _absolute_servers(self, raw: Any) -> list[str]:
        """The URLs of a ``servers`` list, absolute (relative to the spec), variables at their defaults."""
        out: list[str] = []
        for server in raw if isinstance(raw, list) else ():
            if not isinstance(server, dict) or not isinstance(server.get("url"), str):
                continue
            url = server["url"]
            variables = server.get("variables")
            if isinstance(variables, dict) and "{" in url:
                url = _substitute(url, variables)
            url = urljoin(self.base_url, url) if urlsplit(self.base_url).scheme in ("http", "https") else url
            if url not in out:
                out.append(url)
        return out[:16]

    def _root_bases(self) -> list[str]:
        if self.v2:
            base = self.doc.get("basePath")
            return [_norm_base(base)] if isinstance(base, str) else [""]
        servers = self.doc.get("servers")
        if servers is None:
            return [""]  # OAS 3: no servers means a single server at "/"
        return self._servers(servers, [""], "/servers")

    def _servers(self, raw: Any, default: list[str], ptr: str) -> list[str]:
        """Base paths of a ``servers`` list; ``default`` (the same object) when it gives none."""
        if raw is None or self.v2:
            return default
        if not isinstance(raw, list):
            self.diags.append(INVALID_OPERATION(ptr, "servers is not an array; ignored"))
            return default
        out: list[str] = []
        for server in raw:
            if isinstance(server, dict) and isinstance(server.get("url"), str):
                out.append(self._server_path(server["url"], server.get("variables")))
        out = list(dict.fromkeys(out))
        return out or default

    def _server_path(self, url: str, variables: Any) -> str:
        if isinstance(variables, dict) and "{" in url:
            url = _substitute(url, variables)
        if not url.strip():
            return ""  # an empty URL names no server; read it as the default "/"
        parts = urlsplit(url)
        if parts.scheme or url.startswith("//"):
            return _norm_base(parts.path)
        # Relative server URLs are relative to where the document was served from.
        if urlsplit(self.base_url).scheme in ("http", "https"):
            return _norm_base(urlsplit(urljoin(self.base_url, url)).path)
        return _norm_base(parts.path)

    # ------------------------------------------------------------------ security requirements

    def _security(self, raw: Any, ptr: str) -> Requirements | None:
        """Parse a ``security`` list. Malformed lists give ``None`` (unknown), never fewer alternatives."""
        cached = self.security_cache.get(id(raw))
        if cached is not None and cached[0] is raw:
            return cached[1]
        reqs = self._parse_security(raw, ptr)
        self.security_cache[id(raw)] = (raw, reqs)
        return reqs

    def _parse_security(self, raw: Any, ptr: str) -> Requirements | None:
        if not isinstance(raw, list):
            self.diags.append(INVALID_SECURITY(ptr, "security is not an array; the requirements are unknown"))
            return None
        alts: list[Requirement] = []
        for i, item in enumerate(raw):
            if not isinstance(item, dict):
                self.diags.append(
                    INVALID_SECURITY(
                        join_pointer(ptr, i), "a security requirement is not an object; the requirements are unknown"
                    )
                )
                return None
            terms: list[SchemeRequirement] = []
            for name, scopes in item.items():
                if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
                    self.diags.append(
                        INVALID_SECURITY(
                            join_pointer(ptr, i, name),
                            f"scopes of {name!r} are not an array of strings; the requirements are unknown",
                        )
                    )
                    return None
                term = SchemeRequirement.of(name, scopes)
                terms.append(term)
                if term not in self.checked_terms:
                    self.checked_terms.add(term)
                    self._check_term(term, join_pointer(ptr, i, name))
                elif term.scheme in self.undefined:
                    self.undefined[term.scheme][1] += 1
            alts.append(tuple(terms))
        return tuple(alts)

    def _check_term(self, term: SchemeRequirement, ptr: str) -> None:
        name = term.scheme
        if name not in self.schemes:
            if name not in self.broken_schemes:
                entry = self.undefined.setdefault(name, [ptr, 0])
                entry[1] += 1
            return
        declared = self.oauth_scopes.get(name)
        if declared is None:
            return
        for scope in term.scopes:
            if scope not in declared:
                self.undeclared_scopes.setdefault((name, scope), ptr)

    def _flush_scheme_diagnostics(self) -> None:
        where = "securityDefinitions" if self.v2 else "components.securitySchemes"
        defined = ", ".join(sorted(self.schemes)) or "none"
        for name, (ptr, count) in self.undefined.items():
            self.diags.append(
                UNDEFINED_SECURITY_SCHEME(
                    ptr,
                    f"security scheme {name!r} is required {count} time(s) but not defined in {where} "
                    f"(defined: {defined}); the requirement is kept as written",
                    data={"scheme": name},
                )
            )
        for (name, scope), ptr in self.undeclared_scopes.items():
            self.diags.append(
                UNDECLARED_SCOPE(
                    ptr,
                    f"scope {scope!r} is not listed by the flows of scheme {name!r}",
                    data={"scheme": name, "scope": scope},
                )
            )

    def _undeclared_warning(self) -> None:
        msg = "the spec declares no security requirements (no well-formed root or operation `security`)"
        if self.schemes:
            msg += f"; it defines the scheme(s) {', '.join(sorted(self.schemes))} but never requires them"
        msg += ", so what its operations need is unknown: check its documentation"
        self.diags.append(SECURITY_UNDECLARED("", msg, data={"affects": "all"}))

    # ------------------------------------------------------------------ security schemes

    def _report(self, diagnostic: Diagnostic) -> None:
        self.diags.append(diagnostic)

    def _read_schemes(self) -> None:
        if self.v2:
            raw = self.doc.get("securityDefinitions")
            base_ptr = "/securityDefinitions"
        else:
            comps = self.doc.get("components")
            raw = comps.get("securitySchemes") if isinstance(comps, dict) else None
            base_ptr = "/components/securitySchemes"
        if raw is None:
            return
        if not isinstance(raw, dict):
            self.diags.append(INVALID_SECURITY_SCHEME(base_ptr, "not an object; no scheme can be read"))
            return
        for name, value in raw.items():
            ptr = join_pointer(base_ptr, name)
            got = self.refs.deref(value, pointer=ptr)
            if isinstance(got, RefFailure):
                self.broken_schemes.add(name)
                self.diags.append(
                    _REF_RULES[got.code](
                        ptr,
                        f"security scheme {name!r}: {got.message}; requirements naming it stay, undescribed",
                        data={"scheme": name, "ref": got.ref},
                    )
                )
                continue
            if not isinstance(got.value, dict):
                self.broken_schemes.add(name)
                self.diags.append(
                    INVALID_SECURITY_SCHEME(ptr, f"security scheme {name!r} is not an object", data={"scheme": name})
                )
                continue
            scheme = self._scheme(name, got.value, ptr)
            self.schemes[name] = scheme
            if scheme.type is SchemeType.OAUTH2:
                self.oauth_scopes[name] = {s for f in scheme.flows for s, _ in f.scopes}

    def _scheme(self, name: str, d: dict[str, Any], ptr: str) -> SecurityScheme:
        raw_type = d.get("type")
        if self.v2 and isinstance(raw_type, str) and raw_type.lower() == "basic":
            return SecurityScheme(name, SchemeType.HTTP, _str(d.get("description")), http_scheme="basic")
        stype = scheme_type(raw_type)
        if stype is None:
            self.diags.append(
                INVALID_SECURITY_SCHEME(
                    join_pointer(ptr, "type"),
                    f"security scheme {name!r} has unknown type {raw_type!r}; kept as type unknown",
                    data={"scheme": name},
                )
            )
            stype = SchemeType.UNKNOWN
        flows = self._swagger_flow(name, d, ptr) if self.v2 and stype is SchemeType.OAUTH2 else None
        return self.scheme_reader.read(name, stype, d, ptr, flows=flows)

    def _swagger_flow(self, name: str, d: dict[str, Any], ptr: str) -> tuple[OAuthFlow, ...]:
        flow = d.get("flow")
        kind = _SWAGGER_FLOWS.get(flow) if isinstance(flow, str) else None
        if kind is None:
            self.diags.append(
                INVALID_SECURITY_SCHEME(
                    join_pointer(ptr, "flow"),
                    f"oauth2 scheme {name!r} has unknown flow {d.get('flow')!r}; no flow is recorded for it",
                    data={"scheme": name},
                )
            )
            # Guessing a flow would decide which identities may use the scheme: better none.
            return ()
        return (
            OAuthFlow(
                kind,
                authorization_url=_str(d.get("authorizationUrl")),
                token_url=_str(d.get("tokenUrl")),
                scopes=self.scheme_reader.scopes(d.get("scopes")),
            ),
        )
