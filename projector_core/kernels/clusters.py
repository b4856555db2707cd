"""Automatic clusters of a projection (or of the original vectors): scikit-learn's HDBSCAN.

Two levels make a hierarchy the map can zoom through. The top level is HDBSCAN at the
requested ``min_cluster_size`` (its ``assignment`` is what the API answers); then each top
cluster big enough is clustered again on its own at half that size, and the
sub-clusters found (two or more) become children whose ``parent`` is the top cluster.
Re-clustering was chosen over reading HDBSCAN's condensed tree because scikit-learn keeps
that tree private, and because children computed this way nest exactly inside their parent
and are themselves HDBSCAN clusters, so they read like the top level when zoomed in.

HDBSCAN is O(N log N) at best and much slower on large N, so above ``SAMPLE_LIMIT`` points
an even sample is clustered, both levels (sizes scaled by the sample fraction), and every
other point takes the clusters of its nearest sampled point (noise stays noise).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from projector_core.kernels.finite import finite_rows

SAMPLE_LIMIT = 20_000
MIN_SAMPLED_CHILD = 10  # sub-clusters of fewer sampled points are noise, not structure
CHILD_FRACTION = 2  # children are clustered at min_cluster_size // CHILD_FRACTION


@dataclass(frozen=True)
class Cluster:
    id: int
    members: np.ndarray  # row indices (into the full data)
    centroid: list[float]  # in the projection's coordinates: those of the member ``point``
    point: int  # the member nearest the members' mean, where the map anchors the label
    parent: int | None


@dataclass(frozen=True)
class Clustering:
    assignment: np.ndarray  # int64 [N]: top-level cluster id, -1 for noise or unplaced rows
    clusters: list[Cluster]
    sampled: int | None  # points HDBSCAN saw, when a sample stood for the set


def default_min_cluster_size(n: int) -> int:
    """About sqrt(N) / 2, at least 10: a few dozen clusters at any N."""
    return max(10, round(float(np.sqrt(max(n, 1))) / 2))


def cluster_points(space: np.ndarray, coordinates: np.ndarray, min_cluster_size: int,
                   *, sample_limit: int = SAMPLE_LIMIT) -> Clustering:
    """HDBSCAN on the rows of ``space`` (projected or original) with finite values in both
    ``space`` and ``coordinates``; centroids are always taken in ``coordinates``."""
    n = space.shape[0]
    valid = np.isfinite(coordinates).all(axis=1) & finite_rows(space)
    rows = np.flatnonzero(valid)
    if min_cluster_size < 2:
        raise ValueError(f"min_cluster_size must be at least 2, got {min_cluster_size}")
    if rows.size < min_cluster_size:
        raise ValueError(f"min_cluster_size {min_cluster_size} is more than the "
                         f"{rows.size} points with coordinates")
    # HDBSCAN sees at most sample_limit points; the rest follow their nearest sampled point.
    sampled = rows.size > sample_limit
    pick = (np.linspace(0, rows.size - 1, sample_limit).round().astype(np.int64) if sampled
            else np.arange(rows.size))
    data = np.asarray(space[rows[pick]], np.float64)
    scale = pick.size / rows.size
    top = _hdbscan(data, max(2, round(min_cluster_size * scale)))
    child_size = max(5, min_cluster_size // CHILD_FRACTION)
    sub = np.full(pick.size, -1, np.int64)  # sub-cluster ids of the sample, numbered globally
    parents: list[int] = []
    for label in range(int(top.max(initial=-1)) + 1):
        inside = np.flatnonzero(top == label)
        if inside.size * (1 / scale) < 4 * child_size:
            continue
        found = _hdbscan(data[inside], max(MIN_SAMPLED_CHILD, round(child_size * scale)))
        if found.max(initial=-1) < 1:  # fewer than two sub-clusters: nothing to zoom into
            continue
        ok = found >= 0
        sub[inside[ok]] = found[ok] + len(parents)
        parents.extend([label] * (int(found.max()) + 1))
    if sampled:
        from scipy.spatial import cKDTree  # on first use: the server starts without scipy

        _, nearest = cKDTree(data).query(np.asarray(space[rows], np.float64), 1, workers=-1)
        top, sub = top[nearest], sub[nearest]
    assignment = np.full(n, -1, np.int64)
    assignment[rows] = top
    clusters: list[Cluster] = []
    for label, members in _groups(rows, top):
        clusters.append(Cluster(label, members, *_centroid(coordinates, members), None))
    next_id = len(clusters)
    for label, members in _groups(rows, sub):
        clusters.append(Cluster(next_id, members, *_centroid(coordinates, members), parents[label]))
        next_id += 1
    return Clustering(assignment, clusters, pick.size if sampled else None)


def _hdbscan(data: np.ndarray, min_cluster_size: int) -> np.ndarray:
    """HDBSCAN labels (-1 noise), clusters numbered by decreasing size."""
    from sklearn.cluster import HDBSCAN  # on first use: the server starts without it

    if data.shape[0] < min_cluster_size:
        return np.full(data.shape[0], -1, np.int64)
    return _by_size(HDBSCAN(min_cluster_size=min_cluster_size, copy=True).fit(data).labels_)


def _by_size(labels: np.ndarray) -> np.ndarray:
    """Renumber clusters 0, 1, ... from the largest; noise stays -1."""
    found = labels[labels >= 0]
    if found.size == 0:
        return labels.astype(np.int64)
    counts = np.bincount(found)
    order = np.argsort(-counts, kind="stable")
    rename = np.full(counts.size, -1, np.int64)
    rename[order] = np.arange(counts.size)
    rename[counts == 0] = -1
    out = np.full(labels.shape, -1, np.int64)
    out[labels >= 0] = rename[found]
    return out


def _groups(rows: np.ndarray, labels: np.ndarray) -> list[tuple[int, np.ndarray]]:
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    out = []
    for label in range(int(labels.max(initial=-1)) + 1):
        lo, hi = np.searchsorted(sorted_labels, [label, label + 1])
        if hi > lo:
            out.append((label, rows[order[lo:hi]]))
    return out


def _centroid(coordinates: np.ndarray, members: np.ndarray) -> tuple[list[float], int]:
    """The member nearest the mean: a label placed on the mean of a curved cluster could sit
    in empty space (or on another cluster); the medoid-like point is always on the cluster."""
    points = np.asarray(coordinates[members], np.float64)
    mean = points.mean(axis=0)
    best = int(np.argmin(((points - mean) ** 2).sum(axis=1)))
    return [round(float(v), 6) for v in points[best]], int(members[best])

