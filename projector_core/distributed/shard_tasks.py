"""What one worker computes on one shard (rows [start, stop)), and how the parts combine.

Plain numpy, no Dask: a worker runs these on the shard it holds, and without a cluster the
same functions run in-process shard by shard. Each returns something small (top-k per query,
D x D sums, a few columns of coordinates), so what crosses the network is independent of N
per shard. The arithmetic is the single-machine kernels' (kernels/knn.py, pca.py, custom.py),
so the merged results equal theirs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from projector_core.formats.chunked import Shard
from projector_core.kernels.ann import ApproximateIndex
from projector_core.kernels.knn import ExactIndex, exact_distances
from projector_core.kernels.neighbor_index import Metric, NeighborIndex
from projector_core.storage.recent import Recent


@dataclass
class HeldShard:
    """A shard read into memory with its norms: what a worker keeps between queries."""

    start: int
    stop: int
    index: ExactIndex
    source: object = None  # where the rows came from: names the shard's approximate index


def hold(shard: Shard) -> HeldShard:
    """Read a shard and compute its norms once (kept on the worker that read it)."""
    return HeldShard(shard.start, shard.stop, ExactIndex(shard.read()), shard.source)


# HNSW graphs of the shards this worker process holds, built on first approximate query.
_GRAPHS: Recent[tuple[Any, ...], ApproximateIndex] = Recent(512)


def _graph(part: HeldShard, metric: Metric) -> NeighborIndex:
    if part.index.n_valid < 2:
        return part.index
    return _GRAPHS.get_or_compute((part.source, part.start, part.stop, metric),
                                  lambda: ApproximateIndex(part.index, metric))


def held(item: HeldShard | Shard) -> HeldShard:
    return item if isinstance(item, HeldShard) else hold(item)


def shard_rows(item: HeldShard | Shard) -> tuple[int, int]:
    """(rows, finite rows) of a shard."""
    part = held(item)
    return part.index.n, part.index.n_valid


# -- exact kNN --------------------------------------------------------------------------------


def shard_knn(item: HeldShard | Shard, queries: np.ndarray, k: int, metric: Metric,
              exclude: np.ndarray | None, approximate: bool = False
              ) -> tuple[np.ndarray, np.ndarray]:
    """The shard's exact top ``k`` per query: (global row indices [Q, k'], float64 distances).

    ``exclude`` holds one global row per query (-1: none). Distances are re-computed in
    float64 for the rows found, so the merge orders them exactly as the single kernel does.
    ``approximate`` takes the candidates from the shard's HNSW graph (kernels/ann.py, built
    on first use on this worker) instead of a scan.
    """
    part = held(item)
    # A fresh native array: one Dask deserialised may expose a buffer format ("=f") that
    # usearch refuses.
    queries = np.array(queries, dtype=queries.dtype.newbyteorder("="), order="C")
    local = None
    if exclude is not None:
        inside = (exclude >= part.start) & (exclude < part.stop)
        local = np.where(inside, exclude - part.start, -1) if inside.any() else None
    if part.index.n_valid - (1 if local is not None else 0) <= 0:
        empty = np.zeros((queries.shape[0], 0))
        return empty.astype(np.int64), empty
    index = _graph(part, metric) if approximate else part.index
    idx, _ = index.query(queries, k, metric, local)
    rows = part.index.host[idx.reshape(-1)].astype(np.float64).reshape(*idx.shape, -1)
    distances = exact_distances(np, rows, queries.astype(np.float64)[:, None, :], metric)
    return idx + part.start, np.asarray(distances, np.float64)


def best_k(parts: list[tuple[np.ndarray, np.ndarray]], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The best ``k`` of several top-k lists by (float64 distance, index), as kernels/knn.py."""
    indices = np.concatenate([p[0] for p in parts], axis=1)
    distances = np.concatenate([p[1] for p in parts], axis=1)
    order = np.lexsort((indices, distances), axis=1)[:, :k]
    return np.take_along_axis(indices, order, axis=1), np.take_along_axis(distances, order, axis=1)


