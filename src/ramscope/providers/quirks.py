"""Provider quirks: how a provider's own spec is to be read, as data (``data/quirks.json``).

OpenAPI says the scopes of one requirement are all needed. Several providers list alternatives
there instead (Slack's ``conversations.history``: one scope per conversation type), name scopes
they have since retired (Slack's perspectival ``chat:write:user``, Figma's ``files:read``), use an
empty list for "the full-access scope" (Asana), or mark an operation anonymous where only a site
setting makes it so (Jira). Each quirk is the provider's documented reading, with its source page;
a provider is matched by its API's server URL only (the spec's ``servers``, else where it is served),
anchored at a label boundary and at the end: a reading of the provider's own API, never lent to a
spec elsewhere that merely names the provider's OAuth endpoints (issue 30). ``match.domains`` are
the provider's own registrable domains (:func:`provider_domains`, for ``provider-scope-borrowed``).

:func:`apply` returns the index read that way (a new, frozen index; the spec's own index stays as
it was). Every alternative a quirk made is recorded in ``OperationEntry.extra["quirks"]`` with the
quirk, so a report says where each pick came from:

* ``scope_lists: any-of``: ``{scheme: [a, b]}`` is ``{scheme: [a]}`` or ``{scheme: [b]}``;
* ``deprecated``: a retired scope becomes its replacement (for the token type it was of) or, with
  no replacement, is dropped where the operation offers another alternative (kept otherwise, and
  flagged);
* ``token_types``: the OAuth scheme is split into a user-token scheme (END_USER) and a bot-token
  scheme (AGENT, its own grant namespace); scopes granted to one token type only stay with it, and
  ``bot_names`` gives a user-token scope's bot-token counterpart where it has another name (Slack's
  ``channels:write`` is ``channels:manage`` on a bot token, ``channels:join`` for joining);
* ``contextual``: alternatives that differ only by a family prefix (``channels:history`` /
  ``im:history``) are chosen by the data the call addresses, which the card does not say: the
  choice is ambiguous, with the alternatives listed, never all of them required;
* ``empty_scopes``: an OAuth term with no scope needs the named full-access scope;
  ``empty_scopes_by_method`` / ``empty_scopes_by_path``: the scope (any one of a list) the provider
  documents for the method, or for the path prefix and method (GitLab ``read_api`` / ``api``; Box's
  content, user, group, webhook, metadata, retention, legal-hold, Sign, AI, Relay and enterprise
  scopes); an alternative there may be a list of scopes all needed (a scope with the one it depends
  on), an empty list says the provider names no scope there (the bare token), and a rule may carry
  an ``admin`` note (the calling user must be an administrator: a note and a ``requires-admin``
  diagnostic, not a permission);
* ``anonymous: offered``: the empty (anonymous) alternative is a condition of the site, offered,
  not picked;
* ``added_scheme``: a token the provider documents for every operation, added where the spec
  gives no OAuth alternative (PagerDuty's Classic User OAuth, ``read`` / ``write`` over all the
  user's resources, where no scoped-OAuth scope is named), its scope by method;
* ``added_flows``: grants the provider documents beside those the spec declares (Zoom's
  Server-to-Server OAuth: the account-credentials grant an app holds its own token by);
* ``not_expressible``: providers whose tokens cannot express least privilege at all (Salesforce,
  ClickUp): a diagnostic says so plainly (:func:`not_expressible`);
* ``allowed_for``: the role an operation's description says may call it, where the provider
  documents that convention (Zendesk's "Allowed For" section): an operation allowed for
  administrators only gets a note (``principal: administrator``), no permission; likewise
  ``permissions_required``: Atlassian's "Permissions required" paragraph, where it is exactly
  "*Administer Jira* global permission"; and ``admin_scopes``: an operation every OAuth alternative of
  which needs an administrator's scope (Slack's ``admin.*``);
* ``object_type_in_path``: a spec that gives every operation of a generic service one list of
  alternatives for all object types (HubSpot's CRM objects: 80 scopes, from
  ``crm.objects.appointments.read`` to ``tickets``) where the path names the object type
  (``/crm/objects/2026-09-beta/contacts``): only the alternatives the provider documents for that
  type stay (``crm.objects.contacts.read`` / ``.write``), and only where the spec lists them; a
  path whose type is a parameter (``{objectType}``) keeps them all (the data addressed decides);
* ``user_credential_only``: operations the provider documents as answering a user's credential only
  (PagerDuty's ``GET /users/me``, "will not work ... with an account-level access token"): the
  alternatives without an OAuth scheme are dropped, so an app identity gets no answer rather than
  the account's key; ``oauth_refused``: the reverse (Asana's audit log takes a Service Account's
  personal access token only): the OAuth alternatives are dropped, with an administrator's note;
* ``administrator_operations``: operations the provider's reference says only an administrator may
  call, each ``"METHOD /path"`` with the sentence that says so (DocuSign's "you must be an account
  administrator"): an administrator's note, the permission unchanged.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any

import orjson

from ..specs.model import (
    FlowKind,
    OAuthFlow,
    OperationEntry,
    Requirement,
    Requirements,
    SchemeRequirement,
    SchemeType,
    SecurityScheme,
    SpecIndex,
    reqs_to_json,
)
from .authserver import normalise_url

__all__ = [
    "NotExpressible",
    "Quirks",
    "apply",
    "data_version",
    "load",
    "match",
    "not_expressible",
    "provider_domains",
]


#: At most this many readings of one alternative (the product of its terms' readings).
MAX_READINGS = 256


@dataclass(frozen=True)
class Quirks:
    """One provider's quirks, as compiled in ``data/quirks.json`` (see the module docstring)."""

    name: str
    servers: tuple[re.Pattern[str], ...]
    authorization_servers: tuple[re.Pattern[str], ...]
    raw: Mapping[str, Any]
    domains: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"quirk:{self.name}"


