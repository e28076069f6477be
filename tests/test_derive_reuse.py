"""Reusing reports: a card derived before from the same bytes, settings, policy and code is not
derived again while every spec it read is in the same state; any change, and it is."""

from __future__ import annotations

import sys
import zlib
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ramscope.cli import main
from ramscope.config import Settings
from ramscope.derive import Engine, reuse
from ramscope.derive.policy import Policy, policy_from_dict
from ramscope.errors import InputError
from ramscope.outputs.report import Report, StoredReport
from ramscope.specs.model import SpecKind
from ramscope.store import SpecStore
from tests.conftest import FakeClock
from tests.support.httpserver import LocalHTTPServer

DERIVE = sys.modules["ramscope.derive.run"]  # one card's derivation


def _spec(scope: str) -> bytes:
    return orjson.dumps(
        {
            "openapi": "3.0.3",
            "info": {"title": "t", "version": "1"},
            "components": {
                "securitySchemes": {
                    "o": {
                        "type": "oauth2",
                        "flows": {
                            "authorizationCode": {
                                "authorizationUrl": "https://a.example.com/auth",
                                "tokenUrl": "https://a.example.com/token",
                                "scopes": {scope: "read", "admin": "everything"},
                            }
                        },
                    }
                }
            },
            "paths": {
                "/x": {"get": {"operationId": "getX", "security": [{"o": [scope]}, {"o": ["admin"]}]}},
                "/y": {"delete": {"operationId": "deleteY", "security": [{"o": ["admin"]}]}},
            },
        }
    )


def _card(url: str, access: str = "a0") -> bytes:
    return orjson.dumps(
        {
            "resources": [{"id": "r", "interaction_protocol": "REST", "owner": "CONSUMER", "spec": {"spec_url": url}}],
            "operations": [{"id": "o", "resource": "r", "api_operation_spec": {"operation_id": "getX"}}],
            "resource_accesses": [
                {
                    "id": access,
                    "operation": "o",
                    "identity_used": "END_USER",
                    "necessity": "REQUIRED",
                    "access_justification": "test",
                }
            ],
        }
    )


