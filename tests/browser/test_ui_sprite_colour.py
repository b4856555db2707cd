"""Colour over sprites (issue 28, item 13): greyscale thumbnails (the digits) are drawn as
their ink in the point's colour, so "Color by" and colour by projection quality change what
is seen, and the dark theme is not a wall of white paper."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.browser

DIGITS = {"run": "digits", "embedding": "digits", "pca": {"is3d": False}, "colorBy": "label"}


def _coloured(image: np.ndarray) -> int:
    """Pixels of a clear hue (greyscale sprites have none)."""
    return int(((image.max(axis=2) - image.min(axis=2)) > 60).sum())


def _sprites_drawn(projector) -> None:
    projector.page.wait_for_function(
        "(() => { const p = window.__projector.app.plot; return p.sprites && !!p.spriteLayer.atlas; })()",
        timeout=60000)
    projector.wait_settled()


def test_color_by_shows_over_digit_sprites(serve, sample_logdir, projector, tmp_path):
    projector.open(serve(sample_logdir), DIGITS)
    _sprites_drawn(projector)
    projector.page.evaluate("document.documentElement.dataset.theme = 'light'")
    projector.page.evaluate("window.__projector.app.status.toggleTheme();"
                            " window.__projector.app.status.toggleTheme()")
    projector.wait_settled()
    by_label = projector.plot_image()
    assert _coloured(by_label) > 3000, "the label colours do not show over the sprites"
    # No colour: the ink is the theme's text colour, no hue at all.
    projector.by("color-by").select_option("")
    projector.page.wait_for_function("window.__projector.state().colorBy === null")
    projector.wait_settled()
    plain = projector.plot_image()
    assert _coloured(plain) < 200
    # Colour by projection quality: a different picture again.
    projector.by("color-by").select_option("label")
    projector.page.wait_for_function("window.__projector.state().colorBy === 'label'")
    projector.by("quality-toggle").check()
    projector.wait_text("quality-status", "Trustworthiness", contains=True)
    projector.wait_settled()
    by_quality = projector.plot_image()
    assert _coloured(by_quality) > 3000
    changed = (np.abs(by_quality - by_label).sum(axis=2) > 60).sum()
    assert changed > 2000, "colour by quality changed nothing visible"


def test_digit_sprites_are_not_a_wall_of_white_in_the_dark_theme(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), DIGITS)
    _sprites_drawn(projector)
    if projector.page.evaluate("document.documentElement.dataset.theme") != "dark":
        projector.by("theme-toggle").click()
    projector.wait_settled()
    image = projector.plot_image()
    white = (image.min(axis=2) > 225).mean()
    assert white < 0.01, f"{white:.1%} of the plot is white paper"
    background = np.median(image.reshape(-1, 3), axis=0)
    assert background.max() < 60  # the dark plot shows through between the strokes
    assert _coloured(image) > 3000
    # The inspector's thumbnails follow: ink on paper is inverted, no white squares.
    projector.page.evaluate("window.__projector.app.highlight.selectPoint(5)")
    projector.page.wait_for_function(
        "document.querySelectorAll('[data-testid=neighbors-list] .thumb').length > 0")
    style = projector.page.evaluate(
        "getComputedStyle(document.querySelector('[data-testid=neighbors-list] .thumb')).filter")
    assert style.startswith("invert(")
