"""`ramscope serve`'s HTTP API: every endpoint against the example card (offline, its cassette), the CLI's
exit codes as statuses, bounded bodies, bearer tokens, loopback by default, and a slow spec that does
not hold up a fast request."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from ramscope.config import Settings
from ramscope.derive.policy import load_policy
from ramscope.errors import InputError
from ramscope.service import PolicyCards, Service, ServiceLimits
from ramscope.service.http import check_bind, create_app, read_token
from ramscope.service.openapi import openapi_document
from tests.support.asgi import ASGIServer
from tests.support.httpserver import LocalHTTPServer, Reply
from tests.support.httpserver import Request as SeenRequest

ROOT = Path(__file__).resolve().parent.parent
CARD = ROOT / "examples" / "travel-agent.card.json"
CASSETTE = ROOT / "cassettes" / "travel-agent.yaml"
POLICY = ROOT / "examples" / "travel-agent.policy.toml"
EVENTS = "https://www.googleapis.com/auth/calendar.events"
JSON = {"content-type": "application/json"}
TOKEN = "s3cret-token-0123456789abcdef"


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """The API over the example's settings (offline, the cassette, the example policy), on loopback."""
    settings = Settings(cache_dir=tmp_path_factory.mktemp("cache"), offline=True, cassette=CASSETTE)
    service = Service(
        settings, load_policy(POLICY), policy_cards=_example(), limits=ServiceLimits(max_body_bytes=64 * 1024)
    )
    with ASGIServer(lambda _: create_app(service)) as srv, httpx.Client(base_url=srv.base_url, timeout=60) as client:
        yield client
    service.close()


def _example() -> PolicyCards:
    """The example policy is for the example card."""
    from ramscope.card import load_card

    return PolicyCards.of_cards([load_card(CARD)])


def _card() -> dict[str, Any]:
    return json.loads(CARD.read_text("utf-8"))  # type: ignore[no-any-return]


def _post(api: httpx.Client, path: str, doc: Any = None, *, raw: bytes | None = None, **kw: Any) -> httpx.Response:
    body = raw if raw is not None else orjson.dumps(doc if doc is not None else _card())
    return api.post(path, content=body, headers={**JSON, **kw.pop("headers", {})}, **kw)


# --------------------------------------------------------------------------- every endpoint


def test_derive_answers_the_report_of_the_example(api: httpx.Client) -> None:
    """POST /v1/derive with the card as the body answers the derive report: calendar.events for the user."""
    r = _post(api, "/v1/derive")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.headers["x-ramscope-exit-code"] == "0"
    report = r.json()
    assert report["card"]["source"] == "<request>"
    assert report["card"]["valid"] is True
    assert report["complete"] is True
    assert report["tiers"]["OPTIONAL"]["END_USER"]["scopes"] == [EVENTS]
    assert report["tiers"]["REQUIRED"]["END_USER"]["scopes"] == []


def test_derive_answers_the_same_report_as_the_library(api: httpx.Client, tmp_path: Path) -> None:
    """The service owns no derivation: its report is the Engine's, field for field (fetch times aside, and
    the server's file paths, which answers name by file name only)."""
    from ramscope.card import load_card
    from ramscope.derive import Engine

    settings = Settings(cache_dir=tmp_path / "cache", offline=True, cassette=CASSETTE)
    with Engine(settings, policy=load_policy(POLICY)) as engine:
        expected = engine.derive(load_card(CARD.read_bytes(), name="<request>")).to_dict()
    got = _post(api, "/v1/derive", raw=CARD.read_bytes()).json()
    for doc in (expected, got):
        doc["policy"]["source"] = Path(doc["policy"]["source"]).name
        for spec in doc["specs"]:
            spec.pop("fetched_at")
            spec["provenance"]["cassette"] = Path(spec["provenance"]["cassette"]).name
    assert got == expected


def test_scopes_of_a_tier_and_identity(api: httpx.Client) -> None:
    """POST /v1/scopes?tier=&identity= answers the scopes and the credentials that are not scopes."""
    r = _post(api, "/v1/scopes?tier=optional&identity=end_user")
    assert r.status_code == 200
    assert r.json()["scopes"] == [EVENTS]
    assert r.json()["complete"] is True
    agent = _post(api, "/v1/scopes?tier=recommended&identity=agent").json()
    assert agent["scopes"] == []
    assert [c["scheme"] for c in agent["credentials"]] == ["mcp-api-key"]
    assert _post(api, "/v1/scopes?tier=required").json()["scopes"] == []


