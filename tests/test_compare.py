"""Comparing embeddings: per-point neighbourhood change against a direct scikit-learn
computation, the API's errors, and training steps written by PyTorch offered as timelines."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

from projector_core.data.steps import split_name
from projector_core.kernels.align import procrustes_align
from projector_core.kernels.ann import ApproximateIndex
from projector_core.kernels.compare import compare, set_change
from projector_core.kernels.knn import ExactIndex
from tests.builders import vectors

PERMUTED = np.array([3, 17, 42, 77, 120, 150])  # rows whose vectors are swapped among themselves


def permuted_pair(n: int = 200, d: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """B is A with the rows in PERMUTED rotated one place: the same cloud, six labels moved."""
    a = vectors(n, d, seed=7)
    b = a.copy()
    b[PERMUTED] = a[np.roll(PERMUTED, 1)]
    return a, b


def sklearn_change(a: np.ndarray, b: np.ndarray, k: int, metric: str) -> np.ndarray:
    """Jaccard of each row's k nearest other rows in A and in B, straight from scikit-learn."""
    def sets(x: np.ndarray) -> list[set[int]]:
        found = NearestNeighbors(n_neighbors=k + 1, metric=metric).fit(x).kneighbors(
            x, return_distance=False)
        return [set(row[row != i][:k].tolist()) for i, row in enumerate(found)]
    return np.array([len(x & y) / len(x | y) for x, y in zip(sets(a), sets(b), strict=True)])


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_permuting_rows_changes_exactly_their_neighbourhoods(metric: str) -> None:
    a, b = permuted_pair()
    k = 10
    result = compare(ExactIndex(a), ExactIndex(b), k, metric)
    expected = sklearn_change(a, b, k, metric)
    np.testing.assert_allclose(result.per_point, expected)
    # A row's neighbourhood changes iff it was moved or one of its neighbours was.
    near, _ = ExactIndex(a).neighbors_of(np.arange(len(a)), k, metric)
    touched = np.isin(np.arange(len(a)), PERMUTED) | np.isin(near, PERMUTED).any(axis=1)
    assert set(np.flatnonzero(result.per_point < 1)) <= set(np.flatnonzero(touched))
    assert (result.per_point[PERMUTED] < 0.5).all()
    assert (result.per_point[~touched] == 1).all()
    assert set(result.most_changed[:len(PERMUTED)]) == set(PERMUTED)
    assert result.neighbors == "exact" and result.recall is None


def test_rank_displacement_counts_moves_within_and_beyond_the_list() -> None:
    a = np.array([[1, 2, 3], [1, 2, 3], [1, 2, 3]])
    b = np.array([[1, 2, 3], [2, 1, 3], [1, 2, 9]])
    jaccard, shift = set_change(a, b)
    np.testing.assert_allclose(jaccard, [1, 1, 2 / 4])
    # row 1: 1 and 2 swap (1 + 1) over 3; row 2: 3 leaves (|2 - 3|), 9 enters (|3 - 2|) over 4
    np.testing.assert_allclose(shift, [0, 2 / 3, 2 / 4])


def test_rows_with_nan_have_no_value_and_are_not_listed() -> None:
    a, b = permuted_pair(200, 5)
    b[5] = np.nan
    result = compare(ExactIndex(a), ExactIndex(b), 5, "euclidean")
    assert np.isnan(result.per_point[5]) and 5 not in result.most_changed
    assert np.isfinite(np.delete(result.per_point, 5)).all()


def test_approximate_index_reports_recall_and_matches_exact() -> None:
    a, b = permuted_pair(2000, 8)
    exact = compare(ExactIndex(a), ExactIndex(b), 10, "euclidean")
    approx = compare(ApproximateIndex(ExactIndex(a), "euclidean"),
                     ApproximateIndex(ExactIndex(b), "euclidean"), 10, "euclidean")
    assert approx.neighbors == "approximate" and approx.recall >= 0.95
    assert np.abs(approx.per_point - exact.per_point).mean() < 0.05


def test_procrustes_undoes_a_rotation_reflection_and_shift() -> None:
    a = vectors(50, 3, seed=1)
    rotation, _ = np.linalg.qr(np.random.default_rng(2).normal(size=(3, 3)))
    b = 2.5 * a @ rotation + 7
    aligned = procrustes_align(a, b)
    np.testing.assert_allclose(aligned.coordinates, a, atol=1e-5)
    assert aligned.scale == pytest.approx(0.4)
    padded = procrustes_align(a[:, :2], b)  # column counts may differ
    assert padded.coordinates.shape == (50, 3)


def test_step_names() -> None:
    assert split_name("default:00010") == ("default", 10)
    assert split_name("my/tag%x:00003") == ("my/tag%x", 3)
    assert split_name("word2vec") == ("word2vec", None)


def write_torch_steps(logdir: Path, steps: dict[int, np.ndarray], tag: str = "default") -> None:
    import torch
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(logdir))
    for step, matrix in steps.items():
        writer.add_embedding(torch.from_numpy(matrix), metadata=[f"p{i}" for i in range(len(matrix))],
                             global_step=step, tag=tag)
    writer.close()