@dataclass(frozen=True)
class NotExpressible:
    name: str
    message: str
    source: str
    servers: tuple[re.Pattern[str], ...]
    authorization_servers: tuple[re.Pattern[str], ...]


def _patterns(raw: Any) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(str(p)) for p in raw or ())


@cache
def load() -> tuple[tuple[Quirks, ...], tuple[NotExpressible, ...], str]:
    """The shipped quirks, the providers that cannot express least privilege, the data's version."""
    data = orjson.loads(resources.files("ramscope.providers").joinpath("data", "quirks.json").read_bytes())
    quirks = tuple(
        Quirks(
            str(p["name"]),
            _patterns(p["match"].get("servers")),
            _patterns(p["match"].get("authorization_servers")),
            p,
            tuple(str(d) for d in p["match"].get("domains", ())),
        )
        for p in data["providers"]
    )
    nope = tuple(
        NotExpressible(
            str(p["name"]),
            str(p["message"]),
            str(p["source"]),
            _patterns(p["match"].get("servers")),
            _patterns(p["match"].get("authorization_servers")),
        )
        for p in data.get("not_expressible", ())
    )
    return quirks, nope, str(data.get("version", ""))


@cache
def data_version() -> str:
    """The shipped quirks' version and content hash: stored reports derived with other quirks are not reused."""
    raw = resources.files("ramscope.providers").joinpath("data", "quirks.json").read_bytes()
    return f"{load()[2]}+{hashlib.sha256(raw).hexdigest()[:12]}"


def _auth_urls(index: SpecIndex) -> list[str]:
    return [normalise_url(u) for s in index.schemes for f in s.flows for u in (f.token_url, f.authorization_url) if u]


def _servers(index: SpecIndex) -> list[str]:
    raw = index.extra.get("servers")
    return [normalise_url(str(u)) for u in raw] if isinstance(raw, list) else []


def _matches(servers: Sequence[re.Pattern[str]], auths: Sequence[re.Pattern[str]], index: SpecIndex) -> bool:
    # The API's own hosts only: a spec whose servers are elsewhere gets no provider reading, whatever
    # OAuth endpoints it names (``auths`` no longer widens the match; a Slack-named token URL on a
    # stranger's API is flagged as borrowing instead, derive.borrowing).
    del auths
    own = _servers(index) or ([normalise_url(index.url)] if index.url else [])
    return any(p.search(u) for p in servers for u in own)


