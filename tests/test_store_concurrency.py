"""Concurrency (--jobs, the per-run memo) and the protocol-fetcher extension point."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from ramscope.config import Settings
from ramscope.errors import FetchError, OfflineMissError
from ramscope.specs.model import SpecKind
from ramscope.store import FetchContext, FetcherResult, Origin, SpecStore, register_fetcher, registered_fetchers
from ramscope.store import fetchers as fetchers_module
from tests.support.httpserver import LocalHTTPServer, Reply, Request

MakeSettings = Callable[..., Settings]


def _routes(server: LocalHTTPServer, n: int, latency: float = 0.0) -> list[str]:
    for i in range(n):
        server.route(f"/spec{i}.json", body=b'{"n": %d}' % i, latency=latency)
    return [server.url(f"/spec{i}.json") for i in range(n)]


#: How long a gated answer waits for its gate: only reached when the code under test is wrong
#: (then the test fails on what it recorded, not on the clock).
GATE_TIMEOUT = 60.0


def _gated(
    body: bytes, gate: threading.Event, started: threading.Event, answered: threading.Event
) -> Callable[[Request], Reply]:
    """A handler that says it started, waits for ``gate``, then answers and says so: the test, not
    the clock, decides when a response arrives (issue 22: no test depends on timing or load)."""

    def handler(req: Request) -> Reply:
        started.set()
        gate.wait(GATE_TIMEOUT)
        answered.set()
        return Reply(200, body, {"content-type": "application/json"})

    return handler


def test_prefetch_runs_jobs_concurrently_and_fetches_each_url_once(
    server: LocalHTTPServer, make_settings: MakeSettings
) -> None:
    """With --jobs 8, requests overlap; duplicates in the input are fetched once; results keep input order."""
    # Every answer waits until two requests are in flight at once: only overlapping requests get
    # their answers before the gate's timeout.
    lock = threading.Lock()
    arrived: list[int] = []
    two_at_once = threading.Event()
    overlapped: list[bool] = []

    def make(i: int) -> Callable[[Request], Reply]:
        def handler(req: Request) -> Reply:
            with lock:
                arrived.append(i)
                if len(arrived) >= 2:
                    two_at_once.set()
            overlapped.append(two_at_once.wait(GATE_TIMEOUT))
            return Reply(200, b'{"n": %d}' % i, {"content-type": "application/json"})

        return handler

    for i in range(20):
        server.route(f"/spec{i}.json", handler=make(i))
    urls = [server.url(f"/spec{i}.json") for i in range(20)]
    with SpecStore(make_settings(jobs=8)) as store:
        results = store.prefetch([(u, None) for u in urls + urls[:5]])
    assert list(results) == urls
    assert all(not isinstance(r, FetchError) for r in results.values())
    assert all(server.hits(f"/spec{i}.json") == 1 for i in range(20))
    assert overlapped == [True] * 20


def test_jobs_1_is_sequential(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """With --jobs 1 there is never more than one request in flight."""
    urls = _routes(server, 5, latency=0.02)
    with SpecStore(make_settings(jobs=1)) as store:
        store.prefetch([(u, None) for u in urls])
    assert server.max_in_flight == 1


def test_concurrent_gets_of_one_url_share_one_fetch(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """Eight threads asking for the same URL at once cause one request and get the same object."""
    server.route("/shared.json", body=b"{}", latency=0.2)
    got: list[object] = []
    with SpecStore(make_settings()) as store:
        barrier = threading.Barrier(8)

        def worker() -> None:
            barrier.wait()
            got.append(store.get(server.url("/shared.json")))

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert server.hits("/shared.json") == 1
    assert len(got) == 8
    assert all(g is got[0] for g in got)


def test_failures_are_returned_and_memoised(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """prefetch returns errors as values; a failed URL is not retried within the run."""
    with SpecStore(make_settings()) as store:
        results = store.prefetch([(server.url("/missing.json"), None)])
        err = results[server.url("/missing.json")]
        assert isinstance(err, FetchError)
        assert "HTTP 404" in str(err)
        with pytest.raises(FetchError, match="HTTP 404"):
            store.get(server.url("/missing.json"))
    assert server.hits("/missing.json") == 1


# --------------------------------------------------------------------------- protocol fetchers


def _rpc_server(server: LocalHTTPServer) -> None:
    def handler(req: Request) -> Reply:
        return Reply(200, b'{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"lookup_weather"}]}}')

    server.route("/mcp", method="POST", handler=handler)


def fake_mcp_fetcher(ctx: FetchContext, url: str) -> FetcherResult:
    """Stands in for the MCP adapter's fetcher: one JSON-RPC call through the store's exchange."""
    ex = ctx.exchange("POST", url, json_body={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, cache=False)
    if not ex.ok:
        raise FetchError(f"HTTP {ex.status}", url=url)
    return FetcherResult(
        body=b'{"capture": ' + ex.body + b"}",
        media_type="application/json",
        final_url=ex.final_url,
        provenance={"protocol_version": "test"},
    )


def test_a_registered_fetcher_obtains_its_kind(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """A fetcher for a kind is used for that kind's URLs; its result is cached and replayed offline."""
    _rpc_server(server)
    url = server.url("/mcp")
    with SpecStore(make_settings(), fetchers={SpecKind.MCP: fake_mcp_fetcher}) as store:
        spec = store.get(url, kind_hint=SpecKind.MCP)
    assert spec.origin is Origin.NETWORK
    assert spec.body.startswith(b'{"capture": ')
    assert spec.provenance["protocol_version"] == "test"
    assert spec.provenance["kind_hint"] == "mcp"
    assert spec.provenance["insecure"] is True
    with SpecStore(make_settings(offline=True), fetchers={SpecKind.MCP: fake_mcp_fetcher}) as store:
        again = store.get(url, kind_hint=SpecKind.MCP)
    assert again.origin is Origin.CACHE
    assert again.sha256 == spec.sha256
    assert server.hits("/mcp") == 1


