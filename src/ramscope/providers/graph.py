"""Microsoft Graph: the permission catalog compiled from Microsoft's ``permissions.json``.

Graph's OpenAPI documents declare no security; Microsoft publishes which permission each
endpoint needs in microsoft-graph-devx-content ``permissions/new/permissions.json`` (vendored
under ``vendor/microsoft-graph/`` with its MIT license and provenance). :func:`build` compiles it
into the :mod:`.catalog` form; :func:`normalise_path` is the one function both sides of a
look-up go through.

Upstream shape (per permission): ``schemes`` keyed ``DelegatedWork`` / ``DelegatedPersonal`` /
``Application`` with display names, descriptions, ``requiresAdminConsent`` and
``privilegeLevel``; ``pathSets`` of ``schemeKeys`` × ``methods`` × ``paths``. A path's value is
``""`` or ``;``-separated clauses: ``least=<schemes>`` (Microsoft designates this permission least
privileged for the path under those schemes) and ``AlsoRequires=<p1>,<p2>,...`` (the permission is
not enough alone: one of the listed ones is needed as well).

Traps the build handles (``FIELD-NOTES.md``):

* ``least=`` marks belong to a path *set*, not to a method: a set with GET and POST marks both, so
  GET ``/me/messages`` has ``Mail.ReadBasic`` *and* ``Mail.ReadWrite`` marked. Entries keep every
  mark; choosing among the marked (by grant set) is ``privilege``'s job.
* The same endpoint is spelled differently by different permissions (``/me/mailFolders`` and
  ``/me/mailfolders``, ``{id}`` and ``{policyId}``): entries are keyed by the normalised path so the
  spellings merge instead of the first one shadowing the others.
* Delegated scopes and application roles share names (``Mail.Read``) but are different grants:
  the application scheme carries its own namespace.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from ..specs.model import FlowKind, OAuthFlow, SchemeRequirement, SchemeType, SecurityScheme
from .catalog import Catalog, CatalogEntry, Permission, encode

__all__ = [
    "APPLICATION",
    "DELEGATED_PERSONAL",
    "DELEGATED_WORK",
    "ME_APP_NOTE",
    "NAME",
    "RESOURCE",
    "SCHEME_NAMES",
    "SERVERS",
    "Agreement",
    "build",
    "build_from",
    "choose",
    "grant_sets",
    "implied",
    "least_privilege_agreement",
    "normalise_path",
    "scope_string",
    "twins",
]

NAME = "microsoft-graph"

#: Normalised server URLs (``authserver.normalise_url``) this catalog describes: the global
#: service's v1.0 and beta. National clouds (graph.microsoft.us, dod-graph.microsoft.us,
#: microsoftgraph.chinacloudapi.cn) are deliberately not served: their token endpoints and scope
#: prefixes differ and Microsoft's file does not say which permissions exist there.
SERVERS: tuple[str, ...] = (r"^https://graph\.microsoft\.com/(?:v1\.0|beta)$",)

#: The resource identifier that prefixes a scope in a token request.
RESOURCE = "https://graph.microsoft.com"
AUTHORIZE_URL = "https://login.microsoftonline.com/common/oauth2/v2.0/authorize"
TOKEN_URL = "https://login.microsoftonline.com/common/oauth2/v2.0/token"
#: Application permissions are app roles: granted by the same server as the delegated scopes of
#: the same name, but other grants.
APPLICATION_NAMESPACE = "https://login.microsoftonline.com#app-roles"

DELEGATED_WORK = "microsoft-graph-delegated-work"
DELEGATED_PERSONAL = "microsoft-graph-delegated-personal"
APPLICATION = "microsoft-graph-application"
#: Upstream scheme key -> catalog scheme name, in the catalog's order.
SCHEME_NAMES: dict[str, str] = {
    "DelegatedWork": DELEGATED_WORK,
    "DelegatedPersonal": DELEGATED_PERSONAL,
    "Application": APPLICATION,
}

# --------------------------------------------------------------------------- paths

_PARAM = re.compile(r"\{[^{}/]*\}")
_CALL = re.compile(r"^([^()]*)\(([^()]*)\)([^()]*)$")
#: OData namespaces that qualify action, function and type-cast segments
#: (``microsoft.graph.sendMail``, ``microsoft.graph.security.runHuntingQuery``, ``Default.findByKbNumber``).
_NAMESPACED = re.compile(r"^(?:microsoft|default|graph)\.")


def _strip_namespace(head: str) -> str:
    if _NAMESPACED.match(head):
        last = head.rsplit(".", 1)[1]
        if last:
            return last
    return head


def _segment(raw: str) -> list[str]:
    seg = raw.strip().lower()
    if not seg or seg == "...":
        return [seg] if seg else []
    m = _CALL.match(seg)
    if m is None:
        return [_strip_namespace(_PARAM.sub("{id}", seg))]
    head = _strip_namespace(_PARAM.sub("{id}", m.group(1).strip()))
    tail = _PARAM.sub("{id}", m.group(3))
    positional: list[str] = []
    named: list[str] = []
    for piece in m.group(2).split(","):
        arg = piece.strip()
        if not arg:
            continue
        if "=" in arg:
            # A function parameter or alternate key: only its name matters, the catalog writes
            # every value as ``{value}`` (``range(address={value})``).
            named.append(arg.split("=", 1)[0].strip() + "={value}")
        else:
            positional.append("{id}")
    if not positional and not named:
        # ``microsoft.graph.delta()``: a function without parameters is the bare segment.
        return [head + tail] if head + tail else []
    if len(positional) == 1 and not named and not tail and head and head != "{id}":
        # OData key syntax: ``workflows({id})`` is ``workflows/{id}``.
        return [head, "{id}"]
    return [f"{head}({','.join(positional + sorted(named))}){tail}"]


def normalise_path(path: str) -> str:
    """The look-up key of a Graph path, from the OpenAPI spelling or the catalog's.

    Lower case; every parameter ``{id}``; the OData namespace dropped from action, function and
    type-cast segments (``microsoft.graph.sendMail`` → ``sendmail``); function parameters written
    ``name={value}`` in name order, quotes dropped (``(period='{period}')`` → ``(period={value})``);
    ``()`` dropped; key syntax ``x({id})`` → ``x/{id}``; ``$count``/``$value``/``$ref`` kept as
    segments; ``...`` (Microsoft's any-depth wildcard) kept; empty segments and a trailing slash
    dropped. A query string (a handful of catalog paths name a filtered listing) is kept,
    lower-cased, so such an entry never stands for the unfiltered endpoint.
    """
    p = path.strip()
    query = ""
    if "?" in p:
        p, q = p.split("?", 1)
        query = " ".join(q.split()).lower()
    segs: list[str] = []
    for raw in p.split("/"):
        segs.extend(_segment(raw))
    out = "/" + "/".join(segs)
    return f"{out}?{query}" if query else out


_USERS_ID = "/users/{id}"


def _me_twins(npath: str) -> tuple[tuple[str, str], ...]:
    if npath == "/me" or npath.startswith(("/me/", "/me?")):
        return ((_USERS_ID + npath[3:], "/me is /users/{id} for the signed-in user"),)
    if npath == _USERS_ID or npath.startswith((_USERS_ID + "/", _USERS_ID + "?")):
        return (
            (
                "/me" + npath[len(_USERS_ID) :],
                "the signed-in user's own data; another user's may need a .Shared or .All permission, "
                "and application permissions are listed for /me though Graph refuses /me without a signed-in user",
            ),
        )
    return ()


#: Microsoft's well-known mail folder names, which address a folder wherever its id does
#: (https://learn.microsoft.com/graph/api/resources/mailfolder: "well-known folder names").
WELL_KNOWN_FOLDERS = (
    "inbox", "drafts", "sentitems", "deleteditems", "archive", "junkemail", "outbox", "msgfolderroot",
)  # fmt: skip
_FOLDER = re.compile(r"/mailfolders/([^/]+)(?=/|$)")
#: The ways Microsoft's driveItem reference addresses one drive (each page's "HTTP request" lists them).
DRIVE_FORMS = ("/me/drive", "/users/{id}/drive", "/groups/{id}/drive", "/sites/{id}/drive", "/drives/{id}")
_DRIVE = re.compile(
    r"^(?:/me/drive|/users/\{id\}/drive|/groups/\{id\}/drive|/sites/\{id\}/drive|"
    r"/(?:me|users/\{id\}|groups/\{id\}|sites/\{id\})/drives/\{id\}|/drives/\{id\})(?=/|$)"
)
_SPELLINGS = "https://learn.microsoft.com/graph/api/resources/"


def _spellings(npath: str) -> list[tuple[str, str]]:
    """The other spellings Microsoft documents for the endpoint ``npath`` names (one family each)."""
    out: list[tuple[str, str]] = []
    m = _FOLDER.search(npath)
    if m is not None:
        head, tail = npath[: m.start()], npath[m.end() :]
        if m.group(1) == "{id}":
            # Message rules and other folder endpoints Microsoft documents under a well-known name.
            for name in WELL_KNOWN_FOLDERS:
                why = f"a mail folder's id, as Microsoft documents it under the well-known name {name!r}"
                out.append((f"{head}/mailfolders/{name}{tail}", f"{why} ({_SPELLINGS}mailfolder)"))
        elif m.group(1) in WELL_KNOWN_FOLDERS:
            out.append((f"{head}/mailfolders/{{id}}{tail}", f"the well-known folder {m.group(1)!r} is a mail "
                        f"folder addressed by name ({_SPELLINGS}mailfolder)"))  # fmt: skip
    d = _DRIVE.match(npath)
    if d is not None:
        rest = npath[d.end() :]
        owner = d.group(0).split("/drive", 1)[0]
        # The same owner's spelling first, the signed-in user's own drive only for /me: another drive is
        # not the user's OneDrive (/sites/{id}/drives/{id} is a site's library).
        order = sorted(DRIVE_FORMS, key=lambda f: (not f.startswith(owner + "/") or not owner, f == "/me/drive"))
        for form in order:
            if form == "/me/drive" and owner != "/me":
                continue
            if form != d.group(0):
                why = f"one drive addressed as {form}, as Microsoft's driveItem reference lists it beside {d.group(0)}"
                out.append((form + rest, f"{why} ({_SPELLINGS}drive)"))
    if npath.startswith("/chats/{id}"):
        out.append(("/users/{id}" + npath, f"a chat addressed under one of its members ({_SPELLINGS}chat)"))
    for own, named in (("/calendars/{id}", "/calendar"), ("/calendar", "/calendars/{id}")):
        for who in ("/me", _USERS_ID, "/groups/{id}"):
            if npath == who + own or npath.startswith(who + own + "/"):
                out.append((who + named + npath[len(who + own) :], f"a user's calendar by id and the default "
                            f"calendar share one reference page ({_SPELLINGS}calendar)"))  # fmt: skip
    if npath.endswith("/$ref"):
        out.append((npath[: -len("/$ref")], "a $ref write of a navigation property is the reference's own "
                    "add or remove (Microsoft documents members and owners writes as .../$ref)"))  # fmt: skip
    return out


def twins(npath: str) -> tuple[tuple[str, str], ...]:
    """The documented twins of a normalised path, with what using each means: ``/me/x`` is
    ``/users/{id}/x`` for the signed-in user, and back (Microsoft documents most endpoints under both
    spellings on one page, "HTTP request": ``/me/sendMail`` and ``/users/{id | userPrincipalName}/sendMail``,
    but its permissions data often lists only one); then the spelling families Microsoft's reference
    pages document for one endpoint: a mail folder's id and its well-known name (``inbox``), a drive as
    ``/drives/{id}``, ``/me/drive``, ``/users/{id}/drive``, ``/groups/{id}/drive`` or ``/sites/{id}/drive``,
    a chat under ``/users/{id}/chats``, a calendar by id and the default calendar, a ``$ref`` write and
    the reference's own; each of those also under its ``/me`` twin."""
    out = list(_me_twins(npath))
    for spelled, meaning in _spellings(npath):
        out.append((spelled, meaning))
        out += [(t, f"{meaning}; {m}") for t, m in _me_twins(spelled)]
    seen = {npath}
    unique: list[tuple[str, str]] = []
    for spelled, meaning in out:
        if spelled not in seen:
            seen.add(spelled)
            unique.append((spelled, meaning))
    return tuple(unique)


#: Note on every /me entry that lists application permissions (see build()).
ME_APP_NOTE = "/me needs a signed-in user: Graph refuses it under an app-only token (application permissions)"


def _signed_in_user_only(npath: str) -> bool:
    return npath == "/me" or npath.startswith(("/me/", "/me?"))


def scope_string(short: str) -> str:
    """``Mail.Read`` as a token request names it."""
    return f"{RESOURCE}/{short}"


# --------------------------------------------------------------------------- build

_SHA = re.compile(r"\bsha256\s+([0-9a-f]{64})\b")
_COMMIT = re.compile(r"\bcommit\s+([0-9a-f]{40})\b")
_DATE = re.compile(r"\((\d{4}-\d{2}-\d{2})\)")
_REPO = re.compile(r"([A-Za-z0-9_.-]+/microsoft-graph-devx-content)")


def _provenance(vendor_dir: Path, data: bytes) -> dict[str, Any]:
    """Source facts from ``SOURCES.md``, checked against the vendored file."""
    text = (vendor_dir / "SOURCES.md").read_text(encoding="utf-8")
    patterns = (("sha256", _SHA), ("commit", _COMMIT), ("date", _DATE), ("repository", _REPO))
    found = {k: rx.search(text) for k, rx in patterns}
    missing = [k for k, m in found.items() if m is None]
    if missing:
        raise ValueError(f"{vendor_dir / 'SOURCES.md'}: cannot find {', '.join(missing)}")
    facts = {k: m.group(1) for k, m in found.items() if m is not None}
    actual = hashlib.sha256(data).hexdigest()
    if actual != facts["sha256"]:
        raise ValueError(
            f"{vendor_dir / 'permissions.json'}: sha256 {actual} differs from {facts['sha256']} in SOURCES.md"
        )
    return {
        "repository": f"https://github.com/{facts['repository']}",
        "path": "permissions/new/permissions.json",
        "commit": facts["commit"],
        "date": facts["date"],
        "license": "MIT",
        "sha256": facts["sha256"],
    }


def _clauses(value: str) -> tuple[set[str], list[str]]:
    """``least=A,B;AlsoRequires=X,Y`` -> ({A, B}, [X, Y])."""
    least: set[str] = set()
    also: list[str] = []
    for clause in value.split(";"):
        key, _, rest = clause.strip().partition("=")
        items = [x.strip() for x in rest.split(",") if x.strip()]
        if key.strip().lower() == "least":
            least.update(items)
        elif key.strip().lower() == "alsorequires":
            also.extend(items)
    return least, also


def _schemes(permissions: list[Permission]) -> tuple[SecurityScheme, ...]:
    def flow_scopes(scheme: str) -> tuple[tuple[str, str], ...]:
        return tuple((p.scope, p.description) for p in permissions if p.scheme == scheme)

    def delegated(name: str, who: str) -> SecurityScheme:
        return SecurityScheme(
            name=name,
            type=SchemeType.OAUTH2,
            description=f"Microsoft identity platform, delegated permissions ({who}): "
            "the app acts for the signed-in user",
            flows=(OAuthFlow(FlowKind.AUTHORIZATION_CODE, AUTHORIZE_URL, TOKEN_URL, "", flow_scopes(name)),),
        )

    return (
        delegated(DELEGATED_WORK, "work or school accounts"),
        delegated(DELEGATED_PERSONAL, "personal Microsoft accounts"),
        SecurityScheme(
            name=APPLICATION,
            type=SchemeType.OAUTH2,
            description="Microsoft identity platform, application permissions (app roles): the app acts as itself, "
            "without a signed-in user; an administrator grants them",
            flows=(OAuthFlow(FlowKind.CLIENT_CREDENTIALS, "", TOKEN_URL, "", flow_scopes(APPLICATION)),),
            namespace=APPLICATION_NAMESPACE,
        ),
    )


def build(vendor_dir: Path) -> bytes:
    """Compile ``vendor_dir/permissions.json`` into the catalog form; same input, same bytes."""
    data = (vendor_dir / "permissions.json").read_bytes()
    source = _provenance(vendor_dir, data)
    return build_from(data, source, shipped_additions(), origin=str(vendor_dir / "permissions.json"))


def build_from(
    data: bytes,
    source: dict[str, Any],
    additions: bytes | None = None,
    *,
    origin: str = "permissions.json",
    strict: bool = True,
    docs: bytes | bool | None = True,
) -> bytes:
    """Compile Microsoft's ``permissions.json`` (``data``) with ``source`` as its provenance, and
    ramscope's reviewed ``additions`` (``additions.json``'s bytes) if any; not ``strict``, an addition
    the data no longer needs or supports is left out (see :func:`_additions`)."""
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"{origin}: not JSON: {exc}") from exc
    perms_raw = raw.get("permissions") if isinstance(raw, dict) else None
    if not isinstance(perms_raw, dict):
        raise ValueError(f"{origin}: $.permissions: expected an object")

    order = list(SCHEME_NAMES)
    permissions: list[Permission] = []
    defined: set[tuple[str, str]] = set()
    # (METHOD, normalised path) -> scheme -> {short: set of AlsoRequires alternatives ("" = alone)}
    grants: dict[tuple[str, str], dict[str, dict[str, set[str]]]] = defaultdict(lambda: defaultdict(dict))
    least: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    spellings: dict[tuple[str, str], set[str]] = defaultdict(set)

    for short in sorted(perms_raw):
        body = perms_raw[short]
        where = f"$.permissions[{short!r}]"
        if not isinstance(body, dict) or not isinstance(body.get("schemes"), dict):
            raise ValueError(f"{origin}: {where}.schemes: expected an object")
        for key in sorted(body["schemes"], key=lambda k: order.index(k) if k in order else len(order)):
            if key not in SCHEME_NAMES:
                continue
            s = body["schemes"][key]
            admin_desc = str(s.get("adminDescription") or "")
            user_desc = str(s.get("userDescription") or "")
            level = s.get("privilegeLevel")
            permissions.append(
                Permission(
                    scope=scope_string(short),
                    short=short,
                    scheme=SCHEME_NAMES[key],
                    description=admin_desc if key == "Application" else (user_desc or admin_desc),
                    admin_description=admin_desc,
                    admin_consent=bool(s.get("requiresAdminConsent", False)),
                    privilege_level=int(level) if isinstance(level, int) else None,
                )
            )
            defined.add((key, short))
        for i, pset in enumerate(body.get("pathSets") or ()):
            keys = [k for k in pset.get("schemeKeys") or () if k in SCHEME_NAMES and (k, short) in defined]
            methods = [str(m).upper() for m in pset.get("methods") or ()]
            paths = pset.get("paths") or {}
            if not isinstance(paths, dict):
                raise ValueError(f"{origin}: {where}.pathSets[{i}].paths: expected an object")
            for path, value in paths.items():
                marked, also = _clauses(str(value or ""))
                npath = normalise_path(str(path))
                for method in methods:
                    k = (method, npath)
                    spellings[k].add(str(path))
                    for scheme_key in keys:
                        scheme = SCHEME_NAMES[scheme_key]
                        alts = grants[k][scheme].setdefault(short, set())
                        alts.update(also or [""])
                        if scheme_key in marked:
                            least[k][scheme].add(short)

    added = _additions(
        orjson.loads(additions) if additions is not None else None, defined, grants, least, strict=strict
    )
    # Then what the API reference's permission tables say where permissions.json still lists nothing
    # for the scheme (compiled: scripts/graph_docs_additions.py); ``docs=True``: the shipped file.
    docs_bytes = shipped_docs() if docs is True else (docs or None)
    compiled = _additions(
        orjson.loads(docs_bytes) if docs_bytes is not None else None, defined, grants, least, strict=strict,
        fill_only=True, kind=DOCS,
    )  # fmt: skip
    for k, v in compiled.items():
        added.setdefault(k, []).extend(v)
    scheme_rank = {SCHEME_NAMES[k]: i for i, k in enumerate(order)}
    entries: list[CatalogEntry] = []
    for method, npath in sorted(grants):
        alternatives: list[tuple[SchemeRequirement, ...]] = []
        notes: tuple[str, ...] = ()
        schemes = sorted(grants[(method, npath)], key=scheme_rank.__getitem__)
        if _signed_in_user_only(npath) and APPLICATION in schemes:
            # Kept as Microsoft publishes them, but Graph answers /me with an error under an app-only
            # token ("/me request is only valid with delegated authentication flow"): said here so
            # the derivation can refuse the application alternatives of /me (the lead's call).
            notes += (ME_APP_NOTE,)
        for scheme in schemes:
            for short in sorted(grants[(method, npath)][scheme]):
                for extra in sorted(grants[(method, npath)][scheme][short]):
                    scopes = [scope_string(short)] + ([scope_string(extra)] if extra and extra != short else [])
                    alternatives.append((SchemeRequirement.of(scheme, scopes),))
        if not alternatives:
            # No alternative left would read as "needs nothing": no entry, the operation stays undetermined.
            continue
        marks = {k: v for k, v in least.get((method, npath), {}).items() if k in schemes}
        notes += tuple(added.get((method, npath), ()))
        spelled = sorted(spellings[(method, npath)])
        if len(spelled) > 1:
            # Several upstream spellings merged into this entry: say which, for whoever traces it back.
            notes += tuple(f"catalog spelling: {s}" for s in spelled)
        entries.append(
            CatalogEntry(
                method=method,
                path=npath,
                requirements=tuple(alternatives),
                least={
                    s: tuple(scope_string(x) for x in sorted(marks[s]))
                    for s in sorted(marks, key=scheme_rank.__getitem__)
                },
                notes=notes,
            )
        )
    version = f"{source['date']}+{source['commit'][:8] or source['sha256'][:8]}"
    if added and additions is not None:
        # ramscope's reviewed additions change the catalog: its version says so.
        sha = hashlib.sha256(additions or b"").hexdigest()
        version += f".r{sha[:8]}"
        source = {**source, "additions": {"file": f"src/ramscope/providers/data/{ADDITIONS}", "sha256": sha}}
    if compiled and docs_bytes is not None:
        # So does the compiled addition from the API reference.
        dsha = hashlib.sha256(docs_bytes).hexdigest()
        version += f".d{dsha[:8]}"
        source = {**source, "docs": {"file": f"src/ramscope/providers/data/{DOCS}", "sha256": dsha}}
    return encode(
        name=NAME,
        version=version,
        source=source,
        servers=SERVERS,
        schemes=_schemes(permissions),
        permissions=permissions,
        entries=entries,
    )


