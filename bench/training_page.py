"""bench_training_steps.py (c): from a step's files complete to its picture in a page that
follows the run (Follow on, issue 36), in parts: the server knowing it (its ``ready`` event),
the page knowing it (the step on its way: the page's data set is that step), and its picture
(the step's points in the plot: PCA's result turned onto the step before, or the first frame
of a UMAP started from the step before's layout; then its first optimised epoch, and its end).

Times are wall-clock seconds on one machine: the writer's (``time.time()`` when
``add_embedding`` returns), the event's arrival here, and the page's own ``Date.now()`` at the
animation frame that first draws each. Beside them, the floor any projector pays: the same
computation in this process (PCA of the step plus its Procrustes turn; UMAP's neighbour graph
and start from the previous layout, one epoch).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import serving
from playwright.sync_api import sync_playwright

from projector_core.formats.writer import add_embedding
from projector_core.kernels.align import procrustes_align
from projector_core.kernels.pca import pca
from projector_core.kernels.umap import umap

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]

# Watches the page from the next animation frame: when it knows the step, when the step's
# points are first in the plot (PCA: its result; UMAP: its first frame), its first optimised
# epoch, and when it is done.
WATCH = """({ embedding, method }) => {
  const app = window.__projector.app;
  const seen = { heard: null, picture: null, optimised: null, done: null };
  window.__bench = seen;
  const tick = () => {
    const p = app.shown;
    const now = Date.now();
    if (app.dataset?.name === embedding) seen.heard ??= now;
    const inPlot = app.dataset?.name === embedding && p && p.data && p.source
      && app.plot.source === p.source && p.displayedData === p.data;
    if (inPlot && (method !== 'pca' || p.status === 'done')) seen.picture ??= now;
    if (inPlot && (p.iteration ?? 0) >= 1) seen.optimised ??= now;
    if (inPlot && p.status === 'done') seen.done = now;
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""


def _clustered(n: int, dims: int, step: int, rng: np.random.Generator) -> np.ndarray:
    """Ten clusters drifting a little from step to step, as a layer's activations do."""
    centres = np.random.default_rng(0).standard_normal((10, dims)).astype(np.float32) * 4
    drift = rng.standard_normal((10, dims)).astype(np.float32) * 0.3 * step
    noise = rng.standard_normal((n, dims)).astype(np.float32)
    return centres[np.arange(n) % 10] + drift[np.arange(n) % 10] + noise


def _floor(method: str, before: np.ndarray, after: np.ndarray, layout: np.ndarray) -> float:
    started = time.perf_counter()
    if method == "pca":
        procrustes_align(layout, pca(after).coordinates)
    else:
        umap(after, 2, n_epochs=1, init=layout)
    return time.perf_counter() - started


def page_latency(tmp: Path, sizes: list[int], dims: int, repeats: int, arrivals_of: Any,
                 umap_repeats: int) -> None:
    print(f"\n(c) from a step's files complete to its picture in a page following the run "
          f"({dims} dims, .npy steps, median of {repeats}; UMAP {umap_repeats}); seconds after "
          "the files were complete")
    print(f"{'points':>8} {'method':>6} {'server':>7} {'page':>7} {'picture':>8} "
          f"{'epoch 1':>8} {'done':>7} {'floor':>7} {'picture/floor':>14}")
    rng = np.random.default_rng(2)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for n in sizes:
                _one_size(tmp, n, dims, repeats, umap_repeats, arrivals_of, browser, rng)
        finally:
            browser.close()


def _one_size(tmp: Path, n: int, dims: int, repeats: int, umap_repeats: int, arrivals_of: Any,
              browser: Any, rng: np.random.Generator) -> None:
    logdir = tmp / f"page-{n}"
    logdir.mkdir()
    port = serving.free_port()
    url = f"http://127.0.0.1:{port}"
    process = serving.start(serving.projector_command(logdir, port, tmp / f"cache-page-{n}",
                                                      "--wait"), tmp / f"c-{n}.log")
    labels = [f"c{i % 10}" for i in range(n)]
    try:
        serving.until(process, time.perf_counter(), lambda: httpx.get(f"{url}/api/health")
                      .status_code == 200, timeout=120)
        arrivals = arrivals_of(url)
        step = 0
        matrices = {0: _clustered(n, dims, 0, rng)}
        add_embedding(logdir / "run", matrices[0], metadata=labels, global_step=0, format="npy")
        arrivals.wait("run", 0, "ready")
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.set_default_timeout(900_000)
        page.goto(url + "/")
        page.wait_for_function("() => window.__projector && window.__projector.ready")
        page.wait_for_function("() => window.__training && window.__training.shown().follow")
        for method, count in (("pca", repeats), ("umap", umap_repeats)):
            page.evaluate("(m) => window.__projector.app.update({ projection: m })", method)
            if method != "pca":  # above 5,000 points the page waits for Run (issue 33, item 8)
                page.locator(f'[data-testid="{method}-run"]').click()
            page.wait_for_function("(m) => { const p = window.__projector.app.shown; "
                                   "return p && p.method === m && p.status === 'done'; }", arg=method)
            rows: list[dict[str, float]] = []
            for _ in range(count):
                layout = np.array(page.evaluate(
                    "() => Array.from(window.__projector.app.shown.data)"), np.float32)
                step += 1
                name = f"default:{step:05d}"
                page.evaluate(WATCH, {"embedding": name, "method": method})
                matrices[step] = _clustered(n, dims, step, rng)
                add_embedding(logdir / "run", matrices[step], metadata=labels, global_step=step,
                              format="npy")
                complete = time.time()
                ready = arrivals.wait("run", step, "ready") - complete
                page.wait_for_function("() => window.__bench.done !== null")
                seen = page.evaluate("() => window.__bench")
                row = {"server": ready, **{k: v / 1000 - complete for k, v in seen.items()
                                           if v is not None}}
                row["floor"] = _floor(method, matrices[step - 1], matrices[step],
                                      layout.reshape(n, -1))
                rows.append(row)
                matrices.pop(step - 1)
            median = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
            print(f"{n:>8} {method:>6} {median['server']:6.2f}s {median['heard']:6.2f}s "
                  f"{median['picture']:7.2f}s {median.get('optimised', float('nan')):7.2f}s "
                  f"{median['done']:6.2f}s {median['floor']:6.2f}s "
                  f"{median['picture'] / median['floor']:13.2f}x", flush=True)
        page.close()
    finally:
        serving.stop(process)
