"""Dropbox Stone files as a spec kind: routes as POST operations, scope and auth per route."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ramscope.derive.resolve import Target, resolve
from ramscope.errors import SpecError
from ramscope.specs import SpecKind, build_index, detect_kind
from ramscope.specs.model import SchemeRequirement, SchemeType
from ramscope.specs.stone import APP_SCHEME, TEAM_SCHEME, USER_SCHEME, parse_stone
from tests._specs import FIXTURES, make_spec, rest_operation

STONE = FIXTURES / "stone"
BASE = "https://raw.githubusercontent.com/dropbox/dropbox-api-spec/main/"


def _index(name: str):  # type: ignore[no-untyped-def]
    return build_index(
        make_spec((STONE / name).read_bytes(), BASE + name.replace(".trimmed", ""), media_type="text/plain")
    )


def test_files_download_needs_files_content_read() -> None:
    """files/download: a user's token with files.content.read, POST /2/files/download on the content host."""
    ix = _index("files.trimmed.stone")
    assert (ix.kind, ix.spec_version, ix.extra["namespace"]) == (SpecKind.STONE, "stone", "files")
    op = ix.operation("files/download")
    assert op is not None
    assert op.requirements == ((SchemeRequirement(USER_SCHEME, ("files.content.read",)),),)
    assert (op.method, op.full_path, op.security_source) == ("POST", "/2/files/download", "route")
    assert op.extra["host"] == "content.dropboxapi.com"
    (scheme,) = [s for s in ix.schemes if s.name == USER_SCHEME]
    assert scheme.flows[0].authorization_url == "https://www.dropbox.com/oauth2/authorize"
    assert scheme.flows[0].token_url == "https://api.dropboxapi.com/oauth2/token"


def test_versions_deprecation_and_alternatives() -> None:
    """copy:2 is /2/files/copy_v2; copy is deprecated; "app, user" is two alternatives; noauth needs nothing."""
    ix = _index("files.trimmed.stone")
    ops = {op.key: op for op in ix.operations}
    assert ops["files/copy:2"].full_path == "/2/files/copy_v2"
    assert ops["files/copy"].deprecated is True
    assert ops["files/copy:2"].deprecated is False
    assert ops["files/get_thumbnail:2"].requirements == (
        (SchemeRequirement(APP_SCHEME),),
        (SchemeRequirement(USER_SCHEME, ("files.content.read",)),),
    )
    assert ops["files/list_folder/longpoll"].requirements == ()
    app = ix.scheme_map[APP_SCHEME]
    assert (app.type, app.http_scheme) == (SchemeType.HTTP, "basic")


def test_team_route_takes_a_team_token_from_an_administrator() -> None:
    """auth "team": the team scheme with the route's scope, marked admin, with a finding at the route."""
    ix = _index("team.trimmed.stone")
    op = ix.operation("team/members/list:2")
    assert op is not None
    assert op.requirements == ((SchemeRequirement(TEAM_SCHEME, ("members.read",)),),)
    assert op.extra["principal"] == "admin"
    assert [d.code for d in ix.diagnostics if d.path == op.pointer] == ["stone-team-route"]


def test_app_route_and_route_without_scope() -> None:
    """check/app takes the app key and secret; auth/token/revoke takes any user token (no scope named)."""
    assert _index("check.stone").operation("check/app").requirements == ((SchemeRequirement(APP_SCHEME),),)  # type: ignore[union-attr]
    revoke = _index("auth.stone").operation("auth/token/revoke")
    assert revoke is not None
    assert revoke.requirements == ((SchemeRequirement(USER_SCHEME),),)


@pytest.mark.parametrize(
    ("body", "url", "kind"),
    [
        (b"namespace files\n\nroute a (Void, Void, Void)\n", "", SpecKind.STONE),
        (b"# c\n\nnamespace x\n", "", SpecKind.STONE),
        (b"import common\nroute a (Void, Void, Void)\n", "https://x.test/files.stone", SpecKind.STONE),
    ],
)
def test_detection(body: bytes, url: str, kind: SpecKind) -> None:
    """A namespace line opens a Stone file; a route line at a .stone URL does too."""
    assert detect_kind(body, "text/plain", url=url) is kind


def test_unreadable_route_is_skipped_and_said() -> None:
    """A route header with unknown words is reported and skipped; an unknown auth leaves the route unknown."""
    text = 'namespace n\n\nroute a (A, B, C) weird words\n\nroute b (A, B, C)\n    attrs\n        auth = "robot"\n'
    ix = build_index(make_spec(text, "https://x.test/n.stone", media_type="text/plain"))
    assert [op.key for op in ix.operations] == ["n/b"]
    assert ix.operations[0].requirements is None
    assert sorted(d.code for d in ix.diagnostics) == ["invalid-operation", "security-undeclared", "stone-invalid-auth"]


def test_no_namespace_is_unsupported() -> None:
    with pytest.raises(SpecError, match="without a namespace"):
        parse_stone("route a (A, B, C)\n")


_route = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=10)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(_route, st.integers(1, 5), st.sampled_from(["user", "team", "app", "noauth", "app, user"])),
        min_size=1,
        max_size=8,
        unique_by=lambda t: (t[0], t[1]),
    )
)
def test_round_trip_of_route_names(routes: list[tuple[str, int, str]]) -> None:
    """Routes written as Stone come back as namespace/name[:version] with their URL paths."""
    text = 'namespace ns\n    "doc"\n\n' + "".join(
        f'route {n}{":" + str(v) if v > 1 else ""} (A, List(B), C)\n    "d"\n\n    attrs\n        auth = "{a}"\n'
        f'        scope = "x.read"\n\n'
        for n, v, a in routes
    )
    doc = parse_stone(text)
    assert [(r.name, r.version, r.attrs["auth"]) for r in doc.routes] == routes
    ix = build_index(make_spec(text, "https://x.test/ns.stone", media_type="text/plain"))
    assert [op.full_path for op in ix.operations] == [f"/2/ns/{n}" + (f"_v{v}" if v > 1 else "") for n, v, _ in routes]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet='namespace route()attrs="\n =,:/ab_1#\t', max_size=400))
def test_reader_never_crashes(text: str) -> None:
    """Any text either reads or raises SpecError; problems are reported, not raised."""
    try:
        doc = parse_stone(text)
    except SpecError:
        return
    assert len(doc.routes) <= text.count("route")


@pytest.mark.parametrize(
    ("op_id", "method", "path", "key", "matched_by"),
    [
        ("files/copy:2", "", "", "files/copy:2", "operation_id"),
        ("files/copy_v2", "", "", "files/copy:2", "operation_id"),
        ("", "POST", "/2/files/copy_v2", "files/copy:2", "path_method"),
        ("", "POST", "/files/download", "files/download", "path_method"),
        ("", "POST", "https://content.dropboxapi.com/2/files/download", "files/download", "path_method"),
    ],
)
def test_resolving_a_route(op_id: str, method: str, path: str, key: str, matched_by: str) -> None:
    """A route is found by namespace/name (either version spelling) or by POST and its URL path."""
    ix = _index("files.trimmed.stone")
    resource, op = rest_operation(op_id, method, path)
    found = resolve(resource, op, ix)
    assert isinstance(found, Target)
    assert (found.entry.key, found.matched_by) == (key, matched_by)
