"""The API's own page, ``/docs``, renders in a real browser from files this server serves: an
OpenAPI 3.1 document needs Swagger UI 5 (4.x shows "Unable to render this definition")."""

from __future__ import annotations

import numpy as np
import pytest

from projector_core.formats.writer import add_embedding

pytestmark = pytest.mark.browser


def test_docs_page_lists_the_routes_and_asks_nothing_of_the_internet(serve, tmp_path, browser):
    add_embedding(tmp_path, np.eye(4, dtype="f4"), tag="tiny")
    url = serve(tmp_path)
    page = browser.new_page()
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    try:
        page.goto(f"{url}/docs")
        page.wait_for_selector(".opblock-summary-path", timeout=30000)
        paths = page.locator(".opblock-summary-path").all_inner_texts()
        text = page.inner_text("body")
    finally:
        page.close()
    assert "Unable to render" not in text
    assert "/api/projections" in paths and "/api/jobs/{job_id}/tiles" in paths
    assert all(address.startswith(url) for address in asked), asked
