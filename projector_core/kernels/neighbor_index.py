"""One shape for every nearest-neighbour index, after openTSNE's ``KNNIndex``.

An index declares the metrics it answers and whether it is approximate; ``query`` and
``neighbors_of`` answer a few points (the inspector), ``build`` answers every point at
once (the k-nearest-neighbour graph a comparison needs). The exact scan
(:class:`~projector_core.kernels.knn.ExactIndex`), the HNSW graph
(:class:`~projector_core.kernels.ann.ApproximateIndex`), the k-means cells
(:class:`~projector_core.kernels.cells.CellIndex`) and the sharded scan
(:class:`~projector_core.distributed.knn.ShardedIndex`) all take this shape, so routes and
kernels name the protocol, never a union of classes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np

Metric = Literal["cosine", "euclidean"]
METRICS: tuple[Metric, ...] = ("cosine", "euclidean")
Progress = Callable[[float], None]

_GRAPH_BATCH = 4096  # rows per neighbour query when a graph is built by queries (~60 MB)


@runtime_checkable
class NeighborIndex(Protocol):
    """Nearest rows of an (N, D) embedding, by cosine (1 - cos) or euclidean distance."""

    metrics: tuple[Metric, ...]  # the metrics it answers; others are a ValueError
    approximate: bool  # True when a true neighbour may be missed (recall below 1)
    n: int
    dim: int

    @property
    def finite(self) -> np.ndarray:
        """bool [N]: rows without NaN/Inf, the only rows that have or are neighbours."""

    @property
    def exact(self) -> NeighborIndex:
        """The exact index over the same rows (itself when exact): recall's reference."""

    def query(self, queries: np.ndarray, k: int, metric: Metric = "cosine",
              exclude: np.ndarray | Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Nearest rows to each query vector: (indices int64 [Q, k], distances float32 [Q, k]),
        nearest first; ``exclude`` is one row per query never returned (-1: none)."""

    def neighbors_of(self, rows: Sequence[int] | np.ndarray, k: int,
                     metric: Metric = "cosine") -> tuple[np.ndarray, np.ndarray]:
        """As ``query`` for rows of the data, each row excluded from its own list."""

    def build(self, k: int, metric: Metric, rows: np.ndarray | None = None,
              progress: Progress | None = None) -> np.ndarray:
        """The kNN graph: the ``k`` nearest other rows of each of ``rows`` (default: all),
        int64 [R, k], nearest first, -1 where fewer exist. ``progress`` gets 0..1."""


def graph_by_queries(index: NeighborIndex, k: int, metric: Metric, rows: np.ndarray | None,
                     progress: Progress | None) -> np.ndarray:
    """``build`` for an index without a faster all-points path: ``neighbors_of`` in batches."""
    rows = np.arange(index.n) if rows is None else np.asarray(rows, np.int64).reshape(-1)
    out = np.empty((rows.size, k), np.int64)
    for start in range(0, rows.size, _GRAPH_BATCH):
        batch = rows[start:start + _GRAPH_BATCH]
        found, _ = index.neighbors_of(batch, k, metric)
        out[start:start + batch.size] = pad_columns(found, k)
        if progress is not None:
            progress(min(1.0, (start + batch.size) / max(1, rows.size)))
    return out


def pad_columns(found: np.ndarray, k: int) -> np.ndarray:
    """Neighbour lists widened to ``k`` columns with -1 (fewer finite rows than ``k``)."""
    if found.shape[1] >= k:
        return found
    return np.hstack([found, np.full((found.shape[0], k - found.shape[1]), -1, np.int64)])

