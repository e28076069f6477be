"""GitHub REST: fine-grained permissions per endpoint, from github/docs' GitHub Apps data.

GitHub's OpenAPI description declares no security; github/docs publishes, per endpoint, the
fine-grained permissions a GitHub App or a fine-grained personal access token needs and which
token kinds may call it (``vendor/github/``, MIT, see its ``SOURCES.md``). This module compiles
those five files into a :class:`~ramscope.providers.catalog.Catalog`.

Atoms are ``<permission>:<level>`` (``issues:read``, ``issues:write``, ``organization_projects:admin``).
Levels are ordered read < write < admin and a higher level grants the lower ones, so an endpoint
that needs ``issues:read`` has the alternatives ``{issues:read}`` or ``{issues:write}``. Where GitHub
lists several permissions for one endpoint they are ANDed: the alternatives are the product of each
permission's acceptable levels (see *Reconciliation* for why AND).

Two schemes, both in the grant namespace ``https://github.com`` (a GitHub App's permissions are
granted once, at installation, and bound both kinds of token):

* ``github-user`` (END_USER): a GitHub App acting for a signed-in user (user access token,
  "user-to-server", OAuth authorization-code flow) or a fine-grained personal access token;
* ``github-installation`` (AGENT): an installation access token ("server-to-server", the app's
  JWT exchanged at ``/app/installations/{installation_id}/access_tokens``; modelled as client
  credentials).

An endpoint gets a scheme's alternatives only where GitHub lists it as callable by that token
kind; otherwise the entry carries a note saying so, which the derivation reports as
``no-compatible-alternative``.

Reconciliation of the five files (their upstream commits differ; ``SOURCES.md``):

* Which token kinds may call an endpoint: ``user-to-server-rest.json`` (user access tokens),
  ``fine-grained-pat.json`` (fine-grained PATs), ``server-to-server-rest.json`` (installation
  tokens). These are the newest files; a ``false`` ``user-to-server`` / ``server-to-server`` flag
  in ``server-to-server-permissions.json`` also withdraws a kind.
* Which permissions: ``server-to-server-permissions.json`` (newer; GitHub App permissions are the
  same permissions fine-grained PATs use). Its ``additional-permissions`` is a bare ``true``; the
  permissions it stands for are the other permissions that list the same endpoint in the same
  file, which is how github/docs' generator writes one entry per permission of each permission
  set. Where that file has no entry, ``fine-grained-pat-permissions.json`` (older), whose
  ``additional-permissions`` names them and whose own entries give their levels. Where both have
  the endpoint and disagree, the newer file wins and the entry's notes name the difference.
* Neither generation of the data says whether several permissions are one permission set (all
  needed) or several sets (any one suffices): the older generator merged all sets into one object
  before writing. ANDing them never under-states what a token needs; the entry's notes say when
  it may over-state. (It does for PUT/DELETE ``/repos/{owner}/{repo}/contents/{path}``, POST
  ``/releases`` and the git-refs writes: the newer file lists ``contents`` twice there, a sign of
  two sets, ``contents:write`` alone or with ``workflows:write`` for workflow files; the data
  cannot say which set is which, so both permissions are required.)
* ``metadata:read`` is named where GitHub names it; GitHub grants it with any repository
  permission, which the lattice here does not model (it only makes a choice look wider).
* An endpoint that some token kind may call but that no permission list names gets **no entry**
  (undetermined): it may be permissionless or newer than the permission lists, and the data
  cannot tell which.

Catalog servers: ``https://api.github.com`` and GitHub Enterprise Server's ``https://HOST/api/v3``
(octokit's GHES specs say ``{protocol}://{hostname}/api/v3``, ``http://hostname/api/v3`` after
substituting the defaults). The data describes github.com (``fpt``, API version 2022-11-28); on a
GHES version it is the nearest published data, not that version's own.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from itertools import product
from pathlib import Path
from typing import Any

import orjson

from ..specs.model import (
    FlowKind,
    OAuthFlow,
    Requirement,
    SchemeRequirement,
    SchemeType,
    SecurityScheme,
    normalize_path,
)
from .catalog import CatalogEntry, CatalogError, Permission, encode

__all__ = [
    "CLASSIC",
    "FAMILIES",
    "GHES_SERVERS",
    "INSTALLATION",
    "LEVELS",
    "MARKED_SERVERS",
    "NAME",
    "NAMESPACE",
    "SERVERS",
    "USER",
    "build",
    "normalise_path",
    "schemes",
]

NAME = "github"
USER = "github-user"
INSTALLATION = "github-installation"
#: OAuth Apps and classic personal access tokens: classic OAuth scopes (``repo``, ``read:org`` ...).
CLASSIC = "github-classic"
#: The token families a policy chooses between (``[catalogs] github``).
FAMILIES: dict[str, tuple[str, ...]] = {"fine-grained": (USER, INSTALLATION), "classic": (CLASSIC, INSTALLATION)}
CLASSIC_FILE = "classic.json"
SCOPES_TABLE = "oauth-scopes/scopes-for-oauth-apps.table.md"
NAMESPACE = "https://github.com"
#: Ordered: each level grants the ones before it.
LEVELS: tuple[str, ...] = ("read", "write", "admin")

#: Over :func:`ramscope.providers.authserver.normalise_url` of a spec's server URL.
SERVERS: tuple[str, ...] = (r"^https://api\.github\.com$",)
#: GitHub Enterprise Server's API (``https://HOST/api/v3``): any host could be one, so these serve a spec
#: only where it says it is GitHub's GHES description (``info.x-github-plan: ghes``, as every GHES
#: description GitHub publishes does), never for a mere ``/api/v3`` base path, and never over plain http
#: but for GitHub's own unfilled template (``{protocol}://{hostname}/api/v3``, defaults ``http`` and
#: ``HOSTNAME``: no real host). Issue 30, item 16.
GHES_SERVERS: tuple[str, ...] = (r"^https://[^/]+/api/v3$", r"^http://hostname/api/v3$")
#: ``x-github-plan`` value -> the server patterns a spec with that marker may be served by besides SERVERS.
MARKED_SERVERS: dict[str, tuple[str, ...]] = {"ghes": GHES_SERVERS}

DATA_DIR = "fpt-2022-11-28"
UPSTREAM_PATH = f"src/github-apps/data/{DATA_DIR}/"
FILES = (
    "fine-grained-pat-permissions.json",
    "fine-grained-pat.json",
    "server-to-server-permissions.json",
    "server-to-server-rest.json",
    "user-to-server-rest.json",
)
_METHODS = frozenset({"get", "put", "post", "delete", "patch", "head", "options", "trace"})

_INSTALLATION_TOKEN_URL = "https://api.github.com/app/installations/{installation_id}/access_tokens"

NOTE_NO_USER = (
    "GitHub does not list this endpoint as available to user access tokens (user-to-server) "
    "or fine-grained personal access tokens"
)
NOTE_NO_INSTALLATION = "GitHub does not list this endpoint as available to installation tokens (server-to-server)"
NOTE_PAT_ONLY = (
    "for END_USER, GitHub lists this endpoint for fine-grained personal access tokens but not for "
    "a GitHub App's user access tokens (user-to-server)"
)
NOTE_NO_PAT = (
    "for END_USER, GitHub lists this endpoint for a GitHub App's user access tokens (user-to-server) "
    "but not for fine-grained personal access tokens"
)


def normalise_path(path: str) -> str:
    """Parameter names erased (``/repos/{owner}/{repo}`` → ``/repos/{}/{}``), as for any spec path.

    GitHub's ``requestPath`` values are the OpenAPI path keys of the same description, so nothing
    else differs between the two sides.
    """
    return normalize_path(path)


def schemes(
    scopes: Mapping[str, Iterable[tuple[str, str]]] | None = None,
) -> tuple[SecurityScheme, SecurityScheme, SecurityScheme]:
    """The three catalog schemes, with the (scope, description) pairs each grants."""
    scopes = scopes or {}
    user = SecurityScheme(
        name=USER,
        type=SchemeType.OAUTH2,
        description=(
            "A GitHub App acting on behalf of the signed-in user (user access token, user-to-server), "
            "or a fine-grained personal access token: the user grants the app's fine-grained permissions, "
            "limited to what the user may do"
        ),
        flows=(
            OAuthFlow(
                FlowKind.AUTHORIZATION_CODE,
                authorization_url="https://github.com/login/oauth/authorize",
                token_url="https://github.com/login/oauth/access_token",  # noqa: S106 - a URL, not a secret
                scopes=tuple(scopes.get(USER, ())),
            ),
        ),
        namespace=NAMESPACE,
    )
    installation = SecurityScheme(
        name=INSTALLATION,
        type=SchemeType.OAUTH2,
        description=(
            "A GitHub App acting as itself (installation access token, server-to-server): the app's JWT "
            "is exchanged for a token with the permissions granted at installation"
        ),
        flows=(
            OAuthFlow(
                FlowKind.CLIENT_CREDENTIALS,
                token_url=_INSTALLATION_TOKEN_URL,
                scopes=tuple(scopes.get(INSTALLATION, ())),
            ),
        ),
        namespace=NAMESPACE,
    )
    classic = SecurityScheme(
        name=CLASSIC,
        type=SchemeType.OAUTH2,
        description=(
            "An OAuth App acting for the signed-in user, or a classic personal access token: classic OAuth scopes, "
            "each granting access to everything of its kind the user can reach"
        ),
        flows=(
            OAuthFlow(
                FlowKind.AUTHORIZATION_CODE,
                authorization_url="https://github.com/login/oauth/authorize",
                token_url="https://github.com/login/oauth/access_token",  # noqa: S106 - a URL, not a secret
                scopes=tuple(scopes.get(CLASSIC, ())),
            ),
        ),
        namespace=NAMESPACE,
    )
    return user, installation, classic


# --------------------------------------------------------------------------- build


def _load(vendor_dir: Path, name: str) -> Any:
    path = vendor_dir / DATA_DIR / name
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise CatalogError(f"{path}: {exc}") from exc


_ROW = re.compile(
    r"^\|\s*(?:fpt-2022-11-28/)?([\w.-]+\.json)\s*\|\s*([0-9a-f]{40})\s*\|\s*(\d+)\s*\|\s*([0-9a-f]{64})\s*\|$"
)
_RETRIEVED = re.compile(r"^- Retrieved: (\d{4}-\d{2}-\d{2})\b", re.MULTILINE)


def _sources(vendor_dir: Path) -> tuple[dict[str, tuple[str, int, str]], str]:
    """SOURCES.md's table (file -> commit, bytes, sha256) and its retrieval date, each file checked."""
    path = vendor_dir / "SOURCES.md"
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise CatalogError(f"{path}: {exc}") from exc
    rows: dict[str, tuple[str, int, str]] = {}
    for line in text.splitlines():
        m = _ROW.match(line.strip())
        if m:
            rows[m.group(1)] = (m.group(2), int(m.group(3)), m.group(4))
    missing = [f for f in FILES if f not in rows]
    if missing:
        raise CatalogError(f"{path}: no commit/sha256 row for {', '.join(missing)}")
    for f in FILES:
        data = (vendor_dir / DATA_DIR / f).read_bytes()
        _, size, sha = rows[f]
        if len(data) != size or hashlib.sha256(data).hexdigest() != sha:
            raise CatalogError(f"{vendor_dir / DATA_DIR / f}: does not match SOURCES.md (bytes or sha256)")
    date = _RETRIEVED.search(text)
    if date is None:
        raise CatalogError(f"{path}: no '- Retrieved: YYYY-MM-DD' line")
    return {f: rows[f] for f in FILES}, date.group(1)


