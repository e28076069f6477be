"""Vendor per-tool MCP scopes as data (issue 32, item 4): GitHub's MCP server first.

The catalog is compiled from github/github-mcp-server's published tool definitions (its README's
Required / Accepted OAuth Scopes, MIT; ``vendor/github-mcp-server``). Its remote server lists tools
only to authenticated clients, so the conversation is a synthesized cassette of what its code answers
without a token (``tests/fixtures/cassettes/mcp-github-remote.yaml``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from ramscope.cli import EXIT_OK, main
from ramscope.documents import CAPTURE_FORMAT
from ramscope.providers import mcp_catalog, snapshot_versions
from ramscope.specs.mcp import OAUTH_SCHEME, build_mcp_index
from ramscope.specs.model import SchemeRequirement
from ramscope.store.model import FetchedSpec, Origin
from tests.support.mcpcards import write_mcp_card

ROOT = Path(__file__).resolve().parent.parent
CASSETTE = ROOT / "tests" / "fixtures" / "cassettes" / "mcp-github-remote.yaml"
GITHUB_MCP = "https://api.githubcopilot.com/mcp/"


def _derive(tmp_path: Path, card: Path) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "report.json"
    code = main(
        [
            "--cache-dir",
            str(tmp_path / "cache"),
            "--cassette",
            str(CASSETTE),
            "--offline",
            "--no-progress",
            "derive",
            str(card),
            "-o",
            str(out),
        ]
    )
    return code, json.loads(out.read_text("utf-8"))


def test_githubs_issue_creating_tool_derives_the_scope_github_documents(tmp_path: Path) -> None:
    """issue_write ("Create or update issue"): Required OAuth Scopes ``repo``, from the catalog, with its source."""
    card = write_mcp_card(tmp_path / "card.json", GITHUB_MCP, "issue_write")
    code, report = _derive(tmp_path, card)
    assert code == EXIT_OK, report["diagnostics"]
    (access,) = report["accesses"]
    assert access["complete"] is True
    assert access["scopes"] == ["repo"]
    label = access["requirements_source"]
    assert label.startswith("catalog:github-mcp@")
    assert access["target"]["security_source"] == label
    assert access["scope_servers"] == {"repo": "https://github.com/login/oauth/access_token"}
    # The vendor's published tools stand in for the listing: repo opens the other tools that accept it.
    assert access["blast_radius"]["universe_operations"] > 50
    assert report["tiers"]["REQUIRED"]["END_USER"]["scopes"] == ["repo"]
    # GitHub's scopes_supported is every scope a tool may need: a client granted it would hold 12 for nothing.
    (plan,) = report["tiers"]["REQUIRED"]["END_USER"]["step_up"]
    assert plan["adds"] == []
    assert "repo" not in plan["beyond_need"]
    assert {"delete_repo", "workflow", "codespace"} <= set(plan["beyond_need"])
    assert len(plan["beyond_need"]) == 12
    note = next(d for d in report["diagnostics"] if d["code"] == "mcp-tool-unverified")
    assert label in note["message"]


@pytest.mark.parametrize(
    ("tool", "scopes"),
    [
        ("list_code_scanning_alerts", ["security_events"]),  # accepted: repo or security_events (hierarchy)
        ("delete_repository", ["delete_repo", "repo"]),  # all required
        ("list_notifications", ["notifications"]),
    ],
)
def test_other_tools_follow_githubs_scope_lines(tmp_path: Path, tool: str, scopes: list[str]) -> None:
    card = write_mcp_card(tmp_path / "card.json", GITHUB_MCP, tool)
    code, report = _derive(tmp_path, card)
    assert code == EXIT_OK
    assert report["accesses"][0]["scopes"] == scopes


def test_a_tool_github_documents_without_a_scope_still_needs_its_token(tmp_path: Path) -> None:
    """get_me lists no OAuth scope: a token of GitHub's authorization server, of no particular scope."""
    card = write_mcp_card(tmp_path / "card.json", GITHUB_MCP, "get_me")
    _, report = _derive(tmp_path, card)
    (access,) = report["accesses"]
    assert access["complete"] is True
    assert access["scopes"] == []
    assert access["choice"]["method"] != "none-required"
    assert [c["type"] for c in access["credentials"]] == ["oauth2"]


def test_a_tool_the_catalog_does_not_know_keeps_the_servers_baseline(tmp_path: Path) -> None:
    card = write_mcp_card(tmp_path / "card.json", GITHUB_MCP, "no_such_tool")
    _, report = _derive(tmp_path, card)
    (access,) = report["accesses"]
    assert access["reason"] == "server-baseline"
    assert "repo" in access["floor"]["scopes"]


def test_the_catalog_keeps_both_token_families_the_hierarchy_and_its_source() -> None:
    (server,) = mcp_catalog.load()
    assert server["hierarchy"]["repo"] == ["public_repo", "security_events"]
    assert set(server["token_families"]) == {"classic", "fine-grained"}
    assert "API enforces permissions" in server["token_families"]["fine-grained"]
    assert server["source"]["license"] == "MIT"
    assert len(server["source"]["commit"]) == 40
    assert server["tools"]["issue_write"]["required"] == ["repo"]
    assert snapshot_versions()["mcp-catalog"].startswith(server["version"])


