"""What a permission reaches (level, principal, slice, limits) and how it ranks the alternatives of an
access before the grant-set lattice: unit cases from the providers' own words, properties of the
ranking, and a card end to end where counting operations alone picked an administrator's scope."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ramscope import Settings
from ramscope.derive import Engine
from ramscope.derive.privilege import Alternative, Atom
from ramscope.derive.reach import BARE, rank_by_reach
from ramscope.manifest import IdentityType
from ramscope.providers import shipped_universe
from ramscope.providers.authserver import GOOGLE
from ramscope.providers.reach import Level, Principal, Reach, classify
from ramscope.specs.model import SchemeRequirement, SchemeType
from tests.support.httpserver import LocalHTTPServer

AUTH = "https://www.googleapis.com/auth/"


@pytest.mark.parametrize(
    ("scope", "level", "principal", "slice_"),
    [
        ("drive.readonly", Level.READ, Principal.USER, ""),
        ("drive", Level.WRITE, Principal.USER, ""),
        ("drive.file", Level.WRITE, Principal.USER, "app-files"),
        ("drive.photos.readonly", Level.READ, Principal.USER, "photos"),
        ("drive.meet.readonly", Level.READ, Principal.USER, "meet"),
        ("drive.appdata", Level.WRITE, Principal.USER, "app-data"),
        ("gmail.metadata", Level.READ, Principal.USER, "metadata"),
        ("chat.app.messages.readonly", Level.READ, Principal.APP, ""),
        ("chat.admin.spaces.readonly", Level.READ, Principal.ADMIN, ""),
        ("admin.directory.user", Level.MANAGE, Principal.ADMIN, ""),
        ("user.addresses.read", Level.READ, Principal.USER, "own-profile"),
        ("devstorage.full_control", Level.MANAGE, Principal.USER, ""),
        ("devstorage.read_write", Level.WRITE, Principal.USER, ""),
        ("bigtable.admin", Level.MANAGE, Principal.USER, ""),  # a Cloud product's own admin, not Workspace's
        ("calendar.events.public.readonly", Level.READ, Principal.USER, "public"),
    ],
)
def test_google_scopes_are_classed_from_their_own_words(
    scope: str, level: Level, principal: Principal, slice_: str
) -> None:
    """Each class is what Google's description (or the reviewed table) says of the scope."""
    u = shipped_universe(GOOGLE)
    assert u is not None
    r = classify(AUTH + scope, u.descriptions[AUTH + scope])
    assert (r.level, r.principal, r.slice) == (level, principal, slice_)
    assert r.why


def test_every_shipped_google_scope_has_a_class() -> None:
    """No scope of Google's universe is left at an unknown level: the rules or the table class it."""
    u = shipped_universe(GOOGLE)
    assert u is not None
    scopes = {s for pairs, _ in u.alternatives for _, s in pairs}
    assert len(scopes) == 525
    unknown = sorted(s for s in scopes if classify(s, u.descriptions.get(s, "")).level is Level.UNKNOWN)
    assert unknown == []


@pytest.mark.parametrize(
    ("scope", "level"),
    [
        ("Group.Read.All", Level.READ),
        ("Group-NestingSupport.ReadWrite.All", Level.WRITE),
        ("Sites.Manage.All", Level.MANAGE),
        ("contents:write", Level.WRITE),
        ("read:org", Level.READ),
        ("admin:org", Level.MANAGE),
        ("x.admin", Level.MANAGE),
        ("write:pets", Level.WRITE),
        ("pets", Level.UNKNOWN),
    ],
)
def test_names_alone_give_a_level(scope: str, level: Level) -> None:
    assert classify(scope).level is level


def test_a_description_decides_where_the_name_is_silent() -> None:
    assert classify("mail", "Full control of every mailbox").level is Level.MANAGE
    assert classify("mail", "See your messages").level is Level.READ
    assert classify("mail", "Read, compose and send your messages").level is Level.WRITE


