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
from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from projector.server.deps import ServiceDep

router = APIRouter(prefix="/api", tags=["level of detail"])


@router.get(
    "/jobs/{job_id}/lod",
    response_class=Response,
    responses={200: {"content": {"application/octet-stream": {}},
                     "description": "N int32 (little-endian): the points in level-of-detail order"},
               409: {"description": "The job is not done"}, 404: {"description": "Unknown job"},
               422: {"description": "A comparison job: it has no layout"}},
)
def get_lod(job_id: str, service: ServiceDep,
            axes: Annotated[str | None, Query(description="Coordinate columns, e.g. 0,1,2")] = None,
            ) -> Response:
    order = service.lod_order(service.job(job_id), axes)
    return Response(order.astype("<i4").tobytes(), media_type="application/octet-stream",
                    headers={"X-Shape": str(order.size)})


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
    job_id: str, service: ServiceDep,
    axes: Annotated[str | None, Query(description="Coordinate columns, e.g. 0,1,2")] = None,
    offset: Annotated[int, Query(ge=0, description="First rank of the slice")] = 0,
    count: Annotated[int | None, Query(ge=0, description="Points in the slice (default: "
                                                          "the rest)")] = None,
    early: Annotated[bool, Query(description="While the order is still to be computed, "
                                             "answer an even random sample at once")] = False,
) -> Response:
    job = service.job(job_id)
    await job.finished()
    found = await run_in_threadpool(service.order_slice, job, axes, offset, count, early)
    body = (found.ranks.astype("<i4").tobytes()
            + np.ascontiguousarray(found.coordinates, "<f4").tobytes())
    return Response(body, media_type="application/octet-stream", headers={
        "X-Total": str(found.total), "X-Count": str(found.ranks.size), "X-Order": found.kind,
        "X-Axes": ",".join(map(str, found.axes)), "X-Bounds": json.dumps(found.bounds)})
