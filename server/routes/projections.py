"""``POST /api/projections``: start a projection job, or with ``?wait=true`` answer its result.

Checks that need the data (perplexity against N, metadata columns, the device) happen here,
so a bad request is a 422 at once instead of a failed job; the method registry
(``projector_core.projection.methods``) holds them, and ``GET /api/projections/methods`` tells the
limits the data puts on each method's parameters. Identical requests share one job or a
cached result (``projector_core.service``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from projector.server.deps import CatalogDep, EmbeddingDep, ServiceDep, lookup_embedding
from projector.server.job_responses import (
    JobCreated,
    ProjectionOut,
    failure_status,
    not_done,
    result_response,
    wants_binary,
)
from projector.server.limits_models import DataLimitsOut

from projector_core.errors import DataError
from projector_core.jobs.engine import JobStatus
from projector_core.projection.methods import data_limits
from projector_core.projection.params import ProjectionRequest

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
    service: ServiceDep,
    wait: Annotated[bool, Query(description="Block until done and answer the result")] = False,
    cancel_unfollowed: Annotated[bool, Query(
        description="Cancel the job once nothing has followed it (its WebSocket stream or "
                    "status polls) for a grace period: what the page asks, so a closed tab "
                    "stops its t-SNE. Without it a job runs to its end")] = False,
) -> Response:
    embedding = lookup_embedding(catalog, body.run, body.embedding)
    try:
        reference = await run_in_threadpool(service.check, body, embedding)  # may import openTSNE
    except DataError:
        raise  # the app's handler answers it: a 422 naming the file
    except ValueError as error:
        raise HTTPException(422, str(error)) from None
    job = await run_in_threadpool(service.start, body, embedding, reference)
    followers = request.app.state.followers
    if cancel_unfollowed and not wait:
        followers.watch(job)
    else:
        followers.keep(job)  # the API's jobs run to their end, also when a page shares them
    if not wait:
        return JSONResponse({"job": job.id}, status_code=202)
    await job.finished()
    if job.status is JobStatus.DONE:
        return await run_in_threadpool(result_response, job, wants_binary(request))
    if job.status is JobStatus.FAILED:
        raise HTTPException(failure_status(job), job.error)
    raise not_done(job)


@router.get("/projections/methods", responses={404: {"description": "Unknown run or embedding"}})
def projection_methods(embedding: EmbeddingDep) -> DataLimitsOut:
    """The limits this embedding's data puts on each method's parameters (under default
    sampling) and on ``k`` of a neighbour query; ``limits`` in ``GET /api/runs`` too."""
    n, dim = embedding.shape or (0, 0)
    return DataLimitsOut(**data_limits(n, dim))
