"""Approximate nearest neighbours for embeddings too large to scan per click.

The index is a usearch HNSW graph (see bench/bench_ann.py for build time and recall
beside pynndescent, hnswlib and faiss). It stores vectors quantised (int8 for cosine,
float16 for euclidean), so it costs D or 2D bytes a point, and only proposes candidates:
each query asks for a margin more than ``k`` and re-scores them exactly with the
embedding's :class:`ExactIndex`. The distances returned are exact and recall@10 is
>= 0.95 (0.997 cosine, 1.000 euclidean on the bench data).

Which index answers a query (the exact one, this one once built in the background by
:data:`approximate_indexes`, or a sharded scan) is chosen in one place:
``distributed/dispatch.py`` ``neighbor_index``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from projector_core.kernels.knn import ExactIndex, candidate_count
from projector_core.kernels.neighbor_index import Metric, Progress, pad_columns
from projector_core.storage.recent import Recent

log = logging.getLogger(__name__)

# HNSW graph degree and build/search breadth; with the exact re-scoring these keep
# recall@10 >= 0.997 on the bench data at the lowest build time measured.
_CONNECTIVITY = 16
_EXPANSION_ADD = 64
_EXPANSION_SEARCH = 64
_FLOAT16_MAX = 6.0e4  # rows longer than this would overflow float16 storage
_GRAPH_BATCH = 4096  # rows per graph search in build: bounds the candidate copies (~60 MB)


class ApproximateIndex:
    """An HNSW graph over an embedding's finite rows, for one metric (a
    :class:`~projector_core.kernels.neighbor_index.NeighborIndex`)."""

    approximate = True

    def __init__(self, exact: ExactIndex, metric: Metric) -> None:
        from usearch.index import Index

        if exact.n_valid < 2:
            raise ValueError("an approximate index needs at least two finite rows")
        self.exact = exact
        self.metric = metric
        self.metrics: tuple[Metric, ...] = (metric,)
        self.n, self.dim = exact.n, exact.dim
        self.rows = np.flatnonzero(exact.valid_host)
        if metric == "cosine":
            kind, dtype = "cos", "i8"  # directions only: int8 after normalising is plenty
        else:
            longest = float(np.sqrt(exact.backend.to_numpy(exact.sq_norms).max()))
            kind, dtype = "l2sq", "f16" if longest < _FLOAT16_MAX else "f32"
        self._graph = Index(
            ndim=exact.dim,
            metric=kind,
            dtype=dtype,
            connectivity=_CONNECTIVITY,
            expansion_add=_EXPANSION_ADD,
            expansion_search=_EXPANSION_SEARCH,
        )
        # Added in slices so a memory-mapped embedding is never copied whole; keys are
        # positions in self.rows.
        all_finite = self.rows.size == exact.n
        step = 16384
        for start in range(0, self.rows.size, step):
            stop = min(self.rows.size, start + step)
            chunk = exact.host[start:stop] if all_finite else exact.host[self.rows[start:stop]]
            self._graph.add(np.arange(start, stop), np.asarray(chunk, np.float32))

    def query(
        self,
        queries: np.ndarray,
        k: int,
        metric: Metric | None = None,
        exclude: np.ndarray | Sequence[int] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`ExactIndex.query`, approximately: (indices [Q, k], exact distances).

        ``metric`` defaults to the one the index was built for; another is an error.
        """
        metric = metric or self.metric
        if metric != self.metric:
            raise ValueError(f"this index was built for {self.metric}, not {metric}")
        q, k, excluded = self.exact.validated(queries, k, metric, exclude)
        if k == 0 or q.shape[0] == 0:
            return np.zeros((q.shape[0], k), np.int64), np.zeros((q.shape[0], k), np.float32)
        wanted = candidate_count(k + (1 if excluded is not None else 0), self.rows.size)
        keys, _, counts = graph_search(self._graph, np.asarray(q, np.float32), wanted)
        if (counts < wanted).any():  # the graph came up short: scan exactly instead
            return self.exact.query(q, k, metric, excluded)
        candidates = self.rows[keys]
        backend = self.exact.backend
        return self.exact.rescore(q, backend.asarray(candidates), k, metric, excluded)

    def neighbors_of(
        self, rows: Sequence[int] | np.ndarray, k: int, metric: Metric | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Nearest rows to the given rows of the data, each row excluded from its own list."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        self.exact.check_rows(rows)
        return self.query(np.asarray(self.exact.host[rows]), k, metric, exclude=rows)

    def build(self, k: int, metric: Metric | None = None, rows: np.ndarray | None = None,
              progress: Progress | None = None) -> np.ndarray:
        """The kNN graph of ``rows`` (default: every finite row), -1 where the graph came
        up short. Candidates are re-ranked in float32 (one batched product, not the
        float64 re-scoring of :meth:`query`), so it costs little more than the graph
        search; the caller reports recall against the exact index."""
        if (metric or self.metric) != self.metric:
            raise ValueError(f"this index was built for {self.metric}, not {metric}")
        rows = self.rows if rows is None else np.asarray(rows, np.int64).reshape(-1)
        self.exact.check_rows(rows)
        out = np.empty((rows.size, k), np.int64)
        for start in range(0, rows.size, _GRAPH_BATCH):
            batch = rows[start:start + _GRAPH_BATCH]
            out[start:start + batch.size] = self._graph_rows(batch, k)
            if progress is not None:
                progress(min(1.0, (start + batch.size) / max(1, rows.size)))
        return out

    @property
    def finite(self) -> np.ndarray:
        return self.exact.valid_host

    def _graph_rows(self, rows: np.ndarray, k: int) -> np.ndarray:
        width = candidate_count(k + 1, self.rows.size)  # the row itself comes back too
        queries = np.asarray(self.exact.host[rows], np.float32)
        keys, _, counts = graph_search(self._graph, queries, width)
        present = np.arange(width)[None, :] < counts.reshape(-1, 1)
        ids = np.where(present, self.rows[np.clip(keys, 0, self.rows.size - 1)], -1)
        candidates = np.asarray(self.exact.host[np.maximum(ids, 0).reshape(-1)], np.float32)
        dots = np.einsum("qcd,qd->qc", candidates.reshape(rows.size, width, -1), queries)
        be = self.exact.backend
        if self.metric == "cosine":  # the query's own norm does not change its ranking
            score = -dots * be.to_numpy(self.exact.inv_norms)[np.maximum(ids, 0)]
        else:
            score = be.to_numpy(self.exact.sq_norms)[np.maximum(ids, 0)] - 2 * dots
        score[(ids < 0) | (ids == rows[:, None])] = np.inf
        order = np.argsort(score, axis=1, kind="stable")[:, :k]
        ranked = np.take_along_axis(ids, order, axis=1)
        return pad_columns(np.where(np.take_along_axis(score, order, axis=1) < np.inf, ranked, -1), k)


class _ApproximateIndexes:
    """Approximate indexes built one at a time in a background thread, kept per
    (embedding fingerprint, metric); the newest few are kept."""

    def __init__(self, capacity: int) -> None:
        self._builds: Recent[tuple[str, str], Future[ApproximateIndex]] = Recent(
            capacity, on_drop=Future.cancel)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ann-build")

    def ready(self, key: str, exact: ExactIndex, metric: Metric) -> ApproximateIndex | None:
        """The built index, or None after making sure a build is underway."""
        build = self._builds.get_or_compute(
            (key, metric), lambda: self._pool.submit(ApproximateIndex, exact, metric))
        if not build.done() or build.cancelled():
            return None
        if build.exception() is not None:
            log.warning("approximate index for %s failed: %s", key, build.exception())
            return None
        return build.result()

    def wait(self, key: str, metric: Metric, timeout: float | None = None) -> ApproximateIndex:
        """Block until the index for ``key`` is built (for tests and scripts)."""
        build = self._builds.peek((key, metric))
        if build is None:
            raise KeyError(f"no approximate index was asked for {key} ({metric})")
        return build.result(timeout)


approximate_indexes = _ApproximateIndexes(capacity=2)


def graph_search(graph: Any, queries: np.ndarray, width: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(keys int64 [Q, width], distances float32 [Q, width], counts [Q]) of a usearch search;
    entries past a row's count are padding. A batch of one query comes back as a single
    ``Matches`` (only the keys found, no counts), not as ``BatchMatches``: padded alike."""
    found = graph.search(queries, width)
    keys = np.zeros((queries.shape[0], width), np.int64)
    distances = np.full((queries.shape[0], width), np.inf, np.float32)
    if hasattr(found, "counts"):
        keys[:] = np.asarray(found.keys, np.int64).reshape(keys.shape)
        distances[:] = np.asarray(found.distances, np.float32).reshape(keys.shape)
        return keys, distances, np.asarray(found.counts)
    count = len(found.keys)
    keys[0, :count] = found.keys
    distances[0, :count] = found.distances
    return keys, distances, np.array([count])
