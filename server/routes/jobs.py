"""Jobs: status, cancel, pause/resume, the result (JSON or float32 bytes), and a live stream.

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

import json
import time
from typing import Annotated, Any, Literal

import numpy as np
from fastapi import APIRouter, Depends, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import Response
from pydantic import BaseModel, Field

from projector_core.jobs import Job, JobManager, JobStatus
from projector_core.projections import ProjectionResult

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


class JobCreated(BaseModel):
    job: str


class ProjectionOut(BaseModel):
    coordinates: list[list[float] | None] = Field(
        description="One row per point; null where the point has no coordinates (NaN/Inf input)")
    info: dict[str, Any]


def get_jobs(request: Request) -> JobManager:
    return request.app.state.jobs


JobsDep = Annotated[JobManager, Depends(get_jobs)]


def _job(jobs: JobManager, job_id: str) -> Job:
    try:
        return jobs.get(job_id)
    except KeyError:
        raise HTTPException(404, f"unknown job {job_id!r} (finished jobs are kept for a "
                                 "while, then forgotten)") from None


def wants_binary(request: Request) -> bool:
    return "application/octet-stream" in request.headers.get("accept", "")


def result_response(job: Job, binary: bool) -> Response:
    """A done job's result: float32 bytes (X-Shape, X-Info headers) or JSON with nulls."""
    result: ProjectionResult = job.result
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
    if job.status is JobStatus.FAILED:
        return HTTPException(409, f"job {job.id} failed: {job.error}")
    return HTTPException(409, f"job {job.id} is {job.status.value} (progress "
                              f"{job.progress:.0%}); its result is not available")


@router.get("/jobs/{job_id}")
def get_job(job_id: str, jobs: JobsDep) -> JobOut:
    return JobOut(**_job(jobs, job_id).snapshot())


@router.delete("/jobs/{job_id}")
def cancel_job(job_id: str, jobs: JobsDep) -> JobOut:
    """Cancel: the status is "cancelled" at once (unless already finished)."""
    _job(jobs, job_id)
    return JobOut(**jobs.cancel(job_id).snapshot())


@router.post("/jobs/{job_id}/pause")
def pause_job(job_id: str, jobs: JobsDep) -> JobOut:
    """Hold a running t-SNE/UMAP at its next step (its status stays "running", paused true)."""
    _job(jobs, job_id)
    return JobOut(**jobs.pause(job_id).snapshot())


@router.post("/jobs/{job_id}/resume")
def resume_job(job_id: str, jobs: JobsDep) -> JobOut:
    _job(jobs, job_id)
    return JobOut(**jobs.resume(job_id).snapshot())


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
    job = _job(jobs, job_id)
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
        await _follow(websocket, job)
    except (WebSocketDisconnect, OSError):
        return  # the follower left; the job goes on


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
        await _send_frame(websocket, job, job.result.coordinates, final=True)
        final["info"] = job.result.info
    await websocket.send_json(final)
    await websocket.close(1000)


async def _send_frame(websocket: WebSocket, job: Job, coordinates: np.ndarray,
                      final: bool) -> None:
    await websocket.send_json({"type": "frame", **job.snapshot(),
                               "shape": list(coordinates.shape), "final": final})
    await websocket.send_bytes(np.ascontiguousarray(coordinates, dtype="<f4").tobytes())
