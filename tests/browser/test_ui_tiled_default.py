"""A set the server shows from tiles opens on them: 2-D PCA from its tiles, never the whole
set in 3-D (whose download would not fit a tab at 100M). The size bound is the server's
(``tiles/view.py`` ``TILES_ABOVE``, lowered here), told to the page by ``/api/runs``."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

from projector_core.tiles import view
from tests.builders import write_pbtxt_run

pytestmark = pytest.mark.browser

N = 3000


def test_a_set_shown_from_tiles_opens_in_2d_from_them(serve, projector, tmp_path, monkeypatch):
    monkeypatch.setattr(view, "TILES_ABOVE", 1000)
    rng = np.random.default_rng(0)
    write_pbtxt_run(
        tmp_path / "logs" / "run",
        f'embeddings {{ tensor_name: "points" tensor_path: "t.bytes" tensor_shape: {N} '
        'tensor_shape: 8 metadata_path: "meta.tsv" }',
        {"t.bytes": rng.normal(size=(N, 8)).astype("<f4").tobytes(),
         "meta.tsv": "label\tgroup\n" + "".join(f"c{i % 3}\tg{i % 2}\n" for i in range(N))})
    url = serve(tmp_path / "logs")
    runs = httpx.get(f"{url}/api/runs").json()
    [embedding] = [e for run in runs for e in run["embeddings"]]
    assert embedding["tiles"] is True
    projector.open(url)
    projector.wait_js("app.shown && app.shown.source !== null")
    assert projector.state()["pca"]["is3d"] is False
    assert projector.page.evaluate("window.__projector.app.shown.data") is None  # no whole set
    projector.wait_settled()
    assert projector.drawn_pixels() > 200
