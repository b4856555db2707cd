"""Level-of-detail tiles built by the workers from coordinates on disk, written in stored form.

docs/ARCHITECTURE.md, "Tiles": tile (z, x, y) holds the next ``budget`` points, in LOD order,
of its cell that no ancestor holds. Here the order is the keys of ``shard_keys.py``, so a
tile holds its cell's unplaced points with a key up to that cell's threshold: the
``budget``-th smallest unplaced key. Level by level, over the cells still open:

1. every shard counts its unplaced points per cell (a few numbers per cell come back);
2. for a cell holding more than ``budget``, every shard sends the keys below a guessed
   ceiling (keys are uniform: ``budget`` plus six standard deviations' worth) to one
   worker, which picks the exact threshold (a cell that got too few is asked again);
3. the children of a full cell open at the next level, with its threshold as their floor.

The server holds only cells and thresholds (a few thousand numbers). Then each shard finds
its points' tiles and writes them into part files by output range; a task per range sorts
its points by (tile, key) and writes its slice of the stored form (``stored.py``) in
whole chunks. ``build_tiles`` over the keys' order gives exactly these tiles (tested).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from projector_core.data.model import Embedding
from projector_core.distributed.coords_store import StoredCoordinates
from projector_core.formats.chunked import ChunkedVectors
from projector_core.projection.compute import ProjectionResult
from projector_core.tiles import shard_keys
from projector_core.tiles.build import MAX_LEVEL, TILE_BUDGET, _unspread
from projector_core.tiles.shard_keys import ShardPlan
from projector_core.tiles.stored import write_index

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster

GROUP_CHUNKS = 64  # output chunks one writing task sorts and writes (4M points at the budget)


class Runner:
    """Tasks over the shards: on the cluster's workers, or here one after another."""

    def __init__(self, cluster: Cluster | None) -> None:
        self.cluster = cluster

    def each(self, function: Callable[..., Any], arguments: list[tuple[Any, ...]]) -> list[Any]:
        if self.cluster is None:
            return [function(*args) for args in arguments]
        return self.cluster.run(function, arguments)

    def gathered(self, function: Callable[..., Any], arguments: list[tuple[Any, ...]],
                 then: Callable[..., Any], *more: Any) -> Any:
        """``then([function(*a) for a in arguments], *more)`` on one worker: the parts never
        reach this process."""
        if self.cluster is None:
            return then([function(*args) for args in arguments], *more)
        parts = [self.cluster.submit(function, *args) for args in arguments]
        return self.cluster.result(self.cluster.submit(then, parts, *more))


def _ceilings(counts: np.ndarray, floors: np.ndarray, budget: int) -> np.ndarray:
    """Per full cell, a key below which its ``budget`` smallest unplaced keys lie (nearly
    always): the keys of each band (leads < 0 <= inside < 1 <= missing < 2) are uniform."""
    out = np.full(counts.shape[0], np.inf)
    for i, (leads, inside, missing) in enumerate(counts):
        if leads >= budget:
            out[i] = 0.0
            continue
        need, count, band = budget - leads, inside, 0.0
        if leads + inside < budget:
            need, count, band = budget - leads - inside, missing, 1.0
        low = max(floors[i], band)
        share = (need + 6 * np.sqrt(need) + 16) / max(count, 1)
        out[i] = band + 1.0 if share >= 1 else low + (band + 1.0 - low) * share
    return out


