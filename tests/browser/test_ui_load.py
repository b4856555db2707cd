"""Opening the app on the sample data: the plot draws points, the panels fill in."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.decomposition import PCA

pytestmark = pytest.mark.browser


def test_sample_data_loads_and_the_canvas_shows_points(serve, sample_logdir, projector):
    url = serve(sample_logdir)
    projector.open(url)
    status = projector.by("status-bar").inner_text()
    assert "Points: 1,797" in status and "Dimension: 64" in status
    assert projector.by("embedding-select").input_value() == "digits"
    assert "1,797 × 64" in projector.by("embedding-select").inner_text()
    # The config names a bookmark marked selected: it loads at start (TensorBoard does too).
    assert projector.by("bookmarks-list").locator("li").count() == 2
    assert projector.state()["pca"]["is3d"] is False
    projector.by("show-sprites").uncheck()
    projector.wait_settled()
    image = projector.plot_image()
    background = np.median(image.reshape(-1, 3), axis=0)
    drawn = np.abs(image - background).sum(axis=2) > 60
    assert drawn.sum() > 3000, "the canvas should show the 1,797 points"
    # Coloured by label (10 classes): many distinct hues, not one flat colour.
    colours = {tuple(c // 16) for c in image[drawn]}
    assert len(colours) >= 8
    assert projector.by("legend").locator(".legend-row").count() == 10
    assert projector.by("legend").inner_text().count("\n") >= 10


def test_sprites_draw_thumbnails(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir))
    projector.by("show-sprites").uncheck()
    projector.wait_settled()
    dots = projector.drawn_pixels()
    projector.by("show-sprites").check()
    projector.wait_settled()
    assert projector.drawn_pixels() > 2 * dots, "thumbnails cover far more pixels than dots"


def test_dark_theme_changes_the_plot_background(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir))
    before = np.median(projector.plot_image().reshape(-1, 3), axis=0)
    projector.by("theme-toggle").click()
    projector.wait_settled()
    after = np.median(projector.plot_image().reshape(-1, 3), axis=0)
    assert before.mean() > 200 and after.mean() < 60
    assert projector.page.evaluate("document.documentElement.dataset.theme") == "dark"
    projector.page.reload()
    projector.wait_ready()
    assert projector.page.evaluate("document.documentElement.dataset.theme") == "dark"


def test_run_picker_switches_data_sets(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir))
    projector.by("run-select").select_option("iris")
    projector.page.wait_for_function("window.__projector.state().run === 'iris'")
    projector.wait_ready()
    assert "Points: 150" in projector.by("status-bar").inner_text()
    options = projector.by("color-by").locator("option").all_inner_texts()
    assert options == ["(none)", "species", "sepal_length", "sepal_width", "petal_length", "petal_width"]
    projector.by("color-by").select_option("petal_length")
    assert projector.by("legend").locator(".legend-gradient").count() == 1
    assert projector.by("status-dimension").inner_text() == "Dimension: 4"


def test_downloads_coordinates_and_metadata(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir))
    with projector.page.expect_download() as download:
        projector.by("download-csv").click()
    lines = Path(download.value.path()).read_text().splitlines()
    assert lines[0] == "index,x,y"
    rows = np.array([line.split(",") for line in lines[1:]], dtype=float)
    np.testing.assert_array_equal(rows[:, 0], np.arange(1797))
    # The picture shown: the digits' first two principal components (scikit-learn's).
    digits = np.fromfile(sample_logdir / "digits" / "tensors.bytes", "<f4").reshape(1797, 64)
    reference = PCA(2).fit_transform(digits.astype(np.float64))
    shown = rows[:, 1:] * np.sign((rows[:, 1:] * reference).sum(axis=0))
    np.testing.assert_allclose(shown, reference, rtol=1e-3, atol=1e-3)
    with projector.page.expect_download() as download:
        projector.by("download-metadata").click()
    text = Path(download.value.path()).read_text()
    assert text == (sample_logdir / "digits" / "metadata.tsv").read_text()


def test_uploaded_files_are_shown_with_pca_in_the_browser(serve, sample_logdir, projector, tmp_path):
    rng = np.random.default_rng(0)
    vectors = np.concatenate([rng.normal(0, 1, (40, 6)), rng.normal(6, 1, (40, 6))])
    tensor = tmp_path / "mine.tsv"
    tensor.write_text("".join("\t".join(f"{v:.5f}" for v in row) + "\n" for row in vectors))
    metadata = tmp_path / "mine-meta.tsv"
    metadata.write_text("name\tgroup\n" + "".join(f"p{i}\t{'ab'[i >= 40]}\n" for i in range(80)))
    projector.open(serve(sample_logdir))
    projector.page.locator("details.subsection summary").click()
    projector.by("upload-tensor").set_input_files(str(tensor))
    projector.by("upload-metadata").set_input_files(str(metadata))
    projector.by("upload-apply").click()
    projector.page.wait_for_function("window.__projector.state().embedding === 'mine.tsv'")
    projector.wait_ready()
    assert "Points: 80" in projector.by("status-bar").inner_text()
    projector.wait_text("pca-x", "PC1 (variance", contains=True)  # the PCA may finish after ready
    assert projector.drawn_pixels() > 200
    projector.by("search-column").select_option("group")
    projector.by("search-input").fill("b")
    projector.page.wait_for_function("window.__projector.state().selection.length === 40")
    assert projector.by("match-count").inner_text() == "40 matches"


def test_a_broken_upload_is_refused_with_a_message(serve, sample_logdir, projector, tmp_path):
    broken = tmp_path / "broken.tsv"
    broken.write_text("1\t2\n3\n")
    projector.open(serve(sample_logdir))
    projector.page.locator("details.subsection summary").click()
    projector.by("upload-tensor").set_input_files(str(broken))
    projector.by("upload-apply").click()
    error = projector.by("upload-error")
    error.wait_for()
    assert "broken.tsv line 2" in error.inner_text()
    assert projector.state()["run"] == "digits"


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_twelve_category_legend_shows_twelve_rows_by_value(serve, tmp_path, browser, theme):
    """Twelve categories of uneven counts at 1024 x 700: all twelve rows show (none hides
    below an inner scroll), listed by value as a reader looks them up."""
    from projector_core.formats.writer import add_embedding

    rng = np.random.default_rng(3)
    kinds = rng.choice(12, 600, p=np.arange(1, 13) / 78)
    add_embedding(tmp_path / "logs", rng.normal(size=(600, 4)).astype("f4"),
                  metadata=[[f"k{k:02d}", str(i)] for i, k in enumerate(kinds)],
                  metadata_header=["kind", "id"], tag="kinds")
    context = browser.new_context(viewport={"width": 1024, "height": 700}, color_scheme=theme)
    page = context.new_page()
    page.goto(serve(tmp_path / "logs"))
    page.wait_for_function("window.__projector && window.__projector.ready")
    legend = page.locator('[data-testid="legend"]')
    page.wait_for_function("document.querySelectorAll('[data-testid=legend] .legend-row').length === 12")
    assert legend.evaluate("(node) => node.scrollHeight <= node.clientHeight")
    values = legend.locator(".legend-value").all_inner_texts()
    assert values == [f"k{k:02d}" for k in range(12)]
    context.close()
