"""Only the user's pages (issue 38): a request a browser marks as made by a page of another
origin is 403 on every route before any work starts, except a link or an iframe opening one of
the app's pages; requests without those headers (curl, scripts, the Python client) pass. And
every answer carries the security headers. In a real browser: tests/browser/test_ui_isolation.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from projector.local_server import memory_server

EVIL = "http://evil.example"
TOKEN = "isolation-token"
EXPORT = "/api/export/site?run=iris&embedding=iris&projection=umap"
# What a browser sends for an <img> and a <script> of another site's page, a fetch() from a
# page on another port of this host, a link and the widget's iframe in Jupyter's page.
IMAGE = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}
SCRIPT = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"}
OTHER_PORT = {"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty",
              "Origin": "http://127.0.0.1:1"}
LINK = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
IFRAME = {"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}
OWN = {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}
TYPED = {"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
       "connect-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'none'; "
       "form-action 'self'")


@pytest.fixture
def http(serve, sample_logdir) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=serve(sample_logdir, refresh_seconds=0), timeout=60) as client:
        yield client


def _jobs(http: httpx.Client) -> set[str]:
    """The jobs' ids: not their snapshots, which the server's own work moves meanwhile."""
    return {job["id"] for job in http.get("/api/jobs").json()["jobs"]}


def _pca_job(http: httpx.Client) -> str:
    """A done job (the second request waits for the first's, the same job)."""
    pca = {"run": "iris", "embedding": "iris", "method": "pca"}
    job = http.post("/api/projections", json=pca).json()["job"]
    assert http.post("/api/projections", params={"wait": True}, json=pca).status_code == 200
    return job


def test_costly_reads_embedded_by_another_site_are_refused_before_any_work(http):
    job = _pca_job(http)
    before = _jobs(http)
    for headers in (IMAGE, SCRIPT, OTHER_PORT, {**LINK, "Sec-Fetch-Dest": "embed"}):
        for route in (EXPORT, f"/api/jobs/{job}/quality", "/api/runs", "/api/health",
                      "/static/js/app.js"):
            answer = http.get(route, headers=headers)
            assert answer.status_code == 403, (route, headers)
            assert "cross-site request refused" in answer.json()["detail"]
            assert "access-control-allow-origin" not in answer.headers
    assert _jobs(http) == before, "a refused read started a job"


def test_a_link_to_a_costly_read_is_refused_a_link_to_a_page_opens_it(http):
    before = _jobs(http)
    assert http.get(EXPORT, headers=LINK).status_code == 403
    assert http.get("/api/runs", headers=LINK).status_code == 403
    assert _jobs(http) == before
    for page in ("/", "/?embed=1", "/compare", "/docs"):
        for headers in (LINK, IFRAME):
            answer = http.get(page, headers=headers)
            assert answer.status_code == 200, (page, headers)
            assert answer.headers["content-type"].startswith("text/html")


def test_the_pages_own_requests_a_typed_url_and_scripts_pass(http):
    for headers in (OWN, TYPED, {}):
        assert http.get("/api/runs", headers=headers).status_code == 200
    own = {**OWN, "Origin": str(http.base_url).rstrip("/")}
    assert http.get("/static/js/app.js", headers=own).status_code == 200


def test_a_websocket_from_another_port_of_this_host_is_refused(http):
    job = _pca_job(http)
    stream = str(http.base_url).rstrip("/").replace("http", "ws", 1) + f"/api/jobs/{job}/stream"
    with pytest.raises(InvalidStatus) as refused:
        connect(stream, origin="http://127.0.0.1:1")
    assert refused.value.response.status_code == 403
    assert refused.value.response.headers["x-content-type-options"] == "nosniff"


def test_a_proxy_origin_allowed_by_the_server_reads(serve, sample_logdir):
    proxy = "https://hub.example"
    url = serve(sample_logdir, refresh_seconds=0, allowed_origins=[f"{proxy}/user/me/"])
    headers = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors", "Origin": proxy}
    assert httpx.get(f"{url}/api/runs", headers=headers).status_code == 200
    assert httpx.get(f"{url}/api/runs", headers={**headers, "Origin": EVIL}).status_code == 403
    csp = httpx.get(f"{url}/").headers["content-security-policy"]
    assert csp.endswith("frame-ancestors 'self' https://hub.example:443")


def test_the_widget_iframe_opens_the_token_path_and_its_requests_pass(serve, sample_logdir):
    url = serve(sample_logdir, refresh_seconds=0, token=TOKEN)
    under = f"{url}/token/{TOKEN}"
    assert httpx.get(f"{under}/?embed=1", headers=IFRAME).status_code == 200
    assert httpx.get(f"{under}/api/runs", headers=OWN).status_code == 200
    assert httpx.get(f"{under}/api/runs", headers=IMAGE).status_code == 403
    assert httpx.get(f"{under}/{EXPORT}", headers=LINK).status_code == 403


@pytest.mark.parametrize("route", ["/", "/compare", "/docs", "/api/runs", "/static/js/app.js",
                                   "/openapi.json", "/docs/assets/swagger-ui.css",
                                   "/api/nothing-here", "/static/nothing.js"])
def test_every_answer_carries_the_security_headers(http, route):
    answer = http.get(route)
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["referrer-policy"] == "no-referrer"
    assert answer.headers["content-security-policy"] == f"{CSP}; frame-ancestors 'self'"


def test_refusals_carry_them_too(serve, sample_logdir):
    url = serve(sample_logdir, refresh_seconds=0, token=TOKEN)
    for answer in (httpx.get(f"{url}/api/runs"),  # 401: no token
                   httpx.get(f"{url}/api/runs", headers=IMAGE),  # 403: another site
                   httpx.get(f"{url}/", headers={"Host": "evil.example"})):  # 400: DNS rebinding
        assert answer.status_code in (400, 401, 403)
        assert answer.headers["content-security-policy"].startswith(CSP)
        assert answer.headers["referrer-policy"] == "no-referrer"


def test_the_widget_server_may_be_framed_by_any_notebook_page():
    """The kernel cannot know the notebook page's origin (Jupyter, a hub, Colab, VS Code)."""
    server = memory_server([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]])
    try:
        answer = httpx.get(server.url)
        assert answer.headers["content-security-policy"] == CSP
        assert answer.headers["x-content-type-options"] == "nosniff"
    finally:
        server.stop()
