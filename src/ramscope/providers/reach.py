"""What a permission reaches beyond the operations that list it: level, principal, data slice, limits.

"Least" counted as the smallest grant set is not least privilege: ``drive.photos.readonly`` opens
fewer Drive methods than ``drive.readonly`` yet cannot list a user's documents, ``chat.app.*``
scopes open little but only an app authenticating as itself can hold them, and a write permission
may open as few operations as a read one. A :class:`Reach` says, for one permission:

- **level**: read < write < manage (administration, full control, permissions of others);
- **principal**: who can hold it: an end user (delegated, or the app with its own credentials where
  the scheme allows), an app authenticating as itself only, an administrator of an organisation, or
  the holder of a role the provider grants apart from an ordinary account (a YouTube content owner or
  partner, a reseller, a Classroom teacher): ``condition`` names the role;
- **slice**: the part of the caller's data it reaches, in words, where it is not "all the caller's
  data the operation addresses" (files this app created, the app-data folder, Photos, public
  calendars, the user's own profile fields, metadata without bodies or search);
- **limits**: what it cannot do although the operation accepts it (no message bodies, no search);
- **deprecated**: a legacy spelling with a current replacement.

Classes come from the providers' own words: each permission's description (Discovery scope
descriptions, Graph's consent texts, GitHub's permission names), read by the small rules below, and
a reviewed table of exceptions in ``data/reach.json``, each entry with its source. Unknown
permissions of any spec are classed by the same rules from their name and the spec's description;
a class the rules cannot tell is ``unknown`` and never outranks a known one.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from functools import cache, lru_cache
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

import orjson

__all__ = [
    "Level",
    "OperationReach",
    "Principal",
    "Reach",
    "classify",
    "endpoint_families",
    "family_known",
    "operation_note",
    "permission_family",
    "provider_of",
    "provider_of_servers",
    "reach_table_version",
    "same_operation",
]


class Level(IntEnum):
    """How much a permission may do with what it reaches.

    Ordered by :attr:`rank`: an unknown level ranks above read (it may do anything) and below write.
    """

    UNKNOWN = 0
    READ = 1
    WRITE = 2
    MANAGE = 3

    @property
    def rank(self) -> int:
        return _RANK[self]


class Principal(StrEnum):
    """Who can hold a permission."""

    USER = "user"
    APP = "app"
    ADMIN = "admin"
    #: Only the holder of a role the provider grants apart from an ordinary account can use it: a YouTube
    #: content owner (partner), a Workspace reseller, a Classroom teacher of the class.
    ROLE = "role"


_RANK = {Level.READ: 0, Level.UNKNOWN: 1, Level.WRITE: 2, Level.MANAGE: 3}


@dataclass(frozen=True, slots=True)
class Reach:
    """One permission's class (see the module docstring)."""

    scope: str
    level: Level
    principal: Principal = Principal.USER
    #: A machine tag of the data slice ("" = all the caller's data the operation addresses).
    slice: str = ""
    #: The slice's condition, in words, for people ("only files this app created or the user opened with it").
    condition: str = ""
    #: fnmatch patterns of operation ids whose own job lies inside the slice (a file the app creates is
    #: one it created), so the slice does the operation's job in general.
    satisfied_by: tuple[str, ...] = ()
    limits: tuple[str, ...] = ()
    deprecated: str = ""
    #: Where the class comes from: "description", "name", or the exception's source URL.
    source: str = "name"
    why: str = ""
    #: An approval its holder needs beyond the grant itself, in words ("" = none): Chat's ``chat.app.*``
    #: scopes need a Workspace administrator's one-time approval of the app.
    approval: str = ""
    #: Narrower permissions the provider documents as part of this one (HubSpot's legacy ``e-commerce``:
    #: products and line items, each with its own scopes): where one of them is listed, it does the job.
    includes: tuple[str, ...] = ()

    def satisfied(self, operation_id: str) -> bool:
        """Does the operation itself stay inside this permission's slice? (Under any of its API's versions'
        names: Drive v2's ``files.insert`` is v3's ``files.create``.)"""
        names = same_operation(operation_id)
        return bool(operation_id) and any(fnmatch.fnmatchcase(n, p) for n in names for p in self.satisfied_by)

    @property
    def narrowing(self) -> str:
        """Its slice's condition, or its limits, in words ("" when it reaches all the data in full)."""
        return self.condition or "; ".join(self.limits)

    def to_dict(self) -> dict[str, Any]:
        """Its report JSON: one dict per class, shared by every alternative, rival and pick that
        names the scope (a card of 800 accesses with 50 alternatives each built 340,000 of them).
        Report dicts are read, never changed, once built."""
        return _reach_dict(self)

    def _dict(self) -> dict[str, Any]:
        return {
            "level": self.level.name.lower(),
            "principal": self.principal.value,
            "slice": self.slice or None,
            "condition": self.condition or None,
            "limits": list(self.limits),
            "deprecated": self.deprecated or None,
            "source": self.source,
            "why": self.why,
        } | ({"approval": self.approval} if self.approval else {})


