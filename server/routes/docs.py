"""``/docs``: the Swagger UI page, its script and style served by us, so it works offline.

FastAPI's own page loads them from a CDN, which a machine without internet (or a browser
that blocks third parties) never reaches: the page then stays blank; and it starts them with an
inline script, which the Content-Security-Policy refuses (``security_headers.py``), so the page
is our template and ``frontend/js/api_docs.js``. The files come from the ``fastapi-offline``
package, which ships Swagger UI 5 (the 4.x of ``swagger-ui-bundle`` cannot read the OpenAPI 3.1
document FastAPI writes: "Unable to render this definition").
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse
from projector.server.routes.ui import templates

router = APIRouter(include_in_schema=False)

DOCS_PATH = "/docs"  # a page: a link from another site may open it (``access.py``)

# The names the page asks for -> the package's files.
ASSETS = {"swagger-ui-bundle.js": "swagger-ui-bundle.js", "swagger-ui.css": "swagger-ui.css",
          "favicon-32x32.png": "favicon.png"}


def _asset_folder() -> Path:
    import fastapi_offline

    return Path(fastapi_offline.__file__).parent / "static"


@router.get(DOCS_PATH, response_class=HTMLResponse)
def docs(request: Request) -> HTMLResponse:
    root = request.scope.get("root_path", "")
    return templates().TemplateResponse(request, "docs.html", {
        "title": f"{request.app.title} - API", "root": root, "assets": f"{root}/docs/assets",
        "openapi_url": f"{root}{request.app.openapi_url}"})


@router.get("/docs/assets/{name}")
def docs_asset(name: str) -> FileResponse:
    if name not in ASSETS:  # only these files: never a path into the package folder
        raise HTTPException(404, f"no docs asset {name!r}")
    return FileResponse(_asset_folder() / ASSETS[name], headers={"Cache-Control": "max-age=86400"})
