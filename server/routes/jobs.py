"""Jobs (``/api/jobs``): status, cancel, pause/resume, the result (JSON or float32 bytes), a
live stream, and the structure of a finished projection (its clusters and quality). A done
projection's level of detail is in ``lod.py`` and ``tiles.py``.

``GET /api/jobs`` lists the jobs with what each computes (kind, method, run, embedding).
``GET /api/jobs/ID/result`` before the job is done answers 409 Conflict with the job's status
in the message (425 Too Early is about TLS early data, so it does not fit).

``GET /api/jobs/ID/clusters`` and ``GET /api/jobs/ID/quality`` answer 409 while the job is
not done (as ``/result`` does) and 422 for a parameter the data cannot satisfy, or for a
comparison job (it has no layout). The projection service (``projector_core.service``)
computes both, on a worker thread, and keeps the last few answers; the MCP ``clusters`` tool
asks it the same way.

``WS /api/jobs/ID/stream`` sends text messages (JSON) and binary frames:

- ``{"type": "progress", "id", "status", "progress", "iteration", "error", "paused"}`` on every
  change, and at least twice a second;
- ``{"type": "frame", ...the same fields, "shape": [N, k], "final": false}`` followed by one
  binary message of N x k little-endian float32 (NaN for points without coordinates), every
  few iterations and at least once a second while a frame exists;
- at the end, when done, the final frame (``"final": true``) + its bytes; then a last
  ``{"type": "status", ...}`` (with the result's ``info`` when done) and a normal close
  (1000). A follower arriving after the end gets just these. An unknown job is closed with
  code 4404.

``WS /api/jobs/ID/stream?frames=false`` sends the same text messages and no frame: how a page
follows a t-SNE/UMAP it shows from tiles (``tsne_umap_tiles`` in ``/api/runs``), whose
coordinates are too large to come whole.
"""

from __future__ import annotations

import json
import time
from typing import Annotated, Any, Literal

import numpy as np
from fastapi import APIRouter, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse, Response
from projector.server.deps import FollowersDep, ServiceDep
from projector.server.job_responses import (
    JobCreated,
    ProjectionOut,
    result_response,
    text_response,
    wants_binary,
)
from pydantic import BaseModel, Field

from projector_core.jobs.job import Job, JobStatus
from projector_core.kernels.quality import SAMPLE_SIZE
from projector_core.service import ProjectionService, UnknownName

router = APIRouter(prefix="/api", tags=["jobs"],
                   responses={404: {"description": "Unknown job (finished jobs are kept for a "
                                                   "while, then forgotten)"}})

HEARTBEAT = 0.5  # seconds between progress messages when nothing changes
FRAME_REPEAT = 1.0  # an unchanged frame is sent again after this long
STREAM_BYTES_PER_SECOND = 32 * 2**20  # frames of huge data sets are spaced to fit this
UNKNOWN_JOB = 4404  # WebSocket close code: the application's "404"


class JobOut(BaseModel):
    id: str
    status: Literal["queued", "running", "done", "failed", "cancelled"]
    progress: float = Field(ge=0, le=1)
    iteration: int | None
    error: str | None
    paused: bool = Field(description="A running job that waits for resume")
    phase: str | None = Field(None, description="What a t-SNE/UMAP does now: neighbours, "
                              "affinities, initial layout, optimisation, placement")
    phase_progress: float | None = Field(None, ge=0, le=1,
                                         description="How far through that phase, when known")
    priority: Literal["requested", "background"] = Field(
        "requested", description="background: the server's own guess (the default view "
        "prepared at start), which gives way to requested jobs")
    yielding: bool = Field(False, description="A background job held while a requested job runs")


class JobAboutOut(JobOut):
    kind: Literal["projection", "compare", "quality", "model", "export", "unknown"]
    method: str | None = Field(None, description='"pca", "tsne", ...; "compare" for a comparison; '
                                                 '"quality" for a projection\'s quality; '
                                                 '"model" for an embedding\'s model made ready; '
                                                 '"site" for a site export')
    of: str | None = Field(None, description="A quality job's projection job")
    run: str | None = None
    embedding: str | None = None
    dims: int | None = Field(None, description="A projection's requested dimensions")
    other_run: str | None = Field(None, description="A comparison's embedding B")
    other_embedding: str | None = None
    model: str | None = Field(None, description="The model a model job makes ready for search by "
                                                "meaning")


class JobsOut(BaseModel):
    jobs: list[JobAboutOut] = Field(description="Every job still kept, oldest first")


class StreamProgress(JobOut):
    """The stream's message on every change of the job, and at least twice a second."""

    type: Literal["progress"]


