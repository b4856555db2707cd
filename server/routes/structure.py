"""The structure of a finished projection: its clusters (with labels) and its quality.

``GET /api/jobs/ID/clusters`` and ``GET /api/jobs/ID/quality`` answer 409 while the job is
not done (as ``/result`` does) and 422 for a parameter the data cannot satisfy. Both are
computed on a worker thread and kept for the last few requests, since a map asks again
whenever the user comes back to a view.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Annotated, Any, Literal

import numpy as np
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import Response
from projector.server.job_responses import JobsDep, find_job, not_done

from projector_core.jobs import Job, JobStatus
from projector_core.kernels.cluster_labels import cluster_labels, column_kind
from projector_core.kernels.clusters import cluster_points, default_min_cluster_size
from projector_core.kernels.quality import EXACT_LIMIT, SAMPLE_SIZE, projection_quality
from projector_core.model import Embedding
from projector_core.projection_jobs import projection_result

router = APIRouter(prefix="/api", tags=["structure"])

_KEEP = 8
_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "Unknown job"},
    409: {"description": "The job is not done (queued, running, failed or cancelled)"},
    422: {"description": "A bad parameter, an unknown metadata column, or one the data "
                         "cannot satisfy"},
}


class _Answers:
    """The last few answers, by job and parameters (a job's result never changes)."""

    def __init__(self) -> None:
        self._items: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...], compute: Callable[[], bytes]) -> bytes:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        body = compute()
        with self._lock:
            self._items[key] = body
            while len(self._items) > _KEEP:
                self._items.popitem(last=False)
        return body


def _answers(request: Request) -> _Answers:
    state = request.app.state
    if not hasattr(state, "structure_answers"):
        state.structure_answers = _Answers()
    return state.structure_answers


def _done_job(jobs: Any, job_id: str) -> Job:
    job = find_job(jobs, job_id)
    if job.status is not JobStatus.DONE:
        raise not_done(job)
    return job


def _picture(job: Job) -> np.ndarray:
    """The coordinates the map shows: PCA's first two components, every column otherwise."""
    result = projection_result(job)
    return result.coordinates[:, :2] if result.info.get("method") == "pca" else result.coordinates


def _source(job: Job, need: str) -> Embedding:
    if not isinstance(job.source, Embedding):
        raise HTTPException(422, f"job {job.id} does not know its data, so {need} is not available")
    return job.source


def _json(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":"), allow_nan=False).encode()


def _no_clusters_hint(data: np.ndarray, space: str, size: int) -> str:
    """Why HDBSCAN may have found nothing, and what to try instead."""
    if space == "original" and data.shape[1] > 10:
        return (f"No dense groups of at least {size} points in the original "
                f"{data.shape[1]}-dimensional space: distances there are nearly all alike. "
                "Cluster the projected points instead, or lower Min size.")
    return (f"No dense groups of at least {size} points: every point counts as noise. "
            "Lower Min size, or run t-SNE or UMAP, whose pictures separate groups more than PCA.")


@router.get("/jobs/{job_id}/clusters", response_class=Response, responses={
    200: {"description": '{"assignment": [top-level cluster id per point, -1 = noise or no '
                         'coordinates], "clusters": [{"id", "size", "label", "centroid", '
                         '"parent", "point" (the member at the centroid)}], "min_cluster_size", '
                         '"sampled", "label_kind" (how labels were made: categorical, unique = '
                         'by central members, numeric, text), "hint" (why no clusters, or '
                         'null)}. Clusters with a parent '
                         "are sub-clusters found inside it (for zoomed-in views).",
          "content": {"application/json": {}}},
    **_ERRORS})
def get_clusters(
    job_id: str,
    request: Request,
    jobs: JobsDep,
    min_cluster_size: Annotated[int | None, Query(
        ge=2, description="HDBSCAN's smallest cluster (default about sqrt(N) / 2)")] = None,
    label_column: Annotated[str | None, Query(
        description="Metadata column the labels are made from")] = None,
    space: Annotated[Literal["projection", "original"], Query(
        description="Cluster the projected coordinates or the original vectors")] = "projection",
) -> Response:
    job = _done_job(jobs, job_id)
    picture = _picture(job)
    metadata = None
    if label_column is not None:
        metadata = _source(job, "a label column").metadata()
        if metadata is None or label_column not in metadata.names:
            known = ", ".join(metadata.names) if metadata is not None else "none"
            raise HTTPException(422, f"unknown metadata column {label_column!r} (columns: {known})")
    size = min_cluster_size or default_min_cluster_size(picture.shape[0])

    def compute() -> bytes:
        data = _source(job, "clustering the original space").vectors() if space == "original" \
            else picture
        try:
            found = cluster_points(data, picture, size)
        except ValueError as error:
            raise HTTPException(422, str(error)) from None
        groups = [c.members for c in found.clusters]
        labels = (cluster_labels(metadata, label_column, groups, picture) if metadata and label_column
                  else [f"cluster {c.id}" for c in found.clusters])
        return _json({
            "label_kind": column_kind(metadata, label_column) if metadata and label_column else None,
            "hint": None if found.clusters else _no_clusters_hint(data, space, size),
            "assignment": found.assignment.tolist(),
            "clusters": [{"id": c.id, "size": int(c.members.size), "label": label,
                          "centroid": c.centroid, "parent": c.parent, "point": c.point}
                         for c, label in zip(found.clusters, labels, strict=True)],
            "min_cluster_size": size,
            "sampled": found.sampled,
        })

    body = _answers(request).get(("clusters", job.id, size, label_column, space), compute)
    return Response(body, media_type="application/json")


@router.get("/jobs/{job_id}/quality", response_class=Response, responses={
    200: {"description": '{"per_point": [fraction or null per point], "mean", '
                         '"trustworthiness", "continuity", "k", "excluded_rows", '
                         f'"sample_size"}}. Exact up to {EXACT_LIMIT} points; above, an even '
                         f"sample of {SAMPLE_SIZE} points (null elsewhere).",
          "content": {"application/json": {}}},
    **_ERRORS})
def get_quality(
    job_id: str,
    request: Request,
    jobs: JobsDep,
    k: Annotated[int, Query(ge=1, le=1000, description="Neighbours per point")] = 10,
    metric: Annotated[Literal["cosine", "euclidean"], Query(
        description="Distance in the original space")] = "cosine",
) -> Response:
    job = _done_job(jobs, job_id)
    embedding = _source(job, "quality")

    def compute() -> bytes:
        try:
            found = projection_quality(embedding.vectors(), _picture(job), k, metric)
        except ValueError as error:
            raise HTTPException(422, str(error)) from None
        per_point: list[Any] = found.per_point.tolist()
        for i in np.flatnonzero(np.isnan(found.per_point)):
            per_point[i] = None
        return _json({"per_point": per_point, "mean": found.mean,
                      "trustworthiness": found.trustworthiness, "continuity": found.continuity,
                      "k": found.k, "metric": metric, "excluded_rows": found.excluded_rows,
                      "sample_size": found.sample_size})

    body = _answers(request).get(("quality", job.id, k, metric), compute)
    return Response(body, media_type="application/json")
