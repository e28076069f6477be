"""Cassettes: record a run, replay it with the server gone, provenance, matching, and the guard during replay."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ramscope.config import Settings
from ramscope.errors import BlockedURLError, CassetteMissError, InputError, OfflineMissError
from ramscope.store import Cassette, Origin, SpecStore
from ramscope.store.keys import body_digest
from tests.support.httpserver import LocalHTTPServer, Reply, Request

SPEC = b'{"swagger": "2.0", "paths": {}}'
MakeSettings = Callable[..., Settings]
REPO = Path(__file__).resolve().parent.parent


def _record(server: LocalHTTPServer, make_settings: MakeSettings, cassette: Path) -> None:
    server.route("/spec.json", body=SPEC, etag='"e1"')
    server.route("/moved", redirect="/spec.json", status=301)
    server.route("/bin", body=bytes(range(256)), content_type="application/octet-stream", gzip=True)

    def rpc(req: Request) -> Reply:
        return Reply(200, b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}', {"content-type": "application/json"})

    server.route("/mcp", method="POST", handler=rpc)
    settings = make_settings(cassette=cassette, record=True, cache_dir=cassette.parent / "rec-cache")
    with SpecStore(settings) as store:
        store.get(server.url("/spec.json"))
        store.get(server.url("/moved"))
        store.get(server.url("/bin"))
        store.exchange(
            "POST",
            server.url("/mcp"),
            json_body={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"clientInfo": {"v": "0.1.0"}}},
            headers={"Authorization": "Bearer s3cret", "X-Goog-Api-Key": "k3y"},
        )
    assert cassette.exists()


def test_record_then_replay_with_the_server_stopped(tmp_path: Path, make_settings: MakeSettings) -> None:
    """Every exchange of a recorded run replays with no server: same bytes, origin cassette."""
    cassette = tmp_path / "run.yaml"
    with LocalHTTPServer() as server:
        _record(server, make_settings, cassette)
        urls = {p: server.url(p) for p in ("/spec.json", "/moved", "/bin", "/mcp")}
    replay = make_settings(cassette=cassette, cache_dir=tmp_path / "replay-cache")
    with SpecStore(replay) as store:
        spec = store.get(urls["/spec.json"])
        moved = store.get(urls["/moved"])
        binary = store.get(urls["/bin"])
        rpc = store.exchange(
            "POST",
            urls["/mcp"],
            json_body={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"clientInfo": {"v": "9.9.9"}}},
        )
    assert spec.body == SPEC
    assert spec.origin is Origin.CASSETTE
    assert spec.provenance["synthesized"] is False
    assert spec.provenance["source"] == "network"
    assert spec.provenance["cassette"] == str(cassette)
    assert spec.provenance["recorded_at"].endswith("Z")
    assert spec.provenance["server_address"].startswith("127.0.0.1:")
    assert moved.final_url == urls["/spec.json"]
    assert moved.body == SPEC
    assert binary.body == bytes(range(256))
    assert rpc.status == 200
    assert b'"tools"' in rpc.body
    assert rpc.origin is Origin.CASSETTE


def test_recorded_cassette_has_vcr_layout_provenance_and_no_secrets(
    tmp_path: Path, make_settings: MakeSettings
) -> None:
    """The file is VCR.py's layout plus ramscope provenance; credentials are redacted, bodies decoded."""
    cassette = tmp_path / "run.yaml"
    with LocalHTTPServer() as server:
        _record(server, make_settings, cassette)
    text = cassette.read_text()
    assert "s3cret" not in text
    assert "k3y" not in text
    doc = yaml.safe_load(text)
    assert doc["version"] == 1
    assert doc["ramscope"]["recorded_with"].startswith("ramscope ")
    assert doc["ramscope"]["recorded_at"].endswith("Z")
    inter = doc["interactions"]
    assert len(inter) == 5  # spec, moved (301), spec again after the hop, bin, mcp
    for i in inter:
        assert set(i) == {"request", "response", "ramscope"}
        assert set(i["request"]) == {"method", "uri", "body", "headers"}
        assert set(i["response"]) == {"status", "headers", "body"}
        assert i["ramscope"]["synthesized"] is False
        assert "content-encoding" not in i["response"]["headers"]
    post = next(i for i in inter if i["request"]["method"] == "POST")
    assert post["request"]["headers"]["authorization"] == ["<redacted by ramscope>"]
    assert post["request"]["headers"]["x-goog-api-key"] == ["<redacted by ramscope>"]
    binary = next(i for i in inter if i["request"]["uri"].endswith("/bin"))
    assert base64.b64decode(binary["response"]["body"]["base64_string"]) == bytes(range(256))
    plain = next(i for i in inter if i["request"]["uri"].endswith("/spec.json"))
    assert plain["response"]["body"]["string"] == SPEC.decode()