def thresholds(runner: Runner, plans: list[ShardPlan], leads: tuple[Any, ...], budget: int
               ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Per level: (open cells, floors, thresholds, tile counts) of the cells holding points."""
    levels = []
    cells, floors = np.zeros(1, np.uint32), np.full(1, -np.inf)
    for level in range(MAX_LEVEL + 1):
        if not cells.size:
            break
        counts = np.sum(runner.each(shard_keys.level_counts,
                                    [(p, leads, level, cells, floors) for p in plans]), axis=0)
        total = counts.sum(axis=1)
        kept = total > 0
        cells, floors, counts, total = cells[kept], floors[kept], counts[kept], total[kept]
        cut = np.full(cells.size, np.inf)
        full = np.flatnonzero(total > budget) if level < MAX_LEVEL else np.zeros(0, np.int64)
        ceilings = np.full(cells.size, -np.inf)
        ceilings[full] = _ceilings(counts[full], floors[full], budget)
        while full.size:
            found = runner.gathered(shard_keys.level_candidates,
                                    [(p, leads, level, cells, floors, ceilings) for p in plans],
                                    shard_keys.select, cells.size, budget)
            cut[full] = found[full]
            missed = full[np.isnan(found[full])]  # the guess was short: take every key
            ceilings[:] = -np.inf
            ceilings[missed] = np.inf
            full = missed
        levels.append((cells, floors, cut, np.minimum(total, budget)))
        opened = np.flatnonzero(np.isfinite(cut))
        cells = ((cells[opened].astype(np.uint32)[:, None] << 2)
                 | np.arange(4, dtype=np.uint32)).reshape(-1)
        floors = np.repeat(cut[opened], 4)
    return levels


def _tile_of(state: shard_keys.ShardKeys, levels: list[Any]) -> np.ndarray:
    """Each point's tile number (tiles in level order, cells ascending inside a level)."""
    tile = np.full(state.key.size, -1, np.int64)
    base = 0
    for level, (cells, floors, cut, _counts) in enumerate(levels):
        at, points = shard_keys.unplaced(state, level, cells, floors)
        placed = state.key[points] <= cut[at]
        tile[points[placed]] = base + at[placed]
        base += cells.size
    return tile


def place_shard(plan: ShardPlan, leads: tuple[Any, ...], levels: list[Any], offsets: np.ndarray,
                counts: np.ndarray, group_rows: int, parts: str,
                columns: dict[str, str]) -> None:
    """Write the shard's points, with their tile and key, into one part file per output
    range their tile meets (a tile across two ranges goes to both)."""
    import zarr

    state = shard_keys.keys(plan, *leads)
    tile = _tile_of(state, levels)
    coords = shard_keys.read_plane(plan)
    codes = {name: np.asarray(zarr.open_array(store=path, mode="r")[plan.start:plan.stop],
                              np.int32) for name, path in columns.items()}
    first = offsets[tile] // group_rows
    last = (offsets[tile] + counts[tile] - 1) // group_rows
    for group in np.unique(np.r_[first, last]):
        mine = np.flatnonzero((first <= group) & (last >= group))
        path = Path(parts) / f"{group}" / f"{plan.start}.npz"
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, rows=(mine + plan.start).astype(np.uint32), tile=tile[mine],
                 key=state.key[mine], coords=coords[mine],
                 **{f"codes_{name}": values[mine]  # type: ignore[arg-type]  # numpy's stub: **kwds
                    for name, values in codes.items()})


def write_group(parts: str, group: int, group_rows: int, offsets: np.ndarray,
                out: str, columns: list[str]) -> None:
    """Sort one output range's points by (tile, key) and write its slice of every array."""
    import zarr

    files = sorted((Path(parts) / f"{group}").glob("*.npz"))
    loaded = [dict(np.load(f)) for f in files]
    if not loaded:
        return
    merged = {name: np.concatenate([part[name] for part in loaded]) for name in loaded[0]}
    by = np.argsort(merged["key"])  # by key, then stably by tile: twice lexsort's speed
    by = by[np.argsort(merged["tile"][by].astype(np.int32), kind="stable")]
    tile = merged["tile"][by]
    starts = np.flatnonzero(np.r_[True, tile[1:] != tile[:-1]])
    rank = np.arange(tile.size) - np.repeat(starts, np.diff(np.r_[starts, tile.size]))
    position = offsets[tile] + rank
    lo = group * group_rows
    keep = (position >= lo) & (position < lo + group_rows)
    by, position = by[keep], position[keep]
    stop = lo + by.size
    assert by.size == 0 or (position[0] == lo and position[-1] == stop - 1)
    zarr.open_array(store=f"{out}/rows", mode="r+")[lo:stop] = merged["rows"][by]
    zarr.open_array(store=f"{out}/coords", mode="r+")[lo:stop] = merged["coords"][by]
    for name in columns:
        zarr.open_array(store=f"{out}/codes/{name}", mode="r+")[lo:stop] = \
            merged[f"codes_{name}"][by]
    shutil.rmtree(Path(parts) / f"{group}", ignore_errors=True)


