"""``POST /api/projections``: start a projection job, or with ``?wait=true`` answer its result.

Checks that need the data (perplexity against N, metadata columns, the device) happen here,
so a bad request is a 422 at once instead of a failed job; the method registry
(``projector_core.projection.methods``) holds them. ``GET /api/projections/methods`` publishes
the parameter table made from the same models (every parameter's type, default and bounds,
each method's capabilities), with an embedding's data limits and defaults applied.
Identical requests share one job or a cached result (``projector_core.service``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from projector.server.deps import FollowersDep, ServiceDep
from projector.server.job_responses import (
    JobCreated,
    ProjectionOut,
    failure_status,
    result_response,
    wants_binary,
)
from projector.server.limits_models import MethodTableOut

from projector_core.jobs.job import JobStatus
from projector_core.projection.params import ProjectionRequest
from projector_core.service import NotDone

router = APIRouter(prefix="/api", tags=["projections"])


async def every_bound_at_once(request: Request, service: ServiceDep) -> None:
    """A body that breaks a model's fixed bound *and* a data limit is refused once, naming
    both (FastAPI would refuse the first alone, and the route the second on the next try).

    Runs before FastAPI validates the body; a body with no data problem is left to it."""
    try:
        raw = await request.json()
    except ValueError:
        return  # not JSON: FastAPI's documented 400
    problems = service.request_problems(raw)
    if problems is not None:
        raise RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in problems])


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
    dependencies=[Depends(every_bound_at_once)],
)
async def create_projection(
    body: Annotated[ProjectionRequest, Body()],
    request: Request,
    service: ServiceDep,
    followers: FollowersDep,
    wait: Annotated[bool, Query(description="Block until done and answer the result")] = False,
    cancel_unfollowed: Annotated[bool, Query(
        description="Cancel the job once nothing has followed it (its WebSocket stream or "
                    "status polls) for a grace period: what the page asks, so a closed tab "
                    "stops its t-SNE. Without it a job runs to its end")] = False,
) -> Response:
    embedding = service.embedding(body.run, body.embedding)
    reference = await run_in_threadpool(service.check, body, embedding)  # may import openTSNE
    job = await run_in_threadpool(service.start, body, embedding, reference)
    if cancel_unfollowed and not wait:
        followers.watch(job)
    else:
        followers.keep(job)  # the API's jobs run to their end, also when a page shares them
    if not wait:
        return JSONResponse({"job": job.id}, status_code=202)
    await job.finished()
    if job.status is JobStatus.DONE:
        return await run_in_threadpool(result_response, job.id, service.result(job),
                                       wants_binary(request))
    if job.status is JobStatus.FAILED:
        raise HTTPException(failure_status(job), job.error)
    raise NotDone(job)


@router.get("/projections/methods", responses={
    404: {"description": "Unknown run or embedding"},
    422: {"description": "Only one of run and embedding given"}})
def projection_methods(
    service: ServiceDep,
    run: Annotated[str | None, Query(description="With embedding: apply its data's limits "
                                                 "and defaults")] = None,
    embedding: Annotated[str | None, Query(description="An embedding of run")] = None,
) -> MethodTableOut:
    """The parameter table: every parameter of every method (type, default, bounds,
    description) and its capabilities (quick, starts from a layout, streams frames, 3-D).
    With ``run`` and ``embedding``, bounds and defaults are this data's (perplexity at most
    (N - 1) / 3, and its default for N), and the data limits (``limits`` in ``GET
    /api/runs``) come beside them. Each method's ``default_request`` is what a fresh view
    of it asks (the page's request, the default view prepared ahead)."""
    return MethodTableOut(**service.parameter_table(run, embedding))
