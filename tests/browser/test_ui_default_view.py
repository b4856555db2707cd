"""The view a data set opens in fits its data: PCA opens in 3D only with a third column."""

from __future__ import annotations

import numpy as np
import pytest

from projector_core.formats.writer import add_embedding

pytestmark = pytest.mark.browser


def test_a_two_column_embedding_opens_in_2d(serve, tmp_path, projector):
    points = np.random.default_rng(0).normal(size=(50, 2)).astype(np.float32)
    add_embedding(tmp_path / "logs", points, metadata=[f"p{i}" for i in range(50)], tag="flat")
    projector.open(serve(tmp_path / "logs"))
    projector.wait_settled()
    assert projector.state()["pca"]["is3d"] is False
    assert projector.by("mode-badge").inner_text() == "2D"
    assert not projector.by("pca-3d").is_checked()
    assert projector.by("pca-z").is_disabled()
    assert projector.drawn_pixels() > 50


def test_three_columns_still_open_in_3d(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), {"run": "iris", "embedding": "iris"})
    projector.wait_settled()
    assert projector.by("pca-3d").is_checked()
    assert projector.by("mode-badge").inner_text() == "3D"
