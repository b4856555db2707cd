"""What a door asks of a done projection's points by level of detail: the axes a request
names, the level-of-detail order and its slices, the tiles (a running t-SNE/UMAP's early
ones from its latest frame) and each tile's answer. The routes (``lod.py``, ``tiles.py``,
``tile_queries.py``, the result's text download) only turn these into bytes and headers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from projector_core.data.model import Embedding
from projector_core.data.steps import split_name
from projector_core.errors import UnknownColumn, unknown_column
from projector_core.jobs.job import Job
from projector_core.projection.jobs import layout_of
from projector_core.tiles.build import MAX_LEVEL
from projector_core.tiles.queries import Found, search_column
from projector_core.tiles.source import FrameTiles, MemoryTiles, Tile, TileSource
from projector_core.tiles.store import LodStore
from projector_core.tiles.stored import stored_tile_source
from projector_core.tiles.view import axes_as_shown, chosen_axes

LAYOUTS = ("tsne", "umap")  # methods whose running jobs answer early tiles at once
Axes = str | list[int] | None  # as a request gives them: "0,1,2", a list, or the default


def parse_axes(asked: Axes) -> list[int] | None:
    """The column numbers ``asked`` names ("0,1,2" or a list); ValueError for other text."""
    if not asked:
        return None
    if isinstance(asked, list):
        return asked
    try:
        return [int(part) for part in asked.split(",")]
    except ValueError:
        raise ValueError(f"axes must be comma-separated column numbers, not {asked!r}") from None


def axes_over(columns: int, asked: Axes, *, tiles: bool = False,
              as_shown: bool = False) -> list[int]:
    """The result columns a request's ``axes`` names, by the one rule (``tiles/view.py``
    ``chosen_axes``: the first three by default, two for tiles); ``as_shown``: the axes the
    page shows for them (``axes_as_shown``). One spelling means one thing in every route."""
    wanted = parse_axes(asked)
    if wanted is not None and as_shown:
        wanted = axes_as_shown(wanted, columns)
    return chosen_axes(wanted, columns, tiles)


def tile_source(lod: LodStore, job: Job, asked: Axes) -> TileSource:
    """The done job's tiles over ``asked`` (1 to 3 coordinate columns, as the page shows
    them; the quadtree is over the first two): :class:`NotDone` before the job is done,
    ValueError for a comparison or axes the result lacks."""
    coordinates = layout_of(job, "tiles").coordinates
    axes = axes_over(coordinates.shape[1], asked, tiles=True, as_shown=True)
    # A cluster's result stays on disk with the tiles its workers wrote: served from there.
    stored = stored_tile_source(coordinates, axes)
    return stored if stored is not None else MemoryTiles(lod, job, axes)


def answers_early(job: Job, early: bool) -> bool:
    """Whether an ``early`` tile of ``job`` comes from its latest frame at once (a running
    t-SNE or UMAP) rather than from its tiles once it is done."""
    return early and not job.status.finished and job.about.get("method") in LAYOUTS


def placed_so_far(lod: LodStore, job: Job, asked: Axes) -> FrameTiles:
    """A running t-SNE/UMAP's early tiles: the points its latest (whole or thin) frame has
    placed; none before its first frame."""
    frame = job.frame
    dims = int(job.about.get("dims") or 2)
    coordinates = frame.coordinates if frame is not None else np.zeros((0, dims), np.float32)
    shape = getattr(job.source, "shape", None)
    return FrameTiles(lod, job, axes_over(coordinates.shape[1], asked, tiles=True, as_shown=True),
                      coordinates, shape[0] if shape else coordinates.shape[0],
                      frame.stride if frame is not None else 1)


@dataclass(frozen=True)
class TileAnswer:
    """One tile: its rows, coordinates and codes, whether they are the computed tile's
    (``lod``) or a random sample of its cell (``random``), the points in all and their
    bounds over the axes."""

    tile: Tile
    kind: str
    total: int
    bounds: dict[str, list[float]]
    axes: list[int]


def tile_answer(source: TileSource, z: int, x: int, y: int, column: str | None,
                early: bool) -> TileAnswer:
    """Tile (z, x, y) of ``source``; ``early``: a random sample of its cell while the tiles
    are still to be computed. ValueError for a tile outside the quadtree, UnknownColumn for a
    column the tiles do not carry (even for a cell with no point)."""
    if not 0 <= z <= MAX_LEVEL:
        raise ValueError(f"tile level {z}: 0 to {MAX_LEVEL}")
    if not (0 <= x < 1 << z and 0 <= y < 1 << z):
        raise ValueError(f"tile {z}/{x}/{y}: x and y run to {(1 << z) - 1} at level {z}")
    try:
        if column is not None:
            source.codes_dictionary(column)
        tile = None
        if early and isinstance(source, MemoryTiles):  # tiles still to be computed
            tile = source.read_early(z, x, y, column)
            kind, total, bounds, axes = "random", source.total, source.bounds(), source.axes
        if tile is None:
            tile = source.read(z, x, y, column)
            manifest = source.manifest()
            kind, total, bounds, axes = "lod", manifest["total"], manifest["bounds"], manifest["axes"]
    except KeyError as error:
        raise UnknownColumn(error.args[0]) from None
    if tile is None:  # no point in this cell
        tile = (np.zeros(0, np.uint32), np.zeros((0, len(axes)), np.float32),
                np.zeros(0, np.int32) if column is not None else None)
    return TileAnswer(tile, kind, int(total), bounds, list(axes))


def order(lod: LodStore, job: Job, asked: Axes) -> np.ndarray:
    """The done job's level-of-detail order (int32 permutation) over ``asked``."""
    coordinates = layout_of(job, "level-of-detail order").coordinates
    return lod.order(job, axes_over(coordinates.shape[1], asked))


