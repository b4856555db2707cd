"""Exact kNN over a chunked embedding: per-shard top-k by matrix products, merged.

:class:`ShardedIndex` answers like :class:`~projector_core.kernels.knn.ExactIndex`
(``query``, ``neighbors_of``), so routes use either. With a cluster each worker scans the
shards it holds; without one the shards are read and scanned in turn in this process, so
memory stays one shard whatever N. Each shard's exact top k (k global at most) contains
every one of the global top k that lies in it, and the merge orders by (float64 distance,
index) as the single-machine kernel does, so the answers are identical.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from projector_core.distributed.shard_tasks import merge_knn, rows_of, shard_knn, shards_knn
from projector_core.formats.chunked import ChunkedVectors
from projector_core.kernels.neighbor_index import METRICS, Metric, Progress, graph_by_queries

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster


def map_shards(vectors: ChunkedVectors, cluster: Cluster | None,
               function: Callable[..., Any], *args: Any) -> list[Any]:
    """``function(shard, *args)`` for every shard: on the workers, or here one at a time."""
    if cluster is not None:
        return cluster.map(function, cluster.held(vectors), *args)
    return [function(shard, *args) for shard in vectors.shards()]


class ShardedIndex:
    """Exact neighbours over the shards of a chunked embedding (a
    :class:`~projector_core.kernels.neighbor_index.NeighborIndex`)."""

    metrics = METRICS

    def __init__(self, vectors: ChunkedVectors, cluster: Cluster | None = None,
                 approximate: bool = False) -> None:
        self.vectors = vectors
        self.cluster = cluster
        self.approximate = approximate  # candidates from an HNSW graph per shard, re-scored
        self.n, self.dim = vectors.shape
        self.last_bytes_moved = 0  # between this process and the workers, for the last query
        self._finite: np.ndarray | None = None

    @property
    def finite(self) -> np.ndarray:
        """Rows without NaN/Inf, read shard by shard here on first use (one pass over the data)."""
        if self._finite is None:
            self._finite = np.concatenate(
                [np.isfinite(shard.read()).all(axis=1) for shard in self.vectors.shards()]
                or [np.zeros(0, bool)])
        return self._finite

    @property
    def exact(self) -> ShardedIndex:
        return ShardedIndex(self.vectors, self.cluster) if self.approximate else self

    def build(self, k: int, metric: Metric, rows: np.ndarray | None = None,
              progress: Progress | None = None) -> np.ndarray:
        """The kNN graph of ``rows`` (default: all), by queries of every shard in batches."""
        return graph_by_queries(self, k, metric, rows, progress)

    def query(self, queries: np.ndarray, k: int, metric: Metric = "cosine",
              exclude: np.ndarray | Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """As ExactIndex.query: (indices int64 [Q, k], distances float32 [Q, k])."""
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}: use one of {', '.join(METRICS)}")
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        q = np.asarray(queries)
        q = q[None, :] if q.ndim == 1 else q
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise ValueError(f"query has {q.shape[-1] if q.ndim else 0} values; the embedding "
                             f"has {self.dim} dimensions")
        if not np.isfinite(q).all():
            raise ValueError("query vector contains NaN or Inf values")
        ex = None
        if exclude is not None:
            ex = np.asarray(exclude, np.int64).reshape(-1)
            if ex.shape[0] != q.shape[0] or (ex >= self.n).any() or (ex < -1).any():
                raise ValueError(f"exclude needs one index per query, each below {self.n}")
        if self.cluster is not None:
            parts = self.cluster.map_by_worker(shards_knn, self.cluster.held(self.vectors),
                                               q, k, metric, ex, self.approximate)
        else:
            parts = map_shards(self.vectors, None, shard_knn, q, k, metric, ex)
        self.last_bytes_moved = (len(parts) * (q.nbytes + (ex.nbytes if ex is not None else 0))
                                 + sum(p[0].nbytes + p[1].nbytes for p in parts))
        return merge_knn(parts, k)

    def _rows(self, rows: np.ndarray) -> np.ndarray:
        """The vectors of ``rows``: from the workers that hold them (a few KB), or read here
        (which reads their whole storage chunks) without a cluster."""
        if self.cluster is None:
            return self.vectors[rows]
        parts = self.cluster.map_by_worker(rows_of, self.cluster.held(self.vectors), rows)
        position = {int(row): i for i, row in enumerate(np.concatenate([p[0] for p in parts]))}
        vectors = np.concatenate([p[1] for p in parts])
        return vectors[[position[int(row)] for row in rows]]

    def neighbors_of(self, rows: Sequence[int] | np.ndarray, k: int,
                     metric: Metric = "cosine") -> tuple[np.ndarray, np.ndarray]:
        """Nearest rows to the given rows, each row excluded from its own list."""
        rows = np.asarray(rows, np.int64).reshape(-1)
        if rows.size and (rows.min() < 0 or rows.max() >= self.n):
            raise ValueError(f"row index out of range: the embedding has {self.n} rows")
        points = self._rows(rows)
        bad = rows[~np.isfinite(points).all(axis=1)]
        if bad.size:
            raise ValueError(f"row {int(bad[0])} holds NaN or Inf values and has no neighbours")
        return self.query(points, k, metric, exclude=rows)
