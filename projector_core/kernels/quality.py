"""Projection quality: how far a 2-D/3-D picture can be trusted about the original space.

Per point: the fraction of its ``k`` nearest neighbours in the original space (the user's
metric) that are also among its ``k`` nearest in the projection (neighbourhood preservation).
Set-wide: trustworthiness, exactly scikit-learn's ``trustworthiness`` definition (points that
look near in the picture but are far in the data are penalised by their original rank), and
continuity, the same with the two spaces swapped (true neighbours torn apart in the picture).

Original-space neighbours come from the project's exact kNN kernel (ties by index). The
ranks the two set-wide figures need are counts over whole rows of the distance matrix; one
block of rows at a time is computed by a matrix product, and only the few entries below a
row's largest needed distance are looked at again, so memory stays bounded and no row is
sorted. That is O(N^2) work, so above ``EXACT_LIMIT`` points an even sample stands for the
set (per-point values then exist for the sampled points only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from projector_core.kernels.finite import finite_rows
from projector_core.kernels.neighbor_index import Metric

EXACT_LIMIT = 200_000
TREE_MAX_DIMS = 16  # spaces up to this many dimensions are searched by k-d tree
SAMPLE_SIZE = 50_000
_BLOCK_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Quality:
    per_point: np.ndarray  # float64 [N]; NaN for excluded or unsampled rows
    mean: float
    trustworthiness: float
    continuity: float
    k: int
    excluded_rows: int  # rows without finite original vectors or coordinates
    sample_size: int | None  # points the figures were computed on, when sampled


def projection_quality(original: np.ndarray, projected: np.ndarray, k: int = 10,
                       metric: Metric = "euclidean", *, exact_limit: int = EXACT_LIMIT,
                       sample_size: int = SAMPLE_SIZE) -> Quality:
    """Quality of ``projected`` [N, 2|3] as a picture of ``original`` [N, D].

    Raises ValueError when ``k`` does not fit the data (as scikit-learn, k < n / 2).
    """
    n = original.shape[0]
    if projected.shape[0] != n:
        raise ValueError(f"the projection has {projected.shape[0]} rows, the data {n}")
    valid = finite_rows(original) & np.isfinite(projected).all(axis=1)
    rows = np.flatnonzero(valid)
    sampled = rows.size > exact_limit
    if sampled:  # an even sample: every step-th valid row
        rows = rows[np.linspace(0, rows.size - 1, sample_size).round().astype(np.int64)]
    m = rows.size
    if k < 1 or k >= m / 2:
        raise ValueError(f"k must be at least 1 and less than half the {m} usable points; got {k}")
    x = np.ascontiguousarray(original[rows], dtype=np.float64)
    y = np.ascontiguousarray(projected[rows], dtype=np.float64)
    if metric == "cosine":  # unit vectors: euclidean order = cosine order
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        x = np.where(norms > 0, x / np.where(norms > 0, norms, 1), 0)
    near_y = projection_neighbors(y, k)
    trust = None
    if x.shape[1] <= TREE_MAX_DIMS:
        near_x = projection_neighbors(x, k)
        trust = _tree_score(x, near_y, near_x, k)
    if trust is None:
        near_x, trust = _scan(x, metric, near_y, k)
    continuity = _tree_score(y, near_x, near_y, k)
    if continuity is None:
        _, continuity = _scan(y, "euclidean", near_x, k)
    preserved = _overlap(near_x, near_y) / k
    per_point = np.full(n, np.nan)
    per_point[rows] = preserved
    return Quality(per_point, float(preserved.mean()), trust, continuity, k,
                   int(n - valid.sum()), m if sampled else None)


def projection_neighbors(y: np.ndarray, k: int) -> np.ndarray:
    """k nearest other points in a low-dimensional picture (a k-d tree), [M, k]."""
    from scipy.spatial import cKDTree  # scipy on first use: the server starts without it

    _, found = cKDTree(y).query(y, k + 1)
    own = found == np.arange(y.shape[0])[:, None]
    # Normally the point itself comes first; with duplicates it may sit anywhere (or be cut).
    drop = np.where(own.any(axis=1), own.argmax(axis=1), k)
    keep = np.ones_like(found, bool)
    keep[np.arange(found.shape[0]), drop] = False
    return np.asarray(found[keep].reshape(found.shape[0], k))


def _tree_score(space: np.ndarray, near_other: np.ndarray, near_own: np.ndarray,
                k: int) -> float | None:
    """The same score as :func:`_scan` by range counts in a k-d tree: the rank of j from i is
    the number of points within |x_i - x_j|, so the work follows the ranks themselves (small
    for a faithful picture) instead of N^2. Used where trees are fast (few dimensions); a
    distance within 1e-9 (relative) of another counts as a tie ranked ahead. None when a
    probe says the balls hold so many points that one pass over all pairs is cheaper (a
    picture unlike its data)."""
    n = space.shape[0]
    needed = ~(near_other[:, :, None] == near_own[:, None, :]).any(axis=2)
    i, slot = np.nonzero(needed)
    j = near_other[i, slot]
    radius = np.sqrt(((space[i] - space[j]) ** 2).sum(axis=1)) * (1 + 1e-9)
    from scipy.spatial import cKDTree  # on first use: the server starts without scipy

    tree = cKDTree(space)
    probe = np.linspace(0, i.size - 1, min(i.size, 200)).astype(np.int64)
    if probe.size and tree.query_ball_point(space[i[probe]], radius[probe], return_length=True,
                                            workers=-1).mean() * i.size > 0.05 * n * n:
        return None
    inside = tree.query_ball_point(space[i], radius, return_length=True, workers=-1)
    ranks = np.asarray(inside, np.int64) - 1  # the point itself is in its ball
    penalty = int(np.maximum(ranks - k, 0).sum())
    return float(1.0 - penalty * 2.0 / (n * k * (2.0 * n - 3.0 * k - 1.0)))


def _overlap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row, how many entries of ``a`` occur in ``b`` (rows hold distinct indices)."""
    both = np.sort(np.concatenate([a, b], axis=1), axis=1)
    return np.asarray((both[:, 1:] == both[:, :-1]).sum(axis=1))


