"""Who may drive a live server (issue 26): writes from another site are 403, and with a token
every route, static file and WebSocket is 401 without it and answered with it. Reads from
another site's pages (issue 38): tests/test_resource_isolation.py."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from projector.client.answers import ProjectorError
from projector.client.api import ProjectorClient
from projector.local_server import memory_server
from tests.test_cli import _free_port

EVIL = "http://evil.example"
TOKEN = "s3cret-token"
UPLOAD = {"tensor": ("mine.tsv", b"1\t2\n3\t4\n5\t6\n", "text/tab-separated-values")}
TSNE = {"run": "digits", "embedding": "digits", "method": "tsne",
        "params": {"perplexity": 5, "n_iter": 100000}}
PCA = {"run": "iris", "embedding": "iris", "method": "pca"}


def _ws(url: str) -> str:
    return url.replace("http", "ws", 1)


def _own(http: httpx.Client) -> str:
    """The server's own origin, as its pages send it."""
    return str(http.base_url).rstrip("/")


def _refused(response: httpx.Response, status: int = 403) -> str:
    assert response.status_code == status, response.text
    return response.json()["detail"]


@pytest.fixture
def http(serve, sample_logdir) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=serve(sample_logdir, refresh_seconds=0), timeout=60) as client:
        yield client


def _runs(http: httpx.Client) -> set[str]:
    return {run["name"] for run in http.get("/api/runs").json()}


def test_cross_site_upload_is_refused_and_no_run_appears(http):
    before = _runs(http)
    detail = _refused(http.post("/api/uploads", files=UPLOAD, headers={"Origin": EVIL}))
    assert "cross-site" in detail and "evil.example" in detail
    assert _runs(http) == before
    same_site = http.post("/api/uploads", files=UPLOAD, headers={"Sec-Fetch-Site": "same-site"})
    assert "Sec-Fetch-Site" in _refused(same_site)
    assert _refused(http.post("/api/uploads", files=UPLOAD, headers={"Origin": "null"}))
    assert _runs(http) == before


def test_same_origin_and_origin_less_uploads_are_created(http):
    own = _own(http)
    assert http.post("/api/uploads", files=UPLOAD, headers={"Origin": own}).status_code == 201
    assert http.post("/api/uploads", files=UPLOAD).status_code == 201  # curl, scripts
    browser = {"Origin": own, "Sec-Fetch-Site": "same-origin"}
    assert http.post("/api/uploads", files=UPLOAD, headers=browser).status_code == 201


def test_cross_site_job_start_pause_resume_and_cancel_are_refused(http):
    assert "cross-site" in _refused(http.post("/api/projections", json=TSNE,
                                              headers={"Origin": EVIL}))
    started = http.post("/api/projections", json=TSNE, headers={"Origin": _own(http)})
    assert started.status_code == 202, started.text
    job = started.json()["job"]
    try:
        for action in ("pause", "resume"):
            _refused(http.post(f"/api/jobs/{job}/{action}", headers={"Origin": EVIL}))
            _refused(http.post(f"/api/jobs/{job}/{action}",
                               headers={"Sec-Fetch-Site": "cross-site"}))
        _refused(http.delete(f"/api/jobs/{job}", headers={"Origin": EVIL}))
        assert http.get(f"/api/jobs/{job}").json()["paused"] is False
        assert http.post(f"/api/jobs/{job}/pause").json()["paused"] is True  # no Origin: a script
        own = {"Origin": _own(http), "Sec-Fetch-Site": "same-origin"}
        assert http.post(f"/api/jobs/{job}/resume", headers=own).json()["paused"] is False
    finally:
        assert http.delete(f"/api/jobs/{job}").status_code == 200


def test_cross_site_session_state_is_refused(http):
    _refused(http.post("/api/session/state", json={"selection": [1, 2]},
                       headers={"Origin": EVIL}))
    _refused(http.post("/api/session/state", content=b'{"selection": [1]}',
                       headers={"Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain"}))
    assert http.get("/api/session/state").json()["selection"] in ([], None)
    posted = http.post("/api/session/state", json={"selection": [3]},
                       headers={"Origin": _own(http)})
    assert posted.status_code == 200 and posted.json()["selection"] == [3]


