"""Level of detail: an order of the points in which every prefix is an even sample.

A browser draws a frame of 10M points in seconds (software GL) but 60k in a frame's time,
so while the view moves it draws the first points of this order, and all of them when it
is still. For the prefix to look like the whole, it must hold the same share of every
region (density and colour proportions stay), and no region may be missing (an outlier
cluster shows from the start). So:

- the points are binned in a fine grid (quadtree leaves in 2D, octree in 3D) over their
  projected coordinates; inside each cell they take a random rank r of the cell's c points,
  and the order sorts by (r + jitter) / c: a prefix of a fraction f holds about f c points of
  every cell (a stratified sample);
- before those come one point of every non-empty cell of the coarse levels 0..L, coarse
  first, as a quadtree/octree walked level by level (deepscatter's tiles).

O(N log N) (two sorts), vectorised numpy, memory a few arrays of N: under 40 bytes a point.
"""

from __future__ import annotations

import numpy as np

FINE_BITS = {2: 10, 3: 7}  # bits per axis of the fine grid: 2^20 or 2^21 cells
COARSE_LEVELS = {2: 5, 3: 3}  # levels whose every non-empty cell leads the order


def morton_cells(coords: np.ndarray, bits: int) -> np.ndarray:
    """Each row's fine-grid cell as a Morton code (int32): coarse cells are code prefixes.

    ``coords`` is N x k (k = 2 or 3) and finite; every axis is scaled to the grid on its own.
    """
    n, k = coords.shape
    cells = np.zeros(n, dtype=np.int32)
    side = 1 << bits
    for axis in range(k):
        column = coords[:, axis].astype(np.float64)
        lo, hi = float(column.min(initial=0.0)), float(column.max(initial=0.0))
        span = hi - lo if hi > lo else 1.0
        q = np.minimum(((column - lo) * (side / span)).astype(np.int32), side - 1)
        for bit in range(bits):
            cells |= ((q >> bit) & 1) << (bit * k + axis)
    return cells


def lod_order(coords: np.ndarray, seed: int = 0) -> np.ndarray:
    """A permutation (int32) of the rows of ``coords`` (N x 1..3) whose prefixes are even samples.

    Rows with a NaN/Inf coordinate come last.
    """
    coords = np.asarray(coords)
    if coords.ndim != 2 or coords.shape[1] == 0:
        raise ValueError(f"coordinates must be N x 1..3, not {coords.shape}")
    coords = coords[:, :3]
    if coords.shape[1] == 1:
        coords = np.hstack([coords, np.zeros_like(coords)])
    n, k = coords.shape
    finite = np.isfinite(coords).all(axis=1)
    rows = np.flatnonzero(finite).astype(np.int32)
    if rows.size < n:
        order = rows[lod_order(coords[rows], seed)] if rows.size else rows
        return np.concatenate([order, np.flatnonzero(~finite).astype(np.int32)])
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    rng = np.random.default_rng(seed)
    bits = FINE_BITS[k]
    cells = morton_cells(coords, bits)
    # Sorted by cell, in random order inside each cell: one sort of (cell, random) keys.
    composite = (cells.astype(np.int64) << 31) | rng.integers(0, 1 << 31, n)
    by_cell = np.argsort(composite).astype(np.int32)
    del composite
    sorted_cells = cells[by_cell]
    del cells
    starts = np.flatnonzero(np.r_[True, sorted_cells[1:] != sorted_cells[:-1]])
    counts = np.diff(np.r_[starts, n])
    # key = (rank in cell + jitter) / cell count, in place; float32 is exact below 2^24 points.
    dtype = np.float32 if n < 1 << 24 else np.float64
    key = np.arange(n, dtype=dtype)
    key -= np.repeat(starts.astype(dtype), counts)
    key += rng.random(n, dtype=np.float32)
    key /= np.repeat(counts.astype(dtype), counts)
    # One point of every coarse cell first, coarsest level first: key in [level - L - 1, level - L).
    # A cell's smallest key is its first point; a coarse cell's lead is the smallest of its
    # finer cells' leads, so each level looks only at the leads of the level below.
    leads = starts
    levels = COARSE_LEVELS[k]
    for level in range(levels, -1, -1):
        coarse = sorted_cells[leads] >> ((bits - level) * k)
        first = np.flatnonzero(np.r_[True, coarse[1:] != coarse[:-1]])
        lead_keys = key[leads]
        smallest = np.minimum.reduceat(lead_keys, first)
        group = np.repeat(np.arange(first.size), np.diff(np.r_[first, leads.size]))
        best = np.flatnonzero(lead_keys == smallest[group])
        best = best[np.r_[True, group[best][1:] != group[best][:-1]]]  # one per cell
        leads = leads[best]
        key[leads] = level - levels - 1 + np.clip(key[leads] - np.floor(key[leads]), 0, 0.999)
    return by_cell[np.argsort(key)].astype(np.int32)
