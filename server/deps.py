"""Every request dependency, in one place: what a route takes from the app (its catalog, jobs,
projection service, level-of-detail store, session, uploads, followers, event stream) and the
embedding a request names. ``create_app`` makes these objects; routes ask for them by type here."""

from __future__ import annotations

import threading
from typing import Annotated

from fastapi import Depends, HTTPException, Query, Request

from projector_core.data.catalog import Catalog
from projector_core.data.model import Embedding
from projector_core.data.uploads import Uploads
from projector_core.events import EventHub
from projector_core.formats.sprites.atlas import SpriteAtlas
from projector_core.jobs.engine import JobManager
from projector_core.jobs.followers import Followers
from projector_core.projection.jobs import ProjectionJobs
from projector_core.service import ProjectionService
from projector_core.session import SessionState
from projector_core.tiles.store import LodStore

_MAKING = threading.Lock()  # objects made on first use are made once


def get_catalog(request: Request) -> Catalog:
    return request.app.state.catalog


def get_jobs(request: Request) -> JobManager:
    return request.app.state.jobs


def get_projection_jobs(request: Request) -> ProjectionJobs:
    return request.app.state.projection_jobs


def lod_store(request: Request) -> LodStore:
    """The app's orders, bounds and tiles (``create_app`` makes it; the preparation fills it)."""
    return request.app.state.lod


def get_followers(request: Request) -> Followers:
    return request.app.state.followers


def get_session(request: Request) -> SessionState:
    return request.app.state.session


def get_events(request: Request) -> EventHub:
    """The app's one event stream (``GET /api/events``; the catalog publishes on it)."""
    return request.app.state.events


def get_uploads(request: Request) -> Uploads:
    return request.app.state.uploads


def get_sprite_atlas(request: Request) -> SpriteAtlas:
    """The app's sprite atlas pages, cached beside the catalog's (made on first use)."""
    state = request.app.state
    with _MAKING:
        if not hasattr(state, "sprite_atlas"):
            state.sprite_atlas = SpriteAtlas(state.catalog.cache.directory)
    return state.sprite_atlas


def get_service(request: Request) -> ProjectionService:
    """The app's projection service (``create_app`` makes it over its catalog and jobs)."""
    return request.app.state.projection_service


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
    found.raise_if_loading()  # 503 with the progress (error_responses.py)
    return found


CatalogDep = Annotated[Catalog, Depends(get_catalog)]
EmbeddingDep = Annotated[Embedding, Depends(get_embedding)]
ServiceDep = Annotated[ProjectionService, Depends(get_service)]
JobsDep = Annotated[JobManager, Depends(get_jobs)]
ProjectionJobsDep = Annotated[ProjectionJobs, Depends(get_projection_jobs)]
LodStoreDep = Annotated[LodStore, Depends(lod_store)]
FollowersDep = Annotated[Followers, Depends(get_followers)]
SessionDep = Annotated[SessionState, Depends(get_session)]
UploadsDep = Annotated[Uploads, Depends(get_uploads)]
SpriteAtlasDep = Annotated[SpriteAtlas, Depends(get_sprite_atlas)]
EventsDep = Annotated[EventHub, Depends(get_events)]
