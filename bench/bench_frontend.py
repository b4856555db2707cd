"""The browser front end at scale: time to the first drawn frame and frame time while orbiting.

Headless Chromium (Debian's, software WebGL through SwiftShader: no GPU) opens the app on
random embeddings of 10k, 100k and 1M points, 32 dims, with a 10-class label column, the
first time (the server computes PCA) and again (PCA cached). It then drags the mouse across
the 3D plot and reads the browser's frame intervals meanwhile.

Reference, same run, same points: TensorBoard's projector (the `tensorboard` package) on
the same vectors written as TensorBoard reads them (TSV through `add_embedding`). Both first
frames are measured the same way: screenshots of the plot area every few milliseconds until
it shows points. TensorBoard computes PCA in the browser and stops at 100,000 points,
so at 1M it shows 100k.

Scale cases (`--scale-sizes`, 1M and 10M): precomputed 2D coordinates (a tensor of 2 dims,
shown as it is) and one categorical column, so the front end alone is measured: time from
navigation to the first frame, frame times while the mouse pans, and the time until the
still view shows every point (level of detail: a budget of points a moving frame, the
full frame built when still: on the CPU for large 2D plots), then the same zoomed in 16x
(frames spend their budget on the points on screen). The first picture of a large set is
the head of its level-of-detail order (GET /api/jobs/ID/lod/points), drawn before the whole
result arrives. The reference beside them is the same browser drawing every point each
frame (budget = N), measured in the same page. Times in the page (performance.now) beside
the screenshot times: on a loaded machine each screenshot round trip costs seconds.

    python bench/bench_frontend.py [--sizes 10000 100000 1000000] [--no-tensorboard]
    python bench/bench_frontend.py --sizes --scale-sizes 1000000 10000000
    python bench/bench_frontend.py --sizes --user-sizes 1000000 10000000

User cases (`--user-sizes`, bench/frontend_user.py): the same 2D data from the user's seat:
`projector serve` on a fresh cache, the page's default view, first and second visit timed by
screenshots (the page's own first-frame figure beside them), the longest main-thread task after
the first picture, drag frames, the tab's JS heap; then, as the reference in the same run, the
two display paths (tiles alone above 2M points, the whole projection below) from a fresh
browser profile each on the same warm server.
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import io
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import uvicorn
from PIL import Image
from playwright.sync_api import Page, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from projector.server.app import create_app

from bench.frontend_scale import PAN_FRAMES, ZOOM_IN, print_scale_table, still_detail, write_scale_logdir
from bench.frontend_user import measure_user, print_requests, print_user_table
from projector_core.formats.writer import add_embedding

CHROMIUM = os.environ.get("PROJECTOR_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
DIM = 32
VIEWPORT = {"width": 1280, "height": 800}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def clustered(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    """Ten Gaussian clusters: a picture with structure, labels 0-9."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    centres = rng.normal(0, 4, (10, d)).astype(np.float32)
    return centres[labels] + rng.normal(0, 1, (n, d)).astype(np.float32), [str(v) for v in labels]


def write_binary_logdir(folder: Path, vectors: np.ndarray, labels: list[str]) -> None:
    """Our fast path: raw float32 `.bytes` named by a config, plus a metadata TSV."""
    folder.mkdir(parents=True)
    (folder / "tensors.bytes").write_bytes(vectors.astype("<f4").tobytes())
    rows = "".join(f"{v}\tp{i}\n" for i, v in enumerate(labels))
    (folder / "metadata.tsv").write_text("label\tid\n" + rows)
    n, d = vectors.shape
    (folder / "projector_config.pbtxt").write_text(
        f'embeddings {{\n  tensor_name: "bench"\n  tensor_path: "tensors.bytes"\n'
        f"  tensor_shape: {n}\n  tensor_shape: {d}\n  metadata_path: \"metadata.tsv\"\n}}\n")


