"""Issue 30, the service half: what a stranger's requests found in `ramscope serve` (and the library calls it
makes), each fixed at its depth. Every test here failed before its fix."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from ramscope.card import load_card
from ramscope.config import Settings
from ramscope.derive.policy import load_policy
from ramscope.service import CardSource, PolicyCards, Refusal, Service, ServiceLimits
from ramscope.service.http import create_app
from ramscope.service.operations import derive, validate
from tests.support.asgi import ASGIServer

ROOT = Path(__file__).resolve().parent.parent
CARD = ROOT / "examples" / "travel-agent.card.json"
CASSETTE = ROOT / "cassettes" / "travel-agent.yaml"
POLICY = ROOT / "examples" / "travel-agent.policy.toml"
HOLIDAYS = "fetch-holidays-for-destination-country"
JSON = {"content-type": "application/json"}


def _card() -> dict[str, Any]:
    return json.loads(CARD.read_text("utf-8"))  # type: ignore[no-any-return]


def _nested(levels: int) -> bytes:
    """The example card with one more member nesting ``levels`` arrays (the card itself is level 1)."""
    return orjson.dumps(_card())[:-1] + b',"x-deep":' + b"[" * levels + b"]" * levels + b"}"


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    settings = Settings(cache_dir=tmp_path_factory.mktemp("cache"), offline=True, cassette=CASSETTE)
    service = Service(settings)
    yield service
    service.close()


# --------------------------------------------------------------------------- 20: nesting of posted cards


@pytest.mark.parametrize("levels", [64, 70, 250])
def test_a_posted_card_nested_past_64_levels_is_refused(plain: Service, levels: int) -> None:
    """A JSON card nested past the bound was read again as YAML flow style, which had no depth bound: derived,
    200. Now the JSON bound holds (413), as bytes and as a parsed object (an MCP argument, a check body)."""
    with pytest.raises(Refusal) as raw:
        plain.pool.call(lambda e, u: derive(e, u, CardSource(data=_nested(levels)), plain.limits))
    assert (raw.value.status, raw.value.code) == (413, "limit-exceeded")
    assert "deeper than 64 levels" in raw.value.message
    doc = json.loads(_nested(levels))
    with pytest.raises(Refusal) as parsed:
        plain.pool.call(lambda e, u: validate(e, u, CardSource(doc=doc), plain.limits))
    assert (parsed.value.status, parsed.value.code) == (413, "limit-exceeded")


def test_a_card_within_the_nesting_bound_is_derived(plain: Service) -> None:
    ok = plain.pool.call(lambda e, u: validate(e, u, CardSource(data=_nested(62)), plain.limits))
    assert ok.status == 200


def test_the_http_api_refuses_a_deep_card_with_413(plain: Service) -> None:
    with ASGIServer(lambda _: create_app(plain)) as srv, httpx.Client(base_url=srv.base_url, timeout=60) as client:
        r = client.post("/v1/validate", content=_nested(100), headers=JSON)
        assert r.status_code == 413
        assert "deeper than 64 levels" in r.json()["error"]["message"]


# --------------------------------------------------------------------------- 1: whose cards a policy is for


@pytest.fixture(scope="module")
def with_policy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The example policy (OpenHolidays needs no authorization: a pin), for the example card only."""
    settings = Settings(cache_dir=tmp_path_factory.mktemp("cache"), offline=True, cassette=CASSETTE)
    service = Service(settings, load_policy(POLICY), policy_cards=PolicyCards.of_cards([load_card(CARD)]))
    yield service
    service.close()


def _stranger() -> dict[str, Any]:
    """Another agent's card that names its holidays access and operation exactly as the example does."""
    card = _card()
    card["name"] = "Someone Else's Agent"
    card["description"] = "not the card the operator named"
    return card


def _holidays(report: dict[str, Any]) -> dict[str, Any]:
    return next(a for a in report["accesses"] if a["id"] == HOLIDAYS)


def test_the_policy_serves_the_card_the_operator_named(with_policy: Service) -> None:
    """The operator's own card gets the policy: its bytes, or the same card re-encoded (an MCP argument)."""
    for src in (CardSource(data=CARD.read_bytes()), CardSource(doc=_card())):
        a = with_policy.pool.call(lambda e, u, s=src: derive(e, u, s, with_policy.limits))  # type: ignore[misc]
        report = orjson.loads(a.body)
        assert a.exit_code == 0
        assert report["complete"] is True
        assert _holidays(report)["requirements_source"] == "policy"
        assert report["policy"]["pins"]