@pytest.mark.parametrize(
    ("fmt", "media", "needle"),
    [
        ("json", "application/json", '"agent"'),
        ("markdown", "text/markdown; charset=utf-8", "# Travel Reservation Agent asks for access"),
        ("html", "text/html; charset=utf-8", "<!DOCTYPE html>"),
    ],
)
def test_consent_in_each_format(api: httpx.Client, fmt: str, media: str, needle: str) -> None:
    """POST /v1/consent?format= answers the consent data as JSON, Markdown or HTML."""
    r = _post(api, f"/v1/consent?format={fmt}")
    assert r.status_code == 200
    assert r.headers["content-type"] == media
    assert needle in r.text


def test_validate_a_valid_and_an_invalid_card(api: httpx.Client) -> None:
    """POST /v1/validate: 200 for a valid card, 422 with the diagnostics (line and column) for an invalid one."""
    ok = _post(api, "/v1/validate")
    assert (ok.status_code, ok.json()["valid"], ok.json()["diagnostics"]) == (200, True, [])
    card = _card()
    card["resourceAccessManifest"]["resource_accesses"][0]["operation"] = "no-such-operation"
    bad = _post(api, "/v1/validate", raw=json.dumps(card, indent=2).encode())
    assert bad.status_code == 422
    assert bad.headers["x-ramscope-exit-code"] == "1"
    errors = [d for d in bad.json()["diagnostics"] if d["severity"] == "error"]
    assert [d["path"] for d in errors] == ["/resourceAccessManifest/resource_accesses/0/operation"]
    assert errors[0]["line"] > 1


def test_derive_of_an_invalid_card_is_422_with_the_report(api: httpx.Client) -> None:
    """An invalid card is exit 1 on the CLI: 422 here, the body still the report that says why."""
    r = _post(api, "/v1/derive", {"resources": 3})
    assert r.status_code == 422
    assert r.headers["x-ramscope-exit-code"] == "1"
    assert r.json()["card"]["valid"] is False
    assert any(d["severity"] == "error" for d in r.json()["diagnostics"])


def test_check_with_rules_as_toml_and_as_json(api: httpx.Client) -> None:
    """POST /v1/check judges the card by the rules in the body; a failing rule is exit 5, still a 200."""
    passing = _post(api, "/v1/check", {"card": _card(), "rules": (ROOT / "examples" / "org.rules.toml").read_text()})
    assert passing.status_code == 200
    assert passing.headers["x-ramscope-exit-code"] == "0"
    assert passing.json()["passed"] is True
    rules = {"version": 1, "rule": [{"id": "no-calendar", "kind": "forbidden-scopes", "scopes": [EVENTS]}]}
    failing = _post(api, "/v1/check", {"card": _card(), "rules": rules})
    assert failing.status_code == 200
    assert failing.headers["x-ramscope-exit-code"] == "5"
    assert failing.json()["passed"] is False
    # Both calendar accesses (the personal and the corporate calendar) ask for it.
    assert [f["rule"] for f in failing.json()["cards"][0]["findings"]] == ["no-calendar", "no-calendar"]


def test_check_refuses_malformed_rules(api: httpx.Client) -> None:
    """Rules that do not parse are the caller's error: 400, the message naming the place."""
    r = _post(api, "/v1/check", {"card": _card(), "rules": {"version": 1, "rule": [{"id": "x", "kind": "nope"}]}})
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "bad-input"


def test_diff_finds_new_permissions(api: httpx.Client) -> None:
    """POST /v1/diff: a new card needing calendar.events where the old did not is exit 4 (a 200 answer)."""
    old = _card()
    ram = old["resourceAccessManifest"]
    ram["resource_accesses"] = [
        a for a in ram["resource_accesses"] if a["operation"] != "google-calendar-events-v3-insert"
    ]
    r = _post(api, "/v1/diff", {"old": old, "new": _card()})
    assert r.status_code == 200
    assert r.headers["x-ramscope-exit-code"] == "4"
    added = r.json()["tiers"]["OPTIONAL"]["END_USER"]["added_scopes"]
    assert added == [EVENTS]
    same = _post(api, "/v1/diff", {"old": _card(), "new": _card()})
    assert (same.status_code, same.headers["x-ramscope-exit-code"]) == (200, "0")


