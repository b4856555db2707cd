"""The scale cases of bench_frontend.py (1M, 10M points): their data and the page scripts
that time frames inside the page (no round trip to the benchmark's process per frame)."""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
from playwright.sync_api import Page


def _fmt(seconds: float | None) -> str:
    return "timeout" if seconds is None else f"{seconds:.2f}"


TOPICS = ["loss", "layer", "token", "vision", "audio", "graph", "policy", "reward", "kernel",
          "batch"]


def write_scale_logdir(folder: Path, n: int, seed: int = 0, realistic: bool = False) -> None:
    """2D coordinates in 20 Gaussian blobs of unequal size, written in chunks to bound memory,
    and a 10-class column (no header: a single-column metadata file has none). ``realistic``:
    the columns users' tables carry instead (issue 38), under a header: a 30-value
    ``category``, a unique ``id``, a numeric ``score`` and a free-text ``text``."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True)
    centres = rng.normal(0, 6, (20, 2))
    weights = rng.random(20) + 0.1
    with (folder / "tensors.bytes").open("wb") as tensor, \
            (folder / "metadata.tsv").open("w") as meta:
        if realistic:
            meta.write("category\tid\tscore\ttext\n")
        for start in range(0, n, 1_000_000):
            m = min(1_000_000, n - start)
            blob = rng.choice(20, m, p=weights / weights.sum())
            points = centres[blob] + rng.normal(0, 1, (m, 2)) * (0.3 + blob[:, None] % 4 * 0.3)
            tensor.write(points.astype("<f4").tobytes())
            if not realistic:
                meta.write("".join(f"class{b % 10}\n" for b in blob))
                continue
            category = (blob + rng.integers(0, 2, m) * 20) % 30
            score = rng.normal(blob, 1.0)
            words = rng.integers(0, len(TOPICS), (m, 3))
            meta.write("".join(
                f"cat{c}\titem-{start + i:09d}\t{v:.4f}\ta note on {TOPICS[a]} and {TOPICS[b]}, "
                f"{TOPICS[t]} #{start + i}\n"
                for i, (c, v, (a, b, t)) in enumerate(zip(category, score, words, strict=True))))
    (folder / "projector_config.pbtxt").write_text(
        f'embeddings {{\n  tensor_name: "points"\n  tensor_path: "tensors.bytes"\n'
        f"  tensor_shape: {n}\n  tensor_shape: 2\n  metadata_path: \"metadata.tsv\"\n}}\n")


STILL_DETAIL = """() => new Promise((resolve) => {
  // Moves the camera by nothing (a change all the same), then times in the page, frame by
  // frame, until the still view shows every point: no round trips to this process inside.
  const plot = window.__projector.app.plot;
  const intervals = [];
  const start = performance.now();
  let last = start;
  let started = false;
  plot.setCamera({ ...plot.camera });
  const tick = (now) => {
    intervals.push(now - last);
    last = now;
    started = started || !plot.fullDetail;
    if (started && plot.fullDetail) resolve([(performance.now() - start) / 1000, intervals.slice(1)]);
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})"""


def still_detail(page: Page) -> tuple[float, list[float]]:
    """Seconds from the end of a camera move until the still view shows every point, and the
    intervals (ms) between the animation frames that built it, slice by slice."""
    seconds, intervals = page.evaluate(STILL_DETAIL)
    return seconds, intervals


PAN_FRAMES = """(frames) => new Promise((resolve) => {
  // Pans the 2D camera one step per animation frame, as a drag does; resolves with the
  // intervals between frames (ms), which include the GPU work of each frame.
  const plot = window.__projector.app.plot;
  const intervals = [];
  let last = null;
  const step = (now) => {
    if (last !== null) intervals.push(now - last);
    last = now;
    if (intervals.length >= frames) { resolve(intervals); return; }
    const c = plot.camera;
    plot.setCamera({ ...c, target: [c.target[0] + 0.002, c.target[1], c.target[2]] });
    requestAnimationFrame(step);
  };
  requestAnimationFrame(step);
})"""


ZOOM_IN = """(factor) => { // 2D camera zoomed in by `factor`, centred on point 0 (in a blob)
  const p = window.__projector.app.plot;
  p.setCamera({ ...p.camera, zoom: p.camera.zoom * factor,
                target: [p.positions[0], p.positions[1], 0] }); }"""


def print_scale_table(scale_rows: list) -> None:
    print("\n| points (2D + categorical) | first frame cold / warm (s; in page) | drag frame "
          "ms (median) | every point each frame (ms) | ratio | every point, still (s) | "
          "zoomed 16x: drag ms / still s | load average |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, sc in scale_rows:
        drag, every = statistics.median(sc["drag"]), statistics.median(sc["drag_all"])
        print(f"| {n:,} | {_fmt(sc['cold'])} / {_fmt(sc['warm'])} ({sc['cold_hook']:.2f} / "
              f"{sc['warm_hook']:.2f}) | {drag:.0f} | {every:.0f} | {every / drag:.1f}x | "
              f"{sc['still']:.2f} | {statistics.median(sc['zoom_drag']):.0f} / "
              f"{sc['zoom_still']:.2f} | {sc['load']:.1f} |")