def test_a_strangers_card_with_the_same_ids_does_not_get_the_policy(with_policy: Service) -> None:
    """Before: the stranger's card got the operator's "no authorization needed" pin by naming its access like
    the example's: complete, exit 0. Now it is derived without the policy: undetermined, exit 3."""
    a = with_policy.pool.call(lambda e, u: derive(e, u, CardSource(doc=_stranger()), with_policy.limits))
    report = orjson.loads(a.body)
    assert a.exit_code == 3
    assert report["complete"] is False
    assert _holidays(report)["requirements_source"] != "policy"
    assert not _holidays(report)["policy"]
    assert not report["policy"] or not report["policy"]["pins"]


def test_a_service_policy_without_named_cards_applies_to_none(tmp_path: Path) -> None:
    settings = Settings(cache_dir=tmp_path / "cache", offline=True, cassette=CASSETTE)
    service = Service(settings, load_policy(POLICY))
    try:
        a = service.pool.call(lambda e, u: derive(e, u, CardSource(data=CARD.read_bytes()), service.limits))
        assert a.exit_code == 3  # even the example card: the operator named none
    finally:
        service.close()


def test_the_http_answer_says_whether_the_policy_applied(with_policy: Service) -> None:
    with ASGIServer(lambda _: create_app(with_policy)) as srv, httpx.Client(base_url=srv.base_url, timeout=60) as c:
        own = c.post("/v1/derive", content=CARD.read_bytes(), headers=JSON)
        other = c.post("/v1/derive", content=orjson.dumps(_stranger()), headers=JSON)
        assert (own.headers["x-ramscope-policy"], own.headers["x-ramscope-exit-code"]) == ("applied", "0")
        assert (other.headers["x-ramscope-policy"], other.headers["x-ramscope-exit-code"]) == ("not-applied", "3")


def test_the_commands_say_the_policy_is_for_the_cards_named(capsys: pytest.CaptureFixture[str]) -> None:
    """`--policy P serve` alone still starts (the contract's invocation), warning that P applies to no card;
    `--policy-card` without `--policy`, or a malformed digest, is refused (exit 2)."""
    import argparse

    from ramscope.cli import main
    from ramscope.cli.service import _policy_cards

    policy = load_policy(POLICY)
    for command in ("serve", "mcp"):
        args = argparse.Namespace(command=command, quiet=False, policy_card=[])
        assert _policy_cards(args, policy) == PolicyCards()
        assert "--policy applies only to the cards you name, and none is named" in capsys.readouterr().err
        named = _policy_cards(argparse.Namespace(command=command, quiet=False, policy_card=[str(CARD)]), policy)
        assert named is not None
        assert load_card(CARD).sha256 in named.digests
        assert main([command, "--policy-card", str(CARD)]) == 2
        assert "give --policy FILE too" in capsys.readouterr().err
        assert main(["--policy", str(POLICY), command, "--policy-card", "sha256:12"]) == 2
        assert "64 hex digits" in capsys.readouterr().err


# --------------------------------------------------------------------------- 14: nested rules


@pytest.fixture(scope="module")
def client(plain: Service) -> Iterator[httpx.Client]:
    with ASGIServer(lambda _: create_app(plain)) as srv, httpx.Client(base_url=srv.base_url, timeout=60) as c:
        yield c


@pytest.mark.parametrize("levels", [20, 400, 5000])
def test_nested_toml_rules_are_a_400_not_a_500(client: httpx.Client, levels: int) -> None:
    """Thousands of "[" in the rules' TOML were a RecursionError: HTTP 500. Now 400, as any malformed rules."""
    toml = 'version = 1\n[[rule]]\nkind = "complete-derivation"\nx = ' + "[" * levels + "]" * levels + "\n"
    r = client.post("/v1/check", content=orjson.dumps({"card": _card(), "rules": toml}), headers=JSON)
    assert r.status_code == 400
    assert "nested" in r.json()["error"]["message"]


