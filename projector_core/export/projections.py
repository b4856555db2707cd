"""Projections for exports and pictures, through the same service as ``POST /api/projections``:
the method registry's checks, one job per distinct request, the on-disk result cache (a
projection the app already computed is not computed again, and the reverse)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from projector_core.data.model import Embedding
from projector_core.jobs.engine import JobManager, JobStatus
from projector_core.kernels.backend import get_backend
from projector_core.projection.compute import ProjectionResult, check
from projector_core.projection.jobs import ProjectionJobs, projection_result
from projector_core.projection.methods import parameter_table
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
    """The request the app sends for a fresh view of ``embedding``: the parameter table's
    defaults for its data (what the page reads, projecting.js's ``requestFor``), so a shared
    site shows what the app would and a cached result of the app's is reused."""
    if method not in METHODS:
        raise ValueError(f"unknown projection {method!r}: choose from {', '.join(METHODS)}")
    params = parameter_table(embedding.shape or (0, 0))["methods"][method]["params"]

    def default(name: str) -> Any:
        param = params[name]
        value = param["default"]
        for bound, pick in (("maximum", min), ("minimum", max)):
            if param[bound] is not None and type(value) in (int, float):
                value = pick(value, param[bound])
        return value

    if method == "pca":
        return {"dims": 3, "params": {"spherize": default("spherize")}}
    if method == "tsne":
        return {"dims": 2, "params": {"perplexity": default("perplexity"),
                                      "learning_rate": default("learning_rate"),
                                      "n_iter": default("n_iter")}}
    return {"dims": 2, "params": {"n_neighbors": default("n_neighbors"),
                                  "min_dist": default("min_dist")}}


def run_projection(service: ProjectionJobs, embedding: Embedding, method: str,
                   progress: Progress | None = None, device: str = "cpu",
                   request: dict[str, Any] | None = None) -> ProjectionResult:
    """``method``'s result for ``embedding`` (the app's default request unless ``request``
    gives dims and params); ValueError when the data cannot satisfy it or the job fails."""
    asked = request or default_request(embedding, method)
    body = TypeAdapter(ProjectionRequest).validate_python(
        {"run": embedding.run, "embedding": embedding.name, "method": method, **asked})
    check(body, embedding)
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

