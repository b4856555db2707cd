"""Pictures and tables out of the app, in real Chromium: "Save image" downloads a PNG of the
requested scale whose pixels are the on-screen frame's (scaled), or an SVG of the drawn
points; "Export selection" writes the selected rows as a plain table, "Copy link" the view's URL."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
from PIL import Image


def _open_digits(projector, url):
    projector.open(url)  # digits, its selected bookmark: PCA 2-D coloured by label
    projector.wait_projection("pca")
    projector.wait_js("app.dataset.metadata !== null && app.highlight.coloring"
                      " && app.highlight.coloring.kind !== 'none'")
    projector.page.mouse.move(0, 0)  # no hover highlight in either picture
    projector.wait_settled()


def _download(projector, testid="save-image"):
    with projector.page.expect_download() as info:
        projector.by(testid).click()
    path = info.value.path()
    return info.value.suggested_filename, path


def _canvas_size(projector) -> tuple[int, int]:
    return tuple(projector.page.evaluate("""(() => { const c = window.__projector.app.plot.canvas;
        return [c.clientWidth, c.clientHeight]; })()"""))


def test_save_image_is_the_screen_at_twice_its_size(serve, sample_logdir, projector):
    _open_digits(projector, serve(sample_logdir))
    screen = projector.plot_image()
    width, height = _canvas_size(projector)
    name, path = _download(projector)
    assert name.endswith(".png")
    image = Image.open(path).convert("RGB")
    assert image.size == (2 * width, 2 * height)
    small = np.asarray(image.resize((width, height), Image.Resampling.BOX)).astype(int)
    # The toolbar (top left) and the progress box and legend (top right) are not the plot.
    rows = slice(height // 4, height)
    diff = np.abs(small[rows] - screen[rows]).sum(axis=2)
    background = np.median(screen.reshape(-1, 3), axis=0)
    drawn_screen = (np.abs(screen[rows] - background).sum(axis=2) > 60)
    drawn_image = (np.abs(small[rows] - background).sum(axis=2) > 60)
    assert drawn_screen.sum() > 1000
    assert abs(int(drawn_image.sum()) - int(drawn_screen.sum())) < 0.15 * drawn_screen.sum()
    assert np.mean(diff) < 12, np.mean(diff)
    assert (drawn_image & drawn_screen).sum() > 0.8 * drawn_screen.sum()
    # The legend is drawn in the top right corner: colours of the label column's classes.
    corner = np.asarray(image)[: height // 2, int(1.4 * width):].astype(int)
    assert len({tuple(c) for c in corner.reshape(-1, 3)[::7]}) > 20


def test_save_image_at_4x_a_chosen_width_and_as_svg(serve, sample_logdir, projector):
    _open_digits(projector, serve(sample_logdir))
    width, height = _canvas_size(projector)
    projector.by("save-image-options").click()
    projector.by("save-image-format").select_option("4")
    _, path = _download(projector)
    assert Image.open(path).size == (4 * width, 4 * height)
    projector.by("save-image-format").select_option("width")
    projector.by("save-image-width").fill("1000")
    _, path = _download(projector)
    assert Image.open(path).size[0] == 1000
    projector.by("save-image-format").select_option("svg")
    name, path = _download(projector)
    text = Path(path).read_text(encoding="utf-8")
    assert name.endswith(".svg") and text.startswith("<svg")
    assert text.count("<circle") >= 1797  # every point, and the legend's swatches


def test_export_selection_is_a_plain_table_and_the_views_link_is_copied(serve, sample_logdir,
                                                                        projector):
    """pandas (as Excel and R) reads the file as it is: no comment line taken for a column of
    garbage; the view's URL is "Copy link"'s, and reopening it brings the selection back."""
    import pandas as pd

    url = serve(sample_logdir)
    _open_digits(projector, url)
    projector.page.evaluate("window.__projector.app.update({ selection: [3, 5, 8] })")
    name, path = _download(projector, "export-selection")
    assert name.endswith("-selection.csv")
    table = pd.read_csv(path)
    assert list(table.columns[:2]) == ["index", "label"] and "pca_x" in table.columns
    assert table["index"].tolist() == [3, 5, 8]
    labels = projector.page.evaluate(
        "[3, 5, 8].map((i) => window.__projector.app.dataset.values('label')[i])")
    assert [str(v) for v in table["label"]] == labels
    coords = projector.page.evaluate("""(() => { const p = window.__projector.app.shown;
        return [3, 5, 8].map((i) => p.data[i * p.cols]); })()""")
    assert np.allclose(table["pca_x"], coords, rtol=1e-6)

    projector.page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url)
    projector.by("copy-view-link").click()
    projector.wait_text("status-message", "Copied this view's link")
    link = projector.page.evaluate("navigator.clipboard.readText()")
    assert link.startswith(url) and "#s=" in link
    projector.page.evaluate("window.__projector.app.update({ selection: [] })")
    projector.page.goto("about:blank")
    projector.page.goto(link)
    projector.wait_ready()
    assert projector.state()["selection"] == [3, 5, 8]


def test_export_site_downloads_the_views_site(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), {"run": "iris", "embedding": "iris"})
    projector.wait_projection("pca")
    name, path = _download(projector, "export-site")
    assert name.endswith("-site.zip")
    with zipfile.ZipFile(path) as archive:
        manifest = json.loads(archive.read("static.json"))
        page = archive.read("index.html").decode()
    assert "history.replaceState" in page  # the site opens in this view
    assert [(e["run"], e["embedding"]) for e in manifest["embeddings"]] == [("iris", "iris")]
