"""The GitHub catalog: fine-grained permissions per REST endpoint, compiled from github/docs' data.

Built from the vendored upstream files (vendor/github), checked against GitHub's own spec
(@octokit/openapi) and against small hand-made data sets for the reconciliation rules.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from ramscope.derive.privilege import compatible
from ramscope.manifest import IdentityType
from ramscope.providers import catalog, catalog_for_servers, normalise_url, snapshot_versions
from ramscope.providers.catalog import Catalog, CatalogEntry, CatalogError, decode
from ramscope.providers.github import (
    DATA_DIR,
    FILES,
    INSTALLATION,
    NAMESPACE,
    NOTE_NO_INSTALLATION,
    NOTE_NO_USER,
    NOTE_PAT_ONLY,
    USER,
    build,
    normalise_path,
)

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "vendor" / "github"
SHIPPED = ROOT / "src" / "ramscope" / "providers" / "data" / "github.catalog.json.gz"


def alternatives(entry: CatalogEntry, scheme: str) -> set[frozenset[str]]:
    return {frozenset(s for t in alt for s in t.scopes) for alt in entry.requirements if alt[0].scheme == scheme}


def least(entry: CatalogEntry, scheme: str) -> set[frozenset[str]]:
    """The alternatives no other alternative of the scheme sits below (write > read per permission)."""
    rank = {"read": 0, "write": 1, "admin": 2}

    def below(a: frozenset[str], b: frozenset[str]) -> bool:
        da = dict(s.rsplit(":", 1) for s in a)
        db = dict(s.rsplit(":", 1) for s in b)
        return a != b and da.keys() == db.keys() and all(rank[da[k]] <= rank[db[k]] for k in da)

    alts = alternatives(entry, scheme)
    return {a for a in alts if not any(below(b, a) for b in alts)}


@pytest.fixture(scope="module")
def github() -> Catalog:
    cat = catalog("github")
    assert cat is not None
    return cat


@pytest.fixture(scope="module")
def upstream() -> dict[str, Any]:
    return {f: json.loads((VENDOR / DATA_DIR / f).read_text("utf-8")) for f in FILES}


# --------------------------------------------------------------------------- build


def test_build_is_deterministic_and_the_shipped_snapshot_is_current() -> None:
    first = build(VENDOR)
    assert build(VENDOR) == first
    assert SHIPPED.read_bytes() == first, "run: python scripts/build_providers.py --only github"


def test_version_and_source_name_the_upstream_files(github: Catalog) -> None:
    # GitHub's five lists, then the classic-scope table and ramscope's reviewed reading of the docs.
    names = [f"{DATA_DIR}/{f}" for f in FILES] + ["classic.json", "oauth-scopes/scopes-for-oauth-apps.table.md"]
    keys = [*FILES, "classic.json", "oauth-scopes/scopes-for-oauth-apps.table.md"]
    text = "".join(
        f"{k}\0{hashlib.sha256((VENDOR / n).read_bytes()).hexdigest()}\n" for k, n in zip(keys, names, strict=True)
    )
    digest = hashlib.sha256(text.encode()).hexdigest()
    assert github.version == f"2026-11-30+{digest[:8]}"
    assert snapshot_versions()["catalog:github"] == github.version
    assert github.label == f"catalog:github@{github.version}"
    src = github.source
    assert src["repository"] == "github/docs"
    assert src["path"] == "src/github-apps/data/fpt-2022-11-28/"
    assert src["license"] == "MIT"
    assert set(src["commits"]) == set(FILES) == set(src["sha256"])
    assert (ROOT / src["license_file"]).read_text("utf-8").startswith("MIT License")
    notice = (ROOT / "src" / "ramscope" / "providers" / "data" / "NOTICE.md").read_text("utf-8")
    assert "github.catalog.json.gz" in notice
    assert "MIT" in notice
    assert "CC-BY-4.0" in notice


def test_a_vendored_file_that_does_not_match_sources_md_is_refused(tmp_path: Path) -> None:
    copy = tmp_path / "github"
    shutil.copytree(VENDOR, copy)
    target = copy / DATA_DIR / "server-to-server-rest.json"
    target.write_bytes(target.read_bytes().replace(b'"get"', b'"GET"', 1))
    with pytest.raises(CatalogError, match=r"does not match SOURCES\.md"):
        build(copy)


# --------------------------------------------------------------------------- schemes and servers


def test_two_oauth_schemes_in_one_namespace_one_per_identity(github: Catalog) -> None:
    user, inst = github.scheme_map[USER], github.scheme_map[INSTALLATION]
    assert user.namespace == inst.namespace == NAMESPACE
    assert compatible(user, IdentityType.END_USER) is True
    assert compatible(user, IdentityType.AGENT) is False
    assert compatible(inst, IdentityType.AGENT) is True
    assert compatible(inst, IdentityType.END_USER) is False
    (flow,) = user.flows
    assert flow.authorization_url == "https://github.com/login/oauth/authorize"
    assert flow.token_url == "https://github.com/login/oauth/access_token"
    assert "fine-grained personal access token" in user.description
    assert inst.flows[0].token_url == "https://api.github.com/app/installations/{installation_id}/access_tokens"
    assert user.scope_description("issues:write") == "Issues (write)"


def test_servers_are_api_github_com_and_ghes_api_v3(github: Catalog) -> None:
    assert github.serves(normalise_url("https://api.github.com/"))
    assert github.serves(normalise_url("https://GHE.example.com/api/v3"))
    # octokit's GHES server after substituting its variables' defaults
    assert github.serves(normalise_url("http://HOSTNAME/api/v3"))
    assert not github.serves(normalise_url("https://api.github.com.evil.test"))
    assert not github.serves(normalise_url("https://uploads.github.com"))
    assert not github.serves(normalise_url("https://graph.microsoft.com/v1.0"))


def test_catalog_for_servers_finds_github(github: Catalog) -> None:
    assert catalog_for_servers([normalise_url("https://api.github.com")]) is github
    # GHES's /api/v3 only for a spec carrying GitHub's own marker, and never plain http (issue 30, item 16).
    assert catalog_for_servers([normalise_url("https://ghe.example.com/api/v3/")], plan="ghes") is github
    assert catalog_for_servers([normalise_url("https://ghe.example.com/api/v3/")]) is None
    assert catalog_for_servers([normalise_url("http://ghe.example.com/api/v3/")], plan="ghes") is None


def test_paths_match_whatever_the_parameters_are_called(github: Catalog) -> None:
    assert normalise_path("/repos/{owner}/{repo}/issues/") == "/repos/{}/{}/issues"
    a = github.lookup("post", "/repos/{owner}/{repo}/issues")
    b = github.lookup("POST", "/repos/{o}/{r}/issues/")
    assert a is not None
    assert a is b
    assert github.lookup("GET", "/repos/{owner}/{repo}/issue") is None
    assert github.lookup("PUT", "/repos/{owner}/{repo}/issues") is None


# --------------------------------------------------------------------------- the lattice


def test_write_implies_read(github: Catalog) -> None:
    get = github.lookup("GET", "/repos/{owner}/{repo}/issues")
    post = github.lookup("POST", "/repos/{owner}/{repo}/issues")
    assert get is not None
    assert post is not None
    for scheme in (USER, INSTALLATION):
        assert alternatives(get, scheme) == {frozenset({"issues:read"}), frozenset({"issues:write"})}
        assert alternatives(post, scheme) == {frozenset({"issues:write"})}
    # A permission with an admin level: read is met by read, write or admin.
    projects = github.lookup("GET", "/orgs/{org}/projects")
    assert projects is not None
    assert alternatives(projects, USER) == {
        frozenset({"organization_projects:read"}),
        frozenset({"organization_projects:write"}),
        frozenset({"organization_projects:admin"}),
    }


def test_additional_permissions_are_anded_unless_documented_either(
    github: Catalog, upstream: dict[str, Any]
) -> None:
    # GitHub lists "list assignees" under Issues with Pull requests as additional, and vice versa.
    fg = upstream["fine-grained-pat-permissions.json"]
    listed = [
        (perm, e["access"], e["additional-permissions"])
        for perm, body in fg.items()
        for e in body["permissions"]
        if e["verb"] == "get" and e["requestPath"] == "/repos/{owner}/{repo}/assignees"
    ]
    assert sorted(listed) == [("issues", "read", ["pull_requests"]), ("pull_requests", "read", ["issues"])]
    entry = github.lookup("GET", "/repos/{owner}/{repo}/assignees")
    assert entry is not None
    # Issues or pull requests: GitHub documents "at least one of the following permission sets" for the
    # endpoints the two share (vendor/github/classic.json, "either"), so each alone is an alternative.
    alts = alternatives(entry, USER)
    assert alts == {frozenset({f"{p}:{lv}"}) for p in ("issues", "pull_requests") for lv in ("read", "write")}
    assert least(entry, USER) == {frozenset({"issues:read"}), frozenset({"pull_requests:read"})}
    assert any("either permission set suffices" in n for n in entry.notes)
    # Any other pair stays ANDed: a token with both works either way.
    runners = github.lookup("PUT", "/orgs/{org}/actions/permissions/repositories/{repository_id}")
    assert runners is not None
    assert alternatives(runners, USER) == {frozenset({"metadata:read", "organization_administration:write"})}
    assert any("all are required here" in n for n in runners.notes)


def _tiny_vendor(
    tmp_path: Path, s2s_perms: dict[str, Any], fg_perms: dict[str, Any], rest: dict[str, list[Any]]
) -> Path:
    """A vendor directory of the real shape, with SOURCES.md rows for what is written."""
    root = tmp_path / "github"
    (root / DATA_DIR).mkdir(parents=True)
    docs = {
        "server-to-server-permissions.json": s2s_perms,
        "fine-grained-pat-permissions.json": fg_perms,
        "user-to-server-rest.json": {"x": rest.get("user", [])},
        "server-to-server-rest.json": {"x": rest.get("installation", [])},
        "fine-grained-pat.json": {"x": rest.get("pat", [])},
    }
    rows = []
    for name, doc in docs.items():
        data = json.dumps(doc, indent=2).encode()
        (root / DATA_DIR / name).write_bytes(data)
        rows.append(f"| {DATA_DIR}/{name} | {'0' * 40} | {len(data)} | {hashlib.sha256(data).hexdigest()} |")
    sources = "| file | upstream commit | bytes | sha256 |\n|---|---|---|---|\n" + "\n".join(rows)
    # The classic-scope table and ramscope's reviewed reading of GitHub's docs, as shipped.
    real = VENDOR
    (root / "oauth-scopes").mkdir()
    table = (real / "oauth-scopes" / "scopes-for-oauth-apps.table.md").read_bytes()
    (root / "oauth-scopes" / "scopes-for-oauth-apps.table.md").write_bytes(table)
    classic = json.loads((real / "classic.json").read_text("utf-8")) | {"endpoints": []}
    classic["public"] = classic["public"] | {"endpoints": []}
    (root / "classic.json").write_text(json.dumps(classic), "utf-8")
    sources += f"\n\n| oauth-scopes/scopes-for-oauth-apps.table.md | excerpt | {hashlib.sha256(table).hexdigest()} |"
    (root / "SOURCES.md").write_text(sources + "\n\n- Retrieved: 2026-01-02\n", "utf-8")
    return root


def _op(verb: str, path: str) -> dict[str, str]:
    return {"slug": "x", "subcategory": "x", "verb": verb, "requestPath": path}


def _perm(title: str, *entries: dict[str, Any]) -> dict[str, Any]:
    return {"title": title, "displayTitle": f'Repository permissions for "{title}"', "permissions": list(entries)}


def _s2s(verb: str, path: str, access: str, *, more: bool, user: bool = True, inst: bool = True) -> dict[str, Any]:
    return {
        "category": "x", **_op(verb, path), "access": access,
        "user-to-server": user, "server-to-server": inst, "additional-permissions": more,
    }  # fmt: skip


def test_a_bare_true_is_named_by_the_other_permissions_listing_the_endpoint(tmp_path: Path) -> None:
    vendor = _tiny_vendor(
        tmp_path,
        {
            "contents": _perm("Contents", _s2s("put", "/r/{a}/f", "write", more=True)),
            "workflows": _perm("Workflows", _s2s("put", "/r/{a}/f", "write", more=True)),
        },
        {},
        {"user": [_op("put", "/r/{a}/f")], "installation": [_op("put", "/r/{a}/f")]},
    )
    cat = decode(build(vendor), normalise_path)
    assert cat.version.startswith("2026-01-02+")
    (entry,) = cat.entries
    for scheme in (USER, INSTALLATION):
        assert alternatives(entry, scheme) == {frozenset({"contents:write", "workflows:write"})}


def test_a_bare_true_with_nothing_to_name_is_refused(tmp_path: Path) -> None:
    vendor = _tiny_vendor(
        tmp_path,
        {"contents": _perm("Contents", _s2s("put", "/r/{a}/f", "write", more=True))},
        {},
        {"user": [_op("put", "/r/{a}/f")]},
    )
    with pytest.raises(CatalogError, match="says additional permissions, none listed"):
        build(vendor)


def test_the_older_fine_grained_list_fills_in_and_disagreements_are_noted(tmp_path: Path) -> None:
    fg_entry = {"category": "x", **_op("get", "/only-fg"), "access": "read"}
    vendor = _tiny_vendor(
        tmp_path,
        {"gists": _perm("Gists", _s2s("post", "/gists", "write", more=False))},
        {
            "gists": _perm("Gists", {"category": "x", **_op("post", "/gists"), "access": "write",
                                     "additional-permissions": ["metadata"]}),
            "metadata": _perm("Metadata", {"category": "x", **_op("post", "/gists"), "access": "read",
                                           "additional-permissions": ["gists"]},
                              {**fg_entry, "additional-permissions": ["issues"]}),
            "issues": _perm("Issues", {**fg_entry, "additional-permissions": ["metadata"]}),
        },
        {"pat": [_op("post", "/gists"), _op("get", "/only-fg")]},
    )  # fmt: skip
    cat = decode(build(vendor), normalise_path)
    gists, only_fg = cat.lookup("POST", "/gists"), cat.lookup("GET", "/only-fg")
    assert gists is not None
    assert only_fg is not None
    # The newer GitHub App list wins; the difference is said.
    assert alternatives(gists, USER) == {frozenset({"gists:write"})}
    assert any("older fine-grained PAT permission list names gists:write, metadata:read" in n for n in gists.notes)
    # The older list's names, at the levels of their own entries, ANDed.
    assert alternatives(only_fg, USER) == {frozenset({"issues:read", "metadata:read"})}
    assert NOTE_PAT_ONLY in only_fg.notes
    assert NOTE_NO_INSTALLATION in only_fg.notes


# --------------------------------------------------------------------------- token kinds


def test_alternatives_only_for_the_token_kinds_github_lists(github: Catalog, upstream: dict[str, Any]) -> None:
    def listed(name: str, verb: str, path: str) -> bool:
        return any(e["verb"] == verb and e["requestPath"] == path for v in upstream[name].values() for e in v)

    # Projects (classic) for an organisation: user tokens only.
    assert listed("user-to-server-rest.json", "get", "/orgs/{org}/projects")
    assert not listed("server-to-server-rest.json", "get", "/orgs/{org}/projects")
    org_projects = github.lookup("GET", "/orgs/{org}/projects")
    assert org_projects is not None
    assert alternatives(org_projects, INSTALLATION) == set()
    assert NOTE_NO_INSTALLATION in org_projects.notes
    assert "installation tokens (server-to-server)" in NOTE_NO_INSTALLATION

    # A deployment protection rule is reviewed by the app itself: installation tokens only.
    path = "/repos/{owner}/{repo}/actions/runs/{run_id}/deployment_protection_rule"
    assert listed("server-to-server-rest.json", "post", path)
    assert not listed("user-to-server-rest.json", "post", path)
    assert not listed("fine-grained-pat.json", "post", path)
    review = github.lookup("POST", path)
    assert review is not None
    assert alternatives(review, USER) == set()
    assert alternatives(review, INSTALLATION)
    assert NOTE_NO_USER in review.notes

    # Every entry from GitHub's lists: a scheme's alternatives exactly where its token kind is listed,
    # else the note. (Entries from ramscope's reviewed reading of the docs say so: notifications, search ...)
    for e in github.entries:
        if any(n.startswith("from ramscope's reviewed reading") for n in e.notes):
            continue
        verb = e.method.lower()
        user = listed("user-to-server-rest.json", verb, e.path) or listed("fine-grained-pat.json", verb, e.path)
        inst = listed("server-to-server-rest.json", verb, e.path)
        assert user or inst, e.key
        assert bool(alternatives(e, USER)) == user, e.key
        assert (NOTE_NO_USER in e.notes) != user, e.key
        assert bool(alternatives(e, INSTALLATION)) == inst, e.key
        assert (NOTE_NO_INSTALLATION in e.notes) != inst, e.key


def test_callable_endpoints_no_permission_list_names_get_no_entry(github: Catalog, upstream: dict[str, Any]) -> None:
    # "Get a user" may be called by every token kind, and no permission list names it: the data
    # cannot tell "needs no permission" from "newer than the permission lists".
    assert any(
        e["verb"] == "get" and e["requestPath"] == "/users/{username}"
        for e in (x for v in upstream["server-to-server-rest.json"].values() for x in v)
    )
    assert github.lookup("GET", "/users/{username}") is None
    # 403 callable endpoints no permission list names; 39 of them (search, organisation Projects, the
    # authenticated user, gists, global advisories, team members, and since issue 35 the 15 whose reference
    # says the token needs no permission: rate limit, meta, emojis, Markdown, licenses, gitignore templates,
    # codes of conduct) are covered by ramscope's reviewed reading of GitHub's docs (vendor/github/classic.json).
    assert github.source["callable_without_permission_data"] == 364
    # Never an entry that would read as "needs nothing".
    assert all(e.requirements for e in github.entries)


def test_permissions_carry_githubs_titles(github: Catalog) -> None:
    p = github.permission(USER, "contents:read")
    assert p is not None
    assert (p.short, p.description, p.admin_description) == (
        "contents:read",
        "Contents (read)",
        'Repository permissions for "Contents" (read)',
    )
    # Two permissions titled "Administration": the description says which.
    org = github.permission(INSTALLATION, "organization_administration:write")
    repo = github.permission(INSTALLATION, "administration:write")
    assert org is not None
    assert repo is not None
    assert org.description == "Administration (write; organization)"
    assert repo.description == "Administration (write; repository)"


# --------------------------------------------------------------------------- GitHub's own spec


@pytest.fixture(scope="module")
def octokit(npm_corpora: Path) -> Path:
    return npm_corpora / "@octokit" / "openapi" / "generated"


def _operation(spec: dict[str, Any], operation_id: str) -> tuple[str, str]:
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if isinstance(op, dict) and op.get("operationId") == operation_id:
                return method, path
    raise AssertionError(operation_id)


def test_octokit_issues_create_needs_issues_write(github: Catalog, octokit: Path, upstream: dict[str, Any]) -> None:
    spec = orjson.loads((octokit / "api.github.com.json").read_bytes())
    assert github.serves(normalise_url(spec["servers"][0]["url"]))
    method, path = _operation(spec, "issues/create")
    assert (method, path) == ("post", "/repos/{owner}/{repo}/issues")
    entry = github.lookup(method, path)
    assert entry is not None
    # What GitHub lists for it: Issues (write), and the additional permissions it names (none).
    rows = [
        (perm, e["access"], e["additional-permissions"])
        for name in ("fine-grained-pat-permissions.json", "server-to-server-permissions.json")
        for perm, body in upstream[name].items()
        for e in body["permissions"]
        if (e["verb"], e["requestPath"]) == (method, path)
    ]
    assert {r[:2] for r in rows} == {("issues", "write")}
    additional = {x for r in rows if isinstance(r[2], list) for x in r[2]}
    assert additional == set()
    assert not any(r[2] is True for r in rows)
    expected = frozenset({"issues:write"} | {f"{a}:read" for a in additional})
    assert least(entry, USER) == {expected} == alternatives(entry, USER)
    assert least(entry, INSTALLATION) == {expected}
    assert entry.notes == ()


def test_octokit_get_content_needs_contents_read(github: Catalog, octokit: Path) -> None:
    spec = orjson.loads((octokit / "api.github.com.json").read_bytes())
    method, path = _operation(spec, "repos/get-content")
    entry = github.lookup(method, path)
    assert entry is not None
    assert alternatives(entry, USER) == {frozenset({"contents:read"}), frozenset({"contents:write"})}
    assert least(entry, USER) == least(entry, INSTALLATION) == {frozenset({"contents:read"})}


def test_octokit_ghes_specs_are_served_and_covered(github: Catalog, octokit: Path) -> None:
    ghes = sorted(octokit.glob("ghes-*.json"))
    ghes = [p for p in ghes if not p.stem.endswith(".deref")]
    assert ghes
    for p in ghes:
        spec = orjson.loads(p.read_bytes())
        server = spec["servers"][0]
        url = server["url"]
        for name, var in server.get("variables", {}).items():
            url = url.replace("{" + name + "}", var["default"])
        assert github.serves(normalise_url(url)), (p.name, url)
        method, path = _operation(spec, "repos/get-content")
        assert github.lookup(method, path) is not None
