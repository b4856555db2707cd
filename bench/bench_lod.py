"""The level-of-detail order (projector_core.tiles.order) on 2D projections of 1M and 10M points.

Reference, same process, same data: one numpy argsort of N float64, the least any
sort-based order costs; the order needs two sorts and a few passes, so about 2-4x of it.
Also the peak memory the order adds (goal: a few hundred MB at 10M).

    python bench/bench_lod.py [--sizes 1000000 10000000]
"""

from __future__ import annotations

import argparse
import sys
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import machine_info, timed_together

from projector_core.tiles.order import lod_order


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"# {machine_info()}")
    print("| points | lod_order (s) | one argsort (s) | lod / argsort | peak extra memory (MB) |")
    print("|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(0)
    for n in args.sizes:
        coords = (rng.normal(0, 4, (20, 2))[rng.integers(0, 20, n)]
                  + rng.normal(0, 1, (n, 2))).astype(np.float32)
        keys = rng.random(n)
        times = timed_together({"lod": lambda c=coords: lod_order(c),
                                "argsort": lambda k=keys: np.argsort(k)}, args.repeats)
        tracemalloc.start()
        lod_order(coords)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        print(f"| {n:,} | {times['lod']:.2f} | {times['argsort']:.2f} | "
              f"{times['lod'] / times['argsort']:.1f}x | {peak:.0f} |", flush=True)


if __name__ == "__main__":
    main()
