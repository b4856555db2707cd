"""``from projector import Client`` against a real server (uvicorn): every route family, and
the contract the issue asks every door to keep (jobs that say what they are, PCA components,
a comparison refused as a projection, the documented 400, views that must exist)."""

from __future__ import annotations

from pathlib import Path

import httpx
import numpy as np
import pandas as pd
import pytest
from projector.server.routes.jobs import ClustersOut, QualityOut

from projector import Client
from projector.client.answers import ProjectorError
from projector_core.formats.writer import add_embedding
from tests.builders import vectors


@pytest.fixture
def client(serve, sample_logdir) -> Client:
    return Client(serve(sample_logdir))


def test_data_routes(client: Client) -> None:
    assert client.health()
    iris = client.embedding("iris", "iris")
    assert iris["shape"] == [150, 4] and iris["status"] == "ready"
    assert client.embedding("digits", "digits")["label_column"] == "label"
    frame = client.metadata("iris", "iris")
    assert isinstance(frame, pd.DataFrame) and frame.shape == (150, 5)
    assert frame["species"].iloc[0] == "setosa" and frame["sepal_length"].dtype == np.float64
    assert client.tensor("iris", "iris").shape == (150, 4)
    assert client.bookmarks("digits", "digits"), "the sample's bookmarks"
    limits = client.limits("iris", "iris")
    assert limits["neighbors"]["k"]["maximum"] == 149
    assert client.search("iris", "iris", "species", "setosa")[:3] == [0, 1, 2]
    indices, distances = client.neighbors("iris", "iris", index=0, k=3)
    assert len(indices) == 3 and 0 not in indices and np.all(np.diff(distances) >= 0)
    with pytest.raises(ProjectorError) as error:
        client.sprite("iris", "iris")
    assert error.value.status == 404
    view = client.update_session(run="iris", embedding="iris", selection=[1, 2])
    assert client.session(since=view["version"] - 1)["selection"] == [1, 2]
    with pytest.raises(ProjectorError, match="selection index 150 out of range"):
        client.update_session(selection=[150])


def test_projection_with_progress_jobs_clusters_and_quality(client: Client) -> None:
    heard: list[dict] = []
    projection = client.projection("digits", "digits", "pca", on_progress=heard.append,
                                   timeout=120, components=3)
    assert projection.coordinates.shape == (1797, 3), "PCA honours components"
    assert heard and heard[-1]["status"] == "done"
    assert client.project("digits", "digits", "pca", dims=3).shape == (1797, 3), "dims: the width"
    listed = {job["id"]: job for job in client.jobs()}
    assert listed[projection.job]["method"] == "pca"
    assert listed[projection.job]["run"] == "digits"
    assert listed[projection.job]["embedding"] == "digits"
    assert listed[projection.job]["kind"] == "projection"
    groups = client.clusters(projection.job, label_column="label", min_cluster_size=30)
    assert len(groups["assignment"]) == 1797 and groups["clusters"]
    ClustersOut.model_validate(groups, strict=True)  # the answer is what the OpenAPI says
    order = client.lod_order(projection.job)
    assert sorted(order.tolist()) == list(range(1797))
    quality = client.quality(projection.job, k=5)
    assert 0 < quality["trustworthiness"] <= 1 and len(quality["per_point"]) == 1797
    QualityOut.model_validate(quality)


def test_pause_resume_cancel_and_timeout(client: Client) -> None:
    with pytest.raises(TimeoutError, match="still"):
        client.projection("digits", "digits", "tsne", timeout=0.5, n_iter=20000, seed=9)
    running = next(job for job in client.jobs() if job["method"] == "tsne")
    assert client.pause(running["id"])["paused"] in (True, False)  # queued jobs pause on start
    assert client.resume(running["id"])["paused"] is False
    assert client.cancel(running["id"])["status"] == "cancelled"
    with pytest.raises(ProjectorError, match="cancelled"):
        client.wait(running["id"])


def test_compare_steps_and_uploads(serve, tmp_path: Path) -> None:
    a = vectors(120, 6, seed=1)
    b = a.copy()
    b[[3, 4]] = b[[4, 3]]
    images = np.random.default_rng(0).random((120, 3, 8, 8)).astype(np.float32)
    add_embedding(tmp_path / "r", a, global_step=0, label_img=images)
    add_embedding(tmp_path / "r", b, global_step=1)
    client = Client(serve(tmp_path))
    [timeline] = client.steps("r")
    assert [s["step"] for s in timeline["steps"]] == [0, 1]
    first, second = (s["embedding"] for s in timeline["steps"])
    assert {"kind": "steps"}.items() <= client.compare_pairs()[0].items()
    atlas = client.sprite_atlas("r", first)
    assert atlas["single_image_dim"] == [8, 8] and atlas["pages"][0]["count"] == 120
    assert client.sprite_page("r", first, 0).startswith(b"\x89PNG")
    change = client.compare("r", first, "r", second, k=5, top=5, timeout=60)
    assert change["rows"] == 120 and min(change["per_point"]) < 1 == max(change["per_point"])
    comparisons = [job for job in client.jobs() if job["kind"] == "compare"]
    assert comparisons and comparisons[0]["other_embedding"] == second
    for route in (client.clusters, client.quality, client.lod_order,
                  lambda job: client.pick(job, 0, 0, 1)):
        with pytest.raises(ProjectorError) as error:
            route(comparisons[0]["id"])
        assert error.value.status == 422 and "a comparison, not a projection" in error.value.detail
    with pytest.raises(ProjectorError, match=r"init_from_job: job .* is a comparison"):
        client.start("r", first, "tsne", init_from_job=comparisons[0]["id"])

    table = pd.DataFrame({"name": [f"p{i}" for i in range(40)], "group": ["a", "b"] * 20})
    uploaded = client.upload(vectors(40, 3, seed=2), table)
    assert uploaded["shape"] == [40, 3]
    assert client.metadata(uploaded["run"], uploaded["embedding"])["name"].iloc[39] == "p39"
    bare = client.upload(vectors(30, 3, seed=3))
    assert client.tensor(bare["run"], bare["embedding"]).shape == (30, 3)


def test_the_contract_every_door_keeps(serve, sample_logdir, tmp_path: Path) -> None:
    base = serve(sample_logdir)
    broken = httpx.post(f"{base}/api/projections", content=b'{"run": "iris",',
                        headers={"content-type": "application/json"})
    assert broken.status_code == 400 and "not valid JSON" in broken.json()["detail"]
    past = httpx.post(f"{base}/api/session/state",
                      json={"run": "iris", "embedding": "iris", "selection": [3, 150]})
    assert past.status_code == 422
    assert past.json()["detail"] == ("selection index 150 out of range: iris/iris has 150 "
                                     "points (0..149)")
    colour = httpx.post(f"{base}/api/session/state", json={"color_by": "colour"})
    assert colour.status_code == 422 and "unknown column 'colour'" in colour.json()["detail"]
    state = httpx.get(f"{base}/api/session/state").json()
    assert state["selection"] == [] and state["color_by"] is None, "nothing refused is stored"

    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "tensors.tsv").write_text("1\t2\nthree\t4\n")
    (tmp_path / "bad" / "projector_config.json").write_text(
        '{"embeddings": [{"tensorName": "t", "tensorPath": "tensors.tsv"}]}')
    [run] = Client(serve(tmp_path)).runs()
    [embedding] = run["embeddings"]
    assert embedding["status"] == "error" and "tensors.tsv" in embedding["error"]
