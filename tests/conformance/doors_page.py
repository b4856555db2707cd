"""The page door: the web page in headless Chromium (Playwright), over a server of its own.

A cell opens the page on a view (the URL state a link or bookmark carries) or works its
controls, and reads what the page shows and what it asked the server for: a projection is
the result of the job the page started (its columns the ones it shows), neighbours the list
it shows (their distances as the page received them), a search the selection it made.
Only ``window.__projector``'s test hooks, ``data-testid`` controls and the network are read,
never the app's internals.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from playwright.sync_api import Browser, Page, Response, sync_playwright

from tests.conformance.answers import clusters_answer, quality_answer, typed_table
from tests.conformance.dataset import Blobs
from tests.conformance.site import site_answer, unzip

CHROMIUM = os.environ.get("PROJECTOR_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
WAIT_MS = 300_000


def _float32(body: bytes, shape: str) -> np.ndarray:
    return np.frombuffer(body, "<f4").reshape(tuple(int(s) for s in shape.split(","))).copy()


def _hash(state: dict[str, Any]) -> str:
    """The URL hash the page reads a view from (base64url JSON, state.js)."""
    return "#s=" + base64.urlsafe_b64encode(json.dumps(state).encode()).decode().rstrip("=")


@contextmanager
def chromium() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


class PageDoor:
    def __init__(self, browser: Browser, url: str, blobs: Blobs, work: Path) -> None:
        self.browser = browser
        self.url = url
        self.blobs = blobs
        self.work = work

    @contextmanager
    def _page(self, path: str = "/",
              state: dict[str, Any] | None = None) -> Iterator[tuple[Page, list[Response]]]:
        """A fresh tab on ``path`` (with ``state`` as its view), ready; every response it got."""
        context = self.browser.new_context(viewport={"width": 1280, "height": 800},
                                           accept_downloads=True)
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        responses: list[Response] = []
        page.on("response", lambda response: responses.append(response))
        try:
            page.goto(self.url + path + (_hash(state) if state else ""))
            if path == "/":
                page.wait_for_function("window.__projector && window.__projector.ready")
            yield page, responses
        finally:
            context.close()
        assert errors == [], f"uncaught errors in the page: {errors}"

    @staticmethod
    def _view(request: dict[str, Any], **view: Any) -> dict[str, Any]:
        return {"run": request["run"], "embedding": request["embedding"], "sprites": False, **view}

    @staticmethod
    def _done(page: Page, method: str) -> None:
        page.wait_for_function(
            """(method) => { const p = window.__projector.projection();
                return p && p.method === method && p.status === 'done'; }""", arg=method)

    def _received(self, page: Page, responses: list[Response], method: str) -> np.ndarray:
        """The coordinates of the page's ``method`` projection, once the page shows it done:
        as the page received them (a quick method's answer to ``?wait=true``), or its job's
        result (a t-SNE or UMAP followed over the job's stream)."""
        self._done(page, method)
        started = [r for r in responses if r.url.split("?")[0].endswith("/api/projections")
                   and r.request.method == "POST" and r.request.post_data_json["method"] == method]
        assert started, f"the page asked for no {method} projection"
        answer = started[-1]
        if "x-shape" in answer.headers:
            return _float32(answer.body(), answer.headers["x-shape"])
        response = httpx.get(f"{self.url}/api/jobs/{answer.json()['job']}/result", timeout=60,
                             headers={"Accept": "application/octet-stream"})
        return _float32(response.content, response.headers["x-shape"])

    def _shown(self, request: dict[str, Any], method: str, view: dict[str, Any],
               columns: Callable[[dict[str, Any]], list[int]]) -> np.ndarray:
        with self._page("/", self._view(request, projection=method, **view)) as (page, responses):
            coordinates = self._received(page, responses, method)
            state = page.evaluate("window.__projector.state()")
        return coordinates[:, columns(state)]

    # -- the operations ----------------------------------------------------------------------
    def load(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._page("/", self._view(request)) as (page, _):
            page.locator("details.subsection summary").first.click()
            page.locator('[data-testid="upload-tensor"]').set_input_files(str(self.blobs.npy))
            page.locator('[data-testid="upload-metadata"]').set_input_files(str(self.blobs.tsv))
            page.locator('[data-testid="upload-apply"]').click()
            page.wait_for_function("window.__projector.state().run.startsWith('upload-')")
            page.wait_for_function("window.__projector && window.__projector.ready")
            state = page.evaluate("window.__projector.state()")
        names = {"run": state["run"], "embedding": state["embedding"]}
        runs = httpx.get(f"{self.url}/api/runs", timeout=60).json()
        (listed,) = [e for r in runs if r["name"] == names["run"] for e in r["embeddings"]]
        table = httpx.get(f"{self.url}/api/metadata", params=names, timeout=60).text
        return {"rows": listed["shape"][0], "metadata": typed_table(table)}

    def pca_2d(self, request: dict[str, Any]) -> np.ndarray:
        return self._shown(request, "pca", {"pca": {"is3d": False, **request["params"]}},
                           lambda s: [s["pca"]["x"], s["pca"]["y"]])

    def pca_3d(self, request: dict[str, Any]) -> np.ndarray:
        return self._shown(request, "pca", {"pca": {"is3d": True, **request["params"]}},
                           lambda s: [s["pca"]["x"], s["pca"]["y"], s["pca"]["z"]])

    def tsne(self, request: dict[str, Any]) -> np.ndarray:
        params = request["params"]
        view = {"tsne": {"perplexity": params["perplexity"], "nIter": params["n_iter"],
                         "learningRate": None if params["learning_rate"] == "auto"
                         else params["learning_rate"]}}
        return self._shown(request, "tsne", view, lambda s: [0, 1])

    def umap(self, request: dict[str, Any]) -> np.ndarray:
        params = request["params"]
        view = {"umap": {"nNeighbors": params["n_neighbors"], "minDist": params["min_dist"]}}
        return self._shown(request, "umap", view, lambda s: [0, 1])

    def neighbors_of_row(self, request: dict[str, Any]) -> dict[str, Any]:
        view = self._view(request, selection=[request["index"]], focus=request["index"],
                          neighbors={"k": request["k"], "metric": request["metric"]})
        with self._page("/", view) as (page, responses):
            page.wait_for_function(f"document.querySelectorAll('[data-testid=neighbors-list] li')"
                                   f".length === {request['k']}")
            shown = [int(i) for i in page.eval_on_selector_all(
                "[data-testid=neighbors-list] li", "rows => rows.map(r => r.dataset.index)")]
            asked = [r for r in responses if "/api/neighbors" in r.url]
            received = asked[-1].json()["neighbors"]
        assert shown == [n["index"] for n in received], "the page shows what it received"
        return {"indices": shown, "distances": [n["distance"] for n in received]}

    def search(self, request: dict[str, Any]) -> list[int]:
        with self._page("/", self._view(request)) as (page, _):
            page.locator('[data-testid="search-column"]').select_option(request["column"])
            page.locator('[data-testid="search-input"]').fill(request["query"])
            page.wait_for_function("window.__projector.state().selection.length > 0")
            return sorted(page.evaluate("window.__projector.state().selection"))

    def _structure(self, request: dict[str, Any], ask: Callable[[Page], None], route: str) -> Any:
        view = self._view(request, projection="pca", pca={"is3d": False})
        with self._page("/", view) as (page, _):
            self._done(page, "pca")
            # The answer itself: not a 202 naming the job that computes it (background=true).
            with page.expect_response(lambda r: f"/{route}?" in r.url and r.status == 200
                                      and "background=true" not in r.url) as answered:
                ask(page)
            return answered.value.json()

    def clusters(self, request: dict[str, Any]) -> dict[str, Any]:
        def ask(page: Page) -> None:
            page.locator('[data-testid="cluster-min-size"]').fill(str(request["min_cluster_size"]))
            page.locator('[data-testid="cluster-label-column"]').select_option(request["label_column"])
            page.locator('[data-testid="cluster-run"]').click()
        return clusters_answer(self._structure(request, ask, "clusters"))

    def quality(self, request: dict[str, Any]) -> dict[str, Any]:
        def ask(page: Page) -> None:
            page.locator('[data-testid="quality-toggle"]').check()
        return quality_answer(self._structure(request, ask, "quality"))

    def compare(self, request: dict[str, Any]) -> dict[str, Any]:
        """The Compare page opens on the offered pair (the blobs' two steps) and compares it."""
        with self._page("/compare") as (page, responses):
            page.wait_for_function("window.__compare && window.__compare.shown")
            answers = [r for r in responses if "/api/compare?" in r.url
                       and "background" not in r.url and r.ok]
            body = answers[-1].json()
        return {"k": body["k"], "mean": body["mean"], "most_changed": body["most_changed"][:request["top"]]}

    def export(self, request: dict[str, Any]) -> dict[str, Any]:
        """The site.zip the page's button saves (PCA, and the projection on screen), holding
        the view's neighbours: the view asks the request's k."""
        view = self._view(request, projection="pca",
                          neighbors={"k": request["neighbors"], "metric": "cosine"})
        with self._page("/", view) as (page, _):
            self._done(page, "pca")
            with page.expect_download() as saved:
                page.locator('[data-testid="export-site"]').click()
            body = Path(saved.value.path()).read_bytes()
        site = unzip(body, self.work / "page-site")
        return site_answer(site, request["run"], request["embedding"])
