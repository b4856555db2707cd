"""Search by example ("more like these"): the centroid of some rows is the query vector.

No model is needed: the rows' own vectors are averaged, so it works for any embedding. The
neighbour query is then the one every door asks (``ProjectionService.neighbors``), with the
examples left out of its answer: what a user wants of "more like these" is the others. Rows
without finite values are left out of the mean; how many rows one query averages is a data
limit (``projection/limits.py`` ``example_rows``), sent to the page with the others.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from projector_core.data.model import Embedding
from projector_core.projection.limits import example_rows


def centroid(embedding: Embedding, rows: Sequence[int]) -> tuple[np.ndarray, tuple[int, ...]]:
    """(the mean of the rows' finite vectors, the distinct rows): the query vector and the
    rows its answer leaves out. ValueError for too many rows, a row past N, or rows with no
    finite vector."""
    n = (embedding.shape or embedding.vectors().shape)[0]
    distinct = np.unique(np.asarray(rows, np.int64))  # ascending: a memory map read in order
    example_rows(n).check(len(distinct))
    if distinct.size and (distinct[0] < 0 or distinct[-1] >= n):
        bad = int(distinct[0] if distinct[0] < 0 else distinct[-1])
        raise ValueError(f"row {bad} out of range: {embedding.run}/{embedding.name} has {n} "
                         f"points (0..{n - 1})")
    vectors = np.asarray(embedding.vectors()[distinct], np.float64)
    finite = np.isfinite(vectors).all(axis=1)
    if not finite.any():
        raise ValueError(f"none of the {distinct.size} rows has a finite vector: they have no "
                         "centroid to search from")
    return vectors[finite].mean(axis=0), tuple(int(r) for r in distinct)
