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
from typing import Annotated

import numpy as np
from fastapi import APIRouter, HTTPException, Path, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from projector.server.deps import JobsDep, ServiceDep
from projector.server.job_responses import find_job, not_done
from projector.server.routes.lod import parse_axes

from projector_core.data.model import Embedding
from projector_core.jobs.engine import Job, JobStatus
from projector_core.projection.jobs import projection_result
from projector_core.tiles.build import MAX_LEVEL
from projector_core.tiles.source import FrameTiles, MemoryTiles, TileSource

router = APIRouter(prefix="/api", tags=["level of detail"])
# A job's id is random and its result never changes: its tiles and their index are immutable
# (a second visit that finds the same job takes them from the browser's cache). Early tiles
# are not: they become the computed ones.
IMMUTABLE = {"Cache-Control": "private, max-age=31536000, immutable"}
LAYOUTS = ("tsne", "umap")  # methods whose running jobs answer early tiles at once
AxesQuery = Annotated[str | None, Query(description="Coordinate columns, e.g. 0,1")]


async def _source(jobs: JobsDep, service: ServiceDep, job_id: str,
                  axes: str | None) -> TileSource:
    """The done job's tiles over ``axes`` (waits for a running job)."""
    job = find_job(jobs, job_id)
    await job.finished()
    if job.status is not JobStatus.DONE:
        raise not_done(job)
    cols = projection_result(job).coordinates.shape[1]
    try:
        return service.tile_source(job, parse_axes(axes, cols, tiles=True, as_shown=True))
    except ValueError as error:  # a comparison: it has no layout
        raise HTTPException(422, str(error)) from None


def _placed_so_far(service: ServiceDep, job: Job, axes: str | None) -> FrameTiles:
    """A running t-SNE/UMAP's early tiles: the points its latest (whole or thin) frame has
    placed; none before its first frame."""
    frame = job.frame
    dims = int(job.about.get("dims") or 2)
    coordinates = frame.coordinates if frame is not None else np.zeros((0, dims), np.float32)
    cols = coordinates.shape[1]
    shape = getattr(job.source, "shape", None)
    return FrameTiles(service.lod, job, parse_axes(axes, cols, tiles=True, as_shown=True),
                      coordinates, shape[0] if shape else coordinates.shape[0],
                      frame.stride if frame is not None else 1)


@router.get("/jobs/{job_id}/tiles",
            responses={404: {"description": "Unknown job"},
                       409: {"description": "The job failed or was cancelled"}})
async def get_tile_index(job_id: str, response: Response, jobs: JobsDep, service: ServiceDep,
                         axes: AxesQuery = None) -> dict:
    source = await _source(jobs, service, job_id, axes)
    result = projection_result(find_job(jobs, job_id))
    # The result's columns and info beside the index (its JSON is the TileSource contract):
    # a page that shows tiles alone needs no more of the result.
    response.headers.update({**IMMUTABLE, "X-Columns": str(result.coordinates.shape[1]),
                             "X-Info": json.dumps(result.info, ensure_ascii=True)})
    return await run_in_threadpool(source.manifest)


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
    job_id: str, jobs: JobsDep, service: ServiceDep,
    z: Annotated[int, Path(ge=0, le=MAX_LEVEL)], x: Annotated[int, Path(ge=0)],
    y: Annotated[int, Path(ge=0)], axes: AxesQuery = None,
    column: Annotated[str | None, Query(description="A metadata column whose codes come "
                                                    "along")] = None,
    early: Annotated[bool, Query(description="While the tiles are still to be computed, "
                                             "answer a random sample of the cell at once")] = False,
) -> Response:
    if x >= 1 << z or y >= 1 << z:
        raise HTTPException(422, f"tile {z}/{x}/{y}: x and y run to {(1 << z) - 1} at level {z}")
    job = find_job(jobs, job_id)
    source: TileSource
    if early and not job.status.finished and job.about.get("method") in LAYOUTS:
        source = _placed_so_far(service, job, axes)
    else:
        source = await _source(jobs, service, job_id, axes)

    def answer() -> Response:
        try:
            if column is not None:
                source.codes_dictionary(column)  # an unknown column: a 422 even for no point
            tile = None
            if early and isinstance(source, MemoryTiles):  # tiles still to be computed
                tile = source.read_early(z, x, y, column)
                total, bounds, chosen = source.total, source.bounds(), source.axes
            if tile is None:
                kind, tile = "lod", source.read(z, x, y, column)
                manifest = source.manifest()
                total, bounds, chosen = manifest["total"], manifest["bounds"], manifest["axes"]
            else:
                kind = "random"
        except KeyError as error:
            raise HTTPException(422, str(error.args[0])) from None
        if tile is None:  # no point in this cell
            tile = (np.zeros(0, np.uint32), np.zeros((0, len(chosen)), np.float32),
                    np.zeros(0, np.int32) if column is not None else None)
        rows, coordinates, codes = tile
        body = rows.astype("<u4").tobytes() + np.ascontiguousarray(coordinates, "<f4").tobytes()
        if codes is not None:
            body += codes.astype("<i4").tobytes()
        return Response(body, media_type="application/octet-stream", headers={
            "X-Count": str(rows.size), "X-Total": str(total), "X-Order": kind,
            "X-Axes": ",".join(map(str, chosen)), "X-Bounds": json.dumps(bounds),
            **(IMMUTABLE if kind == "lod" and not _edited(job, column)
               else {"Cache-Control": "no-store"})})
    return await run_in_threadpool(answer)


def _edited(job: Job, column: str | None) -> bool:
    """Whether ``column``'s codes change while the job stays (an annotation column): its
    tiles are then not immutable."""
    return column is not None and isinstance(job.source, Embedding) and \
        column in job.source.added_columns()
