"""Only the user's pages, in a real browser (issue 38): a page served from another origin
(another port of 127.0.0.1, so the same site) embeds the costly reads as images and scripts;
the server answers 403 and starts no job. The app's own page still computes them, a link from
that other page still opens the app, and no Content-Security-Policy violation is reported
(the ``projector`` fixture counts them as page errors)."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Callable, Iterator

import httpx
import numpy as np
import pytest
from playwright.sync_api import Page

from projector_core.formats.writer import add_embedding

pytestmark = pytest.mark.browser

OTHER_PAGE = """<!doctype html>
<p>Another site</p>
<a id="open" href="{target}/">Open the projector</a>
<script>window.settled = [];</script>
{embeds}"""
EMBED = ('<{tag} src="{address}" onload="settled.push(\'loaded\')" '
         'onerror="settled.push(\'failed\')"></{tag}>')


@pytest.fixture
def small_logdir(tmp_path):
    rng = np.random.default_rng(5)
    vectors = np.concatenate([rng.normal(0, 1, (60, 5)), rng.normal(6, 1, (60, 5))]).astype("f4")
    add_embedding(tmp_path / "logs", vectors, metadata=[f"p{i}" for i in range(120)], tag="small")
    return tmp_path / "logs"


@pytest.fixture
def other_origin(tmp_path) -> Iterator[Callable[[str], str]]:
    """``page(html) -> url``: a page of a plain file server on another port of 127.0.0.1."""
    folder = tmp_path / "other"
    folder.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def page(html: str) -> str:
        (folder / "index.html").write_text(html)
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield page
    server.shutdown()
    server.server_close()


def network_answers(page: Page) -> Callable[[], dict[str, list[int]]]:
    """Each URL's HTTP statuses as the network saw them, read through the DevTools protocol:
    the page never sees a refused cross-origin answer (Chromium's opaque-response blocking
    drops it, and Playwright's response event with it). The events of one request may come
    in either order, so they are paired by request id only when read."""
    urls: dict[str, str] = {}
    statuses: dict[str, list[int]] = {}
    session = page.context.new_cdp_session(page)
    session.on("Network.requestWillBeSent",
               lambda event: urls.__setitem__(event["requestId"], event["request"]["url"]))
    session.on("Network.responseReceivedExtraInfo", lambda event: statuses.setdefault(
        event["requestId"], []).append(event["statusCode"]))
    session.send("Network.enable")

    def answers() -> dict[str, list[int]]:
        by_url: dict[str, list[int]] = {}
        for request, seen in statuses.items():
            by_url.setdefault(urls.get(request, ""), []).extend(seen)
        return by_url
    return answers


def test_another_origins_page_cannot_make_the_server_work(serve, small_logdir, other_origin,
                                                          projector):
    url = serve(small_logdir)
    run = httpx.get(f"{url}/api/runs").json()[0]
    names = {"run": run["name"], "embedding": run["embeddings"][0]["name"]}
    pca = {**names, "method": "pca"}
    job = httpx.post(f"{url}/api/projections", json=pca).json()["job"]
    assert httpx.post(f"{url}/api/projections", params={"wait": True}, json=pca).status_code == 200
    costly = [f"{url}/api/export/site?{httpx.QueryParams({**names, 'projection': 'umap'})}",
              f"{url}/api/jobs/{job}/quality"]
    embeds = "\n".join(EMBED.format(tag=tag, address=address) for address in costly
                       for tag in ("img", "script"))
    def job_ids() -> set[str]:
        """The jobs someone asked for, by id: not snapshots (the server's own work moves
        meanwhile), nor its own background jobs (the default view may be prepared meanwhile)."""
        return {listed["id"] for listed in httpx.get(f"{url}/api/jobs").json()["jobs"]
                if listed["priority"] == "requested"}

    before = job_ids()

    page = projector.page
    read_answers = network_answers(page)
    page.goto(other_origin(OTHER_PAGE.format(target=url, embeds=embeds)))
    page.wait_for_function("window.settled.length === 4")
    assert page.evaluate("window.settled") == ["failed"] * 4
    answers = read_answers()
    for _ in range(50):  # the protocol's events may trail the page's own
        if all(answers.get(address) for address in costly):
            break
        page.wait_for_timeout(100)
        answers = read_answers()
    for address in costly:
        # Every request the <img> and the <script> made was refused (Chromium may send one
        # request for both when they ask for the same address at once).
        assert answers.get(address) and set(answers[address]) == {403}, (address, answers)
    assert job_ids() == before, "another origin's page started a job"

    page.click("#open")  # a link (navigation) from the other origin opens the app
    projector.wait_ready()
    assert page.url.split("#")[0] == f"{url}/"
    projector.wait_settled()
    assert projector.drawn_pixels() > 100
    own = page.evaluate("async (address) => (await fetch(address)).status", costly[1])
    assert own == 200, "the app's own page computes the quality"
    assert not projector.errors, projector.errors  # Content-Security-Policy refusals included
