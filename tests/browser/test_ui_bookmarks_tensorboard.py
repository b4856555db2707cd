"""Bookmarks interoperate with TensorBoard for real, both ways: a file our page saves is served
by TensorBoard's own projector plugin (a real ``tensorboard`` process) as a valid State list,
and State lists written as TensorBoard's format describes (t-SNE and UMAP, with the per-point
positions they hold) load in our page at exactly those positions."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time

import httpx
import numpy as np
import pytest

pytestmark = pytest.mark.browser

DIGITS = {"run": "digits", "embedding": "digits", "sprites": False}
IRIS = {"run": "iris", "embedding": "iris", "sprites": False}

# What TensorBoard's State holds (tensorboard-projector.md, "Bookmarks file"), with its types.
STATE_FIELDS = {
    "label": str, "isSelected": bool, "selectedProjection": str, "dataSetDimensions": list,
    "tSNEIteration": int, "tSNEPerplexity": (int, float), "tSNELearningRate": (int, float),
    "tSNEis3d": bool, "umapIs3d": bool, "umapNeighbors": int, "umapMinDist": (int, float),
    "pcaComponentDimensions": list, "customSelectedSearchByMetadataOption": (str, type(None)),
    "projections": list, "selectedPoints": list, "cameraDef": dict,
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _assert_valid_state(state: dict, n: int, d: int) -> None:
    for field, kind in STATE_FIELDS.items():
        assert isinstance(state.get(field), kind), (field, state.get(field))
    assert state["selectedProjection"] in ("pca", "tsne", "umap", "custom")
    assert state["dataSetDimensions"] == [n, d] and len(state["projections"]) == n
    keys = {f"pca-{i}" for i in range(10)} | {f"tsne-{i}" for i in range(3)} | {
        f"umap-{i}" for i in range(3)} | {"linear-x", "linear-y"}
    for point in state["projections"]:
        assert set(point) <= keys and all(isinstance(v, (int, float)) for v in point.values())
    assert set(state["cameraDef"]) >= {"orthographic", "position", "target", "zoom"}


def test_a_bookmark_file_our_page_saves_is_served_by_tensorboards_projector(
        serve, sample_logdir, projector, tmp_path):
    projector.open(serve(sample_logdir), DIGITS)
    projector.by("color-by").select_option("parity")
    projector.page.evaluate("window.__projector.app.highlight.selectPoint(7)")
    projector.by("bookmark-add").click()
    with projector.page.expect_download() as download:
        projector.by("bookmark-save").click()
    saved = tmp_path / "ours.json"
    download.value.save_as(saved)
    ours = json.loads(saved.read_text())

    logdir = tmp_path / "tb"
    logdir.mkdir()
    for name in ("tensors.bytes", "metadata.tsv"):
        shutil.copy(sample_logdir / "digits" / name, logdir / name)
    shutil.copy(saved, logdir / "bookmarks.json")
    (logdir / "projector_config.pbtxt").write_text(
        'embeddings {\n  tensor_name: "digits"\n  tensor_path: "tensors.bytes"\n'
        '  tensor_shape: 1797\n  tensor_shape: 64\n  metadata_path: "metadata.tsv"\n'
        '  bookmarks_path: "bookmarks.json"\n}\n')
    port = _free_port()
    tensorboard = subprocess.Popen(
        [sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--host", "127.0.0.1",
         "--port", str(port), "--load_fast=false"], stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/data/plugin/projector/bookmarks"
    try:
        deadline, answer = time.monotonic() + 180, None
        while answer is None or answer.status_code != 200:
            assert tensorboard.poll() is None, tensorboard.stderr.read()
            assert time.monotonic() < deadline, answer.text if answer else "no answer"
            try:
                answer = httpx.get(url, params={"run": ".", "name": "digits"}, timeout=30)
            except httpx.TransportError:
                answer = None
            time.sleep(0.3)
    finally:
        tensorboard.terminate()
        tensorboard.wait(30)
    served = answer.json()
    assert served == ours  # TensorBoard hands its page our file, parsed as JSON by it
    assert len(served) == 3
    for state in served:
        _assert_valid_state(state, 1797, 64)
    assert served[-1]["selectedPoints"] == [7]
    assert served[-1]["selectedColorOptionName"] == "parity"
    pca = np.array([[p["pca-0"], p["pca-1"]] for p in served[-1]["projections"]])
    assert np.isfinite(pca).all() and pca.std(axis=0).min() > 0


@pytest.mark.parametrize("method", ["tsne", "umap"])
def test_a_tensorboard_state_list_loads_with_the_positions_it_holds(
        serve, sample_logdir, projector, tmp_path, method):
    """A t-SNE or UMAP bookmark restored in the page: the points sit where the file says
    (up to the plot's own centring and uniform scaling), and no projection is recomputed."""
    rng = np.random.default_rng(5)
    xy = np.column_stack([np.cos(np.arange(150) / 7) * 3, rng.normal(size=150)])
    key = method  # TensorBoard's keys: tsne-0, tsne-1 or umap-0, umap-1
    state = {
        "label": f"a {method} view", "isSelected": True, "selectedProjection": method,
        "dataSetDimensions": [150, 4], "tSNEIteration": 500, "tSNEPerplexity": 20,
        "tSNELearningRate": 10, "tSNEis3d": False, "umapIs3d": False, "umapNeighbors": 15,
        "umapMinDist": 0.1, "pcaComponentDimensions": [0, 1],
        "customSelectedSearchByMetadataOption": "species", "customXLeftText": "",
        "customXLeftRegex": False, "customXRightText": "", "customXRightRegex": False,
        "customYUpText": "", "customYUpRegex": False, "customYDownText": "",
        "customYDownRegex": False,
        "projections": [{f"{key}-0": float(x), f"{key}-1": float(y)} for x, y in xy],
        "selectedPoints": [3], "filteredPoints": [], "shuffledDataIndices": [],
        "cameraDef": {"orthographic": True, "position": [0, 0, 10], "target": [0, 0, 0],
                      "zoom": 1},
        "selectedColorOptionName": "species", "forceCategoricalColoring": False,
        "selectedLabelOption": "species",
    }
    path = tmp_path / "tensorboard.json"
    path.write_text(json.dumps([state]))
    projector.open(serve(sample_logdir), IRIS)
    projector.by("bookmark-load").set_input_files(str(path))
    projector.page.wait_for_function(
        f"window.__projector.state().projection === '{method}' && "
        "window.__projector.state().focus === 3")
    projector.wait_settled()
    assert projector.state()["colorBy"] == "species"
    shown = np.array(projector.page.evaluate(
        "Array.from(window.__projector.app.plot.positions)")).reshape(150, 3)[:, :2]
    # shown = scale * xy + offset, one scale for both axes.
    design = np.column_stack([xy.reshape(-1), np.tile([[1, 0], [0, 1]], (150, 1))])
    (scale, *offset), *_ = np.linalg.lstsq(design, shown.reshape(-1), rcond=None)
    assert scale > 0
    np.testing.assert_allclose(shown, scale * xy + offset, atol=1e-5 * scale * np.ptp(xy))
    jobs = projector.page.evaluate("window.__projector.projection()")
    assert jobs["method"] == method and jobs["status"] == "done", jobs
