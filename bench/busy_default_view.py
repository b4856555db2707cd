"""A request on a server busy preparing a large default view, against the same request on an
idle one (issue 38: requests before guesses). What ``bench_busy_server.py`` and the speed gate
(``speed_gate.py``) measure.

The LOGDIR holds one run of three embeddings (float32 clusters in ``dim`` dimensions, .npy):
``big`` (first: its default view, a PCA and its level-of-detail order, is prepared at start),
``mid`` (a requested PCA) and ``small`` (a requested UMAP). Every server is started as a user
starts it, on the same tensor and numba caches (filled once beforehand, and the tensors read
into the page cache, so neither server reads the disk or compiles) with its projection results
removed (nothing is answered from disk). *Busy*: the request is sent as soon as the server
lists the default view's PCA as running. *Idle*: the request is sent once the default view is
done and prepared and the server's process has used no CPU for a while (the warm-up done).
The figure is busy / idle seconds, from the request to the job done, same run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import serving

from projector_core.data.catalog import Catalog

CLUSTERS = 40
REQUESTS = {
    "pca": {"run": "busy", "embedding": "mid", "method": "pca", "dims": 3},
    "umap": {"run": "busy", "embedding": "small", "method": "umap", "dims": 2,
             "params": {"seed": 0}},
}


def write_clusters(path: Path, rows: int, dim: int, seed: int) -> None:
    """float32 clusters, written in blocks into a .npy (a 1M x 768 tensor is 3 GB)."""
    if path.is_file():
        return
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(CLUSTERS, dim)).astype(np.float32)
    partial = path.with_suffix(".part.npy")
    out = np.lib.format.open_memmap(partial, "w+", np.float32, (rows, dim))
    for start in range(0, rows, 65_536):
        stop = min(rows, start + 65_536)
        out[start:stop] = centers[rng.integers(0, CLUSTERS, stop - start)] + rng.normal(
            scale=0.6, size=(stop - start, dim)).astype(np.float32)
    out.flush()
    del out
    partial.rename(path)


def make_logdir(root: Path, big: int, mid: int, small: int, dim: int) -> Path:
    """The LOGDIR (kept under ``root`` for later runs), its tensors cached under root/cache."""
    logdir = root / f"logdir-{big}-{mid}-{small}-{dim}" / "busy"
    logdir.mkdir(parents=True, exist_ok=True)
    entries = []
    for seed, (name, rows) in enumerate((("big", big), ("mid", mid), ("small", small))):
        write_clusters(logdir / f"{name}.npy", rows, dim, seed)
        entries.append(f'embeddings {{\n  tensor_name: "{name}"\n  tensor_path: "{name}.npy"\n}}\n')
    (logdir / "projector_config.pbtxt").write_text("".join(entries))
    return logdir.parent


def prime(logdir: Path, cache: Path) -> None:
    """Fill the tensor cache and numba's (as a first start would), drop the source files from
    the page cache and read the cached tensors into it: both servers then start alike."""
    catalog = Catalog(logdir, cache_dir=cache)
    catalog.refresh()
    catalog.wait_loaded()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache / "numba")}
    subprocess.run([sys.executable, "-m", "projector_core.projection.warmup"], env=env,
                   check=True, cwd=serving.REPO)
    for source in logdir.rglob("*.npy"):
        with source.open("rb") as handle:
            os.posix_fadvise(handle.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    for cached in cache.rglob("*.npy"):
        with cached.open("rb") as handle:
            while handle.read(64 * 2**20):
                pass


def _default_view(http: httpx.Client) -> dict | None:
    jobs = http.get("/api/jobs").json()["jobs"]
    return next((j for j in jobs if j["embedding"] == "big" and j["method"] == "pca"), None)


def _until(process: subprocess.Popen, condition, timeout: float = 1800, every: float = 0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with code {process.returncode}")
        found = condition()
        if found:
            return found
        time.sleep(every)
    raise SystemExit("condition not reached")


def _idle(process: subprocess.Popen, http: httpx.Client) -> None:
    """The default view done and prepared, then the process quiet for a second."""
    view = _until(process, lambda: (v := _default_view(http)) and v["status"] == "done" and v)
    http.get(f"/api/jobs/{view['id']}/lod", params={"axes": "0,1,2"}).raise_for_status()
    serving.wait_quiet(process)


def timed_request(logdir: Path, cache: Path, log: Path, method: str, busy: bool) -> float:
    """Seconds from the request to its job done, on a fresh server, busy or idle."""
    shutil.rmtree(cache / "projections", ignore_errors=True)  # nothing answered from disk
    port = serving.free_port()
    process = serving.start(serving.projector_command(logdir, port, cache), log)
    try:
        base = f"http://127.0.0.1:{port}"
        serving.until(process, time.perf_counter(),
                      lambda: httpx.get(f"{base}/api/health").is_success)
        with httpx.Client(base_url=base, timeout=600) as http:
            if busy:
                _until(process, lambda: (v := _default_view(http)) and v["status"] == "running")
            else:
                _idle(process, http)
            asked = time.perf_counter()
            job = http.post("/api/projections", json=REQUESTS[method]).json()["job"]

            def done() -> bool:
                state = http.get(f"/api/jobs/{job}").json()
                if state["status"] in ("failed", "cancelled"):
                    raise SystemExit(f"{method} {state['status']}: {state['error']}")
                return state["status"] == "done"

            _until(process, done, every=0.01)
            took = time.perf_counter() - asked
            if busy:  # the guess was held, not abandoned: it still finishes
                view = _default_view(http)
                assert view is not None and view["status"] in ("running", "done"), view
            return took
    finally:
        serving.stop(process)


def busy_over_idle(root: Path, big: int, mid: int, small: int, dim: int,
                   methods: tuple[str, ...] = ("pca", "umap"), repeats: int = 1
                   ) -> dict[str, tuple[float, float]]:
    """Per method: (idle seconds, busy seconds), medians over ``repeats`` alternating pairs."""
    logdir = make_logdir(root, big, mid, small, dim)
    cache = root / f"cache-{big}-{mid}-{small}-{dim}"
    prime(logdir, cache)
    times: dict[str, tuple[float, float]] = {}
    for method in methods:
        idle, busy = [], []
        for _ in range(repeats):
            idle.append(timed_request(logdir, cache, root / "server.log", method, busy=False))
            busy.append(timed_request(logdir, cache, root / "server.log", method, busy=True))
        times[method] = (float(np.median(idle)), float(np.median(busy)))
    return times