def test_nested_json_rules_are_a_400(client: httpx.Client) -> None:
    rules: Any = {"version": 1, "rule": [{"kind": "complete-derivation"}]}
    deep: Any = []
    for _ in range(30):
        deep = [deep]
    rules["rule"][0]["x"] = deep
    r = client.post("/v1/check", content=orjson.dumps({"card": _card(), "rules": rules}), headers=JSON)
    assert r.status_code == 400


def test_the_cli_refuses_nested_rules_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ramscope.cli import main

    rules = tmp_path / "deep.toml"
    rules.write_text('[[rule]]\nkind = "complete-derivation"\nx = ' + "[" * 400 + "]" * 400 + "\n")
    assert main(["--offline", "--cache-dir", str(tmp_path / "c"), "check", "--rules", str(rules), str(CARD)]) == 2
    err = capsys.readouterr().err
    assert "nested deeper than 16 levels" in err
    assert "Traceback" not in err


# --------------------------------------------------------------------------- 19: no server paths in answers


def test_answers_name_no_server_file_paths(tmp_path: Path) -> None:
    """/v1/derive answered the policy's and the cassette's paths on the server. Now their file names only,
    in every endpoint's answer (the cache directory never)."""
    cache = tmp_path / "private-cache-dir"
    settings = Settings(cache_dir=cache, offline=True, cassette=CASSETTE.resolve())
    service = Service(settings, load_policy(POLICY.resolve()), policy_cards=PolicyCards.of_cards([load_card(CARD)]))
    try:
        with ASGIServer(lambda _: create_app(service)) as srv, httpx.Client(base_url=srv.base_url, timeout=60) as c:
            bodies = [c.post(f"/v1/{ep}", content=CARD.read_bytes(), headers=JSON) for ep in ("derive", "scopes")]
            bodies.append(c.post("/v1/consent?format=markdown", content=CARD.read_bytes(), headers=JSON))
            report = bodies[0].json()
            assert report["policy"]["source"] == "travel-agent.policy.toml"
            assert {s["provenance"]["cassette"] for s in report["specs"]} == {"travel-agent.yaml"}
            for r in bodies:
                assert r.status_code == 200
                assert str(ROOT) not in r.text
                assert str(tmp_path) not in r.text
    finally:
        service.close()


# --------------------------------------------------------------------------- 6: cross-site requests


@pytest.mark.parametrize(
    "headers",
    [
        {"content-type": "text/plain"},  # what a page's fetch(..., {mode: "no-cors"}) or a form sends
        {},  # no content type at all
        {"content-type": "application/x-www-form-urlencoded"},
        {"content-type": "multipart/form-data; boundary=x"},
    ],
)
def test_a_simple_cross_site_post_with_an_empty_body_is_refused(client: httpx.Client, headers: dict[str, str]) -> None:
    """An empty `text/plain` POST with ?url= (a "simple" request any web page may send, no preflight) was served:
    the page drove the loopback API. Now every POST must say application/json, empty or not: 415."""
    r = client.post("/v1/derive", params={"url": "https://agent.example.com/"}, headers=headers)
    assert (r.status_code, r.json()["error"]["code"]) == (415, "unsupported-media-type")


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "https://evil.example"},
        {"origin": "http://localhost:3000"},  # another port of localhost: same site, other origin
        {"origin": "null"},  # a sandboxed frame, a data: URL
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},
    ],
)
@pytest.mark.parametrize("endpoint", ["/v1/derive", "/v1/scopes", "/v1/validate", "/v1/check", "/v1/diff"])
def test_a_post_from_another_origin_is_refused(client: httpx.Client, headers: dict[str, str], endpoint: str) -> None:
    r = client.post(endpoint, content=b"{}", headers={**JSON, **headers})
    assert (r.status_code, r.json()["error"]["code"]) == (403, "cross-origin")


def test_a_post_without_origin_or_from_its_own_origin_is_served(client: httpx.Client) -> None:
    own = str(client.base_url).rstrip("/")
    for extra in ({}, {"origin": own, "sec-fetch-site": "same-origin"}, {"sec-fetch-site": "none"}):
        r = client.post("/v1/validate", content=CARD.read_bytes(), headers={**JSON, **extra})
        assert r.status_code == 200, extra
    # ?url= with an empty JSON-typed body: the guard answers (offline: not in the cassette), not the 415.
    r = client.post("/v1/derive", params={"url": "https://agent.example.com/"}, headers=JSON)
    assert r.status_code == 502