ADDITIONS = "microsoft-graph.additions.json"


#: The addition compiled from the API reference's permission tables (scripts/graph_docs_additions.py).
DOCS = "microsoft-graph.docs.json"


def shipped_docs() -> bytes | None:
    """The shipped compiled addition from Microsoft's API reference, if any."""
    f = resources.files(__package__) / "data" / DOCS
    return f.read_bytes() if f.is_file() else None


def shipped_additions() -> bytes | None:
    """ramscope's reviewed additions (``providers/data/microsoft-graph.additions.json``), shipped so
    that a refreshed catalog gets them too."""
    f = resources.files(__package__) / "data" / ADDITIONS
    return f.read_bytes() if f.is_file() else None


def _additions(
    doc: Any,
    defined: set[tuple[str, str]],
    grants: dict[tuple[str, str], dict[str, dict[str, set[str]]]],
    least: dict[tuple[str, str], dict[str, set[str]]],
    *,
    strict: bool = True,
    fill_only: bool = False,
    kind: str = ADDITIONS,
) -> dict[tuple[str, str], list[str]]:
    """Merge ``additions.json`` (ramscope's reviewed additions, each with its source, parsed) into
    the grants; (METHOD, normalised path) -> the notes saying so. A permission it names must exist in
    permissions.json under that scheme; an addition where permissions.json already lists the scheme
    is refused (it is a gap filler, not an override). Not ``strict`` (a refresh from a newer
    permissions.json, which may have filled the gap or renamed a permission): such an addition is
    left out instead."""
    if doc is None:
        return {}
    if not isinstance(doc, dict) or doc.get("format") != 1 or not isinstance(doc.get("additions"), list):
        raise ValueError(f"{kind}: not an additions file of format 1")
    notes: dict[tuple[str, str], list[str]] = defaultdict(list)
    for i, add in enumerate(doc["additions"]):
        where = f"{kind}: additions[{i}]"
        key, method = str(add.get("scheme", "")), str(add.get("method", "")).upper()
        if key not in SCHEME_NAMES or not add.get("source") or not add.get("permissions"):
            raise ValueError(f"{where}: needs a scheme of {sorted(SCHEME_NAMES)}, permissions and a source")
        scheme = SCHEME_NAMES[key]
        missing = [short for short in add["permissions"] if (key, short) not in defined]
        if missing:
            if not strict:
                continue
            raise ValueError(f"{where}: {missing[0]} is not a {key} permission of permissions.json")
        for raw in add.get("paths") or ():
            k = (method, normalise_path(str(raw)))
            if scheme in grants.get(k, {}):
                # A compiled addition only fills what permissions.json (and the reviewed additions) leave out.
                if not strict or fill_only:
                    continue
                raise ValueError(f"{where}: permissions.json already lists {key} permissions for {method} {raw}")
            for short in add["permissions"]:
                grants[k][scheme].setdefault(short, set()).add("")
            least[k][scheme].update(str(x) for x in add.get("least") or ())
            how = (
                f"compiled from its permission table ({add.get('page', '')} at {add.get('commit', '')[:12]})"
                if fill_only
                else f"reviewed {add.get('reviewed', '')}"
            )
            notes[k].append(f"{key} permissions added from Microsoft's API reference, {how}: {add['source']}")
    return dict(notes)