@lru_cache(maxsize=65_536)
def _reach_dict(reach: Reach) -> dict[str, Any]:
    return reach._dict()


@dataclass(frozen=True, slots=True)
class OperationReach:
    """A reviewed note on one operation whose permissions no general rule explains."""

    operation: str
    #: Why its listed permissions cannot be derived (scripts.run needs whatever the script uses).
    undetermined: str
    source: str


GOOGLE_PREFIXES = ("https://www.googleapis.com/auth/", "https://mail.google.com/", "https://www.google.com/")
GRAPH_PREFIX = "https://graph.microsoft.com/"


def provider_of(scope: str, hint: str = "") -> str:
    """``google``, ``microsoft-graph``, ``github`` or ``""`` (any other spec) for a scope."""
    if hint:
        return hint
    if scope.startswith(GOOGLE_PREFIXES):
        return "google"
    if scope.startswith(GRAPH_PREFIX):
        return "microsoft-graph"
    return ""


def provider_of_servers(servers: Sequence[str]) -> str:
    """The provider whose own scope-naming rules or reviewed classes apply to a spec served at ``servers``
    (``zoom``, ``hubspot``), or ``""``."""
    for url in servers:
        host = (urlsplit(str(url)).hostname or "").lower()
        if host == "zoom.us" or host.endswith(".zoom.us"):
            return "zoom"
        if host == "api.hubapi.com":
            return "hubspot"
    return ""


def _short(scope: str) -> str:
    for p in (*GOOGLE_PREFIXES[:1], GRAPH_PREFIX):
        if scope.startswith(p):
            return scope[len(p) :]
    return scope


# --------------------------------------------------------------------------- the reviewed table


@cache
def _table() -> Mapping[str, Any]:
    data = (resources.files(__package__) / "data" / "reach.json").read_bytes()
    doc = orjson.loads(data)
    if not isinstance(doc, dict) or doc.get("format") != 1:
        raise ValueError("providers/data/reach.json: not a reach table of format 1")
    return doc


def reach_table_version() -> str:
    """The reviewed table's version and content hash: a stored report derived with other classes is
    not reused, and a report names the table it was ranked with."""
    raw = (resources.files(__package__) / "data" / "reach.json").read_bytes()
    return f"{_table().get('version', '')}+{hashlib.sha256(raw).hexdigest()[:12]}"


def _exception(provider: str, scope: str) -> Mapping[str, Any] | None:
    section = _table().get("permissions", {}).get(provider or "any", {})
    hit = section.get(scope)
    if hit is None:
        hit = section.get(_short(scope))
    return hit if isinstance(hit, dict) else None


@cache
def _versions() -> Mapping[str, str]:
    out: dict[str, str] = {}
    for section in _table().get("versions", {}).values():
        if isinstance(section, dict):
            out.update((k, str(v)) for k, v in section.get("operations", {}).items())
    return out


