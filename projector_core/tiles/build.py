"""Level-of-detail tiles: the points of a projection in quadtree tiles, as deepscatter serves them.

A tile (z, x, y) is a cell of a quadtree over the plane of the first two chosen axes (level z
splits each axis of the bounding box in 2^z; x, y from the low corner). It holds, in
level-of-detail order (``tiles/order.py``), up to ``budget`` of the points inside its cell
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
from typing import Any

import numpy as np

from projector_core.tiles.order import all_finite, radix_order

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

    def manifest(self) -> dict[str, Any]:
        """The tile index: what a front end needs to choose the tiles of a view."""
        return {"budget": self.budget, "box": {"lo": list(self.lo), "hi": list(self.hi)},
                "total": int(self.rows.size),
                "tiles": np.column_stack([self.tiles, self.counts]).astype(int).tolist()}


def plane_box(coords: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Low and high corner (float64) of the finite points over the first two columns of
    ``coords`` (a missing second column is 0)."""
    plane = coords[:, :2]
    lo, hi = np.zeros(2), np.zeros(2)
    if not plane.shape[0]:
        return lo, hi
    if not all_finite(plane):
        finite = np.isfinite(plane).all(axis=1)
        if not finite.any():
            return lo, hi
        plane = plane[finite]
    for axis in range(plane.shape[1]):  # column by column: a reduction over axis 0 is slower
        lo[axis], hi[axis] = plane[:, axis].min(), plane[:, axis].max()
    return lo, hi


def _morton(coords: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Each point's cell at MAX_LEVEL as a Morton code (x on the even bits, y on the odd):
    the code's top 2z bits are its cell at level z. Missing coordinates count as ``lo``."""
    side = 1 << MAX_LEVEL
    values = np.arange(side, dtype=np.uint32)
    spread = np.zeros(side, dtype=np.uint32)
    for bit in range(MAX_LEVEL):
        spread |= ((values >> bit) & 1) << (2 * bit)
    codes = np.zeros(coords.shape[0], np.uint32)
    for axis in range(min(2, coords.shape[1])):
        scale = side / (hi[axis] - lo[axis]) if hi[axis] > lo[axis] else 0.0
        for start in range(0, coords.shape[0], 1 << 20):  # bounded float64 temporaries
            q = np.subtract(coords[start:start + (1 << 20), axis], lo[axis], dtype=np.float64)
            q *= scale
            np.nan_to_num(q, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
            np.clip(q, 0, side - 1, out=q)
            codes[start:start + (1 << 20)] |= spread[q.astype(np.int32)] << axis
    return codes


def _unspread(codes: np.ndarray, level: int) -> tuple[np.ndarray, np.ndarray]:
    """Tile x and y of level-``level`` Morton codes (the even and the odd bits)."""
    x = np.zeros(codes.size, np.int64)
    y = np.zeros(codes.size, np.int64)
    for bit in range(level):
        x |= ((codes >> (2 * bit)) & 1) << bit
        y |= ((codes >> (2 * bit + 1)) & 1) << bit
    return x, y


def build_tiles(coords: np.ndarray, order: np.ndarray, budget: int = TILE_BUDGET) -> TileSet:
    """Tiles of ``coords`` (N x k, k >= 1; the quadtree is over axes 0 and 1) from its LOD
    ``order``. Rows with a NaN/Inf coordinate sit in the low corner's cells.

    The points are taken once in LOD order with their Morton codes; a level's cell is a
    code prefix, so each level is one stable radix sort of the unplaced points' prefixes
    (16 bits down to level 8), never a comparison sort.
    """
    n = coords.shape[0]
    lo, hi = plane_box(coords)
    order = np.asarray(order, dtype=np.int64)
    codes = _morton(coords, lo, hi)[order]  # in LOD order
    left = np.arange(n, dtype=np.int64)  # unplaced points, as positions in the order
    parts_rows, parts_tiles, parts_counts = [], [], []
    for level in range(MAX_LEVEL + 1):
        if not left.size:
            break
        prefix = (codes if left.size == n else codes[left]) >> (2 * (MAX_LEVEL - level))
        if level <= 8:  # one pass of numpy's radix sort of uint16; cells counted, not compared
            digits = prefix.astype(np.uint16)
            by_cell = np.argsort(digits, kind="stable")
            per_cell = np.bincount(digits, minlength=1 << (2 * level))
            cells = np.flatnonzero(per_cell)
            counts = per_cell[cells]
        else:
            by_cell = radix_order(prefix, 2 * level)  # stable: keeps LOD order inside a cell
            sorted_code = prefix[by_cell]
            first = np.flatnonzero(np.r_[True, sorted_code[1:] != sorted_code[:-1]])
            cells, counts = sorted_code[first], np.diff(np.r_[first, sorted_code.size])
        del prefix
        if level < MAX_LEVEL:  # each cell's first `budget`: by_cell's head of every group
            starts = np.cumsum(counts) - counts
            counts = np.minimum(counts, budget)
            placed = by_cell[np.arange(int(counts.sum())) +
                             np.repeat(starts - (np.cumsum(counts) - counts), counts)]
        else:
            placed = by_cell
        parts_rows.append(order[left[placed]])
        x, y = _unspread(cells.astype(np.int64), level)
        parts_tiles.append(np.column_stack([np.full(cells.size, level), x, y]))
        parts_counts.append(counts)
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


def early_tile(coordinates: np.ndarray, axes: list[int], lo: np.ndarray, hi: np.ndarray,
               z: int, x: int, y: int, budget: int, seed: int = 0) -> np.ndarray:
    """Rows (uint32, ascending) of tile (z, x, y) over ``axes`` of ``coordinates`` for a first
    picture before the tiles are built: the points of cell (z, x, y) of the box ``lo``-``hi``
    among one fixed random sample of about ``budget * 4^z`` points, so a level's early tiles
    together are an even sample of that level's size. O(sample): only the sample's rows are
    read (a coarser tile's points may come again)."""
    n = coordinates.shape[0]
    size = budget << (2 * z)
    # Drawn with replacement, repeats dropped: numpy's draw without replacement permutes all
    # N once the sample passes N / 50 (a second at 10M on a busy machine, per request).
    rows = np.arange(n) if size >= n else np.unique(
        np.random.default_rng(seed).integers(0, n, size))
    sample = coordinates[rows][:, axes]
    keep = np.isfinite(sample[:, :2]).all(axis=1)
    if z:
        wanted = sum((((x >> bit) & 1) << (2 * bit)) | (((y >> bit) & 1) << (2 * bit + 1))
                     for bit in range(z))
        keep &= (_morton(sample, lo, hi) >> (2 * (MAX_LEVEL - z))) == wanted
    return np.asarray(rows[keep].astype(np.uint32))
