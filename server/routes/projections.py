"""``POST /api/projections``: start a projection job, or with ``?wait=true`` answer its result.

Checks that need the data (perplexity against N, metadata columns, the device) happen here,
so a bad request is a 422 at once instead of a failed job. An identical request (same
embedding version, method, dims, parameters, device) reuses the active or finished job, or
the on-disk result cache; then it is done at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import numpy as np
from fastapi import APIRouter, Body, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response

from projector_core.distributed.dispatch import check_projection, compute_projection
from projector_core.jobs import Job, JobContext, JobManager, JobStatus
from projector_core.kernels.backend import Backend, get_backend
from projector_core.model import Embedding
from projector_core.projection_params import ProjectionRequest
from projector_core.projections import ProjectionResult, check_reference, request_key
from projector_core.result_cache import ResultCache
from server.deps import CatalogDep, lookup_embedding
from server.routes.jobs import (
    JobCreated,
    JobsDep,
    ProjectionOut,
    not_done,
    result_response,
    wants_binary,
)

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster

router = APIRouter(prefix="/api", tags=["projections"])


@router.post(
    "/projections",
    status_code=202,
    response_model=JobCreated,
    responses={
        200: {"model": ProjectionOut,
              "description": "With ?wait=true: the result, as GET /api/jobs/ID/result answers "
                             "it (float32 bytes with Accept: application/octet-stream)"},
        404: {"description": "Unknown run or embedding"},
        409: {"description": "With ?wait=true: the job was cancelled meanwhile"},
        422: {"description": "Unknown parameter, value out of range, or one the data cannot "
                             "satisfy"},
    },
)
async def create_projection(
    body: Annotated[ProjectionRequest, Body()],
    request: Request,
    catalog: CatalogDep,
    jobs: JobsDep,
    wait: Annotated[bool, Query(description="Block until done and answer the result")] = False,
) -> Response:
    embedding = lookup_embedding(catalog, body.run, body.embedding)
    try:
        backend = get_backend(body.device or request.app.state.device)
        await run_in_threadpool(check_projection, body, embedding,  # may import openTSNE
                                request.app.state.cluster)
        reference = _reference(body, jobs, embedding)
    except ValueError as error:
        raise HTTPException(422, str(error)) from None
    job = await run_in_threadpool(_start, body, embedding, backend, jobs,
                                  request.app.state.results, request.app.state.cluster, reference)
    job.source = embedding  # clusters and quality read the original vectors and metadata
    if not wait:
        return JSONResponse({"job": job.id}, status_code=202)
    await job.finished()
    if job.status is JobStatus.DONE:
        return await run_in_threadpool(result_response, job, wants_binary(request))
    if job.status is JobStatus.FAILED:
        raise HTTPException(422 if job.error_is_input else 500, job.error)
    raise not_done(job)


def _reference(body: ProjectionRequest, jobs: JobManager, embedding: Embedding) -> np.ndarray | None:
    """The finished layout that ``init_from_job`` / ``align_to_job`` names, checked; ValueError
    when it is unknown, not finished, or over other rows."""
    field = "init_from_job" if hasattr(body.params, "init_from_job") else "align_to_job"
    job_id = getattr(body.params, field, None)
    if job_id is None:
        return None
    try:
        job = jobs.get(job_id)
    except KeyError:
        raise ValueError(f"{field}: no job {job_id!r} (unknown, or forgotten since)") from None
    if job.status is not JobStatus.DONE or not isinstance(job.result, ProjectionResult):
        raise ValueError(f"{field}: job {job_id!r} is {job.status.value}, not done")
    check_reference(job.result.coordinates, body, (embedding.shape or (0, 0))[0])
    return job.result.coordinates


def _start(body: ProjectionRequest, embedding: Embedding, backend: Backend, jobs: JobManager,
           results: ResultCache, cluster: Cluster | None,
           reference: np.ndarray | None = None) -> Job:
    key = request_key(body, embedding, backend)
    active = jobs.find(key)
    if active is not None:
        return active
    cached = results.load(key)
    if cached is not None:
        coordinates, info = cached
        return jobs.completed(ProjectionResult(coordinates, info), key=key)

    def work(ctx: JobContext) -> ProjectionResult:
        result = compute_projection(body, embedding, backend, ctx, cluster, reference)
        results.store(key, result.coordinates, result.info)
        return result

    return jobs.submit(work, key=key)
