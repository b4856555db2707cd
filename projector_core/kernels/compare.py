"""How much each point's neighbourhood changed between two embeddings of the same points.

For every row finite in both A and B: its ``k`` nearest other rows in A and in B (the kNN
graph that any :class:`~projector_core.kernels.neighbor_index.NeighborIndex` builds), then
the Jaccard overlap of the two sets (1 = same neighbours, 0 = none shared) and a
rank-displacement summary (the mean, over the union of the two lists, of how far a neighbour
moved in rank; a neighbour missing from one list counts at rank ``k``). That summary is the
same (k + 1) / 2 for every row that kept no neighbour, so the rows ranked as most changed are
told apart by how far their old neighbours went: the mean rank, in B, of the row's ``k``
neighbours in A, looked up to ``REACH_DEPTH`` x ``k`` deep for at most ``REACH_ROWS`` rows.
The dimensions of A and B may differ: only rows are paired.

All-pairs kNN costs N^2 x D, so above ``EXACT_ALL_KNN_BUDGET`` on the CPU the neighbours come
from an approximate index (:mod:`cells`, chosen in :mod:`projector_core.comparison.compare`), and the
answer carries its recall measured on a sample of rows against the exact index.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from projector_core.kernels.neighbor_index import Metric, NeighborIndex, Progress, pad_columns

# N^2 x D multiply-adds above which the exact all-kNN gives way to k-means cells: ~32,000 x
# 32,000 x 128. The cells scan ~PROBES x CELL_ROWS = 6,000 rows per row, so at 4 x that many
# rows they cost a quarter of the exact scan (at 50,000 x 128: 10.7 CPU-seconds per embedding,
# the exact scan ~2x that; bench/bench_compare.py).
EXACT_ALL_KNN_BUDGET = 2**37
RECALL_SAMPLE = 256
REACH_DEPTH = 8  # how deep (x k) B's lists are read to find where A's neighbours went
REACH_ROWS = 1024  # the least-overlap rows whose reach is measured (a query of each in B)
_PAIR_BYTES = 4 * 2**20  # bound on the [rows, k, k] equality block (larger: fresh pages, slower)


@dataclass(frozen=True)
class Comparison:
    per_point: np.ndarray  # float64 [N]: Jaccard overlap of the k-sets, NaN for unusable rows
    rank_displacement: np.ndarray  # float64 [N]: mean rank shift over the union, NaN likewise
    k: int
    most_changed: np.ndarray  # int64: rows, most changed first
    former_rank: np.ndarray  # float64 [len(most_changed)]: mean rank in B of A's neighbours
    neighbors: str  # "exact" or "approximate"
    recall: float | None  # approximate only: mean recall@k of both indexes on a sample


def needs_approximate(n: int, dim_a: int, dim_b: int, budget: int = EXACT_ALL_KNN_BUDGET) -> bool:
    """True when an exact all-kNN of either embedding would exceed ``budget``."""
    return n * n * max(dim_a, dim_b) > budget


def set_change(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of two neighbour lists [R, k] (nearest first, -1 = none): the Jaccard overlap
    of the two sets and the mean rank displacement over their union."""
    rows, k = a.shape
    jaccard = np.empty(rows, np.float64)
    shift = np.empty(rows, np.float64)
    ranks = np.arange(k)
    step = max(1, _PAIR_BYTES // max(1, k * k))
    for start in range(0, rows, step):
        sa, sb = a[start:start + step], b[start:start + step]
        same = (sa[:, :, None] == sb[:, None, :]) & (sa[:, :, None] >= 0)  # [R, k, k]
        in_b = same.any(axis=2)  # each of A's neighbours found in B
        in_a = same.any(axis=1)  # each of B's neighbours found in A
        rank_in_b = np.where(in_b, same.argmax(axis=2), k)
        shared = in_b.sum(axis=1)
        size_a, size_b = (sa >= 0).sum(axis=1), (sb >= 0).sum(axis=1)
        union = size_a + size_b - shared
        moved_a = np.where(sa >= 0, np.abs(rank_in_b - ranks), 0).sum(axis=1)
        moved_b = np.where((sb >= 0) & ~in_a, k - ranks, 0).sum(axis=1)  # entered B from beyond k
        safe = np.maximum(union, 1)
        jaccard[start:start + step] = np.where(union > 0, shared / safe, 1.0)
        shift[start:start + step] = np.where(union > 0, (moved_a + moved_b) / safe, 0.0)
    return jaccard, shift


def ranked_by_change(per_point: np.ndarray, shift: np.ndarray, top: int) -> np.ndarray:
    """The ``top`` rows with the least overlap; ties by larger rank shift, then index."""
    usable = np.flatnonzero(np.isfinite(per_point))
    order = np.lexsort((usable, -shift[usable], per_point[usable]))
    return usable[order[:top]]


def former_ranks(index_b: NeighborIndex, rows: np.ndarray, lists_a: np.ndarray, k: int,
                 metric: Metric) -> np.ndarray:
    """Per row: the mean rank in B of its ``k`` neighbours in A (0 = nearest), one missing
    from B's ``REACH_DEPTH`` x ``k`` nearest counted at that depth."""
    if not rows.size:
        return np.empty(0, np.float64)
    depth = max(k, min(index_b.n - 1, REACH_DEPTH * k))
    deep, _ = index_b.neighbors_of(rows, depth, metric)
    deep = pad_columns(deep, depth)
    same = (lists_a[:, :, None] == deep[:, None, :]) & (lists_a[:, :, None] >= 0)  # [R, k, depth]
    rank = np.where(same.any(axis=2), same.argmax(axis=2), depth).astype(np.float64)
    counted = lists_a >= 0
    mean: np.ndarray = np.where(counted, rank, 0).sum(axis=1) / np.maximum(counted.sum(axis=1), 1)
    return mean


def rank_by_reach(index_b: NeighborIndex, rows: np.ndarray, lists_a: np.ndarray,
                  per_point: np.ndarray, shift: np.ndarray, k: int, metric: Metric,
                  top: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``top`` most changed rows and their former ranks (NaN past ``REACH_ROWS``): least
    overlap first, then the old neighbours farthest in B, then larger rank shift, then index."""
    candidates = ranked_by_change(per_point, shift, max(top, REACH_ROWS))
    head, tail = candidates[:REACH_ROWS], candidates[REACH_ROWS:top]
    reach = former_ranks(index_b, head, lists_a[np.searchsorted(rows, head)], k, metric)
    order = np.lexsort((head, -shift[head], -reach, per_point[head]))
    ranked = np.concatenate([head[order], tail])[:top]
    return ranked, np.concatenate([reach[order], np.full(tail.size, np.nan)])[:top]


def sample_recall(index: NeighborIndex, rows: np.ndarray, found: np.ndarray, k: int,
                  metric: Metric, seed: int = 0) -> float:
    """Mean recall@k of ``found`` (the approximate lists of ``rows``) on a sample, against
    the exact index (``sample`` x N x D: cheap beside the all-kNN)."""
    pick = np.random.default_rng(seed).choice(rows.size, min(RECALL_SAMPLE, rows.size),
                                              replace=False)
    truth, _ = index.exact.neighbors_of(rows[pick], k, metric)
    hits = [np.intersect1d(t[t >= 0], f).size / max(1, (t >= 0).sum())
            for t, f in zip(truth, found[pick], strict=True)]
    return float(np.mean(hits))


def compare(index_a: NeighborIndex, index_b: NeighborIndex, k: int, metric: Metric,
            top: int = 100, progress: Progress | None = None) -> Comparison:
    """Compare the neighbourhoods of every row of two embeddings with the same rows: each
    index's ``build`` gives the kNN graph of the rows finite in both."""
    if index_a.n != index_b.n:
        raise ValueError(f"the embeddings have different numbers of rows: {index_a.n} and "
                         f"{index_b.n}")
    n = index_a.n
    rows = np.flatnonzero(index_a.finite & index_b.finite)
    lists = []
    recalls = []
    for part, index in enumerate((index_a, index_b)):
        def report(done: float, part: int = part) -> None:
            if progress is not None:
                progress((part + done) / 2)
        found = index.build(k, metric, rows, report) if rows.size else np.empty((0, k), np.int64)
        lists.append(found)
        if index.approximate and rows.size:
            recalls.append(sample_recall(index, rows, found, k, metric))
    per_point = np.full(n, np.nan)
    shift = np.full(n, np.nan)
    per_point[rows], shift[rows] = set_change(lists[0], lists[1])
    most_changed, former_rank = rank_by_reach(index_b, rows, lists[0], per_point, shift, k,
                                              metric, top)
    return Comparison(
        per_point=per_point,
        rank_displacement=shift,
        k=k,
        most_changed=most_changed,
        former_rank=former_rank,
        neighbors="approximate" if index_a.approximate or index_b.approximate else "exact",
        recall=float(np.mean(recalls)) if recalls else None,
    )
