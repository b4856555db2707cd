"""A running t-SNE as the page shows it: its phase with a percentage before the first step,
readable pictures (never squeezed to a line, also after Stop), and a job that stops on the
server once its tab is gone (issue 28)."""

from __future__ import annotations

import base64
import json
import time

import httpx
import numpy as np
import pytest
from projector.server.app import create_app

from projector_core.formats.writer import add_embedding
from tests.browser.conftest import state_hash
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

WORDS = {"run": "words", "embedding": "words", "sprites": False}


def spread_ratio(projector) -> float:
    """Narrowest over widest principal spread of the plotted points (1: round, 0: a line)."""
    xy = np.array(projector.page.evaluate("Array.from(window.__projector.app.plot.positions)"))
    xy = xy.reshape(-1, 3)[:, :2]
    xy = xy[np.isfinite(xy).all(axis=1)]
    eigen = np.linalg.eigvalsh(np.cov(xy.T))
    return float(np.sqrt(max(eigen[0], 0) / eigen[1]))


def test_tsne_names_its_phase_and_its_pictures_stay_readable_through_stop(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), WORDS)
    projector.by("tab-tsne").click()
    # Before the first step: the neighbour search, with its percentage (not "iteration 0").
    projector.wait_text("progress-label", "t-SNE: neighbours", contains=True)
    assert projector.by("progress-label").inner_text().endswith("%)")
    projector.wait_js("app.shown.phase === 'optimisation' && app.shown.iteration >= 5")
    ratios, seen = [], []
    for _ in range(8):  # through the early-exaggeration iterations, where words go thin
        projector.wait_settled()
        seen.append(projector.page.evaluate("window.__projector.app.shown.iteration"))
        ratios.append(spread_ratio(projector))
        time.sleep(0.3)
    assert "optimisation, iteration" in projector.by("progress-label").inner_text()
    assert min(seen) < 250, seen  # pictures of the early exaggeration were among those measured
    projector.by("tsne-stop").click()
    projector.wait_projection("tsne", "cancelled")
    projector.wait_settled()
    ratios.append(spread_ratio(projector))
    assert min(ratios) >= 0.2, list(zip([*seen, "stopped"], ratios, strict=True))
    assert projector.drawn_pixels() > 2000


def test_closing_the_tab_stops_its_tsne_on_the_server(serve, sample_logdir, browser):
    url = serve(sample_logdir, unfollowed_grace=1.0)
    context = browser.new_context()
    page = context.new_page()
    state = {"run": "iris", "embedding": "iris", "projection": "tsne", "tsne": {"nIter": 100000}}
    page.goto(url + "/#s=" + base64.urlsafe_b64encode(json.dumps(state).encode()).decode().rstrip("="))
    page.wait_for_function("() => { const p = window.__projector && window.__projector.app.shown;"
                           " return p && p.jobId && p.status === 'running' && p.iteration > 0; }",
                           timeout=60000)
    job = page.evaluate("window.__projector.app.shown.jobId")
    context.close()  # the tab goes, and its WebSocket with it
    deadline = time.monotonic() + 60
    while httpx.get(f"{url}/api/jobs/{job}", timeout=30).json()["status"] == "running":
        assert time.monotonic() < deadline, "the t-SNE of a closed tab kept running"
        time.sleep(1.5)  # slower than the grace: a poll counts as following
    assert httpx.get(f"{url}/api/jobs/{job}", timeout=30).json()["status"] == "cancelled"


def test_a_stopped_server_is_said_and_the_run_goes_on_once_it_is_back(tmp_path, projector):
    """The server stops under a running UMAP (as Ctrl+C stops ``projector serve``: its jobs
    cancelled first): the page says the server is unreachable, not "Cancelled" nor "Failed
    to fetch", and once a server is back on the same address it starts the UMAP again by
    itself."""
    rng = np.random.default_rng(9)
    add_embedding(tmp_path / "logs", rng.normal(size=(6000, 8)).astype("f4"), tag="many")

    apps = []

    def start(port: int | None = None) -> LiveServer:
        apps.append(create_app(tmp_path / "logs", cache_dir=tmp_path / "cache"))
        server = LiveServer(apps[-1], port)
        server.start()
        return server

    first = start()
    try:
        projector.page.goto(first.url + "/" + state_hash({"projection": "umap"}))
        projector.wait_text("plot-message", "press Run", contains=True)  # 6,000 points
    except Exception:
        first.stop()
        raise
    projector.by("umap-run").click()
    projector.wait_js("app.shown && app.shown.status === 'running' && app.shown.progress > 0")
    job = projector.page.evaluate("window.__projector.app.shown.jobId")
    apps[0].state.projection_service.stop()  # what Ctrl+C does (cli.py on_stop): jobs cancelled,
    first.stop()  # then it stops
    projector.wait_text("status-message", "Server unreachable", contains=True)
    projector.wait_text("umap-status", "server unreachable: goes on once it is back")
    texts = " ".join(projector.page.locator(
        '[data-testid="status-bar"], [data-testid="projections-panel"], .plot-container')
        .all_inner_texts()).lower()
    assert "cancelled" not in texts and "failed" not in texts, texts

    second = start(first.port)
    try:
        projector.wait_text("status-message", "Server back: carrying on")
        projector.page.wait_for_function(
            """(job) => { const p = window.__projector.app.shown;
                return p && p.method === 'umap' && p.jobId !== null && p.jobId !== job; }""",
            arg=job, timeout=90000)  # a new job on the new server, asked by the page itself
        status = projector.by("umap-status").inner_text().lower()
        assert status.startswith(("queued", "running", "done")), status
    finally:
        apps[-1].state.projection_service.stop(wait=True)  # its UMAP ends before the test process
        second.stop()
