"""Projection quality: how far a 2-D/3-D picture can be trusted about the original space.

Per point: the fraction of its ``k`` nearest neighbours in the original space (the user's
metric) that are also among its ``k`` nearest in the projection (neighbourhood preservation).
Set-wide: trustworthiness, exactly scikit-learn's ``trustworthiness`` definition (points that
look near in the picture but are far in the data are penalised by their original rank), and
continuity, the same with the two spaces swapped (true neighbours torn apart in the picture).

Every point gets its value. Neighbours in the picture come from a k-d tree. In the original
space they are exact while an all-points kNN fits the exact budget that comparisons use
(:func:`~projector_core.kernels.compare.needs_approximate`): by k-d tree up to
``TREE_MAX_DIMS`` dimensions, else by one scan of all distances (:mod:`quality_scan`), which
also gives the ranks of both set-wide figures. Above the budget the lists come from the
k-means cells of a comparison (:mod:`cells`, approximate), and the two set-wide figures from
``SAMPLE_SIZE`` random rows whose ranks are exact over all points (each row's penalty is
exact, so their mean estimates the whole set's without bias). The same rows' exact
neighbours state the answer's error: the recall of the approximate lists and the mean
absolute difference of the per-point values (the sampled rows keep their exact values).

``progress`` (0..1) is called at every block of work: a job's ``ctx.step`` there reports
and, by raising, cancels; the phase (``jobs.phases``) is named as well.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from projector_core.jobs.phases import enter_phase
from projector_core.kernels.compare import EXACT_ALL_KNN_BUDGET, needs_approximate
from projector_core.kernels.finite import finite_rows
from projector_core.kernels.neighbor_index import Metric, Progress

TREE_MAX_DIMS = 16  # spaces up to this many dimensions are searched by k-d tree
# Rows the sampled figures and the error are measured on. Their scan costs SAMPLE_SIZE x N x D:
# at 1M x 64 a sixth of the time of the cells' graph (bench/bench_quality.py, load 10: 27 s
# and 146 s of 192 s; 100k: 10 s in all, 0.03 of an exact kNN). There both figures were
# within 0.0001 of those from 5,000 exact rows, and the stated per-point error (0.0012 at
# 100k, 0.0021 at 1M) within 0.0004 of the mean difference on 20,000 rows.
SAMPLE_SIZE = 1000
_TREE_ROWS = 65_536  # points queried in a k-d tree at once: a progress (and cancel) point


@dataclass(frozen=True)
class Quality:
    per_point: np.ndarray  # float64 [N]; NaN for excluded rows
    mean: float
    trustworthiness: float
    continuity: float
    k: int
    excluded_rows: int  # rows without finite original vectors or coordinates
    sample_size: int | None  # rows both figures (and the error) were measured on, when sampled
    neighbors: str = "exact"  # original-space lists of the per-point values: or "approximate"
    recall: float | None = None  # approximate: the lists' mean recall@k on the sample
    per_point_error: float | None = None  # approximate: mean |value - exact value| on the sample


def projection_quality(original: np.ndarray, projected: np.ndarray, k: int = 10,
                       metric: Metric = "euclidean", *, progress: Progress | None = None,
                       sample_size: int = SAMPLE_SIZE, exact_budget: int = EXACT_ALL_KNN_BUDGET,
                       seed: int = 0) -> Quality:
    """Quality of ``projected`` [N, 2|3] as a picture of ``original`` [N, D] (read in row
    chunks: a memory-mapped embedding is not copied when all its rows are finite).

    Raises ValueError when ``k`` does not fit the data (as scikit-learn, k < n / 2), and
    whatever ``progress`` raises (a cancelled job).
    """
    n = original.shape[0]
    if projected.shape[0] != n:
        raise ValueError(f"the projection has {projected.shape[0]} rows, the data {n}")
    valid = finite_rows(original) & np.isfinite(projected).all(axis=1)
    rows = np.flatnonzero(valid)
    m = rows.size
    if k < 1 or k >= m / 2:
        raise ValueError(f"k must be at least 1 and less than half the {m} usable points; got {k}")
    data = original if m == n else original[rows]  # positions 0..m-1 from here on
    y = np.ascontiguousarray(projected[rows], np.float64)
    dim = data.shape[1]
    sampled = needs_approximate(m, dim, dim, exact_budget)
    tree = dim <= TREE_MAX_DIMS
    stages = _Stages(progress, {
        "neighbours in the picture": 0.05,
        "neighbours in the data": 0.75 if sampled and not tree else 0.1 if tree else 0.0,
        "trustworthiness": 0.1 if sampled or tree else 0.8,
        "continuity": 0.05})
    near_y = projection_neighbors(y, k, stages.part("neighbours in the picture"))
    queries = (np.sort(np.random.default_rng(seed).choice(m, min(m, sample_size), replace=False))
               if sampled else np.arange(m))
    approximate = None
    if tree:
        space = _prepared(data, metric)  # unit for cosine: euclidean order is cosine order
        near_x = projection_neighbors(space, k, stages.part("neighbours in the data"))
        exact_x = near_x[queries]
        trust = _ranks(space, queries, near_y[queries], exact_x, stages.part("trustworthiness"))
    else:
        if sampled:
            report = stages.part("neighbours in the data")
            from projector_core.kernels.cells import CellIndex  # torch on first use
            from projector_core.kernels.knn import ExactIndex

            approximate = CellIndex(ExactIndex(data)).build(k, metric, progress=report)
        from projector_core.kernels.quality_scan import scan_ranks  # numba: compiled on first use

        exact_x, trust = scan_ranks(data, queries, near_y[queries], k, metric,
                                    stages.part("trustworthiness"))
        near_x = exact_x if approximate is None else approximate
    continuity = _ranks(y, queries, exact_x, near_y[queries], stages.part("continuity"))
    preserved = _overlap(near_x, near_y) / k
    recall = error = None
    if approximate is not None:
        exact_values = _overlap(exact_x, near_y[queries]) / k
        recall = float((_overlap(approximate[queries], exact_x) / k).mean())
        error = float(np.abs(preserved[queries] - exact_values).mean())
        preserved[queries] = exact_values
    per_point = np.full(n, np.nan)
    per_point[rows] = preserved
    return Quality(per_point, float(preserved.mean()), _score(trust, m, k),
                   _score(continuity, m, k), k, int(n - m), queries.size if sampled else None,
                   "approximate" if approximate is not None else "exact", recall, error)


def projection_neighbors(y: np.ndarray, k: int, progress: Progress | None = None) -> np.ndarray:
    """k nearest other points in a low-dimensional space (a k-d tree), [M, k]."""
    from scipy.spatial import cKDTree  # scipy on first use: the server starts without it

    tree = cKDTree(y)
    found = np.empty((y.shape[0], k + 1), np.int64)
    for start in range(0, y.shape[0], _TREE_ROWS):
        stop = min(y.shape[0], start + _TREE_ROWS)
        found[start:stop] = tree.query(y[start:stop], k + 1, workers=-1)[1]
        if progress is not None:
            progress(stop / y.shape[0])
    own = found == np.arange(y.shape[0])[:, None]
    # Normally the point itself comes first; with duplicates it may sit anywhere (or be cut).
    drop = np.where(own.any(axis=1), own.argmax(axis=1), k)
    keep = np.ones_like(found, bool)
    keep[np.arange(found.shape[0]), drop] = False
    return np.asarray(found[keep].reshape(found.shape[0], k))


def _ranks(space: np.ndarray, queries: np.ndarray, targets: np.ndarray, own: np.ndarray,
           progress: Progress) -> np.ndarray:
    """For each query row and each of its ``targets`` [Q, S] in ``space`` (few dimensions,
    euclidean): how many points are nearer the query than the target (0 for a target among
    the query's ``own`` nearest, whose rank costs nothing). By range counts in a k-d tree,
    so the work follows the ranks themselves (small for a faithful picture) instead of
    Q x N; by a scan when a probe says the balls hold so many points that it is cheaper (a
    picture unlike its data). A distance within 1e-9 (relative) of the target's counts as
    nearer (a tie ranked ahead)."""
    from scipy.spatial import cKDTree  # on first use: the server starts without scipy

    ahead = np.zeros(targets.shape, np.int64)
    i, slot = np.nonzero(~(targets[:, :, None] == own[:, None, :]).any(axis=2))
    centres = space[queries[i]]
    radius = np.sqrt(((centres - space[targets[i, slot]]) ** 2).sum(axis=1)) * (1 + 1e-9)
    tree = cKDTree(space)
    probe = np.linspace(0, i.size - 1, min(i.size, 200)).astype(np.int64)
    scan_cost = queries.size * space.shape[0]
    if probe.size and tree.query_ball_point(centres[probe], radius[probe], return_length=True,
                                            workers=-1).mean() * i.size > 0.05 * scan_cost:
        from projector_core.kernels.quality_scan import scan_ranks

        return scan_ranks(space, queries, targets, 1, "euclidean", progress)[1]
    for start in range(0, i.size, _TREE_ROWS):
        part = slice(start, start + _TREE_ROWS)
        inside = tree.query_ball_point(centres[part], radius[part], return_length=True, workers=-1)
        ahead[i[part], slot[part]] = np.asarray(inside, np.int64) - 2  # less the query and target
        progress(min(1.0, (start + _TREE_ROWS) / i.size))
    return ahead


def _score(ahead: np.ndarray, n: int, k: int) -> float:
    """scikit-learn's trustworthiness from the counts ahead of each (query, target) pair:
    1 - 2 / (n k (2n - 3k - 1)) * sum max(0, rank - k), rank = ahead + 1, the sum over
    all n points estimated from the queries' mean when they are a sample."""
    penalty = np.maximum(ahead + 1 - k, 0).sum() * (n / ahead.shape[0])
    return float(1.0 - penalty * 2.0 / (n * k * (2.0 * n - 3.0 * k - 1.0)))


def _overlap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row, how many entries of ``a`` occur in ``b`` (rows hold distinct indices; -1,
    a place an approximate list could not fill, matches nothing)."""
    a = np.where(a < 0, -1 - np.arange(a.shape[1]), a)
    b = np.where(b < 0, -1 - a.shape[1] - np.arange(b.shape[1]), b)
    both = np.sort(np.concatenate([a, b], axis=1), axis=1)
    return np.asarray((both[:, 1:] == both[:, :-1]).sum(axis=1))


def _prepared(data: np.ndarray, metric: Metric) -> np.ndarray:
    """float64 copy, rows unit length for cosine (zero rows stay zero)."""
    out = np.array(data, np.float64)
    if metric == "cosine":
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
    return out


class _Stages:
    """The job's phases, each a share of the whole: ``part(name)`` is the progress callback
    of one, which names the phase and reports the whole's fraction."""

    def __init__(self, progress: Progress | None, shares: dict[str, float]) -> None:
        total = sum(shares.values())
        self._progress = progress
        self._offsets: dict[str, tuple[float, float]] = {}
        done = 0.0
        for name, share in shares.items():
            self._offsets[name] = (done / total, share / total)
            done += share

    def part(self, name: str) -> Callable[[float], None]:
        offset, share = self._offsets[name]
        enter_phase(name, 0.0)
        if self._progress is not None:
            self._progress(offset)

        def report(fraction: float) -> None:
            enter_phase(name, fraction)
            if self._progress is not None:
                self._progress(offset + share * fraction)
        return report
