"""Vendor extensions that carry an operation's permissions beside (or instead of) ``security``.

Several providers put the permission an operation needs in an ``x-`` field of the operation,
because OpenAPI's ``security`` cannot say it (a permission of an API key or an API token, a
second generation of scopes, a role). Each reader turns one extension into requirement
alternatives beside the ones ``security`` declares; every alternative it adds is recorded with
the extension that gave it (``OperationEntry.extra["extensions"]``), so a report can say where
its pick came from (``requirements_source``).

======================================  ===========================================================
extension                               reading
======================================  ===========================================================
``x-atlassian-oauth2-scopes``           ``[{scheme, scopes, state}]``: an entry's scopes are all
                                        needed (AND). ``state: Current`` (classic scopes) is a
                                        requirement where ``security`` lacks it; ``state: Beta``
                                        (granular scopes) is *offered* beside it, never picked
                                        unless a policy prefers it (``prefer``).
``x-permission`` (Datadog)              ``{operator: OR|AND, permissions}``: the permissions a
                                        scoped application key needs; the key term of each key
                                        alternative becomes a scoped one (one per permission for OR).
                                        ``operator: OPEN`` (no permissions) names none: the
                                        unscoped key terms stay as ``security`` has them.
``x-pd-requires-scope`` (PagerDuty)     the scope of PagerDuty's scoped OAuth (app or user);
                                        an alternative beside the account-wide API key.
``x-api-token-group`` (Cloudflare)      API-token permission groups, any one of them: the token
                                        term of each alternative becomes one per group (where
                                        ``security`` names only the global key, one alternative
                                        per group is added beside it).
``x-cfPermissionsRequired`` (Cloudflare) ``{enum: [...]}`` permission keys, any one of them, read
                                        the same way where ``x-api-token-group`` is absent.
``x-granular-scopes`` / ``x-macro-scopes`` (Zoom)  granular and classic scopes, any one of them
                                        (Zoom lists every level that satisfies the call), on the
                                        operation or, as Zoom publishes them, in its
                                        ``x-extensions`` object; they replace ``security``'s
                                        listing of the same scopes as one all-of requirement.
                                        Where both are listed, the classic ones are *offered*
                                        (Zoom asks apps to migrate to granular scopes), picked
                                        only when a policy prefers them.
``x-box-requires-admin`` (Box)          not a permission: the calling user must be an admin or
                                        co-admin; recorded as a note on the operation.
======================================  ===========================================================

The permissions of keys and tokens are modelled as scopes of a scheme made for the purpose
(``inferred``, one per extension, in the provider's namespace), of the same identity as the
credential they restrict: client credentials for keys and API tokens (AGENT), the provider's
user authorization too where it has one (PagerDuty).

Malformed extension values are ignored (the operation keeps what ``security`` says): an
extension never makes an operation's requirements fewer than its ``security`` declares, except
that an unscoped credential term is replaced by the same credential scoped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .model import (
    FlowKind,
    OAuthFlow,
    Requirement,
    Requirements,
    SchemeRequirement,
    SchemeType,
    SecurityScheme,
    reqs_to_json,
)

__all__ = [
    "EXTENSIONS",
    "SYNTHESIZED",
    "ExtensionReading",
    "alternative_sources",
    "offered_requirements",
    "read_extensions",
]

#: Every extension read here (the reach table counts them).
EXTENSIONS = (
    "x-atlassian-oauth2-scopes",
    "x-permission",
    "x-pd-requires-scope",
    "x-api-token-group",
    "x-cfPermissionsRequired",
    "x-macro-scopes",
    "x-granular-scopes",
    "x-box-requires-admin",
)
_EXTENSION_KEYS = frozenset(EXTENSIONS)

#: Bounds on what one operation's extension may list (a hostile spec could list millions).
MAX_ITEMS = 64
MAX_NAME = 200

PAGERDUTY_SCHEME = "x-pd-requires-scope"
DATADOG_SCHEME = "x-permission"
CLOUDFLARE_SCHEME = "x-api-token-group"
CLOUDFLARE_KEYS_SCHEME = "x-cfPermissionsRequired"

#: Schemes made for extensions, by name. PagerDuty's OAuth (developer.pagerduty.com/docs/oauth-functionality):
#: scoped OAuth for a user (authorization code) or an app (client credentials), at identity.pagerduty.com.
_PD_TOKEN = "https://identity.pagerduty.com/oauth/token"
SYNTHESIZED: Mapping[str, SecurityScheme] = {
    PAGERDUTY_SCHEME: SecurityScheme(
        PAGERDUTY_SCHEME,
        SchemeType.OAUTH2,
        "PagerDuty scoped OAuth (x-pd-requires-scope); https://developer.pagerduty.com/docs/oauth-functionality",
        flows=(
            OAuthFlow(FlowKind.AUTHORIZATION_CODE, "https://identity.pagerduty.com/oauth/authorize", _PD_TOKEN),
            OAuthFlow(FlowKind.CLIENT_CREDENTIALS, token_url=_PD_TOKEN),
        ),
        inferred=True,
    ),
    DATADOG_SCHEME: SecurityScheme(
        DATADOG_SCHEME,
        SchemeType.OAUTH2,
        "Datadog application key scoped to permissions (x-permission); "
        "https://docs.datadoghq.com/account_management/api-app-keys/#scopes",
        flows=(OAuthFlow(FlowKind.CLIENT_CREDENTIALS),),
        inferred=True,
        namespace="datadog:permissions",
    ),
    CLOUDFLARE_SCHEME: SecurityScheme(
        CLOUDFLARE_SCHEME,
        SchemeType.OAUTH2,
        "Cloudflare API token permission groups (x-api-token-group); "
        "https://developers.cloudflare.com/fundamentals/api/reference/permissions/",
        flows=(OAuthFlow(FlowKind.CLIENT_CREDENTIALS),),
        inferred=True,
        namespace="cloudflare:api-token-groups",
    ),
    CLOUDFLARE_KEYS_SCHEME: SecurityScheme(
        CLOUDFLARE_KEYS_SCHEME,
        SchemeType.OAUTH2,
        "Cloudflare API token permission keys (x-cfPermissionsRequired)",
        flows=(OAuthFlow(FlowKind.CLIENT_CREDENTIALS),),
        inferred=True,
        namespace="cloudflare:permission-keys",
    ),
}


@dataclass(frozen=True, slots=True)
class ExtensionReading:
    """What an operation's vendor extensions add to its ``security``."""

    requirements: Requirements | None
    #: The extensions that changed the requirements, in the order read ("" when none did).
    source: str
    #: JSON for ``OperationEntry.extra["extensions"]``: ``alternatives`` (each ``{source,
    #: requirement}`` for an alternative an extension added), ``offered`` (alternatives offered, not
    #: required: ``{source, state, requirement}``), ``notes`` (``{source, principal, message}``).
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: The made-for-purpose schemes the requirements name.
    schemes: tuple[SecurityScheme, ...] = ()


