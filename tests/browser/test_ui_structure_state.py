"""The structure panel in the one UI state: colouring by projection quality is a state value
(the URL and bookmarks keep it, the app's one colour rule applies it), and the density
overlay is a layer of the plot, drawn by the plot's frames."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

DIGITS_2D = {"run": "digits", "embedding": "digits", "sprites": False,
             "pca": {"is3d": False}, "colorBy": "label", "labelBy": "label"}

# What colours the points: the app's colouring and whether the plot was handed its colours.
COLOURING = """() => { const app = window.__projector.app;
    const coloring = app.highlight.coloring;
    return { kind: coloring.kind, onPlot: app.plot.points.colors === coloring.colors }; }"""

PAINTED = """() => { const c = document.querySelector('[data-testid=structure-overlay]');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0, sum = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) { n++; sum += i * d[i] % 9973; }
    return [n, sum]; }"""


def _coloured_by(projector, kind: str) -> None:
    projector.page.wait_for_function(
        f"(() => {{ const c = ({COLOURING})(); return c.kind === '{kind}' && c.onPlot; }})()")


def test_colour_by_quality_survives_a_reload_and_a_bookmark(serve, sample_logdir, projector, tmp_path):
    projector.open(serve(sample_logdir), DIGITS_2D)
    projector.wait_projection("pca")
    _coloured_by(projector, "categorical")
    projector.by("quality-toggle").check()
    assert projector.state()["colorByQuality"] is True
    _coloured_by(projector, "quality")
    assert projector.by("quality-legend").is_visible()
    assert projector.by("legend").is_hidden()  # the column's legend gives way to the panel's

    # Reload: the URL holds it, the panel shows it on, the quality is measured again.
    projector.page.wait_for_function("window.__projector.urlState()?.colorByQuality === true")
    projector.page.reload()
    projector.wait_ready()
    assert projector.state()["colorByQuality"] is True
    assert projector.by("quality-toggle").is_checked()
    _coloured_by(projector, "quality")

    # A bookmark keeps it: in the tray and in the saved file.
    projector.by("bookmark-add").click()
    with projector.page.expect_download() as download:
        projector.by("bookmark-save").click()
    path = tmp_path / "bookmarks.json"
    download.value.save_as(path)
    projector.by("quality-toggle").uncheck()
    assert projector.state()["colorByQuality"] is False
    _coloured_by(projector, "categorical")  # back to the "colour by" column, by the same rule
    projector.by("bookmarks-list").locator("input[type=radio]").nth(2).check()
    projector.page.wait_for_function("window.__projector.state().colorByQuality === true")
    assert projector.by("quality-toggle").is_checked()
    _coloured_by(projector, "quality")
    projector.by("quality-toggle").uncheck()
    _coloured_by(projector, "categorical")
    projector.by("bookmark-load").set_input_files(str(path))
    projector.page.wait_for_function("window.__projector.state().colorByQuality === true")
    _coloured_by(projector, "quality")


def test_the_density_overlay_is_a_plot_layer_and_follows_the_view(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), DIGITS_2D)
    projector.wait_settled()
    page = projector.page
    assert page.evaluate("window.__projector.app.plot.layers.includes(window.__structure.overlay)")
    assert page.evaluate(PAINTED)[0] == 0
    projector.by("density-toggle").check()
    page.wait_for_function(f"({PAINTED})()[0] > 1000")
    before = page.evaluate(PAINTED)
    # The plot's next frame after a camera change redraws the contours where the points went.
    page.evaluate("""() => { const p = window.__projector.app.plot;
        p.setCamera({ ...p.camera, zoom: p.camera.zoom * 1.6 }); }""")
    page.wait_for_function(f"JSON.stringify(({PAINTED})()) !== JSON.stringify({before})")
    assert page.evaluate(PAINTED)[0] > 1000
    projector.by("density-toggle").uncheck()
    page.wait_for_function(f"({PAINTED})()[0] === 0")
