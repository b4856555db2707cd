"""Pick, region selection over tiles and search over a column (``tiles/queries.py``)
equal a brute force over every point; pick and selection read only the tiles whose cells
meet the question's part of the plane (counted through the TileSource, the one interface
they read), search only the column's blocks until its rows are listed."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from projector_core.data.model import Embedding
from projector_core.formats.metadata import Metadata
from projector_core.jobs.engine import JobManager
from projector_core.jobs.job import Job
from projector_core.kernels.search import search
from projector_core.projection.compute import ProjectionResult
from projector_core.tiles.queries import Region, pick, search_column, select
from projector_core.tiles.source import MemoryTiles, Tile, TileSource
from projector_core.tiles.store import LodStore

N = 200_000
BUDGET = 512  # small tiles: six levels over 200k points


def clustered(n: int, seed: int = 0) -> np.ndarray:
    """Dense blobs of different spreads, a sparse halo and empty space between."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0, 0], [10, 2], [3, 12], [-8, -6]], float)
    spreads = np.array([0.3, 1.5, 0.05, 3.0])
    blob = rng.choice(4, n, p=[0.4, 0.3, 0.2, 0.1])
    coords = centres[blob] + rng.normal(0, 1, (n, 2)) * spreads[blob, None]
    coords[rng.choice(n, 50, replace=False)] = np.nan  # points without coordinates
    return coords.astype(np.float32)


class CountingTiles:
    """A TileSource that counts the tiles read from the one it wraps."""

    def __init__(self, source: TileSource) -> None:
        self.source = source
        self.reads: list[tuple[int, int, int]] = []

    def manifest(self) -> dict:
        return self.source.manifest()

    def read(self, z: int, x: int, y: int, column: str | None = None) -> Tile | None:
        self.reads.append((z, x, y))
        return self.source.read(z, x, y, column)

    def codes_dictionary(self, column: str) -> list[str]:
        return self.source.codes_dictionary(column)


@pytest.fixture(scope="module")
def done_job() -> Iterator[Job]:
    jobs = JobManager()
    coords = clustered(N)
    job = jobs.submit(lambda ctx: ProjectionResult(coords, {"method": "pca"}))
    assert job.wait(60)
    kinds = [f"kind {i * 5 % 11}" for i in range(N)]
    job.source = Embedding.of("run", "points", "f", vectors=coords,
                              metadata=Metadata.from_columns({"kind": kinds}))
    yield job
    jobs.shutdown()


@pytest.fixture(scope="module")
def source(done_job: Job) -> MemoryTiles:
    return MemoryTiles(LodStore(budget=BUDGET), done_job, [0, 1])


