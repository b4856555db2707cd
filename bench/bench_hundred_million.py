"""A hundred million points on ``projector serve v.zarr --dask local:2`` (issue 25).

Writes an N x D float32 zarr (default 100M x 8, 3.2 GB; 8 Gaussian blobs) and a categorical
column (int32 codes in a zarr, 12 classes), serves it with a LocalCluster of worker processes,
and samples the server process's private memory (USS) throughout. Then, per method asked:
the projection's time (PCA's coordinates and tiles are written by the workers), the tile
index and the first tiles through the routes, a pick (``/api/jobs/ID/pick``), a click's
neighbours (``/api/neighbors``) and a search (``/api/jobs/ID/search``). The routes of the
tile contract that are not served yet are reported as such, with the stored tiles read
from disk instead. With ``--browser``, headless Chromium opens the page once the job is
done: the first picture's time, drag frame intervals and the tab's JS heap.

Reference in the same run: PCA by the single-machine kernel over the same rows read into
this process (only up to ``--reference-rows``, default 10M), and the matrix's own size.

    python bench/bench_hundred_million.py --rows 10000000 --methods pca,umap,tsne
    python bench/bench_hundred_million.py                      # 100M x 8, PCA
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from projector_core.formats.chunked_writer import write_zarr  # noqa: E402
from projector_core.formats.code_columns import columns_folder, write_code_column  # noqa: E402

CLASSES = [f"class{i}" for i in range(12)]
BLOCK = 1_000_000
PLANE = "0,1"  # the tiles the workers wrote: a PCA result's default axes are its first three


def write_data(folder: Path, rows: int, dim: int) -> Path:
    """``v.zarr`` and its categorical column ``label`` (int32 codes into CLASSES, stored
    beside it in ``v.columns``: what the workers' tiles carry), written in blocks; kept."""
    target = folder / f"v{rows}x{dim}.zarr"
    if target.exists() and (columns_folder(target) / "label").exists():
        return target
    rng = np.random.default_rng(0)
    centres = rng.normal(0, 6, (8, dim)).astype(np.float32)
    codes: list[np.ndarray] = []

    def blocks():
        for start in range(0, rows, BLOCK):
            size = min(BLOCK, rows - start)
            blob = rng.integers(0, 8, size)
            codes.append(((blob + rng.integers(0, 2, size) * 8) % len(CLASSES)).astype(np.int32))
            yield centres[blob] + rng.standard_normal((size, dim), np.float32)
    started = time.perf_counter()
    write_zarr(target, blocks())
    write_code_column(target, "label", iter(codes), CLASSES, rows)  # 4 B a row: 400 MB at 100M
    print(f"wrote {target.name} ({rows * dim * 4 / 2**30:.2f} GiB) in "
          f"{time.perf_counter() - started:.0f} s", flush=True)
    return target


class Memory:
    """The server process's private memory (USS), sampled every 100 ms on a thread."""

    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append((time.monotonic(), self.process.memory_full_info().uss))
            except psutil.Error:
                return
            time.sleep(0.1)

    def peak_since(self, since: float) -> int:
        return max((uss for t, uss in self.samples if t >= since), default=0)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(zarr_path: Path, workers: int, cache: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    log = (cache / "server.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "projector.server.cli", "serve", str(zarr_path), "--dask",
         f"local:{workers}", "--port", str(port), "--no-token", "--no-warm-up",
         "--cache-dir", str(cache), "--dask-timeout", "1800"],
        stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/api/health", timeout=5).status_code == 200:
                return process, base
        except httpx.HTTPError:
            time.sleep(0.5)
    process.terminate()
    raise SystemExit((cache / "server.log").read_text()[-3000:])


def run_job(base: str, embedding: str, method: str, params: dict,
            dims: int = 2) -> tuple[str, float, dict]:
    """(job id, seconds to done, result info) of one projection, polled (never downloaded)."""
    started = time.perf_counter()
    reply = httpx.post(f"{base}/api/projections", timeout=600, json={
        "run": ".", "embedding": embedding, "method": method, "dims": dims, "params": params})
    reply.raise_for_status()
    job = reply.json()["job"]
    while True:
        status = httpx.get(f"{base}/api/jobs/{job}", timeout=60).json()
        if status["status"] in ("done", "failed", "cancelled"):
            break
        time.sleep(0.5)
    seconds = time.perf_counter() - started
    if status["status"] != "done":
        raise SystemExit(f"{method}: {status}")
    with httpx.stream("GET", f"{base}/api/jobs/{job}/result", timeout=600,
                      headers={"Accept": "application/octet-stream"}) as result:
        info = json.loads(result.headers["X-Info"])
    return job, seconds, info


def timed_get(url: str, **params) -> tuple[int, float, httpx.Response]:
    started = time.perf_counter()
    reply = httpx.get(url, params=params, timeout=600)
    return reply.status_code, time.perf_counter() - started, reply


def queries(base: str, embedding: str, job: str, info: dict) -> dict[str, object]:
    """Tiles, a pick, a click's neighbours and a search, through the server's routes."""
    out: dict[str, object] = {}
    code, seconds, reply = timed_get(f"{base}/api/jobs/{job}/tiles", axes=PLANE)
    out["tile index"] = f"{code} in {seconds * 1000:.0f} ms"
    root_rows = None
    if code == 200:
        manifest = reply.json()
        out["tiles"] = len(manifest["tiles"])
        code, seconds, tile = timed_get(f"{base}/api/jobs/{job}/tiles/0/0/0", axes=PLANE)
        out["root tile"] = f"{code}, {tile.headers.get('X-Count')} points in {seconds * 1000:.0f} ms"
        if code == 200:
            count = int(tile.headers["X-Count"])
            root_rows = np.frombuffer(tile.content[:count * 4], "<u4")
    stored = (info.get("stored") or {}).get("tiles")
    if root_rows is None and stored:
        from projector_core.tiles.stored import ZarrTileSource

        started = time.perf_counter()
        source = ZarrTileSource(stored)
        read = source.read(0, 0, 0)
        out["root tile (read from the store)"] = (
            f"{len(read[0])} points of {source.manifest()['total']:,} in "
            f"{(time.perf_counter() - started) * 1000:.0f} ms, {len(source.manifest()['tiles'])} tiles")
        root_rows, coords = read[0], read[1]
        x, y = (float(v) for v in coords[0])
        code, seconds, reply = timed_get(f"{base}/api/jobs/{job}/pick", x=x, y=y, radius=0.1,
                                         axes=PLANE)
        out["pick"] = f"{code} in {seconds * 1000:.0f} ms: {reply.text[:80]}"
    if root_rows is not None and len(root_rows):
        row = int(root_rows[0])
        code, seconds, reply = timed_get(f"{base}/api/neighbors", run=".", embedding=embedding,
                                         index=row, k=10)
        out["neighbours of a clicked row"] = f"{code} in {seconds * 1000:.0f} ms"
    code, seconds, reply = timed_get(f"{base}/api/jobs/{job}/search", axes=PLANE, column="label",
                                     query="class3", limit=10)
    out["search"] = f"{code} in {seconds * 1000:.0f} ms: {reply.text[:80]}"
    return out


def browser(base: str, job: str) -> dict[str, object]:
    """The tile-driven page in headless Chromium: the first picture after opening, drag frame
    intervals, what the tab holds (JS heap with array buffers, the resident tiles, any array
    the size of the data set), and a click's neighbours and a search answered in the page."""
    import base64

    from playwright.sync_api import sync_playwright

    from bench.bench_frontend import (
        HIDE_OVERLAYS,
        VIEWPORT,
        frame_intervals_while_dragging,
        time_to_points,
    )

    state = json.dumps({"projection": "pca", "pca": {"is3d": False}}).encode()
    url = base + "/#s=" + base64.urlsafe_b64encode(state).decode().rstrip("=")
    app = "window.__projector.app"
    out: dict[str, object] = {}
    with sync_playwright() as play:
        chromium = play.chromium.launch(executable_path="/usr/bin/chromium",
                                        args=["--enable-precise-memory-info"])
        page = chromium.new_page(viewport=VIEWPORT)
        page.add_init_script(HIDE_OVERLAYS)
        page.route("**/api/runs", lambda route: route.fulfill(json=[]))  # the empty plot's box
        page.goto(base + "/")
        box = page.locator('[data-testid="plot"]').bounding_box()
        page.unroute("**/api/runs")
        page.goto("about:blank")
        jobs: list[str] = []
        page.on("response", lambda r: jobs.append(r.json()["job"]) if r.request.method == "POST"
                and r.url.endswith("/api/projections") and r.ok else None)
        first = time_to_points(page, url, box, 120)
        out["first picture after opening (s)"] = None if first is None else round(first, 2)
        out["the page found the job done"] = jobs[:1] == [job]
        page.wait_for_function(f"() => {app}.plot.source && {app}.plot.source.loading.size === 0 "
                               f"&& {app}.plot.detailed.complete", timeout=300000)
        out["tiles resident / points drawn"] = page.evaluate(
            f"[{app}.plot.source.resident.size, {app}.plot.drawn]")
        intervals = sorted(frame_intervals_while_dragging(page, box))
        if intervals:
            p95 = intervals[min(len(intervals) - 1, int(len(intervals) * 0.95))]
            out["drag frame median / p95 / max (ms)"] = (
                f"{statistics.median(intervals):.0f} / {p95:.0f} / {intervals[-1]:.0f}")
        page.wait_for_function(f"() => {app}.plot.source.loading.size === 0", timeout=300000)
        held = page.evaluate(f"""() => {{ const a = {app}; const p = a.plot; return {{
            points: p.source.residentPoints, bytes: p.source.residentBytes,
            n: a.dataset.n, colors: a.highlight.coloring?.colors?.length ?? 0,
            whole: Math.max(p.points.colors?.length ?? 0, p.flags?.length ?? 0, p.n),
            columns: (a.dataset.metadata?.columns ?? []).filter(Boolean).length,
            heap: performance.memory.usedJSHeapSize }}; }}""")
        out["resident tile points / their bytes (MB)"] = (
            f"{held['points']:,} / {held['bytes'] / 2**20:.1f}")
        out["largest per-point array (entries; N)"] = (
            f"{max(held['colors'], held['whole']):,} ({held['n']:,}); metadata columns "
            f"held whole: {held['columns']}")
        # The JS heap with the typed arrays' backing stores (the tiles), which
        # performance.memory's used heap leaves out.
        heap = page.context.new_cdp_session(page).send("Runtime.getHeapUsage")
        out["JS heap (performance.memory) / + array buffers (CDP) (MB)"] = (
            f"{held['heap'] / 2**20:.1f} / "
            f"{(heap['usedSize'] + heap.get('backingStorageSize', 0)) / 2**20:.1f}")
        row = page.evaluate(f"[...{app}.plot.source.resident.values()][0].rows[0]")
        started = time.perf_counter()
        page.evaluate(f"(row) => {app}.highlight.selectPoint(row)", row)
        page.wait_for_function(f"{app}.highlight.neighbors.length > 0", timeout=300000)
        out["click: neighbours in the page (s)"] = (
            f"{time.perf_counter() - started:.2f} ({page.evaluate(f'{app}.highlight.neighbors.length')})")
        column = page.evaluate(f"{app}.dataset.columns[0] ?? null")
        if column is None:
            out["search in the page"] = "no metadata column served for this data set"
        else:
            started = time.perf_counter()
            page.evaluate(f"""(column) => {app}.update({{ search: {{ ...{app}.state.search,
                column, query: 'class3', regex: false }} }})""", column)
            page.wait_for_function(f"{app}.highlight.selectedCount() > 1", timeout=300000)
            out["search in the page (s)"] = (f"{time.perf_counter() - started:.2f} "
                                             f"({page.evaluate(f'{app}.highlight.selectedCount()'):,} found)")
        chromium.close()
    return out


def reference_pca(zarr_path: Path, rows: int) -> float | None:
    """Seconds of the single-machine PCA over the same rows in memory (the reference)."""
    from projector_core.formats.chunked import open_chunked
    from projector_core.kernels.pca import pca

    vectors = open_chunked(zarr_path, zarr_path.name)
    if vectors.shape[0] > rows:
        return None
    data = np.asarray(vectors)
    started = time.perf_counter()
    pca(data, 10)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--dim", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--methods", default="pca", help="comma-separated: pca,umap,tsne")
    parser.add_argument("--work", type=Path, default=Path("/tmp/projector_hundred_million"))
    parser.add_argument("--browser", action="store_true", help="the page checks (Chromium)")
    parser.add_argument("--reference-rows", type=int, default=10_000_000)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    zarr_path = write_data(args.work, args.rows, args.dim)
    matrix = args.rows * args.dim * 4
    cache = args.work / f"cache-{int(time.time())}"
    cache.mkdir()
    process, base = start_server(zarr_path, args.workers, cache)
    memory = Memory(process.pid)
    embedding = httpx.get(f"{base}/api/runs", timeout=60).json()[0]["embeddings"][0]["name"]
    rows: list[tuple[str, object]] = [("matrix", f"{args.rows:,} x {args.dim} float32, "
                                                 f"{matrix / 2**30:.2f} GiB")]
    began = time.monotonic()
    total = 0.0
    shown = 0
    try:
        for method in args.methods.split(","):
            since = time.monotonic()
            params = {} if method == "pca" else {"seed": 0}
            dims = 2
            if args.browser and method == "pca":  # the page's own request: it finds the job done
                params, dims = {"spherize": False}, 3
            job, seconds, info = run_job(base, embedding, method, params, dims)
            rows.append((f"{method}: done (s)", round(seconds, 1)))
            total += seconds
            if "sample_rows" in info:
                rows.append((f"{method}:   fitted on / placed by", f"{info['sample_rows']:,} "
                             f"sampled rows / {info['shards']} shards on the workers"))
            if "tiles_seconds" in info:
                rows.append((f"{method}:   of which tiles built by the workers (s)",
                             info["tiles_seconds"]))
                rows.append((f"{method}:   tiles carry columns", info.get("tile_columns")))
            rows.append((f"{method}: server private peak (MB)",
                         round(memory.peak_since(since) / 2**20)))
            for name, value in queries(base, embedding, job, info).items():
                rows.append((f"{method}: {name}", value))
            print("\n".join(f"{name}: {value}" for name, value in rows[shown:]), flush=True)
            shown = len(rows)  # each method's rows as it ends: a long run shows them early
            if args.browser and method == "pca":
                for name, value in browser(base, job).items():
                    rows.append((f"page: {name}", value))
        rows.append((f"total: {args.methods} done (s)", round(total, 1)))
        rows.append(("server private peak, whole run (MB)", round(memory.peak_since(began) / 2**20)))
        rows.append(("  as a share of the matrix", f"{memory.peak_since(began) / matrix:.3f}x"))
    finally:
        memory.stop()
        process.terminate()
        process.wait(timeout=300)
    if "pca" in args.methods:
        single = reference_pca(zarr_path, args.reference_rows)
        rows.append(("reference: single-machine PCA in memory (s)",
                     "not run (above --reference-rows)" if single is None else round(single, 1)))
    print(f"\n| {args.rows:,} x {args.dim} on local:{args.workers} | |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