# --------------------------------------------------------------------------- 9: the deadline stops the work


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
                            "clientCredentials": {"tokenUrl": "https://a.example.com/token", "scopes": {scope: "r"}}
                        },
                    }
                }
            },
            "paths": {"/x": {"get": {"operationId": "getX", "security": [{"o": [scope]}]}}},
        }
    )


def _three_specs(urls: list[str]) -> dict[str, Any]:
    return {
        "resources": [
            {"id": f"r{i}", "interaction_protocol": "REST", "owner": "CONSUMER", "spec": {"spec_url": u}}
            for i, u in enumerate(urls)
        ],
        "operations": [
            {"id": f"o{i}", "resource": f"r{i}", "api_operation_spec": {"operation_id": "getX"}}
            for i in range(len(urls))
        ],
        "resource_accesses": [
            {"id": f"a{i}", "operation": f"o{i}", "identity_used": "AGENT", "necessity": "REQUIRED"}
            for i in range(len(urls))
        ],
    }


def test_after_a_504_the_work_fetches_no_further_spec(tmp_path: Path) -> None:
    """Before: after the 504 the worker went on and fetched every other spec of the card. Now the request's
    work stops at its next fetch: once the worker has provably stopped (the pool is quiet), the spec server saw
    the first spec only (the one in flight at the deadline)."""
    import threading

    from tests.support.httpserver import LocalHTTPServer, Reply
    from tests.support.httpserver import Request as Seen

    asked, release = threading.Event(), threading.Event()

    def held(_: Seen) -> Reply:
        asked.set()
        release.wait(60)
        return Reply(200, _spec("s1:read"), {"content-type": "application/json"})

    with LocalHTTPServer() as srv:
        srv.route("/s1.json", handler=held)
        srv.route("/s2.json", body=_spec("s2:read"))
        srv.route("/s3.json", body=_spec("s3:read"))
        # One fetch at a time, so the order is the card's: s1 (held), then s2 and s3.
        settings = Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=60, jobs=1)
        service = Service(settings, workers=1, limits=ServiceLimits(deadline=1.0))
        try:
            card = _three_specs([srv.url(f"/s{i}.json") for i in (1, 2, 3)])
            with ASGIServer(lambda _: create_app(service)) as api, httpx.Client(base_url=api.base_url) as c:
                # Warm: the first derivation loads code paths (on a loaded machine, past the deadline).
                assert c.post("/v1/validate", content=orjson.dumps(card), headers=JSON).status_code == 200
                r = c.post("/v1/derive", content=orjson.dumps(card), headers=JSON)
                assert r.status_code == 504
                release.set()
                assert service.pool.wait_quiet(60), "the worker did not stop"
                paths = [q.path for q in srv.requests]
                # s1 in flight at the deadline (or, on a machine slow enough, not yet asked): nothing after.
                assert paths in (["/s1.json"], []), paths
                # The worker is free again: the next request is answered (its specs fetched anew).
                ok = c.post("/v1/scopes", content=orjson.dumps(_three_specs([srv.url("/s2.json")])), headers=JSON)
                assert (ok.status_code, ok.json()["scopes"]) == (200, ["s2:read"])
        finally:
            release.set()
            service.close()


# --------------------------------------------------------------------------- 8: ?url= cards, bounded while streaming