# --------------------------------------------------------------------------- least-privilege marks

_READWRITE = re.compile(r"^(.+)\.ReadWrite(\..+)?$")
_READ = re.compile(r"^(.+)\.Read(\..+)?$")


def implied(short: str) -> tuple[str, ...]:
    """Permissions ``short`` includes by Microsoft's naming: ``X.ReadWrite[.s]`` ⊇ ``X.Read[.s]`` ⊇ ``X.ReadBasic[.s]``.

    The catalog does not list every read path under the read-write permission (GET paths of one
    path set, POST of another), so without this a ``Read``/``ReadWrite`` pair is often incomparable
    by grant set although the descriptions say "read and write".
    """
    m = _READWRITE.match(short)
    if m:
        return (f"{m.group(1)}.Read{m.group(2) or ''}",)
    m = _READ.match(short)
    if m:
        return (f"{m.group(1)}.ReadBasic{m.group(2) or ''}",)
    return ()


def grant_sets(cat: Catalog, *, closure: bool = True) -> dict[str, dict[str, frozenset[int]]]:
    """scheme -> scope -> indices of the entries the scope alone satisfies under that scheme.

    With ``closure``, a permission also grants what the permissions it :func:`implied` grant.
    """
    out: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    for i, e in enumerate(cat.entries):
        for alt in e.requirements:
            if len(alt) == 1 and len(alt[0].scopes) == 1:
                out[alt[0].scheme][alt[0].scopes[0]].add(i)
    if closure:
        for grants in out.values():
            changed = True
            while changed:
                changed = False
                for scope in list(grants):
                    for other in implied(_short(scope)):
                        extra = grants.get(scope_string(other))
                        if extra and not extra <= grants[scope]:
                            grants[scope] |= extra
                            changed = True
    return {s: {p: frozenset(v) for p, v in d.items()} for s, d in out.items()}


