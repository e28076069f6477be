"""Dropbox's Stone route files (``*.stone``) -> :class:`SpecIndex`.

Stone is a small indentation-based interface language (``dropbox/stone``). A file declares one
``namespace`` and, among data types this reader skips, its routes::

    namespace files

    route download (DownloadArg, FileMetadata, DownloadError)
        "Download a file from a user's Dropbox."

        attrs
            auth = "user"
            host = "content"
            scope = "files.content.read"
            style = "download"

    route copy (RelocationArg, Metadata, RelocationError) deprecated by copy:2

A route is called as ``POST https://<host>.dropboxapi.com/2/<namespace>/<name>`` where a version
above 1 is spelled ``_v<N>`` (``copy:2`` -> ``/2/files/copy_v2``). Its operation id here is
``namespace/name`` with ``:N`` for versions above 1 (``files/copy:2``); ``files/copy_v2`` is
accepted by the resolver too.

How the attributes are read (Dropbox's ``stone_cfg.stone`` defines them; ``auth`` defaults to
``"user"``):

* ``auth = "user"``: a user's OAuth 2.0 token carrying ``scope``; ``"team"``: a team token
  (the authorizing user must be a team administrator: the route is marked so, with a finding);
  ``"app"``: the app's own key and secret (HTTP Basic), an agent credential that carries no
  scope; ``"noauth"``: nothing. Several values joined by commas are alternatives.
* A user or team route without ``scope`` needs a token of that kind with no particular scope.

One file per spec URL: a directory of Stone files (the whole API) is several specs. The reader is
line-based and bounded (bytes, lines, routes); anything it cannot read in a route header is
reported and the route skipped, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Diagnostic, Severity, rule
from ..documents import FetchedSpec
from ..errors import SpecError
from ._doc import INVALID_OPERATION, SECURITY_UNDECLARED, TextDocument, assign_keys
from .model import (
    FlowKind,
    OAuthFlow,
    OperationEntry,
    Requirement,
    Requirements,
    SchemeRequirement,
    SchemeType,
    SecurityScheme,
    SpecIndex,
    SpecKind,
)
from .refs import RefLoader

__all__ = [
    "APP_SCHEME",
    "MAX_STONE_BYTES",
    "MAX_STONE_ROUTES",
    "STONE_TEAM_ROUTE",
    "TEAM_SCHEME",
    "USER_SCHEME",
    "StoneAdapter",
    "StoneDoc",
    "StoneRoute",
    "build_stone_index",
    "looks_like_stone",
    "parse_stone",
    "route_path",
]

#: Dropbox's largest Stone file (team_log.stone) is 0.6 MB; a spec is a single file.
MAX_STONE_BYTES = 16 * 1024 * 1024
MAX_STONE_LINES = 500_000
MAX_STONE_ROUTES = 20_000
#: Longest name, attribute value or description kept.
_MAX_NAME = 256
_MAX_TEXT = 4_000

USER_SCHEME = "dropbox_user"
TEAM_SCHEME = "dropbox_team"
APP_SCHEME = "dropbox_app"
AUTHORIZATION_URL = "https://www.dropbox.com/oauth2/authorize"
TOKEN_URL = "https://api.dropboxapi.com/oauth2/token"
_HOSTS = {"api": "api.dropboxapi.com", "content": "content.dropboxapi.com", "notify": "notify.dropboxapi.com"}
_AUTH_VALUES = ("user", "team", "app", "noauth")

STONE_TEAM_ROUTE = rule(
    "stone-team-route",
    Severity.INFO,
    'A Stone route with auth "team" is called with a team token: the user who authorizes it must be an '
    "administrator of the Dropbox team.",
    stage="spec",
)
STONE_INVALID_AUTH = rule(
    "stone-invalid-auth",
    Severity.WARNING,
    "A Stone route's auth attribute names no known kind (user, team, app, noauth): its requirements are unknown.",
    stage="spec",
)

_NAMESPACE = re.compile(r"namespace\s+([A-Za-z_][A-Za-z0-9_]*)\s*$")
_ROUTE = re.compile(
    r"route\s+(?P<name>[A-Za-z_][A-Za-z0-9_/]*)(?::(?P<version>[0-9]{1,4}))?\s*"
    r"\((?P<types>(?:[^()]|\([^()]*\)){0,2000})\)\s*(?P<rest>.*)$"
)
_DEPRECATED = re.compile(r"deprecated(?:\s+by\s+(?P<by>[A-Za-z_][A-Za-z0-9_/]*(?::[0-9]{1,4})?))?\s*$")
#: Matched against a stripped line, so the value needs no lazy match before trailing space (quadratic).
_ATTR = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*(.*)")
#: The first meaningful line of a Stone file: its namespace (comments and blank lines before it).
_HEAD = re.compile(r"\A(?:[ \t]*#[^\n]*\n|[ \t]*\r?\n)*namespace[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*(?:\r?\n|\Z)")


@dataclass(frozen=True, slots=True)
class StoneRoute:
    name: str
    version: int
    arg_types: tuple[str, ...]
    attrs: dict[str, str | bool] = field(default_factory=dict)
    doc: str = ""
    deprecated: bool = False
    deprecated_by: str = ""
    line: int = 0


@dataclass(frozen=True, slots=True)
class StoneDoc:
    namespace: str
    doc: str
    routes: tuple[StoneRoute, ...]
    #: (line number, what could not be read)
    problems: tuple[tuple[int, str], ...] = ()


def looks_like_stone(head: str, url: str = "") -> bool:
    """Is this a Stone file (``head``: its first characters)? Its first statement is ``namespace NAME``, or,
    at a ``.stone`` URL, it has a route line (a ``.stone`` URL alone is not enough)."""
    if _HEAD.match(head):
        return True
    at_stone_url = url.lower().split("?")[0].split("#")[0].endswith(".stone")
    return at_stone_url and re.search(r"(?m)^route[ \t]", head) is not None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _value(raw: str) -> str | bool | None:
    if raw in ("true", "false"):
        return raw == "true"
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return raw[1:-1].replace('\\"', '"')[:_MAX_TEXT]
    if re.fullmatch(r"[A-Za-z0-9_.\-]{1,256}", raw):
        return raw
    return None


def _quote_state(line: str, open_quote: bool) -> bool:
    """Whether a double-quoted string is still open after ``line`` (backslash escapes honoured)."""
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            open_quote = not open_quote
        elif c == "#" and not open_quote:
            break
        i += 1
    return open_quote


def parse_stone(text: str) -> StoneDoc:
    """The namespace and routes of one Stone file. Raises :class:`SpecError` past the bounds or without a namespace."""
    lines = text.splitlines()
    if len(lines) > MAX_STONE_LINES:
        raise SpecError(f"unsupported spec: a Stone file of more than {MAX_STONE_LINES:,} lines")
    namespace = ""
    ns_doc: list[str] = []
    routes: list[StoneRoute] = []
    problems: list[tuple[int, str]] = []
    i = 0
    n = len(lines)
    in_quote = False
    while i < n:
        line = lines[i]
        stripped = line.strip()
        if in_quote:
            in_quote = _quote_state(line, True)
            i += 1
            continue
        if not stripped or stripped.startswith("#") or _indent(line) > 0:
            in_quote = _quote_state(line, False) if stripped and not stripped.startswith("#") else False
            i += 1
            continue
        if stripped.startswith("namespace ") or stripped == "namespace":
            m = _NAMESPACE.fullmatch(stripped)
            if m is None or namespace:
                problems.append((i + 1, "a namespace line that cannot be read, or a second one"))
            else:
                namespace = m.group(1)
                j = i + 1
                while j < n and (not lines[j].strip() or _indent(lines[j]) > 0):
                    s = lines[j].strip()
                    if s:
                        ns_doc.append(s)
                    j += 1
                in_quote = False
                i = j
                continue
            i += 1
            continue
        if stripped.startswith("route ") or stripped == "route":
            route, i, problem = _read_route(lines, i)
            if problem:
                problems.append(problem)
            elif route is not None:
                if len(routes) >= MAX_STONE_ROUTES:
                    raise SpecError(f"unsupported spec: a Stone file of more than {MAX_STONE_ROUTES:,} routes")
                routes.append(route)
            continue
        in_quote = _quote_state(line, False)
        i += 1
    if not namespace:
        raise SpecError("unsupported spec: a Stone file without a namespace line")
    return StoneDoc(namespace, _docstring(ns_doc), tuple(routes), tuple(problems))


def _docstring(parts: list[str]) -> str:
    text = " ".join(parts).strip()
    if len(text) >= 2 and text[0] == '"' and text.endswith('"'):
        text = text[1:-1]
    return text[:_MAX_TEXT]


def _read_route(lines: list[str], i: int) -> tuple[StoneRoute | None, int, tuple[int, str] | None]:
    """The route starting at line ``i``, and the line after its block."""
    header = lines[i].strip()
    # The block: every following line that is blank or indented.
    j = i + 1
    while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > 0):
        j += 1
    m = _ROUTE.fullmatch(header)
    if m is None:
        return None, j, (i + 1, f"a route header that cannot be read: {header[:120]!r}")
    rest = m.group("rest").strip()
    deprecated = False
    by = ""
    if rest:
        d = _DEPRECATED.fullmatch(rest)
        if d is None:
            return None, j, (i + 1, f"a route header with unknown words after its types: {rest[:120]!r}")
        deprecated, by = True, d.group("by") or ""
    name = m.group("name")
    if len(name) > _MAX_NAME or "//" in name or name.endswith("/"):
        return None, j, (i + 1, f"a route name that cannot be read: {name[:120]!r}")
    types = tuple(t.strip() for t in m.group("types").split(","))
    doc: list[str] = []
    attrs: dict[str, str | bool] = {}
    k = i + 1
    in_quote = False
    attrs_indent = -1
    while k < j:
        line = lines[k]
        s = line.strip()
        if not s:
            k += 1
            continue
        if in_quote:
            doc.append(s)
            in_quote = _quote_state(line, True)
            k += 1
            continue
        ind = _indent(line)
        if attrs_indent >= 0 and ind > attrs_indent:
            a = _ATTR.fullmatch(s)
            if a is None:
                return None, j, (k + 1, f"route {name!r}: an attribute that cannot be read: {s[:120]!r}")
            value = _value(a.group(2))
            if value is None:
                return None, j, (k + 1, f"route {name!r}: attribute {a.group(1)!r} has a value that cannot be read")
            attrs[a.group(1)] = value
        elif s == "attrs":
            attrs_indent = ind
        elif s.startswith('"') and attrs_indent < 0:
            doc.append(s)
            in_quote = _quote_state(line, False)
        else:
            attrs_indent = -1 if ind <= attrs_indent else attrs_indent
            in_quote = _quote_state(line, False)
        k += 1
    return (
        StoneRoute(
            name=name,
            version=int(m.group("version") or 1),
            arg_types=types,
            attrs=attrs,
            doc=_docstring(doc),
            deprecated=deprecated,
            deprecated_by=by,
            line=i + 1,
        ),
        j,
        None,
    )


def route_path(namespace: str, name: str, version: int) -> str:
    """The URL path of a route: ``/2/files/copy_v2`` for ``files`` ``copy:2``."""
    return f"/2/{namespace}/{name}" + (f"_v{version}" if version > 1 else "")


def route_id(namespace: str, name: str, version: int) -> str:
    return f"{namespace}/{name}" + (f":{version}" if version > 1 else "")


class StoneAdapter:
    """The :class:`~ramscope.specs.Adapter` for Dropbox Stone files (read as text)."""

    kind = SpecKind.STONE

    def sniff(self, doc: Any) -> str | None:
        if isinstance(doc, TextDocument) and looks_like_stone(doc.head, doc.url):
            return "stone"
        return None

    def sniff_text(self, head: str, url: str) -> bool:
        return looks_like_stone(head, url)

    def build(self, doc: Any, spec: FetchedSpec, *, spec_version: str, load_ref: RefLoader | None = None) -> SpecIndex:
        if not isinstance(doc, TextDocument):  # pragma: no cover - sniff admits nothing else
            raise SpecError("unsupported spec: not a Stone file", url=spec.url)
        return build_stone_index(parse_stone(doc.text), spec)


def _schemes(scopes: set[str], kinds: set[str]) -> tuple[SecurityScheme, ...]:
    listed = tuple((s, "") for s in sorted(scopes))
    out: list[SecurityScheme] = []
    flow = OAuthFlow(
        FlowKind.AUTHORIZATION_CODE, authorization_url=AUTHORIZATION_URL, token_url=TOKEN_URL, scopes=listed
    )
    if "user" in kinds:
        out.append(SecurityScheme(USER_SCHEME, SchemeType.OAUTH2, "Dropbox OAuth 2.0, a user's token", flows=(flow,)))
    if "team" in kinds:
        out.append(
            SecurityScheme(
                TEAM_SCHEME,
                SchemeType.OAUTH2,
                "Dropbox OAuth 2.0, a team token (authorized by a team administrator)",
                flows=(flow,),
            )
        )
    if "app" in kinds:
        out.append(
            SecurityScheme(
                APP_SCHEME,
                SchemeType.HTTP,
                "Dropbox app authentication: the app key and secret (HTTP Basic)",
                http_scheme="basic",
            )
        )
    return tuple(out)


def build_stone_index(doc: StoneDoc, spec: FetchedSpec) -> SpecIndex:
    diags: list[Diagnostic] = []
    for line, what in doc.problems:
        diags.append(INVALID_OPERATION(f"/lines/{line}", f"line {line}: {what}; skipped"))
    entries: list[OperationEntry] = []
    scopes: set[str] = set()
    kinds: set[str] = set()
    for r in doc.routes:
        ptr = f"/routes/{route_id(doc.namespace, r.name, r.version).replace('~', '~0').replace('/', '~1')}"
        raw_auth = r.attrs.get("auth", "user")
        scope = r.attrs.get("scope")
        reqs: Requirements | None
        source = "route"
        auths = [a.strip() for a in raw_auth.split(",")] if isinstance(raw_auth, str) else []
        if not auths or any(a not in _AUTH_VALUES for a in auths):
            diags.append(
                STONE_INVALID_AUTH(
                    ptr, f"route {r.name!r}: auth {raw_auth!r} names no known kind; its requirements are unknown"
                )
            )
            reqs, source = None, "undeclared"
        elif scope is not None and not isinstance(scope, str):
            diags.append(
                SECURITY_UNDECLARED(ptr, f"route {r.name!r}: its scope is not a string; what it needs is unknown")
            )
            reqs, source = None, "undeclared"
        else:
            alts: list[Requirement] = []
            for a in dict.fromkeys(auths):
                kinds.add(a)
                if a == "noauth":
                    alts.append(())
                elif a == "app":
                    alts.append((SchemeRequirement(APP_SCHEME),))
                else:
                    term_scopes = (scope,) if scope else ()
                    scopes.update(term_scopes)
                    alts.append((SchemeRequirement.of(USER_SCHEME if a == "user" else TEAM_SCHEME, term_scopes),))
            # "noauth" alone: declared to need nothing.
            reqs = () if alts == [()] else tuple(alts)
            if "team" in auths:
                diags.append(
                    STONE_TEAM_ROUTE(
                        ptr,
                        f"route {route_id(doc.namespace, r.name, r.version)!r} takes a team token: the user who "
                        "authorizes it must be an administrator of the Dropbox team",
                    )
                )
        host = r.attrs.get("host", "api")
        extra: dict[str, Any] = {"auth": auths, "host": _HOSTS.get(host, "") if isinstance(host, str) else ""}
        if "team" in auths:
            extra["principal"] = "admin"
        for k in ("style", "select_admin_mode", "scope"):
            if isinstance(r.attrs.get(k), str):
                extra[k] = r.attrs[k]
        if r.attrs.get("is_preview") is True:
            extra["preview"] = True
        if r.deprecated_by:
            extra["deprecated_by"] = f"{doc.namespace}/{r.deprecated_by}"
        op_id = route_id(doc.namespace, r.name, r.version)
        path = route_path(doc.namespace, r.name, r.version)
        entries.append(
            OperationEntry(
                key=op_id,
                operation_id=op_id,
                method="POST",
                path=path,
                full_path=path,
                alt_paths=(path[2:],),
                requirements=reqs,
                security_source=source,
                title=op_id,
                description=r.doc,
                deprecated=r.deprecated,
                extra=extra,
                pointer=ptr,
            )
        )
    declared = any(e.requirements is not None for e in entries)
    if not declared:
        diags.append(
            SECURITY_UNDECLARED("", "no route of the Stone file declares how it is authorized", data={"affects": "all"})
        )
    return SpecIndex(
        kind=SpecKind.STONE,
        url=spec.url,
        sha256=spec.sha256,
        title=f"Dropbox API: {doc.namespace}",
        spec_version="stone",
        base_paths=("/2",),
        operations=tuple(assign_keys(entries, diags)),
        schemes=_schemes(scopes, kinds),
        security_declared=declared,
        diagnostics=tuple(diags),
        extra={"namespace": doc.namespace, "description": doc.doc},
    )