Key = tuple[str, str]  # (METHOD, requestPath)


def _endpoints(doc: Any, name: str) -> set[Key]:
    if not isinstance(doc, dict):
        raise CatalogError(f"{name}: expected an object of categories")
    out: set[Key] = set()
    for cat, ops in doc.items():
        if not isinstance(ops, list):
            raise CatalogError(f"{name}: /{cat}: expected a list of endpoints")
        for i, op in enumerate(ops):
            out.add(_key(op, f"{name}: /{cat}/{i}"))
    return out


def _key(op: Any, where: str) -> Key:
    if not isinstance(op, dict) or not isinstance(op.get("verb"), str) or not isinstance(op.get("requestPath"), str):
        raise CatalogError(f"{where}: expected an object with string 'verb' and 'requestPath'")
    verb = op["verb"].lower()
    if verb not in _METHODS:
        raise CatalogError(f"{where}/verb: unknown HTTP method {op['verb']!r}")
    return verb.upper(), op["requestPath"]


def _permission_rows(doc: Any, name: str) -> list[tuple[str, Key, dict[str, Any]]]:
    if not isinstance(doc, dict):
        raise CatalogError(f"{name}: expected an object of permissions")
    rows: list[tuple[str, Key, dict[str, Any]]] = []
    for perm, body in doc.items():
        entries = body.get("permissions") if isinstance(body, dict) else None
        if not isinstance(entries, list):
            raise CatalogError(f"{name}: /{perm}/permissions: expected a list")
        for i, e in enumerate(entries):
            where = f"{name}: /{perm}/permissions/{i}"
            key = _key(e, where)
            if e.get("access") not in LEVELS:
                raise CatalogError(f"{where}/access: expected one of {', '.join(LEVELS)}, got {e.get('access')!r}")
            rows.append((perm, key, e))
    return rows


