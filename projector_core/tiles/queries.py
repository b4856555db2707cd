"""Questions over every point of a tiled projection: pick and region selection (with the
counts of a column inside it) answered tile by tile, and metadata search answered by the
column itself, a chunk at a time (a value does not depend on where its point lies).

Pick and selection read a ``TileSource`` (``tiles/source.py``) through its three methods only, so
they are the same over tiles in memory and tiles in a zarr store written by Dask workers,
and hold at most one tile and the answer at a time, never an N-sized array. Tiles never
straddle a cell (docs/ARCHITECTURE.md, "Tiles"), so a question about a part of the plane
reads only the tiles whose cells meet that part, at every level; every point is in exactly
one tile, so those tiles hold every point of that part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from projector_core.errors import UnknownColumn
from projector_core.kernels.search import search
from projector_core.tiles.build import MAX_LEVEL

if TYPE_CHECKING:
    from collections.abc import Iterable

    from projector_core.tiles.source import TileSource

POLYGON_MAX = 10_000  # vertices of a selection polygon
LIMIT_MAX = 1_000_000  # row ids one answer lists at most
CODES_MAX = 10_000  # matching dictionary codes a search lists (more: highlight by rows)
COUNTS_MAX = 1_000  # values a region's counts list, most frequent first


@dataclass(frozen=True)
class Pick:
    row: int | None  # None when no point lies within the radius
    distance: float | None
    coords: list[float] | None


@dataclass(frozen=True)
class Found:
    """Rows that answer a question: how many, and the first ``limit`` in row order."""

    count: int
    rows: list[int]
    truncated: bool
    codes: list[int] | None = None  # a search's matching dictionary codes
    counts: list[tuple[str, int, int]] | None = None  # (value, code, count) in a region


@dataclass(frozen=True)
class Region:
    """A box or a polygon in the plane of the first two axes; a box's edges are inside it,
    a polygon's inside is the even-odd rule's (as the front end's lasso tests points)."""

    polygon: np.ndarray  # float64 [m, 2]: a box as its four corners
    is_box: bool

    @classmethod
    def box(cls, corners: list[float]) -> Region:
        values = np.asarray(corners, np.float64)
        if values.shape != (4,) or not np.isfinite(values).all():
            raise ValueError(f"a box is four finite numbers [x0, y0, x1, y1], not {corners!r}")
        (x0, x1), (y0, y1) = sorted(values[[0, 2]]), sorted(values[[1, 3]])
        return cls(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]), True)

    @classmethod
    def of_polygon(cls, vertices: list[list[float]]) -> Region:
        if not 3 <= len(vertices) <= POLYGON_MAX:
            raise ValueError(f"a polygon has 3 to {POLYGON_MAX:,} vertices, not {len(vertices)}")
        if any(len(v) != 2 for v in vertices):
            raise ValueError("each polygon vertex is a pair [x, y]")
        points = np.asarray(vertices, np.float64)
        if not np.isfinite(points).all():
            raise ValueError("polygon vertices must be finite numbers")
        return cls(points, False)

    @property
    def lo(self) -> np.ndarray:
        return np.asarray(self.polygon.min(axis=0))

    @property
    def hi(self) -> np.ndarray:
        return np.asarray(self.polygon.max(axis=0))

    def contains(self, xy: np.ndarray) -> np.ndarray:
        """Which points (float [n, 2]) lie inside; NaN never does."""
        x, y = xy[:, 0].astype(np.float64), xy[:, 1].astype(np.float64)
        lo, hi = self.lo, self.hi
        inside = (x >= lo[0]) & (x <= hi[0]) & (y >= lo[1]) & (y <= hi[1])
        if self.is_box or not inside.any():
            return np.asarray(inside)
        at = np.flatnonzero(inside)
        px, py = x[at], y[at]
        odd = np.zeros(at.size, bool)
        xs, ys = self.polygon[:, 0], self.polygon[:, 1]
        for i in range(len(self.polygon)):  # edge from vertex i - 1 to vertex i
            xi, yi, xj, yj = xs[i], ys[i], xs[i - 1], ys[i - 1]
            if yi == yj:
                continue  # a horizontal edge never crosses the ray
            crosses = (yi > py) != (yj > py)
            odd ^= crosses & (px < (xj - xi) * (py - yi) / (yj - yi) + xi)
        inside[at] = odd
        return np.asarray(inside)


