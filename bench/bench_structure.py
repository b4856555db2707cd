"""Structure of a projection at scale: clusters + labels, quality, and the density redraw.

Data: N points in 2-D from 40 Gaussian blobs (the projection), each with a categorical
label (90% its blob's), and 16-D originals (the 2-D points through a random linear map plus
noise, so the picture is a faithful one; a picture unlike its data costs more: ranks
are counted over whole rows then).

- clusters + labels (``cluster_points`` + ``cluster_labels``); reference: scikit-learn's
  HDBSCAN alone on the sample our kernel clusters (the part any HDBSCAN answer pays).
- quality (``projection_quality``, k = 10, euclidean: an even 50k sample above 200k points);
  reference: ``sklearn.manifold.trustworthiness`` on the first 4,000 points, against ours
  on the same 4,000.
- density redraw in headless Chromium (software canvas): the overlay's full redraw of N
  points (bin, blur, shade, contours); reference: ``projectPoints`` (geometry.js), one
  screen projection of the same N points, which a box selection already pays.

    python bench/bench_structure.py [--n 1000000] [--no-browser]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np
from harness import machine_info

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from projector_core.formats.metadata import Metadata
from projector_core.kernels.cluster_labels import cluster_labels
from projector_core.kernels.clusters import SAMPLE_LIMIT, cluster_points, default_min_cluster_size
from projector_core.kernels.quality import projection_quality

CHROMIUM = os.environ.get("PROJECTOR_CHROMIUM", "/usr/bin/chromium")


def make_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-50, 50, (40, 2))
    blob = rng.integers(0, 40, n)
    points = (centres[blob] + rng.normal(0, 1.5, (n, 2))).astype(np.float32)
    lift = rng.normal(size=(2, 16))
    original = (points @ lift + rng.normal(0, 0.05, (n, 16))).astype(np.float32)
    noisy = np.where(rng.random(n) < 0.9, blob, rng.integers(0, 40, n))
    return points, original, [f"class {b}" for b in noisy]


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def bench_clusters(points: np.ndarray, labels: list[str]) -> None:
    from sklearn.cluster import HDBSCAN

    n = points.shape[0]
    size = default_min_cluster_size(n)
    metadata = Metadata.from_columns({"label": labels})

    def ours():
        found = cluster_points(points, points, size)
        return found, cluster_labels(metadata, "label", [c.members for c in found.clusters])

    seconds, (found, names) = timed(ours)
    sample = min(n, SAMPLE_LIMIT)
    pick = np.linspace(0, n - 1, sample).round().astype(np.int64)
    scaled = max(2, round(size * sample / n))
    reference, _ = timed(lambda: HDBSCAN(min_cluster_size=scaled).fit(points[pick].astype(np.float64)))
    top = [c for c in found.clusters if c.parent is None]
    print(f"clusters + labels, {n:,} points, min_cluster_size {size}: {seconds:.2f} s "
          f"(goal <= 10 s); {len(top)} clusters, {len(found.clusters) - len(top)} sub-clusters, "
          f"{(found.assignment < 0).mean():.1%} noise; e.g. {names[0]!r}")
    print(f"  reference: sklearn HDBSCAN on the {sample:,}-point sample alone: {reference:.2f} s "
          f"(ours / reference = {seconds / reference:.2f})")


def bench_quality(points: np.ndarray, original: np.ndarray) -> None:
    from sklearn.manifold import trustworthiness

    projection_quality(original[:500], points[:500], 10, "euclidean")  # compile the scan once
    seconds, found = timed(lambda: projection_quality(original, points, 10, "euclidean"))
    print(f"quality, {points.shape[0]:,} points (sample {found.sample_size or 'none'}): "
          f"{seconds:.2f} s (goal <= 10 s); trustworthiness {found.trustworthiness:.4f}, "
          f"continuity {found.continuity:.4f}, mean kept {found.mean:.3f}")
    small = 4000
    ours, mine = timed(lambda: projection_quality(original[:small], points[:small], 10, "euclidean"))
    ref, value = timed(lambda: trustworthiness(original[:small], points[:small], n_neighbors=10))
    print(f"  reference: sklearn trustworthiness on {small:,} points {ref:.2f} s, ours (all three "
          f"figures) {ours:.2f} s (ours / reference = {ours / ref:.2f}); "
          f"|difference| {abs(value - mine.trustworthiness):.1e}")


DENSITY_JS = """async (n) => {
  const { projectPoints } = await import('./static/js/geometry.js');
  const overlay = window.__structure.overlay;
  const real = window.__projector.app.plot;
  const positions = new Float32Array(n * 3);
  let seed = 1;
  const rand = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  for (let i = 0; i < n; i++) {
    const c = Math.floor(rand() * 40);
    const cx = Math.sin(c * 12.9898) * 0.8, cy = Math.cos(c * 78.233) * 0.8;
    const r = Math.sqrt(-2 * Math.log(rand() + 1e-12)) * 0.03, a = rand() * 6.2832;
    positions[i * 3] = cx + r * Math.cos(a);
    positions[i * 3 + 1] = cy + r * Math.sin(a);
  }
  const plot = { positions, n, flags: new Uint8Array(n), threeD: false,
                 matrix: () => real.matrix(), canvas: real.canvas, requestRender: () => {} };
  real.removeLayer(overlay); // a layer of the plot: taken out, it draws only when told here
  overlay.plot = plot;
  overlay.setDensity(true);
  const w = real.canvas.clientWidth, h = real.canvas.clientHeight;
  const ours = [], ref = [];
  for (let r = 0; r < 8; r++) {
    let t = performance.now(); overlay.draw(w, h); ours.push(performance.now() - t);
    t = performance.now(); projectPoints(positions, real.matrix(), w, h); ref.push(performance.now() - t);
  }
  return { ours, ref, w, h };
}"""


def bench_density(n: int) -> None:
    import uvicorn
    from playwright.sync_api import sync_playwright
    from projector.server.app import create_app

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(refresh_seconds=0), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM,
                                                 args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_function("window.__projector && window.__projector.ready", timeout=120000)
            result = page.evaluate(DENSITY_JS, n)
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    ours = statistics.median(result["ours"][1:])
    ref = statistics.median(result["ref"][1:])
    print(f"density redraw, {n:,} points on a {result['w']}x{result['h']} plot: {ours:.1f} ms "
          f"(goal <= 50 ms); reference projectPoints {ref:.1f} ms (ours / reference = {ours / ref:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--only", choices=["clusters", "quality", "density"])
    args = parser.parse_args()
    print(f"machine: {machine_info()}")
    points, original, labels = make_data(args.n)
    if args.only in (None, "clusters"):
        bench_clusters(points, labels)
    if args.only in (None, "quality"):
        bench_quality(points, original)
    if not args.no_browser and args.only in (None, "density"):
        bench_density(args.n)


if __name__ == "__main__":
    main()
