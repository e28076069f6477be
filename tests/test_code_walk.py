"""The --code walk: dependency and build trees skipped, no symlink followed out of the root, files named under
the root as given, MCP client configurations read for their servers, bounds counted as skipped, a missing path
exit 2, and TypeScript/JavaScript handed to code_js (or counted as skipped, with why, when it is not there)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

from ramscope.errors import InputError
from ramscope.evidence.code import CodeLimits, CodeRead, read_code

CALL = "import requests\nrequests.get('https://api.example.com/v1/{}')\n"
HAS_JS = importlib.util.find_spec("ramscope.evidence.code_js") is not None


def _tree(root: Path) -> None:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "a.py").write_text(CALL.format("a"), "utf-8")
    for skipped in ("node_modules/lib", ".git/hooks", ".venv/lib", "build/lib", "dist", "x/site-packages/y"):
        (root / skipped).mkdir(parents=True)
        (root / skipped / "s.py").write_text(CALL.format("skipped"), "utf-8")
    (root / ".vscode").mkdir()
    (root / ".vscode" / "mcp.json").write_text(
        json.dumps({"servers": {"notes": {"type": "http", "url": "https://mcp.example.com/mcp?x=1"}}}), "utf-8"
    )
    (root / ".mcp.json").write_text(
        json.dumps(
            {"mcpServers": {"local": {"command": "npx", "args": ["x"]}, "remote": {"url": "https://r.example/mcp"}}}
        ),
        "utf-8",
    )
    (root / "web.ts").write_text("fetch('https://api.example.com/v1/web')\n", "utf-8")


def test_the_walk_names_files_under_the_root_as_given_and_skips_dependency_trees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    info = CodeRead()
    calls = list(read_code(["."], info))
    sites = sorted(c.site for c in calls if c.via == "requests")
    assert sites == ["src/pkg/a.py:2"]
    assert {(m.file, m.name, m.url) for m in info.servers} == {
        (".vscode/mcp.json", "notes", "https://mcp.example.com/mcp"),
        (".mcp.json", "remote", "https://r.example/mcp"),
    }
    info2 = CodeRead()
    assert [c.site for c in read_code(["src"], info2)] == ["src/pkg/a.py:2"]
    if not HAS_JS:
        assert info.summaries[0].reasons == {
            "TypeScript/JavaScript (the reader ramscope.evidence.code_js is not installed)": 1
        }


def test_no_symlink_is_followed_out_of_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(CALL.format("outside"), "utf-8")
    root = tmp_path / "root"
    root.mkdir()
    (root / "inside.py").write_text(CALL.format("inside"), "utf-8")
    os.symlink(outside / "secret.py", root / "link.py")
    os.symlink(outside, root / "linked_dir")
    os.symlink(root / "inside.py", root / "again.py")
    info = CodeRead()
    paths = sorted(c.path for c in read_code([root], info))
    assert paths == ["/v1/inside", "/v1/inside"]
    assert info.summaries[0].reasons == {"a symlink out of the root": 1}


def test_bounds_are_counted_as_skipped_files(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"m{i}.py").write_text(CALL.format(i), "utf-8")
    (tmp_path / "big.py").write_text(CALL.format("big") + "#" * 5000, "utf-8")
    info = CodeRead()
    calls = list(read_code([tmp_path], info, limits=CodeLimits(max_files=3, max_file_bytes=4096)))
    assert len(calls) == 3
    s = info.summaries[0]
    assert s.skipped == 3
    assert s.reasons == {"a file over 4096 bytes": 1, "more than 3 files": 2}


def test_a_missing_code_path_is_an_input_error_and_exit_2(tmp_path: Path, cli: Any) -> None:
    with pytest.raises(InputError, match="no such file"):
        list(read_code([tmp_path / "nope"], CodeRead()))
    rc, _out, err = cli("--offline", "draft", "--code", str(tmp_path / "nope"))
    assert rc == 2
    assert "nope" in err
    assert err.count("\n") == 1
    rc, _out, err = cli("--offline", "draft")
    assert rc == 2
    assert "--code" in err


def test_typescript_goes_to_code_js_or_is_counted_as_skipped_with_why(tmp_path: Path) -> None:
    """With h31-js's reader installed, a .ts file's calls are read; without it, never silently dropped."""
    (tmp_path / "web.ts").write_text("await fetch('https://api.example.com/v1/web', {method: 'POST'})\n", "utf-8")
    info = CodeRead()
    calls = list(read_code([tmp_path], info))
    if HAS_JS:
        assert [(c.method, c.path, c.source) for c in calls] == [("POST", "/v1/web", "web.ts")]
    else:
        assert calls == []
        assert info.summaries[0].reasons == {
            "TypeScript/JavaScript (the reader ramscope.evidence.code_js is not installed)": 1
        }


def test_an_openapi_toolset_reads_its_spec_only_inside_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    spec = '{"openapi": "3.0.0", "servers": [{"url": "https://api.example.com"}], "paths": {"/x": {"get": {}}}}'
    outside.write_text(spec, "utf-8")
    root = tmp_path / "agent"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "api.json").write_text(spec, "utf-8")
    os.symlink(outside, root / "specs" / "link.json")
    (root / "tools.py").write_text(
        "from google.adk.tools.openapi_tool import OpenAPIToolset\n"
        "a = OpenAPIToolset(spec_str=open('specs/api.json').read(), spec_str_type='json')\n"
        "b = OpenAPIToolset(spec_str=open('../outside.json').read(), spec_str_type='json')\n"
        "c = OpenAPIToolset(spec_str=open('specs/link.json').read(), spec_str_type='json')\n",
        "utf-8",
    )
    info = CodeRead()
    calls = [(c.entry, c.method, c.url) for c in read_code([root], info)]
    assert calls == [(2, "GET", "https://api.example.com/x")]
    assert [u.line for u in info.unresolved] == [3, 4]


def test_the_time_and_total_bytes_bounds_skip_what_is_left_and_say_so(tmp_path: Path) -> None:
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text(CALL.format(i), "utf-8")
    info = CodeRead()
    assert list(read_code([tmp_path], info, limits=CodeLimits(max_seconds=-1))) == []
    assert info.summaries[0].reasons == {"over the -1 s bound": 3}
    info = CodeRead()
    size = len(CALL.format(0))
    assert len(list(read_code([tmp_path], info, limits=CodeLimits(max_total_bytes=size)))) == 1
    assert info.summaries[0].reasons == {f"over {size} bytes in all": 2}
