"""Projection jobs: one per distinct request, answered from the result cache when it can be.

An identical request (same embedding version, method, dims, parameters, device) reuses the
active or finished job, or the on-disk result cache
(:mod:`~projector_core.storage.result_cache`); then it is done at once. A finished job's
layout can start or align another (``init_from_job``, ``align_to_job``). The server only
turns these answers into HTTP.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from projector_core.data.model import Embedding
from projector_core.jobs.engine import JobManager
from projector_core.jobs.job import Job, JobContext, JobStatus
from projector_core.jobs.priority import Priority
from projector_core.kernels.backend import Backend
from projector_core.projection.compute import ProjectionResult, check_reference, compute, request_key
from projector_core.projection.params import ProjectionRequest
from projector_core.storage.result_cache import ResultCache

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster

# What a job does with its result before it is done (the service builds a stored result's
# tiles on the workers: ``tiles/sharded_build.py``): (result, embedding, cluster) -> result.
Finish = Callable[[ProjectionResult, Embedding, "Cluster | None"], ProjectionResult]


def projection_result(job: Job) -> ProjectionResult:
    """A done job's coordinates and info; ValueError when it has none (not done, or it made
    something else)."""
    if job.status is not JobStatus.DONE:
        raise ValueError(f"job {job.id!r} is {job.status.value}, not done")
    if not isinstance(job.result, ProjectionResult):  # a model made ready (semantic/models.py)
        raise ValueError(f"job {job.id!r} is a {job.about.get('kind', 'other')} job: it has no "
                         "coordinates")
    return job.result


class NotDone(Exception):
    """The job has no result yet (or failed, or was cancelled)."""

    def __init__(self, job: Job) -> None:
        if job.status is JobStatus.FAILED:
            message = f"job {job.id} failed: {job.error}"
        else:
            message = (f"job {job.id} is {job.status.value} (progress {job.progress:.0%}); "
                       "its result is not available")
        super().__init__(message)
        self.job = job


def layout_of(job: Job, need: str) -> ProjectionResult:
    """A done job's result when it is a layout: a comparison's values are none to cluster,
    judge, order or start from (ValueError naming ``need``); :class:`NotDone` before."""
    if job.status is not JobStatus.DONE:
        raise NotDone(job)
    result = projection_result(job)
    other = _NOT_LAYOUTS.get(str(result.info.get("method")))
    if other is not None:
        raise ValueError(f"job {job.id} is {other}, not a projection: it has no {need}")
    return result


# Jobs whose result holds values per point, not a layout (their ``info["method"]``).
_NOT_LAYOUTS = {"compare": "a comparison", "quality": "a quality measure"}


class ProjectionJobs:
    """Starts projection jobs on ``jobs`` and keeps their results in ``results``."""

    def __init__(self, jobs: JobManager, results: ResultCache) -> None:
        self.jobs = jobs
        self.results = results

    def reference(self, request: ProjectionRequest, embedding: Embedding) -> np.ndarray | None:
        """The finished layout that ``init_from_job`` / ``align_to_job`` names, checked;
        ValueError when it is unknown, not finished, or over other rows."""
        field = "init_from_job" if hasattr(request.params, "init_from_job") else "align_to_job"
        job_id = getattr(request.params, field, None)
        if job_id is None:
            return None
        try:
            job = self.jobs.get(job_id)
        except KeyError:
            raise ValueError(f"{field}: no job {job_id!r} (unknown, or forgotten since)") from None
        try:
            coordinates = layout_of(job, "layout").coordinates
        except (ValueError, NotDone) as error:
            raise ValueError(f"{field}: {error}") from None
        check_reference(coordinates, request, (embedding.shape or (0, 0))[0])
        return coordinates

    def start(self, request: ProjectionRequest, embedding: Embedding, backend: Backend,
              cluster: Cluster | None, reference: np.ndarray | None = None,
              finish: Finish | None = None, priority: Priority = Priority.REQUESTED) -> Job:
        """The job answering ``request``: an active or done one (a background one asked for
        is made a requested one), a cached result, or new (which computes it, then hands the
        result to ``finish``; ``priority``: who waits for it)."""
        key = request_key(request, embedding, backend)
        job = self.jobs.find(key)
        if job is not None and priority is Priority.REQUESTED:
            self.jobs.promote(job)
        if job is None:
            cached = self.results.load(key)
            if cached is not None:
                job = self.jobs.completed(ProjectionResult(*cached), key=key)
            else:
                def work(ctx: JobContext) -> ProjectionResult:
                    result = compute(request, embedding, backend, ctx, reference, cluster)
                    if finish is not None:
                        result = finish(result, embedding, cluster)
                    if not getattr(result.coordinates, "stored", False):  # on disk already
                        self.results.store(key, result.coordinates, result.info)
                    return result

                job = self.jobs.submit(work, key=key, priority=priority)
        job.source = embedding  # clusters and quality read the original vectors and metadata
        # What GET /api/jobs lists: also for the default view's job, started by no request.
        job.about = {"kind": "projection", "method": request.method, "run": embedding.run,
                     "embedding": embedding.name, "dims": request.dims}
        return job
