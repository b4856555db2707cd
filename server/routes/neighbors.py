"""Nearest neighbours in the original space (TensorBoard's inspector): ``/api/neighbors``.

Plain ``def`` handlers: FastAPI runs them in its thread pool, so a neighbour scan never
blocks the event loop and is answered while projection jobs run.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Query
from projector.server.deps import EmbeddingDep, ServiceDep
from pydantic import BaseModel, ConfigDict, Field

from projector_core.data.model import Embedding
from projector_core.kernels.neighbor_index import Metric
from projector_core.service import ProjectionService

router = APIRouter(prefix="/api", tags=["neighbors"])

K_DEFAULT = 100
_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "Unknown run or embedding"},
    422: {
        "description": "Bad parameter (index out of range, k <= 0, k more than the other points, "
        "unknown metric, wrong vector length, NaN/Inf values, both or neither of vector and "
        "rows) or an unreadable tensor"
    },
}


class Neighbor(BaseModel):
    index: int = Field(description="Row of the neighbour in the embedding")
    distance: float = Field(description="1 - cosine similarity, or euclidean distance")


class NeighborsOut(BaseModel):
    neighbors: list[Neighbor] = Field(description="Nearest first; ties by index")


class VectorQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run: str = Field(description="Run name as listed by /api/runs")
    embedding: str = Field(description="Embedding (tensor) name within the run")
    vector: list[float] | None = Field(None, min_length=1, description="D finite values")
    rows: list[Annotated[int, Field(ge=0)]] | None = Field(
        None, min_length=1, max_length=10_000,
        description="Instead of vector: rows whose centroid is the query (search by example "
                    "of a selection), those rows left out of the answer")
    k: int = Field(K_DEFAULT, gt=0, description="Number of neighbours, at most N")
    metric: Metric = "cosine"


def _answer(service: ProjectionService, embedding: Embedding, k: int, metric: Metric,
            **where: Any) -> NeighborsOut:
    """The service's neighbours (of ``index=``, ``vector=`` or ``rows=``)."""
    indices, distances = service.neighbors(embedding, k, metric, **where)
    return NeighborsOut(
        neighbors=[
            # str() of a float32 is its shortest round-trip form: 0.0192614, not 0.01926136203...
            Neighbor(index=int(i), distance=float(str(d)))
            for i, d in zip(indices[0], distances[0], strict=True)
        ]
    )


@router.get("/neighbors", responses=_ERRORS)
def neighbors_of_point(
    service: ServiceDep,
    embedding: EmbeddingDep,
    index: Annotated[int, Query(ge=0, description="Row whose neighbours are wanted")],
    k: Annotated[int, Query(gt=0, description="Number of neighbours, below N")] = K_DEFAULT,
    metric: Annotated[Metric, Query(description="cosine (1 - cos) or euclidean")] = "cosine",
) -> NeighborsOut:
    """The ``k`` nearest points to point ``index``, itself excluded.

    Rows holding NaN or Inf are never neighbours, so fewer than ``k`` may come back.
    """
    return _answer(service, embedding, k, metric, index=index)


@router.post("/neighbors", responses=_ERRORS)
def neighbors_of_vector(body: VectorQuery, service: ServiceDep) -> NeighborsOut:
    """The ``k`` nearest points to an arbitrary vector of the embedding's dimension, or to
    the centroid of ``rows`` (those rows left out)."""
    embedding = service.embedding(body.run, body.embedding)
    vector = None if body.vector is None else np.asarray(body.vector, np.float64)
    return _answer(service, embedding, body.k, body.metric, vector=vector, rows=body.rows)
