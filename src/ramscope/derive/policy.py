"""User policy over the scope choice (``--policy FILE``, TOML).

.. code-block:: toml

    # Exclude scopes by glob (fnmatch). The defaults below apply unless
    # use_default_excludes = false.
    exclude = ["https://www.googleapis.com/auth/drive"]
    # Among the alternatives of an access, prefer those whose scopes all match
    # (e.g. scopes your organisation already grants), even over narrower ones.
    prefer = ["https://www.googleapis.com/auth/calendar.events"]
    use_default_excludes = true

    [[pin]]                      # force the scopes of one access or one operation
    access = "create-personal-calendar-event-for-flight-reservation"
    scopes = ["https://www.googleapis.com/auth/calendar.events"]
    reason = "security review 2026-11"

    [[pin]]                      # assert, from the provider's documentation, that no
    operation = "openholidaysapi-publicholidays-v1-get"   # authorization is needed where
    scopes = []                  # the spec declares nothing (fail closed otherwise)
    reason = "public API, no key: https://www.openholidaysapi.org"

    allow_admin = false          # administrator permissions compete with a user's own (default:
                                 # set aside while a non-administrator alternative does the job)
    allow_role_bound = false     # role-bound permissions (a YouTube content owner's, a reseller's,
                                 # a Classroom teacher's) compete likewise (default: set aside)

    [[slice]]                    # opt an access (or every access of a resource) into a slice
    access = "save-report"       # permission: it is picked where it fits, instead of offered
    scopes = ["https://www.googleapis.com/auth/drive.file"]   # globs
    reason = "the agent only touches files the user opens with it"

    available = ["https://www.googleapis.com/auth/calendar.events"]   # what the app's OAuth
                                 # client is approved to request: picks only among these (globs);
                                 # or a file of them (one a line), or a table per provider:
                                 # [available] google = [...], slack = "slack-scopes.txt"

    [catalogs]                   # provider permission catalogs (ramscope.providers)
    accounts = "work"            # Microsoft Graph delegated permissions for "work" (or school)
                                 # accounts, the default, or "personal" Microsoft accounts
    resources = { outlook = "microsoft-graph", mirror = "none" }   # by resource id: use this
                                 # catalog although the spec's servers do not match it, or none
    github = "fine-grained"      # GitHub token family picked: "fine-grained" (GitHub Apps,
                                 # fine-grained tokens), the default, or "classic" (OAuth Apps,
                                 # classic tokens); the report gives the other family's pick too

Every effect a policy has on a choice is recorded in the report.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .._parse import read_bytes
from ..errors import InputError, PolicyError

__all__ = ["DEFAULT_EXCLUDES", "Pin", "Policy", "SliceOptIn", "load_policy"]

#: Context-bound scopes a normal agent cannot obtain: Google Workspace add-on scopes
#: are granted only to an add-on running inside a Gmail/Calendar UI action.
DEFAULT_EXCLUDES: tuple[str, ...] = ("*/auth/*.addons.*",)


@dataclass(frozen=True, slots=True)
class Pin:
    scopes: tuple[str, ...]
    access: str = ""
    operation: str = ""
    #: Scheme to attach pinned scopes to when the spec declares none (e.g. GitHub's).
    scheme: str = ""
    reason: str = ""

    def applies_to(self, access_id: str, operation_id: str) -> bool:
        return (bool(self.access) and self.access == access_id) or (
            bool(self.operation) and self.operation == operation_id
        )


@dataclass(frozen=True, slots=True)
class SliceOptIn:
    """The reviewer's word that an access (or a resource's accesses) stays inside a data slice."""

    scopes: tuple[str, ...]
    access: str = ""
    resource: str = ""
    reason: str = ""

    def applies(self, access_id: str, resource_id: str, scope: str) -> bool:
        hit = (bool(self.access) and self.access == access_id) or (bool(self.resource) and self.resource == resource_id)
        return hit and any(fnmatch.fnmatchcase(scope, g) for g in self.scopes)


@dataclass(frozen=True, slots=True)
class Policy:
    exclude: tuple[str, ...] = ()
    prefer: tuple[str, ...] = ()
    pins: tuple[Pin, ...] = ()
    use_default_excludes: bool = True
    source: str = field(default="", compare=False)
    #: resource id -> catalog name ("none": no catalog for that resource).
    catalog_for: tuple[tuple[str, str], ...] = ()
    #: Which Microsoft Graph delegated permissions apply: "work" (work or school) or "personal".
    graph_accounts: str = "work"
    #: Administrator permissions compete with a user's own (see ``derive.reach``).
    allow_admin: bool = False
    slices: tuple[SliceOptIn, ...] = ()
    #: Which GitHub token family END_USER accesses use: "fine-grained" or "classic".
    github_family: str = "fine-grained"
    #: What the app may request: (provider name, server URL or "*" for every server, scope globs).
    available: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Role-bound permissions (a YouTube partner's, a reseller's, a teacher's) compete with a user's own.
    allow_role_bound: bool = False

    def is_available(self, namespace: str, scope: str) -> bool:
        """May the app request ``scope`` of authorization server ``namespace``? True where the policy
        lists nothing for that server (``available`` constrains only the servers it names)."""
        lists = [globs for key, globs in self.available if _serves(key, namespace)]
        return not lists or any(_listed(scope, globs) for globs in lists)

    def made_available(self, scope: str) -> bool:
        """Does ``available`` name ``scope`` itself (so a slice permission it lists counts as opted in)?"""
        return any(_listed(scope, globs) for _, globs in self.available)

    def slice_opted(self, access_id: str, resource_id: str, scope: str) -> bool:
        """Has the reviewer opted this access into the slice permission ``scope``?"""
        return any(o.applies(access_id, resource_id, scope) for o in self.slices)

    def catalog_named_for(self, resource_id: str) -> str | None:
        return next((name for rid, name in self.catalog_for if rid == resource_id), None)

    @property
    def excludes(self) -> tuple[str, ...]:
        return (*DEFAULT_EXCLUDES, *self.exclude) if self.use_default_excludes else self.exclude

    def excluded_by(self, scope: str) -> str | None:
        """The first exclude glob matching ``scope``, if any."""
        return next((g for g in self.excludes if fnmatch.fnmatchcase(scope, g)), None)

    def preferred(self, scopes: Sequence[str]) -> bool:
        return (
            bool(scopes)
            and bool(self.prefer)
            and all(any(fnmatch.fnmatchcase(s, g) for g in self.prefer) for s in scopes)
        )

    def pin_for(self, access_id: str, operation_id: str) -> Pin | None:
        # An access pin is more specific than an operation pin.
        for p in self.pins:
            if p.access and p.access == access_id:
                return p
        return next((p for p in self.pins if p.operation and p.operation == operation_id), None)

    def to_dict(self) -> dict[str, Any]:
        return (
            {
                "source": self.source or None,
                "exclude": list(self.excludes),
                "prefer": list(self.prefer),
                "pins": [
                    {
                        k: v
                        for k, v in (
                            ("access", p.access),
                            ("operation", p.operation),
                            ("scheme", p.scheme),
                            ("reason", p.reason),
                        )
                        if v
                    }
                    | {"scopes": list(p.scopes)}
                    for p in self.pins
                ],
            }
            | ({"allow_admin": True} if self.allow_admin else {})
            | ({"allow_role_bound": True} if self.allow_role_bound else {})
            | (
                {
                    "slices": [
                        {k: v for k, v in (("access", o.access), ("resource", o.resource), ("reason", o.reason)) if v}
                        | {"scopes": list(o.scopes)}
                        for o in self.slices
                    ]
                }
                if self.slices
                else {}
            )
            | ({"available": {key: list(globs) for key, globs in self.available}} if self.available else {})
            | (
                {
                    "catalogs": {"accounts": self.graph_accounts, "resources": dict(self.catalog_for)}
                    | ({"github": self.github_family} if self.github_family != "fine-grained" else {})
                }
                if self.catalog_for or self.graph_accounts != "work" or self.github_family != "fine-grained"
                else {}
            )
        )


_TOP_KEYS = {
    *("exclude", "prefer", "pin", "use_default_excludes", "version", "catalogs", "allow_admin", "slice"),
    "available",
}
_TOP_KEYS |= {"allow_role_bound"}
_SLICE_KEYS = {"access", "resource", "scopes", "reason"}
_CATALOG_KEYS = {"accounts", "resources", "github"}
_PIN_KEYS = {"access", "operation", "scopes", "scheme", "reason"}


def load_policy(path: str | os.PathLike[str]) -> Policy:
    """Read and check a policy file; every problem is a :class:`PolicyError` naming file and key."""
    import tomllib  # noqa: PLC0415 - only runs given --policy need it

    data, source = read_bytes(path, max_bytes=1024 * 1024)
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise PolicyError("is not valid UTF-8", source=source) from None
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"invalid TOML: {exc}", source=source) from None
    except RecursionError:
        # tomllib parses nested arrays and inline tables recursively: a few thousand "[" is enough.
        raise PolicyError("invalid TOML: nested too deeply", source=source) from None
    return policy_from_dict(doc, source=source)


def policy_from_dict(doc: Mapping[str, Any], *, source: str = "<policy>") -> Policy:
    unknown = sorted(set(doc) - _TOP_KEYS)
    if unknown:
        raise PolicyError(
            f"unknown key {unknown[0]!r}; expected one of {', '.join(sorted(_TOP_KEYS))}",
            source=source,
            pointer=f"/{unknown[0]}",
        )
    version = doc.get("version", 1)
    if version != 1:
        raise PolicyError(f"policy version {version!r} is not supported (expected 1)", source=source)
    exclude = _globs(doc, "exclude", source)
    prefer = _globs(doc, "prefer", source)
    use_defaults = doc.get("use_default_excludes", True)
    if not isinstance(use_defaults, bool):
        raise PolicyError("expected true or false", source=source, pointer="/use_default_excludes")
    pins: list[Pin] = []
    for where, raw in _tables(doc, "pin", _PIN_KEYS, ("access", "operation"), ("scheme", "reason"), source):
        scopes = raw.get("scopes")
        if not isinstance(scopes, list) or not all(isinstance(s, str) and s for s in scopes):
            raise PolicyError(
                "expected an array of non-empty strings ([] asserts that no authorization is needed)",
                source=source,
                pointer=f"{where}/scopes",
            )
        pins.append(
            Pin(
                scopes=tuple(sorted(set(scopes))),
                access=raw.get("access", ""),
                operation=raw.get("operation", ""),
                scheme=raw.get("scheme", ""),
                reason=raw.get("reason", ""),
            )
        )
    catalog_for, accounts, github = _catalogs(doc.get("catalogs", {}), source)
    allow_admin = doc.get("allow_admin", False)
    if not isinstance(allow_admin, bool):
        raise PolicyError("expected true or false", source=source, pointer="/allow_admin")
    allow_role_bound = doc.get("allow_role_bound", False)
    if not isinstance(allow_role_bound, bool):
        raise PolicyError("expected true or false", source=source, pointer="/allow_role_bound")
    return Policy(
        tuple(exclude),
        tuple(prefer),
        tuple(pins),
        use_defaults,
        source,
        catalog_for,
        accounts,
        allow_admin,
        _slices(doc, source),
        github,
        _available(doc.get("available"), source),
        allow_role_bound=allow_role_bound,
    )


def _slices(doc: Mapping[str, Any], source: str) -> tuple[SliceOptIn, ...]:
    out: list[SliceOptIn] = []
    for where, item in _tables(doc, "slice", _SLICE_KEYS, ("access", "resource"), ("reason",), source):
        scopes = item.get("scopes")
        if not isinstance(scopes, list) or not scopes or not all(isinstance(g, str) and g for g in scopes):
            raise PolicyError(
                "expected a non-empty array of non-empty strings (scope globs)",
                source=source,
                pointer=f"{where}/scopes",
            )
        out.append(SliceOptIn(tuple(scopes), item.get("access", ""), item.get("resource", ""), item.get("reason", "")))
    return tuple(out)


def _tables(
    doc: Mapping[str, Any],
    key: str,
    allowed: set[str],
    one_of: tuple[str, str],
    strings: tuple[str, ...],
    source: str,
) -> list[tuple[str, dict[str, Any]]]:
    """The ``[[key]]`` entries, each with its pointer, checked: tables of known keys, string fields,
    naming exactly one of ``one_of``."""
    raw = doc.get(key, [])
    if not isinstance(raw, list):
        raise PolicyError(f"expected an array of tables ([[{key}]])", source=source, pointer=f"/{key}")
    out: list[tuple[str, dict[str, Any]]] = []
    for i, item in enumerate(raw):
        where = f"/{key}/{i}"
        if not isinstance(item, dict):
            raise PolicyError("expected a table", source=source, pointer=where)
        bad = sorted(set(item) - allowed)
        if bad:
            raise PolicyError(
                f"unknown key {bad[0]!r}; expected one of {', '.join(sorted(allowed))}",
                source=source,
                pointer=f"{where}/{bad[0]}",
            )
        for field_name in (*one_of, *strings):
            if not isinstance(item.get(field_name, ""), str):
                raise PolicyError("expected a string", source=source, pointer=f"{where}/{field_name}")
        if bool(item.get(one_of[0])) == bool(item.get(one_of[1])):
            raise PolicyError(
                f"a {key} names exactly one of {one_of[0]!r} or {one_of[1]!r}", source=source, pointer=where
            )
        out.append((where, item))
    return out


def _catalogs(raw: Any, source: str) -> tuple[tuple[tuple[str, str], ...], str, str]:
    from ..providers import CATALOGS  # noqa: PLC0415 - the registry, not the data

    if not isinstance(raw, dict):
        raise PolicyError("expected a table ([catalogs])", source=source, pointer="/catalogs")
    bad = sorted(set(raw) - _CATALOG_KEYS)
    if bad:
        raise PolicyError(
            f"unknown key {bad[0]!r}; expected one of {', '.join(sorted(_CATALOG_KEYS))}",
            source=source,
            pointer=f"/catalogs/{bad[0]}",
        )
    accounts = raw.get("accounts", "work")
    if accounts not in ("work", "personal"):
        raise PolicyError('expected "work" or "personal"', source=source, pointer="/catalogs/accounts")
    github = raw.get("github", "fine-grained")
    if github not in ("fine-grained", "classic"):
        raise PolicyError('expected "fine-grained" or "classic"', source=source, pointer="/catalogs/github")
    resources = raw.get("resources", {})
    if not isinstance(resources, dict):
        raise PolicyError(
            "expected a table of resource id = catalog name", source=source, pointer="/catalogs/resources"
        )
    names = {*CATALOGS, "none"}
    for rid, name in resources.items():
        if name not in names:
            raise PolicyError(
                f"unknown catalog {name!r}; expected one of {', '.join(sorted(names))}",
                source=source,
                pointer=f"/catalogs/resources/{rid}",
            )
    return tuple(sorted(resources.items())), accounts, github


#: A Microsoft Graph permission may be listed by its short name (``Mail.Read``), as Entra shows it.
_GRAPH = "https://graph.microsoft.com/"


@lru_cache(maxsize=16)
def _split(globs: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The plain names (a set lookup) and the patterns (fnmatch) of an ``available`` list: a file of
    thousands of approved scopes costs a lookup per scope, not thousands of matches."""
    patterns = tuple(g for g in globs if any(c in g for c in "*?["))
    return frozenset(globs) - frozenset(patterns), patterns