def test_the_provider_description_wins_over_a_foreign_one() -> None:
    """The reviewed table is keyed by the provider's scope: a spec's words cannot make drive.file general."""
    r = classify(AUTH + "drive.file", "See today's weather forecast")
    assert r.slice == "app-files"
    assert r.satisfied("drive.files.create")
    assert not r.satisfied("drive.files.update")


# --------------------------------------------------------------------------- the ranking


def _alt(*scopes: str) -> Alternative:
    atoms = frozenset(Atom("https://as.example", s) for s in scopes)
    return Alternative(atoms, (SchemeRequirement.of("oauth", list(scopes)),) if scopes else ())


def _reach_of(table: dict[str, Reach]) -> Callable[[str, str], Reach]:
    return lambda _scheme, scope: table[scope]


def test_app_only_is_never_a_users_pick() -> None:
    table = {
        "app.read": Reach("app.read", Level.READ, Principal.APP),
        "msgs.read": Reach("msgs.read", Level.READ),
    }
    r = rank_by_reach(
        [_alt("app.read"), _alt("msgs.read")], _reach_of(table), operation_id="x", identity=IdentityType.END_USER
    )
    assert [a.scopes for a in r.eligible] == [["msgs.read"]]
    assert [(a.scopes, why) for a, why in r.set_aside] == [
        (["app.read"], "only an app authenticating as itself can hold it, not a user's delegation")
    ]
    agent = rank_by_reach(
        [_alt("app.read"), _alt("msgs.read")], _reach_of(table), operation_id="x", identity=IdentityType.AGENT
    )
    # The agent's own identity holds the app's permission; a user's would need a user's delegation.
    assert [a.scopes for a in agent.eligible] == [["app.read"]]
    assert [(a.scopes, why) for a, why in agent.set_aside] == [
        (["msgs.read"], "a user's permission, where one the app holds as itself does the job")
    ]


def test_admin_is_set_aside_while_a_users_own_does_the_job_as_narrowly() -> None:
    """chat.admin.spaces.readonly vs chat.spaces.readonly: the user's own. The Admin SDK's read scope vs
    cloud-platform (a write scope): the administrator's read, said out loud (fallback "admin")."""
    table = {
        "admin.read": Reach("admin.read", Level.READ, Principal.ADMIN),
        "user.read": Reach("user.read", Level.READ),
        "w": Reach("w", Level.WRITE),
    }
    same = rank_by_reach(
        [_alt("admin.read"), _alt("user.read")], _reach_of(table), operation_id="x", identity=IdentityType.END_USER
    )
    assert ([a.scopes for a in same.eligible], same.fallback) == ([["user.read"]], "")
    assert [(a.scopes, w) for a, w in same.set_aside] == [
        (["admin.read"], "an administrator's permission, where a user's own does the job")
    ]
    lower = rank_by_reach(
        [_alt("admin.read"), _alt("w")], _reach_of(table), operation_id="x", identity=IdentityType.END_USER
    )
    assert ([a.scopes for a in lower.eligible], lower.fallback) == ([["admin.read"]], "admin")
    allowed = rank_by_reach(
        [_alt("admin.read"), _alt("user.read")],
        _reach_of(table),
        operation_id="x",
        identity=IdentityType.END_USER,
        allow_admin=True,
    )
    assert sorted(a.scopes[0] for a in allowed.eligible) == ["admin.read", "user.read"]
    alone = rank_by_reach([_alt("admin.read")], _reach_of(table), operation_id="x", identity=IdentityType.END_USER)
    assert ([a.scopes for a in alone.eligible], alone.fallback) == ([["admin.read"]], "admin")


