"""Questions over every point of a tiled projection, answered by the server
(``projector_core/tiles/queries.py`` over the job's tiles), so a page that holds only
the tiles on screen still picks, selects and searches exactly over all points.

- ``GET /api/jobs/ID/pick?x=&y=&radius=&axes=``: the nearest point to (x, y) within
  ``radius`` in the plane of the first two axes (projection units).
- ``POST /api/jobs/ID/select`` with ``{"box": [x0, y0, x1, y1]}`` or ``{"polygon": [[x, y],
  ...]}`` (optional ``axes``, ``limit``, ``column``): the count, the first ``limit`` rows in
  row order and the region itself (a page highlights its tile points by testing them against
  it, never by a list of every id); with ``column`` the counts of its values inside.
- ``GET /api/jobs/ID/search?column=&query=&regex=&limit=``: the count, the first rows and the
  matching dictionary codes of ``column`` (tiles carry codes with ``column=``).

They answer a job that is done (409 before; 422 for a comparison, which has no layout).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from projector.server.deps import ServiceDep
from pydantic import BaseModel, ConfigDict, Field

from projector_core.tiles.queries import LIMIT_MAX, POLYGON_MAX, Region, to_dict

router = APIRouter(prefix="/api", tags=["level of detail"])
LIMIT_DEFAULT = 10_000
QUERY_MAX = 1_000  # characters of a search query
ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "Unknown job"},
    409: {"description": "The job is not done (running, failed or cancelled)"},
    422: {"description": "A comparison job (no layout), bad axes, an unknown metadata column, "
                         "a bad region or regular expression"},
}
Finite = Annotated[float, Field(allow_inf_nan=False)]


class PickOut(BaseModel):
    row: int | None = Field(description="The nearest point's row; null when none is within "
                                        "the radius")
    distance: float | None = Field(description="Its distance to (x, y), projection units")
    coords: list[float] | None = Field(description="Its coordinates over the axes")


class RegionIn(BaseModel):
    """A region of a done projection's map: a box or a polygon, over the axes shown (what
    ``select`` and an annotation of a region take)."""

    model_config = ConfigDict(extra="forbid")

    box: list[Finite] | None = Field(None, min_length=4, max_length=4,
                                     description="[x0, y0, x1, y1]; its edges are inside")
    polygon: list[list[Finite]] | None = Field(
        None, min_length=3, max_length=POLYGON_MAX,
        description="[[x, y], ...]: inside by the even-odd rule, as the page's lasso")
    axes: str | list[int] | None = Field(None, description="Coordinate columns, e.g. '0,1' "
                                                           "(default the first two)")


class SelectIn(RegionIn):
    limit: int = Field(LIMIT_DEFAULT, ge=0, le=LIMIT_MAX, description="Rows listed at most")
    column: str | None = Field(None, description="A metadata column to count inside the "
                                                 "region")


class RegionOut(BaseModel):
    kind: Literal["region"] = "region"
    polygon: list[list[float]] = Field(description="The region (a box as its four corners)")


class ValueCount(BaseModel):
    value: str
    code: int = Field(description="Its code in the column's dictionary")
    count: int


class SelectOut(BaseModel):
    count: int = Field(description="Points inside the region")
    rows: list[int] = Field(description="The first `limit` of them, in row order")
    truncated: bool = Field(description="Whether more than `limit` are inside")
    selection: RegionOut
    counts: list[ValueCount] | None = Field(
        None, description="With `column`: how many inside hold each value, most first "
                          "(at most 1,000 values)")


class SearchOut(BaseModel):
    count: int = Field(description="Points whose value matches")
    rows: list[int] = Field(description="The first `limit` of them, in row order")
    truncated: bool = Field(description="Whether more than `limit` match")
    codes: list[int] | None = Field(description="The matching values' codes in the column's "
                                                "dictionary (tiles carry them with `column=`); "
                                                "null when over 10,000 values match")


@router.get("/jobs/{job_id}/pick", responses=ERRORS)
def pick_point(
    job_id: str, service: ServiceDep,
    x: Annotated[float, Query(allow_inf_nan=False, description="Projection units")],
    y: Annotated[float, Query(allow_inf_nan=False, description="Projection units")],
    radius: Annotated[float, Query(ge=0, allow_inf_nan=False,
                                   description="Farthest a picked point may be")],
    axes: Annotated[str | None, Query(description="Coordinate columns, e.g. 0,1")] = None,
) -> PickOut:
    """The nearest point to (x, y) within ``radius`` over all points (ties: the lowest row)."""
    found = service.pick(service.job(job_id), axes, x, y, radius)
    return PickOut(row=found.row, distance=found.distance, coords=found.coords)


@router.post("/jobs/{job_id}/select", responses=ERRORS)
def select_region(job_id: str, body: SelectIn, service: ServiceDep) -> SelectOut:
    """The points inside a box or polygon: count, first rows, the region, counts of a column."""
    if (body.box is None) == (body.polygon is None):
        raise ValueError("give exactly one of 'box' [x0, y0, x1, y1] or 'polygon' [[x, y], ...]")
    region = (Region.box(body.box) if body.box is not None
              else Region.of_polygon(body.polygon or []))
    found = service.select(service.job(job_id), body.axes, region, body.limit, body.column)
    counts = None if found.counts is None else [
        ValueCount(value=value, code=code, count=count) for value, code, count in found.counts]
    return SelectOut(count=found.count, rows=found.rows, truncated=found.truncated,
                     selection=RegionOut(**to_dict(region)), counts=counts)


@router.get("/jobs/{job_id}/search", responses=ERRORS)
def search_points(
    job_id: str, service: ServiceDep,
    column: Annotated[str, Query(description="Metadata column to search")],
    query: Annotated[str, Query(max_length=QUERY_MAX,
                                description="Substring, or regular expression with regex=true")],
    regex: Annotated[bool, Query(description="Treat the query as a regular expression")] = False,
    limit: Annotated[int, Query(ge=0, le=LIMIT_MAX, description="Rows listed at most")]
    = LIMIT_DEFAULT,
    axes: Annotated[str | None, Query(description="Coordinate columns, e.g. 0,1")] = None,
) -> SearchOut:
    """Points whose ``column`` matches (case-insensitive; a blank query matches none)."""
    found = service.search_points(service.job(job_id), axes, column, query, regex, limit)
    return SearchOut(count=found.count, rows=found.rows, truncated=found.truncated,
                     codes=found.codes)