def _listed(scope: str, globs: tuple[str, ...]) -> bool:
    names, patterns = _split(globs)
    forms = (scope, scope.removeprefix(_GRAPH)) if scope.startswith(_GRAPH) else (scope,)
    return any(f in names for f in forms) or any(fnmatch.fnmatchcase(f, g) for f in forms for g in patterns)


def _serves(key: str, namespace: str) -> bool:
    from ..providers.authserver import canonical_server  # noqa: PLC0415
    from ..providers.costs import PROVIDERS  # noqa: PLC0415 - provider names -> servers

    if key == "*":
        return True
    server = PROVIDERS.get(key) or canonical_server(key)
    return namespace == server or namespace.startswith(server.rstrip("/") + "/")


#: A file of available scopes: at most this big, one scope (or glob) a line, ``#`` comments.
_AVAILABLE_FILE_BYTES = 1024 * 1024


def _available(raw: Any, source: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if raw is None:
        return ()
    if isinstance(raw, dict):
        from ..providers.costs import PROVIDERS  # noqa: PLC0415

        out: list[tuple[str, tuple[str, ...]]] = []
        for key, value in sorted(raw.items()):
            if key not in PROVIDERS and not str(key).startswith("https://"):
                raise PolicyError(
                    f"unknown provider {key!r}; expected one of {', '.join(sorted(PROVIDERS))} or an "
                    "authorization server URL (https://...)",
                    source=source,
                    pointer=f"/available/{key}",
                )
            out.append((str(key), _available_list(value, source, f"/available/{key}")))
        return tuple(out)
    return (("*", _available_list(raw, source, "/available")),)


def _available_list(raw: Any, source: str, pointer: str) -> tuple[str, ...]:
    if isinstance(raw, str) and raw:
        return _available_file(raw, source, pointer)
    if not isinstance(raw, list) or not all(isinstance(g, str) and g for g in raw):
        raise PolicyError(
            "expected an array of non-empty strings (the scopes the app may request) or the path of a file of them",
            source=source,
            pointer=pointer,
        )
    return tuple(raw)


def _available_file(name: str, source: str, pointer: str) -> tuple[str, ...]:
    from pathlib import Path  # noqa: PLC0415

    base = Path(source).parent if source and not source.startswith("<") else Path()
    path = Path(name) if Path(name).is_absolute() else base / name
    try:
        data, _ = read_bytes(path, max_bytes=_AVAILABLE_FILE_BYTES)
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise PolicyError(f"{path}: is not valid UTF-8", source=source, pointer=pointer) from None
    except InputError as exc:  # missing, a directory, over the limit: said as the policy's own error
        raise PolicyError(f"{path}: {exc.detail}", source=source, pointer=pointer) from None
    scopes = tuple(line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip())
    if not scopes:
        raise PolicyError(f"{path}: names no scope", source=source, pointer=pointer)
    return scopes


def _globs(doc: Mapping[str, Any], key: str, source: str) -> list[str]:
    v = doc.get(key, [])
    if not isinstance(v, list) or not all(isinstance(g, str) and g for g in v):
        raise PolicyError("expected an array of non-empty strings (glob patterns)", source=source, pointer=f"/{key}")
    return list(v)