@cache
def provider_domains() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(provider name, its own registrable domains) of every provider with quirks or not-expressible data."""
    data = orjson.loads(resources.files("ramscope.providers").joinpath("data", "quirks.json").read_bytes())
    out: dict[str, tuple[str, ...]] = {}
    for p in (*data["providers"], *data.get("not_expressible", ())):
        doms = tuple(str(d) for d in p["match"].get("domains", ()))
        if doms:
            out.setdefault(str(p["name"]), doms)
    return tuple(out.items())


def match(index: SpecIndex) -> Quirks | None:
    """The provider quirks that apply to the spec, if any."""
    quirks, _, _ = load()
    return next((q for q in quirks if _matches(q.servers, q.authorization_servers, index)), None)


def not_expressible(index: SpecIndex) -> NotExpressible | None:
    """The provider of this spec, when its tokens cannot express least privilege."""
    _, nope, _ = load()
    return next((n for n in nope if _matches(n.servers, n.authorization_servers, index)), None)


# --------------------------------------------------------------------------- applying


def apply(index: SpecIndex) -> SpecIndex:
    """``index`` read with its provider's quirks (itself when none applies)."""
    q = match(index)
    if q is None:
        return index
    return _Apply(q, index).run()


class _Apply:
    def __init__(self, q: Quirks, index: SpecIndex) -> None:
        self.q = q
        self.index = index
        raw = q.raw
        self.any_of = (raw.get("scope_lists") or {}).get("reading") == "any-of"
        self.deprecated = {str(d["scope"]): d for d in raw.get("deprecated", ())}
        self.empty = raw.get("empty_scopes")
        self.anonymous = raw.get("anonymous")
        self.contextual = list(raw.get("contextual", ()))
        self.tokens = raw.get("token_types")
        self.bot_names: dict[str, Mapping[str, Any]] = {
            str(r["scope"]): r for r in ((self.tokens or {}).get("bot_names") or ())
        }
        self.by_method = raw.get("empty_scopes_by_method")
        self.by_path: list[Mapping[str, Any]] = list(raw.get("empty_scopes_by_path", ()))
        self.allowed_for: Mapping[str, Any] | None = raw.get("allowed_for")
        self.by_type: Mapping[str, Any] | None = raw.get("object_type_in_path")
        self.schemes = tuple(self._override(s) for s in index.schemes)
        self.added = raw.get("added_scheme")
        if isinstance(self.added, Mapping):
            a = self.added
            scopes = tuple((str(k), str(v)) for k, v in (a.get("scopes") or {}).items())
            described = f"{a.get('description', '')} ({a['source']})".strip()
            self.schemes = (*self.schemes, _quirk_scheme(str(a["name"]), described, a, scopes))
        self.oauth = {s.name for s in self.schemes if s.type is SchemeType.OAUTH2}
        self.bot: dict[str, SecurityScheme] = {}
        if self.tokens:
            for s in self.schemes:
                if s.name in self.oauth:
                    self.bot[s.name] = SecurityScheme(
                        f"{s.name}#bot",
                        SchemeType.OAUTH2,
                        f"{q.name} bot token ({self.tokens['bot']['source']})",
                        flows=(OAuthFlow(FlowKind.CLIENT_CREDENTIALS, token_url=_first_token_url(s)),),
                        inferred=True,
                        namespace=f"{normalise_url(_first_token_url(s) or q.name)}#bot",
                    )

    def _override(self, s: SecurityScheme) -> SecurityScheme:
        """A token scheme the spec types as a bare credential whose tokens the provider documents as
        scoped (Sentry's auth tokens, GitLab's personal access tokens): an OAuth-typed scheme of
        the same name, so its scopes are grants (the spec's scope lists, or the quirk's)."""
        o = (self.q.raw.get("scheme_overrides") or {}).get(s.name)
        if s.type is SchemeType.OAUTH2:
            return self._added_flows(s)
        if not isinstance(o, Mapping):
            return s
        return _quirk_scheme(s.name, f"{s.description} ({o.get('description', '')}; {o['source']})".strip(), o)

    def _added_flows(self, s: SecurityScheme) -> SecurityScheme:
        """An OAuth scheme with the grants the provider documents beside those its spec declares
        (Zoom's files declare the user's authorization code only; its Server-to-Server apps get the
        account's token by an account-credentials grant, which is how an agent holds its scopes)."""
        a = self.q.raw.get("added_flows")
        if not isinstance(a, Mapping):
            return s
        have = {f.kind for f in s.flows}
        new = tuple(f for f in _flows(a, next((x.scopes for x in s.flows), ())) if f.kind not in have)
        if not new:
            return s
        what = f"{a.get('description', '')}; {a['source']}".strip("; ")
        return replace(s, flows=(*s.flows, *new), description=f"{s.description} ({what})".strip())

    def run(self) -> SpecIndex:
        ops = tuple(self._entry(op) for op in self.index.operations)
        return replace(
            self.index,
            operations=ops,
            schemes=(*self.schemes, *self.bot.values()),
            extra={**self.index.extra, "quirks": self.q.name},
        )

    def _entry(self, op: OperationEntry) -> OperationEntry:
        role = _allowed_for(self.allowed_for, op.extra.get("allowed_for")) if self.allowed_for else None
        role = role or _required(self.q.raw.get("permissions_required"), op.extra.get("permissions_required"))
        role = role or self._admin_scopes(op)
        role = role or self._admin_operation(op)
        if not op.requirements:
            return _with_admin(op, self.q.name, role)
        notes: dict[str, Any] = {
            "provider": self.q.name,
            "alternatives": [],
            "deprecated": [],
            "offered": [],
            "admin": [],
        }
        alts: list[tuple[Requirement, str]] = []
        for alt in op.requirements:
            for new, why in self._alternative(alt, notes, op.method, op.path):
                if new not in [a for a, _ in alts]:
                    alts.append((new, why))
        alts = self._typed(alts, op.path)
        if not any(self._oauth(a) for a, _ in alts):
            alts.extend(self._added(op))
        alts = self._users_only(alts, op)
        alts = self._without_oauth(alts, op, notes)
        if role is not None:
            notes["admin"].append(role)
        notes["admin"] = [n for i, n in enumerate(notes["admin"]) if n not in notes["admin"][:i]]
        changed = [a for a, _ in alts] != list(op.requirements) or any(why for _, why in alts)
        if not changed and not notes["offered"]:
            return _with_admin(op, self.q.name, role)
        reqs: Requirements = tuple(a for a, _ in alts)
        for a, why in alts:
            if why:
                notes["alternatives"].append({"source": f"{self.q.label} {why}", "requirement": reqs_to_json((a,))[0]})
        ctx = self._contextual(reqs)
        if ctx is not None:
            notes["contextual"] = ctx
        extra = {**op.extra, "quirks": {k: v for k, v in notes.items() if v}}
        return replace(op, requirements=reqs, security_source=f"{op.security_source}+{self.q.label}", extra=extra)

    def _typed(self, alts: list[tuple[Requirement, str]], path: str) -> list[tuple[Requirement, str]]:
        """The alternatives documented for the object type the path names (see ``object_type_in_path``);
        all of them where the path names none the rule knows, or the spec lists none of its scopes."""
        rule = self.by_type
        if not isinstance(rule, Mapping):
            return alts
        m = re.fullmatch(str(rule["pattern"]), path)
        kind = m.group("type") if m else ""
        allowed = {str(x) for x in rule["types"].get(kind, ())}
        if not allowed:
            return alts
        kept: list[tuple[Requirement, str]] = []
        for alt, why in alts:
            terms = [t for t in alt if t.scheme in self.oauth]
            if not terms:
                kept.append((alt, why))  # a credential with no scope in it: not the rule's to judge
            elif all(t.scopes and set(t.scopes) <= allowed for t in terms):
                kept.append((alt, "; ".join(x for x in (why, f"object type {kind}") if x)))
        if not any(self._oauth(a) for a, _ in kept):
            return alts
        return kept

    def _admin_scopes(self, op: OperationEntry) -> dict[str, str] | None:
        """An administrator note where every OAuth alternative of the operation needs a scope the provider
        grants to administrators only (Slack's admin.*: an Enterprise Grid org admin or owner installs)."""
        rule = self.q.raw.get("admin_scopes")
        if not isinstance(rule, Mapping) or not op.requirements:
            return None
        pats = [str(p) for p in rule.get("patterns", ())]
        oauth = [t for alt in op.requirements for t in alt if t.scheme in self.oauth]
        if not oauth or not all(any(fnmatch.fnmatchcase(s, p) for s in t.scopes for p in pats) for t in oauth):
            return None
        return _note(rule)

    def _admin_operation(self, op: OperationEntry) -> dict[str, str] | None:
        """An administrator note on an operation the provider's reference names an administrator's, listed
        one by one with the sentence that says so (DocuSign: "you must be an account administrator")."""
        rule = self.q.raw.get("administrator_operations")
        if not isinstance(rule, Mapping):
            return None
        said = (rule.get("operations") or {}).get(_op_key(op))
        if not isinstance(said, str):
            return None
        return {"message": f"{rule['message']} ('{said}')", "source": str(rule["source"])}

    def _users_only(self, alts: list[tuple[Requirement, str]], op: OperationEntry) -> list[tuple[Requirement, str]]:
        """An operation the provider documents as answering a user's credential only (PagerDuty's
        ``GET /users/me``: not with an account-level key): its alternatives without an OAuth scheme
        (the API key, which may be the account's) are dropped, so an app identity gets no answer."""
        rule = self.q.raw.get("user_credential_only")
        if not isinstance(rule, Mapping) or _op_key(op) not in rule.get("operations", ()):
            return alts
        kept = [(a, "; ".join(x for x in (w, "a user's credential only") if x)) for a, w in alts if self._oauth(a)]
        return kept or alts

    def _without_oauth(
        self, alts: list[tuple[Requirement, str]], op: OperationEntry, notes: dict[str, Any]
    ) -> list[tuple[Requirement, str]]:
        """An operation the provider documents as refusing OAuth tokens (Asana's audit log: a Service
        Account's personal access token only): its OAuth alternatives are dropped, and the note says
        which credential it takes (an administrator's, as a ``requires-admin`` note)."""
        rule = self.q.raw.get("oauth_refused")
        if not isinstance(rule, Mapping) or _op_key(op) not in rule.get("operations", ()):
            return alts
        kept = [(a, "; ".join(x for x in (w, "no OAuth token") if x)) for a, w in alts if not self._oauth(a)]
        if not kept:
            return alts
        notes["admin"].append(_note(rule))
        return kept

    def _oauth(self, alt: Requirement) -> bool:
        return any(t.scheme in self.oauth for t in alt)

    def _added(self, op: OperationEntry) -> list[tuple[Requirement, str]]:
        """The alternatives of a token the provider documents for every operation of its API, for an
        operation the spec gives no OAuth alternative (PagerDuty's Classic User OAuth: ``read`` for
        reads, ``write`` for the rest, each reaching all resources the user can): one per scope the
        method takes. Where the spec names a scoped OAuth permission that one is narrower, and a
        trimmed spec could not show the lattice how much more the classic token reaches."""
        a = self.added
        if not isinstance(a, Mapping) or not op.method:
            return []
        rule = a["scopes_by_method"]
        scopes = rule.get(op.method.upper(), rule.get("*", ()))
        return [((SchemeRequirement.of(str(a["name"]), [str(x)]),), f"added {a['name']}") for x in scopes]

    def _alternative(
        self, alt: Requirement, notes: dict[str, Any], method: str, path: str = ""
    ) -> list[tuple[Requirement, str]]:
        """What one alternative of the spec stands for (several alternatives, or none)."""
        if not alt:
            if self.anonymous and self.anonymous.get("reading") == "offered":
                notes["offered"].append(
                    {
                        "source": self.q.label,
                        "requirement": [],
                        "condition": self.anonymous["condition"],
                        "reference": self.anonymous["source"],
                    }
                )
                return []
            return [(alt, "")]
        # Each term's readings; the alternative's are their product (terms other than OAuth: as is).
        options: list[list[tuple[SchemeRequirement, str]]] = []
        for t in alt:
            if t.scheme not in self.oauth:
                options.append([(t, "")])
                continue
            options.append(self._term(t, notes, method, path))
        size = 1
        for opts in options:
            size *= len(opts)
        if size > MAX_READINGS:
            # A spec claiming a provider's server can list many terms of many scopes: their product is
            # not expanded (the alternative stays as written, all of its scopes required).
            return [(alt, "")]
        out: list[tuple[Requirement, str]] = [((), "")]
        for opts in options:
            out = [((*a, t), "; ".join(x for x in (w, why) if x)) for a, w in out for t, why in opts]
        expanded: list[tuple[Requirement, str]] = []
        for a, why in out:
            expanded.extend(self._tokens(tuple(sorted(a)), why, path))
        if not expanded:
            return [(alt, "")]
        return expanded

    def _term(
        self, t: SchemeRequirement, notes: dict[str, Any], method: str, path: str = ""
    ) -> list[tuple[SchemeRequirement, str]]:
        if not t.scopes:
            # Box names variations of one path with a fragment ("/shared_items#folders"): the request's
            # path is the part before it (a URL path never carries a fragment).
            bare = path.partition("#")[0]
            for rule in self.by_path:
                if any(bare == p or bare.startswith(p.rstrip("/") + "/") for p in rule["prefixes"]):
                    methods = rule["methods"]
                    alts = methods.get(method.upper(), methods.get("*"))
                    if alts is not None and not alts:
                        # The provider names no scope for this path (Box's GET /users/me: the caller
                        # itself): the spec's bare token, not a broader prefix's scope.
                        return [(t, "")]
                    if alts:
                        admin = rule.get("admin")
                        if isinstance(admin, Mapping):
                            notes["admin"].append(_note(admin))
                        return [(SchemeRequirement.of(t.scheme, _all_of(x)), "scopes-by-path") for x in alts]
            if isinstance(self.by_method, Mapping):
                rule = self.by_method.get(method.upper(), self.by_method.get("*"))
                if rule:
                    return [(SchemeRequirement.of(t.scheme, [str(x)]), "scopes-by-method") for x in rule]
            if self.empty:
                return [(SchemeRequirement.of(t.scheme, [self.empty["scope"]]), "empty-scopes")]
            return [(t, "")]
        groups = [[s] for s in t.scopes] if self.any_of and len(t.scopes) > 1 else [list(t.scopes)]
        why = "any-of" if len(groups) > 1 else ""
        out: list[tuple[SchemeRequirement, str]] = []
        for g in groups:
            scopes: list[str] = []
            tag = why
            for s in g:
                d = self.deprecated.get(s)
                if d is None:
                    scopes.append(s)
                    continue
                repl = str(d.get("replacement") or "")
                notes["deprecated"].append({"scope": s, "replacement": repl or None, "source": d["source"]})
                tag = "; ".join(x for x in (tag, f"deprecated {s}") if x)
                if repl:
                    scopes.append(f"{repl}\0{d.get('token') or ''}")
                elif s == "none":
                    pass  # "no scope required": any token of the scheme
                else:
                    scopes.append(f"\0drop\0{s}")
            out.append((SchemeRequirement(t.scheme, tuple(sorted(set(scopes)))), tag))
        kept = [(x, w) for x, w in out if not any(s.startswith("\0drop\0") for s in x.scopes)]
        if kept:
            return kept
        # Nothing but retired scopes: keep them as written (flagged), not nothing.
        return [(SchemeRequirement(x.scheme, tuple(s.removeprefix("\0drop\0") for s in x.scopes)), w) for x, w in out]

    def _tokens(self, alt: Requirement, why: str, path: str = "") -> list[tuple[Requirement, str]]:
        """The alternative per token type (Slack: user token, END_USER; bot token, AGENT)."""
        if not self.tokens:
            return [(tuple(_clean(t) for t in alt), why)]
        user_only = [str(p) for p in self.tokens.get("user_only", ())]
        bot_only = [str(p) for p in self.tokens.get("bot_only", ())]
        out: list[tuple[Requirement, str]] = []
        for token in ("user", "bot"):
            terms: list[SchemeRequirement] = []
            ok = True
            tag = why
            for t in alt:
                if t.scheme not in self.oauth:
                    terms.append(t)
                    continue
                scopes: list[str] = []
                for s in t.scopes:
                    name, _, only = s.partition("\0")
                    if only and only != token:
                        ok = False
                    if token == "bot" and name in self.bot_names:
                        # A user-token scope whose bot-token counterpart has another name (Slack's
                        # channels:write is channels:manage on a bot token; channels:join to join).
                        rule, user_name = self.bot_names[name], name
                        name = str((rule.get("paths") or {}).get(path, rule["bot"]))
                        tag = "; ".join(x for x in (tag, f"{user_name} is {name} on a bot token") if x)
                    other = bot_only if token == "user" else user_only
                    if any(fnmatch.fnmatchcase(name, p) for p in other):
                        ok = False
                    scopes.append(name)
                scheme = t.scheme if token == "user" else self.bot[t.scheme].name
                terms.append(SchemeRequirement.of(scheme, scopes))
            if ok:
                tag = "; ".join(x for x in (tag, f"{token} token") if x)
                out.append((tuple(sorted(terms)), tag))
        return out

    def _contextual(self, reqs: Requirements) -> dict[str, Any] | None:
        """Alternatives that differ only by a family prefix: chosen by the data addressed."""
        for ctx in self.contextual:
            families = [str(f) for f in ctx["families"]]
            by_token: dict[str, set[str]] = {}
            for alt in reqs:
                if len(alt) != 1 or len(alt[0].scopes) != 1:
                    continue
                scope = alt[0].scopes[0]
                fam, sep, rest = scope.partition(":")
                if sep and fam in families:
                    by_token.setdefault(f"{alt[0].scheme}:{rest}", set()).add(fam)
            if any(len(v) > 1 for v in by_token.values()):
                return {"decided_by": ctx["decided_by"], "source": ctx["source"]}
        return None


