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
from projector.server.deps import CatalogDep, ServiceDep, lookup_embedding
from projector.server.job_responses import (
    JobCreated,
    ProjectionOut,
    failure_status,
    not_done,
    result_response,
    wants_binary,
)
from projector.server.limits_models import MethodTableOut
from pydantic import TypeAdapter, ValidationError

from projector_core.errors import DataError
from projector_core.jobs.engine import JobStatus
from projector_core.projection.methods import METHODS, parameter_table
from projector_core.projection.methods.table import data_range_problems
from projector_core.projection.params import ProjectionRequest

_REQUEST = TypeAdapter(ProjectionRequest)

router = APIRouter(prefix="/api", tags=["projections"])


async def every_bound_at_once(request: Request, catalog: CatalogDep) -> None:
    """A body that breaks a model's fixed bound *and* a data limit is refused once, naming
    both (FastAPI would refuse the first alone, and the route the second on the next try).

    Runs before FastAPI validates the body; a body with no data problem is left to it."""
    try:
        raw = await request.json()
    except ValueError:
        return  # not JSON: FastAPI's documented 400
    method = METHODS.get(str(raw.get("method"))) if isinstance(raw, dict) else None
    if method is None or not isinstance(raw.get("run"), str) or not isinstance(
            raw.get("embedding"), str):
        return
    try:
        shape = catalog.embedding(raw["run"], raw["embedding"]).shape
    except KeyError:
        return  # the route's 404
    problems = {} if shape is None else data_range_problems(method, raw.get("params"), shape)
    if not problems:
        return
    try:
        _REQUEST.validate_python(raw)
        return  # only data problems: the route's check says them
    except ValidationError as error:
        fixed = [{**e, "loc": ("body", *e["loc"])} for e in error.errors()
                 if e["loc"][1:3] not in [("params", name) for name in problems]]
    data = [{"loc": ("body", method.name, "params", name), "msg": message,
             "type": "data_limit"} for name, message in problems.items()]
    raise RequestValidationError(fixed + data)


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


@router.get("/projections/methods", responses={
    404: {"description": "Unknown run or embedding"},
    422: {"description": "Only one of run and embedding given"}})
def projection_methods(
    catalog: CatalogDep,
    run: Annotated[str | None, Query(description="With embedding: apply its data's limits "
                                                 "and defaults")] = None,
    embedding: Annotated[str | None, Query(description="An embedding of run")] = None,
) -> MethodTableOut:
    """The parameter table: every parameter of every method (type, default, bounds,
    description) and its capabilities (quick, starts from a layout, streams frames, 3-D).
    With ``run`` and ``embedding``, bounds and defaults are this data's (perplexity at most
    (N - 1) / 3, and its default for N), and the data limits (``limits`` in ``GET
    /api/runs``) come beside them."""
    if (run is None) != (embedding is None):
        raise HTTPException(422, "give both run and embedding, or neither")
    shape = None  # an embedding whose shape is not known yet (loading) gets the plain table
    if run is not None and embedding is not None:
        shape = lookup_embedding(catalog, run, embedding).shape
    return MethodTableOut(**parameter_table(shape))
