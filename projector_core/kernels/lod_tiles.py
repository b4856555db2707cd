"""Level-of-detail tiles: the points of a projection in quadtree tiles, as deepscatter serves them.

A tile (z, x, y) is a cell of a quadtree over the plane of the first two chosen axes (level z
splits each axis of the bounding box in 2^z; x, y from the low corner). It holds, in
level-of-detail order (``kernels/lod.py``), up to ``budget`` of the points inside its cell
that no ancestor tile holds: the root tile is the first ``budget`` points of the order, a
child tile the next ``budget`` of its quadrant, and so on down to the level where a cell has
no more than that left (at ``MAX_LEVEL`` a tile takes all the rest). So a view fetches the
tiles on screen down to the level whose density it needs, and the union of the tiles of
every level is every point once.

Built from the order in O(N log(N / budget)): each level ranks the points still unplaced
inside their cell of that level by one stable sort of cell codes (which keeps the LOD order
inside a cell). A Dask cluster builds the same tiles per shard and merges them (see
docs/ARCHITECTURE.md, "Tiles").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from projector_core.kernels.lod import radix_order

TILE_BUDGET = 1 << 16  # points a tile holds at most: 768 KB of coordinates, ids and codes
MAX_LEVEL = 15  # the deepest level: below it a tile takes every point left in its cell


@dataclass(frozen=True)
class TileSet:
    """Every point once, grouped by tile: ``rows`` (uint32 row ids) in tile order, LOD order
    inside a tile; tile t holds rows[offsets[t]:offsets[t] + counts[t]]."""

    rows: np.ndarray  # uint32 [N]
    tiles: np.ndarray  # int32 [T, 3]: z, x, y
    offsets: np.ndarray  # int64 [T]
    counts: np.ndarray  # int64 [T]
    budget: int
    lo: tuple[float, float]  # the quadtree's box over the first two axes
    hi: tuple[float, float]

    def find(self, z: int, x: int, y: int) -> slice | None:
        """Where tile (z, x, y) sits in ``rows``, or None when it holds no point."""
        hits = np.flatnonzero((self.tiles[:, 0] == z) & (self.tiles[:, 1] == x)
                              & (self.tiles[:, 2] == y))
        if not hits.size:
            return None
        t = int(hits[0])
        return slice(int(self.offsets[t]), int(self.offsets[t] + self.counts[t]))

    def manifest(self) -> dict:
        """The tile index: what a front end needs to choose the tiles of a view."""
        return {"budget": self.budget, "box": {"lo": list(self.lo), "hi": list(self.hi)},
                "total": int(self.rows.size),
                "tiles": np.column_stack([self.tiles, self.counts]).astype(int).tolist()}


def _grid(plane: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Each point's cell at MAX_LEVEL as two int32 columns (x, y)."""
    side = 1 << MAX_LEVEL
    span = np.where(hi > lo, hi - lo, 1.0)
    cells = np.empty(plane.shape, np.int32)
    for axis in range(2):
        q = (plane[:, axis].astype(np.float64) - lo[axis]) * (side / span[axis])
        cells[:, axis] = np.clip(q, 0, side - 1).astype(np.int32)
    return cells


def build_tiles(coords: np.ndarray, order: np.ndarray, budget: int = TILE_BUDGET) -> TileSet:
    """Tiles of ``coords`` (N x k, k >= 1; the quadtree is over axes 0 and 1) from its LOD
    ``order``. Rows with a NaN/Inf coordinate sit in the root's box corner (0, 0) cells of
    every level, after the finite points of the tile (the order puts them last)."""
    n = coords.shape[0]
    plane = np.zeros((n, 2), np.float64)
    plane[:, :min(2, coords.shape[1])] = coords[:, :2]
    finite = np.isfinite(plane).all(axis=1)
    lo = plane[finite].min(axis=0) if finite.any() else np.zeros(2)
    hi = plane[finite].max(axis=0) if finite.any() else np.zeros(2)
    plane[~finite] = lo
    cells = _grid(plane, lo, hi)
    left = np.asarray(order, dtype=np.int64)  # unplaced rows, in LOD order
    parts_rows, parts_tiles, parts_counts = [], [], []
    for level in range(MAX_LEVEL + 1):
        if not left.size:
            break
        shift = MAX_LEVEL - level
        here = cells[left]
        code = ((here[:, 0] >> shift) << level) | (here[:, 1] >> shift)  # below 2^(2 level)
        del here
        by_cell = radix_order(code, 2 * level)  # stable: keeps LOD order inside a cell
        sorted_code = code[by_cell]
        starts = np.flatnonzero(np.r_[True, sorted_code[1:] != sorted_code[:-1]])
        counts = np.diff(np.r_[starts, sorted_code.size])
        rank = np.arange(sorted_code.size) - np.repeat(starts, counts)
        take = rank < budget if level < MAX_LEVEL else np.ones(rank.size, bool)
        placed = by_cell[take]  # grouped by cell, LOD order inside
        parts_rows.append(left[placed])
        tile_codes = sorted_code[starts]
        parts_tiles.append(np.column_stack([np.full(starts.size, level), tile_codes >> level,
                                            tile_codes & ((1 << level) - 1)]))
        parts_counts.append(np.minimum(counts, budget) if level < MAX_LEVEL else counts)
        rest = np.ones(left.size, bool)
        rest[placed] = False
        left = left[rest]  # still in LOD order: a boolean mask keeps the sequence
    rows = np.concatenate(parts_rows).astype(np.uint32) if parts_rows else np.zeros(0, np.uint32)
    tiles = np.concatenate(parts_tiles).astype(np.int32) if parts_tiles else np.zeros((0, 3),
                                                                                      np.int32)
    counts = np.concatenate(parts_counts).astype(np.int64) if parts_counts else np.zeros(0,
                                                                                         np.int64)
    offsets = np.r_[0, np.cumsum(counts)[:-1]].astype(np.int64)
    return TileSet(rows=rows, tiles=tiles, offsets=offsets, counts=counts, budget=budget,
                   lo=(float(lo[0]), float(lo[1])), hi=(float(hi[0]), float(hi[1])))
