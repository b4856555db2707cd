"""Requests before guesses: the server's own background work gives its cores to requested work.

Two classes of work share the two cores. *Requested* work is what a person (a page, a script,
the REST API) asked for and waits on. *Background* work is the server's guess at what will be
asked next: the default view prepared at start (``default_view.py``), the compute
libraries' warm-up (``projection/warmup.py``). Background work is cooperative: at each of its
natural checkpoints (a PCA's row chunk, a UMAP epoch, a step of the default view) it calls
:func:`yield_point`, which holds it while any requested job runs (:class:`RequestedWork`) and
lets it go on when the last one ends. A request on a busy server then waits for at most one
step of background work, not for half the machine for the whole of its run.

Rejected: limiting the background class's BLAS threads with threadpoolctl. OpenBLAS's (and
numba's) thread counts are process-wide, not per calling thread, so the limit would slow the
requested job too; and two BLAS calls from two threads take turns at OpenBLAS's level-3 lock,
so halving the background's threads still leaves the request waiting behind each of its calls.

:func:`yield_point` needs no parameter: the job manager records on each worker thread which job
it runs (:func:`checkpoints_of`), and :meth:`engine.JobManager.background` marks a thread's
work outside a job as background. Elsewhere (tests, scripts, the MCP server) it does nothing.
Call it only where the thread holds no lock that requested work may need: a background thread
held there would keep the lock until the request is done.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

POLL = 0.1  # seconds between looks at a cancel while held (the end of a request wakes at once)


class Priority(str, enum.Enum):
    REQUESTED = "requested"  # someone waits for it
    BACKGROUND = "background"  # the server's own guess: it yields to requested work


class Running(Protocol):
    @property
    def active(self) -> bool:
        """Running now and not paused: holding cores."""

    @property
    def ended(self) -> bool: ...


class RequestedWork:
    """The requested jobs running now: background work waits while one of them is active (a
    paused job holds no core)."""

    def __init__(self) -> None:
        self._running: set[Running] = set()
        self._changed = threading.Condition()

    def enter(self, job: Running) -> None:
        with self._changed:
            # A job promoted as it finished may be added after its end: never kept.
            self._running = {j for j in self._running if not j.ended}
            self._running.add(job)
            self._changed.notify_all()

    def leave(self, job: Running) -> None:
        with self._changed:
            self._running.discard(job)
            self._changed.notify_all()

    def changed(self) -> None:
        """A requested job paused or resumed: held background work looks again."""
        with self._changed:
            self._changed.notify_all()

    def busy(self) -> bool:
        with self._changed:
            return self._busy()

    def hold(self, timeout: float) -> bool:
        """Wait while requested work is active, ``timeout`` seconds at most; True when some
        still is (the caller looks at its own cancel, then holds again)."""
        with self._changed:
            self._changed.wait_for(lambda: not self._busy(), timeout)
            return self._busy()

    def _busy(self) -> bool:
        return any(job.active for job in self._running)


class Checkpoint(Protocol):
    def checkpoint(self) -> None: ...


_current = threading.local()


@contextmanager
def checkpoints_of(owner: Checkpoint) -> Iterator[None]:
    """:func:`yield_point` on this thread meanwhile is ``owner``'s checkpoint (a job's)."""
    previous = getattr(_current, "owner", None)
    _current.owner = owner
    try:
        yield
    finally:
        _current.owner = previous


def yield_point() -> None:
    """Where this thread's work may stop (cancelled), hold (paused) or give way (background
    work while a requested job runs). Cheap: call it at every natural step."""
    owner = getattr(_current, "owner", None)
    if owner is not None:
        owner.checkpoint()


class BackgroundScope:
    """Background work outside a job: its yield points wait while requested work runs."""

    def __init__(self, requested: RequestedWork) -> None:
        self.requested = requested
        self.yields = 0  # how many times it gave way (tests assert the order with it)

    def checkpoint(self) -> None:
        if self.requested.busy():
            self.yields += 1
            while self.requested.hold(POLL):
                pass