def _minimal(cands: set[str], grant: dict[str, frozenset[int]]) -> list[str]:
    sets = {c: grant.get(c, frozenset()) for c in cands}
    return sorted(c for c in cands if not any(sets[o] < sets[c] for o in cands if o != c))


def _short(scope: str) -> str:
    return scope.rsplit("/", 1)[-1]


def choose(cat: Catalog, scheme: str, cands: set[str], grant: dict[str, frozenset[int]]) -> tuple[list[str], str]:
    """The ⊆-minimal candidates, then (if several) the lowest ``privilegeLevel``, then the fewest grants.

    Returns the remaining candidates and the step that decided (``lattice``, ``level``, ``count``)
    or ``undecided``.
    """
    best = _minimal(cands, grant)
    if len(best) == 1:
        return best, "lattice"

    def level(scope: str) -> int:
        p = cat.permission(scheme, scope)
        return p.privilege_level if p is not None and p.privilege_level is not None else 99

    low = min(level(x) for x in best)
    best = [x for x in best if level(x) == low]
    if len(best) == 1:
        return best, "level"
    fewest = min(len(grant.get(x, ())) for x in best)
    best = [x for x in best if len(grant.get(x, ())) == fewest]
    return best, "count" if len(best) == 1 else "undecided"


def _classify(outside: list[str], marked: list[str], cat: Catalog, scheme: str) -> str:
    names = [_short(x) for x in outside]
    marks = [_short(x) for x in marked]
    if any(
        re.search(r"\.(selected|ownedby|managedby|identityparentedby|appfolder)\b|resourcespecific|\.shared\b", n, re.I)
        for n in names
    ):
        return "narrower-audience: selected, owned, app-folder or shared resources only"
    if all(not n.endswith(".All") for n in names) and all(m.endswith(".All") for m in marks):
        return "narrower-audience: the signed-in user's own data, marks are organisation-wide"

    def level(scope: str) -> int:
        p = cat.permission(scheme, scope)
        return p.privilege_level if p is not None and p.privilege_level is not None else 0

    if max(level(x) for x in outside) > max(level(x) for x in marked) or (
        any("Write" in n for n in names) and not any("Write" in m for m in marks)
    ):
        return "under-listed broader permission: more privilege, fewer catalog paths"
    return "sibling permission of another family listed on fewer paths"


