"""A batch's cards derived in worker processes (``--jobs``), as the one process would derive them.

The parent does everything that touches the spec store: it reads the cards of a chunk, fetches
their specs (once, concurrently, as for a serial run), loads their indexes, grant machinery and
the permission universes. Then it forks: each worker inherits that state (copy on write, nothing
is parsed or read from the cache again), derives a contiguous slice of the chunk and sends back
each report's JSON, exit code and findings; the parent derives the first slice meanwhile, and
writes everything in card order. A worker never uses the store: a card that needs it (an A2A
agent's own specs, met only while deriving) is handed back, and the parent derives it, in its
place. A card whose derivation fails in a worker is derived again by the parent, which meets
the same error where a serial run would. So the output is the serial output, byte for byte.

Only where ``os.fork`` is safe and cheap (Linux); elsewhere, and for small chunks, cards are
derived in the one process.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..card import Card
from ..outputs.diagnostics import Finding, findings
from ..outputs.report import Report, StoredReport
from ..specs.model import SpecKind

if TYPE_CHECKING:
    from .engine import Engine

#: Fewest cards worth a worker: a fork and the pickled reports cost ~10 ms, a card ~1 ms.
MIN_CARDS_PER_WORKER = 64


@dataclass(frozen=True, slots=True)
class PooledReport(StoredReport):
    """A report derived in a worker process: its JSON (as :meth:`Report.to_json` wrote it), exit code,
    and its findings with their line and column in the card (the worker had the parsed card)."""

    #: (finding, (line, column) in the card, or None), in the report's order.
    findings_at: tuple[tuple[Finding, tuple[int, int] | None], ...] = ()


@dataclass(frozen=True, slots=True)
class _Done:
    """What a worker sends back for one card."""

    report: PooledReport
    card_sha256: str
    #: For the stored-report cache (``ramscope.reuse``): the specs the derivation read; ``None``: not stored.
    asked: tuple[tuple[str, SpecKind | None], ...] | None


class _NeedsParent(BaseException):
    """A worker's derivation wanted the spec store: the parent derives the card instead.

    A BaseException, so that no ``except Exception`` on the way turns it into a report."""


class _NoStore:
    """The store, as a worker sees it: any use hands the card back to the parent."""

    def __getattr__(self, name: str) -> Any:
        raise _NeedsParent(name)


def workers_for(jobs: int, cards: int, room: int) -> int:
    """How many processes derive ``cards`` cards: at most ``jobs``, ``room`` (see :func:`room`), and
    one per :data:`MIN_CARDS_PER_WORKER` cards; 1 where forking is not offered or not safe."""
    if jobs <= 1 or not hasattr(os, "fork") or sys.platform != "linux":
        return 1
    return max(1, min(jobs, room, cards // MIN_CARDS_PER_WORKER))


def room() -> int:
    """Processes the machine has room for: this one, and one per usable CPU that the load average
    leaves idle. On a busy machine a worker only competes with the others for the same CPUs: on
    the benchmark machine (2 CPUs, load 2-3 from other work), two processes each took 2.7x as long
    as one alone, and a batch with two workers was slower than with one."""
    cpus = usable_cpus()
    try:
        load = os.getloadavg()[0]
    except OSError:
        return cpus
    return max(1, min(cpus, int(cpus - load) + 1))


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def derive_pooled(
    engine: Engine,
    cards: Sequence[Card],
    urls: Sequence[tuple[str, SpecKind | None]],
    workers: int,
    derive_here: Callable[[Card], tuple[Report, tuple[str, bytes] | None]],
) -> list[tuple[Report | PooledReport, tuple[str, bytes] | None]]:
    """Each card's report and stored form (see :meth:`Engine._stored_form`), in card order."""
    engine.preload(urls)
    size = -(-len(cards) // workers)
    slices = [cards[i : i + size] for i in range(0, len(cards), size)]
    children: list[tuple[int, int]] = []
    # Objects that exist now are left alone by the workers' collector: scanning them would copy
    # every page of the inherited heap into each worker.
    gc.freeze()
    try:
        for part in slices[1:]:
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the worker (its coverage is not collected)
                os.close(r)
                _worker(engine, part, w)
            os.close(w)
            children.append((pid, r))
    except BaseException:
        gc.unfreeze()
        _stop(children)
        raise
    gc.unfreeze()
    out: list[tuple[Report | PooledReport, tuple[str, bytes] | None]] = []
    try:
        out.extend(derive_here(card) for card in slices[0])
        while children:
            pid, fd = children[0]
            sent = _read_all(fd)
            _, status = os.waitpid(pid, 0)
            children.pop(0)
            os.close(fd)
            part = slices[len(slices) - len(children) - 1]
            done: list[_Done | None] = (
                # Our own forked child's bytes, over a pipe only it and we hold: not untrusted data.
                pickle.loads(sent)  # noqa: S301
                if os.waitstatus_to_exitcode(status) == 0 and sent
                else [None] * len(part)
            )
            for card, got in zip(part, done, strict=True):
                if got is None:
                    out.append(derive_here(card))
                else:
                    rep = got.report
                    stored = (
                        engine.finish_stored(rep.card_source, got.card_sha256, rep.exit_code, rep.json, got.asked)
                        if got.asked is not None
                        else None
                    )
                    out.append((rep, stored))
    finally:
        _stop(children)
    return out


def _worker(engine: Engine, cards: Sequence[Card], fd: int) -> None:  # pragma: no cover - runs forked
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # an interrupt ends the worker, the parent says it
        engine.store = _NoStore()
        done: list[_Done | None] = []
        for card in cards:
            try:
                report = engine.derive(card)
                done.append(_Done(_pooled(report), report.card_sha256, engine.stored_deps(report)))
            except (_NeedsParent, Exception):
                done.append(None)
        data = pickle.dumps(done, protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        code = 0
    finally:
        os._exit(code)  # no atexit handlers, no flushing of buffers the parent owns


def _pooled(report: Report) -> PooledReport:
    card = report.card
    at = tuple((f, card.position(f.path) if card is not None and f.source is None else None) for f in findings(report))
    return PooledReport(
        card_source=report.card_source, exit_code=report.exit_code, json=report.to_json(), findings_at=at
    )


def _read_all(fd: int) -> bytes:
    parts: list[bytes] = []
    while chunk := os.read(fd, 1 << 20):
        parts.append(chunk)
    return b"".join(parts)


def _stop(children: list[tuple[int, int]]) -> None:
    """End and reap the workers still running (the parent is unwinding), by their process ids."""
    for pid, r in children:
        with contextlib.suppress(OSError):
            os.close(r)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    children.clear()
