"""Background jobs: bounded concurrency, progress, streamed frames, pause and cancel.

Jobs run on a small pool of worker threads (two by default), not processes. The heavy parts
of every kernel release the GIL (openTSNE's Cython gradients and FFTs, BLAS, numpy), so a
thread computes at full speed while the event loop keeps answering; a thread shares the
catalog's memory-mapped tensors and hands frames over without pickling or copies between
processes; cancelling is a flag the kernel sees at its next step. umap-learn's numba epochs
hold the GIL, but only for one epoch at a time.

A job's work function receives a :class:`JobContext` and calls ``ctx.step(...)`` often (each
iteration): that is where it pauses, notices a cancel (``JobCancelled`` is raised) and
publishes a frame, at most every ``frame_interval`` seconds; kernels without a context stop
there too at their ``priority.yield_point()``. Waiters are woken on every published change,
threads through a condition and asyncio tasks through their own loop.

A job is *requested* (someone waits for it) or *background* (the server's own guess, as the
default view prepared at start): background jobs run on a thread of their own, so they never
take a requested job's worker, and hold at each checkpoint while a requested job runs
(:mod:`priority`). A request for a background job's key makes it a requested job.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import itertools
import queue
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from projector_core.jobs.phases import phases_of
from projector_core.jobs.priority import (
    BackgroundScope,
    Priority,
    RequestedWork,
    checkpoints_of,
)

FRAME_INTERVAL = 0.1  # seconds between published frames: smooth, yet cheap for large N
NOTIFY_INTERVAL = 0.1  # seconds between progress notifications without a frame
PAUSE_POLL = 0.1


class JobStatus(str, enum.Enum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        return self in (JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED)


class JobCancelled(Exception):
    """Raised inside a job's work function when the job has been cancelled."""


@dataclass(frozen=True)
class Frame:
    coordinates: np.ndarray  # float32 [N, dims], or with ``stride`` rows 0, stride, 2 stride...
    iteration: int | None
    seq: int  # increases with every published frame of the job
    # Above 1: a thin frame, every stride-th row only (a layout too large to send whole):
    # what early tiles read while it runs; followers are sent whole frames only.
    stride: int = 1


