"""An organisation's rules over permission reports: the rules file (TOML) and its model.

.. code-block:: toml

    version = 1

    [[rule]]
    id = "no-cloud-platform"            # optional: defaults to the kind
    kind = "forbidden-scopes"
    severity = "error"                  # error | warning | note
    scopes = ["https://www.googleapis.com/auth/cloud-platform*"]
    providers = ["*googleapis.com*"]    # optional: authorization server or spec host globs

    [[waiver]]                          # an accepted exception, with its justification
    rule = "no-cloud-platform"
    card = "agents/ops-*.json"          # optional globs: the card's file path, access id, scope
    access = "restart-vm"               # (or tier = "OPTIONAL": a finding about a whole tier)
    justification = "SEC-1234: approved by the platform team until 2027-03"

``docs/rules.md`` documents every kind. A rules file is a stranger's file as much as a card:
every mistake is an :class:`~ramscope.errors.InputError` naming the file, the key and what
was expected, never a silently ignored rule.
"""

from __future__ import annotations

import fnmatch
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from .._parse import check_depth, read_bytes
from ..errors import InputError, LimitError
from .globs import GlobSet

__all__ = ["KINDS", "SEVERITIES", "Rule", "RuleSet", "Waiver", "card_paths", "load_rules", "parse_rules"]

SEVERITIES = ("error", "warning", "note")
_SEVERITY_ALIASES = {"info": "note"}
_IDENTITY_VALUES = ("END_USER", "AGENT", "ANY")
_TIER_VALUES = ("REQUIRED", "RECOMMENDED", "OPTIONAL")
_EFFECT_VALUES = ("write", "destructive")


@dataclass(frozen=True, slots=True)
class _Param:
    types: type | tuple[type, ...]
    default: Any = None
    required: bool = False
    choices: tuple[str, ...] = ()
    #: For lists: the type of each item.
    item: type | None = None
    #: A list of globs (compiled once into a GlobSet).
    glob: bool = False


def _globs(required: bool = False, default: Sequence[str] = ()) -> _Param:
    return _Param(list, default=list(default), required=required, item=str, glob=True)


#: Every rule kind, its parameters, and what it checks (``summary``; docs/rules.md has more).
KINDS: Mapping[str, tuple[str, Mapping[str, _Param]]] = {
    "forbidden-scopes": (
        "No access may be granted a scope or permission matching these globs (optionally only for some providers).",
        {"scopes": _globs(required=True), "providers": _globs(default=["*"])},
    ),
    "max-blast-radius": (
        "A cumulative tier's combined blast radius, per identity, stays within a maximum; optionally "
        "each access's own too.",
        {
            "max": _Param(int, required=True),
            "tier": _Param(str, default="OPTIONAL", choices=_TIER_VALUES),
            "identity": _Param(str, default="ANY", choices=_IDENTITY_VALUES),
            "max_per_access": _Param(int, default=None),
        },
    ),
    "universe-scopes": (
        "Scopes that open a whole universe (by glob, or by the number of operations they authorize) "
        "only with a justification: a waiver, or, when allowed, the card's own justification.",
        {
            "scopes": _globs(),
            "min_operations": _Param(int, default=None),
            "card_justification_min_chars": _Param(int, default=None),
        },
    ),
    "confirm-writes": (
        "Write or destructive accesses of these identities (HTTP method, MCP annotations, catalog "
        "write permissions) must set confirmation_required.",
        {
            "identities": _Param(list, default=["END_USER"], item=str),
            "effects": _Param(list, default=list(_EFFECT_VALUES), item=str),
            "unknown_as_write": _Param(bool, default=True),
        },
    ),
    "allowed-third-parties": (
        "Third-party (3P) resources only on these hosts (globs).",
        {"hosts": _globs(required=True)},
    ),
    "no-admin-consent": (
        "No access needs a permission that only an administrator can grant.",
        {"on_unknown": _Param(str, default="warning", choices=(*SEVERITIES, "ignore"))},
    ),
    "forbidden-costs": (
        "No access may be granted a permission whose cost (the provider's class, or what requesting it "
        "triggers: google-security-assessment, admin-consent, marketplace-ineligible ...) matches these globs.",
        {"costs": _globs(required=True), "on_unknown": _Param(str, default="warning", choices=(*SEVERITIES, "ignore"))},
    ),
    "max-admin-consent": (
        "A cumulative tier requests at most this many permissions an administrator must consent to.",
        {
            "max": _Param(int, required=True),
            "tier": _Param(str, default="OPTIONAL", choices=_TIER_VALUES),
            "identity": _Param(str, default="ANY", choices=_IDENTITY_VALUES),
        },
    ),
    "complete-derivation": (
        "Every access's permissions were determined (and every delegated agent's footprint), and the card is valid.",
        {},
    ),
    "max-a2a-depth": (
        "Delegation to other A2A agents that carry their own manifests stays within a maximum depth.",
        {"max": _Param(int, required=True)},
    ),
}


