"""The service's engine pool: an engine per worker, shared store, and generations retired when old,
when they hold too many specs, or some time after a fetch failed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ramscope.config import Settings
from ramscope.derive.policy import Policy
from ramscope.service.pool import DeadlineExceeded, EnginePool, Usage
from tests.conftest import FakeClock


@pytest.fixture
def pool(tmp_path: Path, clock: FakeClock) -> EnginePool:
    settings = Settings(cache_dir=tmp_path / "cache", offline=True)
    return EnginePool(settings, Policy(), workers=2, refresh_after=100, max_specs=2, retry_failed_after=10, clock=clock)


def test_engines_are_reused_and_share_one_store(pool: EnginePool) -> None:
    """A borrowed engine goes back to the pool; every engine of a generation uses the same store."""
    first = pool.call(lambda engine, usage: engine)
    assert pool.call(lambda engine, usage: engine) is first
    inner: list[object] = []
    outer = pool.call(lambda engine, usage: (inner.append(pool.call(lambda e, u: e)), engine)[1])
    assert inner[0] is not outer  # borrowed while the other was out: an engine of its own
    assert inner[0].store is outer.store  # type: ignore[attr-defined]
    assert pool.stats()["engines"] == 2
    pool.close()


def test_a_generation_is_retired_when_old(pool: EnginePool, clock: FakeClock) -> None:
    """Past refresh_after, the next request gets a new store (specs fetched again), the old one closed."""
    old = pool.call(lambda engine, usage: engine.store.shared)
    clock.advance(99)
    assert pool.call(lambda engine, usage: engine.store.shared) is old
    clock.advance(1)
    new = pool.call(lambda engine, usage: engine.store.shared)
    assert new is not old
    assert old._closed is True
    assert pool.stats()["generations_retired"] == 1
    pool.close()


def test_a_generation_is_retired_past_its_spec_bound(pool: EnginePool) -> None:
    """More distinct specs than max_specs: the next request starts afresh."""

    def note(urls: set[str]) -> object:
        def work(engine: object, usage: Usage) -> object:
            usage.spec_urls |= urls
            return engine.store.shared  # type: ignore[attr-defined]

        return work

    old = pool.call(note({"https://a.example/1", "https://a.example/2"}))
    assert pool.call(note(set())) is old
    pool.call(note({"https://a.example/3"}))
    assert pool.call(note(set())) is not old
    pool.close()


def test_a_failed_fetch_is_retried_in_a_later_generation(pool: EnginePool, clock: FakeClock) -> None:
    """A failure is kept by its generation for retry_failed_after seconds, then the store is new."""

    def failing(engine: object, usage: Usage) -> object:
        usage.failed = True
        return engine.store.shared  # type: ignore[attr-defined]

    old = pool.call(failing)
    clock.advance(9)
    assert pool.call(lambda engine, usage: engine.store.shared) is old
    clock.advance(1)
    assert pool.call(lambda engine, usage: engine.store.shared) is not old
    pool.close()


def test_a_borrowed_engine_of_a_retired_generation_closes_it_when_returned(pool: EnginePool, clock: FakeClock) -> None:
    """The old store stays open while one of its engines is still out, and closes when it comes back."""
    seen: dict[str, object] = {}

    def long(engine: object, usage: Usage) -> None:
        seen["old"] = engine.store.shared  # type: ignore[attr-defined]
        clock.advance(100)
        seen["new"] = pool.call(lambda e, u: e.store.shared)  # type: ignore[attr-defined]
        assert seen["old"]._closed is False  # type: ignore[attr-defined]

    pool.call(long)
    assert seen["new"] is not seen["old"]
    assert seen["old"]._closed is True  # type: ignore[attr-defined]
    pool.close()


def test_run_holds_the_deadline(pool: EnginePool) -> None:
    """run() gives up at the deadline while the thread goes on, then frees its worker."""
    import threading

    release = threading.Event()

    async def main() -> None:
        with pytest.raises(DeadlineExceeded):
            await pool.run(lambda engine, usage: release.wait(60), deadline=0.01)
        release.set()
        assert await pool.run(lambda engine, usage: "answered", deadline=60) == "answered"

    asyncio.run(main())
    pool.close()
