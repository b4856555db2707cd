"""The principal subspace in which the k-means cells rank candidate neighbours cheaply.

Ranking a candidate costs one multiply-add per dimension: in a subspace of d of the D
dimensions it costs d/D as much. A distance measured in a subspace is never larger than the
full one (a projection is a contraction), so true neighbours stay near; a row whose difference
lies mostly outside the subspace may look nearer than it is and take a shortlist place, which
the exact rescoring in full space then corrects. What decides is where the differences between
neighbours lie, not where the variance of the data lies: the subspace is the smallest principal
subspace of a sample holding ``LOCAL_ENERGY`` of the squared length of the differences between
sample rows and their nearest sample rows, and at most half the dimensions (beyond that it saves
little). Embeddings whose neighbours differ in a few directions get a few dozen dimensions; a
spread spectrum keeps them all, and loses nothing. Measured at 1M x 128 (bench_compare.py):
clusters on a 32-dim manifold hold 0.987 of it in 32 dims (recall 0.987 at 32 dims); a spectrum
decaying as 1/i holds 0.877 in 96 (recall 0.969 there, 0.994 in full).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LOCAL_ENERGY = 0.95
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


def choose_projection(sample: np.ndarray) -> CoarseProjection:
    """The smallest principal subspace of ``sample`` (rows as distances are measured, float32
    [S, D]) holding ``LOCAL_ENERGY`` of the differences between a few sample rows and their
    10 nearest sample rows; the full space when none of at most D/2 dimensions does."""
    size, dim = sample.shape
    whole = CoarseProjection(np.zeros(dim, np.float32), None)
    k = min(_CHECK_K, size - 2)
    if k < 1 or dim < 2 * _DIMENSIONS[0]:
        return whole
    mean = sample.mean(axis=0, dtype=np.float64).astype(np.float32)
    centred = sample - mean
    _, vectors = np.linalg.eigh((centred.T @ centred).astype(np.float64))
    vectors = np.ascontiguousarray(vectors[:, ::-1], np.float32)  # largest variance first
    queries = np.random.default_rng(0).choice(size, min(_CHECK_QUERIES, size), replace=False)
    differences = (centred[queries, None, :] - centred[_nearest(centred, queries, k)]).reshape(-1, dim)
    energy = np.cumsum(np.square(differences @ vectors).sum(axis=0))
    held = energy / max(float(energy[-1]), np.finfo(np.float32).tiny)
    for d in _DIMENSIONS:
        if d > dim // 2:
            break
        if held[d - 1] >= LOCAL_ENERGY:
            return CoarseProjection(mean, vectors[:, :d])
    return whole


def _nearest(rows: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` nearest rows (squared euclidean, unordered) to each query row, itself excluded."""
    scores = np.einsum("ij,ij->i", rows, rows)[None, :] - 2.0 * (rows[queries] @ rows.T)
    scores[np.arange(queries.size), queries] = np.inf
    return np.argpartition(scores, k - 1, axis=1)[:, :k]