def _names(raw: Any) -> list[str] | None:
    """A bounded list of non-empty strings, or None when ``raw`` is not one."""
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw or len(raw) > MAX_ITEMS:
        return None
    if not all(isinstance(x, str) and x.strip() and len(x) <= MAX_NAME for x in raw):
        return None
    return list(dict.fromkeys(x.strip() for x in raw))


class _Acc:
    def __init__(self, reqs: Requirements | None) -> None:
        self.reqs: list[Requirement] | None = list(reqs) if reqs is not None else None
        self.sources: list[str] = []
        self.added: list[dict[str, Any]] = []
        self.offered: list[dict[str, Any]] = []
        self.notes: list[dict[str, Any]] = []
        self.schemes: dict[str, SecurityScheme] = {}

    def add(self, alt: Requirement, source: str) -> None:
        if self.reqs is None:
            self.reqs = []
        if alt not in self.reqs:
            self.reqs.append(alt)
            self.added.append({"source": source, "requirement": reqs_to_json((alt,))[0]})
        if source not in self.sources:
            self.sources.append(source)
        for t in alt:
            if t.scheme in SYNTHESIZED:
                self.schemes[t.scheme] = SYNTHESIZED[t.scheme]


def read_extensions(
    op: Mapping[str, Any], reqs: Requirements | None, schemes: Mapping[str, SecurityScheme]
) -> ExtensionReading | None:
    """The operation's requirements with its vendor extensions read; ``None`` when it has none."""
    # Most operations of most specs carry none: one C-level set test over the operation's keys
    # (a generator of eight look-ups per operation was 0.1 s of a cold derive over Graph beta).
    if _EXTENSION_KEYS.isdisjoint(op) and _zoom_nested(op) is None:
        return None
    acc = _Acc(reqs)
    _atlassian(op.get("x-atlassian-oauth2-scopes"), acc, schemes)
    _datadog(op.get("x-permission"), acc, schemes)
    _pagerduty(op.get("x-pd-requires-scope"), acc)
    if not _cloudflare(op.get("x-api-token-group"), CLOUDFLARE_SCHEME, "x-api-token-group", acc, schemes):
        raw = op.get("x-cfPermissionsRequired")
        _cloudflare(raw.get("enum") if isinstance(raw, dict) else raw, CLOUDFLARE_KEYS_SCHEME,
                    "x-cfPermissionsRequired", acc, schemes)  # fmt: skip
    _zoom(op, acc, schemes)
    if op.get("x-box-requires-admin") is True:
        acc.notes.append(
            {
                "source": "x-box-requires-admin",
                "principal": "administrator",
                "message": "the calling user must be a Box admin or co-admin of the enterprise",
            }
        )
        acc.sources.append("x-box-requires-admin")
    extra: dict[str, Any] = {}
    if acc.added:
        extra["alternatives"] = acc.added
    if acc.offered:
        extra["offered"] = acc.offered
    if acc.notes:
        extra["notes"] = acc.notes
    if not extra:
        return None
    final = tuple(acc.reqs) if acc.reqs is not None else None
    changed = [s for s in acc.sources if any(a["source"] == s for a in acc.added)]
    return ExtensionReading(final, "+".join(changed), extra, tuple(acc.schemes.values()))