def test_diff_and_check_refuse_a_saved_report(api: httpx.Client) -> None:
    """A saved report is a claim about a card the service cannot read to verify it (issue 30: a forged
    report, scopes removed, gave diff 0 where the card gives 4): refused, 400, on either side."""
    saved = _post(api, "/v1/derive").json()
    for body in ({"old": saved, "new": _card()}, {"old": _card(), "new": saved}):
        r = _post(api, "/v1/diff", body)
        assert (r.status_code, r.json()["error"]["code"]) == (400, "saved-report-refused")
    r = _post(api, "/v1/check", {"card": saved, "rules": {"rule": [{"kind": "complete-derivation"}]}})
    assert (r.status_code, r.json()["error"]["code"]) == (400, "saved-report-refused")
    assert "post the card itself" in r.json()["error"]["message"]


def test_health(api: httpx.Client) -> None:
    """GET /v1/health says the server is up, its version and its pool."""
    r = api.get("/v1/health")
    assert r.status_code == 200
    assert r.json()["status"] == "ok"
    assert r.json()["offline"] is True
    assert r.json()["workers"] == 4


def test_openapi_document_is_valid_and_names_every_route(api: httpx.Client) -> None:
    """/openapi.json is a valid OpenAPI 3.1 document describing exactly the routes served."""
    from openapi_spec_validator import validate

    doc = api.get("/openapi.json").json()
    validate(doc)
    assert doc == json.loads(json.dumps(openapi_document()))
    app = create_app(Service(Settings(offline=True)))
    served = {route.path for route in app.routes}  # type: ignore[attr-defined]
    assert set(doc["paths"]) == served


# --------------------------------------------------------------------------- bad requests


@pytest.mark.parametrize(
    ("path", "body", "headers", "status", "code"),
    [
        ("/v1/derive", b"{not json", JSON, 400, "bad-input"),
        ("/v1/derive", b"[1, 2]", JSON, 400, "bad-input"),
        ("/v1/derive", b"", JSON, 400, "bad-input"),
        ("/v1/derive", b'{"a": 1, "a": 2}', JSON, 400, "bad-input"),
        ("/v1/derive", b"\xff\xfe{}", JSON, 400, "bad-input"),
        ("/v1/derive", b'{"resources": []}', {"content-type": "text/plain"}, 415, "unsupported-media-type"),
        ("/v1/derive?verbose=1", b'{"resources": []}', JSON, 400, "bad-input"),
        ("/v1/scopes?tier=all", b'{"resources": []}', JSON, 400, "bad-input"),
        ("/v1/consent?format=pdf", b'{"resources": []}', JSON, 400, "bad-input"),
        ("/v1/derive?url=https://x.example.com/card.json", b'{"resources": []}', JSON, 400, "bad-input"),
        ("/v1/diff", b'{"old": {}}', JSON, 400, "bad-input"),
        ("/v1/diff", b'{"old": {}, "new": [], "x": 1}', JSON, 400, "bad-input"),
        ("/v1/check", b'{"card": {}, "rules": "not = [toml"}', JSON, 400, "bad-input"),
        ("/v1/derive", b"[" * 10 + b"]" * 10, JSON, 400, "bad-input"),
        ("/v1/diff", b'{"old":' + b'{"a":' * 100 + b"1" + b"}" * 101, JSON, 413, "limit-exceeded"),
    ],
)
def test_invalid_bodies_are_refused_with_a_reason(
    api: httpx.Client, path: str, body: bytes, headers: dict[str, str], status: int, code: str
) -> None:
    """Bodies that are not one JSON object, wrong media types, unknown or bad parameters: refused, said why."""
    r = api.post(path, content=body, headers=headers)
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code
    assert r.json()["error"]["status"] == status


def test_a_wrong_method_is_405(api: httpx.Client) -> None:
    """GET on a POST endpoint is refused by the router."""
    assert api.get("/v1/derive").status_code == 405


