"""Switching projections: PCA components, t-SNE and UMAP streamed from the server, custom axes."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

pytestmark = pytest.mark.browser

IRIS = {"run": "iris", "embedding": "iris", "tsne": {"is3d": False, "perplexity": 10, "nIter": 300}}


def positions(projector) -> np.ndarray:
    return np.array(projector.page.evaluate("Array.from(window.__projector.app.plot.positions)"))


def test_pca_components_and_3d(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), {**IRIS, "projection": "pca"})
    assert projector.by("tab-pca").get_attribute("aria-selected") == "true"
    assert "Total variance described" in projector.by("pca-variance").inner_text()
    options = projector.by("pca-x").locator("option").all_inner_texts()
    assert len(options) == 4 and options[0].startswith("PC1 (variance ")
    assert projector.by("mode-badge").inner_text() == "3D"
    flat_before = positions(projector)
    projector.by("pca-3d").uncheck()
    projector.wait_settled()
    assert projector.by("mode-badge").inner_text() == "2D"
    assert np.all(positions(projector)[2::3] == 0)
    projector.by("pca-x").select_option("2")
    projector.wait_settled()
    assert not np.allclose(positions(projector), flat_before)
    assert projector.state()["pca"]["x"] == 2


def test_tsne_streams_frames_counts_iterations_and_stops(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), {**IRIS, "projection": "pca"})
    pca = positions(projector)
    projector.by("tab-tsne").click()
    result = projector.wait_projection("tsne", "done")
    assert result["frames"] >= 2, "intermediate frames arrive while t-SNE runs"
    assert projector.by("tsne-iteration").inner_text() == "300"
    assert projector.by("tsne-run").inner_text() == "Re-run"
    projector.wait_settled()
    assert projector.by("mode-badge").inner_text() == "2D"
    assert not np.allclose(positions(projector), pca)
    assert projector.drawn_pixels() > 300
    # A longer run can be paused, resumed and stopped.
    projector.by("tsne-iterations").fill("20000")
    projector.by("tsne-iterations").dispatch_event("change")
    assert "Re-run" in projector.by("tsne-note").inner_text()
    projector.by("tsne-run").click()
    projector.wait_js("app.shown.status === 'running' && app.shown.iteration > 0")
    projector.by("tsne-pause").click()
    projector.wait_text("tsne-pause", "Resume")
    assert projector.by("tsne-status").text_content().startswith("paused")
    projector.by("tsne-pause").click()
    projector.wait_text("tsne-pause", "Pause")
    projector.by("tsne-stop").click()
    stopped = projector.wait_projection("tsne", "cancelled")
    assert stopped["iteration"] < 20000


def _jobs(url: str, method: str) -> list[str]:
    return [j["id"] for j in httpx.get(f"{url}/api/jobs", timeout=30).json()["jobs"]
            if j.get("method") == method]


@pytest.mark.parametrize("method", ["tsne", "umap"])
def test_opening_a_large_sets_tab_waits_for_run_and_run_never_restarts_it(serve, tmp_path,
                                                                         projector, method):
    """Above AUTO_START_POINTS, opening the tab starts nothing (minutes of server work are the
    user's to ask for): the plot says to press Run. Run starts it; pressed again while it runs
    (as "Re-run" was) it goes on, the same job, instead of starting over. The panel's words,
    bar and the progress card say the same."""
    from projector_core.formats.writer import add_embedding

    rng = np.random.default_rng(8)
    add_embedding(tmp_path / "logs", rng.normal(size=(6000, 8)).astype("f4"), tag="many")
    url = serve(tmp_path / "logs")
    projector.open(url)
    projector.by(f"tab-{method}").click()
    projector.wait_text("plot-message", "press Run", contains=True)
    assert "6,000 points takes minutes" in projector.by("plot-message").inner_text()
    assert _jobs(url, method) == []
    assert projector.by(f"{method}-run").inner_text() == "Run"

    projector.by(f"{method}-run").click()
    projector.wait_js("app.shown && app.shown.jobId !== null && app.shown.progress > 0")
    assert projector.by("plot-message").is_hidden()
    assert projector.by(f"{method}-run").inner_text() == "Running…"
    assert projector.by(f"{method}-run").is_disabled()
    job = projector.page.evaluate("window.__projector.app.shown.jobId")
    projector.page.evaluate("window.__projector.app.projecting.run()")  # Run again, by any way
    assert projector.page.evaluate("window.__projector.app.shown.jobId") == job
    assert _jobs(url, method) == [job]
    # One figure everywhere: the panel's status and the card name the bar's percentage.
    texts = projector.page.evaluate(f"""() => {{ const q = (t) => document.querySelector(
        `[data-testid="${{t}}"]`); return [q('progress-label').textContent,
        q('{method}-status').textContent, q('{method}-progress').style.width]; }}""")
    card, status, bar = texts
    assert bar in card and bar in status and card.split(": ", 1)[1] in status, texts
    projector.by(f"{method}-stop").click()
    projector.wait_projection(method, "cancelled")
    assert projector.by(f"{method}-run").inner_text() == "Re-run"


def test_umap_runs_with_progress(serve, sample_logdir, projector):
    umap = {"is3d": True, "nNeighbors": 10}
    projector.open(serve(sample_logdir), {**IRIS, "projection": "pca", "umap": umap})
    projector.by("tab-umap").click()
    projector.wait_projection("umap", "done")
    assert projector.by("umap-status").text_content() == "done"
    assert projector.by("umap-progress").get_attribute("style") == "width: 100%;"
    assert projector.by("mode-badge").inner_text() == "3D"
    assert np.any(positions(projector)[2::3] != 0)


def test_custom_projection_reports_matches(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), {**IRIS, "projection": "pca"})
    projector.by("tab-custom").click()
    assert "Type a query" in projector.by("plot-message").inner_text()
    assert projector.by("custom-column").input_value() == "species"
    projector.by("custom-left").fill("setosa")
    projector.by("custom-right").fill("virginica")
    projector.wait_projection("custom", "done")
    projector.wait_text("custom-right-matches", "50 matches")
    assert projector.by("custom-left-matches").inner_text() == "50 matches"
    assert projector.by("mode-badge").inner_text() == "2D"
    projector.wait_settled()
    xs = positions(projector)[0::3]
    assert xs[:50].mean() < xs[100:].mean(), "setosa on the left, virginica on the right"
    projector.by("custom-regex").check()
    projector.by("custom-left").fill("^(setosa|versicolor)$")
    projector.wait_text("custom-left-matches", "100 matches")
