"""Shared request dependencies: the catalog, the projection service, the embedding named."""

from __future__ import annotations

import threading
from typing import Annotated

from fastapi import Depends, HTTPException, Query, Request
from fastapi.responses import JSONResponse

from projector_core.data.catalog import Catalog
from projector_core.data.loading import StillLoading
from projector_core.data.model import Embedding
from projector_core.service import ProjectionService

RETRY_AFTER_SECONDS = 1
_SERVICE_LOCK = threading.Lock()


def get_catalog(request: Request) -> Catalog:
    return request.app.state.catalog


def get_service(request: Request) -> ProjectionService:
    """The app's projection service, made on first use over its catalog and job engine."""
    state = request.app.state
    with _SERVICE_LOCK:  # two first requests at once must not make two services
        if not hasattr(state, "projection_service"):
            state.projection_service = ProjectionService(state.catalog, state.projection_jobs,
                                                         state.device, state.cluster,
                                                         lod=getattr(state, "lod", None))
    return state.projection_service


def get_embedding(
    run: Annotated[str, Query(description="Run name as listed by /api/runs ('.' for LOGDIR)")],
    embedding: Annotated[str, Query(description="Embedding (tensor) name within the run")],
    catalog: Annotated[Catalog, Depends(get_catalog)],
) -> Embedding:
    return lookup_embedding(catalog, run, embedding)


def lookup_embedding(catalog: Catalog, run: str, embedding: str) -> Embedding:
    """The embedding or a 404 naming what is unknown (for routes that take names in a body)."""
    try:
        found_run = catalog.run(run)
    except KeyError:
        raise HTTPException(404, f"unknown run {run!r}") from None
    try:
        found = found_run.embedding(embedding)
    except KeyError:
        raise HTTPException(404, f"unknown embedding {embedding!r} in run {run!r}") from None
    found.raise_if_loading()  # 503 with the progress (``still_loading`` below)
    return found


async def still_loading(request: Request, exc: Exception) -> JSONResponse:
    """503 for data of an embedding whose tensor is still being read, with how far it got."""
    assert isinstance(exc, StillLoading)
    loading = exc.loading
    return JSONResponse(
        {"detail": str(exc), "status": "loading",
         "progress": {"fraction": loading.fraction, "bytes_done": loading.bytes_done,
                      "bytes_total": loading.bytes_total}},
        status_code=503, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})


CatalogDep = Annotated[Catalog, Depends(get_catalog)]
EmbeddingDep = Annotated[Embedding, Depends(get_embedding)]
ServiceDep = Annotated[ProjectionService, Depends(get_service)]
