"""The job manager: states, bounded concurrency, frames, pause, cancel, retention, waiting."""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest

from projector_core.jobs.engine import JobManager
from projector_core.jobs.job import JobCancelled, JobContext, JobStatus


@pytest.fixture
def manager():
    jobs = JobManager(workers=2, keep=3, frame_interval=0.05)
    yield jobs
    jobs.shutdown()


def _until(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def _looping(release: threading.Event, steps: list[int] | None = None,
             exited: threading.Event | None = None):
    """Work that steps until released (or cancelled), publishing a frame each step;
    ``exited`` is set once it has stopped, however it stopped."""
    def work(ctx: JobContext) -> str:
        i = 0
        try:
            while not release.is_set():
                i += 1
                ctx.step(i, min(i / 1000, 0.99), lambda i=i: np.full((4, 2), i, np.float32))
                if steps is not None:
                    steps.append(i)
                time.sleep(0.002)
        finally:
            if exited is not None:
                exited.set()
        return "finished"
    return work


def test_done_job_has_result_and_full_progress(manager):
    job = manager.submit(lambda ctx: 42)
    assert job.wait(5)
    assert job.status is JobStatus.DONE
    assert job.result == 42
    assert job.snapshot() == {"id": job.id, "status": "done", "progress": 1.0,
                              "iteration": None, "error": None, "paused": False,
                              "phase": None, "phase_progress": None,
                              "priority": "requested", "yielding": False}


def test_concurrency_is_bounded_and_the_rest_queue(manager):
    """Two workers: the third job waits in the queue and starts only once one of the first two
    has ended (the order the jobs themselves log)."""
    release, log = threading.Event(), []

    def logged(name: str):
        def work(ctx: JobContext) -> str:
            log.append(("start", name))
            release.wait(10)
            log.append(("end", name))
            return name
        return work

    jobs = [manager.submit(logged(name)) for name in ("a", "b", "c")]
    _until(lambda: sum(j.status is JobStatus.RUNNING for j in jobs) == 2)
    assert jobs[2].status is JobStatus.QUEUED and ("start", "c") not in log
    release.set()
    for job in jobs:
        assert job.wait(5)
        assert job.status is JobStatus.DONE
    first_end = min(log.index(("end", "a")), log.index(("end", "b")))
    assert log.index(("start", "c")) > first_end, log


def test_errors_fail_the_job_and_keep_the_workers(manager):
    def bad_input(ctx: JobContext) -> None:
        raise ValueError("perplexity is too large")

    def bug(ctx: JobContext) -> None:
        raise KeyError("oops")

    first, second = manager.submit(bad_input), manager.submit(bug)
    assert first.wait(5) and second.wait(5)
    assert (first.status, first.error, issubclass(first.failed_with, ValueError)) == (
        JobStatus.FAILED, "perplexity is too large", True)
    assert second.status is JobStatus.FAILED and second.error == "KeyError: 'oops'"
    assert not issubclass(second.failed_with, ValueError)
    assert manager.submit(lambda ctx: "still works").wait(5)


def test_cancel_running_job_stops_its_work_at_the_next_step(manager):
    release, steps, exited = threading.Event(), [], threading.Event()
    job = manager.submit(_looping(release, steps, exited))
    _until(lambda: len(steps) > 5)
    count = len(steps)
    manager.cancel(job.id)
    assert job.status is JobStatus.CANCELLED  # at once, not when the work notices
    assert exited.wait(5)  # the work stopped, with the release never given
    assert len(steps) <= count + 1  # at most the step in flight at the cancel
    assert job.result is None


def test_cancel_queued_job_never_runs(manager):
    release = threading.Event()
    blockers = [manager.submit(_looping(release)) for _ in range(2)]
    ran = threading.Event()
    queued = manager.submit(lambda ctx: ran.set())
    manager.cancel(queued.id)
    after = manager.submit(lambda ctx: "after")  # queued behind the cancelled one
    release.set()
    for job in blockers:
        job.wait(5)
    assert after.wait(5)  # the queue went past the cancelled job: it would have run first
    assert queued.status is JobStatus.CANCELLED and not ran.is_set()


def test_a_late_result_does_not_override_cancel():
    jobs = JobManager(workers=1)  # one worker: the next job runs once the first has returned
    try:
        gate = threading.Event()
        job = jobs.submit(lambda ctx: gate.wait(5) and "late")  # never calls ctx.step
        _until(lambda: job.status is JobStatus.RUNNING)
        jobs.cancel(job.id)
        gate.set()
        assert jobs.submit(lambda ctx: "next").wait(5)  # the late result has been handed in
        assert job.status is JobStatus.CANCELLED and job.result is None
    finally:
        jobs.shutdown()


def test_pause_holds_the_work_and_resume_continues(manager):
    """Work that steps when let: a step begun while paused returns only after the resume."""
    go, entered, returned = threading.Semaphore(0), threading.Semaphore(0), threading.Semaphore(0)

    def work(ctx: JobContext) -> str:
        for i in range(1, 6):
            assert go.acquire(timeout=10)
            entered.release()
            ctx.step(i, i / 10)
            returned.release()
        return "finished"

    job = manager.submit(work)
    for _ in range(3):  # three steps run freely
        go.release()
        assert returned.acquire(timeout=5)
    manager.pause(job.id)
    assert job.snapshot()["paused"] is True and job.status is JobStatus.RUNNING
    go.release()
    for _ in range(4):  # the three free steps, and the one begun while paused
        assert entered.acquire(timeout=5)
    assert not returned.acquire(timeout=0.2), "a step returned while paused"
    manager.resume(job.id)
    assert returned.acquire(timeout=5)
    go.release()
    assert job.wait(5) and job.status is JobStatus.DONE


def test_cancel_releases_a_paused_job(manager):
    release, steps = threading.Event(), []
    job = manager.submit(_looping(release, steps))
    _until(lambda: len(steps) > 3)
    manager.pause(job.id)
    manager.cancel(job.id)
    assert job.status is JobStatus.CANCELLED
    # The worker is free again: two new jobs both run.
    assert manager.submit(lambda ctx: 1).wait(5)
    assert manager.submit(lambda ctx: 2).wait(5)


@pytest.mark.parametrize("interval, published", [(0.0, 50), (3600.0, 1)])
def test_frames_are_published_at_most_every_interval(interval, published):
    """50 steps: with no interval every step publishes its frame; with an hour's interval only
    the first one does, whatever the machine's speed."""
    jobs = JobManager(workers=1, frame_interval=interval)
    seen = []

    def work(ctx: JobContext) -> str:
        for i in range(1, 51):
            ctx.step(i, i / 100, lambda i=i: np.full((4, 2), i, np.float32))
            seen.append(ctx.job.frame)
        return "finished"

    job = jobs.submit(work)
    try:
        assert job.wait(30)
    finally:
        jobs.shutdown()
    assert job.result == "finished" and job.iteration == 50
    assert len({frame.seq for frame in seen}) == published
    assert seen[-1].seq == published and seen[-1].iteration == (50 if interval == 0 else 1)
    assert all(frame.coordinates.shape == (4, 2) for frame in seen)
    assert all(frame.coordinates[0, 0] == frame.iteration for frame in seen)
    assert job.frame is None  # the result replaces the frames


def test_finished_jobs_are_forgotten_beyond_keep_oldest_first(manager):
    done = [manager.submit(lambda ctx, i=i: i) for i in range(5)]
    for job in done:
        job.wait(5)
    manager.submit(lambda ctx: "newest").wait(5)
    with pytest.raises(KeyError):
        manager.get(done[0].id)
    assert manager.get(done[-1].id).status is JobStatus.DONE


def test_finished_results_are_forgotten_beyond_the_byte_budget():
    class Sized:
        nbytes = 400

    jobs = JobManager(workers=1, keep=100, keep_bytes=1000)
    try:
        done = [jobs.submit(lambda ctx: Sized()) for _ in range(3)]
        for job in done:
            job.wait(5)
        jobs.submit(lambda ctx: None).wait(5)
        with pytest.raises(KeyError):
            jobs.get(done[0].id)
        assert jobs.get(done[1].id) is done[1] and jobs.get(done[2].id) is done[2]
    finally:
        jobs.shutdown()


def test_same_key_reuses_active_or_done_job_but_not_a_cancelled_one(manager):
    release = threading.Event()
    first = manager.submit(_looping(release), key="k")
    assert manager.submit(_looping(release), key="k") is first
    manager.cancel(first.id)
    second = manager.submit(lambda ctx: "again", key="k")
    assert second is not first
    second.wait(5)
    assert manager.find("k") is second
    assert manager.completed("cached", key="other").status is JobStatus.DONE


def test_async_followers_are_woken_by_changes(manager):
    release = threading.Event()

    async def follow() -> list[int]:
        job = manager.submit(_looping(release))
        versions, seen = [], -1
        while len(versions) < 5:
            seen = await job.changed(seen, 1.0)
            versions.append(seen)
        release.set()
        await job.finished()
        assert job.status is JobStatus.DONE
        return versions

    versions = asyncio.run(follow())
    assert versions == sorted(set(versions))


def test_job_context_raises_once_cancelled(manager):
    started, caught = threading.Event(), []

    def work(ctx: JobContext) -> None:
        started.set()
        try:
            while True:
                ctx.step(None, 0.5)
                time.sleep(0.001)
        except JobCancelled:
            caught.append(True)
            raise

    job = manager.submit(work)
    started.wait(5)
    manager.cancel(job.id)
    _until(lambda: caught)


def test_a_job_waiting_for_a_queued_job_runs_it_on_its_own_worker() -> None:
    """One worker, held by a job that needs another: run_here runs that one on the same
    thread (the worker's lane skips it later), where waiting alone would never end."""
    jobs = JobManager(workers=1)
    try:
        def outer(ctx: JobContext) -> tuple[str, str]:
            inner = jobs.submit(lambda _: threading.current_thread().name)
            jobs.run_here(inner)
            assert inner.wait(5)
            return inner.result, threading.current_thread().name

        job = jobs.submit(outer)
        assert job.wait(10), job.snapshot()
        assert job.status is JobStatus.DONE, job.error
        ran_on, waited_on = job.result
        assert ran_on == waited_on == "projector-job-0"
        again = jobs.submit(lambda _: "the lane goes on")  # the skipped entry left it working
        assert again.wait(5) and again.result == "the lane goes on"
    finally:
        jobs.shutdown(wait=True)