def _oauth_schemes(schemes: Mapping[str, SecurityScheme]) -> list[str]:
    return [name for name, s in schemes.items() if s.type is SchemeType.OAUTH2]


def _atlassian(raw: Any, acc: _Acc, schemes: Mapping[str, SecurityScheme]) -> None:
    if not isinstance(raw, list) or len(raw) > MAX_ITEMS:
        return
    for item in raw:
        if not isinstance(item, dict):
            continue
        scheme, scopes, state = item.get("scheme"), _names(item.get("scopes")), item.get("state")
        if not isinstance(scheme, str) or scopes is None:
            continue
        alt = (SchemeRequirement.of(scheme, scopes),)
        if state == "Current" or state is None:
            # Classic scopes: `security` usually says the same; where it does not, they are needed.
            have = acc.reqs or []
            if not any(t.scheme == scheme and t.scopes for a in have for t in a):
                acc.reqs = [a for a in have if not (len(a) == 1 and a[0] == SchemeRequirement(scheme))]
                acc.add(alt, "x-atlassian-oauth2-scopes")
        else:
            acc.offered.append(
                {
                    "source": "x-atlassian-oauth2-scopes",
                    "state": str(state),
                    "kind": "granular",
                    "requirement": reqs_to_json((alt,))[0],
                }
            )


def _retarget(
    acc: _Acc,
    values: list[str],
    operator: str,
    synth: str,
    source: str,
    is_target: Any,
) -> bool:
    """Each alternative holding an unscoped credential term ``is_target`` accepts: that term
    replaced by the made-for-purpose scheme scoped to the values (one alternative per value for
    OR, one with all of them for AND). True when some alternative was rewritten."""
    if acc.reqs is None:
        return False
    out: list[Requirement] = []
    rewritten: list[Requirement] = []
    for alt in acc.reqs:
        hit = next((t for t in alt if not t.scopes and is_target(t.scheme)), None)
        if hit is None:
            out.append(alt)
            continue
        rest = tuple(t for t in alt if t is not hit)
        groups = [values] if operator == "AND" else [[v] for v in values]
        for g in groups:
            rewritten.append(tuple(sorted((*rest, SchemeRequirement.of(synth, g)))))
    if not rewritten:
        return False
    acc.reqs = out
    for alt in rewritten:
        acc.add(alt, source)
    return True


def _datadog(raw: Any, acc: _Acc, schemes: Mapping[str, SecurityScheme]) -> None:
    if not isinstance(raw, dict):
        return
    operator = str(raw.get("operator", "OR")).upper()
    if operator == "OPEN":
        # Datadog's "open" operations (key validation, org configs, containers...) name no
        # permission: any valid key pair calls them, which the unscoped terms already say.
        return
    perms = _names(raw.get("permissions"))
    if perms is None or operator not in ("OR", "AND"):
        return

    def app_key(name: str) -> bool:
        s = schemes.get(name)
        return s is not None and s.type is SchemeType.API_KEY and "app" in name.lower()

    _retarget(acc, perms, operator, DATADOG_SCHEME, "x-permission", app_key)


def _pagerduty(raw: Any, acc: _Acc) -> None:
    scopes = _names(raw)
    if scopes is None:
        return
    # One scope per operation in PagerDuty's file; a list, if ever, would be any one of them.
    for s in scopes:
        acc.add((SchemeRequirement.of(PAGERDUTY_SCHEME, [s]),), "x-pd-requires-scope")


def _cloudflare(raw: Any, synth: str, source: str, acc: _Acc, schemes: Mapping[str, SecurityScheme]) -> bool:
    groups = _names(raw)
    if groups is None:
        return False

    def token(name: str) -> bool:
        s = schemes.get(name)
        return s is not None and (
            (s.type is SchemeType.HTTP and s.http_scheme == "bearer") or name.lower() == "api_token"
        )

    if _retarget(acc, groups, "OR", synth, source, token):
        return True
    # No security declared, or (Cloudflare's email routing, accounts ...) a `security` naming only the
    # global key pair while the extension lists the API-token groups that allow the call, in a spec
    # that declares API tokens: the groups are alternatives beside what `security` says.
    if acc.reqs is None or (synth == CLOUDFLARE_SCHEME and any(token(n) for n in schemes)):
        for g in groups:
            acc.add((SchemeRequirement.of(synth, [g]),), source)
        return True
    return False


