"""Search by meaning: ``GET /api/search/meaning``, a few lines over
``ProjectionService.search_meaning`` (``projector_core/semantic/``).

Search by example has no route of its own: ``POST /api/neighbors`` with ``vector`` set to the
selection's centroid (the mean of its rows) answers it, for any embedding, model or not.

The answer's ``timing_ms`` (encode, search, place, and the route's ``total``) is also sent as
a ``Server-Timing`` header, so a browser's network panel shows where the time went.
"""

from __future__ import annotations

import time
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response
from projector.server.deps import EmbeddingDep, ServiceDep
from projector.server.error_responses import EMBEDDING_ERRORS, ErrorOut
from pydantic import BaseModel, Field

from projector_core.semantic.search import MAX_PHRASES

router = APIRouter(prefix="/api", tags=["search"])
K_DEFAULT = 10


class MeaningNeighbor(BaseModel):
    index: int = Field(description="Row of the point in the embedding")
    similarity: float = Field(description="Cosine similarity to the phrase")


class PhraseOut(BaseModel):
    text: str
    neighbors: list[MeaningNeighbor] = Field(description="Nearest first")
    marker: list[float] | None = Field(description="The phrase's coordinates on the `job`'s "
                                                   "map (every column of its result); null "
                                                   "without `job`")


class MeaningOut(BaseModel):
    model: str = Field(description="The model that embedded the phrases (the embedding's)")
    index: Literal["exact", "approximate"] = Field(
        description="Which neighbour index answered: exact below the exact budget (N x D), "
                    "the approximate usearch graph above once built")
    metric: Literal["cosine"]
    job: str | None
    placement: Literal["linear", "neighbours"] | None = Field(
        description="How markers were placed: the projection's own linear map (PCA, custom), "
                    "or their nearest points' positions weighted (t-SNE, UMAP)")
    timing_ms: dict[str, float] = Field(description="encode, search, place, total")
    results: list[PhraseOut] = Field(description="One per phrase, in the order given")


@router.get("/search/meaning", responses={
    **EMBEDDING_ERRORS,
    404: {"model": ErrorOut, "description": "Unknown run, embedding or job"},
    409: {"model": ErrorOut, "description": "The job is not done"},
    422: {"model": ErrorOut, "description": "No model declared for the embedding, a model "
                                            "that does not fit its vectors, a blank phrase, "
                                            "k over the points, a job of other data"},
    503: {"description": "The embedding or its model is still loading (the body says which "
                         "job, with its progress); ask again after Retry-After"}})
def search_by_meaning(
    response: Response,
    service: ServiceDep,
    embedding: EmbeddingDep,
    text: Annotated[list[str], Query(description=f"A phrase; repeat for several (at most "
                                                 f"{MAX_PHRASES}), each answered on its own")],
    k: Annotated[int, Query(gt=0, description="Nearest points per phrase")] = K_DEFAULT,
    job: Annotated[str | None, Query(description="A finished projection of this embedding: "
                                                 "each phrase's marker on its map")] = None,
) -> MeaningOut:
    """The points nearest in meaning to each phrase, embedded by the model that made the
    embedding's vectors; with ``job``, where the phrase lies on that projection's map."""
    started = time.perf_counter()
    found = service.search_meaning(embedding, text, k, service.job(job) if job else None)
    answer = found.as_dict()
    answer["timing_ms"]["total"] = round(1000 * (time.perf_counter() - started), 2)
    response.headers["Server-Timing"] = ", ".join(
        f"{name};dur={value}" for name, value in answer["timing_ms"].items())
    return MeaningOut.model_validate(answer)