def shards_knn(items: list[HeldShard | Shard], queries: np.ndarray, k: int, metric: Metric,
               exclude: np.ndarray | None, approximate: bool = False
               ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`shard_knn` over the shards one worker holds, merged there: one task and one
    small reply per worker and query batch, whatever the number of shards."""
    return best_k([shard_knn(item, queries, k, metric, exclude, approximate) for item in items],
                  k)


def merge_knn(parts: list[tuple[np.ndarray, np.ndarray]], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The final top ``k``: (indices int64, distances float32) as the single kernel answers."""
    indices, distances = best_k(parts, k)
    return indices, distances.astype(np.float32)


# -- PCA --------------------------------------------------------------------------------------


def shard_finite_mean(item: HeldShard | Shard) -> tuple[int, np.ndarray]:
    """(finite rows, their float64 sum): the pivot the covariance is taken around."""
    x = held(item).index.host
    ok = np.isfinite(x).all(axis=1)
    return int(ok.sum()), x[ok].sum(axis=0, dtype=np.float64)


def _moved(x: np.ndarray, mean: np.ndarray, spherize: bool, shift: np.ndarray | None) -> np.ndarray:
    """Finite rows centred on ``mean`` and, if asked, scaled to unit length, minus ``shift``."""
    x = x[np.isfinite(x).all(axis=1)] - mean.astype(np.float32)
    if spherize:
        norms = np.sqrt((x * x).sum(axis=1, keepdims=True))
        x = x / np.where(norms > 0, norms, 1.0)
    if shift is not None:
        x = x - shift.astype(np.float32)
    return x


def shard_covariance(item: HeldShard | Shard, pivot: np.ndarray, spherize: bool
                     ) -> tuple[int, np.ndarray, np.ndarray]:
    """(rows, float64 column sums, float64 Gram matrix) of the shard's moved rows.

    Rows near the pivot (a mean) lose nothing to cancellation, as in kernels/pca.py.
    """
    x = _moved(held(item).index.host, pivot, spherize, None)
    return x.shape[0], x.sum(axis=0, dtype=np.float64), (x.T @ x).astype(np.float64)


def add_parts(*parts: tuple[Any, ...]) -> tuple[Any, ...]:
    """Element-wise sum of equally shaped tuples (counts, sums, matrices)."""
    return tuple(sum(values) for values in zip(*parts, strict=True))


def sum_over(items: list[HeldShard | Shard], function: Callable[..., tuple[Any, ...]],
             *args: Any) -> tuple[Any, ...]:
    """``function(shard, *args)`` added up over the shards one worker holds, there."""
    return add_parts(*[function(item, *args) for item in items])


def rows_of(items: list[HeldShard | Shard], rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(global rows found, their vectors) among the shards one worker holds."""
    found, vectors = [], []
    for item in items:
        part = held(item)
        inside = rows[(rows >= part.start) & (rows < part.stop)]
        found.append(inside)
        vectors.append(part.index.host[inside - part.start])
    return np.concatenate(found), np.concatenate(vectors)


def shard_project(item: HeldShard | Shard, axes: np.ndarray, offset: np.ndarray, center: np.ndarray,
                  spherize: bool, shift: np.ndarray | None) -> np.ndarray:
    """float32 coordinates of the shard's rows on ``axes`` (D x c); NaN where not finite.

    Plain: x @ axes - offset (no centred copy, as kernels/pca.py and custom.py). Spherized:
    the moved rows times the axes.
    """
    x = held(item).index.host
    ok = np.isfinite(x).all(axis=1)
    out = np.full((x.shape[0], axes.shape[1]), np.nan, np.float32)
    if spherize:
        out[ok] = _moved(x, center, True, shift) @ axes.astype(np.float32)
    else:
        product = x[ok] @ axes.astype(np.float32)
        out[ok] = (product - offset).astype(np.float32)
    return out


# -- custom projection ------------------------------------------------------------------------


def shard_side_sums(item: HeldShard | Shard, members: list[np.ndarray]
                    ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """(finite rows, their float64 sum, per-side float64 sums, per-side counts).

    ``members`` gives, per side, the shard-local rows its metadata query matched.
    """
    x = held(item).index.host
    ok = np.isfinite(x).all(axis=1)
    total = x[ok].astype(np.float64).sum(axis=0)
    sums = np.zeros((len(members), x.shape[1]), np.float64)
    counts = np.zeros(len(members), np.int64)
    for side, rows in enumerate(members):
        rows = rows[ok[rows]]
        sums[side] = x[rows].astype(np.float64).sum(axis=0)
        counts[side] = rows.size
    return int(ok.sum()), total, sums, counts
