"""The structure of a finished projection: its clusters (with labels) and its quality.

``GET /api/jobs/ID/clusters`` and ``GET /api/jobs/ID/quality`` answer 409 while the job is
not done (as ``/result`` does) and 422 for a parameter the data cannot satisfy, or for a
comparison job (it has no layout). The projection service (``projector_core.service``)
computes both, on a worker thread, and keeps the last few answers; the MCP ``clusters`` tool
asks it the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import Response
from projector.server.deps import ServiceDep
from projector.server.job_responses import JobsDep, find_job, not_done
from pydantic import BaseModel, Field

from projector_core.jobs.engine import Job, JobStatus
from projector_core.kernels.quality import EXACT_LIMIT, SAMPLE_SIZE

router = APIRouter(prefix="/api", tags=["structure"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "Unknown job"},
    409: {"description": "The job is not done (queued, running, failed or cancelled)"},
    422: {"description": "A bad parameter, an unknown metadata column, one the data "
                         "cannot satisfy, or a comparison job (not a projection)"},
}


class ClusterOut(BaseModel):
    id: int
    size: int
    label: str = Field(description='Commonest values of the label column ("7 (96%)"), or '
                                   '"cluster ID"')
    centroid: list[float] = Field(description="Where the label sits: the member `point`'s "
                                              "coordinates")
    parent: int | None = Field(description="The top-level cluster a sub-cluster lies in")
    point: int = Field(description="The member nearest the members' mean")


class ClustersOut(BaseModel):
    assignment: list[int] = Field(description="Top-level cluster per point; -1: noise or no "
                                              "coordinates")
    clusters: list[ClusterOut] = Field(description="Top-level clusters, then sub-clusters "
                                                   "(for zoomed-in views)")
    min_cluster_size: int
    sampled: int | None = Field(description="Points HDBSCAN saw when a sample stood for the set")
    label_kind: str | None = Field(description="How the labels were made from the label column: "
                                               "categorical, unique (by central members), "
                                               "numeric, text; null without a column")
    hint: str | None = Field(description="Why no clusters were found and what to try; null "
                                         "when some were")


class QualityOut(BaseModel):
    per_point: list[float | None] = Field(description="Share of each point's original-space "
                                                      "neighbours kept; null where not measured")
    mean: float | None
    trustworthiness: float | None
    continuity: float | None
    k: int
    metric: Literal["cosine", "euclidean"]
    excluded_rows: int
    sample_size: int | None


def _done_job(jobs: Any, job_id: str) -> Job:
    job = find_job(jobs, job_id)
    if job.status is not JobStatus.DONE:
        raise not_done(job)
    return job


def _json(payload: dict[str, Any]) -> Response:
    body = json.dumps(payload, separators=(",", ":"), allow_nan=False).encode()
    return Response(body, media_type="application/json")


def _answer(compute: Callable[[], dict[str, Any]]) -> Response:
    """The service's answer as compact JSON; ValueError (a compare job, a bad parameter) is 422."""
    return _json(compute())


@router.get("/jobs/{job_id}/clusters", response_model=ClustersOut, responses={
    200: {"description": "HDBSCAN clusters; those with a parent are sub-clusters found inside "
                         "it (for zoomed-in views)."},
    **_ERRORS})
def get_clusters(
    job_id: str,
    jobs: JobsDep,
    service: ServiceDep,
    min_cluster_size: Annotated[int | None, Query(
        ge=2, description="HDBSCAN's smallest cluster (default about sqrt(N) / 2)")] = None,
    label_column: Annotated[str | None, Query(
        description="Metadata column the labels are made from")] = None,
    space: Annotated[Literal["projection", "original"], Query(
        description="Cluster the projected coordinates or the original vectors")] = "projection",
) -> Response:
    job = _done_job(jobs, job_id)
    return _answer(lambda: service.clusters(job, min_cluster_size, label_column, space))


@router.get("/jobs/{job_id}/quality", response_model=QualityOut, responses={
    200: {"description": f"Exact up to {EXACT_LIMIT} points; above, an even sample of "
                         f"{SAMPLE_SIZE} points (null elsewhere)."},
    **_ERRORS})
def get_quality(
    job_id: str,
    jobs: JobsDep,
    service: ServiceDep,
    k: Annotated[int, Query(ge=1, le=1000, description="Neighbours per point")] = 10,
    metric: Annotated[Literal["cosine", "euclidean"], Query(
        description="Distance in the original space")] = "cosine",
) -> Response:
    job = _done_job(jobs, job_id)
    return _answer(lambda: service.quality(job, k, metric))