#: Top-level shorthands for the cost rules: key -> the rule kind's parameter its value is.
_SHORTHANDS: Mapping[str, str] = {"forbidden-costs": "costs", "max-admin-consent": "max"}


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    kind: str
    severity: str
    params: Mapping[str, Any]
    description: str = ""
    #: JSON pointer of the rule in the rules file, for error messages.
    where: str = ""
    #: Each glob-list parameter, compiled once (a rules file may hold 200,000 globs).
    globs: Mapping[str, GlobSet] = field(default_factory=dict, compare=False, repr=False)

    @property
    def summary(self) -> str:
        return self.description or KINDS[self.kind][0]

    def __getitem__(self, name: str) -> Any:
        return self.params[name]

    def glob_set(self, name: str) -> GlobSet:
        found = self.globs.get(name)
        return found if found is not None else GlobSet(self.params[name])


@dataclass(frozen=True, slots=True)
class Waiver:
    """An accepted exception. ``card`` is matched against the card's file path only (see
    :func:`card_paths`), never against the name a card gives itself. A finding about a whole tier
    (``tier`` set) is waived only by a waiver that names no ``access``; a waiver naming a ``tier``
    waives only findings about that tier."""

    rule: str
    justification: str
    card: str = "*"
    access: str = "*"
    scope: str = "*"
    tier: str = "*"
    _rx: Mapping[str, re.Pattern[str]] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Compiled once: fnmatch's own cache holds 32,768 patterns, and a rules file may hold more.
        rx = {k: re.compile(fnmatch.translate(getattr(self, k))) for k in ("card", "access", "scope", "tier")}
        object.__setattr__(self, "_rx", rx)

    def _is(self, key: str, value: str) -> bool:
        return getattr(self, key) == "*" or self._rx[key].match(value) is not None

    def covers(
        self,
        rule_id: str,
        card_paths: Sequence[str],
        access: str | None,
        scope: str | None,
        tier: str | None = None,
    ) -> bool:
        if self.rule not in (rule_id, "*"):
            return False
        if self.card != "*" and not any(self._rx["card"].match(p) for p in card_paths):
            return False
        if tier is not None:
            # A tier's finding is about everything the tier requests: a waiver of one access is not one of the tier.
            if self.access != "*" or not self._is("tier", tier):
                return False
        elif self.tier != "*" or not self._is("access", access or ""):
            return False
        return self._is("scope", scope or "")


@dataclass(frozen=True, slots=True)
class RuleSet:
    rules: tuple[Rule, ...]
    waivers: tuple[Waiver, ...] = ()
    source: str = ""
    #: The directory of the rules file: waivers' ``card`` globs match paths relative to it (and to
    #: the working directory). ``None`` for rules not read from a file.
    base_dir: str | None = None

    def rule(self, rule_id: str) -> Rule:
        return next(r for r in self.rules if r.id == rule_id)

    def has_kind(self, kind: str) -> bool:
        return any(r.kind == kind for r in self.rules)

    def waiver_for(
        self,
        rule_id: str,
        card_paths: Sequence[str],
        access: str | None,
        scope: str | None = None,
        tier: str | None = None,
    ) -> Waiver | None:
        return next((w for w in self.waivers if w.covers(rule_id, card_paths, access, scope, tier)), None)

    def card_paths(self, source: str) -> tuple[str, ...]:
        return card_paths(source, self.base_dir)


def card_paths(source: str, base_dir: str | None = None) -> tuple[str, ...]:
    """What a waiver's ``card`` glob is matched against: the card's file path relative to the rules
    file's directory and relative to the working directory ('/'-separated, normalised, so
    ``agents/../x.json`` is ``x.json``); a card read from a URL, its URL. Never the card's own
    ``name``: a card chooses that itself."""
    if not source:
        return ()
    if "://" in source:
        return (source,)
    absolute = os.path.abspath(source)
    out: list[str] = []
    for base in (base_dir, os.getcwd()):
        if base is None:
            continue
        try:
            out.append(Path(os.path.relpath(absolute, os.path.abspath(base))).as_posix())
        except ValueError:  # another drive (Windows): no relative path exists
            out.append(Path(absolute).as_posix())
    return tuple(dict.fromkeys(out))


