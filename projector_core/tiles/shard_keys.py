"""Per shard, on a worker: each point's Morton code and level-of-detail key, and its tile.

The single machine's order (``tiles/order.py``) ranks points inside their fine cell; over
shards each point draws its rank share as a uniform random number ``u`` instead, seeded by
the shard's first row, so a prefix of the order holds each cell's share up to binomial
noise and no shard comes first. One point of every coarse cell (levels 0..L) leads: the
cell's smallest ``u``, a min-reduction over the shards; a lead of level l gets the key
``l - L - 1 + u``, every other point ``u``, a point with a NaN/Inf coordinate ``1 + u``
(after all others, in the low corner's cells, as ``build_tiles`` places them). Sorting the
keys is the order; ``build_tiles`` over that order gives exactly the tiles the cluster builds.

A worker keeps each shard's codes and keys (12 bytes a point) between the tile build's
passes in ``_STATES``; one lost with its worker is recomputed from the coordinates on disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from projector_core.tiles.build import MAX_LEVEL
from projector_core.tiles.build import _morton as morton_codes
from projector_core.tiles.order import COARSE_LEVELS

DENSE_LEVELS = 10  # down to this level a cell is found by a table of 4^level entries
LEAD_LEVELS = COARSE_LEVELS[2]  # levels whose every non-empty cell has a lead (as lod.py)


@dataclass(frozen=True)
class ShardPlan:
    """Where a shard's coordinates are and how its keys are drawn."""

    coords: str  # the zarr of the coordinates
    start: int
    stop: int
    axes: tuple[int, ...]
    lo: tuple[float, float]
    hi: tuple[float, float]
    seed: int


@dataclass
class ShardKeys:
    codes: np.ndarray  # uint32 Morton codes at MAX_LEVEL
    key: np.ndarray  # float64 LOD keys
    # Points still unplaced at a level, once seen: the next level looks only at those.
    alive: dict[int, np.ndarray] = field(default_factory=dict)


_STATES: dict[tuple[str, int], ShardKeys] = {}


def read_plane(plan: ShardPlan) -> np.ndarray:
    import zarr

    block = np.asarray(zarr.open_array(store=plan.coords, mode="r")[plan.start:plan.stop])
    return block[:, list(plan.axes)]


def draw(plan: ShardPlan) -> ShardKeys:
    """Codes and keys before the leads are known (the leads' keys are set by :func:`keys`)."""
    coords = read_plane(plan)
    codes = morton_codes(coords, np.asarray(plan.lo), np.asarray(plan.hi))
    key = np.random.default_rng([plan.seed, plan.start]).random(size=(coords.shape[0],))
    key[~np.isfinite(coords).all(axis=1)] += 1.0
    return ShardKeys(codes, key)