def same_operation(operation_id: str) -> tuple[str, ...]:
    """``operation_id`` and its name in the API's current version, from the table's ``versions``
    (Drive v2's ``drive.files.insert`` is v3's ``drive.files.create``), so the classes' operation
    patterns apply across versions."""
    other = _versions().get(operation_id)
    return (operation_id, other) if other else (operation_id,)


def operation_note(provider: str, operation_id: str) -> OperationReach | None:
    """The reviewed note on ``operation_id`` of ``provider``, if any."""
    hit = _table().get("operations", {}).get(provider, {}).get(operation_id)
    if not isinstance(hit, dict):
        return None
    return OperationReach(operation_id, str(hit["undetermined"]), str(hit["source"]))


def permission_family(scope: str) -> str:
    """The resource family a provider's permission names: ``Mail`` of ``Mail.ReadWrite``, ``Group`` of
    ``Group-NestingSupport.ReadWrite.All`` (Graph's ``Resource[-Part].Operation`` naming)."""
    return _short(scope).split(".", 1)[0].split("-", 1)[0]


def endpoint_families(provider: str, path: str) -> frozenset[str]:
    """The reviewed families (``families`` of the table) whose path words name a segment of ``path``."""
    table = _table().get("families", {}).get(provider, {})
    segments = {seg.lower() for seg in re.split(r"[/.]", path) if seg}
    return frozenset(
        fam for fam, body in table.items() if isinstance(body, dict) and segments & set(body.get("segments", ()))
    )


def family_known(provider: str, family: str) -> bool:
    """Does the table know ``family``'s path words (so its absence from a path means something)?"""
    return family in _table().get("families", {}).get(provider, {})


# --------------------------------------------------------------------------- the rules

#: A read-only marker ending the name (``.readonly``, ``.Read.All``, ``:read``, ``read_only``) decides
#: first: ``admin.directory.user.readonly`` reads, however administrative its family.
_READ_END = re.compile(
    r"(?:[._:/\-](?:readonly|read[-_]only|read|ReadBasic|view|viewer)(?:\.(?:All|Shared|Selected|OwnedBy|Chat|Group|"
    r"Hosted|AppFolder|User))*|\.Read(?:Basic)?(?:\.[A-Za-z]+)*)$",
)
_MANAGE_NAME = re.compile(
    r"(?:^|[._:/\-])(?:admin|full_control|FullControl|Manage|owner|superuser)(?:$|[._:\-])|^admin[_:]|:admin$",
)
_WRITE_NAME = re.compile(
    r"ReadWrite|(?:^|[._:/\-])(?:write|writeonly|edit|create|send|insert|compose|modify|delete|update|upload|"
    r"import|manage|read_write|readwrite)(?:$|[._:\-])|^write[_:]",
    re.IGNORECASE,
)
_READ_NAME = re.compile(r"(?:^|[._:/\-])(?:readonly|read[-_]only|read|view|list)(?:$|[._:\-])|^read[_:]", re.IGNORECASE)
_READ_WORDS = re.compile(r"^(?:see|view|read|download|look up|get|list|know|move a copy|copy)\b", re.IGNORECASE)
_WRITE_WORDS = re.compile(
    r"\b(?:edit|create|creates|delete|deletes|change|changes|modify|send|compose|add|remove|update|upload|insert|"
    r"write|manage|move|publish|share|submit|post|import|make|take|perform|execute|run|record|transfer|"
    r"revoke|set|store|turn)\b",
    re.IGNORECASE,
)
_MANAGE_WORDS = re.compile(
    r"\b(?:full control|full access|administer|administration|permissions? (?:of|for) (?:other|all)|"
    r"manage (?:the )?(?:data access )?permissions|as an administrator)\b",
    re.IGNORECASE,
)
_USE_WORDS = re.compile(r"^(?:use|apply|translate|index|verify|receive|associate|search)\b", re.IGNORECASE)
_APP_WORDS = re.compile(r"^on their own behalf\b|\bwithout a signed-in user\b", re.IGNORECASE)
_ADMIN_WORDS = re.compile(
    r"\b(?:your domain|your organi[sz]ation(?!'s google workspace directory)|managed by your organi[sz]ation|"
    r"owned by your organi[sz]ation|google workspace domain|for your customers|as an administrator)\b",
    re.IGNORECASE,
)


