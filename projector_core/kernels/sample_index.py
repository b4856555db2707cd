"""One neighbour index over a sampled fit's sample, for both of its searches.

A sampled t-SNE or UMAP (:mod:`kernels.sampling`) searches twice: each sample point's k nearest
other sample points (the fit's affinities), and, for every one of the up to millions of points
placed afterwards, its nearest sample points. One usearch HNSW graph over the sample answers
both, batched in C++. bench/bench_sample_neighbors.py (50k x 50 blobs, 16k placement
queries, one thread, load 2.4): the fit's k = 90 graph in 7.9 s with the build (openTSNE's
Annoy: 27.5 s), the placement queries in 0.4 s (Annoy, one Python call per point: 2.5 s;
the project's :class:`~kernels.ann.ApproximateIndex`, whose exact float64 re-scoring of a
wide candidate list is what a click needs, not a layout: 0.7 s), recall@15 0.92 (Annoy 0.82).
The graph stores float16 (issue 38: on 20k MiniLM word vectors, 384-D, the build took half the
time of a float32 graph's and the search 0.7x, recall@15 0.998 against 0.999); the few
candidates it returns are re-scored exactly in float32, so the distances a fit reads are
exact.

Distances are euclidean (not squared), as openTSNE's and umap-learn's own searches return.
The index pickles (its graph as usearch's own serialised bytes), so a Dask worker that built
it can send it to the others that place their shards with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from projector_core.kernels.ann import graph_search

_CONNECTIVITY = 16  # as kernels/ann.py: recall >= 0.99 at the lowest build time measured
_EXPANSION_ADD = 64
_EXPANSION_SEARCH = 64
# Placement asks for a point's 15 nearest sample rows to place it among them: a narrower
# search (recall@15 0.96 on a 25k sample, 0.92 on 50k, 0.85 on 100k) costs half as much, and
# the placed points' trustworthiness stays within the goal (bench/bench_big_projection.py).
_EXPANSION_PLACE = 32
_ADD_BATCH = 16_384
_QUERY_BATCH = 16_384  # queries per graph search
_RESCORE_BATCH = 1_024  # bounds the [batch, k, D] float32 gather of candidate rows


class SampleIndex:
    """An HNSW graph over the (finite) rows of ``sample``, stored as float16, its candidates
    re-scored exactly against the float32 sample."""

    def __init__(self, sample: np.ndarray) -> None:
        from usearch.index import Index

        self.sample = np.ascontiguousarray(sample, dtype=np.float32)
        self.n_samples = self.sample.shape[0]
        self._graph = Index(ndim=self.sample.shape[1], metric="l2sq", dtype="f16",
                            connectivity=_CONNECTIVITY, expansion_add=_EXPANSION_ADD,
                            expansion_search=_EXPANSION_SEARCH)
        for start in range(0, self.n_samples, _ADD_BATCH):
            stop = min(self.n_samples, start + _ADD_BATCH)
            self._graph.add(np.arange(start, stop), self.sample[start:stop])

    def __getstate__(self) -> dict[str, Any]:
        saved = self._graph.save()  # no path: the graph's bytes
        assert saved is not None
        return {"sample": self.sample, "graph": bytes(saved)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        from usearch.index import Index

        self.sample = state["sample"]
        self.n_samples = self.sample.shape[0]
        graph = Index.restore(bytearray(state["graph"]))
        assert graph is not None
        self._graph = graph

    def query(self, points: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Each point's ``k`` nearest sample rows, nearest first: (int64 [Q, k], float32
        euclidean distances [Q, k]). openTSNE's ``KNNIndex.query`` signature, so a fitted
        t-SNE's ``affinities.knn_index`` can be this index when it places new points."""
        self._graph.expansion_search = max(_EXPANSION_PLACE, k)  # type: ignore[misc]  # usearch: setter unseen
        return self._search(np.asarray(points, np.float32), k, None)

    def self_neighbors(self, k: int, on_progress: Callable[[float], None] | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
        """Each sample row's ``k`` nearest other sample rows (the fit's neighbour graph).
        ``on_progress(fraction searched)`` runs after each batch (and may raise to stop)."""
        self._graph.expansion_search = max(_EXPANSION_SEARCH, k + 1)  # type: ignore[misc]  # as above
        return self._search(self.sample, k, np.arange(self.n_samples), on_progress)

    def _search(self, points: np.ndarray, k: int, own: np.ndarray | None,
                on_progress: Callable[[float], None] | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
        k = min(k, self.n_samples - (0 if own is None else 1))
        width = k + (0 if own is None else 1)  # a row finds itself first: one more
        indices = np.empty((points.shape[0], k), np.int64)
        distances = np.empty((points.shape[0], k), np.float32)
        for start in range(0, points.shape[0], _QUERY_BATCH):
            batch = np.ascontiguousarray(points[start:start + _QUERY_BATCH])
            ids, squared, counts = graph_search(self._graph, batch, width)
            squared[np.arange(width)[None, :] >= counts.reshape(-1, 1)] = np.inf
            squared = self._exact(batch, ids, squared)
            if own is not None:
                squared[ids == own[start:start + batch.shape[0], None]] = np.inf
            order = np.argsort(squared, axis=1, kind="stable")[:, :k]
            picked = np.take_along_axis(squared, order, axis=1)
            found_ids = np.take_along_axis(ids, order, axis=1)
            short = np.flatnonzero(~np.isfinite(picked).all(axis=1))
            if short.size:  # the graph came up short (rare): scan those points exactly
                mine = None if own is None else own[start + short]
                found_ids[short], picked[short] = self._scan(batch[short], k, mine)
            indices[start:start + batch.shape[0]] = found_ids
            distances[start:start + batch.shape[0]] = np.sqrt(np.maximum(picked, 0))
            if on_progress is not None:
                on_progress((start + batch.shape[0]) / points.shape[0])
        return indices, distances

    def _exact(self, points: np.ndarray, ids: np.ndarray, squared: np.ndarray) -> np.ndarray:
        """The exact float32 squared distances of the graph's candidates (inf where none)."""
        found = np.isfinite(squared)
        out = np.full_like(squared, np.inf)
        for lo in range(0, points.shape[0], _RESCORE_BATCH):
            hi = lo + _RESCORE_BATCH
            diff = self.sample[np.where(found[lo:hi], ids[lo:hi], 0)] - points[lo:hi, None, :]
            out[lo:hi] = np.where(found[lo:hi], np.einsum("qkd,qkd->qk", diff, diff), np.inf)
        return out

    def _scan(self, points: np.ndarray, k: int,
              own: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Exact ``k`` nearest rows (and squared distances) of a few points."""
        squared = np.einsum("ij,ij->i", self.sample, self.sample)[None, :] - 2 * (
            points @ self.sample.T) + np.einsum("qd,qd->q", points, points)[:, None]
        if own is not None:
            squared[np.arange(points.shape[0]), own] = np.inf
        order = np.argsort(squared, axis=1, kind="stable")[:, :k]
        return order, np.take_along_axis(squared, order, axis=1)
