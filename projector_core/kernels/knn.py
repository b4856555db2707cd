"""Exact k nearest neighbours, cosine (1 - cos) and euclidean, by matrix products.

An :class:`ExactIndex` computes each row's norm and finiteness once per embedding, so a
query over N x D costs one pass over the data (a matrix-vector product, the memory
bandwidth floor) plus a partial sort. Candidates are picked in the data's precision
and then re-scored in float64, so the distances returned are exact and equal to
scikit-learn's brute force to float rounding. Memory stays bounded: the data are
scanned in row chunks and queries in batches, whatever N and the number of queries.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from projector_core.kernels.backend import Array, Backend, get_backend
from projector_core.kernels.neighbor_index import METRICS, Metric, Progress, graph_by_queries
from projector_core.storage.recent import Recent

# Bounds on temporaries: the score block of one query batch against one data chunk,
# the float64 candidate rows gathered for re-scoring, and queries per batch.
# On a CPU a score block above a few MB comes from fresh pages (glibc maps it): 128 MB blocks
# made a 256-row query over 1M rows 2.3x slower than 16 MB ones. A GPU wants large blocks.
_SCORE_BYTES = 16 * 2**20
_DEVICE_SCORE_BYTES = 128 * 2**20
_REFINE_BYTES = 64 * 2**20
_QUERY_BATCH = 1024
_NORM_CHUNK_BYTES = 64 * 2**20


def candidate_count(k: int, available: int) -> int:
    """How many candidates to re-score for a final top ``k``: a margin absorbs the
    rounding of the fast pass so near-ties on the boundary are ordered exactly."""
    return min(available, k + max(16, k // 4))


class ExactIndex:
    """Data on a backend plus per-row norms and a finite-row mask, computed once.

    Rows holding NaN or Inf are never returned as neighbours. A
    :class:`~projector_core.kernels.neighbor_index.NeighborIndex`.
    """

    metrics = METRICS
    approximate = False

    def __init__(self, data: np.ndarray, backend: Backend | None = None) -> None:
        if data.ndim != 2:
            raise ValueError(f"data must be 2-D (N, D), got shape {data.shape}")
        self.backend = backend or get_backend("cpu")
        xp = self.backend.xp
        dtype = data.dtype if data.dtype in (np.float32, np.float64) else np.dtype(np.float32)
        self.host = data  # kept for query rows by index and for approximate indexes
        self.dtype = dtype
        self.n, self.dim = data.shape
        self.vectors = self.backend.asarray(data, dtype)
        sq_norms = []
        valid = []
        step = max(1, _NORM_CHUNK_BYTES // max(1, self.dim * dtype.itemsize))
        for start in range(0, self.n, step):
            chunk = self.vectors[start : start + step]
            valid.append(xp.all(xp.isfinite(chunk), axis=1))
            sq_norms.append(xp.sum(chunk * chunk, axis=1))
        empty_f = xp.zeros((0,), dtype=xp.float64 if dtype == np.float64 else xp.float32)
        self.valid = xp.concat(valid) if valid else xp.zeros((0,), dtype=xp.bool)
        sq = xp.concat(sq_norms) if sq_norms else empty_f
        sq = xp.where(self.valid, sq, xp.zeros_like(sq))
        self.sq_norms = sq
        norms = xp.sqrt(sq)
        safe = xp.where(norms > 0, norms, xp.ones_like(norms))
        self.inv_norms = xp.where(norms > 0, 1.0 / safe, xp.zeros_like(norms))
        self.valid_host = self.backend.to_numpy(self.valid).astype(bool, copy=False)
        self.n_valid = int(self.valid_host.sum())

    def on(self, backend: Backend) -> ExactIndex:
        """This index on ``backend``, its arrays shared with the host where that device is the
        CPU (torch's selection is ~3x numpy's there), copied to a GPU otherwise."""
        if backend == self.backend:
            return self
        twin = copy.copy(self)
        twin.backend = backend
        for name in ("vectors", "valid", "sq_norms", "inv_norms"):
            host = np.ascontiguousarray(self.backend.to_numpy(getattr(self, name)))
            setattr(twin, name, backend.shared(host))
        return twin

    def query(
        self,
        queries: np.ndarray,
        k: int,
        metric: Metric = "cosine",
        exclude: np.ndarray | Sequence[int] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Nearest rows to each query vector, ascending by distance (ties by index).

        ``exclude`` gives one row index per query that must not be returned (the query
        point itself); -1 excludes nothing. ``k`` is clamped to the rows available.
        Returns (indices int64 [Q, k], distances float32 [Q, k]).
        """
        q, k, excluded = self.validated(queries, k, metric, exclude)
        if k == 0 or q.shape[0] == 0:
            return np.zeros((q.shape[0], k), np.int64), np.zeros((q.shape[0], k), np.float32)
        kc = candidate_count(k, self.n)
        indices = []
        distances = []
        for start in range(0, q.shape[0], _QUERY_BATCH):
            batch = q[start : start + _QUERY_BATCH]
            ex = None if excluded is None else excluded[start : start + _QUERY_BATCH]
            # NaN rows yield NaN scores by design (they are masked); numpy need not warn.
            with np.errstate(invalid="ignore", over="ignore"):
                cand = self._candidates(batch, kc, metric, ex)
            idx, dist = self.rescore(batch, cand, k, metric, ex)
            indices.append(idx)
            distances.append(dist)
        return np.concatenate(indices), np.concatenate(distances)

    def neighbors_of(
        self, rows: Sequence[int] | np.ndarray, k: int, metric: Metric = "cosine"
    ) -> tuple[np.ndarray, np.ndarray]:
        """Nearest rows to the given rows of the data, each row excluded from its own list."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        self.check_rows(rows)
        return self.query(np.asarray(self.host[rows]), k, metric, exclude=rows)

    def build(self, k: int, metric: Metric, rows: np.ndarray | None = None,
              progress: Progress | None = None) -> np.ndarray:
        """The exact kNN graph of ``rows`` (default: all): a full scan per batch of rows."""
        return graph_by_queries(self, k, metric, rows, progress)

    @property
    def finite(self) -> np.ndarray:
        return self.valid_host

    @property
    def exact(self) -> ExactIndex:
        return self

    def check_rows(self, rows: np.ndarray) -> None:
        """Raise ValueError unless every row index is in range and its row is finite."""
        if rows.size and (rows.min() < 0 or rows.max() >= self.n):
            raise ValueError(f"row index out of range: the embedding has {self.n} rows")
        bad = rows[~self.valid_host[rows]]
        if bad.size:
            raise ValueError(f"row {int(bad[0])} holds NaN or Inf values and has no neighbours")

    def validated(
        self,
        queries: np.ndarray,
        k: int,
        metric: Metric,
        exclude: np.ndarray | Sequence[int] | None,
    ) -> tuple[np.ndarray, int, np.ndarray | None]:
        """Checked queries [Q, D], ``k`` clamped to the rows available, exclusions [Q]."""
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}: use one of {', '.join(METRICS)}")
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        q = np.asarray(queries)
        if q.ndim == 1:
            q = q[None, :]
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise ValueError(
                f"query has {q.shape[-1] if q.ndim else 0} values; the embedding has {self.dim} dimensions"
            )
        if not np.isfinite(q).all():
            raise ValueError("query vector contains NaN or Inf values")
        ex = None
        if exclude is not None:
            ex = np.asarray(exclude, dtype=np.int64).reshape(-1)
            if ex.shape[0] != q.shape[0]:
                raise ValueError(f"exclude needs one index per query ({q.shape[0]}), got {ex.shape[0]}")
            if (ex >= self.n).any() or (ex < -1).any():
                raise ValueError(f"exclude index out of range: the embedding has {self.n} rows")
        available = self.n_valid - (1 if ex is not None else 0)
        return q, max(0, min(k, available)), ex

    def _candidates(self, batch: np.ndarray, kc: int, metric: Metric, exclude: np.ndarray | None) -> Array:
        """Global row indices of the ``kc`` best rows per query by the fast score."""
        be, xp = self.backend, self.backend.xp
        qd = be.asarray(batch, self.dtype)
        qn = qd.shape[0]
        block_bytes = _SCORE_BYTES if self.backend.device == "cpu" else _DEVICE_SCORE_BYTES
        rows_per_chunk = max(kc, block_bytes // (self.dtype.itemsize * qn))
        ex_dev = None if exclude is None else be.asarray(exclude)
        q_rows = xp.arange(qn, device=qd.device)
        best_scores = best_idx = None
        for start in range(0, self.n, rows_per_chunk):
            stop = min(self.n, start + rows_per_chunk)
            scores = xp.matmul(qd, xp.matrix_transpose(self.vectors[start:stop]))
            if metric == "cosine":  # in place: the block is the largest temporary
                scores *= -self.inv_norms[None, start:stop]
            else:
                scores *= -2.0
                scores += self.sq_norms[None, start:stop]
            if self.n_valid < self.n:
                scores = xp.where(self.valid[None, start:stop], scores, xp.inf)
            if ex_dev is not None:
                inside = (ex_dev >= start) & (ex_dev < stop)
                scores[q_rows[inside], ex_dev[inside] - start] = xp.inf
            scores, cols = be.smallest_k(scores, kc)
            idx = xp.astype(cols, xp.int64) + start
            if best_scores is None:
                best_scores, best_idx = scores, idx
                continue
            merged_scores = xp.concat([best_scores, scores], axis=1)
            merged_idx = xp.concat([best_idx, idx], axis=1)
            best_scores, pick = be.smallest_k(merged_scores, kc)
            best_idx = xp.take_along_axis(merged_idx, pick, axis=1)
        return best_idx

    def rescore(
        self,
        batch: np.ndarray,
        cand: Array,
        k: int,
        metric: Metric,
        exclude: np.ndarray | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Exact float64 distances from each query to its candidate rows (a backend
        int array [Q, C]), then the top ``k`` by (distance, index); non-finite and
        excluded rows sort last."""
        be, xp = self.backend, self.backend.xp
        qn, kc = cand.shape
        row_bytes = self.dim * 8
        cols = max(1, min(kc, _REFINE_BYTES // row_bytes))  # candidates per block
        sub = max(1, _REFINE_BYTES // (cols * row_bytes))  # queries per block
        cand_host = be.to_numpy(cand).astype(np.int64, copy=False)
        dist_host = np.empty(cand_host.shape, np.float64)
        for start in range(0, qn, sub):
            stop = min(qn, start + sub)
            q64 = be.asarray(batch[start:stop], np.float64)[:, None, :]
            for first in range(0, kc, cols):
                last = min(kc, first + cols)
                flat = xp.reshape(cand[start:stop, first:last], (-1,))
                rows = xp.astype(xp.take(self.vectors, flat, axis=0), xp.float64)
                rows = xp.reshape(rows, (stop - start, last - first, self.dim))
                with np.errstate(invalid="ignore", over="ignore"):  # NaN rows, masked next
                    d = exact_distances(xp, rows, q64, metric)
                ok = xp.reshape(xp.take(self.valid, flat, axis=0), d.shape)
                dist_host[start:stop, first:last] = be.to_numpy(xp.where(ok, d, xp.inf))
        if exclude is not None:
            dist_host[cand_host == exclude[:, None]] = np.inf
        order = np.lexsort((cand_host, dist_host), axis=1)[:, :k]
        return (
            np.take_along_axis(cand_host, order, axis=1),
            np.take_along_axis(dist_host, order, axis=1).astype(np.float32),
        )


def exact_distances(xp: Any, rows: Array, queries: Array, metric: Metric) -> Array:
    """Distances between broadcastable ``rows`` and ``queries`` along the last axis.

    Cosine treats a zero vector as orthogonal to everything (distance 1), as
    scikit-learn does; results are clipped to [0, 2] against rounding.
    """
    if metric == "euclidean":
        diff = rows - queries
        return xp.sqrt(xp.sum(diff * diff, axis=-1))
    dots = xp.sum(rows * queries, axis=-1)
    norms = xp.sqrt(xp.sum(rows * rows, axis=-1)) * xp.sqrt(xp.sum(queries * queries, axis=-1))
    safe = xp.where(norms > 0, norms, xp.ones_like(norms))
    cos = xp.where(norms > 0, dots / safe, xp.zeros_like(dots))
    return xp.clip(1.0 - cos, 0.0, 2.0)


def knn(
    data: np.ndarray | ExactIndex,
    queries: np.ndarray,
    k: int,
    metric: Metric = "cosine",
    exclude: np.ndarray | Sequence[int] | None = None,
    backend: Backend | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact kNN of ``queries`` in ``data``: (indices int64 [Q, k], distances float32 [Q, k]).

    Pass an :class:`ExactIndex` (e.g. from :func:`exact_index`) to reuse the norms
    across calls; a bare array builds a throwaway index on ``backend``.
    """
    index = data if isinstance(data, ExactIndex) else ExactIndex(data, backend)
    return index.query(queries, k, metric, exclude)


_indexes: Recent[tuple[str, str, str], ExactIndex] = Recent(4)  # (fingerprint, backend, device)


def exact_index(key: str, load: Callable[[], np.ndarray], backend: Backend | None = None) -> ExactIndex:
    """The cached :class:`ExactIndex` for ``key`` (an embedding fingerprint), built from
    ``load()`` on first use."""
    be = backend or get_backend("cpu")
    return _indexes.get_or_compute((key, be.name, be.device), lambda: ExactIndex(load(), be))