def _allowed_for(rule: Mapping[str, Any], roles: Any) -> dict[str, str] | None:
    """An administrator note when the operation's "Allowed For" roles (kept by the OpenAPI reader) are
    administrators only.

    Only where every bullet starts with one of the rule's administrator words and none names a
    lower role (agents, end users, anyone): "Admins and agents in custom roles ..." is not
    administrators only. No section, or any doubt: no note."""
    if not isinstance(roles, list | tuple) or not roles:
        return None
    bullets = [str(b) for b in roles]
    admins = tuple(str(w).lower() for w in rule.get("administrator", ()))
    lower = tuple(str(w).lower() for w in rule.get("lower_roles", ()))
    if not admins:
        return None
    for b in bullets:
        low = b.lower()
        if not low.startswith(admins) or any(w in low for w in lower):
            return None
    message = f"{rule.get('message', 'administrators only')} (Allowed For: {'; '.join(bullets)})"
    return {"message": message, "source": str(rule.get("source", ""))}


def _required(rule: Any, text: Any) -> dict[str, str] | None:
    """An administrator note when the operation's "Permissions required" paragraph (Atlassian's, kept by
    the OpenAPI reader) is exactly one the rule names as an administrator's: any other wording (an
    "or" with a project permission, a note for apps) gets none."""
    if not isinstance(rule, Mapping) or not isinstance(text, str):
        return None
    if not any(re.fullmatch(str(p), text) for p in rule.get("administrator", ())):
        return None
    return {"message": f"{rule['message']} (Permissions required: {text})", "source": str(rule["source"])}


