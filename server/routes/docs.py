"""``/docs``: the Swagger UI page, its script and style served by us, so it works offline.

FastAPI's own page loads them from a CDN, which a machine without internet (or a browser
that blocks third parties) never reaches: the page then stays blank. The files come from the
``fastapi-offline`` package, which ships Swagger UI 5 (the 4.x of ``swagger-ui-bundle`` cannot
read the OpenAPI 3.1 document FastAPI writes: "Unable to render this definition").
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse

router = APIRouter(include_in_schema=False)

# The names the page asks for -> the package's files.
ASSETS = {"swagger-ui-bundle.js": "swagger-ui-bundle.js", "swagger-ui.css": "swagger-ui.css",
          "favicon-32x32.png": "favicon.png"}


def _asset_folder() -> Path:
    import fastapi_offline

    return Path(fastapi_offline.__file__).parent / "static"


@router.get("/docs", response_class=HTMLResponse)
def docs(request: Request) -> HTMLResponse:
    base = f"{request.scope.get('root_path', '')}/docs/assets"
    return get_swagger_ui_html(
        openapi_url=f"{request.scope.get('root_path', '')}{request.app.openapi_url}",
        title=f"{request.app.title} - API",
        swagger_js_url=f"{base}/swagger-ui-bundle.js",
        swagger_css_url=f"{base}/swagger-ui.css",
        swagger_favicon_url=f"{base}/favicon-32x32.png",
    )


@router.get("/docs/assets/{name}")
def docs_asset(name: str) -> FileResponse:
    if name not in ASSETS:  # only these files: never a path into the package folder
        raise HTTPException(404, f"no docs asset {name!r}")
    return FileResponse(_asset_folder() / ASSETS[name], headers={"Cache-Control": "max-age=86400"})
