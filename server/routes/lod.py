"""Level of detail (``/api/jobs/ID/lod``), for front ends that draw millions of points.

``GET /api/jobs/ID/lod`` answers a done projection's level-of-detail order: N little-endian
int32, a permutation of the points in which every prefix is an even sample of the picture
(``projector_core.tiles.order``). ``axes`` names the coordinate columns it is computed over
(default the first two, three for a 3D projection).

``GET /api/jobs/ID/lod/points`` answers a slice of the points in level-of-detail order with
their coordinates, so a front end draws a picture from the first slice (coarse first) before
the whole result has arrived, and fills the rest in chunks (``offset``, ``count``): ``count``
little-endian int32 point indices (order[offset:offset + count]) followed by count x k
float32 coordinates of those points over ``axes``. It waits for a running job; with
``early=true`` it does not wait for an order still to be computed: it answers an even random
sample of ``count`` points at once (``X-Order: random``, else ``lod``). Headers:
``X-Total`` (N), ``X-Count``, ``X-Axes`` (the axes used, as the front end shows them: 2D
when three are asked of a result of two columns, one past the last column as the last),
``X-Bounds`` (JSON ``{"lo": [...], "hi": [...]}`` over every finite point, so the slice is
fitted to the screen as the whole set will be).
"""

from __future__ import annotations

import json
from typing import Annotated

import numpy as np
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from projector.server.deps import JobsDep, lod_store
from projector.server.job_responses import find_job, not_done

from projector_core.jobs.engine import Job, JobStatus
from projector_core.projection.compute import ProjectionResult
from projector_core.projection.jobs import layout_of, projection_result
from projector_core.tiles.view import axes_as_shown, chosen_axes

router = APIRouter(prefix="/api", tags=["level of detail"])


def parse_axes(text: str | list[int] | None, cols: int, tiles: bool = False,
               as_shown: bool = False) -> list[int]:
    """The result columns a request's ``axes`` names, by the one rule (``tiles/view.py``
    ``chosen_axes``: the first three by default, two for tiles); ``as_shown``: the axes the
    page shows for them (``axes_as_shown``). Shared by the LOD, tile, query and result routes
    so one spelling means one thing."""
    if not text:
        return chosen_axes(None, cols, tiles)
    if isinstance(text, list):
        asked = text
    else:
        try:
            asked = [int(part) for part in text.split(",")]
        except ValueError:
            raise HTTPException(422, f"axes must be comma-separated column numbers, not "
                                     f"{text!r}") from None
    return chosen_axes(axes_as_shown(asked, cols) if as_shown else asked, cols)


@router.get(
    "/jobs/{job_id}/lod",
    response_class=Response,
    responses={200: {"content": {"application/octet-stream": {}},
                     "description": "N int32 (little-endian): the points in level-of-detail order"},
               409: {"description": "The job is not done"}, 404: {"description": "Unknown job"},
               422: {"description": "A comparison job: it has no layout"}},
)
def get_lod(job_id: str, request: Request, jobs: JobsDep,
            axes: Annotated[str | None, Query(description="Coordinate columns, e.g. 0,1,2")] = None,
            ) -> Response:
    job = find_job(jobs, job_id)
    if job.status is not JobStatus.DONE:
        raise not_done(job)
    chosen = parse_axes(axes, _layout(job).coordinates.shape[1])
    order = lod_store(request).order(job, chosen)
    return Response(order.astype("<i4").tobytes(), media_type="application/octet-stream",
                    headers={"X-Shape": str(order.size)})


def _layout(job: Job) -> ProjectionResult:
    """The done job's layout; a comparison job has none to order (ValueError, 422)."""
    return layout_of(job, "level-of-detail order")


@router.get(
    "/jobs/{job_id}/lod/points",
    response_class=Response,
    responses={200: {"content": {"application/octet-stream": {}},
                     "description": "count int32 indices, then count x k float32 coordinates"},
               409: {"description": "The job failed or was cancelled"},
               404: {"description": "Unknown job"},
               422: {"description": "A comparison job: it has no layout"}},
)
async def get_lod_points(
    job_id: str, request: Request, jobs: JobsDep,
    axes: Annotated[str | None, Query(description="Coordinate columns, e.g. 0,1,2")] = None,
    offset: Annotated[int, Query(ge=0, description="First rank of the slice")] = 0,
    count: Annotated[int | None, Query(ge=0, description="Points in the slice (default: "
                                                          "the rest)")] = None,
    early: Annotated[bool, Query(description="While the order is still to be computed, "
                                             "answer an even random sample at once")] = False,
) -> Response:
    job = find_job(jobs, job_id)
    await job.finished()
    if job.status is not JobStatus.DONE:
        raise not_done(job)
    cols = _layout(job).coordinates.shape[1]
    chosen = parse_axes(axes, cols, as_shown=True)

    def answer() -> Response:
        n = projection_result(job).coordinates.shape[0]
        store = lod_store(request)
        order = store.peek_order(job, chosen) if early else None
        kind = "lod"
        if order is None and early:
            kind = "random"  # a uniform sample is an even one too, and costs no sort
            size = min(n, count if count is not None else n)
            ranks = np.sort(np.random.default_rng(0).choice(n, size, replace=False))
        else:
            order = store.order(job, chosen) if order is None else order
            ranks = order[offset: offset + count if count is not None else None]
        coordinates = projection_result(job).coordinates[ranks][:, chosen]
        body = ranks.astype("<i4").tobytes() + np.ascontiguousarray(coordinates, "<f4").tobytes()
        return Response(body, media_type="application/octet-stream", headers={
            "X-Total": str(n), "X-Count": str(ranks.size), "X-Order": kind,
            "X-Axes": ",".join(map(str, chosen)),
            "X-Bounds": json.dumps(store.bounds(job, chosen))})
    return await run_in_threadpool(answer)