def test_oversize_bodies_are_refused(api: httpx.Client) -> None:
    """A body over the limit is 413: by its Content-Length before reading, and when streamed without one."""
    big = b'{"x": "' + b"a" * (64 * 1024) + b'"}'
    declared = _post(api, "/v1/derive", raw=big)
    assert declared.status_code == 413
    assert declared.json()["error"]["code"] == "body-too-large"

    def chunks() -> Iterator[bytes]:
        yield b'{"x": "'
        for _ in range(100):
            yield b"a" * 1024
        yield b'"}'

    streamed = api.post("/v1/derive", content=chunks(), headers=JSON)
    assert streamed.status_code == 413
    assert streamed.json()["error"]["code"] == "body-too-large"


def test_a_card_url_goes_through_the_guard(api: httpx.Client) -> None:
    """?url= on loopback is refused by the SSRF guard (400, url-blocked), as a spec URL would be."""
    r = api.post("/v1/derive", params={"url": "http://127.0.0.1:1/card.json"}, headers=JSON)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "url-blocked"
    meta = api.post("/v1/derive", params={"url": "http://169.254.169.254/latest/meta-data"}, headers=JSON)
    assert meta.json()["error"]["code"] == "url-blocked"
    local = api.post("/v1/derive", params={"url": "file:///etc/passwd"}, headers=JSON)
    assert local.json()["error"]["code"] == "url-blocked"


def test_what_a_card_names_goes_through_the_guard_and_no_file_is_read(
    api: httpx.Client, server: LocalHTTPServer
) -> None:
    """Spec URLs in a posted card are checked as on the CLI: loopback and the metadata address are refused
    by the guard (the access undetermined: 200, complete: false); file: URLs and relative paths make the
    card invalid (422); nothing is sent, and no file is read."""
    server.route("/spec.json", body=_spec("x:read"))
    for url in (server.url("/spec.json"), "http://169.254.169.254/latest/meta-data"):
        r = _post(api, "/v1/derive", _manifest(url))
        assert (r.status_code, r.headers["x-ramscope-exit-code"]) == (200, "3"), url
        assert r.json()["complete"] is False
        assert r.json()["specs"][0]["error"]["code"] == "url-blocked", url
    for url in ("file:///etc/passwd", "../../etc/passwd"):
        r = _post(api, "/v1/derive", _manifest(url))
        assert (r.status_code, r.headers["x-ramscope-exit-code"]) == (422, "1"), url
        assert r.json()["specs"] == [] or all(s["sha256"] is None for s in r.json()["specs"]), url
        assert "root:" not in r.text
    assert server.requests == []


def test_a_card_url_that_cannot_be_fetched_is_502(api: httpx.Client) -> None:
    """A card the upstream does not give (offline: not in the cassette) is the upstream's failure: 502."""
    r = api.post("/v1/derive", params={"url": "https://agent.example.com/"}, headers=JSON)
    assert r.status_code == 502
    assert r.json()["error"]["code"] == "fetch-failed"


def test_a_foreign_host_header_is_refused_on_loopback(api: httpx.Client) -> None:
    """On loopback, a Host naming another name (DNS rebinding from a web page) is refused."""
    r = _post(api, "/v1/derive", headers={"host": "attacker.example.com"})
    assert r.status_code == 421
    assert api.get("/v1/health", headers={"host": "localhost:8321"}).status_code == 200


# --------------------------------------------------------------------------- tokens and binding


def test_a_non_loopback_bind_without_a_token_is_refused() -> None:
    """Listening beyond loopback needs a token; loopback does not."""
    for host in ("0.0.0.0", "::", "192.168.1.10", "api.example.com"):
        with pytest.raises(InputError, match="needs --token-file"):
            check_bind(host, None)
    for host in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):
        check_bind(host, None)
    check_bind("0.0.0.0", b"x" * 32)


def test_a_weak_or_missing_token_file_is_refused(tmp_path: Path) -> None:
    """The token file must exist and hold at least 16 printable characters."""
    (tmp_path / "short").write_text("abc\n")
    with pytest.raises(InputError, match="at least 16"):
        read_token(tmp_path / "short")
    with pytest.raises(InputError, match="cannot read"):
        read_token(tmp_path / "absent")
    (tmp_path / "ok").write_text(f"  {TOKEN}\n")
    assert read_token(tmp_path / "ok") == TOKEN.encode()


