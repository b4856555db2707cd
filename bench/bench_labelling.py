"""Labelling a 1M-row lasso as the user does it, and an edit's arrival in a second page.

`projector serve` runs as a subprocess on a 1M-point, 2-D log dir (20 blobs, a 10-class column)
with its own annotation store; the page shows it whole (1M <= 2M: not from tiles). Measured:

- API: ``POST /api/annotations`` with 1M row numbers (JSON over HTTP, the store's one
  transaction, the answer), median of a few, against the plain ``sqlite3`` way in the same run:
  the same rows ``executemany``-inserted as (row, value) into one table (WAL, synchronous=FULL).
- Page: in Chromium, a lasso around the whole plot selects 1M points; from the click on
  "Label" to the page saying "Saved" with the map recoloured (its next animation frame), timed
  in the page, against recolouring the same map by the same column (a Color by change) in the
  same page: "colours the map at once" is this ratio.
- Arrival: a second page of the same view hears the edit on ``GET /api/events``; from the
  server's commit (the event's time) to the second page's receiving it and to its map
  recoloured by the new codes.

Figures are printed with the machine's load average beside them (goal: <= 1 s for the API and
the page).

    python bench/bench_labelling.py [--points 1000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_annotations import insert, reference_table
from bench.frontend_scale import write_scale_logdir
from bench.harness import machine_info
from bench.serving import free_port

NAMES = {"run": ".", "embedding": "points"}
CHROMIUM = os.environ.get("PROJECTOR_CHROMIUM", "/usr/bin/chromium")
VIEW = {"run": ".", "embedding": "points", "pca": {"is3d": False}, "colorBy": "bench"}
WATCH = """(label) => new Promise((resolve) => {
  // From the click on Label to "Saved" and the next frame: the map coloured by the new codes.
  const status = document.querySelector('[data-testid=edit-status]');
  const start = performance.now();
  new MutationObserver((_, observer) => {
    if (!status.textContent.startsWith('Saved')) return;
    observer.disconnect();
    const saved = performance.now();
    requestAnimationFrame(() => resolve({ saved: saved - start, frame: performance.now() - start }));
  }).observe(status, { childList: true, characterData: true, subtree: true });
  document.querySelector('[data-testid=edit-value]').value = label;
  document.querySelector('[data-testid=tag-selection]').click();
})"""
RECOLOR = """(column) => new Promise((resolve) => {
  // Colour by another column, then time colouring by `column` again until the next frame.
  const app = window.__projector.app;
  app.update({ colorBy: 'label' });
  requestAnimationFrame(() => {
    const start = performance.now();
    app.update({ colorBy: column });
    requestAnimationFrame(() => resolve(performance.now() - start));
  });
})"""
ARRIVALS = """() => {
  window.__arrivals = [];
  const status = document.querySelector('[data-testid=edit-status]');
  window.__projector.app.events.on('annotation', (data) => {
    window.__arrivals.push({ edit: data.edit, sent: data.time * 1000, heard: Date.now() });
  });
  new MutationObserver(() => {
    const edit = Number(status.dataset.edit);
    const entry = window.__arrivals.find((a) => a.edit === edit && !a.shown);
    if (entry) requestAnimationFrame(() => { entry.shown = Date.now(); });
  }).observe(status, { attributes: true, attributeFilter: ['data-edit'] });
}"""


def serve(logdir: Path, root: Path, port: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "projector.server.cli", "serve", str(logdir), "--port", str(port),
         "--cache-dir", str(root / "cache"), "--annotations", str(root / "store.sqlite"),
         "--no-warm-up"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONUNBUFFERED="1"))


def wait_ready(url: str, process: subprocess.Popen, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"projector serve exited with {process.returncode}")
        try:
            runs = httpx.get(f"{url}/api/runs", timeout=10).json()
            if runs and all(e["status"] == "ready" for r in runs for e in r["embeddings"]):
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise SystemExit("the tensor did not load")


def open_page(context, url: str):
    view = base64.urlsafe_b64encode(json.dumps(VIEW).encode()).decode().rstrip("=")
    page = context.new_page()
    page.goto(f"{url}/#s={view}")
    page.wait_for_function("() => window.__projector && window.__projector.ready",
                           timeout=300_000)
    return page


def lasso_everything(page) -> int:
    box = page.locator('[data-testid="plot"]').bounding_box()
    page.locator('[data-testid="tool-lasso"]').click()
    x0, y0 = box["x"] + 6, box["y"] + 6  # inside the frame's border: on the canvas
    x1, y1 = box["x"] + box["width"] - 6, box["y"] + box["height"] - 6
    page.mouse.move(x0, y0)
    page.mouse.down()
    for x, y in ((x1, y0), (x1, y1), (x0, y1), (x0, y0 + 2)):
        page.mouse.move(x, y, steps=5)
    page.mouse.up()
    page.wait_for_function("() => window.__projector.state().selection.length > 0",
                           timeout=120_000)
    return page.evaluate("() => window.__projector.state().selection.length")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"# {machine_info(f'sqlite {sqlite3.sqlite_version}')}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_scale_logdir(root / "logdir", args.points)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        process = serve(root / "logdir", root, port)
        try:
            wait_ready(url, process)
            rows = np.arange(args.points).tolist()
            reference = reference_table(root / "reference.sqlite")
            api, plain = [], []
            for turn in range(args.repeats + 1):  # the first of each is a warm-up
                start = time.perf_counter()
                answer = httpx.post(f"{url}/api/annotations", timeout=600, json={
                    **NAMES, "column": "bench", "value": f"v{turn % 3}", "rows": rows})
                answer.raise_for_status()
                api.append(time.perf_counter() - start)
                start = time.perf_counter()
                insert(reference, np.asarray(rows), f"v{turn % 3}")
                plain.append(time.perf_counter() - start)
            reference.close()
            api_s, plain_s = statistics.median(api[1:]), statistics.median(plain[1:])
            print(f"# load average after the API runs: {os.getloadavg()[0]:.1f}")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=[
                    "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
                viewport = {"width": 1280, "height": 800}  # a context each: both pages shown
                first = open_page(browser.new_context(viewport=viewport), url)
                second = open_page(browser.new_context(viewport=viewport), url)
                first.bring_to_front()
                second.evaluate(ARRIVALS)
                selected = lasso_everything(first)
                labelled, recolored = [], []
                for turn in range(args.repeats + 1):
                    labelled.append(first.evaluate(WATCH, f"page{turn % 3}"))
                    recolored.append(first.evaluate(RECOLOR, "bench"))
                second.wait_for_function(
                    f"() => window.__arrivals.filter((a) => a.shown).length >= {args.repeats + 1}",
                    timeout=120_000)
                arrivals = second.evaluate("() => window.__arrivals")
                browser.close()
        finally:
            process.terminate()
            process.wait(30)
    page_s = statistics.median(r["frame"] for r in labelled[1:]) / 1000
    saved_s = statistics.median(r["saved"] for r in labelled[1:]) / 1000
    recolor_s = statistics.median(recolored[1:]) / 1000
    heard = statistics.median(a["heard"] - a["sent"] for a in arrivals[1:]) / 1000
    shown = statistics.median(a["shown"] - a["sent"] for a in arrivals[1:]) / 1000
    print(f"# load average at the end: {os.getloadavg()[0]:.1f}; {selected:,} points lassoed")
    print("| task | ours (s) | reference (s) | ours / reference | goal |")
    print("|---|---:|---:|---:|---|")
    print(f"| API: label {args.points:,} rows (POST, JSON) | {api_s:.3f} | {plain_s:.3f} "
          f"(sqlite3 executemany) | {api_s / plain_s:.2f} | <= 1 s |")
    print(f"| page: Label click -> saved, map recoloured | {page_s:.3f} (saved {saved_s:.3f}) | "
          f"{recolor_s:.3f} (Color by change) | {page_s / recolor_s:.2f} | <= 1 s, at once |")
    print(f"| second page: commit -> event heard / map recoloured | {heard:.3f} / {shown:.3f} | "
          f"- | - | without reload |")
    print(json.dumps({"api": api, "plain": plain, "page": labelled, "recolor": recolored,
                      "arrivals": arrivals}))


if __name__ == "__main__":
    main()