#: Zoom: "Your existing apps can continue to use classic scopes, but we encourage you to migrate them
#: to use granular scopes".
ZOOM_MIGRATE = "https://developers.zoom.us/docs/integrations/migrate/"
#: Zoom's extensions, as its endpoints.json files nest them in the operation's ``x-extensions``.
_ZOOM_KEYS = ("x-granular-scopes", "x-macro-scopes")


def _zoom_nested(op: Mapping[str, Any]) -> Mapping[str, Any] | None:
    nested = op.get("x-extensions")
    if nested is None:  # nearly every operation: no ABC isinstance check for it (per operation, cold derive)
        return None
    if isinstance(nested, Mapping) and any(k in nested for k in _ZOOM_KEYS):
        return nested
    return None


def _authorization_header(name: str, schemes: Mapping[str, SecurityScheme]) -> bool:
    """An API key sent in the ``Authorization`` header: the header an OAuth bearer token is sent in."""
    s = schemes.get(name)
    return (
        s is not None and s.type is SchemeType.API_KEY and s.api_key_in == "header"
        and s.api_key_name.strip().lower() == "authorization"
    )  # fmt: skip


def _zoom(op: Mapping[str, Any], acc: _Acc, schemes: Mapping[str, SecurityScheme]) -> None:
    source = _zoom_nested(op) or op
    lists = [(k, _names(source.get(k))) for k in _ZOOM_KEYS]
    listed = {s for _, v in lists for s in v or ()}
    if not listed:
        return
    oauth = _oauth_schemes(schemes)
    used = [t.scheme for a in acc.reqs or [] for t in a if t.scheme in oauth]
    scheme = used[0] if used else (oauth[0] if oauth else "")
    if not scheme:
        return
    if acc.reqs is not None:
        # Zoom's `security` names every listed scope in one requirement (and, beside it, the
        # Authorization header that carries the token as an API key), or the OAuth scheme alone:
        # both stand for "one of the scopes the lists name", which the lists then say one by one.
        def restates(alt: Requirement) -> bool:
            terms = [t for t in alt if t.scheme == scheme]
            return (
                len(terms) == 1
                and set(terms[0].scopes) <= listed
                and all(t.scheme == scheme or (not t.scopes and _authorization_header(t.scheme, schemes)) for t in alt)
            )

        acc.reqs = [a for a in acc.reqs if not restates(a)]
    granular = dict(lists)["x-granular-scopes"]
    for key, scopes in lists:
        for s in scopes or ():
            alt = (SchemeRequirement.of(scheme, [s]),)
            if key == "x-macro-scopes" and granular:
                # Classic scopes are what apps made before granular scopes still hold; Zoom asks apps to
                # migrate to the granular ones, which replace them: offered, picked when a policy prefers.
                acc.offered.append(
                    {
                        "source": key,
                        "state": "classic",
                        "kind": "classic",
                        "condition": "for an app still on Zoom's classic scopes",
                        "reference": ZOOM_MIGRATE,
                        "requirement": reqs_to_json((alt,))[0],
                    }
                )
            else:
                acc.add(alt, key)


def offered_requirements(extra: Mapping[str, Any]) -> list[tuple[str, Requirement, Mapping[str, Any]]]:
    """The offered alternatives recorded in an operation's ``extra`` (source, requirement, the record)."""
    ext = extra.get("extensions")
    out: list[tuple[str, Requirement, Mapping[str, Any]]] = []
    if not isinstance(ext, dict):
        return out
    for item in ext.get("offered") or ():
        try:
            alt = tuple(SchemeRequirement(str(s), tuple(str(x) for x in scopes)) for s, scopes in item["requirement"])
        except (KeyError, TypeError, ValueError):
            continue
        out.append((str(item.get("source", "")), alt, item))
    return out


def alternative_sources(extra: Mapping[str, Any]) -> dict[Requirement, str]:
    """Alternative -> the extension, quirk or catalog that added it, from an operation's ``extra``."""
    out: dict[Requirement, str] = {}
    for key in ("extensions", "quirks", "catalog"):
        ext = extra.get(key)
        if not isinstance(ext, dict):
            continue
        for item in ext.get("alternatives") or ():
            try:
                alt = tuple(
                    SchemeRequirement(str(s), tuple(str(x) for x in scopes)) for s, scopes in item["requirement"]
                )
            except (KeyError, TypeError, ValueError):
                continue
            out.setdefault(alt, str(item.get("source", "")))
    return out
