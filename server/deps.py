"""Every request dependency, in one place: what a route takes from the app (its projection
service, followers, session, uploads, event stream, sprite atlas) and the embedding a request
names. ``create_app`` makes these objects; routes ask for them by type here. A route asks the
service for everything it decides (names, jobs, projections, tiles, limits), never the
catalogue or the job engine beside it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Depends, Query, Request

from projector_core.data.model import Embedding
from projector_core.data.uploads import Uploads
from projector_core.events import EventHub
from projector_core.formats.sprites.atlas import SpriteAtlas
from projector_core.jobs.followers import Followers
from projector_core.service import ProjectionService
from projector_core.session import SessionState

_MAKING = threading.Lock()  # objects made on first use are made once


def app_state(name: str) -> Callable[[Request], Any]:
    """A dependency answering the app's ``state.<name>`` (``create_app`` sets each)."""
    def get(request: Request) -> Any:
        return getattr(request.app.state, name)
    get.__name__ = f"get_{name}"
    return get


get_service = app_state("projection_service")  # the one service every route asks


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
FollowersDep = Annotated[Followers, Depends(app_state("followers"))]
SessionDep = Annotated[SessionState, Depends(app_state("session"))]  # shared with a widget
UploadsDep = Annotated[Uploads, Depends(app_state("uploads"))]
SpriteAtlasDep = Annotated[SpriteAtlas, Depends(get_sprite_atlas)]
EventsDep = Annotated[EventHub, Depends(app_state("events"))]  # GET /api/events; the catalog publishes
