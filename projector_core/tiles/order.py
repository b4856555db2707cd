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

O(N): both sorts are radix sorts of 16-bit digits (numpy's stable sort of uint16), the first
of the cell code over random low bits, the second of the key quantised to 16 bits; vectorised
numpy, memory a few arrays of N: under 30 bytes a point at the peak (bench/bench_lod.py).
"""

from __future__ import annotations

import numpy as np

FINE_BITS = {2: 10, 3: 7}  # bits per axis of the fine grid: 2^20 or 2^21 cells
COARSE_LEVELS = {2: 5, 3: 3}  # levels whose every non-empty cell leads the order
_CHUNK = 1 << 20  # rows per pass of the grid binning
# Steps per unit of the sort key, so that all (levels + 2) units fit in 16 bits.
KEY_STEPS = {k: (1 << 16) // (levels + 2) for k, levels in COARSE_LEVELS.items()}


def morton_cells(coords: np.ndarray, bits: int) -> np.ndarray:
    """Each row's fine-grid cell as a Morton code (int32): coarse cells are code prefixes.

    ``coords`` is N x k (k = 2 or 3) and finite; every axis is scaled to the grid on its own.
    An axis's grid index is spread to every k-th bit by one lookup in a table of its
    ``2^bits`` values, not by a pass over the points per bit.
    """
    n, k = coords.shape
    cells = np.zeros(n, dtype=np.int32)
    side = 1 << bits
    values = np.arange(side, dtype=np.int32)
    spread = np.zeros(side, dtype=np.int32)
    for bit in range(bits):
        spread |= ((values >> bit) & 1) << (bit * k)
    for axis in range(k):
        column = coords[:, axis]
        lo, hi = float(column.min(initial=0.0)), float(column.max(initial=0.0))
        scale = side / (hi - lo) if hi > lo else 0.0
        for start in range(0, n, _CHUNK):  # bounded float64 temporaries
            q = np.subtract(column[start:start + _CHUNK], lo, dtype=np.float64)
            q *= scale
            cells[start:start + _CHUNK] |= spread[np.minimum(q.astype(np.int32), side - 1)] << axis
    return cells


def all_finite(coords: np.ndarray) -> bool:
    """Whether every value is finite, from the minimum and maximum of all values (a NaN or
    an infinity shows in one of them): two fast reductions instead of an N x k mask."""
    return not coords.size or bool(np.isfinite(coords.min()) and np.isfinite(coords.max()))


def radix_order(keys: np.ndarray, key_bits: int) -> np.ndarray:
    """The int32 order that sorts ``keys`` (non-negative ints below ``2^key_bits``) stably,
    16 bits at a time from the lowest: numpy's stable sort of uint16 is a radix sort, O(N),
    where a comparison sort of N int64 takes several times longer."""
    order = np.arange(keys.shape[0], dtype=np.int32)
    for shift in range(0, key_bits, 16):
        gathered = keys[order]
        gathered >>= shift
        digits = gathered.astype(np.uint16)  # the low 16 bits
        del gathered
        order = order[np.argsort(digits, kind="stable")]
    return order


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
    finite = np.isfinite(coords).all(axis=1) if not all_finite(coords) else None
    if finite is not None:
        rows = np.flatnonzero(finite).astype(np.int32)
        order = rows[lod_order(coords[rows], seed)] if rows.size else rows
        return np.concatenate([order, np.flatnonzero(~finite).astype(np.int32)])
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    rng = np.random.default_rng(seed)
    bits = FINE_BITS[k]
    cells = morton_cells(coords, bits)
    # Sorted by cell, in random order inside each cell: the cell code above random low bits,
    # 32 bits in all. Points of a cell that draw the same bits keep their row order, a tie
    # among 1 / 2^(32 - bits k) of the cell's points (its rank, below, moves by that much).
    shift = 32 - bits * k
    composite = cells.astype(np.uint32) << shift
    del cells
    composite |= rng.integers(0, 1 << shift, n, dtype=np.uint32)
    by_cell = radix_order(composite, 32)
    sorted_cells = composite[by_cell]
    del composite
    sorted_cells >>= shift
    sorted_cells = sorted_cells.view(np.int32)  # cell codes are below 2^31
    starts = np.flatnonzero(np.r_[True, sorted_cells[1:] != sorted_cells[:-1]])
    counts = np.diff(np.r_[starts, n])
    # key = (rank in cell + jitter) / cell count, in place; float32 is exact below 2^24 points.
    dtype = np.float32 if n < 1 << 24 else np.float64
    key: np.ndarray = np.arange(n, dtype=dtype)
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
    # The final sort by key is a radix sort of the key quantised to 16 bits: (levels + 2)
    # units of KEY_STEPS steps. Ties keep the cell order; a prefix that ends inside a step
    # thus ends part-way through the cells, a share of 1 / KEY_STEPS of the points at most.
    steps = KEY_STEPS[k]
    del sorted_cells, starts, counts
    key += levels + 1
    key *= steps
    np.minimum(key, (levels + 2) * steps - 1, out=key)
    quantised = key.astype(np.uint16)  # truncation: the floor of a non-negative key
    del key
    return by_cell[np.argsort(quantised, kind="stable")]