def test_unmatched_request_names_method_url_and_cassette(tmp_path: Path, make_settings: MakeSettings) -> None:
    """A request the cassette does not hold is a CassetteMissError naming method, URL and file."""
    cassette = tmp_path / "run.yaml"
    with LocalHTTPServer() as server:
        _record(server, make_settings, cassette)
        other = server.url("/not-recorded.json")
        mcp = server.url("/mcp")
    with SpecStore(make_settings(cassette=cassette, cache_dir=tmp_path / "c2")) as store:
        with pytest.raises(CassetteMissError) as info:
            store.get(other)
        msg = str(info.value)
        assert f"GET {other}" in msg
        assert str(cassette) in msg
        assert info.value.code == "cassette-miss"
        with pytest.raises(CassetteMissError, match=f"POST {mcp}"):
            store.exchange("POST", mcp, json_body={"jsonrpc": "2.0", "id": 1, "method": "tools/call"})


def test_body_digest_ignores_client_info_and_key_order() -> None:
    """The match key of a JSON body is canonical and leaves out params.clientInfo, nothing else."""
    a = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"version": "0.1"}, "x": 1}}
    b = {"params": {"x": 1, "clientInfo": {"version": "7.0"}}, "method": "initialize", "id": 1, "jsonrpc": "2.0"}
    c = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"x": 2}}
    assert body_digest(a) == body_digest(b)
    assert body_digest(a) != body_digest(c)
    assert body_digest(None) == ""


def test_body_digest_ignores_the_stateless_protocols_client_info() -> None:
    """MCP 2026-07-28 carries clientInfo in params._meta; it is left out too, the rest of _meta is not."""
    key = "io.modelcontextprotocol/clientInfo"
    caps = "io.modelcontextprotocol/clientCapabilities"
    a = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {key: {"v": "1"}, caps: {}}}}
    b = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {caps: {}}}}
    c = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {caps: {"roots": {}}}}}
    assert body_digest(a) == body_digest(b)
    assert body_digest(a) != body_digest(c)


def test_match_keys_normalise_urls() -> None:
    """Host case, default ports, an empty path and fragments do not stop a recorded exchange from matching."""
    c = Cassette(Path("unused.yaml"))
    c.add_synthesized(url="https://Specs.Example.com:443", body=SPEC, source="test")
    assert c.find("GET", "https://specs.example.com/#top", b"") is not None
    assert c.find("get", "https://specs.example.com", b"") is not None
    assert c.find("GET", "https://specs.example.com/other", b"") is None


def test_a_replayed_spec_is_not_cached(tmp_path: Path, make_settings: MakeSettings) -> None:
    """A cassette answers its own run only: the next run with the same cache finds no copy (issue 22)."""
    cassette = tmp_path / "run.yaml"
    with LocalHTTPServer() as server:
        _record(server, make_settings, cassette)
        url = server.url("/spec.json")
    replay = make_settings(cassette=cassette, cache_dir=tmp_path / "replay-cache")
    with SpecStore(replay) as store:
        assert store.get(url).origin is Origin.CASSETTE
    offline = make_settings(offline=True, cache_dir=tmp_path / "replay-cache")
    with SpecStore(offline) as store, pytest.raises(OfflineMissError):
        store.get(url)


def test_offline_replay_never_needs_the_network(tmp_path: Path, make_settings: MakeSettings) -> None:
    """--offline with --cassette answers from the cassette."""
    cassette = tmp_path / "run.yaml"
    with LocalHTTPServer() as server:
        _record(server, make_settings, cassette)
        url = server.url("/spec.json")
    with SpecStore(make_settings(offline=True, cassette=cassette, cache_dir=tmp_path / "c3")) as store:
        assert store.get(url).origin is Origin.CASSETTE