class Job:
    """One unit of work and everything a follower may ask about it. Thread-safe."""

    def __init__(self, job_id: str, key: str | None, priority: Priority = Priority.REQUESTED,
                 requested: RequestedWork | None = None) -> None:
        self.id = job_id
        self.key = key
        self.priority = priority
        self.yielding = False  # a background job held while requested work runs
        self._requested = requested or RequestedWork()
        self.status = JobStatus.QUEUED
        self.progress = 0.0
        self.iteration: int | None = None
        self.error: str | None = None
        # What the work raised: the server maps it to a status (a ValueError is the
        # request's or the data's fault). The type only: an exception would hold its frames.
        self.failed_with: type[BaseException] | None = None
        self.paused = False
        self.phase: str | None = None  # what the work does now (job_phases.py)
        self.phase_progress: float | None = None  # how far through that phase, when known
        self.result: Any = None
        self.source: Any = None  # what the job computed from (an Embedding), for analyses of it
        self.about: dict[str, Any] = {}  # what it computes (kind, method, run): GET /api/jobs
        self.frame: Frame | None = None
        self._version = 0
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._cancel = threading.Event()
        self._resume = threading.Event()
        self._resume.set()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    # -- reading -------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The public status fields (``GET /api/jobs/ID``)."""
        return {"id": self.id, "status": self.status.value, "progress": round(self.progress, 4),
                "iteration": self.iteration, "error": self.error, "paused": self.paused,
                "phase": self.phase, "phase_progress": None if self.phase_progress is None
                else round(self.phase_progress, 4), "priority": self.priority.value,
                "yielding": self.yielding}

    @property
    def active(self) -> bool:
        """Running and not paused: holding cores (what background work yields to)."""
        return self.status is JobStatus.RUNNING and not self.paused

    @property
    def ended(self) -> bool:
        return self.status.finished

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job has finished; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while not self.status.finished:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._changed.wait(left)
        return True

    async def changed(self, seen: int, timeout: float) -> int:
        """Wait (without a thread) until the version passes ``seen`` or ``timeout`` elapses."""
        event = asyncio.Event()
        entry = (asyncio.get_running_loop(), event)
        with self._lock:
            if self._version > seen:
                return self._version
            self._waiters.append(entry)
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except asyncio.TimeoutError:  # not yet the builtin TimeoutError on Python 3.10
            pass
        finally:
            with self._lock:
                if entry in self._waiters:
                    self._waiters.remove(entry)
        return self._version

    async def finished(self) -> None:
        seen = -1
        while not self.status.finished:
            seen = await self.changed(seen, 1.0)

    # -- controlling (API) ---------------------------------------------------------------------
    def cancel(self) -> None:
        """Cancel at once: the status says so now, the work stops at its next checkpoint."""
        self._cancel.set()
        self._finish(JobStatus.CANCELLED)

    def pause(self) -> None:
        """Hold the work at its next checkpoint (a finished job stays as it is)."""
        with self._lock:
            if self.status.finished:
                return
            self._resume.clear()
        self._notify(paused=True)
        self._requested.changed()

    def resume(self) -> None:
        self._resume.set()
        if self.paused:
            self._notify(paused=False)
            self._requested.changed()

    # -- running (worker thread) ----------------------------------------------------------------
    def start(self) -> bool:
        """Queued -> running, unless cancelled meanwhile (or started by another worker: a
        promoted background job is queued in both lanes)."""
        with self._lock:
            if self.status is not JobStatus.QUEUED:
                return False
            waiters = self._apply({"status": JobStatus.RUNNING})
        self._wake(waiters)
        return True

    def checkpoint(self) -> None:
        """Raise JobCancelled if cancelled; block here while paused, and, for a background
        job, while a requested job runs."""
        while not self._cancel.is_set():
            if not self._resume.is_set():
                self._resume.wait(PAUSE_POLL)
            elif self.priority is Priority.BACKGROUND and self._requested.busy():
                if not self.yielding:
                    self._notify(yielding=True)
                self._requested.hold(PAUSE_POLL)
            else:
                break
        if self.yielding:
            self._notify(yielding=False)
        if self._cancel.is_set():
            raise JobCancelled(self.id)

    def report(self, iteration: int | None, progress: float, frame: Frame | None = None,
               notify: bool = True) -> None:
        """Record progress (and a frame); ``notify`` wakes the followers, else they see it
        with the next change."""
        if notify or frame is not None:
            self._notify(iteration=iteration, progress=progress,
                         **({} if frame is None else {"frame": frame}))
        else:
            self.iteration, self.progress = iteration, progress

    def set_phase(self, name: str, fraction: float | None) -> None:
        """A new phase wakes the followers; progress within one comes with the next report."""
        if name != self.phase:
            self._notify(phase=name, phase_progress=fraction)
        else:
            self.phase_progress = fraction

    def succeed(self, result: Any) -> None:
        self._finish(JobStatus.DONE, progress=1.0, result=result)

    def fail(self, error: BaseException) -> None:
        """Failed with ``error``: a ValueError (bad request or data, found while computing)
        says itself; anything else (a bug, a resource problem) is named by its type."""
        message = str(error) if isinstance(error, ValueError) else f"{type(error).__name__}: {error}"
        self._finish(JobStatus.FAILED, error=message, failed_with=type(error))

    # -- internals -------------------------------------------------------------------------------
    def _notify(self, **changes: Any) -> None:
        with self._lock:
            waiters = self._apply(changes)
        self._wake(waiters)

    def _finish(self, status: JobStatus, **changes: Any) -> bool:
        """Move to a final status unless already there (a cancel wins over a late result)."""
        with self._lock:
            if self.status.finished:
                return False
            # The result (or nothing) replaces the intermediate frames from now on.
            waiters = self._apply(dict(changes, status=status, paused=False, yielding=False,
                                       frame=None))
        self._wake(waiters)
        return True

    def _apply(self, changes: dict[str, Any]) -> list[tuple[asyncio.AbstractEventLoop,
                                                            asyncio.Event]]:
        """Set fields and bump the version; the caller holds the lock."""
        for name, value in changes.items():
            setattr(self, name, value)
        self._version += 1
        self._changed.notify_all()
        waiters, self._waiters = self._waiters, []
        return waiters

    @staticmethod
    def _wake(waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]]) -> None:
        for loop, event in waiters:
            # The follower's loop may have closed (the server stopped): nothing to wake then.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(event.set)