def _scan(space: np.ndarray, metric: Metric, near_other: np.ndarray,
          k: int) -> tuple[np.ndarray, float]:
    """One pass over the distance matrix of ``space``, a block of rows at a time: each row's
    ``k`` nearest (ties by index) and scikit-learn's trustworthiness of ``space`` against
    the other space's neighbours ``near_other``:
    1 - 2 / (n k (2n - 3k - 1)) * sum max(0, r(i, j) - k) over j in near_other[i], r the rank
    of j from i here. Equal distances rank by index, as a stable sort orders them;
    scikit-learn's quicksort orders them arbitrarily, so on data with many exact ties the
    two can differ slightly."""
    n = space.shape[0]
    unit = space
    if metric == "cosine":
        norms = np.linalg.norm(space, axis=1, keepdims=True)
        unit = np.where(norms > 0, space / np.where(norms > 0, norms, 1), 0)
    sq = (unit * unit).sum(axis=1)
    block = max(1, _BLOCK_BYTES // (8 * n))
    nearest = np.empty((n, k), np.int64)
    penalty = 0
    from projector_core.kernels.quality_scan import scan_block  # numba: compiled on first use

    for start in range(0, n, block):
        stop = min(n, start + block)
        b = np.arange(stop - start)
        product = unit[start:stop] @ unit.T
        # 1 - cos orders like -cos; squared euclidean orders like euclidean.
        dist = -product if metric == "cosine" else sq[start:stop, None] + sq[None, :] - 2 * product
        dist[b, start + b] = np.inf  # a point is not its own neighbour
        targets = np.ascontiguousarray(near_other[start:stop])
        limits = np.take_along_axis(dist, targets, axis=1)
        ahead = scan_block(dist, limits, targets, nearest[start:stop])
        penalty += int(np.maximum(ahead + 1 - k, 0).sum())
    return nearest, 1.0 - penalty * 2.0 / (n * k * (2.0 * n - 3.0 * k - 1.0))
