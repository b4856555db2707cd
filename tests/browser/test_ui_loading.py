"""A big LOGDIR opens at once: the page shows the tensor's load progress, then the points."""

from __future__ import annotations

import pytest

from projector_core.data.catalog import Catalog
from projector_core.formats import tensor_files
from tests.builders import vectors, write_pbtxt_run
from tests.test_loading import HeldLoad

pytestmark = pytest.mark.browser


def test_the_page_shows_load_progress_then_the_points(tmp_path, serve, projector, monkeypatch):
    matrix = vectors(400, 16, 5)
    write_pbtxt_run(tmp_path / "logs", 'embeddings { tensor_name: "big" tensor_path: "t.tsv" }',
                    {"t.tsv": "".join("\t".join(map(str, r.tolist())) + "\n" for r in matrix)})
    monkeypatch.setattr(tensor_files, "CHUNK_BYTES", 8 * 1024)
    held = HeldLoad()
    catalog = Catalog(tmp_path / "logs", cache_dir=tmp_path / "cache", progress=held,
                      background_bytes=0)
    catalog.refresh()
    try:
        url = serve(catalog=catalog)
        assert held.holding.wait(30)
        projector.page.goto(url + "/")
        projector.wait_text("progress-label", "Loading big: ", contains=True)
        assert "%" in projector.by("progress-label").inner_text()
        assert projector.by("progress").is_visible()
    finally:
        held.release()
    projector.wait_ready()
    assert "Points: 400" in projector.by("status-bar").inner_text()
    projector.page.wait_for_selector('[data-testid="progress"]', state="hidden")
    assert not projector.errors