@dataclass(frozen=True)
class Agreement:
    """How the grant-set lattice over the catalog relates to Microsoft's ``least=`` marks.

    Over every (method, path, scheme) Microsoft marks, ``among_marked`` counts which step of
    :func:`choose` decided among the marked permissions (``lattice``, ``level``, ``count``,
    ``undecided``): whatever it picks is marked. ``unrestricted`` runs the same over every
    single-permission alternative of the entry: ``marked`` (it picks a marked one), ``outside``
    (it picks another: a disagreement, by class in ``classes``) or ``undecided``.
    """

    cases: int
    among_marked: dict[str, int]
    unrestricted: dict[str, int]
    classes: dict[str, int]
    examples: dict[str, tuple[str, ...]]

    def as_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "among_marked": dict(self.among_marked),
            "unrestricted": dict(self.unrestricted),
            "classes": dict(self.classes),
            "examples": {k: list(v) for k, v in self.examples.items()},
        }


def least_privilege_agreement(cat: Catalog, *, closure: bool = True, max_examples: int = 5) -> Agreement:
    """Compare the grant-set lattice with Microsoft's ``least=`` marks (see :class:`Agreement`)."""
    grants = grant_sets(cat, closure=closure)
    cases = 0
    among: dict[str, int] = defaultdict(int)
    free: dict[str, int] = defaultdict(int)
    classes: dict[str, int] = defaultdict(int)
    examples: dict[str, list[str]] = defaultdict(list)

    def example(kind: str, text: str) -> None:
        if len(examples[kind]) < max_examples:
            examples[kind].append(text)

    for e in cat.entries:
        for scheme, marked in e.least.items():
            if not marked:
                continue
            cases += 1
            grant = grants.get(scheme, {})
            picked, step = choose(cat, scheme, set(marked), grant)
            among[step] += 1
            if step != "lattice":
                example(f"among_marked:{step}", f"{e.key} {scheme}: {', '.join(map(_short, picked))}")
            alone = {
                a[0].scopes[0]
                for a in e.requirements
                if len(a) == 1 and a[0].scheme == scheme and len(a[0].scopes) == 1
            }
            wide, wstep = choose(cat, scheme, alone | set(marked), grant)
            if wstep == "undecided":
                free["undecided"] += 1
                continue
            if wide[0] in marked:
                free["marked"] += 1
                continue
            free["outside"] += 1
            cls = _classify(wide, picked, cat, scheme)
            classes[cls] += 1
            example(
                cls, f"{e.key} {scheme}: lattice {_short(wide[0])} ({wstep}); marked {', '.join(map(_short, picked))}"
            )
    return Agreement(cases, dict(among), dict(free), dict(classes), {k: tuple(v) for k, v in examples.items()})
