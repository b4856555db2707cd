"""The layout on small screens (issue 28): panels fold to their titles, each side column
hides, the bookmarks stay in reach from 1024 x 700 up, "t-SNE" stays on one line, and at
800 x 600 the plot keeps most of the width."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

DIGITS = {"run": "digits", "embedding": "digits", "pca": {"is3d": False}}


def _open(browser, serve, sample_logdir, width: int, height: int):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(serve(sample_logdir) + "/")
    page.wait_for_function("window.__projector && window.__projector.ready", timeout=60000)
    return context, page


def _in_view(page, selector: str, height: int) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


def test_at_1024_by_700_the_plot_and_bookmarks_are_usable(serve, sample_logdir, browser):
    context, page = _open(browser, serve, sample_logdir, 1024, 700)
    try:
        by = lambda testid: page.locator(f'[data-testid="{testid}"]')  # noqa: E731
        # The bookmarks are in reach without scrolling: their add button and first entry.
        assert _in_view(page, '[data-testid="bookmark-add"]', 700)
        assert _in_view(page, '[data-testid="bookmarks-list"] li >> nth=0', 700)
        count = by("bookmarks-list").locator("li").count()
        by("bookmark-add").click()
        page.wait_for_function(
            f"document.querySelectorAll('[data-testid=bookmarks-list] li').length === {count + 1}")
        # "t-SNE" on one line, like its neighbours.
        heights = {t: by(f"tab-{t}").bounding_box()["height"] for t in ("pca", "tsne", "umap", "custom")}
        assert heights["tsne"] == heights["pca"] <= 30
        # The inspector folds to its title; the charts come up in its place.
        inspector = by("inspector-panel")
        charts_top = by("charts-panel").bounding_box()["y"]
        fold = inspector.locator('[data-testid="fold-panel"]')
        assert fold.get_attribute("aria-expanded") == "true"
        fold.click()
        assert fold.get_attribute("aria-expanded") == "false"
        assert not by("search-input").is_visible()
        assert by("charts-panel").bounding_box()["y"] < charts_top - 200
        fold.click()
        assert by("search-input").is_visible()
        # Hiding the left column gives its width to the plot.
        width = by("plot").bounding_box()["width"]
        by("toggle-left-column").click()
        page.wait_for_function(f"document.querySelector('[data-testid=plot]').clientWidth > {width + 200}")
        assert not by("data-panel").is_visible()
        assert by("toggle-left-column").get_attribute("aria-pressed") == "false"
        by("toggle-left-column").click()
        assert by("data-panel").is_visible()
    finally:
        context.close()


def test_at_800_by_600_the_plot_keeps_its_room(serve, sample_logdir, browser):
    context, page = _open(browser, serve, sample_logdir, 800, 600)
    try:
        width = page.locator('[data-testid="plot"]').bounding_box()["width"]
        assert width >= 450, f"the plot is {width} px wide"
        # The right column is one click away.
        page.locator('[data-testid="toggle-right-column"]').click()
        assert page.locator('[data-testid="inspector-panel"]').is_visible()
        assert page.locator('[data-testid="plot"]').bounding_box()["width"] >= 200
    finally:
        context.close()


CUT_SELECTS = """() => {
    const ctx = document.createElement('canvas').getContext('2d');
    return [...document.querySelectorAll('.column-left select')].filter((s) => s.offsetParent)
      .filter((s) => {
        ctx.font = getComputedStyle(s).font;
        const text = s.selectedOptions[0]?.textContent ?? '';
        return ctx.measureText(text).width + 28 > s.clientWidth;  // 28: padding and the arrow
      }).map((s) => `${s.dataset.testid}: ${s.selectedOptions[0].textContent}`); }"""


def test_at_1024_the_structure_controls_are_not_cut(serve, sample_logdir, browser):
    context, page = _open(browser, serve, sample_logdir, 1024, 700)
    try:
        page.locator('[data-testid="structure-panel"]').scroll_into_view_if_needed()
        assert page.evaluate(CUT_SELECTS) == []
        assert page.locator('[data-testid="cluster-run"]').bounding_box()["height"] <= 32  # one line
    finally:
        context.close()