@dataclass(frozen=True)
class OrderSlice:
    """Points ``ranks`` of a level-of-detail order (or of a random sample: ``kind``) with
    their coordinates over ``axes``; ``total`` points in all, their ``bounds``."""

    ranks: np.ndarray
    coordinates: np.ndarray
    kind: str
    axes: list[int]
    total: int
    bounds: dict[str, list[float]]


def order_slice(lod: LodStore, job: Job, asked: Axes, offset: int, count: int | None,
                early: bool) -> OrderSlice:
    """Ranks ``offset`` to ``offset + count`` of the done job's order over ``asked`` (as the
    page shows them); ``early``: while the order is still to be computed, an even random
    sample of ``count`` points at once (it costs no sort)."""
    coordinates = layout_of(job, "level-of-detail order").coordinates
    n = coordinates.shape[0]
    axes = axes_over(coordinates.shape[1], asked, as_shown=True)
    order = lod.peek_order(job, axes) if early else None
    kind = "lod"
    if order is None and early:
        kind = "random"
        size = min(n, count if count is not None else n)
        ranks = np.sort(np.random.default_rng(0).choice(n, size, replace=False))
    else:
        order = lod.order(job, axes) if order is None else order
        ranks = order[offset: offset + count if count is not None else None]
    return OrderSlice(ranks, coordinates[ranks][:, axes], kind, axes, n, lod.bounds(job, axes))


def check_maps(job: Job, embedding: Embedding) -> None:
    """ValueError unless ``job`` maps ``embedding``'s points (the same run, tag and rows: a
    training step's map holds every step's points)."""
    def points(e: Embedding) -> tuple[str, str, int | None]:
        return e.run, split_name(e.name)[0], e.shape[0] if e.shape else None

    if not isinstance(job.source, Embedding) or points(job.source) != points(embedding):
        raise ValueError(f"job {job.id} is not a projection of {embedding.run}/"
                         f"{embedding.name}'s points")


def search_points(job: Job, column: str, query: str, regex: bool, limit: int) -> Found:
    """Points of the job whose ``column`` matches ``query``, from the embedding's column."""
    embedding = job.source
    if embedding is None:
        raise unknown_column(column, [])
    dictionary, counts = embedding.column_counts(column)  # UnknownColumn naming the columns
    return search_column(dictionary, counts, embedding.code_blocks(column), query, regex, limit)