def test_fetcher_exchanges_obey_offline_mode(make_settings: MakeSettings) -> None:
    """A fetcher cannot reach the network offline: its exchange raises OfflineMissError."""
    with (
        SpecStore(make_settings(offline=True), fetchers={SpecKind.MCP: fake_mcp_fetcher}) as store,
        pytest.raises(OfflineMissError),
    ):
        store.get("https://mcp.example.com/mcp", kind_hint=SpecKind.MCP)


def test_a2a_card_url_is_one_get(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """An agent card URL ending in .json is fetched with one GET and kept as served (the adapter judges it)."""
    server.route("/.well-known/agent-card.json", body=b'{"name": "agent"}')
    with SpecStore(make_settings()) as store:
        spec = store.get(server.url("/.well-known/agent-card.json"), kind_hint=SpecKind.A2A)
    assert spec.body == b'{"name": "agent"}'
    assert spec.provenance["kind_hint"] == "a2a"
    assert server.hits("/.well-known/agent-card.json") == 1


def test_the_registry_refuses_silent_replacement(monkeypatch: pytest.MonkeyPatch) -> None:
    """register_fetcher installs a fetcher for new stores; replacing one must be explicit."""
    monkeypatch.setattr(fetchers_module, "_REGISTRY", {})
    register_fetcher(SpecKind.MCP, fake_mcp_fetcher)
    assert registered_fetchers() == {SpecKind.MCP: fake_mcp_fetcher}
    with pytest.raises(ValueError, match="already registered"):
        register_fetcher(SpecKind.MCP, other_fetcher)
    register_fetcher(SpecKind.MCP, fake_mcp_fetcher)  # the same one again is fine
    register_fetcher(SpecKind.MCP, other_fetcher, replace=True)
    assert registered_fetchers() == {SpecKind.MCP: other_fetcher}


def other_fetcher(ctx: FetchContext, url: str) -> FetcherResult:
    """A second fetcher for the same kind."""
    return fake_mcp_fetcher(ctx, url)


def test_progress_bar_reports_to_stderr_only(
    server: LocalHTTPServer, make_settings: MakeSettings, capsys: pytest.CaptureFixture[str]
) -> None:
    """With progress on, the bar goes to stderr and results are unchanged; stdout stays clean."""
    urls = _routes(server, 3)
    with SpecStore(make_settings(progress=True, jobs=2)) as store:
        results = store.prefetch([(u, None) for u in urls])
    assert all(not isinstance(r, FetchError) for r in results.values())
    out, _ = capsys.readouterr()
    assert out == ""


def test_cli_shows_progress_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal gets a progress bar; a pipe, --no-progress or -q get none."""
    import sys

    from ramscope.cli import build_parser, settings_from_args

    parser = build_parser()

    def progress(*argv: str) -> bool:
        return settings_from_args(parser.parse_args([*argv, "fetch", "c.json"])).progress

    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert progress() is False
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert progress() is True
    assert progress("--no-progress") is False
    assert progress("-q") is False


def test_each_spec_is_handed_over_as_it_arrives(server: LocalHTTPServer, make_settings: MakeSettings) -> None:
    """prefetch's on_ready is called, in the caller's thread, for each spec as it arrives, while the
    slower ones are still downloading (the engine indexes a spec then); failures are not handed over."""
    # The slow answer is held until the fast spec has been handed over: the order is the test's.
    gate, slow_started, slow_answered = threading.Event(), threading.Event(), threading.Event()
    server.route("/fast.json", body=b'{"fast": true}')
    server.route("/slow.json", handler=_gated(b'{"slow": true}', gate, slow_started, slow_answered))
    fast, slow, missing = server.url("/fast.json"), server.url("/slow.json"), server.url("/missing.json")
    seen: list[tuple[str, bool, bool, bool]] = []

    def on_ready(url: str, kind: SpecKind | None) -> None:
        started = slow_started.wait(GATE_TIMEOUT) if url == fast else True
        seen.append((url, started, slow_answered.is_set(), threading.current_thread() is threading.main_thread()))
        gate.set()

    with SpecStore(make_settings(jobs=4)) as store:
        results = store.prefetch([(slow, None), (fast, None), (missing, None)], on_ready=on_ready)
    assert isinstance(results[missing], FetchError)
    assert [url for url, *_ in seen] == [fast, slow]
    # the slow one was requested and not yet answered when the fast one was handed over
    assert seen[0][1:3] == (True, False)
    assert all(main for *_, main in seen)


def test_cached_specs_are_handed_over_while_the_others_download(
    server: LocalHTTPServer, make_settings: MakeSettings
) -> None:
    """A spec the cache answers is handed over before either download has been answered."""
    gate = threading.Event()
    started = [threading.Event(), threading.Event()]
    answered = [threading.Event(), threading.Event()]
    server.route("/cached.json", body=b'{"cached": true}')
    server.route("/slow.json", handler=_gated(b'{"slow": true}', gate, started[0], answered[0]))
    server.route("/slow2.json", handler=_gated(b'{"slow": 2}', gate, started[1], answered[1]))
    cached, slow, slow2 = server.url("/cached.json"), server.url("/slow.json"), server.url("/slow2.json")
    settings = make_settings(jobs=4)
    with SpecStore(settings) as store:
        store.get(cached)
    seen: list[tuple[str, bool]] = []

    def on_ready(url: str, kind: SpecKind | None) -> None:
        seen.append((url, any(a.is_set() for a in answered)))
        gate.set()

    with SpecStore(settings) as store:
        store.prefetch([(slow, None), (cached, None), (slow2, None)], on_ready=on_ready)
    assert seen[0] == (cached, False)  # neither download had been answered
    assert sorted(u for u, _ in seen[1:]) == sorted([slow, slow2])
