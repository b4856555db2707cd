"""The principal subspace in which the k-means cells rank candidate neighbours cheaply.

Ranking a candidate costs one multiply-add per dimension: in a subspace of d of the D
dimensions it costs d/D as much. A distance measured in a subspace is never larger than the
full one (a projection is a contraction), so true neighbours stay near; a row whose difference
lies mostly outside the subspace may look nearer than it is and take a shortlist place, which
the exact rescoring in full space then corrects. The subspace is the smallest principal
subspace of a sample whose shortlists, on that sample, hold ``SHORTLIST_RECALL`` of the exact
neighbours: embeddings whose variance sits in few directions get a few dozen dimensions, a flat
spectrum keeps them all (and loses nothing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SHORTLIST_RECALL = 0.995
_CHECK_QUERIES = 256
_CHECK_K = 10
_DIMENSIONS = (16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)


@dataclass(frozen=True)
class CoarseProjection:
    """Rows centred on ``mean`` and projected on ``basis`` (None: the full space, as is)."""

    mean: np.ndarray  # float32 [D]
    basis: np.ndarray | None  # float32 [D, d], orthonormal columns

    @property
    def dim(self) -> int:
        return self.mean.size if self.basis is None else self.basis.shape[1]

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        """float32 [R, d]: ``rows`` [R, D] in the subspace (distances between them shrink or stay)."""
        if self.basis is None:
            return np.ascontiguousarray(rows, np.float32)
        return np.asarray((rows - self.mean) @ self.basis, np.float32)


def choose_projection(sample: np.ndarray, shortlist: int) -> CoarseProjection:
    """The smallest principal subspace of ``sample`` (rows as distances are measured, float32
    [S, D]) in which the ``shortlist`` x k nearest rows of a few sample rows hold
    ``SHORTLIST_RECALL`` of their k exact nearest, k = 10."""
    size, dim = sample.shape
    whole = CoarseProjection(np.zeros(dim, np.float32), None)
    k = min(_CHECK_K, size - 2)
    if k < 1 or dim <= _DIMENSIONS[0]:
        return whole
    mean = sample.mean(axis=0, dtype=np.float64).astype(np.float32)
    centred = sample - mean
    _, vectors = np.linalg.eigh((centred.T @ centred).astype(np.float64))
    vectors = np.ascontiguousarray(vectors[:, ::-1], np.float32)  # largest variance first
    queries = np.random.default_rng(0).choice(size, min(_CHECK_QUERIES, size), replace=False)
    truth = _nearest(centred, queries, k)
    wanted = min(shortlist * k, size - 1)
    for d in _DIMENSIONS:
        if d >= dim:
            break
        found = _nearest(centred @ vectors[:, :d], queries, wanted)
        held = np.mean([np.intersect1d(t, f).size / k for t, f in zip(truth, found, strict=True)])
        if held >= SHORTLIST_RECALL:
            return CoarseProjection(mean, vectors[:, :d])
    return whole


def _nearest(rows: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` nearest rows (squared euclidean, unordered) to each query row, itself excluded."""
    scores = np.einsum("ij,ij->i", rows, rows)[None, :] - 2.0 * (rows[queries] @ rows.T)
    scores[np.arange(queries.size), queries] = np.inf
    return np.argpartition(scores, k - 1, axis=1)[:, :k]