def test_a_slice_is_offered_unless_the_operation_stays_inside_it() -> None:
    table = {
        "files": Reach("files", Level.WRITE),
        "own": Reach("own", Level.WRITE, slice="app-files", condition="only its own files", satisfied_by=("f.create",)),
    }
    alts = [_alt("files"), _alt("own")]
    update = rank_by_reach(alts, _reach_of(table), operation_id="f.update", identity=IdentityType.END_USER)
    assert [a.scopes for a in update.eligible] == [["files"]]
    assert [(a.scopes, [r.condition for r in rs]) for a, rs in update.narrower] == [(["own"], ["only its own files"])]
    create = rank_by_reach(alts, _reach_of(table), operation_id="f.create", identity=IdentityType.END_USER)
    assert [a.scopes for a in create.eligible] == [["own"]]
    opted = rank_by_reach(
        alts, _reach_of(table), operation_id="f.update", identity=IdentityType.END_USER, opted=lambda s: s == "own"
    )
    assert [a.scopes for a in opted.eligible] == [["own"]]


def test_anonymous_access_ranks_below_every_permission() -> None:
    table = {"r": Reach("r", Level.READ)}
    r = rank_by_reach([_alt("r"), _alt()], _reach_of(table), operation_id="x", identity=IdentityType.AGENT)
    assert [a.scopes for a in r.eligible] == [[]]


def _key() -> Alternative:
    """PagerDuty's account API key: a credential naming no permission."""
    return Alternative(
        frozenset({Atom("https://api.example#api_key", type=SchemeType.API_KEY)}), (SchemeRequirement("api_key"),)
    )


def test_a_bare_key_is_set_aside_for_a_named_permission_of_any_level() -> None:
    """A scoped write (PagerDuty incidents.write) beats the account-wide key; the key alone stays the pick."""
    table = {s: Reach(s, lv) for s, lv in (("incidents.write", Level.WRITE), ("incidents.read", Level.READ))}
    for scope in ("incidents.write", "incidents.read"):
        r = rank_by_reach([_key(), _alt(scope)], _reach_of(table), operation_id="x", identity=IdentityType.AGENT)
        assert [a.scopes for a in r.eligible] == [[scope]]
        assert [why for _, why in r.set_aside] == [BARE]
    alone = rank_by_reach([_key()], _reach_of(table), operation_id="x", identity=IdentityType.AGENT)
    assert alone.eligible == (_key(),)
    assert alone.set_aside == ()


_LEVELS = st.sampled_from([Level.READ, Level.WRITE, Level.MANAGE, Level.UNKNOWN])
_PRINCIPALS = st.sampled_from(list(Principal))


@st.composite
def _problems(draw: st.DrawFn) -> tuple[list[Alternative], dict[str, Reach]]:
    n = draw(st.integers(1, 6))
    table: dict[str, Reach] = {}
    for i in range(n):
        table[f"s{i}"] = Reach(
            f"s{i}",
            draw(_LEVELS),
            draw(_PRINCIPALS),
            slice=draw(st.sampled_from(["", "", "slice"])),
            condition="only part",
            deprecated=draw(st.sampled_from(["", "", "", "old"])),
        )
    alts = draw(
        st.lists(
            st.sets(st.sampled_from(sorted(table)), min_size=1, max_size=2), min_size=1, max_size=5, unique_by=frozenset
        )
    )
    return [_alt(*sorted(a)) for a in alts], table


