"""How routes document their errors (every error body is ``{"detail": "..."}``), shared by
the routes that read an embedding."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


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


EMBEDDING_ERRORS: dict[int | str, dict] = {
    404: {"model": ErrorOut, "description": "Unknown run or embedding"},
    503: {"model": StillLoadingOut, "description": "The tensor is still loading: the body has its "
                                            "progress, Retry-After when to ask again"},
    422: {"model": ErrorOut, "description": "A missing or bad parameter, or a broken file (the "
                                            "message names the file and the line or field)"},
}
