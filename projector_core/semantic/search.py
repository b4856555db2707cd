"""Search by a phrase: embedded by the model that made the vectors, its nearest points found
by the neighbour index every neighbour query uses, and placed on a finished projection's map.

Several phrases are encoded and searched together, each with its own answer. The index is the
service's choice (``distributed.dispatch.neighbor_index_for``: exact below the exact budget,
the approximate usearch graph above once built), and the answer says which one it was.
Similarities are cosine similarities (1 - the cosine distance): sentence models are compared
by the angle between their vectors. Search by example needs nothing here: the centroid of a
selection is a vector, and ``ProjectionService.neighbors(vector=...)`` (``POST /api/neighbors``)
answers it for any embedding, model or not.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from projector_core.data.model import Embedding
from projector_core.jobs.job import Job
from projector_core.kernels.neighbor_index import Metric, NeighborIndex
from projector_core.projection.compute import ProjectionResult
from projector_core.projection.jobs import layout_of
from projector_core.projection.limits import neighbor_count
from projector_core.semantic.placement import (
    PLACE_NEIGHBORS,
    linear_map,
    neighbour_position,
)

if TYPE_CHECKING:
    from projector_core.semantic.models import Models

MAX_PHRASES = 16
MAX_PHRASE_CHARS = 1000
METRIC: Metric = "cosine"
# Candidates a phrase asks the approximate index for. A phrase lies off the data (a short text
# against the rows' own texts), where the HNSW graph's greedy walk can stop in the wrong
# cluster: over 200k clustered word vectors, 3 of 16 phrases found none of their 10 nearest
# asking for 10 (recall@10 0.81), all of them asking for 512 (1.00), in 7 ms a phrase instead
# of 2 (two busy cores; bench/bench_meaning_search.py). An exact scan asks for k.
SEARCH_BREADTH = 512


@dataclass(frozen=True)
class PhraseAnswer:
    text: str
    rows: list[int]  # nearest first
    similarities: list[float]  # cosine similarity of each row to the phrase
    marker: list[float] | None  # the phrase on the job's map (every column), None without one


@dataclass(frozen=True)
class MeaningAnswer:
    model: str
    index: str  # "exact" or "approximate": which index answered
    phrases: list[PhraseAnswer]
    job: str | None = None
    placement: str | None = None  # "linear" (the projection's own map) or "neighbours"
    timing_ms: dict[str, float] = field(default_factory=dict)  # encode, search, place

    def as_dict(self) -> dict[str, Any]:
        """The JSON every door answers."""
        return {"model": self.model, "index": self.index, "metric": METRIC, "job": self.job,
                "placement": self.placement, "timing_ms": self.timing_ms,
                "results": [{"text": p.text, "marker": p.marker,
                             "neighbors": [{"index": r, "similarity": s} for r, s in
                                           zip(p.rows, p.similarities, strict=True)]}
                            for p in self.phrases]}


def search_meaning(models: Models, index_for: Callable[[Embedding, Metric], NeighborIndex],
                   embedding: Embedding, texts: list[str], k: int,
                   job: Job | None = None) -> MeaningAnswer:
    """Each phrase's ``k`` nearest rows and similarities, and with a finished projection
    ``job`` of this embedding its marker there; ValueError for bad phrases, a ``k`` over the
    points, a job of other data; ``NotDone`` before the job is done, ``ModelLoading`` before
    the model is ready. ``index_for`` is the service's one choice of neighbour index."""
    _check_phrases(texts)
    neighbor_count((embedding.shape or (0, 0))[0]).check(k)
    layout = None if job is None else _layout(job, embedding)
    model, encoder = models.ready(embedding)
    started = time.perf_counter()
    queries = encoder.encode(texts, one_thread=True)
    encoded = time.perf_counter()
    index = index_for(embedding, METRIC)
    rows, distances = nearest(index, queries, max(k, PLACE_NEIGHBORS if layout is not None else 0))
    searched = time.perf_counter()
    markers: list[list[float] | None] = [None] * len(texts)
    placement = None
    if job is not None and layout is not None:
        mapping = linear_map(job.id, layout.info.get("method"), embedding.vectors(),
                             layout.coordinates)
        placement = "linear" if mapping is not None else "neighbours"
        for i in range(len(texts)):
            spot = (mapping(queries[i:i + 1])[0] if mapping is not None else neighbour_position(
                layout.coordinates, rows[i, :PLACE_NEIGHBORS], distances[i, :PLACE_NEIGHBORS]))
            markers[i] = None if spot is None else [float(v) for v in spot]
    placed = time.perf_counter()
    phrases = []
    for i, text in enumerate(texts):
        found = rows[i, :k] >= 0
        phrases.append(PhraseAnswer(text, rows[i, :k][found].tolist(),
                                    [round(1.0 - float(d), 6) for d in distances[i, :k][found]],
                                    markers[i]))
    return MeaningAnswer(model, "approximate" if index.approximate else "exact", phrases,
                         job.id if job is not None else None, placement, {
                             "encode": _ms(encoded - started), "search": _ms(searched - encoded),
                             "place": _ms(placed - searched)})


def _layout(job: Job, embedding: Embedding) -> ProjectionResult:
    """The job's map, when it is a finished projection of ``embedding``."""
    layout = layout_of(job, "map to place a phrase on")  # NotDone before it is done
    if getattr(job.source, "fingerprint", None) != embedding.fingerprint:
        raise ValueError(f"job {job.id} is not a projection of {embedding.run}/"
                         f"{embedding.name}: its map cannot place this embedding's phrases")
    return layout


def nearest(index: NeighborIndex, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest rows of each query and their cosine distances (-1 past the finite
    rows); an approximate index is asked for :data:`SEARCH_BREADTH`."""
    rows, distances = index.query(queries, max(k, SEARCH_BREADTH) if index.approximate else k,
                                  METRIC)
    return rows[:, :k], distances[:, :k]


def _check_phrases(texts: list[str]) -> None:
    if not texts:
        raise ValueError("text: give at least one phrase")
    if len(texts) > MAX_PHRASES:
        raise ValueError(f"text: at most {MAX_PHRASES} phrases at once, got {len(texts)}")
    for text in texts:
        if not text.strip():
            raise ValueError("text: a phrase is blank")
        if len(text) > MAX_PHRASE_CHARS:
            raise ValueError(f"text: a phrase is {len(text)} characters; at most "
                             f"{MAX_PHRASE_CHARS}")


def _ms(seconds: float) -> float:
    return round(1000 * seconds, 2)
