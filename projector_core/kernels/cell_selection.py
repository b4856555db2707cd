"""The shortlist selection of the k-means cells scan (:mod:`cells`) on the CPU: each bin's
minimum in one vector pass over a row's scores, then the best bins and their best members.

As array operations (a strided minimum, a top-k, a gather of the chosen bins' members and
their argmin: four passes, three temporaries and a dozen dispatches a block of rows) it cost
almost as much as the product that made the scores. Compiled by numba (already a dependency
through umap-learn; compiled on first use, its code cached on disk), with the GIL released so
the scan's threads run at once."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(nogil=True, cache=True)
def binned_smallest(scores: np.ndarray, bins: int, places: int, columns: np.ndarray,
                    values: np.ndarray) -> None:  # pragma: no cover - compiled
    """For each row of ``scores`` [R, bins * width] (columns b, b + bins, ... share bin b):
    the ``places`` bins of least minimum, nearest first, as the column of that minimum (the
    first, on a tie) into ``columns`` [R, places] and the minimum into ``values`` [R, places]
    (+inf at column 0 for places beyond ``bins``). One bin a column: the exact top places."""
    rows, width = scores.shape
    best = np.empty(bins, scores.dtype)
    kept = np.empty(places, scores.dtype)
    chosen = np.empty(places, np.int64)
    for r in range(rows):
        row = scores[r]
        best[:] = row[:bins]
        for base in range(bins, width, bins):
            for b in range(bins):  # a select, not a branch: one vector loop (vminps)
                v = row[base + b]
                best[b] = v if v < best[b] else best[b]
        kept[:] = np.inf
        chosen[:] = 0
        worst = np.inf
        for b in range(bins):  # insertion into the places, kept sorted: most bins fail at once
            v = best[b]
            if v < worst:
                pos = places - 1
                while pos > 0 and kept[pos - 1] > v:
                    kept[pos] = kept[pos - 1]
                    chosen[pos] = chosen[pos - 1]
                    pos -= 1
                kept[pos] = v
                chosen[pos] = b
                worst = kept[places - 1]
        for p in range(places):  # the member of the chosen bin that holds its minimum
            column = chosen[p]
            for member in range(chosen[p], width, bins):
                if row[member] == kept[p]:
                    column = member
                    break
            columns[r, p] = column
            values[r, p] = kept[p]
