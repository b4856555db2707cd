"""Files loaded in the Data panel go to the server, so t-SNE runs on them there."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.browser


def test_uploaded_files_run_tsne_on_the_server(serve, sample_logdir, projector, tmp_path):
    rng = np.random.default_rng(0)
    vectors = np.concatenate([rng.normal(0, 1, (40, 6)), rng.normal(6, 1, (40, 6))])
    tensor = tmp_path / "mine.tsv"
    tensor.write_text("".join("\t".join(f"{v:.5f}" for v in row) + "\n" for row in vectors))
    metadata = tmp_path / "meta.tsv"
    metadata.write_text("name\tgroup\n" + "".join(f"p{i}\t{'ab'[i >= 40]}\n" for i in range(80)))
    projector.open(serve(sample_logdir))
    projector.page.locator("details.subsection summary").click()
    projector.by("upload-tensor").set_input_files(str(tensor))
    projector.by("upload-metadata").set_input_files(str(metadata))
    projector.by("upload-apply").click()
    projector.page.wait_for_function("window.__projector.state().run.startsWith('upload-')")
    projector.wait_ready()
    assert "Points: 80" in projector.by("status-bar").inner_text()
    run = projector.state()["run"]
    assert projector.by("run-select").input_value() == run
    projector.by("tab-tsne").click()
    projection = projector.wait_projection("tsne", timeout=90000)
    assert projection["frames"] >= 1
    assert projector.by("plot-message").is_hidden()
    projector.wait_settled()
    assert projector.drawn_pixels() > 200