class StreamFrame(JobOut):
    """The header of the binary message that follows it: shape[0] x shape[1] little-endian
    float32, NaN for points without coordinates."""

    type: Literal["frame"]
    shape: tuple[int, int] = Field(description="Points, coordinate columns")
    final: bool = Field(description="The finished layout (sent once, when done)")


class StreamStatus(JobOut):
    """The stream's last message, before a normal close (1000)."""

    type: Literal["status"]
    info: dict[str, Any] | None = Field(None, description="The result's info, when done (as "
                                                          "/result's)")


STREAM_MESSAGES = (StreamProgress, StreamFrame, StreamStatus)  # documented by openapi_docs.py


@router.get("/jobs")
def list_jobs(service: ServiceDep) -> JobsOut:
    """The jobs this server runs or keeps, each with what it computes."""
    return JobsOut(jobs=[JobAboutOut(**job) for job in service.list_jobs()])


@router.get("/jobs/{job_id}")
def get_job(job_id: str, service: ServiceDep, followers: FollowersDep) -> JobOut:
    """The status; a poll also counts as following a job a page started (``cancel_unfollowed``)."""
    job = service.job(job_id)
    followers.seen(job)
    return JobOut(**job.snapshot())


@router.delete("/jobs/{job_id}")
def cancel_job(job_id: str, service: ServiceDep) -> JobOut:
    """Cancel: the status is "cancelled" at once (unless already finished)."""
    job = service.job(job_id)
    job.cancel()
    return JobOut(**job.snapshot())


@router.post("/jobs/{job_id}/pause")
def pause_job(job_id: str, service: ServiceDep) -> JobOut:
    """Hold a running t-SNE/UMAP at its next step (its status stays "running", paused true)."""
    job = service.job(job_id)
    job.pause()
    return JobOut(**job.snapshot())


@router.post("/jobs/{job_id}/resume")
def resume_job(job_id: str, service: ServiceDep) -> JobOut:
    job = service.job(job_id)
    job.resume()
    return JobOut(**job.snapshot())


@router.get(
    "/jobs/{job_id}/result",
    response_class=Response,
    responses={
        200: {"content": {"application/json": {"schema": ProjectionOut.model_json_schema()},
                          "application/octet-stream": {}, "text/csv": {},
                          "text/tab-separated-values": {}},
              "description": "JSON, or with Accept: application/octet-stream N x k float32 "
                             "little-endian (header X-Shape: N,k; X-Info: the info as JSON); "
                             "with format=csv or tsv the coordinates over axes as the page's "
                             "download writes them (header index,x,y[,z])"},
        409: {"description": "The job is not done (queued, running, failed or cancelled)"},
        422: {"description": "axes are not 1 to 3 of the result's columns"},
    },
)
def get_result(
    job_id: str, request: Request, service: ServiceDep,
    format: Annotated[Literal["csv", "tsv"] | None, Query(
        description="csv or tsv: the coordinates as text, streamed, a file to save; "
                    "omitted: JSON or float32 bytes by the Accept header")] = None,
    axes: Annotated[str | None, Query(
        description="With format: the coordinate columns, e.g. 0,1,2 (default the first "
                    "two, three for a result of three or more)")] = None,
) -> Response:
    job = service.job(job_id)
    result = service.result(job)  # NotDone: a 409
    if format is None:
        return result_response(job.id, result, wants_binary(request))
    name = f"{job.about.get('embedding') or 'projection'}-{job.about.get('method') or job.id}"
    return text_response(job.id, result.coordinates, "," if format == "csv" else "\t",
                         service.axes(job, axes),
                         f"{''.join(c if c.isalnum() or c in '-_.' else '_' for c in name)}"
                         f".{format}")


def _done_job(service: ProjectionService, job_id: str) -> Job:
    """The job, done: a 404 when unknown, a 409 (NotDone) before it is done."""
    job = service.job(job_id)
    service.result(job)
    return job


