"""The client's projection and job routes: start a projection, wait for it (polling, or
following its WebSocket stream), read its result, and steer a job (cancel, pause, resume).

Apart from the rest of :class:`projector.client.api.ProjectorClient` because the other route
groups wait on a job through :meth:`JobRoutes.wait` (search by meaning while its model
loads, quality, comparison)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from projector.client.answers import (
    DoneCallback,
    FrameCallback,
    ProgressCallback,
    Projection,
    ProjectorError,
)
from projector.client.transport import Connection, follow_stream
from projector.client.wire import OCTET_STREAM, float32, given, job_path, projection_body

POLL_SECONDS = 0.2


class JobRoutes(Connection):
    """Projections and the jobs that compute them (``/api/projections``, ``/api/jobs``)."""

    def project(self, run: str, embedding: str, method: str, dims: int = 2,
                device: str | None = None, *, on_progress: ProgressCallback | None = None,
                timeout: float | None = None, **params: Any) -> np.ndarray:
        """Compute a projection and wait for it: float32 [N, k] (see :meth:`projection`).
        ``params`` are the method's parameters, as :meth:`methods` lists them."""
        return self.projection(run, embedding, method, dims, device, on_progress=on_progress,
                               timeout=timeout, **params).coordinates

    def projection(self, run: str, embedding: str, method: str, dims: int = 2,
                   device: str | None = None, *, on_progress: ProgressCallback | None = None,
                   timeout: float | None = None, **params: Any) -> Projection:
        """As :meth:`project`, with the result's info (e.g. explained variance ratios) and
        job id. ``on_progress(job)`` hears the job's status as it runs; ``timeout`` seconds
        bound the wait (TimeoutError; the job goes on: :meth:`wait` for it again)."""
        job_id = self.start(run, embedding, method, dims, device, **params)
        self.wait(job_id, on_progress, timeout)
        return self.result(job_id)

    def start(self, run: str, embedding: str, method: str, dims: int = 2,
              device: str | None = None, **params: Any) -> str:
        """Queue a projection; returns the job id."""
        return self._json("POST", "/api/projections",
                          body=projection_body(run, embedding, method, dims, device,
                                                params))["job"]

    def wait(self, job_id: str, on_progress: ProgressCallback | None = None,
             timeout: float | None = None) -> dict[str, Any]:
        """Block until the job is done (its status); ProjectorError when it fails or is
        cancelled, TimeoutError after ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            status = self.job(job_id)
            if on_progress is not None:
                on_progress(status)
            if status["status"] == "done":
                return status
            if status["status"] in ("failed", "cancelled"):
                raise ProjectorError(409, f"job {job_id} {status['status']}"
                                          + (f": {status['error']}" if status["error"] else ""))
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} is still {status['status']} after {timeout} s "
                                   f"({status['progress']:.0%})")
            time.sleep(POLL_SECONDS)

    def jobs(self) -> list[dict[str, Any]]:
        """Every job the server keeps, with what it computes (kind, method, run, embedding)."""
        return self._json("GET", "/api/jobs")["jobs"]

    def job(self, job_id: str) -> dict[str, Any]:
        """A job's status, progress and phase."""
        return self._json("GET", job_path(job_id))

    def cancel(self, job_id: str) -> dict[str, Any]:
        """Cancel a job; its status is the answer."""
        return self._json("DELETE", job_path(job_id))

    def pause(self, job_id: str) -> dict[str, Any]:
        """Pause a running job (t-SNE, UMAP) where it is; :meth:`resume` carries on."""
        return self._json("POST", job_path(job_id, "pause"))

    def resume(self, job_id: str) -> dict[str, Any]:
        """Resume a paused job."""
        return self._json("POST", job_path(job_id, "resume"))

    def result(self, job_id: str) -> Projection:
        """A done job's projection (coordinates as float32, its info and id)."""
        body, headers = self._request("GET", job_path(job_id, "result"), accept=OCTET_STREAM)
        return Projection(float32(body, headers), json.loads(headers.get("x-info", "{}")),
                          job_id)

    def lod_order(self, job_id: str, axes: str | None = None) -> np.ndarray:
        """A done job's points in level-of-detail order (int32): any prefix covers the map
        evenly, as the page draws large data."""
        body, _ = self._request("GET", job_path(job_id, "lod"), given(axes=axes),
                                accept=OCTET_STREAM)
        return np.frombuffer(body, "<i4").copy()

    async def project_async(self, run: str, embedding: str, method: str, dims: int = 2, *,
                            on_frame: FrameCallback | None = None,
                            on_done: DoneCallback | None = None,
                            on_start: Callable[[str], Any] | None = None,
                            device: str | None = None, **params: Any) -> Projection:
        """A coroutine: ``await client.project_async(...)`` inside ``async`` code (or
        ``asyncio.run(client.project_async(...))``). Called without ``await`` it does nothing
        at all (Python warns "coroutine ... was never awaited"); from plain code use
        :meth:`project` (blocking, ``on_progress=``) instead.

        Start a projection and follow its stream: ``on_start(job_id)`` once queued,
        ``on_frame(coordinates, iteration)`` for each intermediate frame (a read-only array),
        ``on_done(projection)`` at the end; the projection is also returned.

        Cancelling the awaiting task cancels the job on the server. A job that fails or is
        cancelled raises :class:`ProjectorError`.
        """
        job_id = await asyncio.to_thread(self.start, run, embedding, method, dims, device,
                                         **params)
        if on_start is not None:
            on_start(job_id)
        try:
            projection = await follow_stream(self.base_url, self._auth, job_id, on_frame)
        except asyncio.CancelledError:
            await asyncio.to_thread(self.cancel, job_id)
            raise
        if on_done is not None:
            on_done(projection)
        return projection
