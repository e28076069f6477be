"""GitHub endpoints GitHub's reference documents as needing no permission ("the fine-grained token does not
require any permissions"; callable without authentication): the rate limit, meta, emojis, Markdown,
licenses, gitignore templates, codes of conduct. Each says so (no permission, ``choice.public``), for a
user's token and an installation token alike, never "undetermined" (issue 35); on octokit's real spec."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ramscope import Settings
from ramscope.derive import Engine
from tests.support.httpserver import LocalHTTPServer
from tests.test_derive import card

OPS = [
    ("rate-limit/get", "END_USER"),
    ("rate-limit/get", "AGENT"),
    ("meta/get", "END_USER"),
    ("meta/get-zen", "AGENT"),
    ("emojis/get", "END_USER"),
    ("markdown/render", "END_USER"),
    ("licenses/get-all-commonly-used", "AGENT"),
    ("gitignore/get-all-templates", "END_USER"),
    ("codes-of-conduct/get-all-codes-of-conduct", "END_USER"),
]


@pytest.fixture(scope="module")
def accesses(npm_corpora: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[dict[str, Any]]]:
    with LocalHTTPServer() as srv:
        srv.route("/github.json", body=(npm_corpora / "@octokit/openapi/generated/api.github.com.json").read_bytes())
        manifest = card(srv, *[("/github.json", "", {"operation_id": op}, {"identity": i}) for op, i in OPS])
        settings = Settings(cache_dir=tmp_path_factory.mktemp("gh"), allow_private_network=True, timeout=60)
        with Engine(settings) as engine:
            yield engine.derive({"name": "public github", "resourceAccessManifest": manifest}).to_dict()["accesses"]


@pytest.mark.parametrize(("i", "op"), [(i, op) for i, (op, _) in enumerate(OPS)])
def test_a_documented_no_permission_endpoint_needs_none(accesses: list[dict[str, Any]], i: int, op: str) -> None:
    a = accesses[i]
    assert a["complete"], (op, a.get("reason_message"))
    assert a["scopes"] == []
    assert a["choice"]["public"].startswith("none for public resources")
    assert a["requirements_source"].startswith("catalog:github@")
