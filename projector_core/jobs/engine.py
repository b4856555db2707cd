"""Background jobs: bounded concurrency, progress, streamed frames, pause and cancel.

Jobs run on a small pool of worker threads (two by default), not processes. The heavy parts
of every kernel release the GIL (openTSNE's Cython gradients and FFTs, BLAS, numpy), so a
thread computes at full speed while the event loop keeps answering; a thread shares the
catalog's memory-mapped tensors and hands frames over without pickling or copies between
processes; cancelling is a flag the kernel sees at its next step. umap-learn's numba epochs
hold the GIL, but only for one epoch at a time.

A job and what its work function reports through are :mod:`job`'s; kernels without a
context stop at their ``priority.yield_point()``.

A job is *requested* (someone waits for it) or *background* (the server's own guess, as the
default view prepared at start): background jobs run on a thread of their own, so they never
take a requested job's worker, and hold at each checkpoint while a requested job runs
(:mod:`priority`). A request for a background job's key makes it a requested job.
"""

from __future__ import annotations

import contextlib
import queue
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from projector_core.jobs.job import FRAME_INTERVAL, Job, JobCancelled, JobContext, JobStatus
from projector_core.jobs.phases import phases_of
from projector_core.jobs.priority import (
    BackgroundScope,
    Priority,
    RequestedWork,
    checkpoints_of,
)

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
