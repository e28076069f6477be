"""Shared fixtures and hooks: the seed and example cards, a card writer, spec corpora, the I/O audit,
the loopback test server. Every test runs with a socket guard: connecting anywhere but loopback
(127.0.0.0/8, ::1) or resolving any name but localhost fails the test."""

from __future__ import annotations

import atexit
import copy
import ipaddress
import json
import os
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from ramscope.config import Settings
from tests._spec_fixtures import (  # noqa: F401 - pytest finds hooks and fixtures by name here
    discovery_documents,
    io_audit,
    npm_corpora,
    pytest_collection_modifyitems,
)
from tests.support.httpserver import LocalHTTPServer

ROOT = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------- skips


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    """Under CI every skip is a failure: a missing tool, extra or corpus there is a broken install,
    not a reason to pass. (Expected failures, xfail, are not skips.)"""
    report = yield
    if os.environ.get("CI") and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CI (every test must run there): {reason}"
    return report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Elsewhere, one line says how many tests could not run here and why."""
    skipped = terminalreporter.stats.get("skipped", [])
    if skipped:
        reasons: dict[str, int] = {}
        for r in skipped:
            reason = r.longrepr[2] if isinstance(r.longrepr, tuple) else str(r.longrepr)
            reason = reason.removeprefix("Skipped: ")
            reasons[reason] = reasons.get(reason, 0) + 1
        why = "; ".join(f"{n} x {reason}" for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]))
        terminalreporter.write_line(f"{len(skipped)} tests skipped (under CI=true each would fail): {why}")

# The default spec cache is the user's cache directory (platformdirs): no test, and no ramscope process
# a test starts (children inherit the environment; tests/adversarial/measure.child_env keeps XDG_*),
# may write into the real one. Tests that want a cache pass their own directory.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="ramscope-tests-xdg-cache-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], ignore_errors=True)
EXAMPLE_CARD = ROOT / "examples" / "travel-agent.card.json"

# Property tests judge values, never speed: hypothesis's per-example deadline (200 ms) and its
# "too slow" health check fail on a loaded machine (issue 22: no test depends on timing or load).
# Loaded before any test module defines its @settings, which inherit from it.
hypothesis_settings.register_profile(
    "ramscope", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
hypothesis_settings.load_profile("ramscope")


def _seed_manifest() -> dict[str, Any]:
    card = json.loads(EXAMPLE_CARD.read_text("utf-8"))
    manifest: dict[str, Any] = card["resourceAccessManifest"]
    return manifest


@pytest.fixture
def seed_manifest() -> dict[str, Any]:
    """A fresh copy of the travel agent's manifest (the proposal's example), snake_case."""
    return copy.deepcopy(_seed_manifest())


@pytest.fixture
def example_card() -> dict[str, Any]:
    return json.loads(EXAMPLE_CARD.read_text("utf-8"))  # type: ignore[no-any-return]


@pytest.fixture
def write_card(tmp_path: Path) -> Callable[..., Path]:
    """Write a document to a temporary file (JSON by default, or raw text/bytes)."""
    counter = iter(range(1_000_000))

    def write(doc: Any, *, suffix: str = ".json", raw: bool = False) -> Path:
        path = tmp_path / f"card{next(counter)}{suffix}"
        if raw:
            if isinstance(doc, bytes):
                path.write_bytes(doc)
            else:
                path.write_text(doc, "utf-8")
        else:
            path.write_text(json.dumps(doc, indent=2), "utf-8")
        return path

    return write


class NonLoopbackConnectError(AssertionError):
    """A test tried to reach an address other than loopback."""


def _is_loopback(host: Any) -> bool:
    try:
        return ipaddress.ip_address(str(host).split("%", 1)[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
            raise NonLoopbackConnectError(f"test tried to connect to {address!r}")

    def connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name not in (None, "localhost") and not _is_loopback(name):
            raise NonLoopbackConnectError(f"test tried to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        yield srv


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., Settings]:
    """Settings for a store talking to the loopback test server, with a private cache."""

    def make(**overrides: Any) -> Settings:
        base: dict[str, Any] = {
            "cache_dir": tmp_path / "cache",
            "allow_private_network": True,
            "timeout": 10.0,
            "jobs": 4,
        }
        base.update(overrides)
        return Settings(**base)

    return make


class FakeClock:
    """Epoch seconds that move only when a test says so."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """``ramscope ARGV`` in-process, with its own cache and loopback specs allowed: (exit, stdout, stderr)."""
    from ramscope.cli import main

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(["--cache-dir", str(tmp_path / "cache"), "--allow-private-network", *argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run