class Runs:
    """Derives card files as ``ramscope derive`` does, counting the cards really derived."""

    def __init__(self, tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
        self.cache = tmp_path / "cache"
        self.clock = clock
        self.derived = 0
        original = DERIVE.CardRun.run

        def counting(run: Any) -> Report:
            if run.depth == 0:
                self.derived += 1
            report: Report = original(run)
            return report

        monkeypatch.setattr(DERIVE.CardRun, "run", counting)

    def __call__(self, paths: list[Path], **overrides: Any) -> list[Report | StoredReport]:
        policy = overrides.pop("policy", None)
        settings = Settings(**{"cache_dir": self.cache, "allow_private_network": True, "timeout": 10.0, **overrides})
        unreadable: list[InputError] = []
        with SpecStore(settings, clock=self.clock) as store, Engine(settings, policy=policy, store=store) as engine:
            out = list(engine.derive_files(paths, on_unreadable=unreadable.append))
        assert not unreadable
        return out


@pytest.fixture
def runs(tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> Runs:
    return Runs(tmp_path, clock, monkeypatch)


@pytest.fixture
def card(tmp_path: Path, server: LocalHTTPServer) -> Path:
    server.route("/spec.json", body=_spec("read"))
    path = tmp_path / "card.json"
    path.write_bytes(_card(server.url("/spec.json")))
    return path


def _scopes(report: Report | StoredReport) -> Any:
    return report.to_dict()["accesses"][0]["scopes"]


def test_an_unchanged_card_is_reused_byte_for_byte(runs: Runs, card: Path) -> None:
    """The first run fetches (origin network), the second reads the cache (a new state: derived),
    the third finds everything as the second left it: reused, the very bytes a derivation writes."""
    runs([card])
    second = runs([card])
    assert runs.derived == 2
    (third,) = runs([card])
    assert runs.derived == 2
    assert isinstance(third, StoredReport)
    (again,) = runs([card], reuse=False)
    assert runs.derived == 3
    assert isinstance(again, Report)
    assert third.to_json() == again.to_json() == second[0].to_json()
    assert third.exit_code == again.exit_code == 0
    assert _scopes(third) == ["read"]


def test_a_changed_card_is_derived_again(runs: Runs, card: Path, server: LocalHTTPServer) -> None:
    runs([card])
    runs([card])
    card.write_bytes(_card(server.url("/spec.json"), access="renamed"))
    (r,) = runs([card])
    assert runs.derived == 3
    assert r.to_dict()["accesses"][0]["id"] == "renamed"


def test_the_same_bytes_under_another_name_are_another_report(runs: Runs, card: Path, tmp_path: Path) -> None:
    runs([card])
    runs([card])
    twin = tmp_path / "twin.json"
    twin.write_bytes(card.read_bytes())
    (r,) = runs([twin])
    assert runs.derived == 3
    assert r.to_dict()["card"]["source"] == str(twin)


def test_a_changed_spec_is_seen(runs: Runs, card: Path, server: LocalHTTPServer, clock: FakeClock) -> None:
    """Once the cached spec is stale the store revalidates it; new content means a new derivation."""
    runs([card], cache_ttl=60.0)
    runs([card], cache_ttl=60.0)
    runs([card], cache_ttl=60.0)
    assert runs.derived == 2
    server.route("/spec.json", body=_spec("read.v2"))
    clock.advance(61)
    (r,) = runs([card], cache_ttl=60.0)
    assert runs.derived == 3
    assert _scopes(r) == ["read.v2"]


def test_policy_settings_and_code_are_part_of_the_key(runs: Runs, card: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs([card])
    runs([card])
    assert runs.derived == 2
    (pinned,) = runs([card], policy=policy_from_dict({"pin": [{"access": "a0", "scopes": ["admin"]}]}))
    assert runs.derived == 3
    assert _scopes(pinned) == ["admin"]
    runs([card], max_depth=1)
    assert runs.derived == 4
    runs([card])
    assert runs.derived == 4  # back to the first key: its report is still there
    monkeypatch.setattr(reuse, "_code_fingerprint", lambda: "another ramscope")
    runs([card])
    assert runs.derived == 5


def test_a_failed_fetch_is_reused_only_while_it_still_fails(
    runs: Runs, tmp_path: Path, server: LocalHTTPServer
) -> None:
    """Exit 3 is kept with the report; when the spec appears, the card is derived again."""
    path = tmp_path / "card.json"
    path.write_bytes(_card(server.url("/later.json")))
    server.route("/later.json", status=404, body=b"{}")
    (first,) = runs([path])
    (second,) = runs([path])
    assert first.exit_code == second.exit_code == 3
    assert isinstance(second, StoredReport)
    assert _scopes(second) is None  # fail closed, reused or not
    server.route("/later.json", body=_spec("read"))
    (third,) = runs([path])
    assert runs.derived == 2
    assert third.exit_code == 0
    assert _scopes(third) == ["read"]


def test_refresh_and_record_always_derive(runs: Runs, card: Path, tmp_path: Path) -> None:
    runs([card])
    runs([card])
    runs([card], refresh=True)
    assert runs.derived == 3


def test_a_corrupt_stored_report_is_derived_again(runs: Runs, card: Path) -> None:
    runs([card])
    runs([card])
    settings = Settings(cache_dir=runs.cache, allow_private_network=True, timeout=10.0)  # as Runs makes them
    from ramscope.providers import snapshot_versions

    key = reuse.card_key(reuse.run_key(settings, Policy(), snapshot_versions()), str(card), _sha(card))
    with SpecStore(settings, clock=runs.clock) as store:
        assert store.get_artifact(reuse.NAMESPACE, key) is not None
        store.put_artifact(reuse.NAMESPACE, key, b"\x78\x9cnot zlib at all")
    (r,) = runs([card])
    assert runs.derived == 3
    assert isinstance(r, Report)


def test_a_remote_agents_card_is_a_dependency(
    runs: Runs, tmp_path: Path, server: LocalHTTPServer, clock: FakeClock
) -> None:
    """What delegating to an agent exposes is part of the report: its card changing is seen."""
    agent = {
        "name": "b",
        "description": "b",
        "version": "1",
        "supportedInterfaces": [
            {"url": "https://x.invalid/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "work", "name": "Work", "description": "w", "tags": ["t"]}],
    }
    server.route("/b/.well-known/agent-card.json", body=orjson.dumps(agent))
    root = {
        "resources": [
            {
                "id": "b",
                "interaction_protocol": "A2A",
                "owner": "THIRD_PARTY",
                "spec": {"spec_url": server.url("/b/.well-known/agent-card.json"), "resource_path": "work"},
            }
        ],
        "operations": [{"id": "call", "resource": "b"}],
        "resource_accesses": [
            {
                "id": "d",
                "operation": "call",
                "identity_used": "END_USER",
                "necessity": "REQUIRED",
                "access_justification": "x",
            }
        ],
    }
    path = tmp_path / "root.json"
    path.write_bytes(orjson.dumps(root))
    runs([path], cache_ttl=60.0)
    (before,) = runs([path], cache_ttl=60.0)
    assert before.to_dict()["accesses"][0]["footprint"] is None
    agent["name"] = "b, now with a manifest of its own"
    server.route("/b/.well-known/agent-card.json", body=orjson.dumps(agent))
    clock.advance(61)
    (after,) = runs([path], cache_ttl=60.0)
    assert runs.derived == 3
    assert after.to_json() != before.to_json()


def test_cli_output_is_the_same_reused_or_derived(
    card: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], server: LocalHTTPServer
) -> None:
    """JSON (one card) and JSON Lines (several) read the same either way; --no-reuse derives."""
    other = tmp_path / "other.json"
    other.write_bytes(_card(server.url("/spec.json"), access="b0"))
    common = ["--cache-dir", str(tmp_path / "cache"), "--allow-private-network", "--no-progress", "derive"]
    outputs: dict[str, list[str]] = {}
    for run in ("network", "cache", "reused", "no-reuse"):
        extra = ["--no-reuse"] if run == "no-reuse" else []
        assert main([*common, *extra, str(card)]) == 0
        single = capsys.readouterr().out
        assert main([*common, *extra, str(card), str(other)]) == 0
        outputs[run] = [single, capsys.readouterr().out]
    assert outputs["reused"] == outputs["no-reuse"] == outputs["cache"]
    assert len(outputs["reused"][1].splitlines()) == 2


def test_a_reused_reports_findings_keep_their_line_and_column_without_reading_the_card(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], server: LocalHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where each finding points in the card is stored beside the report: scanning the card again
    for it was most of a reused card's cost."""
    server.route("/spec.json", body=_spec("read"))
    cards = []
    for i, route in enumerate(("/spec.json", "/missing.json")):  # the second: spec-unavailable, exit 3
        cards.append(tmp_path / f"card{i}.json")
        cards[-1].write_text(orjson.dumps(orjson.loads(_card(server.url(route))), option=orjson.OPT_INDENT_2).decode())
    common = ["--cache-dir", str(tmp_path / "cache"), "--allow-private-network", "--no-progress", "derive"]
    main([*common, "--no-reuse", *map(str, cards)])  # the cache filled: "origin" is "cache" from now on
    capsys.readouterr()
    assert main([*common, *map(str, cards)]) == 3  # derived, stored
    derived = capsys.readouterr()
    assert f"{cards[1]}:22:5: error[access-unresolved]" in derived.err  # the access, line 22

    def no(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("read again")

    monkeypatch.setattr(DERIVE.CardRun, "run", no)  # reused, not derived
    monkeypatch.setattr(sys.modules["ramscope.card"], "load_card", no)  # nor the card read for positions
    assert main([*common, *map(str, cards)]) == 3
    assert capsys.readouterr() == derived


def test_an_unreadable_card_in_a_batch_is_said_and_the_others_derived(
    card: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    common = ["--cache-dir", str(tmp_path / "cache"), "--allow-private-network", "--no-progress", "derive"]
    for _ in range(3):
        assert main([*common, str(bad), str(card)]) == 2
        captured = capsys.readouterr()
        assert len(captured.out.splitlines()) == 1
        assert "bad.json" in captured.err


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_file_a_ref_pulls_in_is_a_dependency(
    runs: Runs, tmp_path: Path, server: LocalHTTPServer, clock: FakeClock
) -> None:
    """The operation lives in a sibling file of the spec: that file changing is seen too."""
    main_doc = orjson.loads(_spec("read"))
    main_doc["paths"] = {"/x": {"$ref": "shared/paths.json#/x"}}
    # The main document stays fresh for an hour; only the sibling goes stale and changes.
    server.route("/apis/main.json", body=orjson.dumps(main_doc), headers={"cache-control": "max-age=3600"})

    def shared(scope: str) -> bytes:
        return orjson.dumps({"x": {"get": {"operationId": "getX", "security": [{"o": [scope]}]}}})

    server.route("/apis/shared/paths.json", body=shared("read"))
    path = tmp_path / "card.json"
    path.write_bytes(_card(server.url("/apis/main.json")))
    runs([path], cache_ttl=60.0)
    (before,) = runs([path], cache_ttl=60.0)
    (same,) = runs([path], cache_ttl=60.0)
    assert isinstance(same, StoredReport)
    assert _scopes(before) == ["read"]
    server.route("/apis/shared/paths.json", body=shared("admin"))
    clock.advance(61)
    main_fetches = server.hits("/apis/main.json")
    (after,) = runs([path], cache_ttl=60.0)
    assert server.hits("/apis/main.json") == main_fetches
    assert isinstance(after, Report)
    assert _scopes(after) == ["admin"]


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@given(st.binary(max_size=200) | _json_values.map(lambda v: zlib.compress(orjson.dumps(v) + b"\n{}")))
def test_a_stored_entry_of_any_shape_decodes_or_is_refused(data: bytes) -> None:
    """Whatever the cache holds under a report key, decode gives an entry or None, never an exception."""
    entry = reuse.decode(data)
    assert entry is None or isinstance(entry, reuse.Entry)


@given(
    st.integers(0, 4),
    st.lists(
        st.tuples(st.text(min_size=1, max_size=30), st.sampled_from([None, *SpecKind]), st.text(max_size=64)),
        max_size=6,
    ),
    st.binary(min_size=1, max_size=300),
)
def test_entries_round_trip(exit_code: int, deps: list[reuse.Dep], report: bytes) -> None:
    entry = reuse.decode(reuse.encode(exit_code, deps, report.replace(b"\n", b" ")))
    assert entry is not None
    assert entry.exit_code == exit_code
    assert set(entry.deps) == set(deps)
    assert entry.report == report.replace(b"\n", b" ")


def test_the_reuse_key_names_the_reach_classes_and_quirks() -> None:
    """The reviewed reach classes and the provider quirks rank and read every pick: a stored report
    derived with other ones is not reused (each named by version and content hash)."""
    import hashlib
    from importlib import resources

    from ramscope.providers import snapshot_versions

    v = snapshot_versions()
    for key, name in (("reach", "reach.json"), ("quirks", "quirks.json")):
        raw = (resources.files("ramscope.providers") / "data" / name).read_bytes()
        version, digest = v[key].split("+")
        assert version == orjson.loads(raw)["version"]
        assert digest == hashlib.sha256(raw).hexdigest()[:12]
