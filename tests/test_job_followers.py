"""Jobs a page started stop once nothing follows them for a grace period; others run on.

The unit part drives the real job manager and `Followers`; the API part starts real t-SNE jobs
on the server under uvicorn, follows one over its WebSocket and leaves."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import httpx
import numpy as np
import pytest
import websockets

from projector_core.jobs.engine import JobManager
from projector_core.jobs.followers import Followers
from projector_core.jobs.job import JobContext, JobStatus
from projector_core.jobs.phases import enter_phase, phases_of

GRACE = 0.3


@pytest.fixture
def manager():
    jobs = JobManager(workers=4)
    yield jobs
    jobs.shutdown()


@pytest.fixture
def followers():
    watch = Followers(grace=GRACE)
    yield watch
    watch.stop()


def _until(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def _forever(release: threading.Event):
    def work(ctx: JobContext) -> str:
        while not release.is_set():
            ctx.step(None, 0.5)
            time.sleep(0.005)
        return "done"
    return work


def test_a_watched_job_nobody_follows_is_cancelled_after_the_grace(manager, followers):
    release = threading.Event()
    watched, kept, plain = (manager.submit(_forever(release)) for _ in range(3))
    followers.watch(watched)
    followers.keep(kept)
    _until(lambda: watched.status is JobStatus.CANCELLED)
    time.sleep(2 * GRACE)
    assert kept.status is JobStatus.RUNNING and plain.status is JobStatus.RUNNING
    release.set()


def test_following_and_polling_keep_a_watched_job_alive_until_they_stop(manager, followers):
    release = threading.Event()
    job = manager.submit(_forever(release))
    followers.watch(job)
    with followers.following(job):
        time.sleep(3 * GRACE)
        assert job.status is JobStatus.RUNNING
    for _ in range(6):  # polls more often than the grace: each finds it running
        time.sleep(GRACE / 2)
        followers.seen(job)
        assert job.status is JobStatus.RUNNING
    _until(lambda: job.status is JobStatus.CANCELLED)  # once they stop, the grace ends it
    release.set()


def test_a_job_the_api_also_asked_for_is_kept(manager, followers):
    release = threading.Event()
    job = manager.submit(_forever(release))
    followers.watch(job)
    followers.keep(job)  # the same request from a script: the job is shared
    followers.watch(job)  # and again from a page: still kept
    time.sleep(4 * GRACE)
    assert job.status is JobStatus.RUNNING
    release.set()
    _until(lambda: job.status is JobStatus.DONE)


def test_phases_reach_the_job_of_the_thread_and_nothing_else(manager):
    enter_phase("neighbours")  # outside a job: nothing happens

    def work(ctx: JobContext) -> None:
        enter_phase("neighbours", 0.5)
        ctx.step(0, 0.1)
        enter_phase("optimisation", 0.25)

    job = manager.submit(work)
    job.wait(10)
    assert job.snapshot()["phase"] == "optimisation" and job.snapshot()["phase_progress"] == 0.25


def _start_tsne(url: str, **query) -> str:
    body = {"run": "iris", "embedding": "iris", "method": "tsne", "dims": 2,
            "params": {"n_iter": 100000, "perplexity": 10}}
    response = httpx.post(f"{url}/api/projections", json=body, params=query, timeout=60)
    assert response.status_code == 202, response.text
    return response.json()["job"]


def _status(url: str, job: str) -> dict:
    return httpx.get(f"{url}/api/jobs/{job}", timeout=30).json()


def test_the_server_stops_a_page_job_once_its_stream_closes(serve, sample_logdir):
    url = serve(sample_logdir, unfollowed_grace=1.0)
    page_job = _start_tsne(url, cancel_unfollowed="true")

    async def follow_a_while() -> list[dict]:
        messages = []
        ws_url = url.replace("http://", "ws://") + f"/api/jobs/{page_job}/stream"
        async with websockets.connect(ws_url) as ws:
            while len(messages) < 40:
                message = await ws.recv()
                if isinstance(message, str):
                    messages.append(json.loads(message))
                    if messages[-1].get("iteration"):
                        break
        return messages

    messages = asyncio.run(follow_a_while())
    assert any(m.get("phase") for m in messages)  # every message names the phase
    assert _status(url, page_job)["status"] == "running"
    deadline = time.monotonic() + 60
    while _status(url, page_job)["status"] == "running":  # polls would keep it: poll slowly
        assert time.monotonic() < deadline, "the unfollowed job was not cancelled"
        time.sleep(1.5)
    assert _status(url, page_job)["status"] == "cancelled"


def test_a_job_started_through_the_api_runs_on_unfollowed(serve, sample_logdir):
    url = serve(sample_logdir, unfollowed_grace=0.5)
    job = _start_tsne(url)
    _until(lambda: _status(url, job)["phase"] == "optimisation", timeout=120)
    time.sleep(1.5)  # three grace periods with nobody following
    assert _status(url, job)["status"] == "running"
    httpx.delete(f"{url}/api/jobs/{job}", timeout=30)


class _Recorder:
    """A phase sink that keeps each phase's name once, in order, and its last fraction."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.last: dict[str, float | None] = {}

    def set_phase(self, name: str, fraction: float | None) -> None:
        if not self.names or self.names[-1] != name:
            self.names.append(name)
        self.last[name] = fraction


def test_umap_and_a_sampled_fit_name_every_phase_in_order():
    from sklearn.datasets import load_digits

    from projector_core.kernels.sampling import sampled_umap
    from projector_core.kernels.umap import umap

    data = load_digits().data.astype(np.float32)
    whole = _Recorder()
    with phases_of(whole):
        umap(data, n_epochs=20)
    assert whole.names == ["neighbours", "affinities", "initial layout", "optimisation"]
    assert whole.last["optimisation"] == 1.0
    sampled = _Recorder()
    with phases_of(sampled):
        sampled_umap(data, 400, 2, 15, 0.1, 20, 0)
    assert sampled.names == ["neighbours", "affinities", "initial layout", "optimisation", "placement"]
    assert sampled.last["neighbours"] == 1.0 and sampled.last["placement"] == 1.0