def _vm_hwm_kib(pid: int) -> int:
    """The peak resident set of process ``pid`` so far (Linux's VmHWM), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak RSS is read from /proc (Linux)")
def test_a_url_card_is_read_no_further_than_the_card_bound(tmp_path: Path) -> None:
    """Before: a `?url=` card was downloaded up to the 64 MiB spec bound, refused as over 1 MiB afterwards, and
    kept in memory (+40 MiB a request, never retired). Now the download stops at the card bound while it
    streams and nothing is kept: the server's peak RSS grows by a few MiB over 5 such requests (measured from
    /proc of the `ramscope serve` process), and the card's server sends a bounded part of its endless body."""
    import os
    import subprocess
    import sys

    from tests.support.httpserver import LocalHTTPServer

    chunks: list[int] = []  # one entry per 64 KiB chunk the card's server wrote
    with LocalHTTPServer() as srv:
        # An endless card: 64 KiB chunks of spaces for as long as the client reads.
        srv.route("/card.json", body=b" " * 65536, endless=True, chunked=True, before_chunk=chunks.append)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
        cmd = [sys.executable, "-m", "ramscope", "--allow-private-network", "--cache-dir", str(tmp_path / "cache")]
        proc = subprocess.Popen([*cmd, "serve", "--port", "0"], env=env, stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            with httpx.Client(base_url=url, timeout=60) as client:
                assert client.get("/v1/health").status_code == 200
                r = client.post("/v1/derive", params={"url": srv.url("/card.json")}, headers=JSON)
                base = _vm_hwm_kib(proc.pid)  # after one such request: the code paths are loaded
                for _ in range(5):
                    chunks.clear()
                    r = client.post("/v1/derive", params={"url": srv.url("/card.json")}, headers=JSON)
                    assert r.status_code == 502, r.text
                    assert "spec-too-large" in r.json()["error"]["message"]
                    # What the server wrote before the client left: the 1 MiB bound, and the sockets' buffers
                    # (before: the 64 MiB of a spec).
                    assert 2**20 <= len(chunks) * 65536 < 16 * 2**20
                grown = _vm_hwm_kib(proc.pid) - base
        finally:
            proc.terminate()
            proc.wait(30)
    print(f"peak RSS grew {grown / 1024:.1f} MiB over 5 requests for an endless ?url= card")
    assert grown < 24 * 1024


def test_a_yaml_card_is_held_to_the_nesting_bound_too() -> None:
    """Another encoding of item 20: a card file in YAML (the CLI reads them), block or flow style, nested past
    64 levels, is refused as the JSON one is (libyaml's own bound is far deeper)."""
    from ramscope.errors import LimitError

    block = "resources: []\nx:\n" + "".join("  " * i + "-\n" for i in range(1, 70)) + "  " * 70 + "- 1\n"
    flow = "resources: []\nx: " + "[" * 70 + "]" * 70 + "\n"
    for text in (block, flow):
        with pytest.raises(LimitError, match="deeper than 64 levels"):
            load_card(text.encode(), name="card.yaml", limits=ServiceLimits().card_limits())
    load_card(
        b"resources: []\nx: " + b"[" * 60 + b"]" * 60 + b"\n", name="card.yaml", limits=ServiceLimits().card_limits()
    )


def test_an_unterminated_string_of_escaped_quotes_costs_linear_time(plain: Service) -> None:
    """Found beside item 20: the string pattern the node count strips strings with failed from every escaped
    quote of an unterminated string and scanned on to the end: `{` + 60,000 commas + `"` + 20,000 `\\"` took
    44 s, a 1 MiB posted card hours (and the MCP transport's depth scan the same). Now one pass: refused
    (413) in a fraction of a second of CPU; the bound below is 100 times what it takes."""
    import time

    from ramscope.service.mcp_stdio import nesting_depth

    body = b"{" + b"," * 60_000 + b'"' + b'\\"' * 450_000
    started = time.process_time()
    with pytest.raises(Refusal) as big:
        plain.pool.call(lambda e, u: validate(e, u, CardSource(data=body), plain.limits))
    assert big.value.status == 413
    assert nesting_depth(b"[" * 100 + b'"' + b'\\"' * 450_000, stop_at=67) == 68  # counted to just past the bound
    assert time.process_time() - started < 30


def test_scrubbing_rewrites_paths_not_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative cache directory named `cache` must not rewrite the report's `"origin": "cache"` (nor any
    other word): only JSON values that are the path, or deep absolute paths inside text, are replaced."""
    monkeypatch.chdir(tmp_path)
    settings = Settings(cache_dir=Path("cache"), offline=True, cassette=CASSETTE)
    service = Service(settings)
    try:
        body = b'{"origin":"cache","note":"the cache is warm","cassette":"%s","where":"at %s/x"}' % (
            str(CASSETTE).encode(),
            str(tmp_path / "cache").encode(),
        )
        from ramscope.service import Answer

        got = orjson.loads(service.scrubbed(Answer(body=body)).body)
        assert got == {
            "origin": "cache",
            "note": "the cache is warm",
            "cassette": "travel-agent.yaml",
            "where": "at <cache>/x",
        }
    finally:
        service.close()
