"""The resident process's one object: settings, policy, limits and the engine pool, shared by the HTTP
API and the MCP server. :meth:`Service.answer` runs an operation (:mod:`.operations`) in a worker
thread and turns every way it can fail into a :class:`~.operations.Refusal`."""

from __future__ import annotations

import dataclasses
import os
import sys
import traceback
from collections.abc import Callable

import orjson

from .. import __version__
from ..config import Settings
from ..derive import Engine
from ..derive.policy import Policy
from ..errors import RamscopeError
from .operations import Answer, Refusal, ServiceLimits, refusal_of
from .pool import Busy, DeadlineExceeded, EnginePool, PolicyCards, Usage

__all__ = ["Operation", "Service"]


def _server_paths(settings: Settings, policy_source: str) -> list[tuple[str, str]]:
    """Each server file path an answer could quote (as given and absolute), longest first, with what
    replaces it: the file's name, or ``<cache>`` for the cache directory."""
    found: dict[str, str] = {}
    named = [(settings.cassette, None), (policy_source or None, None), (settings.cache_dir, "<cache>")]
    for given, label in named:
        if not given:
            continue
        text = str(given)
        for form in {text, os.path.abspath(text), os.path.realpath(text)}:
            found[form] = label or os.path.basename(form.rstrip(os.sep))
    return sorted(found.items(), key=lambda item: -len(item[0]))


def _inside_text(path: str) -> bool:
    """Whether ``path`` is distinctive enough to replace inside prose (an error message): absolute and
    more than a top directory (``/tmp`` or a bare ``cache`` would rewrite ordinary words and URLs)."""
    return os.path.isabs(path) and path.rstrip(os.sep).count(os.sep) >= 2


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
        original_policy = policy.source if policy is not None else ""
        # A policy's pins match the ids a card chooses for itself: applied to every posted card, a
        # stranger's card could name its accesses like the operator's and be served the operator's
        # assertions ("no authorization needed"). So it applies to the cards of ``policy_cards``
        # only (none when none are named), every other card being derived without it (issue 30).
        self.has_policy = policy is not None
        if policy is not None and policy.source:
            # Its name, not where it lies on this machine: answers go to clients (issue 30 item 19).
            policy = dataclasses.replace(policy, source=os.path.basename(policy.source))
        self.policy = policy or Policy()
        self._scrub = _server_paths(settings, original_policy)
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

        def run(engine: Engine, usage: Usage) -> Answer:
            answer = op(engine, usage)
            if not self.has_policy or usage.policy_applied is None:
                return answer
            return dataclasses.replace(answer, policy="applied" if usage.policy_applied else "not-applied")

        try:
            return self.scrubbed(await self.pool.run(run, deadline=self.limits.deadline))
        except Refusal as r:
            r.message = self.scrub_text(r.message)
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

    def scrubbed(self, answer: Answer) -> Answer:
        """``answer`` without the server's file paths (its cassette, policy and cache): a report names
        the cassette a spec was replayed from, and a client has no business knowing where it lies.
        JSON string values that are such a path (with a directory in it) are replaced whole
        (``"origin": "cache"`` is never touched); paths inside longer strings only when absolute and
        deep (:func:`_inside_text`)."""
        body = answer.body
        for path, name in self._scrub:
            if os.sep not in path:  # a bare name ("cache") is a word as well: never a leak of a layout
                continue
            encoded = orjson.dumps(path)
            body = body.replace(encoded, orjson.dumps(name))
            if _inside_text(path):
                body = body.replace(encoded[1:-1], orjson.dumps(name)[1:-1])
        if body == answer.body:
            return answer
        # The parsed document is dropped: MCP reads the scrubbed body instead.
        return dataclasses.replace(answer, body=body, doc=None)

    def scrub_text(self, text: str) -> str:
        for path, name in self._scrub:
            if _inside_text(path):
                text = text.replace(path, name)
        return text

    def health(self) -> dict[str, object]:
        return {
            "status": "ok",
            "version": __version__,
            "offline": self.settings.offline,
            **self.pool.stats(),
        }

    def close(self) -> None:
        self.pool.close()