def to_dict(region: Region) -> dict[str, Any]:
    """The region as an answer states it: a polygon (a box as its corners)."""
    return {"kind": "region", "polygon": region.polygon.tolist()}


@dataclass(frozen=True)
class _Cells:
    """The manifest's tiles and their cells, each widened by a margin that covers the
    rounding of a point's binning, so a cell holds every point of its tile."""

    keys: np.ndarray  # int [T, 3]: z, x, y
    lo: np.ndarray  # float64 [T, 2]
    hi: np.ndarray

    @classmethod
    def of(cls, manifest: dict[str, Any]) -> _Cells:
        table = np.asarray(manifest["tiles"], np.int64).reshape(-1, 4)
        keys = table[:, :3]
        box_lo = np.asarray(manifest["box"]["lo"], np.float64)[:2]
        box_hi = np.asarray(manifest["box"]["hi"], np.float64)[:2]
        span = box_hi - box_lo
        margin = span / (1 << MAX_LEVEL) + 1e-6 * (np.abs(box_lo) + np.abs(box_hi)) + 1e-30
        width = span / (1 << keys[:, :1])
        lo = box_lo + keys[:, 1:] * width
        return cls(keys, lo - margin, lo + width + margin)

    def gap2(self, x: float, y: float) -> np.ndarray:
        """Squared distance from (x, y) to each cell (0 inside)."""
        d = np.maximum(np.maximum(self.lo - [x, y], 0), [x, y] - self.hi)
        with np.errstate(over="ignore"):  # far away is inf, as far as a pick is concerned
            return np.asarray((d * d).sum(axis=1))

    def meeting(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Indices of the cells that meet the box ``lo``-``hi``."""
        return np.flatnonzero(((self.lo <= hi) & (self.hi >= lo)).all(axis=1))


def _plane(coords: np.ndarray) -> np.ndarray:
    """The first two columns as float64 (a second column of 0 for one axis)."""
    if coords.shape[1] >= 2:
        return coords[:, :2].astype(np.float64)
    return np.column_stack([coords[:, 0].astype(np.float64), np.zeros(coords.shape[0])])


def pick(source: TileSource, x: float, y: float, radius: float) -> Pick:
    """The point nearest (x, y) in the plane of the first two axes within ``radius``, over
    every point (ties: the lowest row). Reads the tiles whose cells meet the disc, nearest
    cell first, and stops at a cell farther than the best point so far."""
    if not (np.isfinite([x, y, radius]).all() and radius >= 0):
        raise ValueError("x, y and radius must be finite numbers, radius >= 0")
    cells = _Cells.of(source.manifest())
    gap2 = cells.gap2(x, y)
    near = np.flatnonzero(gap2 <= radius * radius)
    best: tuple[float, int] = (radius * radius, -1)
    coords: np.ndarray | None = None
    for t in near[np.argsort(gap2[near], kind="stable")]:
        if gap2[t] > best[0] and best[1] >= 0:
            break
        tz, tx, ty = (int(v) for v in cells.keys[t])
        tile = source.read(tz, tx, ty)
        if tile is None:
            continue
        rows, points, _ = tile
        plane = _plane(points)
        with np.errstate(over="ignore"):
            d2 = (plane[:, 0] - x) ** 2 + (plane[:, 1] - y) ** 2
        hits = np.flatnonzero(d2 <= best[0])  # NaN compares false
        if not hits.size:
            continue
        first = hits[np.lexsort((rows[hits], d2[hits]))[0]]
        if (float(d2[first]), int(rows[first])) < best or best[1] < 0:
            best, coords = (float(d2[first]), int(rows[first])), points[first]
    if best[1] < 0 or coords is None:
        return Pick(None, None, None)
    return Pick(best[1], float(np.sqrt(best[0])), coords.tolist())


class _Smallest:
    """The ``limit`` smallest row ids among those added, in bounded memory."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[np.ndarray] = []
        self.held = 0

    def add(self, rows: np.ndarray) -> None:
        if not self.limit or not rows.size:
            return
        self.parts.append(rows)
        self.held += rows.size
        if self.held > max(2 * self.limit, 1 << 16):
            self.parts = [self._cut()]
            self.held = self.parts[0].size

    def _cut(self) -> np.ndarray:
        rows = np.concatenate(self.parts) if self.parts else np.zeros(0, np.uint32)
        if rows.size > self.limit:
            rows = np.partition(rows, self.limit - 1)[:self.limit]
        return rows

    def rows(self) -> list[int]:
        rows: list[int] = np.sort(self._cut()).tolist()
        return rows


def _dictionary(source: TileSource, column: str) -> list[str]:
    try:
        return source.codes_dictionary(column)
    except KeyError as error:
        raise UnknownColumn(error.args[0] if error.args else f"unknown column {column!r}"
                            ) from None


def _check_limit(limit: int) -> None:
    if not 0 <= limit <= LIMIT_MAX:
        raise ValueError(f"limit is 0 to {LIMIT_MAX:,}, not {limit}")


def select(source: TileSource, region: Region, limit: int = 10_000,
           column: str | None = None) -> Found:
    """The points inside ``region``: their count, the first ``limit`` rows in row order and,
    with ``column``, how many of them hold each of its values (most first). Reads the tiles
    whose cells meet the region's bounding box."""
    _check_limit(limit)
    dictionary = _dictionary(source, column) if column is not None else None
    tally = np.zeros(len(dictionary or ()), np.int64)
    cells = _Cells.of(source.manifest())
    smallest, count = _Smallest(limit), 0
    for t in cells.meeting(region.lo, region.hi):
        tz, tx, ty = (int(v) for v in cells.keys[t])
        tile = source.read(tz, tx, ty, column)
        if tile is None:
            continue
        rows, points, codes = tile
        inside = region.contains(_plane(points))
        count += int(inside.sum())
        smallest.add(rows[inside])
        if codes is not None:
            tally += np.bincount(codes[inside], minlength=tally.size)[:tally.size]
    counts = None
    if dictionary is not None:
        ranked = np.lexsort((np.arange(tally.size), -tally))[:COUNTS_MAX]
        counts = [(dictionary[c], int(c), int(tally[c])) for c in ranked if tally[c]]
    return Found(count, smallest.rows(), count > limit, counts=counts)


def inside(source: TileSource, region: Region) -> np.ndarray:
    """Every row inside ``region`` (int64, ascending): what a label applied to a region of a
    map shown from tiles is stored for, the rows :func:`select` counts. Reads the same tiles;
    holds the rows found (8 bytes each), not the tiles."""
    cells = _Cells.of(source.manifest())
    found: list[np.ndarray] = []
    for t in cells.meeting(region.lo, region.hi):
        tz, tx, ty = (int(v) for v in cells.keys[t])
        tile = source.read(tz, tx, ty)
        if tile is not None:
            rows, points, _ = tile
            found.append(rows[region.contains(_plane(points))].astype(np.int64))
    return np.sort(np.concatenate(found)) if found else np.zeros(0, np.int64)


def search_column(dictionary: list[str], counts: np.ndarray, blocks: Iterable[np.ndarray],
                  query: str, regex: bool = False, limit: int = 10_000) -> Found:
    """Points whose column value matches ``query`` (``kernels/search.py``'s rules: a
    case-insensitive substring or regex, a blank query matches none): the matching
    dictionary codes (when at most ``CODES_MAX``: a page highlights tile points by code),
    the count and the first ``limit`` rows.

    The column itself answers, not the tiles (which hold every row once, so the answer is
    the same): the dictionary is searched once, the count is the matching values' ``counts``
    (rows per value), and the codes ``blocks`` (in row order) are read only until ``limit``
    rows are found. Reading every tile took 16 s at 100M points; this reads one chunk."""
    _check_limit(limit)
    matching = np.asarray(search(dictionary, query, regex), np.int64)
    codes = matching.tolist() if matching.size <= CODES_MAX else None
    count = int(counts[matching].sum())
    rows: list[np.ndarray] = []
    if count and limit:
        wanted = np.zeros(len(dictionary), bool)
        wanted[matching] = True
        start, held = 0, 0
        for block in blocks:
            hit = np.flatnonzero(wanted[block])[:limit - held] + start
            rows.append(hit)
            held += hit.size
            start += block.size
            if held >= min(limit, count):
                break
    first = np.concatenate(rows).tolist() if rows else []
    return Found(count, first, count > limit, codes=codes)
