"""Small things a first-time user trips over (issue 28, polish): download names, one
metadata download, density contours kept in the URL."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.browser

IRIS_2D = {"run": "iris", "embedding": "iris", "pca": {"is3d": False}}


def test_download_names_drop_an_uploads_extension(serve, sample_logdir, projector, tmp_path):
    rng = np.random.default_rng(0)
    tensor = tmp_path / "up_tensor.tsv"
    tensor.write_text("".join("\t".join(f"{v:.4f}" for v in row) + "\n" for row in rng.normal(size=(30, 4))))
    projector.open(serve(sample_logdir), IRIS_2D)
    with projector.page.expect_download() as download:
        projector.by("download-csv").click()
    assert download.value.suggested_filename == "iris-pca.csv"
    projector.page.locator("details.subsection summary").click()
    projector.by("upload-tensor").set_input_files(str(tensor))
    projector.by("upload-apply").click()
    projector.page.wait_for_function("window.__projector.state().embedding === 'up_tensor.tsv'")
    projector.wait_ready()
    with projector.page.expect_download() as download:
        projector.by("download-tsv").click()
    assert download.value.suggested_filename == "up_tensor-pca.tsv"


def test_one_metadata_download(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), IRIS_2D)
    texts = projector.page.get_by_text("metadata.tsv").all()
    assert len([t for t in texts if t.is_visible()]) == 1
    with projector.page.expect_download() as download:
        projector.by("download-metadata").click()
    assert download.value.suggested_filename == "iris-metadata.tsv"


def test_density_contours_are_kept_in_the_url(serve, sample_logdir, projector):
    url = serve(sample_logdir)
    projector.open(url, IRIS_2D)
    projector.by("density-toggle").check()
    projector.page.wait_for_function("window.__projector.urlState()?.density === true")
    hash_ = projector.page.evaluate("location.hash")
    projector.page.goto("about:blank")
    projector.page.goto(url + "/" + hash_)
    projector.wait_ready()
    assert projector.by("density-toggle").is_checked()
    assert projector.by("density-legend").is_visible()
    painted = """() => { const c = document.querySelector('[data-testid=structure-overlay]');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; }"""
    projector.page.wait_for_function(f"({painted})() > 1000")