_STRUCTURE_ERRORS: dict[int | str, dict[str, Any]] = {
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
    sample_size: int | None = Field(description="Rows trustworthiness and continuity (and the "
                                    "error below) were measured on; null: all, exactly")
    neighbors: Literal["exact", "approximate"] = Field(
        description="Where each point's original-space neighbours come from: exact, or the "
                    "k-means cells of a comparison above the exact budget")
    recall: float | None = Field(description="Approximate: mean recall@k of those neighbours "
                                             "on the sample, against exact ones")
    per_point_error: float | None = Field(
        description="Approximate: mean absolute difference of per_point from its exact value "
                    "on the sample (whose rows hold their exact values)")


def _json(payload: dict[str, Any]) -> Response:
    """Compact JSON: a clusters answer of 1M points is megabytes."""
    body = json.dumps(payload, separators=(",", ":"), allow_nan=False).encode()
    return Response(body, media_type="application/json")


@router.get("/jobs/{job_id}/clusters", response_model=ClustersOut, responses={
    200: {"description": "HDBSCAN clusters; those with a parent are sub-clusters found inside "
                         "it (for zoomed-in views)."},
    **_STRUCTURE_ERRORS})
def get_clusters(
    job_id: str,
    service: ServiceDep,
    min_cluster_size: Annotated[int | None, Query(
        ge=2, description="HDBSCAN's smallest cluster (default about sqrt(N) / 2)")] = None,
    label_column: Annotated[str | None, Query(
        description="Metadata column the labels are made from")] = None,
    space: Annotated[Literal["projection", "original"], Query(
        description="Cluster the projected coordinates or the original vectors")] = "projection",
) -> Response:
    job = _done_job(service, job_id)
    return _json(service.clusters(job, min_cluster_size, label_column, space))


@router.get("/jobs/{job_id}/quality", response_model=QualityOut, responses={
    200: {"description": "A value for every point. Exact while an all-points kNN fits the "
                         "exact budget; above, approximate neighbours with their error, and "
                         f"trustworthiness/continuity from {SAMPLE_SIZE} exact rows."},
    202: {"model": JobCreated, "description": "With background=true: the job computing it "
                                              "(as /api/compare's)"},
    **_STRUCTURE_ERRORS})
def get_quality(
    job_id: str,
    service: ServiceDep,
    k: Annotated[int, Query(ge=1, le=1000, description="Neighbours per point")] = 10,
    metric: Annotated[Literal["cosine", "euclidean"], Query(
        description="Distance in the original space")] = "cosine",
    background: Annotated[bool, Query(description="Answer 202 with a job at once (progress at "
                                                  "/api/jobs/ID, cancel with DELETE); once it "
                                                  "is done, the same request without it "
                                                  "answers at once")] = False,
) -> Response:
    job = _done_job(service, job_id)
    if background:
        return JSONResponse({"job": service.quality_job(job, k, metric).id}, status_code=202)
    return _json(service.quality(job, k, metric))


@router.websocket("/jobs/{job_id}/stream")
async def stream_job(websocket: WebSocket, job_id: str) -> None:
    await websocket.accept()
    service: ProjectionService = websocket.app.state.projection_service
    try:
        job = service.job(job_id)
    except UnknownName as error:
        await websocket.close(code=UNKNOWN_JOB, reason=str(error)[:120])  # at most 123 bytes
        return
    frames = websocket.query_params.get("frames", "true").lower() != "false"
    try:
        with websocket.app.state.followers.following(job):
            await _follow(websocket, service, job, frames)
    except (WebSocketDisconnect, OSError):
        return  # the follower left; the job goes on unless a page started it and none is back


async def _follow(websocket: WebSocket, service: ProjectionService, job: Job,
                  frames: bool) -> None:
    seen = -1
    sent_seq = 0
    sent_at = -float("inf")
    while not job.status.finished:
        seen = await job.changed(seen, HEARTBEAT)
        if job.status.finished:
            break
        await websocket.send_json({"type": "progress", **job.snapshot()})
        frame = job.frame if frames else None
        if frame is None or frame.stride != 1:  # a thin frame is for early tiles only
            continue
        now = time.monotonic()
        gap = min(FRAME_REPEAT, frame.coordinates.nbytes / STREAM_BYTES_PER_SECOND)
        if (frame.seq != sent_seq and now - sent_at >= gap) or now - sent_at >= FRAME_REPEAT:
            await _send_frame(websocket, job, frame.coordinates, final=False)
            sent_seq, sent_at = frame.seq, now
    final: dict[str, Any] = {"type": "status", **job.snapshot()}
    if job.status is JobStatus.DONE:
        result = service.result(job)
        if frames:
            await _send_frame(websocket, job, result.coordinates, final=True)
        final["info"] = result.info
    await websocket.send_json(final)
    await websocket.close(1000)


async def _send_frame(websocket: WebSocket, job: Job, coordinates: np.ndarray,
                      final: bool) -> None:
    await websocket.send_json({"type": "frame", **job.snapshot(),
                               "shape": list(coordinates.shape), "final": final})
    await websocket.send_bytes(np.ascontiguousarray(coordinates, dtype="<f4").tobytes())
