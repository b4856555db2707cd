"""A projection request as every door asks it: its problems said at once, before any job,
and a view's projection run to its end (an export's, a picture's, the widget's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter, ValidationError

from projector_core.data.catalog import Catalog
from projector_core.data.model import Embedding
from projector_core.export.embedding_data import Progress
from projector_core.jobs.job import Job, JobStatus
from projector_core.kernels.backend import Backend
from projector_core.projection.compute import ProjectionResult, check
from projector_core.projection.default_request import projection_request
from projector_core.projection.jobs import ProjectionJobs, projection_result
from projector_core.projection.methods import METHODS
from projector_core.projection.methods.table import data_range_problems
from projector_core.projection.params import ProjectionRequest

_REQUEST: TypeAdapter[ProjectionRequest] = TypeAdapter(ProjectionRequest)
POLL_SECONDS = 0.25  # how often a waited-for projection tells its progress


def request_problems(catalog: Catalog, raw: object) -> list[dict[str, Any]] | None:
    """Every problem of a raw (unvalidated) request body that breaks a model's fixed bound
    *and* a data limit, in pydantic's error shape (``loc`` from the method's name on), so
    the two are refused once, together; None when there is no data problem (the model's
    own validation, then the data check, say what is wrong one at a time)."""
    if not isinstance(raw, dict):
        return None
    method = METHODS.get(str(raw.get("method")))
    if method is None or not isinstance(raw.get("run"), str) or not isinstance(
            raw.get("embedding"), str):
        return None
    try:
        shape = catalog.embedding(raw["run"], raw["embedding"]).shape
    except KeyError:
        return None  # the unknown name is said by the lookup
    problems = {} if shape is None else data_range_problems(method, raw.get("params"), shape)
    if not problems:
        return None
    try:
        _REQUEST.validate_python(raw)
        return None  # only data problems: the check says them
    except ValidationError as error:
        fixed: list[dict[str, Any]] = [
            dict(e) for e in error.errors()
            if e["loc"][1:3] not in [("params", name) for name in problems]]
    return fixed + [{"loc": (method.name, "params", name), "msg": message, "type": "data_limit"}
                    for name, message in problems.items()]


def run_to_end(projections: ProjectionJobs, backend: Backend, embedding: Embedding,
               method: str, asked: dict[str, Any] | None = None,
               progress: Progress | None = None,
               run_here: Callable[[Job], None] | None = None) -> ProjectionResult:
    """``method``'s result for ``embedding`` (the view's default request unless ``asked``
    gives dims and params), waited for with ``progress``; ValueError when the data cannot
    satisfy it or the job fails. Checked and computed here, never on a cluster: an export
    writes and a picture draws the whole coordinates. ``run_here``: waited for on a job
    worker (an export job's), a still queued projection runs on this thread
    (``JobManager.run_here``)."""
    request = projection_request(embedding, method, asked)
    check(request, embedding)
    job = projections.start(request, embedding, backend, None)
    if run_here is not None:
        if progress is not None:
            progress(method, job.progress)
        run_here(job)
    while not job.wait(POLL_SECONDS):
        if progress is not None:
            progress(method, job.progress)
    if job.status is not JobStatus.DONE:
        raise ValueError(f"{method} of {embedding.run}/{embedding.name} {job.status.value}: "
                         f"{job.error}")
    if progress is not None:
        progress(method, 1.0)
    return projection_result(job)