def _cassette_for(tmp_path: Path, uri: str) -> Path:
    c = Cassette(tmp_path / "hand.yaml")
    c.add_synthesized(url=uri, body=SPEC, source="hand-written for a test")
    c.save()
    return c.path


def test_replay_still_applies_the_url_guard(tmp_path: Path) -> None:
    """A cassette cannot make the store ask for a private address; names are never resolved in replay."""
    path = _cassette_for(tmp_path, "http://169.254.169.254/latest/meta-data/")

    class NoDNS:
        def resolve(self, host: str, port: int) -> list[str]:
            raise AssertionError("replay resolved a name")

    strict = Settings(cache_dir=tmp_path / "c", cassette=path)
    with SpecStore(strict, resolver=NoDNS()) as store, pytest.raises(BlockedURLError, match="link-local"):
        store.get("http://169.254.169.254/latest/meta-data/")
    named = _cassette_for(tmp_path / "n", "https://specs.example.com/spec.json")
    with SpecStore(Settings(cache_dir=tmp_path / "c2", cassette=named), resolver=NoDNS()) as store:
        spec = store.get("https://specs.example.com/spec.json")
    assert spec.provenance["synthesized"] is True
    assert spec.provenance["source"] == "hand-written for a test"


def test_synthesized_entries_are_marked(tmp_path: Path) -> None:
    """An interaction reconstructed from documentation says so, and says from where."""
    path = _cassette_for(tmp_path, "https://specs.example.com/spec.json")
    doc = yaml.safe_load(path.read_text())
    assert doc["interactions"][0]["ramscope"]["synthesized"] is True
    assert doc["interactions"][0]["ramscope"]["source"] == "hand-written for a test"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "expected a mapping"),
        ("version: 2\ninteractions: []\n", "version 2"),
        ("interactions:\n- {request: {method: GET}, response: {}}\n", "uri"),
        (
            "interactions:\n- request: {method: GET, uri: 'https://x.test/'}\n  response: {status: {code: 99}}\n",
            "between 100 and 599",
        ),
        (
            "interactions:\n- request: {method: GET, uri: 'https://x.test/'}\n"
            "  response: {status: {code: 200}, body: {base64_string: '!!'}}\n",
            "not valid base64",
        ),
        ("a: &a [*a]\n", "itself"),
    ],
)
def test_malformed_cassettes_are_input_errors(tmp_path: Path, text: str, message: str) -> None:
    """A broken cassette is an InputError naming the file (and the place), never a crash."""
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        SpecStore(Settings(cache_dir=tmp_path / "c", cassette=path))
    assert str(path) in str(info.value)


def test_missing_cassette_file_is_an_input_error(tmp_path: Path) -> None:
    """Replaying a cassette that does not exist fails clearly at start-up."""
    with pytest.raises(InputError, match="no such file"):
        SpecStore(Settings(cache_dir=tmp_path / "c", cassette=tmp_path / "nope.yaml"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(st.binary(max_size=300), st.text(max_size=300).map(lambda s: s.encode("utf-8"))))
def test_any_body_survives_save_and_load(tmp_path: Path, body: bytes) -> None:
    """Text bodies stay readable strings, anything else goes as base64; all round-trip byte for byte."""
    c = Cassette(tmp_path / "rt.yaml")
    c.add_synthesized(url="https://x.test/a", body=body, source="test")
    c.save()
    loaded = Cassette.load(c.path)
    assert loaded.interactions[0].body == body


def test_shipped_travel_agent_cassette_replays_the_calendar_discovery_document(tmp_path: Path) -> None:
    """cassettes/travel-agent.yaml loads and answers the README example's Calendar spec, marked synthesized."""
    path = REPO / "cassettes" / "travel-agent.yaml"
    settings_ = Settings(cache_dir=tmp_path / "c", cassette=path, offline=True)
    with SpecStore(settings_) as store:
        spec = store.get("https://www.googleapis.com/discovery/v1/apis/calendar/v3/rest")
    assert spec.origin is Origin.CASSETTE
    assert spec.provenance["synthesized"] is True
    assert b'"discoveryVersion"' in spec.body
    assert b"calendar.events.insert" in spec.body
