"""Accessibility in real Chromium: axe-core (vendored, tests/browser/vendor/axe-core) checks
the main page and the Compare page in the light and the dark theme against WCAG 2.1 A and
AA, colour contrast included; no serious or critical violation may remain."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from projector_core.formats.writer import add_embedding

pytestmark = pytest.mark.browser

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
RUN_AXE = """async () => {
    const result = await axe.run(document, {
        runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
        resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.slice(0, 5).map((n) => `${n.target.join(' ')}: ${n.failureSummary}`) })); }"""
DIGITS = {"run": "digits", "embedding": "digits", "pca": {"is3d": False}, "colorBy": "label"}


def _serious(page) -> list[dict]:
    page.evaluate(AXE.read_text())  # not add_script_tag: an inline script, refused by the CSP
    return [v for v in page.evaluate(RUN_AXE) if v["impact"] in ("serious", "critical")]


def _set_theme(page, theme: str) -> None:
    if page.evaluate("document.documentElement.dataset.theme") != theme:
        page.locator('[data-testid="theme-toggle"]').click()
    page.wait_for_function(f"document.documentElement.dataset.theme === '{theme}'")


def _luminance(rgb: np.ndarray) -> np.ndarray:
    c = rgb / 255
    c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return c @ np.array([0.2126, 0.7152, 0.0722])


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_main_page_passes_axe(serve, sample_logdir, projector, theme):
    projector.open(serve(sample_logdir), DIGITS)
    page = projector.page
    # Content that only shows after use is on the page too: a selection, its table, neighbours.
    projector.by("search-column").select_option("label")
    projector.by("search-input").fill("3")
    page.wait_for_function("window.__projector.state().selection.length > 0")
    _set_theme(page, theme)
    projector.wait_settled()
    violations = _serious(page)
    assert violations == [], violations


def _write_steps(logdir: Path, same: bool = False) -> None:
    """Two training steps of 200 points; unless `same`, a few points move between them."""
    rng = np.random.default_rng(0)
    base = rng.normal(size=(200, 8)).astype(np.float32)
    moved = base.copy()
    if not same:
        moved[:60] = rng.normal(size=(60, 8))
    for step, matrix in ((0, base), (10, moved)):
        add_embedding(logdir, matrix, metadata=[f"p{i}" for i in range(200)], global_step=step)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_compare_page_passes_axe(serve, tmp_path, browser, theme):
    _write_steps(tmp_path)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        page.goto(serve(tmp_path) + "/compare")
        page.wait_for_function("() => { const s = window.__compare.shown; return s && s.b; }", timeout=60000)
        page.wait_for_function("document.querySelectorAll('[data-testid=most-changed] li').length > 5")
        _set_theme(page, theme)
        violations = _serious(page)
        assert violations == [], violations
    finally:
        context.close()


def test_compare_switches_theme_and_unchanged_points_stay_visible_in_dark(tmp_path, serve, browser):
    """Compare has the theme switch too; in the dark theme a point whose neighbours did not
    change is still drawn in a colour that stands out from the black plot (3:1 at least)."""
    _write_steps(tmp_path, same=True)  # every point unchanged
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        page.goto(serve(tmp_path) + "/compare")
        page.wait_for_function("() => { const s = window.__compare.shown; return s && s.b; }", timeout=60000)
        page.wait_for_function("() => window.__compare.plots.plots().every((p) => !p.fromPositions)")
        _set_theme(page, "dark")
        page.wait_for_timeout(300)
        png = page.locator('[data-testid="compare-a"] canvas[data-testid="plot"]').screenshot()
        image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(float)
        background = np.median(image.reshape(-1, 3), axis=0)
        assert background.max() < 60  # the dark plot
        drawn = image[np.abs(image - background).sum(axis=2) > 30]
        assert len(drawn) > 200
        points = np.median(drawn, axis=0)
        lighter, darker = sorted([_luminance(points), _luminance(background)], reverse=True)
        assert (lighter + 0.05) / (darker + 0.05) >= 3.0
        # The choice is remembered for the main page.
        assert page.evaluate("localStorage.getItem('projector-theme')") == "dark"
    finally:
        context.close()
