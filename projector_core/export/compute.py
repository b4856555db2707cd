"""Projections for exports and pictures, through the same service as ``POST /api/projections``:
the method registry's checks, one job per distinct request, the on-disk result cache (a
projection the app already computed is not computed again, and the reverse)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from projector_core.data.model import Embedding
from projector_core.distributed.dispatch import check_projection
from projector_core.jobs.engine import JobManager, JobStatus
from projector_core.kernels.backend import get_backend
from projector_core.projection.compute import ProjectionResult
from projector_core.projection.jobs import ProjectionJobs, projection_result
from projector_core.projection.methods import data_limits
from projector_core.projection.params import ProjectionRequest
from projector_core.storage.result_cache import ResultCache

METHODS = ("pca", "tsne", "umap")
# (stage, fraction done or None); a CLI prints it as one line, a route may ignore it.
Progress = Callable[[str, float | None], None]


def projection_service(cache_dir: Path) -> ProjectionJobs:
    """A job service of its own (one worker: an export runs its projections in turn) over the
    result cache the server uses for ``cache_dir``."""
    return ProjectionJobs(JobManager(workers=1), ResultCache(cache_dir))


def default_request(embedding: Embedding, method: str) -> dict[str, Any]:
    """The request the app sends for a fresh view of ``embedding`` (state.js's defaults,
    TensorBoard's per-data rules), so a shared site shows what the app would and a cached
    result of the app's is reused."""
    n, d = embedding.shape or (0, 0)
    if method == "pca":
        return {"dims": 3, "params": {"spherize": d >= 50}}
    if method == "tsne":
        limit = data_limits(n, d)["projections"]["tsne"]["perplexity"]
        perplexity = min(50, max(5, math.ceil(math.sqrt(n) / 4)))
        perplexity = max(limit["minimum"], min(limit["maximum"] or perplexity, perplexity))
        return {"dims": 2, "params": {"perplexity": perplexity, "learning_rate": "auto",
                                      "n_iter": 1000}}
    if method == "umap":
        limit = data_limits(n, d)["projections"]["umap"]["n_neighbors"]
        return {"dims": 2, "params": {"n_neighbors": min(15, limit["maximum"] or 15),
                                      "min_dist": 0.1}}
    raise ValueError(f"unknown projection {method!r}: choose from {', '.join(METHODS)}")


def run_projection(service: ProjectionJobs, embedding: Embedding, method: str,
                   progress: Progress | None = None, device: str = "cpu",
                   request: dict[str, Any] | None = None) -> ProjectionResult:
    """``method``'s result for ``embedding`` (the app's default request unless ``request``
    gives dims and params); ValueError when the data cannot satisfy it or the job fails."""
    asked = request or default_request(embedding, method)
    body = TypeAdapter(ProjectionRequest).validate_python(
        {"run": embedding.run, "embedding": embedding.name, "method": method, **asked})
    check_projection(body, embedding, None)
    job = service.start(body, embedding, get_backend(device), None)
    while not job.wait(0.25):
        if progress is not None:
            progress(method, job.progress)
    if job.status is not JobStatus.DONE:
        raise ValueError(f"{method} of {embedding.run}/{embedding.name} {job.status.value}: "
                         f"{job.error}")
    if progress is not None:
        progress(method, 1.0)
    return projection_result(job)