def _higher(a: str, b: str) -> str:
    return a if LEVELS.index(a) >= LEVELS.index(b) else b


def _either(needs: Mapping[str, str], classic: Mapping[str, Any] | None) -> bool:
    """Are ``needs`` a pair of permission sets GitHub documents as alternatives (issues or pull requests)?"""
    sets = ((classic or {}).get("either") or {}).get("sets") or ()
    return len(needs) > 1 and any(set(needs) == set(s) for s in sets)


def _alternatives(
    scheme: str, needs: Mapping[str, str], known: Mapping[str, set[str]], either: bool = False
) -> list[Requirement]:
    """Each permission at any known level at or above the one needed, ANDed: the product; or, for a
    pair GitHub documents as alternative permission sets (``either``), each alone."""
    if either:
        return [
            (SchemeRequirement.of(scheme, [f"{perm}:{lv}"]),)
            for perm in sorted(needs)
            for lv in LEVELS[LEVELS.index(needs[perm]) :]
            if lv in known[perm]
        ]
    choices: list[list[str]] = []
    for perm in sorted(needs):
        floor = LEVELS.index(needs[perm])
        choices.append([f"{perm}:{lv}" for lv in LEVELS[floor:] if lv in known[perm]])
    return [(SchemeRequirement.of(scheme, combo),) for combo in product(*choices)]


