"""Metadata is data: markup in it shows as text and never runs; any script shows."""

from __future__ import annotations

import numpy as np
import pytest

from projector_core.formats.writer import add_embedding

pytestmark = pytest.mark.browser

HOSTILE = [
    "<script>window.__xss=1</script>",
    '<img src=x onerror="window.__xss=2">',
    "猫 ねこ",
    "кошка",
    "🐱 cat",
    '"><svg onload=window.__xss=3>',
]


@pytest.fixture
def hostile_logdir(tmp_path):
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(len(HOSTILE) * 5, 4)).astype(np.float32)
    labels = [[HOSTILE[i % len(HOSTILE)], f"g{i % 2}"] for i in range(len(vectors))]
    add_embedding(tmp_path, vectors, metadata=labels, metadata_header=["name", "group"], tag="hostile")
    return tmp_path


def test_metadata_markup_is_shown_as_text_and_never_runs(serve, hostile_logdir, projector):
    page = projector.page
    fetched: list[str] = []  # an <img src=x> made from metadata would fetch x at once
    page.on("request", lambda request: fetched.append(request.url))
    projector.open(serve(hostile_logdir), {"pca": {"is3d": False}, "colorBy": "name", "labelBy": "name"})
    # Legend, search results, point card, tooltip, neighbour list: all text.
    legend = projector.by("legend").inner_text()
    for value in HOSTILE:
        assert value in legend
    projector.by("search-column").select_option("name")
    projector.by("search-input").fill("script")
    page.wait_for_function("window.__projector.state().selection.length === 5")
    assert HOSTILE[0] in projector.by("search-results").inner_text()
    for target in (0, 1, 5):
        projector.wait_settled()
        x, y = projector.screen_position(target)
        page.mouse.move(x, y)
        page.wait_for_function("window.__projector.app.highlight.hover >= 0")
        index = page.evaluate("window.__projector.app.highlight.hover")
        assert projector.by("tooltip").inner_text() == HOSTILE[index % len(HOSTILE)]
        page.mouse.click(x, y)
        page.wait_for_function(f"window.__projector.state().focus === {index}")
        assert HOSTILE[index % len(HOSTILE)] in projector.by("point-card").inner_text()
        assert HOSTILE[index % len(HOSTILE)] in projector.by("status-bar").inner_text()
    projector.by("neighbors-list").locator("li").nth(0).wait_for()
    # No element was made of the markup (so no handler of one can run later), none fetched.
    assert page.locator("body img[src='x'], body svg[onload]").count() == 0
    assert not [url for url in fetched if url.rstrip("/").endswith("/x")], fetched
    assert page.evaluate("window.__xss") is None
    assert page.locator("script:not([src])").count() == 0  # the CSP would refuse any