@settings(max_examples=300, deadline=None)
@given(problem=_problems(), end_user=st.booleans(), allow_admin=st.booleans())
def test_ranking_properties(
    problem: tuple[list[Alternative], dict[str, Reach]], end_user: bool, allow_admin: bool
) -> None:
    """Every alternative is eligible, offered or set aside with a reason; the eligible share one level,
    no eligible one is app-only for a user, and a general alternative is never passed over for a slice."""
    alts, table = problem
    identity = IdentityType.END_USER if end_user else IdentityType.AGENT
    r = rank_by_reach(alts, _reach_of(table), operation_id="op", identity=identity, allow_admin=allow_admin)
    placed = [a.atoms for a in r.eligible] + [a.atoms for a, _ in r.narrower] + [a.atoms for a, _ in r.set_aside]
    assert sorted(map(sorted, placed)) == sorted(map(sorted, (a.atoms for a in alts)))
    assert all(why for _, why in r.set_aside)

    def classes(a: Alternative) -> list[Reach]:
        return [table[s] for s in a.scopes]

    if r.eligible:
        ranks = {max(x.level.rank for x in classes(a)) for a in r.eligible}
        assert len(ranks) == 1
    if end_user:
        assert not any(x.principal is Principal.APP for a in r.eligible for x in classes(a))
    app_own = not end_user and any(x.principal is Principal.APP for a in alts for x in classes(a))
    general_usable = [
        a
        for a in alts
        if not any(x.slice or x.deprecated for x in classes(a))
        and not (end_user and any(x.principal is Principal.APP for x in classes(a)))
        and not (app_own and not any(x.principal is Principal.APP for x in classes(a)))
        and (allow_admin or not any(x.principal is Principal.ADMIN for x in classes(a)))
    ]
    if general_usable:
        # An administrator's (or a role's) read beats a user's write.
        assert r.fallback in ("", "admin", "role")
        assert all(not any(x.slice for x in classes(a)) for a in r.eligible)


# --------------------------------------------------------------------------- a card, end to end

MAIL_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Mail", "version": "1"},
    "servers": [{"url": "https://mail.example"}],
    "components": {
        "securitySchemes": {
            "o": {
                "type": "oauth2",
                "flows": {
                    "authorizationCode": {
                        "authorizationUrl": "https://as.mail.example/authorize",
                        "tokenUrl": "https://as.mail.example/token",
                        "scopes": {
                            "x.admin": "Full control of every mailbox",
                            "mail.read": "See your messages",
                            "mail.send": "Send messages on your behalf",
                        },
                    }
                },
            }
        }
    },
    "paths": {
        "/messages": {
            "get": {
                "operationId": "listMessages",
                "security": [{"o": ["mail.read"]}, {"o": ["x.admin"]}],
                "responses": {},
            }
        },
        "/send": {
            "post": {"operationId": "send", "security": [{"o": ["mail.send"]}, {"o": ["x.admin"]}], "responses": {}}
        },
    },
}


def test_a_tier_never_trades_narrow_scopes_for_an_admin_one(tmp_path: Path) -> None:
    """x.admin opens exactly the two operations, fewer than mail.read + mail.send together would
    with other specs: counting alone would ask for it. Its level (manage) sets it aside."""
    with LocalHTTPServer() as srv:
        srv.route("/mail.json", body=json.dumps(MAIL_SPEC).encode())
        manifest = {
            "resources": [
                {
                    "id": "mail",
                    "interaction_protocol": "REST",
                    "owner": "CONSUMER",
                    "display_name": "Mail",
                    "spec": {"spec_url": srv.url("/mail.json")},
                }
            ],
            "operations": [
                {"id": "list", "resource": "mail", "api_operation_spec": {"operation_id": "listMessages"}},
                {"id": "send", "resource": "mail", "api_operation_spec": {"operation_id": "send"}},
            ],
            "resource_accesses": [
                {
                    "id": f"a-{o}",
                    "operation": o,
                    "identity_used": "END_USER",
                    "necessity": "REQUIRED",
                    "access_justification": "the test",
                }
                for o in ("list", "send")
            ],
        }
        settings_ = Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=20)
        with Engine(settings_) as engine:
            report = engine.derive({"name": "mail agent", "resourceAccessManifest": manifest})
    assert [a.scopes for a in report.accesses] == [["mail.read"], ["mail.send"]]
    assert report.tiers["REQUIRED"].identities["END_USER"].scopes == ["mail.read", "mail.send"]
    listed = {tuple(x["scopes"]): x["set_aside"] for x in report.accesses[0].alternatives or []}
    assert listed[("x.admin",)] == "a manage permission, where a read one is listed"