def test_a_proxied_page_writes_when_its_browser_says_same_origin(serve, sample_logdir):
    """Colab and jupyter-server-proxy rewrite Host: the page's Origin is the proxy's."""
    proxy = "https://hub.example"
    url = serve(sample_logdir, refresh_seconds=0, allowed_hosts=["*"])
    state = {"selection": [1]}
    post = f"{url}/api/session/state"
    assert httpx.post(post, json=state, headers={"Origin": proxy}).status_code == 403
    assert httpx.post(post, json=state, headers={
        "Origin": proxy, "Sec-Fetch-Site": "same-origin"}).status_code == 200
    configured = serve(sample_logdir, refresh_seconds=0, allowed_origins=[f"{proxy}/user/me/"])
    response = httpx.post(f"{configured}/api/session/state", json=state,
                          headers={"Origin": proxy + ":443"})
    assert response.status_code == 200


def test_a_websocket_from_a_foreign_origin_is_refused(http):
    job = http.post("/api/projections", json=PCA).json()["job"]
    stream = _ws(f"{_own(http)}/api/jobs/{job}/stream")
    with pytest.raises(InvalidStatus) as refused:
        connect(stream, origin=EVIL)
    assert refused.value.response.status_code == 403
    with connect(stream, origin=_own(http)) as socket:
        assert '"done"' in list(socket)[-1]


# -- the token ---------------------------------------------------------------------------------

ROUTES = ["/api/health", "/api/runs", "/api/tensor?run=iris&embedding=iris",
          "/api/metadata?run=iris&embedding=iris", "/api/session/state",
          "/api/projections/methods?run=iris&embedding=iris", "/api/steps?run=iris",
          "/openapi.json", "/", "/compare", "/static/js/app.js", "/static/css/app.css"]


@pytest.fixture
def guarded(serve, sample_logdir) -> str:
    return serve(sample_logdir, refresh_seconds=0, token=TOKEN)


