"""``GET /api/export/site``: the UI's "Export site", one embedding's view as a static site in a
zip, built by this server's service (what ``projector export`` writes), so projections already
computed here are reused, not computed again."""

from __future__ import annotations

import json
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse
from projector.server.deps import ServiceDep
from projector.server.routes.ui import site_page
from starlette.background import BackgroundTask

from projector_core.export.site import ExportOptions
from projector_core.formats import json_text
from projector_core.projection.default_request import WITH_DEFAULTS

router = APIRouter(prefix="/api", tags=["export"])


def _zip(folder: Path, target: Path) -> None:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                stored = path.suffix in (".gz", ".png")  # compressed already
                archive.write(path, path.relative_to(folder).as_posix(),
                              zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED)


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
               404: {"description": "Unknown run or embedding"},
               422: {"description": "Unknown projection, bad parameter, or data the "
                                    "projection cannot use"}},
)
async def export_site_zip(
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
) -> FileResponse:
    service.embedding(run, embedding)  # 404 naming what is unknown
    methods = tuple(m.strip() for m in projection.split(",") if m.strip())
    if not methods or any(m not in WITH_DEFAULTS for m in methods):
        raise ValueError(f"projection {projection!r}: choose from {', '.join(WITH_DEFAULTS)}")
    asked = _requests(requests, methods)
    options = ExportOptions(run=run, embedding=embedding, projections=methods,
                            neighbors=neighbors, max_points=max_points, gzip=gzip,
                            requests=asked, view=view)
    work = Path(tempfile.mkdtemp(prefix="projector-site-"))

    def build() -> Path:
        service.export_site(work / "site", site_page(), options, lambda stage, fraction: None)
        target = work / "site.zip"
        _zip(work / "site", target)
        return target

    try:
        target = await run_in_threadpool(build)
    except BaseException:  # a ValueError (DataError included) is answered 422
        shutil.rmtree(work, ignore_errors=True)
        raise
    name = f"{embedding}-site.zip".replace("/", "_")
    return FileResponse(target, media_type="application/zip", filename=name,
                        background=BackgroundTask(shutil.rmtree, work, ignore_errors=True))
