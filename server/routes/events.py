"""``GET /api/events``: what changes on the server, as server-sent events (``text/event-stream``).

Every page, client and agent follows this one stream instead of polling: runs, embeddings and
training steps added, changed or removed (``projector_core/data/catalog_events.py`` says what
each carries), and whatever other kinds are published on the app's ``EventHub``. Each message
is ``id: EPOCH-N``, ``event: KIND`` and one line of JSON, ``data: {"action": ..., ...,
"time": ...}``. An ``embedding`` event that is not a removal also carries ``entry``: the
embedding as ``GET /api/runs`` lists it at the moment it is sent, so a run list is kept without
asking for it again.

The stream opens with an ``open`` event whose id is where it starts (a reconnecting
``EventSource`` sends it back as ``Last-Event-ID``, and the events since follow; when they are no
longer kept, a ``reset`` event says to read the state again). A comment line every
``heartbeat_seconds`` keeps proxies from closing a quiet stream and lets a client tell a dead one.
The stream ends when the server stops (``EventHub.close``), so a shutdown never waits on it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from fastapi.responses import StreamingResponse
from projector.server.deps import EventsDep, ServiceDep
from projector.server.routes.data import EmbeddingOut

from projector_core.events import Event, Subscription
from projector_core.service import ProjectionService

router = APIRouter(prefix="/api", tags=["events"])

HEARTBEAT_SECONDS = 15.0
RETRY_MS = 1000  # how soon a browser's EventSource reconnects after the stream drops


@router.get("/events", response_class=StreamingResponse, responses={200: {
    "description": "Server-sent events: `open`, then `run`, `embedding`, `step` (and other "
                   "kinds) as they happen; `reset` when events were lost",
    "content": {"text/event-stream": {"schema": {  # one event (OpenAPI 3.1 reads it so)
        "type": "object", "required": ["data"],
        "properties": {"event": {"type": "string"}, "id": {"type": "string"},
                       "retry": {"type": "integer"},
                       "data": {"type": "string", "description": "JSON: action, the kind's "
                                                                 "fields, time"}}}}}}})
async def events(request: Request, hub: EventsDep, service: ServiceDep,
                 last_event_id: Annotated[str | None, Header(
                     description="The last event id seen: the stream resumes after it")] = None,
                 ) -> StreamingResponse:
    """Follow every change on the server (see the module's docstring for the messages)."""
    subscription = hub.subscribe(last_event_id)
    heartbeat: float = request.app.state.heartbeat_seconds
    return StreamingResponse(_stream(subscription, service, heartbeat),
                             media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


async def _stream(subscription: Subscription, service: ProjectionService,
                  heartbeat: float) -> AsyncIterator[str]:
    try:
        yield (f"retry: {RETRY_MS}\nid: {subscription.start_id}\nevent: open\n"
               f"data: {json.dumps({'heartbeat': heartbeat})}\n\n")
        while True:
            batch = await subscription.next(heartbeat)
            if batch is None:  # the server stops
                return
            if not batch:
                yield ": keep-alive\n\n"
            for event in batch:
                yield _message(event, service)
    finally:
        subscription.close()


def _message(event: Event, service: ProjectionService) -> str:
    data: dict[str, Any] = {"action": event.action, **event.data, "time": event.time}
    if event.kind == "embedding" and event.action != "removed":
        listed = service.listed_embedding(data["run"], data["embedding"])
        if listed is not None:  # else gone since: its removal follows
            data["entry"] = EmbeddingOut.of(listed).model_dump(mode="json")
    return f"id: {event.id}\nevent: {event.kind}\ndata: {json.dumps(data)}\n\n"