def tensor(base: str, run: str, embedding: str) -> np.ndarray:
    response = httpx.get(f"{base}/api/tensor", params={"run": run, "embedding": embedding})
    shape = tuple(int(v) for v in response.headers["X-Shape"].split(","))
    return np.frombuffer(response.content, "<f4").reshape(shape)


@pytest.mark.slow
def test_torch_steps_are_a_timeline_and_compare_like_sklearn(tmp_path: Path, serve) -> None:
    a, b = permuted_pair(160, 6)
    write_torch_steps(tmp_path / "train", {0: a, 5: b, 10: b})
    write_torch_steps(tmp_path / "other", {0: vectors(30, 4)}, tag="enc")
    base = serve(tmp_path)

    steps = httpx.get(f"{base}/api/steps", params={"run": "train"}).json()
    written = [s.pop("written") for s in steps["timelines"][0]["steps"]]
    assert steps["timelines"] == [{"tag": "default", "steps": [
        {"step": 0, "embedding": "default:00000", "rows": 160},
        {"step": 5, "embedding": "default:00005", "rows": 160},
        {"step": 10, "embedding": "default:00010", "rows": 160}]}]
    tensors = tmp_path / "train"  # when each step's files were written, as the events say
    assert written == [pytest.approx(max(p.stat().st_mtime_ns for p in (
        tensors / f"{s:05d}").rglob("*") if p.is_file()) / 1e9) for s in (0, 5, 10)]
    pairs = httpx.get(f"{base}/api/compare/pairs").json()["pairs"]
    assert {(p["kind"], p["a"]["embedding"], p["b"]["embedding"]) for p in pairs} == {
        ("steps", "default:00000", "default:00005"), ("steps", "default:00005", "default:00010")}

    query = {"run": "train", "embedding": "default:00000", "other_run": "train",
             "other_embedding": "default:00005", "k": 8, "metric": "cosine"}
    answer = httpx.get(f"{base}/api/compare", params=query).json()
    assert answer["k"] == 8 and len(answer["per_point"]) == 160
    expected = sklearn_change(tensor(base, "train", "default:00000"),
                              tensor(base, "train", "default:00005"), 8, "cosine")
    np.testing.assert_allclose(answer["per_point"], expected)
    assert answer["mean"] == pytest.approx(expected.mean())
    assert set(answer["most_changed"][:len(PERMUTED)]) == set(PERMUTED)
    assert len(answer["rank_displacement"]) == 160
    same = httpx.get(f"{base}/api/compare", params={**query, "other_embedding": "default:00010",
                                                     "embedding": "default:00005"}).json()
    assert same["per_point"] == [1.0] * 160 and same["most_changed"][:1] == [0]


def test_compare_errors(tmp_path: Path, serve) -> None:
    from projector_core.formats.writer import add_embedding

    add_embedding(tmp_path / "r", vectors(20, 3), global_step=0)
    add_embedding(tmp_path / "r", vectors(12, 3), global_step=1)
    base = serve(tmp_path)
    query = {"run": "r", "embedding": "default:00000", "other_run": "r",
             "other_embedding": "default:00001"}
    mismatch = httpx.get(f"{base}/api/compare", params=query)
    assert mismatch.status_code == 422
    assert "20 rows" in mismatch.json()["detail"] and "12 rows" in mismatch.json()["detail"]
    unknown = httpx.get(f"{base}/api/compare", params={**query, "other_embedding": "nope"})
    assert unknown.status_code == 404 and "nope" in unknown.json()["detail"]
    assert httpx.get(f"{base}/api/compare", params={**query, "embedding": "x"}).status_code == 404
    assert httpx.get(f"{base}/api/compare", params={**query, "other_run": "x"}).status_code == 404
    too_many = httpx.get(f"{base}/api/compare", params={
        **query, "other_embedding": "default:00000", "k": 20})
    assert too_many.status_code == 422 and "k 20" in too_many.json()["detail"]
    assert httpx.get(f"{base}/api/compare", params={**query, "metric": "manhattan"}).status_code == 422
    assert httpx.get(f"{base}/api/steps", params={"run": "nope"}).status_code == 404


def projection(base: str, request: dict) -> dict:
    response = httpx.post(f"{base}/api/projections", params={"wait": "true"}, json=request,
                          timeout=120)
    assert response.status_code == 200, response.text
    return {**response.json(), "job": response.headers["X-Job"]}


