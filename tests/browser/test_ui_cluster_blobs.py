"""Twelve cleanly separated blobs are twelve clusters, and every name the API gives is drawn
on the map: a name that meets another is moved a little off its anchor, not dropped
(issue 33, item 15)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from projector_core.formats.writer import add_embedding

pytestmark = pytest.mark.browser


def test_twelve_blobs_are_twelve_named_clusters(tmp_path: Path, serve, projector) -> None:
    rng = np.random.default_rng(0)
    # Twelve blobs on a ring in the plane of the first two axes: PCA shows them as they are.
    angles = np.linspace(0, 2 * np.pi, 12, endpoint=False)
    centres = np.zeros((12, 6))
    centres[:, 0], centres[:, 1] = 20 * np.cos(angles), 20 * np.sin(angles)
    points = np.concatenate([c + rng.normal(size=(60, 6)) for c in centres])
    names = [f"a rather long blob name {b:02d}" for b in range(12) for _ in range(60)]
    add_embedding(tmp_path, points, metadata=names, tag="blobs")
    projector.page.set_viewport_size({"width": 1024, "height": 700})
    projector.open(serve(tmp_path), {"run": ".", "embedding": "blobs:00000", "pca": {"is3d": False}})
    projector.wait_js("app.shown && app.shown.status === 'done' && !!app.shown.jobId")
    projector.wait_settled()
    page = projector.page
    projector.by("cluster-run").click()
    projector.wait_text("cluster-status", "12 clusters", contains=True)
    page.wait_for_function("window.__structure.overlay.drawnLabels.length > 0")
    drawn = {label["label"] for label in page.evaluate("window.__structure.overlay.drawnLabels")}
    assert len(drawn) == 12, sorted(drawn)
