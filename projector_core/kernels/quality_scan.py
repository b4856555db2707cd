"""The compiled row scan behind :mod:`quality` (numba, already a dependency through
umap-learn), in its own module so that numba is imported only when quality is asked for and
its compiled code is cached on disk between runs."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(parallel=True, cache=True)
def scan_block(dist: np.ndarray, limits: np.ndarray, targets: np.ndarray,
               nearest: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """Per row of a distance block: its k nearest columns into ``nearest`` (ties by index)
    and, per slot, how many columns are ahead of column ``targets`` (distance ``limits``).
    One read of each row, where a numpy pass per slot would read it k times."""
    rows, n = dist.shape
    k = nearest.shape[1]
    slots = limits.shape[1]
    ahead = np.zeros((rows, slots), np.int64)
    for r in numba.prange(rows):
        best_v = np.full(k, np.inf)
        best_i = np.full(k, -1, np.int64)
        top = -np.inf
        for s in range(slots):
            top = max(top, limits[r, s])
        for c in range(n):
            v = dist[r, c]
            if v < best_v[k - 1]:  # strict: an equal later index stays behind
                pos = k - 1
                while pos > 0 and best_v[pos - 1] > v:
                    best_v[pos] = best_v[pos - 1]
                    best_i[pos] = best_i[pos - 1]
                    pos -= 1
                best_v[pos] = v
                best_i[pos] = c
            if v <= top:
                for s in range(slots):
                    limit = limits[r, s]
                    if v < limit or (v == limit and c < targets[r, s]):
                        ahead[r, s] += 1
        nearest[r, :] = best_i
    return ahead
