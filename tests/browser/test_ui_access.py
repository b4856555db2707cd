"""Who may drive the server, in a real browser (issue 26): another site's page cannot upload;
with a token, the page opened once with ``?token=`` draws, keeps working across a reload (the
cookie) and streams a job."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator

import httpx
import numpy as np
import pytest

from projector_core.formats.writer import add_embedding

pytestmark = pytest.mark.browser

TOKEN = "browser-token"


@pytest.fixture
def small_logdir(tmp_path):
    rng = np.random.default_rng(5)
    vectors = np.concatenate([rng.normal(0, 1, (60, 5)), rng.normal(6, 1, (60, 5))]).astype("f4")
    labels = [f"p{i}" for i in range(len(vectors))]
    add_embedding(tmp_path, vectors, metadata=labels, tag="small")
    return tmp_path


def test_page_opened_with_its_token_draws_reloads_and_streams_a_job(serve, small_logdir,
                                                                    projector):
    url = serve(small_logdir, token=TOKEN)
    page = projector.page
    sockets: list[dict] = []

    def watch(socket) -> None:
        record = {"url": socket.url, "frames": 0}
        sockets.append(record)
        socket.on("framereceived", lambda _: record.update(frames=record["frames"] + 1))

    page.on("websocket", watch)
    page.goto(f"{url}/?token={TOKEN}")
    projector.wait_ready()
    assert page.url == f"{url}/", "the token leaves the address bar"
    cookie, = page.context.cookies()
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and TOKEN not in cookie["value"]
    projector.wait_settled()
    assert projector.drawn_pixels() > 100

    page.reload()
    projector.wait_ready()
    projector.wait_settled()
    assert projector.drawn_pixels() > 100, "the reload, without the token, still draws"

    projector.by("tab-tsne").click()
    done = projector.wait_projection("tsne", "done", timeout=120000)
    assert done["iteration"] > 0
    streams = [s for s in sockets if "/api/jobs/" in s["url"] and s["url"].endswith("/stream")]
    assert streams and streams[-1]["frames"] > 1, f"the job streamed over its WebSocket: {sockets}"


def test_a_browser_without_the_token_is_refused(serve, small_logdir, browser):
    url = serve(small_logdir, token=TOKEN)
    context = browser.new_context()
    try:
        page = context.new_page()
        response = page.goto(f"{url}/")
        assert response.status == 401
        assert "token" in page.inner_text("body")
        assert page.goto(f"{url}/?token=wrong").status == 401
    finally:
        context.close()


EVIL_PAGE = """<!doctype html><script type="module">
const form = new FormData();
form.append('tensor', new Blob(['1\\t2\\n3\\t4\\n']), 'evil.tsv');
const target = new URLSearchParams(location.search).get('target');
await fetch(target + '/api/uploads', { method: 'POST', body: form, mode: 'no-cors' });
window.sent = true;
</script>"""


@pytest.fixture
def other_site(tmp_path) -> Iterator[str]:
    """A page of another site: a plain file server, reached as localhost (not 127.0.0.1)."""
    folder = tmp_path / "evil"
    folder.mkdir()
    (folder / "index.html").write_text(EVIL_PAGE)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://localhost:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_another_sites_page_cannot_upload(serve, small_logdir, browser, other_site):
    url = serve(small_logdir)
    before = httpx.get(f"{url}/api/runs").json()
    context = browser.new_context()
    try:
        page = context.new_page()
        with page.expect_response(f"{url}/api/uploads") as answer:
            page.goto(f"{other_site}?target={url}")
        page.wait_for_function("window.sent === true")
        assert answer.value.status == 403, "the browser's cross-site POST reached the server"
    finally:
        context.close()
    assert httpx.get(f"{url}/api/runs").json() == before
