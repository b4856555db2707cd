"""A new vector (a phrase's) placed on a finished projection's map, where the projection would
put it.

A linear projection (PCA, the custom projection, precomputed coordinates) is an affine map of
the vectors, of the spherized vectors when PCA spherized them. The map is recovered from the
job's own coordinates by least squares over a sample of rows and kept only when it reproduces
other rows as well, so the marker is where the projection's basis puts the vector, any
alignment to another job included, without the job keeping its basis.

t-SNE and UMAP, sampled or full, place a new point from its nearest points: the sampled fits
start each placed point at its neighbours' positions weighted by UMAP's fuzzy memberships
(``kernels/umap.py`` ``place``: umap-learn's transform). The marker is that start, over the
phrase's :data:`PLACE_NEIGHBORS` nearest points with coordinates, without the optimisation
steps that follow, so it stays among the points listed first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from projector_core.storage.recent import Recent

PLACE_NEIGHBORS = 10
LINEAR_METHODS = ("pca", "custom", "precomputed")
LINEAR_MAX_DIM = 2048  # above, a least-squares fit takes seconds: neighbours place instead
LINEAR_TOLERANCE = 1e-3  # held-out RMS error over the coordinates' spread: float32 rounding
HELD_OUT = 256
KEEP_MAPS = 8
# umap-learn's smooth_knn_dist: its bisection's steps and tolerance, and the floor on the
# kernel width as a share of the mean distance.
_SMOOTH_STEPS = 64
_SMOOTH_TOLERANCE = 1e-5
_MIN_K_DIST_SCALE = 1e-3
_CHUNK_ROWS = 65536


@dataclass(frozen=True)
class LinearMap:
    """coordinates = rows @ weights + offset, the rows first centred on ``center`` and scaled
    to length 1 (zero rows stay zero) when the projection spherized them."""

    weights: np.ndarray  # float64 [D, c]
    offset: np.ndarray  # float64 [c]
    center: np.ndarray | None

    def __call__(self, vectors: np.ndarray) -> np.ndarray:
        return np.asarray(_moved(np.asarray(vectors, np.float64), self.center) @ self.weights + self.offset)


_maps: Recent[str, LinearMap | None] = Recent(KEEP_MAPS)


def linear_map(job_id: str, method: str | None, vectors: Any,
               coordinates: Any) -> LinearMap | None:
    """The job's affine map (fitted once per job), or None when its method is not linear or
    no affine map reproduces its coordinates."""
    if method not in LINEAR_METHODS or vectors.shape[1] > LINEAR_MAX_DIM:
        return None
    return _maps.get_or_compute(job_id, lambda: fit_linear(vectors, coordinates))


def fit_linear(vectors: Any, coordinates: Any, seed: int = 0) -> LinearMap | None:
    """The affine map from ``vectors`` (or their spherized rows) to ``coordinates``, fitted
    on 2 (D + 1) + 64 random rows and checked on :data:`HELD_OUT` others; None when neither
    fits. With fewer rows, those beyond 2 (D + 1) are held out; with at most 2 (D + 1), none
    is, and the rows it was fitted on are the check."""
    from scipy.linalg import lstsq

    n, dim = vectors.shape
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(n, min(n, 2 * (dim + 1) + 64 + HELD_OUT), replace=False))
    x = np.asarray(vectors[rows], np.float64)
    c = np.asarray(coordinates[rows], np.float64)
    keep = np.flatnonzero(np.isfinite(x).all(axis=1) & np.isfinite(c).all(axis=1))
    if keep.size == 0:
        return None
    shuffled = rng.permutation(keep)
    held_count = min(HELD_OUT, max(0, keep.size - 2 * (dim + 1)))
    fit = shuffled[:keep.size - held_count]
    held = shuffled[keep.size - held_count:] if held_count else fit
    spread = max(float(np.sqrt(np.mean((c[keep] - c[keep].mean(axis=0)) ** 2))), 1e-30)
    for spherized in (False, True):
        center = _finite_mean(vectors) if spherized else None
        moved = _moved(x, center)
        mean_x, mean_c = moved[fit].mean(axis=0), c[fit].mean(axis=0)
        weights = lstsq(moved[fit] - mean_x, c[fit] - mean_c, lapack_driver="gelsy")[0]
        found = LinearMap(weights, mean_c - mean_x @ weights, center)
        error = float(np.sqrt(np.mean((found(x[held]) - c[held]) ** 2)))
        if error <= LINEAR_TOLERANCE * spread:
            return found
    return None


def membership_weights(distances: np.ndarray) -> np.ndarray:
    """umap-learn's fuzzy memberships of a new point to its nearest points, nearest first
    (``smooth_knn_dist`` with ``local_connectivity=0``, then ``compute_membership_strengths``):
    exp(-d / sigma), sigma chosen so that all but the nearest sum to log2(k)."""
    d = np.asarray(distances, np.float64).reshape(-1)
    target = math.log2(d.size) if d.size else 0.0
    lo, hi, mid = 0.0, math.inf, 1.0
    for _ in range(_SMOOTH_STEPS):
        total = float(np.sum(np.where(d[1:] > 0, np.exp(-np.maximum(d[1:], 0) / mid), 1.0)))
        if abs(total - target) < _SMOOTH_TOLERANCE:
            break
        if total > target:
            hi = mid
            mid = (lo + hi) / 2
        else:
            lo = mid
            mid = mid * 2 if hi == math.inf else (lo + hi) / 2
    mid = max(mid, _MIN_K_DIST_SCALE * float(np.mean(d))) if d.size else mid
    return np.where(d > 0, np.exp(-np.maximum(d, 0) / mid), 1.0)


def neighbour_position(coordinates: Any, rows: np.ndarray,
                       distances: np.ndarray) -> np.ndarray | None:
    """The membership-weighted mean of the positions of ``rows`` (nearest first) that have
    coordinates; None when none has."""
    rows = np.asarray(rows, np.int64)
    found = rows >= 0
    rows, distances = rows[found], np.asarray(distances)[found]
    if rows.size == 0:
        return None
    order = np.argsort(rows)  # sorted reads (a result on disk); restored below
    positions = np.empty((rows.size, coordinates.shape[1]), np.float64)
    positions[order] = np.asarray(coordinates[rows[order]], np.float64)
    placed = np.isfinite(positions).all(axis=1)
    if not placed.any():
        return None
    weights = membership_weights(distances[placed])
    return np.asarray(weights @ positions[placed] / weights.sum())


def _moved(x: np.ndarray, center: np.ndarray | None) -> np.ndarray:
    """Rows as a spherizing projection saw them: centred, then scaled to length 1."""
    if center is None:
        return x
    moved = x - center
    lengths = np.linalg.norm(moved, axis=1, keepdims=True)
    return np.asarray(moved / np.where(lengths > 0, lengths, 1.0))


def _finite_mean(vectors: Any) -> np.ndarray:
    """The mean of the rows without NaN/Inf, read in chunks."""
    total = np.zeros(vectors.shape[1], np.float64)
    count = 0
    for start in range(0, vectors.shape[0], _CHUNK_ROWS):
        chunk = np.asarray(vectors[start:start + _CHUNK_ROWS], np.float64)
        finite = np.isfinite(chunk).all(axis=1)
        total += chunk[finite].sum(axis=0)
        count += int(finite.sum())
    return total / max(count, 1)
