"""The first picture as the user gets it (bench_frontend.py --user-sizes): `projector serve` as a
subprocess on a fresh cache directory, the tensor loaded, then headless Chromium opens `/` with
its default view, as a first visit (a fresh browser profile) and a second one (same server,
same browser).

Measured from outside the page: the first picture is the first screenshot of the plot element
with points on it (screenshots polled; a page whose main thread is busy takes none, so a frozen
page counts as not drawn). Inside the page: the longest main-thread task that a
`PerformanceObserver("longtask")` reports in the 10 s after the first picture, the browser's
frame intervals while the mouse drags the plot, and the page's own first-frame timestamp
(`window.__projector.firstFrameMs`, the figure earlier benchmarks printed) beside the
screenshot figure, and the tab's JS heap (`performance.memory`) at the end of the visit.

The data carry what users' tables carry (a 30-value category, a unique id, a numeric
score, a free-text column: ``write_scale_logdir(realistic=True)``).

The page shows 2-D views above 2M points from tiles alone (frontend/js/tiles/) and smaller
ones from the whole projection; `?tiles=always|never` overrides. Reference in the same run:
on the same (warm) server, a visit of a fresh browser profile by the default path beside one
by the other path, so the two display paths are compared under the same load.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import Browser, Page
from playwright.sync_api import Error as PlaywrightError

from bench.frontend_scale import write_scale_logdir
from projector_core.tiles.view import shown_from_tiles

AFTER_PICTURE_S = 10.0  # the window after the first picture whose long tasks count
LONG_TASKS = """
window.__longTasks = [];
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push([e.startTime, e.duration]);
  }).observe({ type: 'longtask', buffered: true });
} catch (err) { window.__longTasks = null; }
"""
HIDE_OVERLAYS = """document.addEventListener('DOMContentLoaded', () => {
  const style = document.createElement('style');
  style.textContent = '.plot-toolbar, .plot-progress, .plot-message { visibility: hidden !important; }';
  document.head.append(style);
});"""
REQUESTS = """performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/'))
  .map((e) => [new URL(e.name).pathname + new URL(e.name).search, e.startTime, e.responseEnd])"""


class ServeProcess:
    """`projector serve LOGDIR` in its own process, on a free port and a fresh cache."""

    def __init__(self, logdir: Path, cache: Path, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "projector.server.cli", "serve", str(logdir), "--port", str(port),
             "--cache-dir", str(cache)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def wait_loaded(self, timeout: float = 900) -> float:
        """Seconds until /api/runs lists a ready embedding with a shape."""
        start = time.perf_counter()
        while time.perf_counter() - start < timeout:
            if self.process.poll() is not None:
                raise RuntimeError(f"projector serve exited with {self.process.returncode}")
            try:
                runs = httpx.get(f"{self.url}/api/runs", timeout=10).json()
                embeddings = [e for r in runs for e in r["embeddings"]]
                if embeddings and all(e.get("status") != "loading" and e.get("shape")
                                      for e in embeddings):
                    return time.perf_counter() - start
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        raise TimeoutError("the tensor did not load")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()


def drawn_pixels(png: bytes) -> int:
    from bench.bench_frontend import drawn
    return drawn(png)


def first_picture(page: Page, url: str, region: dict, timeout: float) -> tuple[float | None, int]:
    """Seconds from navigation until a screenshot of the plot shows points, and how many
    screenshots were taken meanwhile (few: the page's main thread held them back)."""
    from bench.bench_frontend import DRAWN_PIXELS
    start = time.perf_counter()
    page.goto(url, wait_until="commit")
    shots = 0
    while time.perf_counter() - start < timeout:
        try:
            png = page.screenshot(clip=region, timeout=timeout * 1000)
        except PlaywrightError as error:  # a frame the compositor could not give yet: ask again
            if "Unable to capture screenshot" not in str(error):
                raise
            time.sleep(0.03)
            continue
        shots += 1
        if drawn_pixels(png) > DRAWN_PIXELS:
            return time.perf_counter() - start, shots
        time.sleep(0.03)
    return None, shots


def longest_task_after(page: Page, picture_ms: float) -> float | None:
    """The longest main-thread task (ms) overlapping [picture, picture + 10 s] (page clock)."""
    tasks = page.evaluate("window.__longTasks")
    if tasks is None:
        return None
    end = picture_ms + AFTER_PICTURE_S * 1000
    overlapping = [d for s, d in tasks if s + d >= picture_ms and s <= end]
    return max(overlapping, default=0.0)


def wait_until(page: Page, expression: str, timeout: float = 600) -> None:
    """Polls ``expression`` from here: Playwright's wait_for_function evaluates it with eval,
    which the page's Content-Security-Policy refuses (and a context with bypass_csp drew the
    first picture at 1M about 1 s later: 2.2-2.5 s against 1.2-1.4 s)."""
    deadline = time.perf_counter() + timeout
    while not page.evaluate(expression):
        if time.perf_counter() > deadline:
            raise TimeoutError(f"not reached in {timeout} s: {expression}")
        time.sleep(0.05)


def drag_frames(page: Page, box: dict, moves: int = 60) -> list[float]:
    from bench.bench_frontend import frame_intervals_while_dragging
    return frame_intervals_while_dragging(page, box, moves)


def visit(context, url: str, box: dict) -> dict[str, object]:
    """One visit: first picture (screenshots), long tasks in the 10 s after it, in-page hook."""
    page = context.new_page()
    page.add_init_script(LONG_TASKS)
    page.add_init_script(HIDE_OVERLAYS)
    seconds, shots = first_picture(page, url, box, 600)
    out: dict[str, object] = {"picture": seconds, "shots": shots}
    if seconds is None:
        page.close()
        return out
    # The picture in the page's clock (a task running then delays this answer; it still
    # overlaps the window, so it counts).
    picture_ms = page.evaluate("performance.now()")
    time.sleep(AFTER_PICTURE_S)
    out["longest_task"] = longest_task_after(page, picture_ms)
    wait_until(page, "window.__projector && window.__projector.firstFrameMs !== null")
    out["hook"] = page.evaluate("window.__projector.firstFrameMs") / 1000
    out["requests"] = page.evaluate(REQUESTS)
    out["heap_mb"] = page.evaluate("performance.memory.usedJSHeapSize") / 2**20
    out["page"] = page
    return out


def measure_user(browser: Browser, n: int, port: int, viewport: dict) -> dict[str, object]:
    """One size: first visit, second visit, drag frames, from a fresh server and cache."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "logdir"
        write_scale_logdir(folder, n, realistic=True)
        server = ServeProcess(folder, Path(tmp) / "cache", port)
        try:
            out: dict[str, object] = {"loaded": server.wait_loaded()}
            # Where the plot is, from a page of another profile that lists no runs.
            probe = browser.new_context(viewport=viewport)
            page = probe.new_page()
            page.route("**/api/runs", lambda route: route.fulfill(json=[]))
            page.goto(server.url + "/")
            box = page.locator('[data-testid="plot"]').bounding_box()
            probe.close()
            context = browser.new_context(viewport=viewport)
            first = visit(context, server.url + "/", box)
            first_page = first.pop("page", None)
            if first_page is not None:
                wait_until(first_page, "window.__projector.ready")
                out["drag"] = drag_frames(first_page, box)
                first_page.close()
            second = visit(context, server.url + "/", box)
            second_page = second.pop("page", None)
            if second_page is not None:
                second_page.close()
            context.close()
            out["first"], out["second"] = first, second
            # The reference: both display paths from a fresh profile on the warm server.
            tiles = shown_from_tiles(n)  # what /api/runs tells the page
            for name, query in (("default", ""), ("other", "never" if tiles else "always")):
                fresh = browser.new_context(viewport=viewport)
                seen = visit(fresh, server.url + "/" + (f"?tiles={query}" if query else ""), box)
                seen.pop("page", None)
                fresh.close()
                out[name] = seen
            out["paths"] = ("tiles", "whole set") if tiles else ("whole set", "tiles")
            return out
        finally:
            server.stop()


def _s(value: float | None) -> str:
    return "timeout" if value is None else f"{value:.2f}"


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"


def print_user_table(rows: list[tuple[int, dict]]) -> None:
    print("\n| points (2D + categorical) | first visit (s) | its in-page figure (s) | second visit "
          "(s) | in-page (s) | longest task after picture, 1st / 2nd (ms) | drag frames "
          "median / p95 (ms) | screenshots before the picture | load average |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, r in rows:
        first, second = r["first"], r["second"]
        drag = sorted(r.get("drag") or [0])
        p95 = drag[min(len(drag) - 1, int(len(drag) * 0.95))]
        print(f"| {n:,} | {_s(first['picture'])} | {_s(first.get('hook'))} | "
              f"{_s(second['picture'])} | {_s(second.get('hook'))} | "
              f"{_ms(first.get('longest_task'))} / {_ms(second.get('longest_task'))} | "
              f"{statistics.median(drag):.0f} / {p95:.0f} | {first['shots']} | {r['load']:.1f} |")
    print_paths_table(rows)


def print_paths_table(rows: list[tuple[int, dict]]) -> None:
    """The two display paths, each a fresh profile on the same warm server (same run)."""
    print("\n| points | default path | first picture (s) | longest task after it (ms) | JS heap "
          "(MB) | other path | first picture (s) | longest task (ms) | JS heap (MB) | "
          "picture, default / other |")
    print("|---:|---|---:|---:|---:|---|---:|---:|---:|---:|")
    for n, r in rows:
        d, o = r["default"], r["other"]
        ratio = (f"{d['picture'] / o['picture']:.2f}x" if d.get("picture") and o.get("picture")
                 else "–")
        print(f"| {n:,} | {r['paths'][0]} | {_s(d['picture'])} | {_ms(d.get('longest_task'))} | "
              f"{_ms(d.get('heap_mb'))} | {r['paths'][1]} | {_s(o['picture'])} | "
              f"{_ms(o.get('longest_task'))} | {_ms(o.get('heap_mb'))} | {ratio} |")


def print_requests(n: int, visit: str, requests: list) -> None:
    print(f"# {n:,}: API requests of the {visit} visit (start -> end, ms from navigation)")
    for path, start, end in sorted(requests, key=lambda r: r[1]):
        print(f"#   {start:8.0f} -> {end:8.0f}  {path[:110]}")
