"""Nearest neighbours in the original space, asked three ways by every door: of a row (the
inspector's click), of a vector (search by example, a phrase's), or of several rows (their
centroid, those rows left out: an assistant's "what is near these"). One ``k`` limit, one
index (``distributed/dispatch.py`` chooses it), one error sentence each."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from projector_core.data.model import Embedding
from projector_core.kernels.neighbor_index import Metric, NeighborIndex
from projector_core.projection.limits import neighbor_count

Found = tuple[np.ndarray, np.ndarray]  # (indices int64 [1, k], distances float32 [1, k])


def nearest(index_for: Callable[[Embedding, Metric], NeighborIndex], embedding: Embedding,
            k: int, metric: Metric, *, index: int | None = None,
            vector: np.ndarray | None = None, rows: Sequence[int] | None = None) -> Found:
    """The ``k`` nearest rows to row ``index`` (itself excluded), to ``vector``, or to the
    centroid of ``rows`` (those left out): (indices, distances), nearest first. ValueError
    for a row past N or a ``k`` over the other points."""
    if sum(given is not None for given in (index, vector, rows)) != 1:
        raise ValueError("give exactly one of index, vector and rows")
    if embedding.shape is None:
        embedding.vectors()  # DataError naming the unreadable file
    n = (embedding.shape or (0, 0))[0]
    if rows is not None and len(set(rows)) == 1:
        index, rows = rows[0], None  # one row: its own neighbours
    check_rows(f"{embedding.run}/{embedding.name}", n, [index] if index is not None else rows or ())
    left_out = sorted(set(rows)) if rows is not None else []
    neighbor_count(n - (1 if index is not None else len(left_out))).check(k)
    found = index_for(embedding, metric)
    if index is not None:
        return found.neighbors_of([index], k, metric)
    if rows is not None:
        vector = np.asarray(embedding.vectors()[left_out], np.float64).mean(axis=0)
    assert vector is not None
    indices, distances = found.query(np.asarray(vector, np.float64), k + len(left_out), metric)
    if not left_out:
        return indices, distances
    keep = ~np.isin(indices[0], left_out) & (indices[0] >= 0)
    return indices[:, keep][:, :k], distances[:, keep][:, :k]


def check_rows(where: str, n: int, rows: Iterable[int]) -> None:
    """ValueError naming the first of ``rows`` that the embedding ``where`` (run/name) of
    ``n`` points lacks: the one sentence for a row past N."""
    for row in rows:
        if not 0 <= row < n:
            raise ValueError(f"index {row} out of range: {where} has {n} points (0..{n - 1})")
