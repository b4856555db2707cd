""""Download CSV/TSV" of a view drawn from tiles (``?tiles=always``): the page holds no
whole-set coordinates, so the file is the server's, streamed from the job's result, with the
header and rows the page's own export writes."""

from __future__ import annotations

import csv

import httpx
import numpy as np
import pytest

from tests.browser.conftest import state_hash

pytestmark = pytest.mark.browser

DIGITS = {"run": "digits", "embedding": "digits", "pca": {"x": 1, "y": 0, "is3d": False}}


@pytest.mark.parametrize(("button", "sep"), [("download-csv", ","), ("download-tsv", "\t")])
def test_a_tiled_view_downloads_every_row_from_the_server(serve, sample_logdir, projector,
                                                         tmp_path, button, sep):
    url = serve(sample_logdir)
    page = projector.page
    page.goto(url + "/?tiles=always" + state_hash(DIGITS))
    projector.wait_ready()
    page.wait_for_function("(() => { const p = window.__projector.app.shown; "
                           "return p && p.source && p.status === 'done'; })()", timeout=60000)
    assert page.evaluate("window.__projector.app.shown.data") is None  # tiles only
    job = page.evaluate("window.__projector.app.shown.jobId")
    with page.expect_download() as download:
        projector.by(button).click()
    assert download.value.suggested_filename == f"digits-pca.{'csv' if sep == ',' else 'tsv'}"
    saved = tmp_path / "download.txt"
    download.value.save_as(saved)
    rows = list(csv.reader(saved.read_text().splitlines(), delimiter=sep))
    assert rows[0] == ["index", "x", "y"]
    expected = np.array(httpx.get(f"{url}/api/jobs/{job}/result", timeout=60).json()[
        "coordinates"], np.float32)[:, [1, 0]]  # the view's axes: x is PC 2, y PC 1
    assert len(rows) - 1 == expected.shape[0] == 1797
    assert [int(r[0]) for r in rows[1:]] == list(range(1797))
    np.testing.assert_array_equal(np.array([r[1:] for r in rows[1:]], np.float32), expected)
    assert projector.errors == []