def test_a_token_is_required_when_given(tmp_path: Path) -> None:
    """With a token every endpoint but health and the document wants it: 401 with a Bearer challenge."""
    settings = Settings(cache_dir=tmp_path / "cache", offline=True, cassette=CASSETTE)
    service = Service(settings, load_policy(POLICY), policy_cards=_example())
    app = create_app(service, token=TOKEN.encode(), loopback=False)
    with ASGIServer(lambda _: app) as srv, httpx.Client(base_url=srv.base_url, timeout=60) as client:
        missing = _post(client, "/v1/derive")
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"] == 'Bearer realm="ramscope"'
        assert _post(client, "/v1/derive", headers={"authorization": "Bearer wrong"}).status_code == 401
        assert _post(client, "/v1/derive", headers={"authorization": f"Basic {TOKEN}"}).status_code == 401
        ok = _post(client, "/v1/derive", headers={"authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200
        assert client.get("/v1/health").status_code == 200
        assert client.get("/openapi.json").status_code == 200
    service.close()


# --------------------------------------------------------------------------- concurrency


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
                                "scopes": {scope: "read"},
                            }
                        },
                    }
                }
            },
            "paths": {"/x": {"get": {"operationId": "getX", "security": [{"o": [scope]}]}}},
        }
    )


def _manifest(url: str) -> dict[str, Any]:
    return {
        "resources": [{"id": "r", "interaction_protocol": "REST", "owner": "CONSUMER", "spec": {"spec_url": url}}],
        "operations": [{"id": "o", "resource": "r", "api_operation_spec": {"operation_id": "getX"}}],
        "resource_accesses": [
            {
                "id": "a",
                "operation": "o",
                "identity_used": "END_USER",
                "necessity": "REQUIRED",
                "access_justification": "t",
            }
        ],
    }


@pytest.fixture
def slow_and_fast(tmp_path: Path) -> Iterator[tuple[LocalHTTPServer, threading.Event, threading.Event, Service]]:
    """A spec server whose /slow spec is held until ``release`` is set (``asked`` says it was asked for),
    and a service online (loopback allowed) with two workers."""
    asked, release = threading.Event(), threading.Event()

    def slow(_: SeenRequest) -> Reply:
        asked.set()
        release.wait(60)
        return Reply(200, _spec("slow:read"), {"content-type": "application/json"})

    with LocalHTTPServer() as srv:
        srv.route("/slow.json", handler=slow)
        srv.route("/fast.json", body=_spec("fast:read"))
        settings = Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=60)
        service = Service(settings, workers=2, limits=ServiceLimits(deadline=60))
        try:
            yield srv, asked, release, service
        finally:
            release.set()
            service.close()


def test_a_slow_spec_does_not_block_a_fast_request(
    slow_and_fast: tuple[LocalHTTPServer, threading.Event, threading.Event, Service],
) -> None:
    """While one request waits for a spec its server holds, another card's request is answered."""
    srv, asked, release, service = slow_and_fast
    with ASGIServer(lambda _: create_app(service)) as api, httpx.Client(base_url=api.base_url, timeout=60) as client:
        slow_result: list[httpx.Response] = []
        slow = threading.Thread(
            target=lambda: slow_result.append(_post(client, "/v1/scopes", _manifest(srv.url("/slow.json"))))
        )
        slow.start()
        assert asked.wait(30), "the slow spec was never asked for"
        fast = _post(client, "/v1/scopes", _manifest(srv.url("/fast.json")))
        assert not release.is_set()  # answered while the slow spec is still held
        assert (fast.status_code, fast.json()["scopes"]) == (200, ["fast:read"])
        release.set()
        slow.join(60)
        assert (slow_result[0].status_code, slow_result[0].json()["scopes"]) == (200, ["slow:read"])


