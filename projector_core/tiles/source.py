"""One interface over where a projection's level-of-detail tiles live: ``TileSource``.

Everything the server answers about a tiled projection (the tile routes, pick, region
selection, search, counts; ``tiles/queries.py``) reads tiles through these three
methods only, so it works the same whether the tiles sit in memory (one machine:
:class:`MemoryTiles` here) or in a chunked store written by Dask workers, where the server
never holds an N-sized array. The format is the one ``tiles/build.py`` builds and
docs/ARCHITECTURE.md ("Tiles") describes.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from projector_core.errors import unknown_column
from projector_core.jobs.job import Job
from projector_core.projection.jobs import projection_result
from projector_core.tiles.build import early_tile
from projector_core.tiles.store import LodStore, finite_bounds

Tile = tuple[np.ndarray, np.ndarray, np.ndarray | None]  # rows uint32, coords float32, codes int32


@runtime_checkable
class TileSource(Protocol):
    """A done projection's tiles over chosen axes."""

    def manifest(self) -> dict[str, Any]:
        """The tile index: ``{budget, total, axes, box: {lo, hi}, bounds: {lo, hi}, tiles:
        [[z, x, y, count], ...]}`` (what ``GET /api/jobs/ID/tiles`` answers)."""
        ...

    def read(self, z: int, x: int, y: int, column: str | None = None) -> Tile | None:
        """Tile (z, x, y): row ids (uint32 [n]), coordinates over the axes (float32 [n, k])
        and, with ``column``, int32 codes into :meth:`codes_dictionary` (else None); None
        when no such tile. KeyError for a column the source does not carry."""
        ...

    def codes_dictionary(self, column: str) -> list[str]:
        """The values the codes of ``column`` index into; KeyError for an unknown column."""
        ...


class MemoryTiles:
    """The tiles of a done job whose coordinates are in this process (the LodStore builds
    and keeps the TileSet; metadata codes come from the job's embedding: a metadata column
    encoded once, or the codes stored beside chunked data, read once)."""

    def __init__(self, store: LodStore, job: Job, axes: list[int]) -> None:
        self.store = store
        self.job = job
        self.axes = list(axes)
        self.coordinates = projection_result(job).coordinates

    def manifest(self) -> dict[str, Any]:
        tiles = self.store.tiles(self.job, self.axes)
        return {**tiles.manifest(), "axes": self.axes, "bounds": self.bounds()}

    def bounds(self) -> dict[str, list[float]]:
        """Every chosen axis's range over the finite points (known before the tiles are)."""
        return self.store.bounds(self.job, self.axes)

    @property
    def total(self) -> int:
        return int(self.coordinates.shape[0])

    def read(self, z: int, x: int, y: int, column: str | None = None) -> Tile | None:
        tiles = self.store.tiles(self.job, self.axes)
        where = tiles.find(z, x, y)
        if where is None:
            return None
        return self._tile(tiles.rows[where], column)

    def read_early(self, z: int, x: int, y: int, column: str | None = None) -> Tile | None:
        """While the tiles are still to be computed, the points of cell (z, x, y) among one
        fixed random sample of about ``budget * 4^z`` points (a first picture that does not
        wait); None once the tiles are there (read them)."""
        if self.store.peek_tiles(self.job, self.axes) is not None:
            return None
        bounds = self.bounds()
        lo, hi = np.zeros(2), np.zeros(2)  # the tiles' box: the points' range, 0 if missing
        lo[:len(bounds["lo"][:2])] = bounds["lo"][:2]
        hi[:len(bounds["hi"][:2])] = bounds["hi"][:2]
        rows = early_tile(self.coordinates, self.axes, lo, hi, z, x, y, self.store.budget)
        return self._tile(rows, column)

    def codes_dictionary(self, column: str) -> list[str]:
        return self._categorical(column)[0]

    def _categorical(self, column: str) -> tuple[list[str], np.ndarray]:
        if self.job.source is None:
            raise unknown_column(column, [])
        found: tuple[list[str], np.ndarray] = self.job.source.categorical(column)  # the
        return found  # metadata file's, or stored codes

    def _tile(self, rows: np.ndarray, column: str | None) -> Tile:
        codes = self._categorical(column)[1][rows] if column is not None else None
        coords = self.coordinates[rows]
        if self.axes != list(range(coords.shape[1])):  # else no second copy
            coords = coords[:, self.axes]
        coords = coords.astype(np.float32, copy=False)
        return rows, coords, codes


class FrameTiles(MemoryTiles):
    """Early tiles of a running job from its latest frame: the points placed so far (rows
    still NaN skipped), so a sampled t-SNE/UMAP shown from tiles has a picture that fills in
    as it places its points, long before its tiles can be built. Only ``read_early`` answers
    (random samples of a cell, as :meth:`MemoryTiles.read_early`); bounds are the frame's.
    Before a first frame ``coordinates`` has no row and every tile is empty; ``total`` is
    the points the job lays out. A thin frame (``stride`` above 1: a cluster's layout too
    large to send whole, ``distributed/sample_fit.ThinFrame``) holds every stride-th row:
    its row ids are scaled back, and it carries no column (that would read every code)."""

    def __init__(self, store: LodStore, job: Job, axes: list[int], coordinates: np.ndarray,
                 total: int, stride: int = 1) -> None:
        self.store = store
        self.job = job
        self.axes = list(axes)
        self.coordinates = coordinates
        self._total = total
        self.stride = stride

    def codes_dictionary(self, column: str) -> list[str]:
        if self.stride != 1:
            raise KeyError(f"early tiles of a layout this large carry no column ({column!r}): "
                           "ask again without it")
        return super().codes_dictionary(column)

    def _tile(self, rows: np.ndarray, column: str | None) -> Tile:
        if self.stride == 1:
            return super()._tile(rows, column)
        coords = self.coordinates[rows][:, self.axes].astype(np.float32, copy=False)
        return rows.astype(np.int64) * self.stride, coords, None

    @property
    def total(self) -> int:
        return self._total

    def bounds(self) -> dict[str, list[float]]:
        return finite_bounds(self.coordinates, self.axes)