def _level(name: str, description: str) -> tuple[Level, str]:
    """The level the name says, else the description's verbs; with the reason."""
    if _READ_END.search(name):
        return Level.READ, f"the name {name!r} says read-only"
    if _MANAGE_NAME.search(name):
        return Level.MANAGE, f"the name {name!r} says administration or full control"
    if _WRITE_NAME.search(name):
        return Level.WRITE, f"the name {name!r} says it writes"
    if _READ_NAME.search(name):
        return Level.READ, f"the name {name!r} says read-only"
    d = description.strip()
    if d:
        if _MANAGE_WORDS.search(d):
            return Level.MANAGE, "its description says full control or administration"
        # "View and manage", "See, edit, create, and delete", "Read, compose, send": a write verb anywhere.
        if _WRITE_WORDS.search(d) and not re.match(r"^(?:move a copy|copy)\b", d, re.IGNORECASE):
            return Level.WRITE, "its description names a write verb"
        if _READ_WORDS.search(d):
            return Level.READ, "its description only sees or views"
        if _USE_WORDS.search(d):
            return Level.WRITE, "its description says it acts (uses, applies, indexes), which is more than reading"
        if d.startswith("Private Service:"):
            return Level.WRITE, "a private service's scope: nothing says it only reads"
    return Level.UNKNOWN, "neither its name nor a description says what it may do"


#: A provider's words for a role apart from an ordinary account: the classes one teaches (Classroom), the
#: audit with a YouTube partner, a reseller's customers. Reviewed against every Google scope description
#: (tests/test_reach_roles.py); the table names the rest (``youtubepartner``, the Reseller scopes).
_ROLE_WORDS = re.compile(
    r"\b(?:classes you teach(?: or administer)?|with a youtube partner|as a reseller|your reseller)\b", re.IGNORECASE
)


def _principal(provider: str, name: str, description: str) -> tuple[Principal, str, str]:
    """Who can hold it, why, and (for a role) the role in words."""
    if _APP_WORDS.search(description) or (provider == "google" and name.startswith(("chat.app.", "chat.bot"))):
        return Principal.APP, "only an app authenticating as itself can hold it", ""
    role = _ROLE_WORDS.search(description)
    if role is not None:
        return Principal.ROLE, f"its description names a role: {role.group(0)!r}", f"only {_role_name(role.group(0))}"
    if provider == "google":
        segments = name.split(".")
        # Workspace administration (the Admin SDK, Chat's and Drive's admin scopes), not a Cloud
        # product's own "admin" scope (bigtable.admin administers the caller's own tables).
        workspace_admin = segments[0] == "admin" or (segments[0] in ("chat", "drive") and segments[1:2] == ["admin"])
        if workspace_admin or _ADMIN_WORDS.search(description):
            return Principal.ADMIN, "it acts on an organisation's data as its administrator", ""
    return Principal.USER, "", ""


def _role_name(words: str) -> str:
    w = words.lower()
    if "teach" in w:
        return "a teacher of the class can hold it"
    if "partner" in w:
        return "a YouTube partner (content owner) can hold it"
    return "a reseller can hold it"


#: Google: "Authorization scopes that begin with chat.app require one-time administrator approval".
CHAT_APP_APPROVAL = "https://developers.google.com/workspace/chat/authenticate-authorize-chat-app"


def _approval(provider: str, name: str) -> str:
    if provider == "google" and name.startswith("chat.app."):
        return f"a Google Workspace administrator's one-time approval of the Chat app ({CHAT_APP_APPROVAL})"
    return ""