def test_a_request_past_its_deadline_is_504(tmp_path: Path) -> None:
    """A derivation still waiting for its spec when the deadline passes is answered 504. (Deterministic: the
    spec is held until after the answer, so no derivation can finish in time, whatever the machine's load.)"""
    asked, release = threading.Event(), threading.Event()

    def held(_: SeenRequest) -> Reply:
        asked.set()
        release.wait(60)
        return Reply(200, _spec("slow:read"), {"content-type": "application/json"})

    with LocalHTTPServer() as srv:
        srv.route("/held.json", handler=held)
        settings = Settings(cache_dir=tmp_path / "cache", allow_private_network=True, timeout=60)
        service = Service(settings, workers=2, limits=ServiceLimits(deadline=0.5))
        try:
            with ASGIServer(lambda _: create_app(service)) as api, httpx.Client(base_url=api.base_url) as client:
                r = _post(client, "/v1/derive", _manifest(srv.url("/held.json")))
                assert r.status_code == 504
                assert r.json()["error"]["code"] == "deadline-exceeded"
                release.set()
        finally:
            release.set()
            service.close()


# --------------------------------------------------------------------------- the command


def test_serve_prints_its_url_first_and_answers(tmp_path: Path) -> None:
    """`ramscope ... serve --port 0`: the first stdout line is the URL of a free port, which answers."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "ramscope", "--offline", "--cassette", str(CASSETTE), "--policy", str(POLICY)]
    cmd += ["--cache-dir", str(tmp_path / "cache"), "serve", "--policy-card", str(CARD), "--port", "0"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        assert int(url.rsplit(":", 1)[1]) > 0
        with httpx.Client(base_url=url, timeout=60) as client:
            assert client.get("/v1/health").json()["status"] == "ok"
            scopes = _post(client, "/v1/scopes?identity=end_user")
            assert scopes.json()["scopes"] == [EVENTS]
    finally:
        proc.terminate()
        proc.wait(30)


def test_serve_beyond_loopback_without_a_token_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    """The command refuses a non-loopback bind without --token-file, before listening."""
    from ramscope.cli import main

    assert main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "listening on 0.0.0.0 (beyond loopback) needs --token-file FILE" in err


def test_serve_and_mcp_refuse_to_record(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A resident process never ends a run, so it cannot write a cassette."""
    from ramscope.cli import main

    for command in ("serve", "mcp"):
        assert main(["--cassette", str(tmp_path / "c.yaml"), "--record", command]) == 2
        assert "cannot --record" in capsys.readouterr().err


def test_a_missing_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without Starlette or uvicorn (or the MCP SDK), the command says to install the serve extra."""
    import sys

    from ramscope.cli import main

    monkeypatch.delitem(sys.modules, "ramscope.service.http", raising=False)
    monkeypatch.delitem(sys.modules, "ramscope.service.mcp", raising=False)
    monkeypatch.setitem(sys.modules, "starlette.applications", None)
    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)
    for command in ("serve", "mcp"):
        assert main([command]) == 2
        assert "pip install 'ramscope[serve]'" in capsys.readouterr().err


def test_every_option_of_serve_and_mcp_is_in_the_cli_page() -> None:
    """docs/cli.md names each option the parser gives `serve` and `mcp`."""
    from ramscope.cli import build_parser

    text = (ROOT / "docs" / "cli.md").read_text("utf-8")
    for command in ("serve", "mcp"):
        parser = build_parser([command])
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        own = [
            s
            for a in sub.choices[command]._actions  # type: ignore[attr-defined]
            if a.container.title != "global options"
            for s in a.option_strings
            if s.startswith("--") and s != "--help"
        ]
        assert own, command
        row = next(line for line in text.splitlines() if line.startswith(f"| `{command} "))
        for option in own:
            assert option in row, (command, option)


def test_a_parsed_card_is_bounded_too(tmp_path: Path) -> None:
    """A card that arrives parsed (an MCP argument) is held to the same size bound as a body."""
    from ramscope.service import CardSource, Refusal
    from ramscope.service.operations import derive

    service = Service(Settings(cache_dir=tmp_path / "cache", offline=True), limits=ServiceLimits(max_body_bytes=1000))
    try:
        with pytest.raises(Refusal) as big:
            service.pool.call(lambda e, u: derive(e, u, CardSource(doc={"x": "a" * 2000}), service.limits))
        assert (big.value.status, big.value.code) == (413, "body-too-large")
        small = service.pool.call(lambda e, u: derive(e, u, CardSource(doc={"resources": []}), service.limits))
        assert small.status == 200  # within the bound: derived (an empty manifest needs nothing)
    finally:
        service.close()
