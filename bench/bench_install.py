"""A fresh install's first minute beside a warm one: UMAP on the words sample, and idle CPU.

    python bench/bench_install.py [--idle-at 60] [--idle-for 10]

Each server is ``projector serve`` (the bundled samples) started as a user starts it, with
``--cache-dir`` its cache directory and numba's on-disk cache inside it (``NUMBA_CACHE_DIR``
unset). First on an empty cache directory, as after ``pip install``; then again on the
directory the first server filled (a warm cache, the hundredth start). Each is asked at once
(as soon as it answers) for a UMAP of the words sample (4,000 x 384), timed from the request
to the job's first frame (goal <= 2 s), to UMAP's own first layout and to the job's end;
then, ``--idle-at`` seconds after the process started, the server's CPU over ``--idle-for``
seconds (goal: under 20% of one core).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import httpx
import psutil
import serving
from harness import machine_info

WORDS_UMAP = {"run": "words", "embedding": "words", "method": "umap", "dims": 2,
              "params": {"n_neighbors": 15, "seed": 0}}
LAYOUT_PROGRESS = 0.2  # kernels/umap.py GRAPH_SHARE: the fuzzy graph and initial layout are done


def first_minute(cache: Path, log: Path, idle_at: float, idle_for: float,
                 seed: int) -> dict[str, float]:
    port = serving.free_port()
    url = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    process = serving.start(serving.projector_command(None, port, cache), log)
    try:
        serving.until(process, started, lambda: httpx.get(f"{url}/api/health").status_code == 200)
        asked = time.perf_counter()
        request = {**WORDS_UMAP, "params": {**WORDS_UMAP["params"], "seed": seed}}
        job = httpx.post(f"{url}/api/projections", json=request, timeout=120).json()["job"]
        marks: dict[str, float] = {}

        def finished() -> bool:
            status = httpx.get(f"{url}/api/jobs/{job}", timeout=60).json()
            if status["status"] == "failed":
                raise SystemExit(f"UMAP failed: {status['error']}")
            now = time.perf_counter() - asked
            done = status["status"] == "done"
            if status["iteration"] is not None or done:
                marks.setdefault("first frame", now)
            if status["progress"] >= LAYOUT_PROGRESS or done:
                marks.setdefault("UMAP layout", now)
            return done

        marks["job done"] = serving.until(process, asked, finished, every=0.02)
        time.sleep(max(0.0, started + idle_at - time.perf_counter()))
        server = psutil.Process(process.pid)
        before = server.cpu_times()
        time.sleep(idle_for)
        after = server.cpu_times()
        busy = (after.user + after.system) - (before.user + before.system)
        marks["idle CPU"] = busy / idle_for
        return marks
    finally:
        serving.stop(process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--idle-at", type=float, default=60.0)
    parser.add_argument("--idle-for", type=float, default=10.0)
    args = parser.parse_args()
    os.environ.pop("NUMBA_CACHE_DIR", None)  # numba's cache goes under --cache-dir
    print(f"machine: {machine_info()}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        # Another seed on the warm server: its result is not in the cache the first one filled.
        fresh = first_minute(tmp / "cache", tmp / "fresh.log", args.idle_at, args.idle_for, 0)
        warm = first_minute(tmp / "cache", tmp / "warm.log", args.idle_at, args.idle_for, 1)
    print("\nUMAP of words (4000 x 384) asked as soon as `projector serve` answers")
    print(f"  {'':30} {'empty cache':>12} {'warm cache':>12} {'fresh/warm':>11}")
    for what in ("first frame", "UMAP layout", "job done"):
        print(f"  {'request to ' + what:30} {fresh[what]:10.2f} s {warm[what]:10.2f} s "
              f"{fresh[what] / warm[what]:10.1f}x")
    print(f"  {f'CPU over {args.idle_for:g} s at {args.idle_at:g} s':30} "
          f"{100 * fresh['idle CPU']:10.1f} % {100 * warm['idle CPU']:10.1f} %")
    met = fresh["first frame"] <= 2 and fresh["idle CPU"] < 0.2
    print(f"\ngoals (empty cache): first frame <= 2 s, idle CPU < 20% of a core: "
          f"{'met' if met else 'missed'}")


if __name__ == "__main__":
    main()