def build(vendor_dir: Path) -> bytes:
    """Compile ``vendor_dir`` (``vendor/github``) into the catalog format, deterministically."""
    rows, date = _sources(vendor_dir)
    user_rest = _endpoints(_load(vendor_dir, "user-to-server-rest.json"), "user-to-server-rest.json")
    pat_rest = _endpoints(_load(vendor_dir, "fine-grained-pat.json"), "fine-grained-pat.json")
    inst_rest = _endpoints(_load(vendor_dir, "server-to-server-rest.json"), "server-to-server-rest.json")
    s2s_doc = _load(vendor_dir, "server-to-server-permissions.json")
    fg_doc = _load(vendor_dir, "fine-grained-pat-permissions.json")
    s2s_rows = _permission_rows(s2s_doc, "server-to-server-permissions.json")
    fg_rows = _permission_rows(fg_doc, "fine-grained-pat-permissions.json")

    titles: dict[str, tuple[str, str]] = {}
    for doc in (fg_doc, s2s_doc):  # the newer file's titles win
        for perm, body in doc.items():
            titles[perm] = (str(body.get("title") or perm.replace("_", " ")), str(body.get("displayTitle") or ""))
    known: dict[str, set[str]] = defaultdict(set)

    s2s: dict[Key, dict[str, str]] = defaultdict(dict)
    user_flag: dict[Key, bool] = {}
    inst_flag: dict[Key, bool] = {}
    for perm, key, e in s2s_rows:
        known[perm].add(e["access"])
        s2s[key][perm] = _higher(e["access"], s2s[key].get(perm, "read"))
        user_flag[key] = user_flag.get(key, True) and e.get("user-to-server") is not False
        inst_flag[key] = inst_flag.get(key, True) and e.get("server-to-server") is not False
    fg: dict[Key, dict[str, str]] = defaultdict(dict)
    fg_named: dict[Key, set[str]] = defaultdict(set)
    for perm, key, e in fg_rows:
        known[perm].add(e["access"])
        fg[key][perm] = _higher(e["access"], fg[key].get(perm, "read"))
        extra = e.get("additional-permissions")
        if not isinstance(extra, list) or not all(isinstance(x, str) for x in extra):
            raise CatalogError(
                f"fine-grained-pat-permissions.json: /{perm}: additional-permissions of {key} is not a list of names"
            )
        fg_named[key].update(extra)

    # A bare `true` must be backed by the other permissions listing the endpoint; a name in the
    # older file's list must have its own entry (it carries the level). Both hold for the shipped
    # data; a refresh that breaks them is refused rather than compiled into a guess.
    for perm, key, e in s2s_rows:
        if e.get("additional-permissions") is True and len(s2s[key]) < 2 and _dup_count(s2s_rows, perm, key) < 2:
            raise CatalogError(
                f"server-to-server-permissions.json: /{perm}: {key} says additional permissions, none listed"
            )
    for key, names in fg_named.items():
        if not names <= set(fg[key]):
            missing = sorted(names - set(fg[key]))
            raise CatalogError(f"fine-grained-pat-permissions.json: {key} names {missing} without entries")

    classic = _classic(vendor_dir)
    scope_table = _scope_table(vendor_dir)
    dups: dict[Key, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for perm, key, _e in s2s_rows:
        dups[key][perm] += 1
    added = {(str(e["method"]).upper(), str(e["path"])): e for e in classic["endpoints"]}
    public = {(str(m).upper(), str(p)) for m, p in classic["public"]["endpoints"]}

    entries: list[CatalogEntry] = []
    used: dict[str, set[str]] = {USER: set(), INSTALLATION: set(), CLASSIC: set()}
    stats = {"callable_without_permission_data": 0, "permission_data_not_callable": 0, "fine_grained_disagrees": 0}
    for key in sorted(set(s2s) | set(fg) | set(added), key=lambda k: (k[1], k[0])):
        method, path = key
        addition = added.get(key)
        in_user = key in user_rest and user_flag.get(key, True)
        in_pat = key in pat_rest
        in_inst = key in inst_rest and inst_flag.get(key, True)
        if not (in_user or in_pat or in_inst) and addition is None:
            stats["permission_data_not_callable"] += 1
            continue
        notes: list[str] = []
        needs = dict(s2s.get(key) or fg.get(key) or {})
        conditional: list[tuple[str, str, str]] = []
        for perm, rule in classic["conditional"].items():
            # The same permission listed twice is two permission sets: the extra one is needed only
            # in the case GitHub names (workflows:write for workflow files), not always.
            if perm in needs and len(needs) == 2 and any(n >= 2 for p2, n in dups[key].items() if p2 != perm):
                level = needs.pop(perm)
                for scheme in (USER, INSTALLATION):
                    conditional.append((scheme, f"{perm}:{level}", str(rule["condition"])))
                conditional.append((CLASSIC, str(rule["classic"]), str(rule["condition"])))
                notes.append(f"{perm}:{level} only {str(rule['condition']).removeprefix('only ')} ({rule['source']})")
        if key in s2s and key in fg and fg[key] != s2s[key]:
            stats["fine_grained_disagrees"] += 1
            notes.append(
                "GitHub's older fine-grained PAT permission list names "
                + _describe(fg[key])
                + "; its newer GitHub App list, used here, names "
                + _describe(s2s[key])
            )
        reviewed = addition is not None and (not needs or not (in_user or in_pat or in_inst))
        if len(needs) > 1 and not reviewed and not _either(needs, classic):
            notes.append(
                f"GitHub lists {len(needs)} permissions for this endpoint ({', '.join(sorted(needs))}) without saying "
                "whether they are needed together or are alternatives; all are required here"
            )
        reqs: list[Requirement] = []
        fine: list[Requirement] = []
        if addition is not None and reviewed:
            # An endpoint the vendored permission lists lack (or no token kind may call by them):
            # ramscope's reviewed reading of GitHub's docs, for the token kinds GitHub lists (all if none).
            listed = in_user or in_pat or in_inst
            for combo in addition.get("fine_grained") or ():
                if in_user or in_pat or not listed:
                    fine.append((SchemeRequirement.of(USER, combo),))
                if in_inst or not listed:
                    fine.append((SchemeRequirement.of(INSTALLATION, combo),))
            if not addition.get("fine_grained"):
                why = addition.get("fine_grained_reason") or classic["fine_grained_cannot"]["reason"]
                notes.append(f"{why} ({addition.get('fine_grained_source') or addition['source']})")
            notes.append(f"from ramscope's reviewed reading of GitHub's docs: {addition['source']}")
            reqs.extend(fine)
            for alt in fine:
                used[alt[0].scheme].update(alt[0].scopes)
        else:
            either = _either(needs, classic)
            if either:
                src = classic["either"]["source"]
                notes.append(f"{' or '.join(sorted(needs))}: either permission set suffices ({src})")
            if in_user or in_pat:
                alts = _alternatives(USER, needs, known, either)
                reqs.extend(alts)
                used[USER].update(s for alt in alts for t in alt for s in t.scopes)
                if not in_user:
                    notes.append(NOTE_PAT_ONLY)
                elif not in_pat:
                    notes.append(NOTE_NO_PAT)
            else:
                notes.append(NOTE_NO_USER)
            if in_inst:
                alts = _alternatives(INSTALLATION, needs, known, either)
                reqs.extend(alts)
                used[INSTALLATION].update(s for alt in alts for t in alt for s in t.scopes)
            else:
                notes.append(NOTE_NO_INSTALLATION)
        classic_alts = _classic_alternatives(
            addition, needs, classic["permissions"], in_user or in_pat, classic.get("either")
        )
        reqs.extend(classic_alts)
        used[CLASSIC].update(s for alt in classic_alts for t in alt for s in t.scopes)
        open_text = ""
        if key in public or (addition is not None and addition.get("public")):
            open_text = str(classic["public"]["reason"])
        if not reqs:
            continue
        entries.append(CatalogEntry(method, path, tuple(reqs), {}, tuple(notes), tuple(conditional), open_text))
    callable_any = user_rest | pat_rest | inst_rest
    stats["callable_without_permission_data"] = len(callable_any - set(s2s) - set(fg) - set(added))

    ambiguous = _ambiguous_titles(titles)
    permissions: list[Permission] = []
    scope_lists: dict[str, list[tuple[str, str]]] = {}
    for scheme in (USER, INSTALLATION):
        pairs: list[tuple[str, str]] = []
        for scope in sorted(used[scheme]):
            perm, level = scope.rsplit(":", 1)
            title, display = titles.get(perm, (perm.replace("_", " "), ""))
            desc = f"{title} ({level})"
            if perm in ambiguous and display:
                desc = f"{title} ({level}; {display.split(' permissions for ')[0].lower()})"
            admin = f"{display} ({level})" if display else desc
            permissions.append(Permission(scope, scope, scheme, desc, admin))
            pairs.append((scope, desc))
        scope_lists[scheme] = pairs
    pairs = []
    for scope in sorted(set(scope_table) | used[CLASSIC]):
        desc = scope_table.get(scope, ("", ""))[0]
        permissions.append(Permission(scope, scope, CLASSIC, desc, desc))
        pairs.append((scope, desc))
    scope_lists[CLASSIC] = pairs

    # The classic table and ramscope's reviewed reading change the catalog as much as GitHub's lists do.
    extra = "".join(
        f"{name}\0{hashlib.sha256((vendor_dir / name).read_bytes()).hexdigest()}\n"
        for name in (CLASSIC_FILE, SCOPES_TABLE)
    )
    digest = hashlib.sha256(("".join(f"{f}\0{rows[f][2]}\n" for f in FILES) + extra).encode()).hexdigest()
    source = {
        "repository": "github/docs",
        "path": UPSTREAM_PATH,
        "commit": "",
        "commits": {f: rows[f][0] for f in FILES},
        "sha256": {f: rows[f][2] for f in FILES},
        "date": date,
        "date_kind": "retrieved (upstream commit dates not recorded)",
        "license": "MIT",
        "license_file": "vendor/github/LICENSE-CODE",
        "api_version": "2022-11-28",
        **stats,
    }
    source["classic"] = {
        "scopes": f"github/docs content/apps/oauth-apps/building-oauth-apps/scopes-for-oauth-apps.md "
        f"(excerpt: vendor/github/{SCOPES_TABLE}, CC-BY-4.0)",
        "mapping": f"vendor/github/{CLASSIC_FILE} (ramscope's reviewed reading of GitHub's docs)",
    }
    parents = {k: v[1] for k, v in scope_table.items() if v[1]}

    def implied(short: str) -> tuple[str, ...]:
        # A classic scope includes those GitHub's table nests under it (repo ⊇ public_repo, repo:status ...).
        return tuple(sorted(k for k, parent in parents.items() if parent == short))

    return encode(
        name=NAME,
        version=f"{date}+{digest[:8]}",
        source=source,
        servers=SERVERS + GHES_SERVERS,
        schemes=schemes(scope_lists),
        permissions=permissions,
        entries=entries,
        normalise=normalise_path,
        implied=implied,
    )


def _classic(vendor_dir: Path) -> dict[str, Any]:
    path = vendor_dir / CLASSIC_FILE
    try:
        doc = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise CatalogError(f"{path}: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != 1:
        raise CatalogError(f"{path}: not a classic-scope table of format 1")
    for k in ("permissions", "conditional", "endpoints", "public", "fine_grained_cannot"):
        if k not in doc:
            raise CatalogError(f"{path}: no {k!r}")
    return doc


_SCOPE_ROW = re.compile(r"^(&emsp;)?\**`([^`]+)`\**\s*\|\s*(.*)$")
_LIQUID = re.compile(r"\{%-?[^%]*%\}")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def _scope_table(vendor_dir: Path) -> dict[str, tuple[str, str]]:
    """scope -> (GitHub's description, the scope it is nested under or "") from the vendored table,
    its sha256 checked against SOURCES.md."""
    path = vendor_dir / SCOPES_TABLE
    data = path.read_bytes()
    sources = (vendor_dir / "SOURCES.md").read_text("utf-8")
    m = re.search(r"scopes-for-oauth-apps\.table\.md[^\n]*?([0-9a-f]{64})", sources)
    if m is None or hashlib.sha256(data).hexdigest() != m.group(1):
        raise CatalogError(f"{path}: does not match the sha256 in SOURCES.md")
    out: dict[str, tuple[str, str]] = {}
    parent = ""
    for line in data.decode("utf-8").splitlines():
        row = _SCOPE_ROW.match(line.strip())
        if row is None or row.group(2) == "(no scope)":
            continue
        nested, scope, text = row.groups()
        text = _LINK.sub(r"\1", _LIQUID.sub("", text))
        text = re.sub(r"\{%[^}]*", "", text).replace("<br/>", " ").replace("<br>", " ").replace("**", "")
        text = " ".join(re.sub(r"\{\{[^}]*\}\}", "", text).split())
        out[scope] = (text, parent if nested else "")
        if not nested:
            parent = scope
    return out


def _classic_alternatives(
    addition: Mapping[str, Any] | None,
    needs: Mapping[str, str],
    mapping: Mapping[str, Mapping[str, list[str]]],
    user_callable: bool,
    either: Mapping[str, Any] | None = None,
) -> list[Requirement]:
    """The classic scopes that do what ``needs`` asks: each permission's classic scopes at its level,
    ANDed (a product, each combination as a set). None when a permission has no classic equivalent."""
    if addition is not None and (addition.get("classic") or addition.get("classic_none")):
        # classic_none: a classic token with no scope at all does the job (the authenticated user's profile).
        none: list[Requirement] = [(SchemeRequirement.of(CLASSIC, []),)] if addition.get("classic_none") else []
        return none + [(SchemeRequirement.of(CLASSIC, [scope]),) for scope in addition.get("classic") or ()]
    if not user_callable or not needs:
        return []
    if _either(needs, {"either": either}):
        out = {tuple((mapping.get(p) or {}).get(lv) or ()) for p, lv in needs.items()}
        return [(SchemeRequirement.of(CLASSIC, [s]),) for s in sorted({s for group in out for s in group})]
    choices: list[list[str]] = []
    for perm, level in sorted(needs.items()):
        scopes = (mapping.get(perm) or {}).get(level)
        if not scopes:
            return []
        choices.append(list(scopes))
    combos = sorted({tuple(sorted(set(c))) for c in product(*choices)})
    return [(SchemeRequirement.of(CLASSIC, list(c)),) for c in combos]


def _dup_count(rows: list[tuple[str, Key, dict[str, Any]]], perm: str, key: Key) -> int:
    return sum(1 for p, k, _ in rows if p == perm and k == key)


def _describe(needs: Mapping[str, str]) -> str:
    return ", ".join(f"{p}:{lv}" for p, lv in sorted(needs.items()))


def _ambiguous_titles(titles: Mapping[str, tuple[str, str]]) -> set[str]:
    by_title: dict[str, list[str]] = defaultdict(list)
    for perm, (title, _) in titles.items():
        by_title[title.lower()].append(perm)
    return {p for perms in by_title.values() if len(perms) > 1 for p in perms}