def _note(rule: Mapping[str, Any]) -> dict[str, str]:
    """A rule's administrator note: its message and source page."""
    return {"message": str(rule["message"]), "source": str(rule["source"])}


def _op_key(op: OperationEntry) -> str:
    """How a rule lists an operation one by one: ``"METHOD /path"``."""
    return f"{op.method.upper()} {op.path}"


def _with_admin(op: OperationEntry, provider: str, role: dict[str, str] | None) -> OperationEntry:
    if role is None:
        return op
    return replace(op, extra={**op.extra, "quirks": {"provider": provider, "admin": [role]}})


def _all_of(x: Any) -> list[str]:
    """One alternative of a by-path rule: a scope, or a list of scopes all needed (Box Sign's scope
    with the read-write one it depends on)."""
    return [str(s) for s in x] if isinstance(x, list) else [str(x)]


def _clean(t: SchemeRequirement) -> SchemeRequirement:
    return SchemeRequirement.of(t.scheme, [s.partition("\0")[0] for s in t.scopes])


def _flows(entry: Mapping[str, Any], scopes: tuple[tuple[str, str], ...] = ()) -> tuple[OAuthFlow, ...]:
    """The OAuth flows a quirk entry lists (``kind``, ``authorization_url``, ``token_url``)."""
    return tuple(
        OAuthFlow(
            FlowKind(str(f["kind"])), str(f.get("authorization_url", "")), str(f.get("token_url", "")), scopes=scopes
        )
        for f in entry.get("flows", ())
    )


def _quirk_scheme(
    name: str, description: str, entry: Mapping[str, Any], scopes: tuple[tuple[str, str], ...] = ()
) -> SecurityScheme:
    """An OAuth scheme a quirk entry describes (its flows and grant namespace), inferred, not declared."""
    return SecurityScheme(
        name,
        SchemeType.OAUTH2,
        description,
        flows=_flows(entry, scopes),
        inferred=True,
        namespace=str(entry.get("namespace", "")),
    )


def _first_token_url(s: SecurityScheme) -> str:
    return next((f.token_url for f in s.flows if f.token_url), "")
