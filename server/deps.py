"""Every request dependency, in one place: what a route takes from the app (its projection
service, followers, session, uploads, event stream, sprite atlas) and the embedding a request
names. ``create_app`` makes these objects; routes ask for them by type here. A route asks the
service for everything it decides (names, jobs, projections, tiles, limits), never the
catalogue or the job engine beside it."""

from __future__ import annotations

import threading
from typing import Annotated

from fastapi import Depends, Query, Request

from projector_core.data.model import Embedding
from projector_core.data.uploads import Uploads
from projector_core.events import EventHub
from projector_core.formats.sprites.atlas import SpriteAtlas
from projector_core.jobs.followers import Followers
from projector_core.service import ProjectionService
from projector_core.session import SessionState

_MAKING = threading.Lock()  # objects made on first use are made once


def get_service(request: Request) -> ProjectionService:
    """The app's projection service (``create_app`` makes it over its catalog and jobs)."""
    service: ProjectionService = request.app.state.projection_service
    return service


def get_followers(request: Request) -> Followers:
    followers: Followers = request.app.state.followers
    return followers


def get_session(request: Request) -> SessionState:
    session: SessionState = request.app.state.session
    return session


def get_events(request: Request) -> EventHub:
    """The app's one event stream (``GET /api/events``; the catalog publishes on it)."""
    events: EventHub = request.app.state.events
    return events


def get_uploads(request: Request) -> Uploads:
    uploads: Uploads = request.app.state.uploads
    return uploads


def get_sprite_atlas(request: Request) -> SpriteAtlas:
    """The app's sprite atlas pages, cached beside the catalog's (made on first use)."""
    state = request.app.state
    with _MAKING:
        if not hasattr(state, "sprite_atlas"):
            state.sprite_atlas = SpriteAtlas(state.projection_service.catalog.cache.directory)
    atlas: SpriteAtlas = state.sprite_atlas
    return atlas


def get_embedding(
    run: Annotated[str, Query(description="Run name as listed by /api/runs ('.' for LOGDIR)")],
    embedding: Annotated[str, Query(description="Embedding (tensor) name within the run")],
    service: Annotated[ProjectionService, Depends(get_service)],
) -> Embedding:
    """The embedding the query names (the service's one lookup: an unknown name is its 404)."""
    return service.embedding(run, embedding)


EmbeddingDep = Annotated[Embedding, Depends(get_embedding)]
ServiceDep = Annotated[ProjectionService, Depends(get_service)]
FollowersDep = Annotated[Followers, Depends(get_followers)]
SessionDep = Annotated[SessionState, Depends(get_session)]
UploadsDep = Annotated[Uploads, Depends(get_uploads)]
SpriteAtlasDep = Annotated[SpriteAtlas, Depends(get_sprite_atlas)]
EventsDep = Annotated[EventHub, Depends(get_events)]