class JobContext:
    """What a running job's work function uses to report and to be stopped."""

    def __init__(self, job: Job, frame_interval: float) -> None:
        self.job = job
        self.frame_interval = frame_interval
        self._last_frame = -float("inf")
        self._last_notify = -float("inf")
        self._seq = itertools.count(1)

    def check(self) -> None:
        """Raise JobCancelled if cancelled; block here while paused."""
        self.job.checkpoint()

    def step(self, iteration: int | None, progress: float,
             frame: Callable[[], np.ndarray] | None = None, stride: int = 1) -> None:
        """Report progress; publish ``frame()`` (every ``stride``-th row, see :class:`Frame`)
        if one is due. Cheap enough for every iteration."""
        self.job.checkpoint()
        now = time.monotonic()
        if frame is not None and now - self._last_frame >= self.frame_interval:
            self._last_frame = self._last_notify = now
            self.job.report(iteration, progress,
                            Frame(frame(), iteration, next(self._seq), stride))
        elif now - self._last_notify >= NOTIFY_INTERVAL:
            self._last_notify = now
            self.job.report(iteration, progress)
        else:
            self.job.report(iteration, progress, notify=False)


Work = Callable[[JobContext], Any]


class JobManager:
    """Runs work functions on ``workers`` daemon threads and keeps recent jobs.

    Background jobs (``priority=Priority.BACKGROUND``) run on one more thread of their own and
    yield to requested ones (:mod:`priority`); so do threads in :meth:`background`.
    Finished jobs are forgotten oldest first when there are more than ``keep`` of them or
    their results (``result.nbytes`` where defined) hold more than ``keep_bytes``; queued and
    running jobs never are.
    Submitting with a ``key`` that an active or done job already has returns that job (made a
    requested job when the new submission is one).
    """

    def __init__(self, workers: int = 2, keep: int = 100, keep_bytes: int = 2**30,
                 frame_interval: float = FRAME_INTERVAL) -> None:
        self.keep = keep
        self.keep_bytes = keep_bytes
        self.frame_interval = frame_interval
        self.requested = RequestedWork()
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._works: dict[str, Work] = {}  # queued jobs' work, for a promotion to queue again
        self._lock = threading.Lock()
        self._queues: dict[Priority, queue.Queue[tuple[Job, Work] | None]] = {
            priority: queue.Queue() for priority in Priority}
        lanes = [Priority.REQUESTED] * workers + [Priority.BACKGROUND]
        self._threads = [threading.Thread(target=self._worker, args=(self._queues[lane],),
                                          name=f"projector-job-{i}" if lane is Priority.REQUESTED
                                          else "projector-background", daemon=True)
                         for i, lane in enumerate(lanes)]
        for thread in self._threads:
            thread.start()

    def submit(self, work: Work, *, key: str | None = None,
               priority: Priority = Priority.REQUESTED) -> Job:
        with self._lock:
            existing = self._reusable(key)
            if existing is None:
                job = self._add(key, priority)
                self._works[job.id] = work
        if existing is not None:
            if priority is Priority.REQUESTED:
                self.promote(existing)
            return existing
        self._queues[priority].put((job, work))
        return job

    def promote(self, job: Job) -> None:
        """Someone now waits for ``job``: it stops yielding, and a queued one is queued for
        the requested workers too (whichever lane reaches it first runs it)."""
        if job.priority is Priority.REQUESTED:
            return
        job.priority = Priority.REQUESTED
        if job.status is JobStatus.RUNNING:
            self.requested.enter(job)
        with self._lock:
            work = self._works.get(job.id)
        if work is not None and job.status is JobStatus.QUEUED:
            self._queues[Priority.REQUESTED].put((job, work))

    @contextlib.contextmanager
    def background(self) -> Iterator[BackgroundScope]:
        """This thread's work meanwhile is background work outside a job: its yield points
        hold while a requested job runs (the default view's steps, the warm-up)."""
        scope = BackgroundScope(self.requested)
        with checkpoints_of(scope):
            yield scope

    def completed(self, result: Any, *, key: str | None = None) -> Job:
        """A job that is already done (a cached result), so callers handle one kind of thing."""
        with self._lock:
            job = self._add(key, Priority.REQUESTED)
        job.succeed(result)
        return job

    def get(self, job_id: str) -> Job:
        """The job, or KeyError when unknown or forgotten."""
        with self._lock:
            return self._jobs[job_id]

    def all(self) -> list[Job]:
        """Every job still kept, oldest first."""
        with self._lock:
            return list(self._jobs.values())

    def find(self, key: str) -> Job | None:
        with self._lock:
            return self._reusable(key)

    def run_here(self, job: Job) -> None:
        """A job's work that waits for another job: still queued, that job runs on this thread.

        A job that waits on a worker for one queued behind it (a site export for its
        projections) would otherwise hold the worker that job needs: with every worker so
        held, nothing would run again. Run here, it costs the waiting job's own worker, so
        the count of workers still bounds what runs at once. A job already running (or done)
        elsewhere is left to its worker."""
        with self._lock:
            work = self._works.pop(job.id, None)
        if work is not None:
            self._run(job, work)  # its lane's entry is skipped later: it is no longer queued

    def cancel(self, job_id: str) -> Job:
        """Cancel at once: the status says so now, the work stops at its next step."""
        job = self.get(job_id)
        job.cancel()
        return job

    def pause(self, job_id: str) -> Job:
        job = self.get(job_id)
        job.pause()
        return job

    def resume(self, job_id: str) -> Job:
        job = self.get(job_id)
        job.resume()
        return job

    def shutdown(self, wait: bool = False) -> None:
        """Cancel everything and stop the workers (they are daemons, so exit never waits).

        ``wait``: until each worker has left its work, at the work's next checkpoint. A
        command line that exits next must wait: a daemon thread still inside a kernel's
        native call when the interpreter finalizes is ended as it takes the GIL back, and
        where that call released the GIL through pybind11 (torch, usearch) the process aborts
        ("terminate called without an active exception").
        """
        with self._lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            if not job.status.finished:
                self.cancel(job.id)
        for thread in self._threads:
            self._queues[Priority.BACKGROUND if thread.name == "projector-background"
                         else Priority.REQUESTED].put(None)
        if wait:
            for thread in self._threads:
                thread.join()

    # -- internals -----------------------------------------------------------------------------
    def _reusable(self, key: str | None) -> Job | None:
        if key is None:
            return None
        for job in reversed(self._jobs.values()):
            if job.key == key and job.status in (JobStatus.QUEUED, JobStatus.RUNNING,
                                                 JobStatus.DONE):
                return job
        return None

    def _add(self, key: str | None, priority: Priority) -> Job:
        job = Job(secrets.token_hex(8), key, priority, self.requested)
        self._jobs[job.id] = job
        self._forget_old()
        return job

    def _forget_old(self) -> None:
        """Drop the oldest finished jobs beyond the count and byte budgets (lock held)."""
        finished = [j for j in self._jobs.values() if j.status.finished]
        count, held = len(finished), sum(getattr(j.result, "nbytes", 0) for j in finished)
        for old in finished:
            if count <= self.keep and held <= self.keep_bytes:
                break
            del self._jobs[old.id]
            count -= 1
            held -= getattr(old.result, "nbytes", 0)

    def _worker(self, lane: queue.Queue[tuple[Job, Work] | None]) -> None:
        while True:
            item = lane.get()
            if item is None:
                return
            job, work = item
            with self._lock:
                self._works.pop(job.id, None)
            self._run(job, work)

    def _run(self, job: Job, work: Work) -> None:
        """``work`` as ``job`` on this thread, unless cancelled meanwhile or run elsewhere."""
        if not job.start():  # cancelled while queued, or run by the other lane (or here)
            return
        if job.priority is Priority.REQUESTED:
            self.requested.enter(job)
        try:
            with phases_of(job), checkpoints_of(job):
                result = work(JobContext(job, self.frame_interval))
        except JobCancelled:
            job.cancel()
        except BaseException as error:  # a bug, a resource problem, even SystemExit: the
            # job fails and this worker lives on (a dead one would leave it "running")
            job.fail(error)
        else:
            job.succeed(result)
        finally:
            self.requested.leave(job)
