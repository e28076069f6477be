"""The resident process's one object: settings, policy, limits and the engine pool, shared by the HTTP
API and the MCP server. :meth:`Service.answer` runs an operation (:mod:`.operations`) in a worker
thread and turns every way it can fail into a :class:`~.operations.Refusal`."""

from __future__ import annotations

import dataclasses
import sys
import traceback
from collections.abc import Callable

from .. import __version__
from ..config import Settings
from ..derive import Engine
from ..derive.policy import Policy
from ..errors import RamscopeError
from .operations import Answer, Refusal, ServiceLimits, refusal_of
from .pool import Busy, DeadlineExceeded, EnginePool, PolicyCards, Usage

__all__ = ["Operation", "Service"]

Operation = Callable[[Engine, Usage], Answer]


class Service:
    """One :class:`EnginePool` and the bounds every request is held to."""

    def __init__(
        self,
        settings: Settings,
        policy: Policy | None = None,
        *,
        policy_cards: PolicyCards | None = None,
        limits: ServiceLimits | None = None,
        workers: int = 4,
        refresh_after: float | None = None,
    ) -> None:
        if settings.record:
            # Recording writes its cassette when a run ends; a resident process has no such end.
            raise ValueError("the service cannot record a cassette; record with the CLI")
        # No progress bars: derivations run in worker threads, for clients far from this terminal.
        self.settings = settings = dataclasses.replace(settings, progress=False)
        if policy is not None and not (policy_cards and policy_cards.digests):
            # A policy's pins match the ids a card chooses for itself: applied to every posted card,
            # a stranger's card could name its accesses like the operator's and be served the
            # operator's assertions ("no authorization needed"). Issue 30.
            raise ValueError(
                "a service's policy applies only to the cards the operator names: give policy_cards "
                "(`--policy-card CARD` on the command line)"
            )
        self.policy = policy or Policy()
        self.policy_cards = policy_cards or PolicyCards()
        self.limits = limits or ServiceLimits()
        self.pool = EnginePool(
            settings,
            self.policy,
            policy_cards=self.policy_cards,
            workers=workers,
            # Cached specs are refetched when their freshness ends; a run of the CLI reads each once.
            refresh_after=refresh_after if refresh_after is not None else min(settings.cache_ttl, 3600.0),
        )

    def warm(self) -> None:
        """Load the shipped permission universes now, in this thread: the first request does not pay
        for them. (Catalogs stay lazy: large, and only for cards whose specs declare no security.)"""
        from .. import providers  # noqa: PLC0415

        for server in providers.UNIVERSES:
            providers.shipped_universe(server)
        providers.snapshot_versions()

    async def answer(self, op: Operation) -> Answer:
        """``op`` on a borrowed engine in a worker thread, within the request deadline."""
        try:
            return await self.pool.run(op, deadline=self.limits.deadline)
        except Refusal:
            raise
        except Busy:
            raise Refusal(503, "busy", "every worker stayed busy until the request's deadline") from None
        except DeadlineExceeded:
            raise Refusal(504, "deadline-exceeded", f"not answered within {self.limits.deadline:g} s") from None
        except RamscopeError as exc:
            raise refusal_of(exc) from None
        except Exception:
            # A bug, not the caller's fault: said on the server's stderr, never in the answer (it
            # could quote internals to a stranger).
            traceback.print_exc(file=sys.stderr)
            raise Refusal(500, "internal-error", "ramscope failed to answer; the server's log says why") from None

    def health(self) -> dict[str, object]:
        return {
            "status": "ok",
            "version": __version__,
            "offline": self.settings.offline,
            **self.pool.stats(),
        }

    def close(self) -> None:
        self.pool.close()