#: The deepest a rules document may nest: rules are tables of lists of strings (depth 4 at most);
#: anything deeper is a mistake or an attack, refused before any walk or encoder recurses into it.
MAX_RULES_DEPTH = 16


def loads_rules(text: str, *, source: str = "<rules>") -> dict[str, Any]:
    """The TOML text of a rules file as its tables; :class:`InputError` for anything unreadable,
    nested too deeply (inline arrays and tables) included, never a RecursionError."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not a TOML rules file: {exc}", source=source) from None
    except RecursionError:
        # tomllib parses nested arrays and inline tables recursively: a few thousand "[" is enough.
        raise InputError("not a TOML rules file: nested too deeply", source=source) from None
    check_rules_depth(doc, source)
    return doc


def check_rules_depth(doc: Any, source: str) -> None:
    """Refuse rules nested deeper than :data:`MAX_RULES_DEPTH` (TOML or the same tables as JSON)."""
    try:
        check_depth(doc, MAX_RULES_DEPTH, source)
    except LimitError:
        raise InputError(
            f"not a rules file: nested deeper than {MAX_RULES_DEPTH} levels (rules are tables of lists)", source=source
        ) from None


def load_rules(path: str | os.PathLike[str]) -> RuleSet:
    data, label = read_bytes(path, max_bytes=4 * 1024 * 1024)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not a TOML rules file: {exc}", source=label) from None
    doc = loads_rules(text, source=label)
    return parse_rules(doc, source=label, base_dir=os.path.dirname(os.path.abspath(path)))


def parse_rules(doc: Mapping[str, Any], *, source: str = "<rules>", base_dir: str | None = None) -> RuleSet:
    def bad(where: str, what: str) -> InputError:
        return InputError(what, source=source, pointer=where)

    unknown = sorted(set(doc) - {"version", "rule", "waiver", *_SHORTHANDS})
    if unknown:
        raise bad(f"/{unknown[0]}", f"unknown key {unknown[0]!r}; expected 'version', 'rule' and 'waiver'")
    version = doc.get("version", 1)
    if version != 1:
        raise bad("/version", f"rules file version {version!r} is not supported; expected 1")
    raw_rules = doc.get("rule", [])
    if not isinstance(raw_rules, list) or not (raw_rules or any(k in doc for k in _SHORTHANDS)):
        raise bad("/rule", "expected at least one [[rule]] table")
    # ``forbidden-costs = [...]`` / ``max-admin-consent = N`` at the top: one rule of that kind each.
    tables = [(f"/rule/{i}", raw) for i, raw in enumerate(raw_rules)]
    tables += [(f"/{k}", {"kind": k, param: doc[k]}) for k, param in _SHORTHANDS.items() if k in doc]
    rules: list[Rule] = []
    seen: set[str] = set()
    for where, raw in tables:
        rule = _parse_rule(raw, where, bad)
        if rule.id in seen:
            raise bad(f"{where}/id", f"rule id {rule.id!r} is used twice; give each rule its own id")
        seen.add(rule.id)
        rules.append(rule)
    waivers: list[Waiver] = []
    raw_waivers = doc.get("waiver", [])
    if not isinstance(raw_waivers, list):
        raise bad("/waiver", "expected [[waiver]] tables")
    for i, raw in enumerate(raw_waivers):
        where = f"/waiver/{i}"
        if not isinstance(raw, dict):
            raise bad(where, "expected a table")
        extra = sorted(set(raw) - {"rule", "justification", "card", "access", "scope", "tier"})
        if extra:
            raise bad(f"{where}/{extra[0]}", f"unknown waiver key {extra[0]!r}")
        for key in ("rule", "justification", "card", "access", "scope", "tier"):
            if key in raw and not isinstance(raw[key], str):
                raise bad(f"{where}/{key}", f"{key} must be a string")
        if not raw.get("rule"):
            raise bad(f"{where}/rule", "a waiver names the rule it waives")
        if raw["rule"] != "*" and raw["rule"] not in seen:
            raise bad(f"{where}/rule", f"the waiver names rule {raw['rule']!r}, which the file does not define")
        if raw.get("tier", "*") != "*" and raw.get("access", "*") != "*":
            # A tier's finding is no access's, and an access's no tier's: such a waiver would waive nothing.
            raise bad(f"{where}/tier", "a waiver names a tier or an access, not both")
        if not str(raw.get("justification", "")).strip():
            raise bad(f"{where}/justification", "a waiver needs a justification: it is what an auditor reads")
        waivers.append(
            Waiver(
                rule=raw["rule"],
                justification=raw["justification"].strip(),
                card=raw.get("card", "*"),
                access=raw.get("access", "*"),
                scope=raw.get("scope", "*"),
                tier=raw.get("tier", "*"),
            )
        )
    return RuleSet(tuple(rules), tuple(waivers), source, base_dir)


def _parse_rule(raw: Any, where: str, bad: Any) -> Rule:
    if not isinstance(raw, dict):
        raise bad(where, "expected a table")
    kind = raw.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        raise bad(f"{where}/kind", f"unknown rule kind {kind!r}; expected one of {', '.join(KINDS)}")
    rule_id = raw.get("id", kind)
    if not isinstance(rule_id, str) or not rule_id or any(c.isspace() for c in rule_id):
        raise bad(f"{where}/id", "a rule id is a non-empty string without spaces")
    severity = raw.get("severity", "error")
    severity = _SEVERITY_ALIASES.get(severity, severity)
    if severity not in SEVERITIES:
        raise bad(f"{where}/severity", f"severity {severity!r}: expected one of {', '.join(SEVERITIES)}")
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise bad(f"{where}/description", "description must be a string")
    spec = KINDS[kind][1]
    extra = sorted(set(raw) - {"id", "kind", "severity", "description"} - set(spec))
    if extra:
        allowed = ", ".join(spec) or "none"
        raise bad(f"{where}/{extra[0]}", f"rule kind {kind!r} has no parameter {extra[0]!r} (parameters: {allowed})")
    params: dict[str, Any] = {}
    for name, p in spec.items():
        if name not in raw:
            if p.required:
                raise bad(f"{where}/{name}", f"rule kind {kind!r} needs {name!r}")
            params[name] = list(p.default) if isinstance(p.default, list) else p.default
            continue
        v: Any = raw[name]
        if isinstance(v, bool) and p.types is not bool:
            raise bad(f"{where}/{name}", f"{name} must be {_type_name(p.types)}, not a boolean")
        if not isinstance(v, p.types):
            raise bad(f"{where}/{name}", f"{name} must be {_type_name(p.types)}")
        if p.item is not None and not all(isinstance(x, p.item) for x in cast(list[Any], v)):
            raise bad(f"{where}/{name}", f"{name} must be a list of {_ITEM_NAMES.get(p.item, p.item.__name__)}")
        if isinstance(v, int) and not isinstance(v, bool) and v < 0:
            raise bad(f"{where}/{name}", f"{name} must not be negative")
        if p.choices:
            norm = str(v).upper() if p.choices[0].isupper() else v
            if norm not in p.choices:
                raise bad(f"{where}/{name}", f"{name} {v!r}: expected one of {', '.join(p.choices)}")
            v = norm
        params[name] = v
    _check_kind(kind, params, where, bad)
    globs = {n: GlobSet(params[n]) for n, p in spec.items() if p.glob}
    return Rule(rule_id, kind, severity, params, description, where, globs)


def _check_kind(kind: str, params: dict[str, Any], where: str, bad: Any) -> None:
    if kind == "confirm-writes":
        params["identities"] = [str(x).upper() for x in params["identities"]]
        for x in params["identities"]:
            if x not in ("END_USER", "AGENT"):
                raise bad(f"{where}/identities", f"identity {x!r}: expected END_USER or AGENT")
        for x in params["effects"]:
            if x not in _EFFECT_VALUES:
                raise bad(f"{where}/effects", f"effect {x!r}: expected write or destructive")
    if kind == "universe-scopes" and not params["scopes"] and params["min_operations"] is None:
        raise bad(where, "a universe-scopes rule names 'scopes' (globs) or 'min_operations', or both")


_ITEM_NAMES: Mapping[type, str] = {str: "strings", int: "whole numbers"}


def _type_name(t: type | tuple[type, ...]) -> str:
    names = {int: "a whole number", str: "a string", list: "a list", bool: "true or false"}
    if isinstance(t, tuple):
        return " or ".join(names.get(x, x.__name__) for x in t)
    return names.get(t, t.__name__)
