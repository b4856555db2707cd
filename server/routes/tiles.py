"""Level-of-detail tiles of a projection (``projector_core/kernels/lod_tiles.py``).

``GET /api/jobs/ID/tiles`` answers the tile index of a done projection over ``axes`` (default
the first two columns, three for a 3D result): JSON ``{"budget", "total", "axes", "box":
{"lo", "hi"}, "bounds": {"lo", "hi"}, "tiles": [[z, x, y, count], ...]}``. ``box`` is the
quadtree's square over the first two axes, ``bounds`` every axis's range (the fit of the
whole set), ``columns`` and ``info`` the result's (what a page showing tiles alone needs of it).
``GET /api/jobs/ID/tiles/Z/X/Y`` answers one tile: ``count`` little-endian uint32
row ids in level-of-detail order, then count x k float32 coordinates over ``axes``, then, with
``column``, count int32 codes into that metadata column's dictionary (as
``GET /api/metadata/column`` answers it). A tile that holds no point answers no bytes
(``X-Count: 0``). Both wait for a running job. With ``early=true`` a tile does not wait for
tiles still to be computed: it answers at once the points of its cell among one fixed random
sample of ``budget * 4^z`` points (``X-Order: random``; else ``lod``), so a first picture
never waits for them.
"""

from __future__ import annotations

import json
from typing import Annotated

import numpy as np
from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from projector.server.job_responses import JobsDep, find_job, not_done
from projector.server.routes.lod import _as_shown, _axes, lod_store

from projector_core.jobs.engine import Job, JobStatus
from projector_core.kernels.lod_tiles import MAX_LEVEL, TILE_BUDGET, early_tile
from projector_core.projection.jobs import projection_result

router = APIRouter(prefix="/api", tags=["level of detail"])
# A job's id is random and its result never changes: its tiles and their index are immutable
# (a second visit that finds the same job takes them from the browser's cache). Early tiles
# are not: they become the computed ones.
IMMUTABLE = {"Cache-Control": "private, max-age=31536000, immutable"}
AxesQuery = Annotated[str | None, Query(description="Coordinate columns, e.g. 0,1")]


async def _done(jobs: JobsDep, job_id: str, axes: str | None) -> tuple[Job, list[int]]:
    job = find_job(jobs, job_id)
    await job.finished()
    if job.status is not JobStatus.DONE:
        raise not_done(job)
    cols = projection_result(job).coordinates.shape[1]
    return job, _axes(_as_shown(axes, cols), cols)


def _plane(bounds: dict[str, list[float]]) -> tuple[np.ndarray, np.ndarray]:
    """The first two axes' low and high corner of ``bounds`` (0 for a missing second axis)."""
    lo, hi = np.zeros(2), np.zeros(2)
    lo[:len(bounds["lo"][:2])] = bounds["lo"][:2]
    hi[:len(bounds["hi"][:2])] = bounds["hi"][:2]
    return lo, hi


@router.get("/jobs/{job_id}/tiles",
            responses={404: {"description": "Unknown job"},
                       409: {"description": "The job failed or was cancelled"}})
async def get_tile_index(job_id: str, request: Request, response: Response, jobs: JobsDep,
                         axes: AxesQuery = None) -> dict:
    job, chosen = await _done(jobs, job_id, axes)
    store = lod_store(request)
    response.headers.update(IMMUTABLE)

    def answer() -> dict:
        result = projection_result(job)  # its columns and info: a page that shows tiles alone
        return {**store.tiles(job, chosen).manifest(), "axes": chosen,
                "bounds": store.bounds(job, chosen), "columns": result.coordinates.shape[1],
                "info": result.info}
    return await run_in_threadpool(answer)


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
    job_id: str, request: Request, jobs: JobsDep,
    z: Annotated[int, Path(ge=0, le=MAX_LEVEL)], x: Annotated[int, Path(ge=0)],
    y: Annotated[int, Path(ge=0)], axes: AxesQuery = None,
    column: Annotated[str | None, Query(description="A metadata column whose codes come "
                                                    "along")] = None,
    early: Annotated[bool, Query(description="While the tiles are still to be computed, "
                                             "answer a random sample of the cell at once")] = False,
) -> Response:
    if x >= 1 << z or y >= 1 << z:
        raise HTTPException(422, f"tile {z}/{x}/{y}: x and y run to {(1 << z) - 1} at level {z}")
    job, chosen = await _done(jobs, job_id, axes)
    store = lod_store(request)

    def answer() -> Response:
        codes = None
        if column is not None:
            metadata = job.source.metadata() if job.source is not None else None
            if metadata is None or column not in metadata.names:
                raise HTTPException(422, f"unknown metadata column {column!r}")
            codes = metadata.categorical(column)[1]
        all_coordinates = projection_result(job).coordinates
        tiles = store.peek_tiles(job, chosen) if early else None
        kind = "lod"
        if tiles is None and early:
            kind = "random"
            lo, hi = _plane(store.bounds(job, chosen))  # the tiles' box: the points' range
            rows = early_tile(all_coordinates, chosen, lo, hi, z, x, y, TILE_BUDGET)
        else:
            tiles = store.tiles(job, chosen) if tiles is None else tiles
            where = tiles.find(z, x, y)
            rows = tiles.rows[where] if where is not None else np.zeros(0, np.uint32)
        coordinates = all_coordinates[rows][:, chosen]
        body = rows.astype("<u4").tobytes() + np.ascontiguousarray(coordinates, "<f4").tobytes()
        if codes is not None:
            body += codes[rows].astype("<i4").tobytes()
        return Response(body, media_type="application/octet-stream", headers={
            "X-Count": str(rows.size), "X-Total": str(all_coordinates.shape[0]), "X-Order": kind,
            "X-Axes": ",".join(map(str, chosen)),
            "X-Bounds": json.dumps(store.bounds(job, chosen)),
            **(IMMUTABLE if kind == "lod" else {"Cache-Control": "no-store"})})
    return await run_in_threadpool(answer)
