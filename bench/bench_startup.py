"""Start-up: how soon ``projector serve`` serves the bundled sample data (goal: 0.5 s), and how
soon a fresh server shows UMAP's first frame (goal: 2 s).

    python bench/bench_startup.py [--repeats 5] [--settle 20]

Every server is a subprocess started as a user starts it. Start time runs from the process
start until the digits tensor is served, with the cache already filled by an earlier start;
the floor beside it is the interpreter importing just numpy, FastAPI and uvicorn. The first
UMAP frame is timed from the request to the job's first frame (iteration 0, the initial
layout): on a fresh server asked at once, on one asked after its warm-up had time to finish,
and, as the reference, on one started with ``--no-warm-up`` and an empty numba cache (how
every server started before the warm-up and the on-disk cache).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import serving
from harness import machine_info

DIGITS = {"run": "digits", "embedding": "digits"}
DIGITS_BYTES = 1797 * 64 * 4
UMAP = {**DIGITS, "method": "umap", "dims": 2, "params": {"n_neighbors": 15, "seed": 0}}


def time_start(cache: Path, tmp: Path) -> float:
    port = serving.free_port()
    started = time.perf_counter()
    process = serving.start(serving.projector_command(None, port, cache), tmp / "start.log")
    try:
        return serving.until(process, started, serving.served_bytes(
            f"http://127.0.0.1:{port}/api/tensor", DIGITS, DIGITS_BYTES), every=0.005)
    finally:
        serving.stop(process)


def import_floor() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import numpy, fastapi, uvicorn"], check=True)
    return time.perf_counter() - started


def first_umap_frame(cache: Path, tmp: Path, settle: float, *extra: str) -> float:
    """Seconds from the UMAP request to its first frame, on a server started just now."""
    port = serving.free_port()
    url = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    process = serving.start(serving.projector_command(None, port, cache, *extra), tmp / "umap.log")
    try:
        serving.until(process, started, lambda: httpx.get(f"{url}/api/health").status_code == 200)
        time.sleep(settle)
        asked = time.perf_counter()
        job = httpx.post(f"{url}/api/projections", json=UMAP, timeout=120).json()["job"]

        def framed() -> bool:
            status = httpx.get(f"{url}/api/jobs/{job}", timeout=60).json()
            if status["status"] == "failed":
                raise SystemExit(f"UMAP failed: {status['error']}")
            return status["iteration"] is not None

        return serving.until(process, asked, framed)
    finally:
        serving.stop(process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--settle", type=float, default=20.0,
                        help="seconds the warmed-up server is left alone before the request")
    args = parser.parse_args()
    print(f"machine: {machine_info()}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        cache = tmp / "cache"
        time_start(cache, tmp)  # fills the tensor cache
        starts = [time_start(cache, tmp) for _ in range(args.repeats)]
        floors = [import_floor() for _ in range(args.repeats)]
        before = first_umap_frame(tmp / "cold-cache", tmp, 0.0, "--no-warm-up")
        first_umap_frame(cache, tmp, args.settle)  # compiles once and fills numba's disk cache
        at_once = first_umap_frame(cache, tmp, 0.0)
        settled = first_umap_frame(cache, tmp, args.settle)

    start, floor = statistics.median(starts), statistics.median(floors)
    print(f"\nserver start to the digits tensor served, cache filled (median of {args.repeats})")
    print(f"  {'projector serve':44} {start:6.2f} s   goal 0.5 s: {0.5 / start:.2f}x of goal")
    print(f"  {'floor: python -c import numpy fastapi uvicorn':44} {floor:6.2f} s   "
          f"ours is {start / floor:.1f}x the floor")
    print("\nUMAP on digits (1797 x 64), request to first frame on a fresh server")
    print(f"  {'before: no warm-up, empty numba cache':44} {before:6.2f} s")
    print(f"  {'asked at once after start':44} {at_once:6.2f} s   {before / at_once:.1f}x faster")
    print(f"  {f'asked {args.settle:g} s after start (warmed up)':44} {settled:6.2f} s   "
          f"{before / settled:.1f}x faster   goal 2 s: {'met' if settled <= 2 else 'missed'}")


if __name__ == "__main__":
    main()
