"""The UI routes: the index page and the front end's files, nothing else (no browser needed)."""

from __future__ import annotations

import re

import httpx


def test_index_page_loads_the_app_from_local_files_only(serve, sample_logdir):
    url = serve(sample_logdir)
    page = httpx.get(url + "/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    for testid in ["data-panel", "projections-panel", "inspector-panel", "bookmarks-panel", "plot",
                   "run-select", "embedding-select", "label-by", "color-by", "tab-pca", "tab-tsne",
                   "tab-umap", "tab-custom", "tsne-run", "search-input", "neighbors-list",
                   "bookmark-add", "bookmark-save", "bookmark-load", "status-bar"]:
        assert f'data-testid="{testid}"' in page.text
    assert not re.search(r'(src|href)="(https?:)?//', page.text), "nothing is fetched from the internet"
    script = httpx.get(url + "/static/js/app.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert httpx.get(url + "/static/css/app.css").headers["content-type"].startswith("text/css")


def test_static_route_serves_nothing_outside_the_front_end(serve, sample_logdir):
    url = serve(sample_logdir)
    for path in ["/static/../server/app.py", "/static/%2e%2e/server/app.py",
                 "/static/..%2f..%2fpyproject.toml", "/static/tests/state.test.js",
                 "/static/js/nope.js", "/static/js"]:
        assert httpx.get(url + path).status_code == 404, path


def test_no_module_imports_from_the_internet():
    from projector.server.routes.ui import FRONTEND_DIR

    for source in FRONTEND_DIR.rglob("*.js"):
        text = source.read_text()
        assert not re.search(r"""(import|from)\s*\(?\s*['"](https?:)?//""", text), source
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text, source
