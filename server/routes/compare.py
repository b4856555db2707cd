"""Comparing embeddings of the same points (``/api/compare``): per-point neighbourhood
change, and the pairs a log directory offers (``/api/compare/pairs``).

Plain ``def`` handlers: FastAPI runs them in its thread pool, so a long comparison never
blocks the event loop.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse
from projector.server.deps import EmbeddingDep, ServiceDep
from projector.server.job_responses import JobCreated
from pydantic import BaseModel, Field

from projector_core.kernels.neighbor_index import Metric

router = APIRouter(prefix="/api", tags=["compare"])


class CompareOut(BaseModel):
    per_point: list[float | None] = Field(
        description="Per row: Jaccard overlap of its k nearest neighbours in A and in B (1 = "
                    "unchanged, 0 = none shared); null for a row with NaN/Inf in either")
    mean: float | None = Field(description="Mean of per_point over the rows that have one")
    k: int
    most_changed: list[int] = Field(description="Rows with the least overlap first (ties: "
                                                "larger rank displacement, then row)")
    former_rank: list[float | None] = Field(
        description="Per row of most_changed: the mean rank in B of its k neighbours in A (0 = "
                    "nearest; one not among B's 8k nearest counts at 8k): how far they went")
    rank_displacement: list[float | None] = Field(
        description="Per row: mean rank shift of the neighbours in the union of both lists; "
                    "a neighbour missing from one list counts at rank k")
    neighbors: str = Field(description='"exact", or "approximate" (HNSW) on large data')
    recall: float | None = Field(description="Approximate only: recall@k on a sample of rows")
    rows: int


class SideOut(BaseModel):
    run: str
    embedding: str


class PairOut(BaseModel):
    kind: str = Field(description='"steps": consecutive steps of a tag; "runs": one tensor name '
                                  "in two runs")
    a: SideOut
    b: SideOut
    rows: int


class PairsOut(BaseModel):
    pairs: list[PairOut]



@router.get("/compare", response_model=CompareOut, responses={
    202: {"model": JobCreated, "description": "With background=true: the job computing it"},
    404: {"description": "Unknown run or embedding"},
    422: {"description": "Different row counts (both are named), k not below N, unknown metric, "
                         "or an unreadable tensor"}})
def compare(
    embedding: EmbeddingDep,
    service: ServiceDep,
    other_run: Annotated[str, Query(description="Run of embedding B")],
    other_embedding: Annotated[str, Query(description="Embedding B (same number of rows)")],
    k: Annotated[int, Query(gt=0, le=200, description="Neighbours per point")] = 10,
    metric: Annotated[Metric, Query(description="cosine (1 - cos) or euclidean")] = "cosine",
    top: Annotated[int, Query(ge=0, le=100_000, description="Length of most_changed")] = 100,
    background: Annotated[bool, Query(description="Answer 202 with a job at once (progress at "
                                                  "/api/jobs/ID); once it is done, the same "
                                                  "request without it answers at once")] = False,
) -> CompareOut | JSONResponse:
    """How much each point's k-neighbourhood changed from embedding A to embedding B."""
    other = service.embedding(other_run, other_embedding)
    if background:
        job = service.compare_job(embedding, other, k, metric, top)
        return JSONResponse({"job": job.id}, status_code=202)
    return CompareOut(**service.compare(embedding, other, k, metric, top))


@router.get("/compare/pairs")
def pairs(service: ServiceDep) -> PairsOut:
    """Pairs worth comparing: consecutive steps of each tag, and one tensor name in two runs."""
    return PairsOut(pairs=[
        PairOut(kind=p.kind, a=SideOut(run=p.a.run, embedding=p.a.embedding),
                b=SideOut(run=p.b.run, embedding=p.b.embedding), rows=p.rows)
        for p in service.comparable_pairs()])
