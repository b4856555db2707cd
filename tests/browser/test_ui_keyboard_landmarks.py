"""The keyboard's way through the page (issue 33, item 18): skip links are the first Tab stops
(search box, plot, neighbours), the landmarks are named, and a long search does not stand
between the search box and the neighbours in the tab order."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

DIGITS_2D = {"run": "digits", "embedding": "digits", "sprites": False,
             "pca": {"is3d": False}, "colorBy": "label", "labelBy": "label"}

FOCUSED = "document.activeElement && document.activeElement.dataset.testid"


def tabs_until(page, testid: str, limit: int = 80) -> int:
    """Tab presses from where the focus is until ``testid`` has it."""
    for presses in range(1, limit + 1):
        page.keyboard.press("Tab")
        if page.evaluate(FOCUSED) == testid:
            return presses
    raise AssertionError(f"{testid} not reached in {limit} Tab presses")


def test_skip_links_reach_search_and_plot_in_few_presses(serve, sample_logdir, projector) -> None:
    projector.open(serve(sample_logdir), DIGITS_2D)
    page = projector.page
    page.evaluate("document.activeElement && document.activeElement.blur()")
    assert tabs_until(page, "skip-search") == 1
    assert projector.by("skip-search").is_visible()  # shown while focused
    page.keyboard.press("Enter")
    assert page.evaluate(FOCUSED) == "search-input"  # 1 Tab + Enter, where it was 55 Tabs
    assert page.evaluate("location.hash").startswith("#s=")  # the hash keeps the view's state
    projector.open(serve(sample_logdir), DIGITS_2D)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    assert tabs_until(page, "skip-plot") == 2
    page.keyboard.press("Enter")
    assert page.evaluate(FOCUSED) == "plot"


def test_landmarks_are_there_and_named(serve, sample_logdir, projector) -> None:
    projector.open(serve(sample_logdir), DIGITS_2D)
    landmarks = projector.page.evaluate("""() => ({
        banner: document.querySelectorAll('body > header').length,
        main: document.querySelectorAll('main').length,
        navs: Array.from(document.querySelectorAll('nav'), (n) => n.getAttribute('aria-label')),
        asides: Array.from(document.querySelectorAll('aside'), (a) => a.getAttribute('aria-label')),
        contentinfo: document.querySelectorAll('body > footer').length })""")
    assert landmarks["banner"] == 1 and landmarks["main"] == 1 and landmarks["contentinfo"] == 1
    assert len(landmarks["navs"]) == 2 and all(landmarks["navs"])
    assert len(landmarks["asides"]) == 2 and all(landmarks["asides"])


def test_neighbours_come_soon_after_a_long_search(serve, sample_logdir, projector) -> None:
    projector.open(serve(sample_logdir), DIGITS_2D)
    page = projector.page
    projector.by("search-column").select_option("label")
    projector.by("search-input").fill("0")  # 178 matches
    page.wait_for_function("window.__projector.state().selection.length === 178")
    page.evaluate("window.__projector.app.highlight.selectPoint(0)")
    page.wait_for_function("document.querySelectorAll('[data-testid=neighbors-list] li').length > 0")
    projector.by("search-input").focus()
    count = 0
    while page.evaluate("!document.activeElement.closest('[data-testid=neighbors-list]')"):
        page.keyboard.press("Tab")
        count += 1
        assert count < 30, "the neighbours are more than 30 Tab presses past the search box"
    assert projector.by("search-results").locator("li").count() <= 8
