"""Projections for exports and pictures, asked as ``POST /api/projections`` asks them: the
page's default request (``projection/default_request.py``), the method registry's checks,
one job per distinct request, the on-disk result cache (a projection the app already
computed is not computed again, and the reverse)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from projector_core.data.model import Embedding
from projector_core.jobs.engine import JobManager, JobStatus
from projector_core.kernels.backend import get_backend
from projector_core.projection.compute import ProjectionResult, check
from projector_core.projection.default_request import projection_request
from projector_core.projection.jobs import ProjectionJobs, projection_result
from projector_core.storage.result_cache import ResultCache

# (stage, fraction done or None); a CLI prints it as one line, a route may ignore it.
Progress = Callable[[str, float | None], None]


def projection_jobs(cache_dir: Path) -> ProjectionJobs:
    """Projection jobs of its own (one worker: an export runs its projections in turn) over
    the result cache the server uses for ``cache_dir``."""
    return ProjectionJobs(JobManager(workers=1), ResultCache(cache_dir))


def run_projection(projections: ProjectionJobs, embedding: Embedding, method: str,
                   progress: Progress | None = None, device: str = "cpu",
                   request: dict[str, Any] | None = None) -> ProjectionResult:
    """``method``'s result for ``embedding`` (the app's default request unless ``request``
    gives dims and params); ValueError when the data cannot satisfy it or the job fails."""
    body = projection_request(embedding, method, request)
    check(body, embedding)
    job = projections.start(body, embedding, get_backend(device), None)
    while not job.wait(0.25):
        if progress is not None:
            progress(method, job.progress)
    if job.status is not JobStatus.DONE:
        raise ValueError(f"{method} of {embedding.run}/{embedding.name} {job.status.value}: "
                         f"{job.error}")
    if progress is not None:
        progress(method, 1.0)
    return projection_result(job)

