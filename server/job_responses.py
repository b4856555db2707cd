"""What the job routes share: a job by id, and job answers.

A job's failure becomes an HTTP status as a request's error does (``error_responses.py``):
a ValueError (DataError included) is the request's or the data's fault, a 422; anything else
is ours, a 500.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from fastapi import HTTPException, Request
from fastapi.responses import Response
from projector.server.deps import JobsDep as JobsDep  # routes/tiles.py imports it from here
from projector.server.error_responses import status_for
from pydantic import BaseModel, Field

from projector_core.jobs.engine import Job, JobManager
from projector_core.projection.jobs import NotDone, projection_result


class JobCreated(BaseModel):
    job: str


class ProjectionOut(BaseModel):
    coordinates: list[list[float] | None] = Field(
        description="One row per point; null where the point has no coordinates (NaN/Inf input)")
    info: dict[str, Any]


def find_job(jobs: JobManager, job_id: str) -> Job:
    """The job, or a 404 saying it is unknown or forgotten."""
    try:
        return jobs.get(job_id)
    except KeyError:
        raise HTTPException(404, f"unknown job {job_id!r} (finished jobs are kept for a "
                                 "while, then forgotten)") from None


def failure_status(job: Job) -> int:
    """The HTTP status of a failed job: that of what it raised (``status_for``)."""
    return status_for(job.failed_with)


def wants_binary(request: Request) -> bool:
    return "application/octet-stream" in request.headers.get("accept", "")


def result_response(job: Job, binary: bool) -> Response:
    """A done job's result: float32 bytes (X-Shape, X-Info headers) or JSON with nulls."""
    result = projection_result(job)
    coordinates = result.coordinates
    n, k = coordinates.shape
    if binary:
        return Response(
            np.ascontiguousarray(coordinates, dtype="<f4").tobytes(),
            media_type="application/octet-stream",
            headers={"X-Shape": f"{n},{k}", "X-Job": job.id,
                     "X-Info": json.dumps(result.info, ensure_ascii=True)})
    rows: list[Any] = coordinates.tolist()
    for i in np.flatnonzero(~np.isfinite(coordinates).all(axis=1)):
        rows[i] = None
    body = json.dumps({"coordinates": rows, "info": result.info}, separators=(",", ":"))
    return Response(body, media_type="application/json", headers={"X-Job": job.id})


def not_done(job: Job) -> HTTPException:
    return HTTPException(409, str(NotDone(job)))