def shard_leads(plan: ShardPlan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(level-L cells, the smallest u in each, its global row) over the shard's finite points."""
    drawn = draw(plan)
    _STATES.pop((plan.coords, plan.start), None)
    rows = np.flatnonzero(drawn.key < 1.0)
    if not rows.size:
        return first_empty(), np.zeros(0), first_empty()
    cells = (drawn.codes[rows] >> (2 * (MAX_LEVEL - LEAD_LEVELS))).astype(np.uint16)
    by = np.argsort(cells, kind="stable")  # a radix sort of 10-bit cells
    cells, rows = cells[by], rows[by]
    key = drawn.key[rows]
    first = np.flatnonzero(np.r_[True, cells[1:] != cells[:-1]])
    smallest = np.minimum.reduceat(key, first)
    group = np.repeat(np.arange(first.size), np.diff(np.r_[first, cells.size]))
    best = np.flatnonzero(key == smallest[group])
    best = best[np.r_[True, group[best][1:] != group[best][:-1]]]  # one per cell
    return cells[best].astype(np.int64), key[best], rows[best] + plan.start


def first_empty() -> np.ndarray:
    return np.zeros(0, np.int64)


def choose_leads(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(global rows, lead level) of every coarse cell's lead, each row at its coarsest level."""
    cells = np.concatenate([p[0] for p in parts]).astype(np.int64)
    u = np.concatenate([p[1] for p in parts])
    rows = np.concatenate([p[2] for p in parts]).astype(np.int64)
    level_of: dict[int, int] = {}
    for level in range(LEAD_LEVELS, -1, -1):
        coarse = cells >> (2 * (LEAD_LEVELS - level))
        by = np.lexsort((rows, u, coarse))
        first = by[np.r_[True, coarse[by][1:] != coarse[by][:-1]]] if by.size else by
        for row in rows[first]:
            level_of[int(row)] = level  # a coarser level overwrites a finer one
    found = np.array(sorted(level_of), np.int64)
    return found, np.array([level_of[int(r)] for r in found], np.int64)


def keys(plan: ShardPlan, lead_rows: np.ndarray, lead_levels: np.ndarray) -> ShardKeys:
    """The shard's codes and final keys, kept on this worker for the later passes."""
    found = _STATES.get((plan.coords, plan.start))
    if found is None:
        found = draw(plan)
        mine = (lead_rows >= plan.start) & (lead_rows < plan.stop)
        local = lead_rows[mine] - plan.start
        found.key[local] += lead_levels[mine] - LEAD_LEVELS - 1
        _STATES[(plan.coords, plan.start)] = found
    return found


def forget(coords: str) -> None:
    """Drop this worker's kept keys of one store (run on every worker when the build ends)."""
    for held in [k for k in _STATES if k[0] == coords]:
        del _STATES[held]


def unplaced(state: ShardKeys, level: int, cells: np.ndarray, floors: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """(position of each still-unplaced point's cell in ``cells``, the points) at ``level``:
    a point is unplaced when its level-``level`` cell is open and its key above the floor.
    Only the points unplaced at the level above can be (kept from the last pass here)."""
    kept = state.alive.get(level)
    known = kept is not None
    if kept is None:
        kept = state.alive.get(level - 1)
    points: np.ndarray = np.arange(state.key.size) if kept is None else kept
    prefix = state.codes[points] >> (2 * (MAX_LEVEL - level))
    if not cells.size:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if level <= DENSE_LEVELS:
        table = np.full(1 << (2 * level), -1, np.int64)
        table[cells] = np.arange(cells.size)
        at = table[prefix]
        open_ = at >= 0
    else:
        at = np.minimum(np.searchsorted(cells, prefix), cells.size - 1)
        open_ = cells[at] == prefix
    if not known:
        inside = np.flatnonzero(open_)
        inside = inside[state.key[points[inside]] > floors[at[inside]]]
        points, at = points[inside], at[inside]
        state.alive = {level: points}
    return at, points


def level_counts(plan: ShardPlan, leads: tuple[np.ndarray, np.ndarray], level: int,
                 cells: np.ndarray, floors: np.ndarray) -> np.ndarray:
    """Per open cell: unplaced points with a lead key (< 0), an inside key (< 1), the rest."""
    state = keys(plan, *leads)
    at, points = unplaced(state, level, cells, floors)
    band = np.digitize(state.key[points], [0.0, 1.0])
    out = np.zeros((cells.size, 3), np.int64)
    np.add.at(out, (at, band), 1)
    return out


def level_candidates(plan: ShardPlan, leads: tuple[np.ndarray, np.ndarray], level: int,
                     cells: np.ndarray, floors: np.ndarray, ceilings: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(cell position, key) of the unplaced points whose key is at most their cell's ceiling."""
    state = keys(plan, *leads)
    at, points = unplaced(state, level, cells, floors)
    below = state.key[points] <= ceilings[at]
    return at[below], state.key[points[below]]


def select(parts: list[tuple[np.ndarray, np.ndarray]], cells: int, budget: int) -> np.ndarray:
    """Per cell the ``budget``-th smallest candidate key, NaN where fewer came (ask again)."""
    at = np.concatenate([p[0] for p in parts])
    key = np.concatenate([p[1] for p in parts])
    by = np.lexsort((key, at))
    at, key = at[by], key[by]
    starts = np.searchsorted(at, np.arange(cells))
    counts = np.bincount(at, minlength=cells)
    out = np.full(cells, np.nan)
    enough = counts >= budget
    out[enough] = key[starts[enough] + budget - 1]
    return out
