"""Requests before guesses: background work (the server's own) holds while a requested job
runs, and goes on after; the order is asserted on recorded events, never on durations."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from projector_core.jobs.engine import JobManager
from projector_core.jobs.job import JobContext, JobStatus
from projector_core.jobs.priority import Priority, yield_point


@pytest.fixture
def manager():
    jobs = JobManager(workers=2, frame_interval=0.05)
    yield jobs
    jobs.shutdown()


def _until(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.005)


def _stepping(name: str, events: list[str], release: threading.Event):
    """Work that records a step each iteration until released."""
    def work(ctx: JobContext) -> str:
        i = 0
        while not release.is_set():
            i += 1
            ctx.step(i, 0.5)
            events.append(name)
            time.sleep(0.002)
        return name
    return work


def _requested(events: list[str], until_held, steps: int = 30):
    """A requested job: once the background work is held (``until_held()``), it records its
    start, steps, and records its end."""
    def work(ctx: JobContext) -> str:
        _until(until_held)
        events.append("request start")
        for i in range(steps):
            ctx.step(i, i / steps)
            time.sleep(0.002)
        events.append("request end")
        return "answered"
    return work


def _between(events: list[str], first: str, last: str) -> list[str]:
    return events[events.index(first) + 1:events.index(last)]


def test_a_background_job_holds_while_a_requested_job_runs_and_goes_on_after(manager):
    events: list[str] = []
    release = threading.Event()
    guess = manager.submit(_stepping("background", events, release),
                           priority=Priority.BACKGROUND)
    _until(lambda: "background" in events)
    assert guess.snapshot()["priority"] == "background" and not guess.yielding

    request = manager.submit(_requested(events, lambda: guess.yielding))
    assert request.wait(10) and request.result == "answered"
    assert "background" not in _between(events, "request start", "request end")
    _until(lambda: events[-1] == "background" and not guess.yielding)  # it went on
    release.set()
    assert guess.wait(10) and guess.status is JobStatus.DONE


def test_background_work_outside_a_job_gives_way_at_its_yield_points(manager):
    """The default view's steps and the warm-up run on threads of their own, not as jobs."""
    events: list[str] = []
    release = threading.Event()
    scopes = []

    def guessing() -> None:
        with manager.background() as scope:
            scopes.append(scope)
            while not release.is_set():
                yield_point()
                events.append("background")
                time.sleep(0.002)

    thread = threading.Thread(target=guessing)
    thread.start()
    _until(lambda: "background" in events)
    request = manager.submit(_requested(events, lambda: scopes[0].yields > 0))
    assert request.wait(10)
    assert "background" not in _between(events, "request start", "request end")
    _until(lambda: events[-1] == "background")
    release.set()
    thread.join(10)


def test_background_work_keeps_requested_jobs_their_workers(manager):
    release = threading.Event()
    events: list[str] = []
    guess = manager.submit(_stepping("background", events, release),
                           priority=Priority.BACKGROUND)
    _until(lambda: guess.status is JobStatus.RUNNING)
    asked = [manager.submit(_stepping(f"request {i}", events, release)) for i in range(2)]
    _until(lambda: all(job.status is JobStatus.RUNNING for job in asked))
    _until(lambda: guess.yielding)
    release.set()
    assert all(job.wait(10) for job in [guess, *asked])


def test_a_request_for_a_background_jobs_key_makes_it_requested(manager):
    """The page asking for the default view's projection: it stops yielding to other
    requests, being one itself."""
    events: list[str] = []
    release, other_release = threading.Event(), threading.Event()
    guess = manager.submit(_stepping("default view", events, release), key="pca",
                           priority=Priority.BACKGROUND)
    other = manager.submit(_stepping("request", events, other_release))
    _until(lambda: guess.yielding)
    assert manager.submit(lambda ctx: "a copy", key="pca") is guess
    assert guess.priority is Priority.REQUESTED
    seen = len(events)
    _until(lambda: "default view" in events[seen:])  # it steps while the other runs
    release.set()
    other_release.set()
    assert guess.wait(10) and other.wait(10)


def test_a_paused_request_lets_background_work_go_on(manager):
    events: list[str] = []
    release = threading.Event()
    guess = manager.submit(_stepping("background", events, release),
                           priority=Priority.BACKGROUND)
    request = manager.submit(_stepping("request", events, release))
    _until(lambda: guess.yielding)
    request.pause()
    _until(lambda: not guess.yielding)
    seen = len(events)
    _until(lambda: "background" in events[seen:])
    request.resume()
    _until(lambda: guess.yielding)
    release.set()
    assert guess.wait(10) and request.wait(10)


def test_a_background_pca_gives_way_between_its_row_chunks(manager, monkeypatch):
    """A kernel without a job context (PCA) yields at its chunk loop: the default view's
    PCA holds while a requested job runs."""
    from projector_core.kernels import pca as pca_kernel

    monkeypatch.setattr(pca_kernel, "_CHUNK_BYTES", 64 * 16 * 4)  # 64 rows a chunk
    data = np.random.default_rng(0).normal(size=(20_000, 16)).astype(np.float32)
    events: list[str] = []
    asked = threading.Event()
    chunks = pca_kernel._row_chunks

    def recorded(rows):
        for item in chunks(rows):
            events.append("chunk")
            asked.wait(10)  # the first chunk is in flight when the request comes
            yield item

    monkeypatch.setattr(pca_kernel, "_row_chunks", recorded)
    guess = manager.submit(lambda ctx: pca_kernel.pca(data, 3), priority=Priority.BACKGROUND)
    _until(lambda: "chunk" in events)
    request = manager.submit(_requested(events, lambda: guess.yielding))
    asked.set()
    assert request.wait(10) and guess.wait(30) and guess.status is JobStatus.DONE
    assert "chunk" not in _between(events, "request start", "request end")
