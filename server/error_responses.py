"""The one place an error becomes an HTTP status, and how routes document their errors.

Every error body is ``{"detail": "..."}``, the detail the service's own sentence (the same
through REST, the HTTP client and MCP). The core raises, the web layer maps:

- ``ValueError`` (``DataError`` and ``UnknownColumn`` included): the request's or the data's
  fault, 422;
- ``UnknownName``: an unknown run, embedding or job, 404 (the sentence names what is known);
- a body that is not JSON: 400; a field FastAPI refuses: 422, said as one sentence;
- ``StillLoading``: 503 with the loading progress and Retry-After; ``ModelLoading`` (an
  embedding's model still being made ready: ``semantic/models.py``) likewise, with its job;
- ``NotDone``: a job asked for its result before it has one, 409;
- ``ClusterUnavailable`` (``--dask``): 503; ``TooLarge`` (a whole array of a result kept on
  disk by the cluster: use tiles): 413;
- the annotation store (``projector_core/annotations/errors.py``): ``AnnotationsOff`` 409
  (the server is read-only by choice or because its store could not be opened: a state of
  the server the request conflicts with, said with the reason; not 403, which is the access
  checks' answer to a request that lacks the right to ask), ``StoreBusy`` 503 with
  Retry-After (another program held the write lock: nothing written, ask again),
  ``StoreWriteFailed`` 507 (the disk refused the write: nothing written), ``StoreUnavailable``
  503; an unknown annotation column, saved bookmark, run or embedding (``UnknownColumn``,
  ``UnknownBookmark``, ``UnknownName``) 404;
- anything else is ours: 500.

Routes raise and never catch to answer: a ``ValueError``, ``UnknownName`` or ``NotDone`` is
answered here. ``HTTPException`` is left for what only the web layer decides (a failed job's
status, a sprite a route cannot serve, a file under /static that is not there).
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from projector_core.annotations.errors import (
    AnnotationsOff,
    StoreBusy,
    StoreUnavailable,
    StoreWriteFailed,
)
from projector_core.annotations.saved_bookmarks import UnknownBookmark
from projector_core.annotations.store import UnknownColumn
from projector_core.data.loading import StillLoading
from projector_core.distributed.errors import ClusterUnavailable, TooLarge
from projector_core.projection.methods import METHODS
from projector_core.semantic.models import ModelLoading
from projector_core.service import NotDone, UnknownName

RETRY_AFTER_SECONDS = 1


class ProgressOut(BaseModel):
    fraction: float
    bytes_done: int
    bytes_total: int


class ErrorOut(BaseModel):
    detail: str


class StillLoadingOut(BaseModel):
    detail: str
    status: Literal["loading"]
    progress: ProgressOut


EMBEDDING_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "Unknown run or embedding"},
    503: {"model": StillLoadingOut, "description": "The tensor is still loading: the body has its "
                                            "progress, Retry-After when to ask again"},
    422: {"model": ErrorOut, "description": "A missing or bad parameter, or a broken file (the "
                                            "message names the file and the line or field)"},
}


def status_for(error: type[BaseException] | None) -> int:
    """The status of a failure raised as ``error`` (a failed job's too): 413 for a whole
    array asked of a result that stays on disk, 422 for bad input or data, 500 for anything
    else."""
    if error is not None and issubclass(error, TooLarge):
        return 413
    return 422 if error is not None and issubclass(error, ValueError) else 500


def add_error_handlers(app: FastAPI) -> None:
    """Answer every error of ``app`` as the module docstring says (``openapi_docs.py``
    documents them so)."""

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        undecodable = _json_decode_error(exc)
        if undecodable is not None:  # the documented 400, not a field's 422
            return JSONResponse({"detail": undecodable}, status_code=400)
        unsaid = _not_said_json(request, exc)
        if unsaid is not None:
            return JSONResponse({"detail": unsaid}, status_code=422)
        return JSONResponse({"detail": _validation_message(exc)}, status_code=422)

    @app.exception_handler(ValueError)
    async def bad_input(request: Request, exc: ValueError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=status_for(type(exc)))

    @app.exception_handler(StillLoading)
    async def still_loading(request: Request, exc: StillLoading) -> JSONResponse:
        loading = exc.loading
        return JSONResponse(
            {"detail": str(exc), "status": "loading",
             "progress": {"fraction": loading.fraction, "bytes_done": loading.bytes_done,
                          "bytes_total": loading.bytes_total}},
            status_code=503, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})

    @app.exception_handler(ModelLoading)
    async def model_loading(request: Request, exc: ModelLoading) -> JSONResponse:
        return JSONResponse(
            {"detail": str(exc), "status": "loading", "job": exc.job.id,
             "progress": {"fraction": round(exc.job.progress, 4)}},
            status_code=503, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})

    @app.exception_handler(UnknownName)
    async def unknown_name(request: Request, exc: UnknownName) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(NotDone)
    async def not_done(request: Request, exc: NotDone) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=409)

    @app.exception_handler(ClusterUnavailable)
    async def cluster_unavailable(request: Request, exc: ClusterUnavailable) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=503)

    add_store_handlers(app)


STORE_STATUSES: dict[type[Exception], int] = {
    AnnotationsOff: 409, StoreBusy: 503, StoreWriteFailed: 507, StoreUnavailable: 503,
    UnknownColumn: 404, UnknownBookmark: 404, UnknownName: 404}


def add_store_handlers(app: FastAPI) -> None:
    """The annotation store's errors and unknown names (the module docstring's statuses)."""
    async def store_error(request: Request, exc: Exception) -> JSONResponse:
        status = STORE_STATUSES[type(exc)]
        retry = {"Retry-After": str(RETRY_AFTER_SECONDS)} if isinstance(exc, StoreBusy) else {}
        return JSONResponse({"detail": str(exc)}, status_code=status, headers=retry)

    for error in STORE_STATUSES:
        app.add_exception_handler(error, store_error)


def _validation_message(exc: RequestValidationError) -> str:
    """FastAPI's error list as one readable sentence: "query parameter 'k': ..."; a body
    field as the request model itself says it ("pca.dims: ..."), so that every door (the
    MCP tools and the Python client check the same model) gives the same sentence."""
    parts = []
    for error in exc.errors():
        location = [str(p) for p in error.get("loc", ())]
        where = location[0] if location else "request"
        name = ".".join(location[1:])
        if error.get("type") in ("union_tag_not_found", "union_tag_invalid"):
            # A tagged union (the projection request's ``method``): name the field and choices.
            context = error.get("ctx") or {}
            tag = context.get("discriminator", "").strip("'")
            choices = context.get("expected_tags") or (
                ", ".join(repr(name) for name in METHODS) if tag == "method" else "see /docs")
            name = ".".join([*location[1:], tag]) if tag else name
            message = (f"{'missing' if error['type'] == 'union_tag_not_found' else 'unknown'}"
                       f"; one of {choices}")
        else:
            message = str(error.get("msg"))
        parts.append(_placed(where, name, message))
    return "; ".join(parts) or "invalid request"


def _placed(where: str, name: str, message: str) -> str:
    """One error where it is: a body field as "pca.dims: ...", a parameter as "query
    parameter 'k': ..."."""
    if where == "body":
        return f"{name}: {message}" if name else f"body: {message}"
    place = {"query": "query parameter", "path": "path parameter"}.get(where, where)
    return f"{place} '{name}': {message}" if name else f"{place}: {message}"


def _not_said_json(request: Request, exc: RequestValidationError) -> str | None:
    """A JSON route's body sent without ``Content-Type: application/json`` (curl's -d default
    is a form): FastAPI reads no object and says "Input should be a valid dictionary"; say
    what to send instead."""
    sent = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if sent == "application/json" or sent.endswith("+json"):
        return None
    if any(tuple(error.get("loc", ())) == ("body",) for error in exc.errors()):
        return (f"send the request body as JSON with the header Content-Type: application/json "
                f"(this request said {sent or 'no content type'!r})")
    return None


def _json_decode_error(exc: RequestValidationError) -> str | None:
    """What is wrong with a body that is not JSON at all, or None when it is JSON."""
    for error in exc.errors():
        if error.get("type") == "json_invalid":
            reason = (error.get("ctx") or {}).get("error", "not valid JSON")
            at = error.get("loc", ("body", 0))[-1]
            return f"the request body is not valid JSON: {reason} (at character {at})"
    return None