#: Zoom's scope levels: a scope without a suffix reaches the authorizing user's own data, `:admin`
#: every user's of the account, `:master` the sub accounts' too (classic and granular scopes alike).
ZOOM_SCOPE_LEVELS = "https://developers.zoom.us/docs/integrations/oauth-scopes-granular/"
_ZOOM_LEVEL = re.compile(r":(admin|master)(?=:|$)")  # classic ones put it mid-name: meeting_token:read:admin:x


def _classify_zoom(scope: str, name: str) -> Reach:
    """Zoom's names say both: ``<service>:<action>[:<data>]`` with the action second (`read`, `write`,
    `update`, `patch`, `delete`), and a level suffix whose data it reaches (`meeting:read:admin` reads every
    user's meetings: whose data, not what it may do)."""
    suffix = _ZOOM_LEVEL.search(name)
    bare = name[: suffix.start()] + name[suffix.end() :] if suffix else name
    parts = bare.split(":")
    action = parts[1] if len(parts) > 1 else ""
    if action == "read":
        level, why = Level.READ, f"Zoom's action in {name!r} is read"
    elif action in ("write", "update", "patch", "delete"):
        level, why = Level.WRITE, f"Zoom's action in {name!r} is {action}"
    else:
        level, why = _level(bare, "")
    if suffix is None:
        return Reach(scope, level, Principal.USER, source="name", why=f"{why}; the user's own data")
    reach = "every user of the account" if suffix.group(1) == "admin" else "the sub accounts too"
    return Reach(scope, level, Principal.ADMIN, source=ZOOM_SCOPE_LEVELS,
                 why=f"{why}; Zoom's :{suffix.group(1)} level reaches {reach}")  # fmt: skip


def classify(scope: str, description: str = "", *, provider: str = "", app_only: bool = False) -> Reach:
    """The class of ``scope`` (see the module docstring): the reviewed table first, then the rules.

    ``app_only``: the scheme that grants it has no flow but the app's own credentials (Graph's
    application permissions, a GitHub App's installation token), so only an app can hold it.
    """
    provider = provider_of(scope, provider)
    name = _short(scope)
    if provider == "microsoft-graph":
        from ._reach_graph import classify_graph  # noqa: PLC0415 - the provider's rules, loaded when used

        reach = classify_graph(scope, name, description, app_only=app_only)
    elif provider == "github":
        from ._reach_github import classify_github  # noqa: PLC0415 - the provider's rules, loaded when used

        reach = classify_github(scope, name, description, app_only=app_only)
    elif provider == "zoom":
        reach = _classify_zoom(scope, name)
    else:
        level, why = _level(name, description)
        principal, pwhy, role = _principal(provider, name, description)
        if app_only and principal is Principal.USER:
            principal, pwhy = Principal.APP, "its scheme has no flow but the app's own credentials"
        reach = Reach(
            scope,
            level,
            principal,
            condition=role,
            approval=_approval(provider, name),
            source="name" if "name" in why else ("description" if level is not Level.UNKNOWN else "none"),
            why="; ".join(w for w in (why, pwhy) if w),
        )
    return _with_exception(provider, scope, reach)


def _with_exception(provider: str, scope: str, reach: Reach) -> Reach:
    """``reach`` overridden by the reviewed table's entry for ``scope``, if any."""
    hit = _exception(provider, scope)
    if hit is None:
        return reach
    level = Level[str(hit["level"]).upper()] if "level" in hit else reach.level
    return Reach(
        scope,
        level,
        Principal(hit.get("principal", reach.principal.value)),
        slice=str(hit.get("slice", reach.slice)),
        condition=str(hit.get("condition", reach.condition)),
        satisfied_by=tuple(hit.get("satisfied_by", reach.satisfied_by)),
        limits=tuple(hit.get("limits", reach.limits)),
        deprecated=str(hit.get("deprecated", reach.deprecated)),
        source=str(hit["source"]),
        why=str(hit.get("why", reach.why)),
        approval=str(hit.get("approval", reach.approval)),
        includes=tuple(hit.get("includes", reach.includes)),
    )
