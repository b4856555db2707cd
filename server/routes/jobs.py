"""Jobs: status, cancel, pause/resume, the result (JSON or float32 bytes), and a live stream.

``GET /api/jobs`` lists the jobs with what each computes (kind, method, run, embedding).
``GET /api/jobs/ID/result`` before the job is done answers 409 Conflict with the job's status
in the message (425 Too Early is about TLS early data, so it does not fit).

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
"""

from __future__ import annotations

import time
from typing import Any, Literal

import numpy as np
from fastapi import APIRouter, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import Response
from projector.server.deps import ServiceDep
from projector.server.job_responses import (
    JobsDep,
    ProjectionOut,
    find_job,
    not_done,
    result_response,
    wants_binary,
)
from pydantic import BaseModel, Field

from projector_core.jobs.engine import Job, JobStatus
from projector_core.projection.jobs import projection_result

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


class JobAboutOut(JobOut):
    kind: Literal["projection", "compare", "unknown"]
    method: str | None = Field(None, description='"pca", "tsne", ...; "compare" for a comparison')
    run: str | None = None
    embedding: str | None = None
    dims: int | None = Field(None, description="A projection's requested dimensions")
    other_run: str | None = Field(None, description="A comparison's embedding B")
    other_embedding: str | None = None


class JobsOut(BaseModel):
    jobs: list[JobAboutOut] = Field(description="Every job still kept, oldest first")


@router.get("/jobs")
def list_jobs(service: ServiceDep) -> JobsOut:
    """The jobs this server runs or keeps, each with what it computes."""
    return JobsOut(jobs=[JobAboutOut(**job) for job in service.list_jobs()])


@router.get("/jobs/{job_id}")
def get_job(job_id: str, jobs: JobsDep, request: Request) -> JobOut:
    """The status; a poll also counts as following a job a page started (``cancel_unfollowed``)."""
    job = find_job(jobs, job_id)
    request.app.state.followers.seen(job)
    return JobOut(**job.snapshot())


@router.delete("/jobs/{job_id}")
def cancel_job(job_id: str, jobs: JobsDep) -> JobOut:
    """Cancel: the status is "cancelled" at once (unless already finished)."""
    job = find_job(jobs, job_id)
    job.cancel()
    return JobOut(**job.snapshot())


@router.post("/jobs/{job_id}/pause")
def pause_job(job_id: str, jobs: JobsDep) -> JobOut:
    """Hold a running t-SNE/UMAP at its next step (its status stays "running", paused true)."""
    job = find_job(jobs, job_id)
    job.pause()
    return JobOut(**job.snapshot())


@router.post("/jobs/{job_id}/resume")
def resume_job(job_id: str, jobs: JobsDep) -> JobOut:
    job = find_job(jobs, job_id)
    job.resume()
    return JobOut(**job.snapshot())


@router.get(
    "/jobs/{job_id}/result",
    response_class=Response,
    responses={
        200: {"content": {"application/json": {"schema": ProjectionOut.model_json_schema()},
                          "application/octet-stream": {}},
              "description": "JSON, or with Accept: application/octet-stream N x k float32 "
                             "little-endian (header X-Shape: N,k; X-Info: the info as JSON)"},
        409: {"description": "The job is not done (queued, running, failed or cancelled)"},
    },
)
def get_result(job_id: str, request: Request, jobs: JobsDep) -> Response:
    job = find_job(jobs, job_id)
    if job.status is not JobStatus.DONE:
        raise not_done(job)
    return result_response(job, wants_binary(request))


@router.websocket("/jobs/{job_id}/stream")
async def stream_job(websocket: WebSocket, job_id: str) -> None:
    await websocket.accept()
    try:
        job = websocket.app.state.jobs.get(job_id)
    except KeyError:
        await websocket.close(code=UNKNOWN_JOB, reason=f"unknown job {job_id}")
        return
    try:
        with websocket.app.state.followers.following(job):
            await _follow(websocket, job)
    except (WebSocketDisconnect, OSError):
        return  # the follower left; the job goes on unless a page started it and none is back


async def _follow(websocket: WebSocket, job: Job) -> None:
    seen = -1
    sent_seq = 0
    sent_at = -float("inf")
    while not job.status.finished:
        seen = await job.changed(seen, HEARTBEAT)
        if job.status.finished:
            break
        await websocket.send_json({"type": "progress", **job.snapshot()})
        frame = job.frame
        if frame is None:
            continue
        now = time.monotonic()
        gap = min(FRAME_REPEAT, frame.coordinates.nbytes / STREAM_BYTES_PER_SECOND)
        if (frame.seq != sent_seq and now - sent_at >= gap) or now - sent_at >= FRAME_REPEAT:
            await _send_frame(websocket, job, frame.coordinates, final=False)
            sent_seq, sent_at = frame.seq, now
    final: dict[str, Any] = {"type": "status", **job.snapshot()}
    if job.status is JobStatus.DONE:
        result = projection_result(job)
        await _send_frame(websocket, job, result.coordinates, final=True)
        final["info"] = result.info
    await websocket.send_json(final)
    await websocket.close(1000)


async def _send_frame(websocket: WebSocket, job: Job, coordinates: np.ndarray,
                      final: bool) -> None:
    await websocket.send_json({"type": "frame", **job.snapshot(),
                               "shape": list(coordinates.shape), "final": final})
    await websocket.send_bytes(np.ascontiguousarray(coordinates, dtype="<f4").tobytes())
