"""What a click or a first look needs is above the fold (issue 33, item 17): at 1280 x 800 the
neighbour list, the answer to a click, shows without scrolling; at 1024 x 700 the projection
tabs do, and a long bookmark name is cut with an ellipsis and said whole in its title."""

from __future__ import annotations

import pytest

from tests.browser.conftest import state_hash

pytestmark = pytest.mark.browser

DIGITS = {"run": "digits", "embedding": "digits", "pca": {"is3d": False}, "colorBy": "label",
          "labelBy": "label", "selection": [5], "focus": 5}

# Seen: inside the viewport and the top of the element itself at its centre (not under
# a sticky panel, not scrolled out of its column).
SEEN = """(el) => { const r = el.getBoundingClientRect();
    if (r.height === 0 || r.top < 0 || r.bottom > innerHeight) return false;
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + Math.min(r.height / 2, 10));
    return el.contains(hit); }"""


def _open(browser, url: str, width: int, height: int, state_hash: str):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(url + "/" + state_hash)
    page.wait_for_function("window.__projector && window.__projector.ready", timeout=60000)
    return context, page


def test_at_1280_by_800_the_neighbours_show_without_scrolling(serve, sample_logdir, browser) -> None:
    context, page = _open(browser, serve(sample_logdir), 1280, 800, state_hash(DIGITS))
    try:
        page.wait_for_function("document.querySelectorAll('[data-testid=neighbors-list] li').length > 3")
        rows = page.locator('[data-testid="neighbors-list"] li')
        assert all(rows.nth(i).evaluate(SEEN) for i in range(3))
    finally:
        context.close()


def test_at_1024_by_700_tabs_show_and_bookmark_names_are_cut_with_an_ellipsis(
        serve, sample_logdir, browser) -> None:
    context, page = _open(browser, serve(sample_logdir), 1024, 700, state_hash(DIGITS))
    try:
        for tab in ("pca", "tsne", "umap", "custom"):
            assert page.locator(f'[data-testid="tab-{tab}"]').evaluate(SEEN), tab
        long_name = "digits coloured by label, PCA components 1 and 2, the cluster of sevens"
        page.locator('[data-testid="bookmark-add"]').click()
        page.locator('[data-testid="bookmark-name"]').last.dblclick()
        page.locator(".bookmark-name-input").fill(long_name)
        page.keyboard.press("Enter")
        name = page.locator('[data-testid="bookmark-name"]').last
        page.wait_for_function(f"[...document.querySelectorAll('[data-testid=bookmark-name]')]"
                               f".some((b) => b.textContent === {long_name!r})")
        assert name.evaluate("(b) => getComputedStyle(b).textOverflow") == "ellipsis"
        assert name.evaluate("(b) => b.scrollWidth > b.clientWidth")  # cut, so the ellipsis shows
        assert long_name in name.get_attribute("title")
        assert name.evaluate(SEEN)
    finally:
        context.close()


def test_show_images_with_hundreds_selected_marks_none_one_by_one(
        serve, sample_logdir, browser) -> None:
    """345 thumbnails each with a ring and a label chip were a wall that hid the images: the
    dimmed rest says what is selected; a few selected keep their rings and names."""
    state = {**DIGITS, "sprites": True, "selection": list(range(345)), "focus": None}
    context, page = _open(browser, serve(sample_logdir), 1280, 800, state_hash(state))
    try:
        page.wait_for_function("window.__projector.app.plot.sprites === true")
        assert page.evaluate("window.__projector.app.plot.labelCandidates.length") == 0
        page.evaluate("window.__projector.app.update({ selection: [1, 2, 3] })")
        page.wait_for_function("window.__projector.app.plot.labelCandidates.length === 3")
    finally:
        context.close()
