"""What the job routes share: job answers (a result as JSON, float32 bytes or text).

A job's failure becomes an HTTP status as a request's error does (``error_responses.py``):
a ValueError (DataError included) is the request's or the data's fault, a 422; anything else
is ours, a 500.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
from fastapi import Request
from fastapi.responses import Response, StreamingResponse
from projector.server.error_responses import status_for
from pydantic import BaseModel, Field

from projector_core.jobs.job import Job
from projector_core.projection.compute import ProjectionResult

RESULT_BLOCK = 1 << 16  # rows per streamed block of a result


class JobCreated(BaseModel):
    job: str


class ProjectionOut(BaseModel):
    coordinates: list[list[float] | None] = Field(
        description="One row per point; null where the point has no coordinates (NaN/Inf input)")
    info: dict[str, Any]


def failure_status(job: Job) -> int:
    """The HTTP status of a failed job: that of what it raised (``status_for``)."""
    return status_for(job.failed_with)


def wants_binary(request: Request) -> bool:
    return "application/octet-stream" in request.headers.get("accept", "")


def result_response(job_id: str, result: ProjectionResult, binary: bool) -> Response:
    """A done job's result: float32 bytes (X-Shape, X-Info headers) or JSON with nulls.

    Streamed a block of rows at a time: the whole answer as one JSON string of Python floats
    took 4x the matrix at 3M x 10 (issue 25), and a result the workers left on disk
    (``StoredCoordinates``) is read block by block, never whole."""
    coordinates = result.coordinates
    n, k = coordinates.shape
    blocks = (coordinates[start:start + RESULT_BLOCK] for start in range(0, n, RESULT_BLOCK))
    if binary:
        return StreamingResponse(
            (np.ascontiguousarray(block, dtype="<f4").tobytes() for block in blocks),
            media_type="application/octet-stream",
            headers={"X-Shape": f"{n},{k}", "X-Job": job_id, "Content-Length": str(n * k * 4),
                     "X-Info": json.dumps(result.info, ensure_ascii=True)})
    return StreamingResponse(_json_rows(blocks, result.info), media_type="application/json",
                             headers={"X-Job": job_id})


def _json_rows(blocks: Iterator[np.ndarray], info: dict[str, Any]) -> Iterator[str]:
    yield '{"coordinates":['
    first = True
    for block in blocks:
        rows: list[Any] = np.asarray(block).tolist()
        for i in np.flatnonzero(~np.isfinite(block).all(axis=1)):
            rows[i] = None
        text = json.dumps(rows, separators=(",", ":"))[1:-1]
        if text:
            yield ("" if first else ",") + text
            first = False
    yield '],"info":' + json.dumps(info, separators=(",", ":")) + "}"


TEXT_TYPES = {",": "text/csv", "\t": "text/tab-separated-values"}


def text_response(job_id: str, coordinates: np.ndarray, sep: str, axes: list[int],
                  filename: str) -> Response:
    """A done job's coordinates over ``axes`` as CSV or TSV, what the page's "Download"
    writes (tsv.js ``formatCoordinates``): a header ``index,x,y[,z]``, a row per point, an
    empty cell for a missing coordinate. Streamed a block of rows at a time, so a tiled view
    (whose page holds no whole-set coordinates) downloads millions of rows."""
    n = coordinates.shape[0]
    header = sep.join(["index", *"xyz"[:len(axes)]]) + "\n"

    def rows() -> Iterator[str]:
        yield header
        for start in range(0, n, RESULT_BLOCK):
            block = np.asarray(coordinates[start:start + RESULT_BLOCK], np.float64)[:, axes]
            cells = [[repr(v) if np.isfinite(v) else "" for v in row] for row in block.tolist()]
            yield "".join(f"{start + i}{sep}{sep.join(row)}\n" for i, row in enumerate(cells))

    return StreamingResponse(rows(), media_type=TEXT_TYPES[sep], headers={
        "X-Job": job_id, "Content-Disposition": f'attachment; filename="{filename}"'})

