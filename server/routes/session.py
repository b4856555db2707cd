"""``/api/session/state``: the view shared by a notebook widget (Python) and its page.

The page posts its selection, colour column and projection as the user changes them, and
long-polls ``GET ?since=VERSION`` for the changes Python makes (``widget.selection = ...``).
"""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from projector.server.deps import ServiceDep, SessionDep
from pydantic import BaseModel, ConfigDict, Field

router = APIRouter(prefix="/api/session", tags=["session"])
POLL_STEP = 0.05

Projection = Literal["pca", "tsne", "umap", "custom"]


class SessionOut(BaseModel):
    version: int
    origin: str | None = Field(description='"page" or "python": who wrote last')
    run: str | None
    embedding: str | None
    selection: list[int]
    color_by: str | None
    projection: Projection | None


class SessionPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run: str | None = None
    embedding: str | None = None
    selection: list[Annotated[int, Field(ge=0)]] | None = None
    color_by: str | None = None
    projection: Projection | None = None


@router.get("/state")
async def get_state(
    request: Request,
    session: SessionDep,
    since: Annotated[int, Query(description="Answer once the version passes this (long poll)")] = -1,
    timeout: Annotated[float, Query(ge=0, le=15, description="Seconds to wait at most")] = 0,
) -> SessionOut:
    deadline = time.monotonic() + timeout
    stopping = getattr(request.app.state, "stopping", None)  # set by projector.LocalServer.stop
    while (session.version <= since and time.monotonic() < deadline
           and not (stopping and stopping.is_set())):
        await asyncio.sleep(POLL_STEP)
    return SessionOut(**session.snapshot())


@router.post("/state", responses={422: {"description": "An unknown run, embedding or colour "
                                                         "column, or a selected index past N"}})
def post_state(body: SessionPatch, session: SessionDep, service: ServiceDep) -> SessionOut:
    """The page's view changed: only the fields sent are set, once they exist."""
    changes: dict[str, Any] = {name: getattr(body, name) for name in body.model_fields_set}
    service.check_view(session.snapshot(), changes)  # ValueError: 422
    return SessionOut(**session.update("page", **changes))