@pytest.mark.slow
def test_layouts_of_b_start_from_or_turn_onto_a(tmp_path: Path, serve) -> None:
    from projector_core.formats.writer import add_embedding

    a = vectors(80, 5, seed=3)
    rotation, _ = np.linalg.qr(np.random.default_rng(4).normal(size=(5, 5)))
    add_embedding(tmp_path / "r", a, global_step=0)
    add_embedding(tmp_path / "r", a @ rotation, global_step=1)  # same structure, turned
    base = serve(tmp_path)
    pca_a = projection(base, {"run": "r", "embedding": "default:00000", "method": "pca"})
    pca_b = projection(base, {"run": "r", "embedding": "default:00001", "method": "pca",
                              "params": {"align_to_job": pca_a["job"]}})
    np.testing.assert_allclose(np.array(pca_b["coordinates"]), np.array(pca_a["coordinates"]),
                               atol=1e-3)
    assert pca_b["info"]["alignment"]["residual"] < 1e-3

    tsne_a = projection(base, {"run": "r", "embedding": "default:00000", "method": "tsne",
                               "params": {"n_iter": 250, "perplexity": 10}})
    tsne_b = projection(base, {"run": "r", "embedding": "default:00001", "method": "tsne",
                               "params": {"n_iter": 250, "perplexity": 10,
                                          "init_from_job": tsne_a["job"]}})
    assert tsne_b["info"]["alignment"]["initialised"] is True
    spread = np.ptp(np.array(tsne_a["coordinates"]), axis=0).max()
    drift = np.median(np.linalg.norm(np.array(tsne_b["coordinates"]) - tsne_a["coordinates"], axis=1))
    assert drift < 0.08 * spread  # the same structure lands in the same place

    umap_a = projection(base, {"run": "r", "embedding": "default:00000", "method": "umap",
                               "params": {"n_neighbors": 10, "n_epochs": 100}})
    umap_b = projection(base, {"run": "r", "embedding": "default:00001", "method": "umap",
                               "params": {"n_neighbors": 10, "n_epochs": 100,
                                          "init_from_job": umap_a["job"]}})
    assert umap_b["info"]["alignment"]["initialised"] is True
    first = np.array(umap_a["coordinates"])
    drift = np.median(np.linalg.norm(np.array(umap_b["coordinates"]) - first, axis=1))
    # UMAP's full-rate first epochs shake even a converged start: bounded, not tiny.
    assert drift < 0.25 * np.ptp(first, axis=0).max()

    wrong = httpx.post(f"{base}/api/projections", json={
        "run": "r", "embedding": "default:00001", "method": "umap",
        "params": {"init_from_job": "nope"}})
    assert wrong.status_code == 422 and "init_from_job" in wrong.json()["detail"]


def test_same_tensor_in_two_runs_is_offered_and_the_page_is_linked(tmp_path: Path, serve) -> None:
    from projector_core.formats.writer import add_embedding

    add_embedding(tmp_path / "base", vectors(20, 3, seed=1), global_step=0)
    add_embedding(tmp_path / "tuned", vectors(20, 6, seed=2), global_step=0)  # dims may differ
    add_embedding(tmp_path / "small", vectors(9, 3, seed=3), global_step=0)  # other rows: left out
    base = serve(tmp_path)
    pairs = httpx.get(f"{base}/api/compare/pairs").json()["pairs"]
    assert [(p["kind"], p["a"], p["b"], p["rows"]) for p in pairs] == [
        ("runs", {"run": "base", "embedding": "default:00000"},
         {"run": "tuned", "embedding": "default:00000"}, 20)]
    answer = httpx.get(f"{base}/api/compare", params={
        "run": "base", "embedding": "default:00000", "other_run": "tuned",
        "other_embedding": "default:00000", "k": 5, "metric": "euclidean"}).json()
    expected = sklearn_change(vectors(20, 3, seed=1), vectors(20, 6, seed=2), 5, "euclidean")
    np.testing.assert_allclose(answer["per_point"], expected)
    assert answer["mean"] == pytest.approx(expected.mean())
    assert 'href="compare"' in httpx.get(f"{base}/").text
    page = httpx.get(f"{base}/compare")
    assert page.status_code == 200 and "static/js/compare/main.js" in page.text


def test_background_compare_is_a_job_with_progress(tmp_path: Path, serve) -> None:
    from projector_core.formats.writer import add_embedding

    a, b = permuted_pair(200, 4)
    add_embedding(tmp_path / "r", a, global_step=0)
    add_embedding(tmp_path / "r", b, global_step=1)
    base = serve(tmp_path)
    query = {"run": "r", "embedding": "default:00000", "other_run": "r",
             "other_embedding": "default:00001", "k": 6}
    started = httpx.get(f"{base}/api/compare", params={**query, "background": "true"})
    assert started.status_code == 202
    job = started.json()["job"]
    for _ in range(200):
        status = httpx.get(f"{base}/api/jobs/{job}").json()
        if status["status"] == "done":
            break
        time.sleep(0.05)
    assert status["status"] == "done" and status["progress"] == 1
    values = httpx.get(f"{base}/api/jobs/{job}/result").json()
    answer = httpx.get(f"{base}/api/compare", params=query).json()
    assert [row[0] for row in values["coordinates"]] == pytest.approx(answer["per_point"])
    assert values["info"]["most_changed"] == answer["most_changed"]
    mismatch = httpx.get(f"{base}/api/compare", params={**query, "background": "true", "k": 500})
    assert mismatch.status_code == 422
