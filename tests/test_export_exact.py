"""`export` allows exactly the declared operations (issue 22): one segment per ordinary parameter,
reserved expansion only where the spec says so and then bounded by its flatPath or pattern,
non-empty segments, no dot segments, the API's own hosts; an invalid card exports nothing and an
undetermined access is never permitted. Decisions are the Cedar engine's own (cedarpy) and the
JSON allowlist's regular expression, which must agree."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import cedarpy
import pytest

from ramscope.derive.records import _target_dict
from ramscope.derive.resolve import Target
from ramscope.errors import InputError
from ramscope.governance import cedar
from ramscope.specs import build_index
from tests._specs import make_spec

SECRETS = "secretmanager.googleapis.com"
DIGEST = "ab" * 32


def google_documents() -> Path:
    """The Discovery documents bundled with google-api-python-client (a test dependency)."""
    import googleapiclient

    return Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"


def discovery_target(method_id: str, *, drop: tuple[str, ...] = ()) -> dict[str, Any]:
    """The report's target of a real Discovery method (Google's Secret Manager), optionally with
    ``flatPath`` or the reserved parameter's ``pattern`` removed from the document."""
    doc = json.loads((google_documents() / "secretmanager.v1.json").read_text("utf-8"))
    node: Any = doc
    for part in method_id.split(".")[1:-1]:
        node = node["resources"][part]
    m = node["methods"][method_id.rsplit(".", maxsplit=1)[-1]]
    if "flatPath" in drop:
        m.pop("flatPath", None)
    if "pattern" in drop:
        m["parameters"]["name"].pop("pattern", None)
    index = build_index(make_spec(doc, "https://www.googleapis.com/discovery/v1/apis/secretmanager/v1/rest"))
    (entry,) = index.by_operation_id[method_id]
    return _target_dict(Target(index, entry, "operation_id", ()))


