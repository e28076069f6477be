"""Issue 14, "answers smaller than the truth": specs that declare less than they need must never read
as "needs nothing". Each case goes through the real store and derivation (loopback server)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ramscope.config import Settings
from ramscope.derive import Engine
from ramscope.derive.policy import Policy, policy_from_dict
from ramscope.outputs.report import Report
from tests.support.httpserver import LocalHTTPServer

from .hostile import card_doc, discovery, dumps, manifest, openapi


def _derive(tmp_path: Path, spec: dict[str, Any], m: dict[str, Any], policy: Policy | None = None) -> Report:
    with LocalHTTPServer() as srv:
        srv.route("/spec.json", body=dumps(spec))
        url = srv.url("/spec.json")
        m["resources"][0]["spec"]["spec_url"] = url
        settings = Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=10)
        with Engine(settings, policy=policy) as engine:
            return engine.derive(card_doc(m))


@pytest.mark.parametrize("bad", [None, "oauth", {"oauth": ["items.read"]}])
def test_openapi_malformed_security_elsewhere_leaves_an_undeclared_operation_unknown(tmp_path: Path, bad: Any) -> None:
    """Item 5: `security: null` on POST /items made the spec "declared", so GET /items (no security, no
    root security) needed nothing: complete, no scopes, exit 0. Now: unknown, exit 3."""
    doc = openapi()
    del doc["security"]
    doc["paths"]["/items"]["post"]["security"] = bad
    report = _derive(tmp_path, doc, manifest(""))
    (a,) = report.accesses
    assert (a.status, a.complete, a.reason) == ("resolved", False, "security-undeclared")
    assert a.requirements is None
    assert a.scopes is None
    assert report.exit_code == 3


def test_openapi_path_item_security_is_not_silently_ignored(tmp_path: Path) -> None:
    """Item 5: `security` on the path item, the root declaring `[]`: GET /items is unknown, not public."""
    doc = openapi(security=[])
    doc["paths"]["/items"]["security"] = [{"oauth": ["items.read"]}]
    report = _derive(tmp_path, doc, manifest(""))
    (a,) = report.accesses
    assert (a.complete, a.requirements) == (False, None)
    assert "misplaced-security" in {d.code for d, _ in report.diagnostics}
    assert report.exit_code == 3


@pytest.mark.parametrize("scopes", [None, []], ids=["no-scopes", "empty-scopes"])
@pytest.mark.parametrize("auth", [True, False], ids=["with-auth", "no-auth"])
def test_discovery_method_declaring_nothing_is_unknown_until_a_policy_says_public(
    tmp_path: Path, scopes: Any, auth: bool
) -> None:
    """Item 6: a Discovery method without scopes (or `scopes: []`, or a document with no `auth`) needed
    nothing, silently. Now it is undetermined (exit 3) until a policy pin says it is public."""
    doc = discovery()
    method = doc["resources"]["items"]["methods"]["list"]
    if scopes is None:
        del method["scopes"]
    else:
        method["scopes"] = scopes
    if not auth:
        del doc["auth"]
    m = manifest("", operation_id="items.items.list")
    report = _derive(tmp_path / "a", doc, m)
    (a,) = report.accesses
    assert (a.status, a.complete, a.reason) == ("resolved", False, "security-undeclared")
    assert (a.requirements, a.scopes, a.security_declared) == (None, None, False)
    assert report.exit_code == 3
    public = policy_from_dict({"pin": [{"operation": "op", "scopes": [], "reason": "documented public"}]})
    pinned = _derive(tmp_path / "b", doc, manifest("", operation_id="items.items.list"), public)
    (p,) = pinned.accesses
    assert (p.complete, p.scopes) == (True, [])
    assert pinned.exit_code == 0