@pytest.mark.parametrize(
    ("url", "hit"),
    [
        ("https://api.githubcopilot.com/mcp/", True),
        ("https://api.githubcopilot.com/mcp", True),
        ("https://api.githubcopilot.com/mcp/x/issues/readonly", True),
        ("https://API.githubcopilot.com/mcp/", True),
        ("https://api.githubcopilot.com/mcpx/", False),
        ("https://api.githubcopilot.com.evil.example/mcp/", False),
        ("https://evil.example/api.githubcopilot.com/mcp/", False),
        ("http://api.githubcopilot.com/mcp/", False),
    ],
)
def test_the_server_is_matched_on_its_own_host_at_a_path_boundary(url: str, hit: bool) -> None:
    assert (mcp_catalog.match(url) is not None) is hit


def _index(url: str, tools: list[dict[str, Any]]) -> Any:
    capture = {
        "format": CAPTURE_FORMAT,
        "endpoint": url,
        "tools_listed": True,
        "tools": tools,
        "auth": {
            "status": None,
            "protected_resource_metadata": {
                "url": url,
                "state": "found",
                "document": {"resource": url, "scopes_supported": ["repo"]},
            },
        },
    }
    body = orjson.dumps(capture)
    spec = FetchedSpec(
        url=url,
        final_url=url,
        media_type="application/json",
        sha256="0" * 64,
        fetched_at=_now(),
        origin=Origin.NETWORK,
        body=body,
    )
    return build_mcp_index(orjson.loads(body), spec)


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime(2026, 12, 2, tzinfo=UTC)


def test_a_tools_own_security_schemes_win_and_a_conflict_is_a_finding() -> None:
    """issue_write declares public_repo; GitHub documents repo: the tool's own stand, with mcp-catalog-conflict."""
    url = "https://api.githubcopilot.com/mcp/x/issues"
    index = _index(
        url,
        [
            {"name": "issue_write", "securitySchemes": [{"type": "oauth2", "scopes": ["public_repo"]}]},
            {"name": "get_label"},
            {"name": "list_issue_types", "securitySchemes": [{"type": "oauth2", "scopes": ["read:org"]}]},
        ],
    )
    got = mcp_catalog.apply(index)
    ops = {op.key: op for op in got.operations}
    assert ops["issue_write"].security_source == "tool"
    assert ops["issue_write"].requirements == ((SchemeRequirement(OAUTH_SCHEME, ("public_repo",)),),)
    assert ops["get_label"].security_source.startswith("catalog:github-mcp@")
    assert ops["get_label"].requirements == ((SchemeRequirement(OAUTH_SCHEME, ("repo",)),),)
    conflicts = [d for d in got.diagnostics if d.code == "mcp-catalog-conflict"]
    assert [d.data["tool"] for d in conflicts] == ["issue_write", "list_issue_types"]
    assert "public_repo" in conflicts[0].message
    assert conflicts[0].path == "/tools/0"


def test_another_server_is_left_as_it_is() -> None:
    index = _index("https://mcp.example.com/mcp", [{"name": "issue_write"}])
    assert mcp_catalog.apply(index) is index


def test_the_shipped_catalog_is_what_the_vendored_files_compile_to() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_mcp_catalog.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _github_log(path: Path) -> Path:
    """What an MCP proxy logs of GitHub's remote server refusing two calls: its challenge names the token's
    scopes and the tool's together, and its error_description the tool's (scope_challenge.go)."""

    def refusal(scope: str, extra: str) -> dict[str, Any]:
        value = (
            f'Bearer error="insufficient_scope", scope="{scope}", resource_metadata='
            f'"https://api.githubcopilot.com/.well-known/oauth-protected-resource/mcp/", '
            f'error_description="Additional scopes required: {extra}"'
        )
        return {"server": GITHUB_MCP, "direction": "receive", "status": 403, "headers": {"WWW-Authenticate": value}}

    def call(i: int, tool: str) -> dict[str, Any]:
        return {
            "server": GITHUB_MCP,
            "direction": "send",
            "headers": {"Authorization": "Bearer gho_" + "a" * 36},
            "message": {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": tool}},
        }

    lines = [
        call(7, "issue_write"),
        refusal("read:org repo workflow", "repo, workflow"),
        call(8, "list_code_scanning_alerts"),
        refusal("read:org security_events", "security_events"),
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    return path


def test_githubs_step_ups_are_read_as_github_says_them_and_audited_against_its_catalog(
    tmp_path: Path, capsys: Any
) -> None:
    """draft: the step-ups written, as GitHub says them; audit: the card's tier is repo (which serves both tools),
    so security_events is granted by GitHub's hierarchy (repo includes it), repo is, workflow is not
    (missing-grant); read:org, which the token already held, is not asked for."""
    log = _github_log(tmp_path / "github-mcp.jsonl")
    common = ["--cache-dir", str(tmp_path / "cache"), "--cassette", str(CASSETTE), "--offline", "--no-progress"]
    card, report = tmp_path / "draft.card.json", tmp_path / "draft.report.json"
    assert main([*common, "draft", str(log), "-o", str(card), "--report", str(report)]) == 0
    drafted = json.loads(report.read_text("utf-8"))
    by_tool = {r["tool"]: r for r in drafted["step_up"]}
    assert by_tool["issue_write"]["alternatives"] == [["repo", "workflow"]]
    assert by_tool["issue_write"]["held"] == ["read:org"]
    capsys.readouterr()
    main([*common, "audit", str(card), str(log), "--format", "json"])
    result = json.loads(capsys.readouterr().out)
    missing = [d for d in result["diagnostics"] if d["code"] == "missing-grant"]
    assert len(missing) == 1
    assert "repo workflow" in missing[0]["message"]
    assert missing[0]["data"]["tier_scopes"] == ["repo"]
    assert missing[0]["data"]["step_up"]["held"] == ["read:org"]
