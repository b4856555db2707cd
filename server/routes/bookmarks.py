"""Bookmarks: TensorBoard ``State`` objects, those of the LOGDIR's bookmark file (read-only)
and those saved from the page, a notebook or an agent in the annotation store.

- ``GET /api/bookmarks?run=&embedding=``: the LOGDIR file's states first, then the saved ones
  (oldest first), each saved one carrying ``saved: {id, author, at}`` beside TensorBoard's
  fields (which TensorBoard ignores), so a list downloaded here loads there.
- ``POST /api/bookmarks`` ``{run, embedding, state}``: save a state (checked as a bookmark
  file's: made for a data set of this embedding's shape); the answer is it as listed.
- ``DELETE /api/bookmarks?run=&embedding=&id=``: delete a saved one.

Every embedding's steps share its bookmarks, as they share labels; each change goes out on
``GET /api/events`` (a ``bookmark`` event).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from projector.server.deps import ServiceDep
from projector.server.error_responses import EMBEDDING_ERRORS
from projector.server.routes.annotations import Author, EmbeddingName, Run
from pydantic import BaseModel, ConfigDict

from projector_core.annotations import Bookmark

router = APIRouter(prefix="/api", tags=["data"])

ERRORS: dict[int | str, dict[str, Any]] = {
    **EMBEDDING_ERRORS,
    409: {"description": "Annotations (and saved bookmarks) are off on this server"},
    507: {"description": "The disk refused the write: nothing was written"},
}


class BookmarkIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run: str
    embedding: str
    state: dict[str, Any]


class DeletedOut(BaseModel):
    deleted: int


def listed(bookmark: Bookmark) -> dict[str, Any]:
    """A bookmark as the list answers it (a saved one with ``saved``)."""
    if bookmark.id is None:
        return bookmark.state
    state = {key: value for key, value in bookmark.state.items() if key != "saved"}
    return {**state, "saved": {"id": bookmark.id, "author": bookmark.author, "at": bookmark.at}}


@router.get("/bookmarks", responses=EMBEDDING_ERRORS)
def get_bookmarks(run: Run, embedding: EmbeddingName, service: ServiceDep) -> list[dict]:
    """The LOGDIR's bookmark file's states, then the saved ones."""
    return [listed(b) for b in service.annotations.bookmarks(run, embedding)]  # DataError: 422


@router.post("/bookmarks", status_code=201, responses=ERRORS)
def save_bookmark(body: BookmarkIn, service: ServiceDep, author: Author = None) -> dict:
    """Save a bookmark state in the store."""
    state = {key: value for key, value in body.state.items() if key != "saved"}
    return listed(service.annotations.save_bookmark(body.run, body.embedding, state, author))


@router.delete("/bookmarks", responses=ERRORS)
def delete_bookmark(run: Run, embedding: EmbeddingName, service: ServiceDep,
                    id: Annotated[int, Query(description="The saved bookmark's id")],
                    author: Author = None) -> DeletedOut:
    """Delete a saved bookmark (the LOGDIR's file stays as it is)."""
    service.annotations.delete_bookmark(run, embedding, id, author)  # unknown id: 404
    return DeletedOut(deleted=id)
