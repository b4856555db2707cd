"""``GET /api/export/site``: the UI's "Export site", one embedding's view as a static site in a
zip, built by this server's service (what ``projector export`` writes), so projections already
computed here are reused, not computed again.

The export is a job of the service's engine (``service/site_exports.py``): at most its worker
count build at once, the rest queue, and a request waits for its own job; one whose client
leaves cancels it (nobody else has its id). With ``background=true`` it answers 202 with the
job at once; ``GET /api/jobs/ID/site.zip`` then answers the zip once it is done."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from projector.server.deps import ServiceDep
from projector.server.job_responses import JobCreated, failure_status
from projector.server.routes.ui import site_page
from starlette.background import BackgroundTask

from projector_core.export.site import ExportOptions
from projector_core.formats import json_text
from projector_core.jobs.job import Job, JobStatus
from projector_core.projection.default_request import WITH_DEFAULTS
from projector_core.service import ProjectionService

router = APIRouter(prefix="/api", tags=["export"])


DISCONNECT_POLL = 1.0  # seconds between looks at a waiting client's connection


def _requests(text: str | None, methods: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The ``requests`` parameter: per exported method, its dims and params (checked by the
    projection's own parameter model when it runs: a bad value is a 422 then)."""
    if not text:
        return {}
    try:
        value = json_text.loads(text, "requests")  # too deep: a DataError, so a 422
    except json.JSONDecodeError as error:
        raise ValueError(f"requests is not JSON: {error}") from None
    if not isinstance(value, dict) or not all(
            k in methods and isinstance(v, dict) and set(v) <= {"dims", "params"}
            for k, v in value.items()):
        raise ValueError('requests: {method: {"dims": ..., "params": {...}}} for the '
                         "exported projections")
    return value


@router.get(
    "/export/site",
    response_class=FileResponse,
    responses={200: {"content": {"application/zip": {}},
                     "description": "The static site (index.html, static/, static.json, data/)"},
               202: {"model": JobCreated, "description": "With background=true: the export's "
                                                        "job (its zip at /api/jobs/ID/site.zip)"},
               404: {"description": "Unknown run or embedding"},
               409: {"description": "The export was cancelled meanwhile"},
               422: {"description": "Unknown projection, bad parameter, or data the "
                                    "projection cannot use"}},
)
async def export_site_zip(
    request: Request,
    service: ServiceDep,
    run: Annotated[str, Query(description="Run name as listed by /api/runs")],
    embedding: Annotated[str, Query(description="Embedding (tensor) name within the run")],
    projection: Annotated[str, Query(description="Projections to include, comma-separated "
                                                 "(pca, tsne, umap)")] = "pca",
    neighbors: Annotated[int, Query(ge=0, le=1000, description="Neighbours kept per point")] = 30,
    max_points: Annotated[int | None, Query(ge=2, description="Keep the first N points of the "
                                                              "level-of-detail order")] = None,
    gzip: Annotated[bool, Query(description="gzip the data files")] = False,
    requests: Annotated[str | None, Query(
        max_length=10000, description='JSON {method: {"dims": 2, "params": {...}}}: the '
                                      "requests to export instead of the app's defaults (the "
                                      "view's own parameters)")] = None,
    view: Annotated[str | None, Query(max_length=20000, description="The app's URL hash "
                                                                    "(#s=...) the site opens "
                                                                    "in")] = None,
    background: Annotated[bool, Query(description="Answer 202 with a job at once (progress at "
                                                  "/api/jobs/ID, the zip at "
                                                  "/api/jobs/ID/site.zip once done)")] = False,
) -> Response:
    service.embedding(run, embedding)  # 404 naming what is unknown
    methods = tuple(m.strip() for m in projection.split(",") if m.strip())
    if not methods or any(m not in WITH_DEFAULTS for m in methods):
        raise ValueError(f"projection {projection!r}: choose from {', '.join(WITH_DEFAULTS)}")
    asked = _requests(requests, methods)
    options = ExportOptions(run=run, embedding=embedding, projections=methods,
                            neighbors=neighbors, max_points=max_points, gzip=gzip,
                            requests=asked, view=view, models=service.models.declared)
    job = service.export_site_job(site_page(), options)
    if background:
        return JSONResponse({"job": job.id}, status_code=202)
    if not await _finished_unless_left(job, request):
        return Response(status_code=499)  # nobody reads it: the client has gone
    return _zip_response(service, job, discard=True)


@router.get(
    "/jobs/{job_id}/site.zip",
    response_class=FileResponse,
    responses={200: {"content": {"application/zip": {}},
                     "description": "The export's static site, as GET /api/export/site answers"},
               404: {"description": "Unknown job, or its zip already sent to the request that "
                                    "waited for it"},
               409: {"description": "The export is not done (queued, running, failed or "
                                    "cancelled)"},
               422: {"description": "Not a site export's job"}},
)
def finished_site_zip(job_id: str, service: ServiceDep) -> Response:
    """A background export's zip, once its job is done (kept until the job is forgotten)."""
    return _zip_response(service, service.job(job_id), discard=False)


async def _finished_unless_left(job: Job, request: Request) -> bool:
    """Wait for ``job``; False (the job cancelled) when the client leaves first."""
    seen = -1
    while not job.status.finished:
        seen = await job.changed(seen, DISCONNECT_POLL)
        if not job.status.finished and await request.is_disconnected():
            job.cancel()  # its own job: nobody else waits for it
            return False
    return True


def _zip_response(service: ProjectionService, job: Job, discard: bool) -> Response:
    """The done job's zip (``discard``: removed once sent); a failure's own status."""
    if job.status is JobStatus.FAILED:
        raise HTTPException(failure_status(job), job.error)
    found = service.site_zip(job)  # NotDone (409) when cancelled
    return FileResponse(found.path, media_type="application/zip", filename=found.name,
                        background=BackgroundTask(found.discard) if discard else None)