def build_tile_store(coordinates: StoredCoordinates, shard_rows: int, axes: list[int],
                     cluster: Cluster | None, columns: dict[str, tuple[str, list[str]]] | None = None,
                     budget: int = TILE_BUDGET, seed: int = 0) -> str:
    """The stored tiles of ``coordinates`` over ``axes`` (the quadtree over the first two),
    built by the workers (in this process without a cluster); the store's path.

    ``columns``: name -> (zarr of N int32 codes, dictionary), written as ``codes/<name>``.
    """
    import zarr

    columns = columns or {}
    n = coordinates.shape[0]
    stats = coordinates.stats
    plane = [a for a in axes[:2]]
    lo = np.zeros(2)
    hi = np.zeros(2)
    if stats.finite:
        lo[:len(plane)] = stats.lo[plane]
        hi[:len(plane)] = stats.hi[plane]
    out = f"{Path(coordinates.path).parent}/tiles-{'-'.join(map(str, axes))}"
    plans = [ShardPlan(coordinates.path, start, min(n, start + shard_rows), tuple(axes),
                       (float(lo[0]), float(lo[1])), (float(hi[0]), float(hi[1])), seed)
             for start in range(0, n, shard_rows)]
    runner = Runner(cluster)
    try:
        leads = shard_keys.choose_leads(runner.each(shard_keys.shard_leads, [(p,) for p in plans]))
        levels = thresholds(runner, plans, leads, budget)
        counts = np.concatenate([level[3] for level in levels]).astype(np.int64)
        offsets = np.r_[0, np.cumsum(counts)[:-1]].astype(np.int64)
        chunk = max(1, min(budget, n))
        group_rows = chunk * GROUP_CHUNKS
        group = zarr.open_group(store=out, mode="w", zarr_format=3)
        group.create_array("rows", shape=(n,), chunks=(chunk,), dtype="<u4", compressors=None)
        group.create_array("coords", shape=(n, len(axes)), chunks=(chunk, len(axes)),
                           dtype="<f4", compressors=None)
        for name, (_path, dictionary) in columns.items():
            codes = group.create_array(f"codes/{name}", shape=(n,), chunks=(chunk,), dtype="<i4",
                                       compressors=None)
            codes.attrs["dictionary"] = list(dictionary)
        parts = f"{out}/parts"
        sources = {name: path for name, (path, _d) in columns.items()}
        runner.each(place_shard, [(p, leads, levels, offsets, counts, group_rows, parts, sources)
                                  for p in plans])
        runner.each(write_group, [(parts, g, group_rows, offsets, out, list(columns))
                                  for g in range(-(-n // group_rows))])
        shutil.rmtree(parts, ignore_errors=True)
        tiles = np.concatenate([_cells(level, cells) for level, (cells, *_r) in enumerate(levels)])
        bounds = {"lo": [float(stats.lo[a]) if stats.finite else 0.0 for a in axes],
                  "hi": [float(stats.hi[a]) if stats.finite else 0.0 for a in axes]}
        write_index(out, tiles, offsets, counts, budget=budget, axes=list(axes),
                    lo=lo.tolist(), hi=hi.tolist(), bounds=bounds)
    finally:
        if cluster is not None:
            cluster.everywhere(shard_keys.forget, coordinates.path)
        else:
            shard_keys.forget(coordinates.path)
    return out


def _cells(level: int, cells: np.ndarray) -> np.ndarray:
    x, y = _unspread(cells.astype(np.int64), level)
    return np.column_stack([np.full(cells.size, level), x, y]).astype(np.int32)


def with_stored_tiles(result: ProjectionResult, embedding: Embedding, cluster: Cluster | None
                      ) -> ProjectionResult:
    """A result the workers wrote to disk, with its tiles over the first two axes built by
    them too (part of its job: a page asks for them next), carrying the categorical columns
    stored beside the embedding (``formats/code_columns.py``; the tiles' dictionary is the
    column's, as the counts route answers it). Any other result as it is."""
    coordinates = result.coordinates
    if not isinstance(coordinates, StoredCoordinates):
        return result
    vectors = embedding.vectors()
    assert cluster is not None and isinstance(vectors, ChunkedVectors)
    shard = vectors.shards()[0]
    coded = {name: (stored.path, stored.dictionary)
             for name, stored in embedding.stored_columns().items()}
    axes = list(range(min(coordinates.shape[1], 2)))
    started = time.perf_counter()
    coordinates.tiles = build_tile_store(coordinates, shard.stop - shard.start, axes, cluster,
                                         coded)
    took = round(time.perf_counter() - started, 3)
    result.info.update({"tiles_seconds": took, "tile_columns": sorted(coded),
                        "seconds": round(result.info["seconds"] + took, 3),
                        "stored": {"coordinates": coordinates.path, "tiles": coordinates.tiles}})
    return result
