"""Delegation to other A2A agents: each remote agent's own manifest is derived in turn and attached
to the access as a footprint, with cycles reported and depth bounded."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ramscope import Engine, InputError, Settings, load_card
from ramscope.outputs.report import Report
from tests.support.httpserver import LocalHTTPServer

CASSETTE = Path(__file__).parent / "fixtures" / "cassettes" / "a2a-cycle.yaml"
A_CARD = "https://agent-a.example.com/.well-known/agent-card.json"


def _agent_card(name: str, scope: str, manifest: dict[str, Any] | None) -> dict[str, Any]:
    card: dict[str, Any] = {
        "name": name,
        "description": f"{name} agent",
        "version": "1.0",
        "supportedInterfaces": [
            {"url": "https://x.invalid/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {},
        "securitySchemes": {
            "oauth": {
                "oauth2SecurityScheme": {
                    "flows": {
                        "authorizationCode": {
                            "authorizationUrl": "https://auth.example.com/authorize",
                            "tokenUrl": "https://auth.example.com/token",
                            "scopes": {scope: f"use {name}"},
                        }
                    }
                }
            }
        },
        "securityRequirements": [{"schemes": {"oauth": {"list": [scope]}}}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "work", "name": "Work", "description": "does work", "tags": ["t"]}],
    }
    if manifest is not None:
        card["resourceAccessManifest"] = manifest
    return card


def _delegation(url: str, rid: str) -> dict[str, Any]:
    return {
        "resources": [
            {
                "id": rid,
                "interaction_protocol": "A2A",
                "owner": "THIRD_PARTY",
                "display_name": rid,
                "spec": {"spec_url": url, "resource_path": "work"},
            }
        ],
        "operations": [{"id": f"{rid}-call", "resource": rid}],
        "resource_accesses": [
            {
                "id": f"delegate-to-{rid}",
                "operation": f"{rid}-call",
                "identity_used": "END_USER",
                "necessity": "REQUIRED",
                "access_justification": "delegate",
            }
        ],
    }


@pytest.fixture(scope="module")
def chain_server() -> Iterator[LocalHTTPServer]:
    """Agents b -> c -> d on a loopback server; d uses no further agent."""
    with LocalHTTPServer() as srv:
        d = _agent_card("d", "d.use", None)
        c = _agent_card("c", "c.use", _delegation(srv.url("/d/.well-known/agent-card.json"), "d"))
        b = _agent_card("b", "b.use", _delegation(srv.url("/c/.well-known/agent-card.json"), "c"))
        for name, doc in (("b", b), ("c", c), ("d", d)):
            srv.route(f"/{name}/.well-known/agent-card.json", body=json.dumps(doc).encode())
        yield srv


@pytest.fixture
def derive(tmp_path: Path) -> Callable[..., Report]:
    def run(card: Any, **settings: Any) -> Report:
        s = Settings(**{"cache_dir": tmp_path / "cache", "allow_private_network": True, **settings})
        with Engine(s) as engine:
            return engine.derive(card)

    return run


def test_nested_footprint_is_derived(chain_server: LocalHTTPServer, derive: Callable[..., Report]) -> None:
    """Delegating to b shows b's own needs (c), and c's (d), each derived with its scopes."""
    root = {
        "name": "root",
        "resourceAccessManifest": _delegation(chain_server.url("/b/.well-known/agent-card.json"), "b"),
    }
    r = derive(root)
    (a,) = r.accesses
    assert a.scopes == ["b.use"]
    fp = a.footprint
    assert fp is not None
    assert (fp["name"], fp["depth"], fp["complete"]) == ("b", 1, True)
    (b_access,) = fp["report"]["accesses"]
    assert b_access["scopes"] == ["c.use"]
    assert b_access["footprint"]["depth"] == 2
    (c_access,) = b_access["footprint"]["report"]["accesses"]
    assert c_access["scopes"] == ["d.use"]
    assert c_access["footprint"] is None  # d carries no manifest
    assert r.exit_code == 0


def test_depth_is_bounded(chain_server: LocalHTTPServer, derive: Callable[..., Report]) -> None:
    """With --max-depth 1, b's manifest is derived but c's is only named, with an info diagnostic."""
    root = {
        "name": "root",
        "resourceAccessManifest": _delegation(chain_server.url("/b/.well-known/agent-card.json"), "b"),
    }
    r = derive(root, max_depth=1)
    fp = r.accesses[0].footprint
    assert fp is not None
    inner = fp["report"]["accesses"][0]["footprint"]
    assert inner == {"card_url": chain_server.url("/c/.well-known/agent-card.json"), "depth": 2, "truncated": True}
    assert "footprint-truncated" in [d["code"] for d in fp["report"]["diagnostics"]]


def test_cycle_is_reported_not_followed(derive: Callable[..., Report], tmp_path: Path) -> None:
    """A -> B -> A from recorded cards: the second visit to A is reported as a cycle, and derivation ends."""
    r = derive(_agent_a_card(), cassette=CASSETTE, offline=True, allow_private_network=False)
    fp = r.accesses[0].footprint
    assert fp is not None
    assert fp["card_url"].startswith("https://agent-b.example.com")
    back = fp["report"]["accesses"][0]["footprint"]
    assert back["cycle"][-1] == A_CARD
    assert "a2a-cycle" in [d["code"] for d in fp["report"]["diagnostics"]]


def _agent_a_card() -> Any:
    """Agent A's card, exactly as the cassette serves it (so its content hash identifies it)."""
    import yaml

    doc = yaml.safe_load(CASSETTE.read_text("utf-8"))
    body = next(i["response"]["body"]["string"] for i in doc["interactions"] if i["request"]["uri"] == A_CARD)
    return load_card(body.encode(), name="agent-a.json")


def test_a_remote_manifest_that_cannot_be_read_is_reported(
    chain_server: LocalHTTPServer, derive: Callable[..., Report], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A remote card whose manifest cannot be loaded leaves an incomplete footprint and a warning, never a quiet one."""
    import importlib

    # importlib: the package's ``derive`` attribute is the function, not this module.
    derive_module = importlib.import_module("ramscope.derive.footprint")

    def refuse(doc: Any, *, name: str | None = None) -> Any:
        if name is None or not name.startswith("http"):  # the root card itself loads as usual
            return load_card(doc, name=name)
        raise InputError("not JSON-compatible: Integer exceeds 64-bit range", source=name)

    monkeypatch.setattr(derive_module, "load_card", refuse)
    root = {
        "name": "root",
        "resourceAccessManifest": _delegation(chain_server.url("/b/.well-known/agent-card.json"), "b"),
    }
    r = derive(root)
    (a,) = r.accesses
    assert a.scopes == ["b.use"]  # the access itself is resolved; what delegating exposes is not known
    fp = a.footprint
    assert fp is not None
    assert (fp["complete"], fp["depth"]) == (False, 1)
    assert "64-bit" in fp["error"]
    warned = [d for d, _ in r.diagnostics if d.code == "footprint-incomplete"]
    assert [d.path for d in warned] == ["/resourceAccessManifest/resource_accesses/0"]
    assert "could not be read" in warned[0].message