def openapi_target(
    path: str,
    method: str = "get",
    servers: list[dict[str, str]] | None = None,
    op_servers: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    op: dict[str, Any] = {"operationId": "op", "responses": {"200": {"description": "ok"}}}
    if op_servers is not None:
        op["servers"] = op_servers
    doc: dict[str, Any] = {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {path: {method: op}}}
    if servers is not None:
        doc["servers"] = servers
    index = build_index(make_spec(doc, "https://docs.example.com/openapi.json"))
    (entry,) = index.by_operation_id["op"]
    return _target_dict(Target(index, entry, "operation_id", ()))


def report_of(*targets: dict[str, Any], name: str = "Agent", digest: str = DIGEST) -> dict[str, Any]:
    accesses = [
        {
            "id": f"a{i}",
            "identity": "AGENT",
            "complete": True,
            "confirmation_required": False,
            "spec_url": "https://docs.example.com/openapi.json",
            "target": t,
        }
        for i, t in enumerate(targets)
    ]
    return {"card": {"name": name, "source": "card.json", "sha256": digest, "valid": True}, "accesses": accesses}


def allowed(report: dict[str, Any], method: str, host: str, path: str) -> bool:
    """Cedar's decision, checked to agree with the allowlist's regular expressions."""
    policies = cedar.cedar_policies(report)
    principal = {"type": "Ramscope::Agent", "id": cedar.agent_id(report)}
    request = {
        "principal": principal,
        "action": {"type": "Ramscope::Action", "id": method},
        "resource": {"type": "Ramscope::HttpEndpoint", "id": "r"},
        "context": {"identity": "AGENT", "confirmed": False},
    }
    entities = [
        {"uid": principal, "attrs": {}, "parents": []},
        {"uid": request["resource"], "attrs": {"host": host, "path": path}, "parents": []},
    ]
    result = cedarpy.is_authorized(request, policies, entities, schema=cedar.cedar_schema())
    assert not result.diagnostics.errors, result.diagnostics.errors
    by_cedar = result.decision == cedarpy.Decision.Allow
    by_regex = any(
        e["method"] == method and host in e["hosts"] and re.fullmatch(e["path_regex"], path)
        for e in cedar.allowlist(report)["allow"]
    )
    assert by_cedar == by_regex, (method, host, path)
    return by_cedar


# ---------------------------------------------------------------- reserved expansion


@pytest.mark.parametrize("drop", [(), ("flatPath",)], ids=["flatPath", "pattern"])
def test_secret_get_does_not_allow_reading_the_secret_value(drop: tuple[str, ...]) -> None:
    """secretmanager.projects.secrets.get ({+name}) allows that method only: not versions/latest:access."""
    report = report_of(discovery_target("secretmanager.projects.secrets.get", drop=drop))
    assert allowed(report, "GET", SECRETS, "/v1/projects/p/secrets/s")
    for path in (
        "/v1/projects/p/secrets/s/versions/latest:access",
        "/v1/projects/p/secrets/s/versions/latest",
        "/v1/projects/p",
        "/v1/projects/p/locations/l",
        "/v1/x/secrets/s",
        "/v1/projects/p/secrets/",
        "/v1/projects//secrets/s",
        "/v1/projects/../secrets/s",
        "/v1/projects/p/secrets/%2e%2E",
        "/v1/projects/p%2Fq/secrets/s",
    ):
        assert not allowed(report, "GET", SECRETS, path), path


def test_reserved_expansion_without_flat_path_or_pattern_is_not_exported() -> None:
    """{+name} bounded by nothing could stand for any path under /v1/: not exported, so denied."""
    report = report_of(discovery_target("secretmanager.projects.secrets.get", drop=("flatPath", "pattern")))
    doc = cedar.allowlist(report)
    assert doc["allow"] == []
    assert "reserved expansion" in doc["not_exported"][0]["reason"]
    assert not allowed(report, "GET", SECRETS, "/v1/projects/p/secrets/s")


@pytest.mark.parametrize("pattern", ["^projects/.*$", "projects/[^/]+", "^projects/[^/]+/(a|b)$", "^a.b$"])
def test_patterns_outside_the_readable_form_are_not_exported(pattern: str) -> None:
    """Only anchored literal text and [^/]+ segments bound a reserved expansion; anything else refuses."""
    target = discovery_target("secretmanager.projects.secrets.get", drop=("flatPath",))
    target["hints"]["reserved_patterns"]["name"] = pattern
    assert isinstance(cedar.path_template(target), str)


def test_openapi_plus_is_an_ordinary_parameter() -> None:
    """OpenAPI has no reserved expansion in paths: {+p} is one segment named +p."""
    report = report_of(openapi_target("/files/{+p}", servers=[{"url": "https://api.example.com"}]))
    assert allowed(report, "GET", "api.example.com", "/files/a")
    assert not allowed(report, "GET", "api.example.com", "/files/a/b")


# ---------------------------------------------------------------- segments


def test_a_parameter_is_one_non_empty_segment_that_is_no_dot_segment() -> None:
    """DELETE /v1/users//sessions, dot segments in every spelling and encoded slashes are denied."""
    report = report_of(
        openapi_target("/v1/users/{id}/sessions", "delete", servers=[{"url": "https://api.example.com"}])
    )
    assert allowed(report, "DELETE", "api.example.com", "/v1/users/u1/sessions")
    assert allowed(report, "DELETE", "api.example.com", "/v1/users/..u/sessions")
    assert allowed(report, "DELETE", "api.example.com", "/v1/users/team%40example.com/sessions")
    for seg in ("", ".", "..", "%2e", "%2E%2e", ".%2e", "a/b", "a%2Fb", "a%2fb"):
        assert not allowed(report, "DELETE", "api.example.com", f"/v1/users/{seg}/sessions"), seg


def test_a_dot_segment_completed_by_the_template_is_denied() -> None:
    """A parameter beside a literal dot ({v}.) cannot spell '..' with it."""
    report = report_of(openapi_target("/v1/{v}./x", servers=[{"url": "https://api.example.com"}]))
    assert allowed(report, "GET", "api.example.com", "/v1/a./x")
    assert not allowed(report, "GET", "api.example.com", "/v1/../x")
    assert not allowed(report, "GET", "api.example.com", "/v1/%2e./x")


def test_adjacent_parameters_are_not_exported() -> None:
    """{a}{b}: no one value of each can be told; refused rather than widened."""
    assert "nothing between them" in str(cedar.path_template({"kind": "openapi", "path": "/x/{a}{b}"}))


def test_the_regex_does_not_match_before_a_final_newline() -> None:
    """Anchored with \\A ... \\Z: '$' would also match '/x\\n'."""
    report = report_of(openapi_target("/x", servers=[{"url": "https://api.example.com"}]))
    rx = cedar.allowlist(report)["allow"][0]["path_regex"]
    assert rx.endswith("\\Z")
    assert re.match(rx, "/x")
    assert not re.match(rx, "/x\n")


# ---------------------------------------------------------------- hosts


def test_the_host_is_the_apis_not_the_specs() -> None:
    """A spec served from docs.example.com describing api.example.com: only api.example.com is allowed."""
    report = report_of(
        openapi_target("/x", servers=[{"url": "https://api.example.com/v1"}, {"url": "https://eu.example.com"}])
    )
    e = cedar.allowlist(report)["allow"][0]
    assert (e["path"], e["hosts"]) == ("/v1/x", ["api.example.com", "eu.example.com"])
    assert allowed(report, "GET", "api.example.com", "/v1/x")
    assert allowed(report, "GET", "eu.example.com", "/v1/x")
    assert not allowed(report, "GET", "docs.example.com", "/v1/x")


def test_an_operations_own_servers_replace_the_roots() -> None:
    """An operation with its own servers is on those hosts only, not on the root's."""
    target = openapi_target(
        "/x", servers=[{"url": "https://api.example.com"}], op_servers=[{"url": "https://collector.example.net/c"}]
    )
    assert (target["servers"], "hints" in target) == (["https://collector.example.net/c"], False)
    report = report_of(target)
    assert allowed(report, "GET", "collector.example.net", "/c/x")
    assert not allowed(report, "GET", "api.example.com", "/c/x")


def test_discovery_host_is_the_root_url() -> None:
    """Discovery: the host is rootUrl's (secretmanager.googleapis.com), not www.googleapis.com."""
    report = report_of(discovery_target("secretmanager.projects.secrets.get"))
    assert cedar.allowlist(report)["allow"][0]["hosts"] == [SECRETS]
    assert not allowed(report, "GET", "www.googleapis.com", "/v1/projects/p/secrets/s")


def test_openapi_without_servers_is_served_where_its_spec_is() -> None:
    """OpenAPI 3 without servers: the API is at '/' relative to the spec (its host)."""
    report = report_of(openapi_target("/x"))
    assert cedar.allowlist(report)["allow"][0]["hosts"] == ["docs.example.com"]


def test_a_report_without_servers_is_not_exported() -> None:
    """An older report names no API server: the host cannot be told, nothing is permitted."""
    target = openapi_target("/x", servers=[{"url": "https://api.example.com"}])
    del target["servers"]
    assert "does not name the API's servers" in cedar.allowlist(report_of(target))["not_exported"][0]["reason"]


# ---------------------------------------------------------------- invalid and undetermined


def test_an_invalid_card_exports_nothing() -> None:
    """The report of an invalid card: an error, no policy text at all."""
    report = report_of(openapi_target("/x", servers=[{"url": "https://api.example.com"}]))
    report["card"]["valid"] = False
    with pytest.raises(InputError, match="nothing is exported"):
        cedar.cedar_policies(report)
    with pytest.raises(InputError, match="nothing is exported"):
        cedar.allowlist(report)


def test_an_undetermined_access_is_never_permitted() -> None:
    """Resolved, but its identity fits no alternative (complete: false): not permitted."""
    report = report_of(openapi_target("/x", servers=[{"url": "https://api.example.com"}]))
    report["accesses"][0].update(complete=False, reason="no-compatible-alternative")
    assert cedar.allowlist(report)["not_exported"] == [
        {"access": "a0", "reason": "its permissions were not determined (no-compatible-alternative)"}
    ]
    assert not allowed(report, "GET", "api.example.com", "/x")


# ---------------------------------------------------------------- principal


def test_two_cards_with_one_name_are_two_principals() -> None:
    """The principal is the card's sha256, not the name it chose: a look-alike card gets nothing."""
    target = openapi_target("/x", servers=[{"url": "https://api.example.com"}])
    mine, theirs = report_of(target), report_of(copy.deepcopy(target), digest="cd" * 32)
    assert cedar.agent_id(mine) == "sha256:" + DIGEST
    assert cedar.agent_id(mine) != cedar.agent_id(theirs)
    assert cedar.allowlist(mine)["agent_name"] == "Agent"
    assert f'principal == Ramscope::Agent::"sha256:{DIGEST}"' in cedar.cedar_policies(mine)


# ---------------------------------------------------------------- the command


def test_export_of_an_invalid_card_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`export -o FILE` of an invalid card: exit 1, one line, FILE not written (it was, with permits)."""
    from ramscope.cli import main
    from tests.support.reports import TRAVEL, cli_globals

    doc = json.loads(TRAVEL.read_text("utf-8"))
    accesses = doc["resourceAccessManifest"]["resource_accesses"]
    accesses.append(copy.deepcopy(accesses[0]))  # a duplicate id: invalid
    card = tmp_path / "invalid.card.json"
    card.write_text(json.dumps(doc), "utf-8")
    out = tmp_path / "policies.cedar"
    for fmt in ("cedar", "json"):
        assert main([*cli_globals(tmp_path / "cache"), "-q", "export", "--format", fmt, "-o", str(out), str(card)]) == 1
        assert not out.exists()
        err = capsys.readouterr().err
        assert "nothing exported" in err


def test_cedar_schema_needs_no_card(capsys: pytest.CaptureFixture[str]) -> None:
    """`export --format cedar-schema` writes the schema without a CARD; the other formats need one."""
    from ramscope.cli import main

    assert main(["export", "--format", "cedar-schema"]) == 0
    assert capsys.readouterr().out == cedar.cedar_schema()
    assert main(["export", "--format", "json"]) == 2
    assert "needs a CARD" in capsys.readouterr().err


# ---------------------------------------------------------------- GraphQL and Stone


def _fixture_target(name: str, op_id: str, media_type: str = "application/json") -> dict[str, Any]:
    from tests._specs import FIXTURES

    index = build_index(make_spec((FIXTURES / name).read_bytes(), "https://x.example/spec", media_type=media_type))
    (entry,) = index.by_operation_id[op_id]
    return _target_dict(Target(index, entry, "operation_id", ()))


def test_a_graphql_field_is_not_exported() -> None:
    """Every GraphQL field is POST to one endpoint: permitting it would permit every query and mutation."""
    report = report_of(_fixture_target("graphql/shopify-admin-2026-10.trimmed.json", "Query.app"))
    doc = cedar.allowlist(report)
    assert doc["allow"] == []
    assert doc["not_exported"][0]["reason"].startswith("a GraphQL field cannot be told")


def test_a_dropbox_route_is_exported_on_its_own_host() -> None:
    """Stone routes name their host: files/download is POST /2/files/download on content.dropboxapi.com only."""
    report = report_of(_fixture_target("stone/files.trimmed.stone", "files/download", "text/plain"))
    assert allowed(report, "POST", "content.dropboxapi.com", "/2/files/download")
    assert not allowed(report, "POST", "api.dropboxapi.com", "/2/files/download")
    assert not allowed(report, "POST", "content.dropboxapi.com", "/2/files/delete_v2")