def cells(manifest: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each tile's key and its cell's low and high corner (no margin)."""
    table = np.asarray(manifest["tiles"])
    lo, hi = np.array(manifest["box"]["lo"]), np.array(manifest["box"]["hi"])
    width = (hi - lo) / (1 << table[:, :1])
    low = lo + table[:, 1:3] * width
    return table[:, :3], low, low + width


def brute_pick(coords: np.ndarray, x: float, y: float, radius: float) -> int | None:
    d2 = ((coords.astype(np.float64) - [x, y]) ** 2).sum(axis=1)
    inside = np.flatnonzero(d2 <= radius * radius)
    if not inside.size:
        return None
    return int(inside[np.lexsort((inside, d2[inside]))[0]])


def test_tiles_are_many_levels_deep(source: MemoryTiles):
    manifest = source.manifest()
    assert manifest["total"] == N and manifest["budget"] == BUDGET
    assert max(z for z, *_ in manifest["tiles"]) >= 5


def test_pick_is_the_nearest_point_of_all_and_reads_only_tiles_near_it(source: MemoryTiles):
    coords = source.coordinates
    rng = np.random.default_rng(1)
    keys, low, high = cells(source.manifest())
    probes = [(*coords[rng.integers(N)].tolist(), 0.05) for _ in range(15)]  # on a point
    probes += [(*rng.uniform(-12, 14, 2).tolist(), r) for r in (0.01, 0.3, 2.0) for _ in range(5)]
    probes += [(40.0, 40.0, 1.0), (3.0, 12.0, 0.0)]  # far from every point; a zero radius
    for x, y, radius in probes:
        counting = CountingTiles(source)
        found = pick(counting, x, y, radius)
        expected = brute_pick(coords, x, y, radius)
        assert found.row == expected, (x, y, radius)
        if expected is not None:
            assert found.coords == coords[expected].tolist()
            assert found.distance == pytest.approx(float(np.hypot(*(coords[expected] - [x, y]))))
        # Only tiles whose cell (up to the rounding margin) meets the disc are read.
        gap = np.maximum(np.maximum(low - [x, y], 0), [x, y] - high)
        near = {tuple(k) for k in keys[np.hypot(*gap.T) <= radius + 1e-3].tolist()}
        assert set(counting.reads) <= near
        assert len(counting.reads) < len(keys) // 4


def inside_polygon(points: np.ndarray, polygon: list[list[float]]) -> np.ndarray:
    """Brute force: a point is inside when a ray to +x crosses the edges an odd number of
    times (edges taken half-open in y, so a vertex on the ray counts once)."""
    x, y = points[:, 0].astype(np.float64)[:, None], points[:, 1].astype(np.float64)[:, None]
    a = np.asarray(polygon, np.float64)
    b = np.roll(a, 1, axis=0)
    spans = (np.minimum(a[:, 1], b[:, 1]) <= y) & (y < np.maximum(a[:, 1], b[:, 1]))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (y - a[:, 1]) / (b[:, 1] - a[:, 1])
        crossing_x = a[:, 0] + t * (b[:, 0] - a[:, 0])
    return ((spans & (x < crossing_x)).sum(axis=1) % 2 == 1)


STAR = [[10 + r * np.cos(t), 2 + r * np.sin(t)]
        for t, r in zip(np.linspace(0, 2 * np.pi, 24, endpoint=False), [3.0, 0.8] * 12,
                        strict=True)]


@pytest.mark.parametrize(("box", "polygon", "limit"), [
    ([-1, -1, 1, 1], None, 10_000),  # the dense blob: truncated
    ([12.0, 4.0, 9.0, 0.5], None, 1_000_000),  # corners in any order
    ([30, 30, 40, 40], None, 10),  # nothing there
    (None, STAR, 500),  # concave
    (None, [[-20, -20], [20, -20], [20, 20], [-20, 20]], 0),  # everything, no rows listed
])
def test_select_counts_and_lists_the_points_inside(source: MemoryTiles, box, polygon, limit):
    coords = source.coordinates
    if box is not None:
        (x0, x1), (y0, y1) = sorted(box[::2]), sorted(box[1::2])
        inside = ((coords[:, 0] >= x0) & (coords[:, 0] <= x1) & (coords[:, 1] >= y0)
                  & (coords[:, 1] <= y1))
        region = Region.box(box)
    else:
        inside = inside_polygon(coords, polygon)
        region = Region.of_polygon(polygon)
    counting = CountingTiles(source)
    found = select(counting, region, limit)
    rows = np.flatnonzero(inside)
    assert found.count == rows.size
    assert found.rows == rows[:limit].tolist()
    assert found.truncated == (rows.size > limit)
    keys, low, high = cells(source.manifest())
    lo, hi = region.lo, region.hi
    meets = ((low <= hi + 1e-3) & (high >= lo - 1e-3)).all(axis=1)
    assert set(counting.reads) <= {tuple(k) for k in keys[meets].tolist()}
    if box is not None and box[0] == -1:
        assert len(counting.reads) < len(keys) // 2  # a small region reads a few tiles


def test_bad_regions_are_refused():
    with pytest.raises(ValueError, match="3 to 10,000 vertices"):
        Region.of_polygon([[0, 0], [1, 1]])
    with pytest.raises(ValueError, match="finite"):
        Region.of_polygon([[0, 0], [1, np.nan], [2, 0]])
    with pytest.raises(ValueError, match="four finite numbers"):
        Region.box([0, 0, 1])


def test_search_counts_by_value_and_reads_blocks_only_until_its_rows_are_listed(done_job: Job):
    kinds = [f"kind {i * 5 % 11}" for i in range(N)]
    dictionary, counts = done_job.source.column_counts("kind")
    codes = np.asarray(done_job.source.categorical("kind")[1])
    read: list[int] = []

    def blocks(size: int = 1000) -> Iterator[np.ndarray]:
        for start in range(0, N, size):
            read.append(start)
            yield codes[start:start + size]

    found = search_column(dictionary, counts, blocks(), "KIND 1", limit=100)  # kind 1, kind 10
    rows = search(kinds, "KIND 1")
    assert (found.count, found.rows, found.truncated) == (len(rows), rows[:100], True)
    assert sorted(found.codes or []) == sorted(dictionary.index(k) for k in ("kind 1", "kind 10"))
    assert read == [0]  # 100 rows are in the first block: no other is read
    read.clear()
    everything = search_column(dictionary, counts, blocks(), "kind", limit=N)
    assert everything.rows == list(range(N)) and not everything.truncated
    assert len(read) == N // 1000
    read.clear()
    assert search_column(dictionary, counts, blocks(), "nothing like it").count == 0
    assert read == []  # no value matches: nothing is read


def test_select_counts_a_column_inside_the_region(source: MemoryTiles):
    kinds = np.array([f"kind {i * 5 % 11}" for i in range(N)])
    coords = source.coordinates
    inside = (np.abs(coords[:, 0] - 10) <= 1) & (np.abs(coords[:, 1] - 2) <= 1)
    found = select(source, Region.box([9, 1, 11, 3]), 10, column="kind")
    values, tally = np.unique(kinds[inside], return_counts=True)
    assert {value: count for value, _, count in found.counts or []} == dict(
        zip(values.tolist(), tally.tolist(), strict=True))
    dictionary = source.codes_dictionary("kind")
    assert all(dictionary[code] == value for value, code, _ in found.counts or [])
