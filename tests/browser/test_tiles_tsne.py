"""A t-SNE shown from its tiles (issue 25): where its layout is too large to come to the page
whole (``tsne_umap_tiles`` in ``/api/runs``; forced here with ``?tiles=always``), the page
follows the job for status alone (progress, phase, pause), never downloads a frame or the
result, shows the points placed so far from early tiles while it runs (asked again as its
progress moves), draws the finished layout from its tiles, and answers hover and click through the
server's pick over every point (``?tilePoints=`` keeps fewer in the tab)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from projector.server.app import create_app

from projector_core.tiles.store import LodStore
from tests.browser.conftest import state_hash
from tests.browser.test_ui_scale import hover_nearest, screen_of
from tests.builders import write_pbtxt_run
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

N = 20_000
BUDGET = 2048  # points a tile holds: several levels over 20k points
STATE = {"run": "run", "embedding": "points", "projection": "tsne", "tsne": {"nIter": 400},
         "sprites": False, "labelBy": "name"}
REQUESTS = """performance.getEntriesByType('resource')
  .map((e) => new URL(e.name).pathname + new URL(e.name).search)"""
SHOWN = "window.__projector.app.shown"


@pytest.fixture
def served(tmp_path) -> Iterator[str]:
    """20k x 16 points in 12 blobs, each named, under uvicorn with small tiles."""
    rng = np.random.default_rng(4)
    blob = rng.integers(0, 12, N)
    tensor = (rng.normal(0, 6, (12, 16))[blob] + rng.normal(0, 1, (N, 16))).astype("<f4")
    write_pbtxt_run(
        tmp_path / "logs" / "run",
        f'embeddings {{ tensor_name: "points" tensor_path: "t.bytes" tensor_shape: {N} '
        'tensor_shape: 16 metadata_path: "meta.tsv" }',
        {"t.bytes": tensor.tobytes(),
         "meta.tsv": "name\tblob\n" + "".join(f"p{i}\tb{b}\n" for i, b in enumerate(blob))})
    app = create_app(tmp_path / "logs", cache_dir=tmp_path / "cache")
    app.state.projection_service.lod = LodStore(budget=BUDGET)
    server = LiveServer(app)
    server.start()
    yield server.url
    server.stop()


def test_a_tsne_too_large_to_come_whole_is_followed_then_shown_from_tiles(served, projector):
    page = projector.page
    page.goto(served + "/?tiles=always&tilePoints=8000" + state_hash(STATE))

    # While it runs (the page is not ready: nothing shown yet): its progress in the bar, and
    # pause and resume hold and free the job.
    page.wait_for_function(f"""window.__projector && {SHOWN}
        && {SHOWN}.status === 'running' && {SHOWN}.jobId !== null""", timeout=60000)
    job = page.evaluate(f"{SHOWN}.jobId")
    projector.wait_text("progress-label", "t-SNE: ", contains=True)
    projector.wait_js("app.shown.phase === 'optimisation' && app.shown.iteration > 0")
    assert "%" in projector.by("progress-label").inner_text()
    projector.by("tsne-pause").click()
    projector.wait_js("app.shown.paused === true")
    assert httpx.get(f"{served}/api/jobs/{job}", timeout=30).json()["paused"] is True
    projector.by("tsne-pause").click()
    projector.wait_js("app.shown.paused === false")
    # Meanwhile its picture: the points placed so far, the early root tile of its last frame.
    projector.wait_js("app.shown.running && app.plot.preview.count > 1000")

    # Done: drawn from its tiles, the whole layout never in the tab.
    projector.wait_projection("tsne", "done", timeout=120000)
    projector.wait_ready()
    plot = "window.__projector.app.plot"
    page.wait_for_function(f"""{SHOWN}.source !== null && {plot}.source === {SHOWN}.source
        && {plot}.source.resident.size > 0 && {plot}.source.loading.size === 0""")
    assert page.evaluate(f"[{SHOWN}.data, {SHOWN}.frames, {plot}.n]") == [None, 0, 0]
    assert page.evaluate(f"{plot}.source.everyResident") is False  # the server answers
    requests = page.evaluate(REQUESTS)
    assert any(f"/api/jobs/{job}/tiles/" in r for r in requests)
    assert not [r for r in requests if "/result" in r or "wait=true" in r]
    early = [r for r in requests if f"/api/jobs/{job}/tiles/0/0/0" in r and "early=true" in r]
    assert len(early) >= 2  # asked again as the progress moved
    projector.wait_settled()
    assert projector.drawn_pixels() > 500

    # Hover: the nearest of all 20k points to the cursor, by the server's pick.
    answer = httpx.get(f"{served}/api/jobs/{job}/result", timeout=60,
                       headers={"Accept": "application/octet-stream"})
    layout = np.frombuffer(answer.content, "<f4").reshape(N, 2)
    box = projector.by("plot").bounding_box()
    hovered, (x, y) = hover_nearest(page, screen_of(layout, page), box, (0.45, 0.5),
                                    tolerance=1e-3)
    # (a tiled view names a point by its row where the tiles do not carry its 20k names)
    assert projector.by("tooltip").inner_text() == f"#{hovered}"
    assert any(f"/api/jobs/{job}/pick?" in r for r in page.evaluate(REQUESTS))
    page.mouse.click(x, y)
    projector.wait_js(f"window.__projector.state().focus === {hovered}")
    assert projector.projection()["status"] == "done"
