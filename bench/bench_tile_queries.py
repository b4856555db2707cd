"""Pick and box selection answered over tiles, search over the column (tiles/queries.py),
on 2D projections of 1M points in the server's tiles (65,536 points each).

Reference, same process, same data: the brute force over the whole coordinate array (and
the whole code column) that a server holding every point in memory would run; the tile
queries read only the tiles they need, so a zarr-backed server answers them without any
N-sized array. Printed: median seconds of each, their ratio, and the share of tiles read.

    python bench/bench_tile_queries.py [--sizes 1000000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import machine_info, timed_together

from projector_core.data.model import Embedding
from projector_core.formats.metadata import Metadata
from projector_core.jobs.engine import JobManager
from projector_core.projection.compute import ProjectionResult
from projector_core.tiles.queries import Region, pick, search_column, select
from projector_core.tiles.source import MemoryTiles
from projector_core.tiles.store import LodStore


class Counted:
    """Counts the tiles a question reads."""

    def __init__(self, source: MemoryTiles) -> None:
        self.source, self.reads = source, 0

    def manifest(self) -> dict:
        return self.source.manifest()

    def read(self, z: int, x: int, y: int, column: str | None = None):
        self.reads += 1
        return self.source.read(z, x, y, column)

    def codes_dictionary(self, column: str) -> list[str]:
        return self.source.codes_dictionary(column)


def measure(n: int, jobs: JobManager, repeats: int) -> None:
    """One size: blobs of points, a 30-value column, three questions."""
    rng = np.random.default_rng(0)
    coords = (rng.normal(0, 4, (20, 2))[rng.integers(0, 20, n)]
              + rng.normal(0, 1, (n, 2))).astype(np.float32)
    groups = rng.integers(0, 30, n)
    job = jobs.submit(lambda ctx: ProjectionResult(coords, {"method": "pca"}))
    job.wait()
    job.source = Embedding.of("run", "points", "f", vectors=coords, metadata=Metadata(
        names=["group"], arrays={}, has_header=True, raw=b"",
        _codes={"group": ([f"g{i}" for i in range(30)], groups.astype(np.int32))}))
    source = MemoryTiles(LodStore(), job, [0, 1])
    total = len(source.manifest()["tiles"])
    x, y = (float(v) for v in coords[n // 2])
    box = [x - 0.5, y - 0.5, x + 0.5, y + 0.5]

    def brute_pick() -> int:
        d2 = (coords[:, 0] - x) ** 2 + (coords[:, 1] - y) ** 2
        return int(np.argmin(np.where(d2 <= 0.01, d2, np.inf)))

    def brute_box() -> np.ndarray:
        inside = ((coords[:, 0] >= box[0]) & (coords[:, 0] <= box[2])
                  & (coords[:, 1] >= box[1]) & (coords[:, 1] <= box[3]))
        return np.flatnonzero(inside)[:10_000]

    def brute_search() -> np.ndarray:
        return np.flatnonzero(np.isin(groups, [3, 13, 23]))[:10_000]

    questions = {
        "pick (r = 0.1)": (lambda s: pick(s, x, y, 0.1), brute_pick),
        "box 1 x 1": (lambda s: select(s, Region.box(box), 10_000), brute_box),
        "search 3 of 30 values": (lambda s: search_column(
            *job.source.column_counts("group"), job.source.code_blocks("group"), "3"),
            brute_search),
    }
    for name, (over_tiles, brute) in questions.items():
        counted = Counted(source)
        over_tiles(counted)
        times = timed_together({"tiles": lambda q=over_tiles: q(source), "brute": brute},
                               repeats)
        print(f"| {n:,} | {name} | {times['tiles']:.4f} | {times['brute']:.4f} | "
              f"{times['tiles'] / times['brute']:.2f} | {counted.reads} of {total} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"# {machine_info()}")
    print("| points | question | tiles (s) | brute force (s) | tiles / brute | tiles read |")
    print("|---:|---|---:|---:|---:|---:|")
    jobs = JobManager()
    try:
        for n in args.sizes:
            measure(n, jobs, args.repeats)
    finally:
        jobs.shutdown()


if __name__ == "__main__":
    main()