class Server:
    """Our app under uvicorn in a thread."""

    def __init__(self, logdir: Path, cache: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        app = create_app(logdir, cache_dir=cache, refresh_seconds=0)
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


# TensorBoard draws its plot in a frame of its own: its plot area, in the same 1280 x 800 page.
TENSORBOARD_PLOT = {"x": 380, "y": 135, "width": 530, "height": 640}
# Our plot's overlays (toolbar, progress card) are hidden so that only points count.
HIDE_OVERLAYS = """document.addEventListener('DOMContentLoaded', () => {
  const style = document.createElement('style');
  style.textContent = '.plot-toolbar, .plot-progress, .plot-message { visibility: hidden !important; }';
  document.head.append(style);
});"""
DRAWN_PIXELS = 1500


def drawn(png: bytes) -> int:
    image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    background = np.median(image.reshape(-1, 3), axis=0)
    return int((np.abs(image - background).sum(axis=2) > 60).sum())


def time_to_points(page: Page, url: str, region: dict, timeout: float) -> float | None:
    """Seconds from navigation until the plot region shows points (screenshot polling)."""
    start = time.perf_counter()
    page.goto(url)
    while time.perf_counter() - start < timeout:
        if drawn(page.screenshot(clip=region)) > DRAWN_PIXELS:
            return time.perf_counter() - start
        time.sleep(0.05)
    return None


def frame_intervals_while_dragging(page: Page, box: dict, moves: int = 60) -> list[float]:
    """The browser's frame intervals (ms) while the mouse orbits the camera."""
    page.evaluate("""() => { window.__benchFrames = []; let last = performance.now();
        const tick = (now) => { window.__benchFrames.push(now - last); last = now;
          if (window.__benchFrames.length < 100000) window.__benchRaf = requestAnimationFrame(tick); };
        window.__benchRaf = requestAnimationFrame(tick); }""")
    x, y = box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.5
    page.mouse.move(x, y)
    page.mouse.down()
    for i in range(moves):
        page.mouse.move(x + (i % 30) * 8, y + (i % 7) * 3)
    page.mouse.up()
    return page.evaluate(
        "() => { cancelAnimationFrame(window.__benchRaf); return window.__benchFrames.slice(1); }")


def summary(intervals: list[float]) -> str:
    if not intervals:
        return "–"
    ordered = sorted(intervals)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"{statistics.median(ordered):.0f} / {p95:.0f}"


def measure_ours(page: Page, logdir: Path, cache: Path) -> dict[str, object]:
    server = Server(logdir, cache)
    page.add_init_script(HIDE_OVERLAYS)
    try:
        state = json.dumps({"projection": "pca", "pca": {"is3d": True}}).encode()
        hash_ = "#s=" + base64.urlsafe_b64encode(state).decode().rstrip("=")
        out: dict[str, object] = {}
        # Where the plot is, from a page that lists no runs (so nothing is computed yet).
        page.route("**/api/runs", lambda route: route.fulfill(json=[]))
        page.goto(server.url + "/")
        plot = page.locator('[data-testid="plot"]').bounding_box()
        page.unroute("**/api/runs")
        for label in ("cold", "warm"):
            page.goto("about:blank")
            seconds = time_to_points(page, server.url + "/" + hash_, plot, 600)
            page.wait_for_function("window.__projector && window.__projector.firstFrameMs !== null",
                                   timeout=600000)
            out[label] = seconds
            out[f"{label}_hook"] = page.evaluate("window.__projector.firstFrameMs") / 1000
        page.wait_for_function("window.__projector.ready", timeout=600000)
        out["drag"] = frame_intervals_while_dragging(page, plot)
        out["orbit"] = page.evaluate("window.__projector.orbit(30)")
        return out
    finally:
        server.stop()


def measure_tensorboard(page: Page, logdir: Path, timeout: float) -> dict[str, object]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--port", str(port),
         "--host", "127.0.0.1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # TensorBoard finds runs in a background scan and its page does not ask again:
        # wait until the projector lists the embedding, as a user would by reloading.
        base = f"http://127.0.0.1:{port}"
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                info = httpx.get(f"{base}/data/plugin/projector/info", params={"run": "."}, timeout=5)
                if info.status_code == 200 and info.json().get("embeddings"):
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        url = f"{base}/#projector"
        out: dict[str, object] = {}
        for label in ("cold", "warm"):
            page.goto("about:blank")
            out[label] = time_to_points(page, url, TENSORBOARD_PLOT, timeout)
        out["drag"] = frame_intervals_while_dragging(page, TENSORBOARD_PLOT) if out["warm"] else []
        return out
    finally:
        process.terminate()
        process.wait(timeout=20)


def ratio(ours: float | None, reference: float | None) -> str:
    if not ours or not reference:
        return "–"
    return f"{reference / ours:.1f}x"


def fmt(seconds: float | None) -> str:
    return "timeout" if seconds is None else f"{seconds:.2f}"


def measure_scale(browser, logdir: Path, cache: Path, n: int) -> dict[str, object]:
    """One scale case: ours with level of detail, then every point every frame (reference)."""
    server = Server(logdir, cache)
    out: dict[str, object] = {}
    try:
        state = json.dumps({"projection": "pca", "pca": {"is3d": False}}).encode()
        url = server.url + "/#s=" + base64.urlsafe_b64encode(state).decode().rstrip("=")
        page = browser.new_page(viewport=VIEWPORT)
        page.add_init_script(HIDE_OVERLAYS)
        page.route("**/api/runs", lambda route: route.fulfill(json=[]))
        page.goto(server.url + "/")
        plot = page.locator('[data-testid="plot"]').bounding_box()
        page.unroute("**/api/runs")
        for label in ("cold", "warm"):
            page.goto("about:blank")
            out[label] = time_to_points(page, url, plot, 600)
            page.wait_for_function("window.__projector && window.__projector.firstFrameMs !== null",
                                   timeout=600000)
            out[f"{label}_hook"] = page.evaluate("window.__projector.firstFrameMs") / 1000
        page.wait_for_function("window.__projector.ready && window.__projector.app.plot.order"
                               " && window.__projector.app.dataset.metadata", timeout=600000)
        out["drag"] = page.evaluate(PAN_FRAMES, 40)
        out["still"], out["slices"] = still_detail(page)
        # Reference: the same page drawing every point in every frame.
        # Zoomed in 16x on a dense spot: frames spend their budget on the points on screen.
        page.evaluate(ZOOM_IN, 16)
        out["zoom_drag"] = page.evaluate(PAN_FRAMES, 20)
        out["zoom_drawn"] = page.evaluate("window.__projector.app.plot.drawn")
        out["zoom_still"], _ = still_detail(page)
        out["zoom_still_drawn"] = page.evaluate("window.__projector.app.plot.drawn")
        page.evaluate("window.__projector.app.plot.resetView()")
        page.wait_for_function("window.__projector.app.plot.fullDetail", timeout=600000)
        page.evaluate("window.__projector.app.plot.frames.budget = Infinity")
        out["drag_all"] = page.evaluate(PAN_FRAMES, 4 if n <= 2_000_000 else 2)
        page.close()
        return out
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--scale-sizes", type=int, nargs="*", default=[],
                        help="precomputed-2D cases, e.g. 1000000 10000000")
    parser.add_argument("--user-sizes", type=int, nargs="*", default=[],
                        help="from the user's seat, e.g. 1000000 10000000")
    parser.add_argument("--no-tensorboard", action="store_true", help="skip the reference")
    parser.add_argument("--tensorboard-timeout", type=float, default=180)
    args = parser.parse_args()
    # TensorBoard runs as `python -m tensorboard.main`: the package, not a script on PATH.
    use_tb = not args.no_tensorboard and importlib.util.find_spec("tensorboard") is not None
    if not args.no_tensorboard and not use_tb:
        print("# TensorBoard is not installed: its reference is skipped")
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    print(f"# {platform.machine()}, {os.cpu_count()} cores, {mem:.0f} GiB; "
          "Chromium with SwiftShader (software WebGL); load average at start "
          f"{os.getloadavg()[0]:.1f}")
    print("# first frame: seconds from navigation until the plot shows points "
          "(cold: the server computes PCA; warm: cached)")
    print("# frame ms: median / p95; orbit = one redraw per animation frame (our hook), drag = the "
          "browser's frame intervals while the mouse drags to orbit\n")
    rows = []
    scale_rows = []
    user_rows: list = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for n in args.sizes:
            vectors, labels = clustered(n, DIM)
            ours_dir = Path(tmp) / f"ours-{n}"
            write_binary_logdir(ours_dir, vectors, labels)
            page = browser.new_page(viewport=VIEWPORT)
            ours = measure_ours(page, ours_dir, Path(tmp) / f"cache-{n}")
            page.close()
            tb: dict[str, object] = {}
            if use_tb:
                tb_dir = Path(tmp) / f"tb-{n}"
                add_embedding(tb_dir, vectors, metadata=labels)
                page = browser.new_page(viewport=VIEWPORT)
                tb = measure_tensorboard(page, tb_dir, args.tensorboard_timeout)
                page.close()
                shutil.rmtree(tb_dir)
            rows.append((n, ours, tb))
            print(f"{n:>9,} points: ours cold {fmt(ours['cold'])} s (hook {ours['cold_hook']:.2f}), "
                  f"warm {fmt(ours['warm'])} s; drag frames {summary(ours['drag'])} ms; "
                  f"orbit() frames {summary(ours['orbit'])} ms"
                  + (f" | TensorBoard cold {fmt(tb.get('cold'))} s, warm {fmt(tb.get('warm'))} s, "
                     f"drag frames {summary(tb.get('drag', []))} ms" if tb else ""), flush=True)
        for n in args.scale_sizes:
            folder = Path(tmp) / f"scale-{n}"
            write_scale_logdir(folder, n)
            scale = measure_scale(browser, folder, Path(tmp) / f"cache-scale-{n}", n)
            scale["load"] = os.getloadavg()[0]
            shutil.rmtree(folder)
            speedup = ratio(statistics.median(scale["drag"]), statistics.median(scale["drag_all"]))
            print(f"{n:>9,} points, 2D precomputed + categorical: first frame cold "
                  f"{fmt(scale['cold'])} s (hook {scale['cold_hook']:.2f}), warm {fmt(scale['warm'])} s; "
                  f"drag frames {summary(scale['drag'])} ms (every point each frame: "
                  f"{summary(scale['drag_all'])} ms, {speedup} faster); "
                  f"still: every point shown {scale['still']:.2f} s after the move "
                  f"(slice frames {summary(scale['slices'])} ms); zoomed 16x: drag frames "
                  f"{summary(scale['zoom_drag'])} ms drawing {scale['zoom_drawn']:,} points, "
                  f"every point on screen ({scale['zoom_still_drawn']:,}) shown "
                  f"{scale['zoom_still']:.2f} s after the move; load average "
                  f"{scale['load']:.1f}", flush=True)
            scale_rows.append((n, scale))
        for n in args.user_sizes:
            user = measure_user(browser, n, free_port(), VIEWPORT)
            user["load"] = os.getloadavg()[0]
            for visit in ("first", "second"):
                print_requests(n, visit, user[visit].get("requests", []))
            user_rows.append((n, user))
            print_user_table(user_rows[-1:])
        browser.close()
    if user_rows:
        print_user_table(user_rows)
    if rows:
        print_table(rows)
    if scale_rows:
        print_scale_table(scale_rows)


def print_table(rows: list) -> None:
    print("\n| points | first frame, ours cold / warm (s) | TensorBoard cold / warm (s) | "
          "TensorBoard / ours (warm) | ours orbit frame ms | ours drag frame ms | "
          "TensorBoard drag frame ms |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n, ours, tb in rows:
        tb_first = f"{fmt(tb.get('cold'))} / {fmt(tb.get('warm'))}" if tb else "–"
        tb_note = " (first 100k)" if tb and n > 100_000 else ""
        print(f"| {n:,} | {fmt(ours['cold'])} / {fmt(ours['warm'])} | {tb_first}{tb_note} | "
              f"{ratio(ours['warm'], tb.get('warm'))} | {summary(ours['orbit'])} | "
              f"{summary(ours['drag'])} | {summary(tb.get('drag', [])) if tb else '–'} |")


if __name__ == "__main__":
    main()
