"""The browser UI: the index page (jinja2) and the front end's static files.

Static files are served by a plain route rather than a mounted StaticFiles app so that
`app.include_router(router)` brings them along (FastAPI does not copy mounts).
"""

from __future__ import annotations

import functools
import mimetypes
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, Response
from projector.server.module_graph import module_graph

if TYPE_CHECKING:
    from fastapi.templating import Jinja2Templates

    from projector_core.export.site import SitePage

FRONTEND_DIR = Path(__file__).resolve().parents[2] / "frontend"
TEMPLATES_DIR = Path(__file__).resolve().parents[1] / "templates"

router = APIRouter(include_in_schema=False)

# The app's pages: what a link or an iframe of another site may open (``access.py``).
INDEX_PATH, COMPARE_PATH = "/", "/compare"

# Browsers refuse ES modules served with a non-JavaScript type; some systems map .js oddly.
mimetypes.add_type("text/javascript", ".js")


@functools.cache
def templates() -> Jinja2Templates:
    """Loaded with the first page, not at start-up (importing jinja2 takes about 25 ms)."""
    from fastapi.templating import Jinja2Templates

    return Jinja2Templates(directory=str(TEMPLATES_DIR))


@functools.cache
def parameters() -> dict[str, Any]:
    """Each method's parameters from the parameter table: the page's controls take their
    ranges from it (the page narrows them to an embedding's table once one is open)."""
    from projector_core.projection.methods import parameter_table

    return {name: entry["params"] for name, entry in parameter_table()["methods"].items()}


@router.get(INDEX_PATH, response_class=HTMLResponse)
def index(request: Request) -> HTMLResponse:
    """The single page of the app; everything else is fetched from /api by the front end."""
    return templates().TemplateResponse(
        request, "index.html", {"modules": module_graph(FRONTEND_DIR, "js/app.js"),
                                "params": parameters()})


def index_html() -> str:
    """The index page as text (``projector export`` ships it in a static site)."""
    return templates().get_template("index.html").render(params=parameters())


def site_page() -> SitePage:
    """The page and front end a static site ships: this server's own."""
    from projector_core.export.site import SitePage

    return SitePage(index_html(), FRONTEND_DIR)


@router.get(COMPARE_PATH, response_class=HTMLResponse)
def compare_page(request: Request) -> HTMLResponse:
    """Two embeddings of the same points side by side (frontend/js/compare/)."""
    return templates().TemplateResponse(request, "compare.html")


@router.get("/static/{path:path}")
def static_file(path: str, request: Request) -> Response:
    """A file of frontend/, refusing anything that resolves outside it."""
    target = (FRONTEND_DIR / path).resolve()
    inside = target.is_relative_to(FRONTEND_DIR) and target.is_file()
    if not inside or target.relative_to(FRONTEND_DIR).parts[0] == "tests":
        raise HTTPException(status_code=404, detail=f"no such file: {path}")
    # no-cache: the browser revalidates, so an upgraded package never runs stale modules;
    # an unchanged one is a 304 without its body (a second visit's sixty modules).
    answer = FileResponse(target, headers={"Cache-Control": "no-cache"}, stat_result=target.stat())
    if answer.headers["etag"] in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers={"ETag": answer.headers["etag"],
                                                  "Cache-Control": "no-cache"})
    return answer
