"""While a sampled t-SNE streams, the points not yet placed are NaN (hidden): a moving
frame's budget goes to the placed points first, so a frame of a million points while only the
sample is placed draws the sample, not mostly hidden points. The UI asks as it always does
("auto"): the data is one point over the server's default threshold of 100,000, so the server
samples by itself."""

from __future__ import annotations

import numpy as np
import pytest

from tests.builders import write_pbtxt_run

pytestmark = pytest.mark.browser

N = 100_001  # one over the default sample_threshold
SAMPLE = 50_000  # the default sample size: min(threshold, N // 2)
BUDGET = 1500  # below N: every moving frame draws a sample of the draw order


@pytest.mark.slow
def test_streaming_sampled_tsne_draws_placed_points_first(serve, tmp_path, projector):
    rng = np.random.default_rng(5)
    coords = (rng.normal(0, 4, (6, 4))[rng.integers(0, 6, N)] + rng.normal(0, 1, (N, 4)))
    write_pbtxt_run(
        tmp_path / "run",
        f'embeddings {{ tensor_name: "points" tensor_path: "t.bytes" tensor_shape: {N} '
        'tensor_shape: 4 }', {"t.bytes": coords.astype("<f4").tobytes()})
    # Few iterations (a setting of the page), so that the 50,000-point fit ends soon.
    projector.open(serve(tmp_path), {"run": "run", "embedding": "points", "projection": "pca",
                                     "tsne": {"nIter": 20}})
    page = projector.page
    assert page.evaluate("window.__projector.state().tsne.nIter") == 20
    page.evaluate(f"""() => {{ const app = window.__projector.app;
        app.plot.frames.budget = {BUDGET};
        window.__frames = [];
        const setSource = app.plot.setSource.bind(app.plot);
        app.plot.setSource = (source, options) => {{ setSource(source, options);
            const p = app.shown;
            if (!p || p.method !== 'tsne' || !p.running) return;
            const order = app.plot.order, data = p.data, k = p.cols;
            const placed = (i) => Number.isFinite(data[i * k]) && Number.isFinite(data[i * k + 1]);
            let count = 0;
            for (let i = 0; i < {N}; i++) if (placed(i)) count++;
            let prefix = 0;
            while (prefix < {N} && placed(order[prefix])) prefix++;
            window.__frames.push({{ count, prefix, budget: app.plot.frames.budget }}); }}; }}""")
    projector.by("tab-tsne").click()
    projector.by("tsne-run").click()  # a large set's t-SNE starts when asked (AUTO_START_POINTS)
    projector.wait_projection("tsne", "done", timeout=600000)
    info = page.evaluate("window.__projector.app.shown.info")
    assert (info["mode"], info["sample_size"], info["n_points"]) == ("sample", SAMPLE, N)
    # Done, the panel says the fit was a sample's (issue 33: it said "done" alone).
    assert projector.by("tsne-note").inner_text() == (
        "Fitted on a random sample of 50,000 of 100,001 points; the others were placed by the "
        "fitted map.")
    frames = page.evaluate("window.__frames")
    streaming = [f for f in frames if f["count"] < N]
    assert streaming, f"no frame arrived before every point was placed: {frames}"
    for frame in streaming:
        assert frame["count"] >= SAMPLE
        # Every placed point comes before any hidden one: the budget draws placed points only.
        assert frame["prefix"] == frame["count"], frame
        assert frame["budget"] < N