@pytest.mark.parametrize("route", ROUTES)
def test_every_route_needs_the_token(guarded, route):
    missing = httpx.get(guarded + route)
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == "Bearer"
    if route.startswith(("/api", "/openapi")):
        assert "token" in missing.json()["detail"]
    else:
        assert missing.text.startswith("401 Unauthorized") and TOKEN not in missing.text
    wrong = httpx.get(guarded + route, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and "wrong token" in wrong.text
    answered = httpx.get(guarded + route, headers={"Authorization": f"Bearer {TOKEN}"})
    assert answered.status_code == 200, answered.text


def test_writes_and_the_websocket_need_the_token(guarded):
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    assert httpx.post(f"{guarded}/api/uploads", files=UPLOAD).status_code == 401
    assert httpx.post(f"{guarded}/api/projections", json=PCA).status_code == 401
    # the token in a write's URL is refused: it belongs in a header
    assert httpx.post(f"{guarded}/api/projections?token={TOKEN}", json=PCA).status_code == 401
    assert httpx.post(f"{guarded}/api/uploads", files=UPLOAD, headers=bearer).status_code == 201
    job = httpx.post(f"{guarded}/api/projections", json=PCA, headers=bearer).json()["job"]
    stream = _ws(f"{guarded}/api/jobs/{job}/stream")
    with pytest.raises(InvalidStatus) as refused:
        connect(stream)
    assert refused.value.response.status_code == 401
    with connect(stream, additional_headers=bearer) as socket:
        assert '"done"' in list(socket)[-1]
    with connect(f"{stream}?token={TOKEN}") as socket:
        assert '"done"' in list(socket)[-1]


def test_token_in_the_page_url_sets_a_strict_cookie_and_leaves_the_url(guarded):
    first = httpx.get(f"{guarded}/?embed=1&token={TOKEN}")
    assert first.status_code == 303
    assert first.headers["location"] == "./?embed=1"
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and TOKEN not in cookie
    assert httpx.get(f"{guarded}/compare?token={TOKEN}").headers["location"] == "./compare"
    assert httpx.get(f"{guarded}/?token=wrong").status_code == 401
    with httpx.Client(base_url=guarded, follow_redirects=True) as browser:
        page = browser.get(f"/?token={TOKEN}")
        assert page.status_code == 200 and str(page.url) == f"{guarded}/"
        for route in ROUTES:
            assert browser.get(route).status_code == 200, route
        job = browser.post("/api/projections", json=PCA).json()["job"]
        cookies = "; ".join(f"{name}={value}" for name, value in browser.cookies.items())
    with connect(_ws(f"{guarded}/api/jobs/{job}/stream"),
                 additional_headers={"Cookie": cookies}) as socket:
        assert '"done"' in list(socket)[-1]


def test_the_app_under_its_token_path_needs_no_cookie(guarded):
    """How the widget's iframe reaches a server with a token from another site's page."""
    under = f"{guarded}/token/{TOKEN}"
    for route in ROUTES:
        assert httpx.get(under + route).status_code == 200, route
    assert httpx.get(f"{guarded}/token/wrong/api/runs").json()["detail"] == "wrong token"
    assert httpx.get(f"{guarded}/token/wrong/").text.startswith("401 Unauthorized")
    assert httpx.post(f"{under}/api/uploads", files=UPLOAD).status_code == 201
    job = httpx.post(f"{under}/api/projections", json=PCA).json()["job"]
    with connect(_ws(f"{under}/api/jobs/{job}/stream"), origin=guarded) as socket:
        assert '"done"' in list(socket)[-1]
    cross_site = httpx.post(f"{under}/api/uploads", files=UPLOAD, headers={"Origin": EVIL})
    assert cross_site.status_code == 403


def test_an_in_process_server_takes_a_token(monkeypatch):
    """``projector.show`` and the widget's server: the token from the call or the environment."""
    vectors = np.random.default_rng(0).normal(size=(30, 4))
    monkeypatch.setenv("PROJECTOR_TOKEN", TOKEN)
    server = memory_server(vectors)
    try:
        assert server.page_url == f"{server.url}?token={TOKEN}"
        assert httpx.get(f"{server.url}api/runs").status_code == 401
        assert httpx.get(server.url + server.token_path + "api/runs").status_code == 200
        with httpx.Client(follow_redirects=True) as browser:
            assert "Projector" in browser.get(server.page_url).text
    finally:
        server.stop()
    monkeypatch.delenv("PROJECTOR_TOKEN")
    server = memory_server(vectors, token="given")
    try:
        assert server.token_path == "token/given/"
        assert httpx.get(f"{server.url}api/runs",
                         headers={"Authorization": "Bearer given"}).status_code == 200
    finally:
        server.stop()


def test_the_python_client_sends_the_token(guarded, monkeypatch):
    with pytest.raises(ProjectorError) as refused:
        ProjectorClient(guarded).runs()
    assert refused.value.status == 401
    assert "iris" in {run["name"] for run in ProjectorClient(guarded, token=TOKEN).runs()}
    monkeypatch.setenv("PROJECTOR_TOKEN", TOKEN)
    client = ProjectorClient(guarded)
    xy = client.project("iris", "iris", "pca")
    assert xy.shape[0] == 150 and np.isfinite(xy).all()
    streamed = asyncio.run(client.project_async("iris", "iris", "pca"))  # over the WebSocket
    np.testing.assert_array_equal(streamed.coordinates, xy)


# -- the command line --------------------------------------------------------------------------


def _serve_until(args: list[str], tmp_path, pattern: str) -> tuple[re.Match[str], int, str]:
    """Start ``projector serve``, read stdout until ``pattern``; (match, port, stderr)."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "projector.server.cli", "serve", "--port", str(port),
         "--cache-dir", str(tmp_path / "cache"), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        assert process.stdout is not None
        for line in process.stdout:
            found = re.search(pattern, line)
            if found or time.monotonic() > deadline:
                break
        assert found, "the URL was never printed"
        if "--no-token" not in args:
            url = f"http://127.0.0.1:{port}/api/runs"
            assert httpx.get(url).status_code == 401
            token = found.groupdict().get("token") or TOKEN
            authorized = httpx.get(url, headers={"Authorization": f"Bearer {token}"})
            assert authorized.status_code == 200
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=20)
    return found, port, stderr


def test_bound_beyond_loopback_the_server_makes_a_token_and_prints_its_url(tmp_path):
    found, port, _ = _serve_until(["--host", "0.0.0.0"], tmp_path,
                                  r"at (http://\S+):(\d+)/\?token=(?P<token>[\w-]{20,})")
    assert int(found.group(2)) == port


def test_a_given_token_is_required_and_not_printed(tmp_path):
    found, _, _ = _serve_until(["--token", TOKEN], tmp_path, r"\?token=YOUR_TOKEN")
    assert TOKEN not in found.string


def test_no_token_beyond_loopback_warns(tmp_path):
    _, _, stderr = _serve_until(["--host", "0.0.0.0", "--no-token"], tmp_path,
                                r"at http://\S+:\d+/  ")
    assert "without a token" in stderr
