"""Level-of-detail tiles of a projection (``projector_core/tiles/build.py``).

``GET /api/jobs/ID/tiles`` answers the tile index of a done projection over ``axes`` (default
the first two columns, three for a 3D result): JSON ``{"budget", "total", "axes", "box":
{"lo", "hi"}, "bounds": {"lo", "hi"}, "tiles": [[z, x, y, count], ...]}``. ``box`` is the
quadtree's square over the first two axes, ``bounds`` every axis's range (the fit of the
whole set); headers ``X-Columns`` and ``X-Info`` give the result's columns and info (what a
page showing tiles alone needs of it).
``GET /api/jobs/ID/tiles/Z/X/Y`` answers one tile: ``count`` little-endian uint32
row ids in level-of-detail order, then count x k float32 coordinates over ``axes``, then, with
``column``, count int32 codes into that metadata column's dictionary (as
``GET /api/metadata/column`` answers it). A tile that holds no point answers no bytes
(``X-Count: 0``). Both wait for a running job. With ``early=true`` a tile does not wait for
tiles still to be computed: it answers at once the points of its cell among one fixed random
sample of ``budget * 4^z`` points (``X-Order: random``; else ``lod``), so a first picture
never waits for them. Of a running t-SNE or UMAP ``early=true`` answers the same at once
from its latest frame: the points placed so far (rows still NaN skipped), their bounds in
``X-Bounds``; no point before its first frame. A cluster's layout over 256 MB sends a thin
frame instead (every stride-th row, at most about 1M, filled in as its shards are placed):
its early tiles come from those rows and carry no ``column`` (422). A page showing the job
from tiles asks again as its progress moves.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Path, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from projector.server.deps import ServiceDep

from projector_core.tiles.build import MAX_LEVEL

router = APIRouter(prefix="/api", tags=["level of detail"])
# A job's id is random and its result never changes: its tiles and their index are immutable
# (a second visit that finds the same job takes them from the browser's cache). Early tiles
# are not: they become the computed ones.
IMMUTABLE = {"Cache-Control": "private, max-age=31536000, immutable"}
AxesQuery = Annotated[str | None, Query(description="Coordinate columns, e.g. 0,1")]


@router.get("/jobs/{job_id}/tiles",
            responses={404: {"description": "Unknown job"},
                       409: {"description": "The job failed or was cancelled"}})
async def get_tile_index(job_id: str, response: Response, service: ServiceDep,
                         axes: AxesQuery = None) -> dict[str, Any]:
    job = service.job(job_id)
    await job.finished()
    source = service.tile_source(job, axes)  # NotDone: 409; a comparison: 422
    result = service.result(job)
    # The result's columns and info beside the index (its JSON is the TileSource contract):
    # a page that shows tiles alone needs no more of the result.
    response.headers.update({**IMMUTABLE, "X-Columns": str(result.coordinates.shape[1]),
                             "X-Info": json.dumps(result.info, ensure_ascii=True)})
    manifest: dict[str, Any] = await run_in_threadpool(source.manifest)
    return manifest


@router.get(
    "/jobs/{job_id}/tiles/{z}/{x}/{y}",
    response_class=Response,
    responses={200: {"content": {"application/octet-stream": {}},
                     "description": "count uint32 row ids, count x k float32 coordinates, "
                                    "(with column) count int32 codes"},
               404: {"description": "Unknown job"},
               409: {"description": "The job failed or was cancelled"},
               422: {"description": "A tile outside the quadtree, or an unknown column"}},
)
async def get_tile(
    job_id: str, service: ServiceDep,
    z: Annotated[int, Path(ge=0, le=MAX_LEVEL)], x: Annotated[int, Path(ge=0)],
    y: Annotated[int, Path(ge=0)], axes: AxesQuery = None,
    column: Annotated[str | None, Query(description="A metadata column whose codes come "
                                                    "along")] = None,
    early: Annotated[bool, Query(description="While the tiles are still to be computed, "
                                             "answer a random sample of the cell at once")] = False,
) -> Response:
    job = service.job(job_id)
    if not service.answers_early(job, early):
        await job.finished()
    found = await run_in_threadpool(service.tile, job, z, x, y, axes, column, early)
    rows, coordinates, codes = found.tile
    body = rows.astype("<u4").tobytes() + np.ascontiguousarray(coordinates, "<f4").tobytes()
    if codes is not None:
        body += codes.astype("<i4").tobytes()
    return Response(body, media_type="application/octet-stream", headers={
        "X-Count": str(rows.size), "X-Total": str(found.total), "X-Order": found.kind,
        "X-Axes": ",".join(map(str, found.axes)), "X-Bounds": json.dumps(found.bounds),
        **(IMMUTABLE if found.kind == "lod" and not service.edited(job, column)
           else {"Cache-Control": "no-store"})})
