"""Level of detail: every prefix of the order is an even sample; the routes serve it and
metadata columns as typed arrays."""

from __future__ import annotations

import json
import time

import httpx
import numpy as np
import pytest

from projector_core.tiles.order import lod_order
from tests.builders import write_points_run


def blobs(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Three blobs holding 70%, 25% and 5% of the points, and one far outlier (the last)."""
    rng = np.random.default_rng(seed)
    blob = rng.choice(3, n - 1, p=[0.7, 0.25, 0.05])
    centres = np.array([[0, 0], [8, 0], [0, 8]])
    coords = centres[blob] + rng.normal(0, 1, (n - 1, 2))
    return np.vstack([coords, [[60, 60]]]).astype(np.float32), np.r_[blob, 3]


def test_order_is_a_permutation_with_missing_points_last():
    coords, _ = blobs(5000)
    coords[[3, 70]] = np.nan
    order = lod_order(coords)
    assert order.dtype == np.int32
    assert np.array_equal(np.sort(order), np.arange(5000))
    assert set(order[-2:]) == {3, 70}
    assert np.array_equal(lod_order(coords), order)  # deterministic


@pytest.mark.parametrize("fraction", [0.02, 0.06, 0.3])
def test_every_prefix_keeps_each_regions_share(fraction):
    coords, blob = blobs(200_000)
    order = lod_order(coords)
    prefix = order[: int(fraction * len(order))]
    whole = np.bincount(blob, minlength=4)[:3] / len(blob)
    sample = np.bincount(blob[prefix], minlength=4)[:3] / len(prefix)
    np.testing.assert_allclose(sample, whole, atol=0.01)
    # Spatially even: the share in each of a 8 x 8 grid of the plot matches too.
    cells = np.floor((coords - coords.min(0)) / (np.ptp(coords, 0) + 1e-9) * 8).astype(int)
    cell = cells[:, 0] * 8 + cells[:, 1]
    whole_cells = np.bincount(cell, minlength=64) / len(cell)
    sample_cells = np.bincount(cell[prefix], minlength=64) / len(prefix)
    assert np.abs(sample_cells - whole_cells).max() < 0.01


def test_outliers_come_early():
    coords, _ = blobs(200_000)
    order = lod_order(coords)
    assert np.flatnonzero(order == len(coords) - 1)[0] < 100  # the far point, in the first 100


def test_three_dimensions_and_one():
    rng = np.random.default_rng(1)
    cube = rng.random((20_000, 3)).astype(np.float32)
    order = lod_order(cube)
    assert np.array_equal(np.sort(order), np.arange(20_000))
    octant = (cube[order[:2000]] > 0.5) @ [1, 2, 4]
    assert np.bincount(octant, minlength=8).min() > 200  # about 250 each
    line = lod_order(rng.random((1000, 1)))
    assert np.array_equal(np.sort(line), np.arange(1000))


def write_points(folder, n: int, labels: list[str]) -> None:
    rng = np.random.default_rng(0)
    write_points_run(folder, rng.normal(size=(n, 2)), "label\tscore\n" + "".join(
        f"{lab}\t{i / 4}\n" for i, lab in enumerate(labels)))


def pca_job(url: str, n: int, dims: int = 2) -> tuple[str, np.ndarray]:
    """A finished PCA job of the run's points: its id and its coordinates."""
    request = {"run": "run", "embedding": "points", "method": "pca", "dims": dims}
    answer = httpx.post(f"{url}/api/projections?wait=true", json=request,
                        headers={"Accept": "application/octet-stream"}, timeout=60)
    return answer.headers["X-Job"], np.frombuffer(answer.content, "<f4").reshape(n, -1)


def test_lod_route_serves_the_order_of_a_done_job(serve, tmp_path):
    labels = [f"c{i % 3}" for i in range(3000)]
    write_points(tmp_path / "logs" / "run", 3000, labels)
    url = serve(tmp_path / "logs")
    job, coords = pca_job(url, 3000)
    lod = httpx.get(f"{url}/api/jobs/{job}/lod", params={"axes": "0,1"}, timeout=60)
    assert lod.status_code == 200 and lod.headers["content-type"] == "application/octet-stream"
    order = np.frombuffer(lod.content, "<i4")
    assert np.array_equal(order, lod_order(coords[:, [0, 1]]))
    assert httpx.get(f"{url}/api/jobs/{job}/lod", params={"axes": "0,9"}).status_code == 422
    assert httpx.get(f"{url}/api/jobs/nope/lod").status_code == 404


def test_lod_points_route_serves_the_order_in_chunks_with_coordinates(serve, tmp_path):
    write_points(tmp_path / "logs" / "run", 3000, ["a"] * 3000)
    url = serve(tmp_path / "logs")
    request = {"run": "run", "embedding": "points", "method": "pca", "dims": 3}
    job = httpx.post(f"{url}/api/projections", json=request).json()["job"]
    # Asked at once: the route waits for the job, then answers the head of the order.
    head = httpx.get(f"{url}/api/jobs/{job}/lod/points",
                     params={"axes": "0,1,2", "offset": 0, "count": 500}, timeout=60)
    assert head.status_code == 200
    assert head.headers["X-Axes"] == "0,1"  # a 2-column result: the third axis is its last
    assert (head.headers["X-Total"], head.headers["X-Count"]) == ("3000", "500")
    answer = httpx.post(f"{url}/api/projections?wait=true", json=request,
                        headers={"Accept": "application/octet-stream"}, timeout=60)
    coords = np.frombuffer(answer.content, "<f4").reshape(3000, -1)
    order = lod_order(coords[:, [0, 1]])
    chunks = [head] + [httpx.get(f"{url}/api/jobs/{job}/lod/points",
                                 params={"axes": "0,1", "offset": offset, "count": 1000})
                       for offset in (500, 1500, 2500)]
    ranks, rows = [], []
    for chunk in chunks:
        count = int(chunk.headers["X-Count"])
        ranks.append(np.frombuffer(chunk.content[:count * 4], "<i4"))
        rows.append(np.frombuffer(chunk.content[count * 4:], "<f4").reshape(count, 2))
    assert [len(r) for r in ranks] == [500, 1000, 1000, 500]
    assert np.array_equal(np.concatenate(ranks), order)
    assert np.array_equal(np.concatenate(rows), coords[order][:, :2])
    bounds = json.loads(head.headers["X-Bounds"])
    np.testing.assert_allclose(bounds["lo"], coords.min(0)[:2], rtol=1e-6)
    np.testing.assert_allclose(bounds["hi"], coords.max(0)[:2], rtol=1e-6)
    rest = httpx.get(f"{url}/api/jobs/{job}/lod/points", params={"offset": 2900})
    assert rest.headers["X-Count"] == "100"
    assert httpx.get(f"{url}/api/jobs/{job}/lod/points", params={"offset": -1}).status_code == 422
    assert httpx.get(f"{url}/api/jobs/nope/lod/points").status_code == 404


def test_lod_points_early_answers_a_random_sample_until_the_order_is_computed(serve, tmp_path):
    write_points(tmp_path / "logs" / "run", 3000, ["a"] * 3000)
    url = serve(tmp_path / "logs")
    job, coords = pca_job(url, 3000)
    params = {"axes": "0,1", "count": 400, "early": "true"}
    early = httpx.get(f"{url}/api/jobs/{job}/lod/points", params=params, timeout=60)
    assert early.headers["X-Order"] == "random" and early.headers["X-Count"] == "400"
    indices = np.frombuffer(early.content[:1600], "<i4")
    assert len(set(indices.tolist())) == 400 and indices.max() < 3000
    np.testing.assert_array_equal(np.frombuffer(early.content[1600:], "<f4").reshape(400, 2),
                                  coords[indices][:, :2])
    httpx.get(f"{url}/api/jobs/{job}/lod", params={"axes": "0,1"}, timeout=60)  # computes it
    head = httpx.get(f"{url}/api/jobs/{job}/lod/points", params=params, timeout=60)
    assert head.headers["X-Order"] == "lod"
    order = lod_order(coords[:, [0, 1]])
    assert np.array_equal(np.frombuffer(head.content[:1600], "<i4"), order[:400])


def test_lod_route_refuses_a_job_not_done(serve, tmp_path):
    write_points(tmp_path / "logs" / "run", 500, ["a"] * 500)
    url = serve(tmp_path / "logs")
    job = httpx.post(f"{url}/api/projections", json={
        "run": "run", "embedding": "points", "method": "tsne", "dims": 2,
        "params": {"perplexity": 5, "n_iter": 5000}}).json()["job"]
    time.sleep(0.2)
    answer = httpx.get(f"{url}/api/jobs/{job}/lod")
    httpx.delete(f"{url}/api/jobs/{job}")
    assert answer.status_code == 409
    # The points route waits for the job: a cancelled one is refused.
    assert httpx.get(f"{url}/api/jobs/{job}/lod/points", timeout=30).status_code == 409


def test_metadata_column_as_dictionary_and_codes(serve, tmp_path):
    labels = ["cat", "dög", "", "cat", 'quote"tab'] * 20
    write_points(tmp_path / "logs" / "run", 100, labels)
    url = serve(tmp_path / "logs")
    params = {"run": "run", "embedding": "points", "column": "label"}
    answer = httpx.get(f"{url}/api/metadata/column", params=params)
    assert answer.headers["X-Kind"] == "categorical"
    head = int(answer.headers["X-Dictionary-Bytes"])
    assert head % 4 == 0
    dictionary = json.loads(answer.content[:head].decode())
    codes = np.frombuffer(answer.content[head:], "<i4")
    assert [dictionary[c] for c in codes] == labels
    numeric = httpx.get(f"{url}/api/metadata/column", params={**params, "column": "score"})
    assert numeric.headers["X-Kind"] == "numeric"
    np.testing.assert_allclose(np.frombuffer(numeric.content, "<f4"), np.arange(100) / 4)
    as_text = httpx.get(f"{url}/api/metadata/column",
                        params={**params, "column": "score", "kind": "categorical"})
    assert as_text.headers["X-Kind"] == "categorical"
    refused = httpx.get(f"{url}/api/metadata/column", params={**params, "kind": "numeric"})
    assert refused.status_code == 422 and "not numeric" in refused.json()["detail"]
    unknown = httpx.get(f"{url}/api/metadata/column", params={**params, "column": "nope"})
    assert unknown.status_code == 422 and "label, score" in unknown.json()["detail"]


def test_metadata_column_counts_give_the_dictionary_and_rows_per_value(serve, tmp_path):
    """What a tiled view colours by (the tiles carry the codes): the same dictionary as
    /api/metadata/column with each value's rows, and none past `limit` values."""
    labels = ["cat", "dög", "", "cat", 'quote"tab'] * 20
    write_points(tmp_path / "logs" / "run", 100, labels)
    url = serve(tmp_path / "logs")
    params = {"run": "run", "embedding": "points", "column": "label"}
    whole = httpx.get(f"{url}/api/metadata/column", params=params)
    head = int(whole.headers["X-Dictionary-Bytes"])
    dictionary = json.loads(whole.content[:head].decode())
    counts = httpx.get(f"{url}/api/metadata/column/counts", params=params).json()
    assert counts["dictionary"] == dictionary and counts["values"] == 4
    assert dict(zip(counts["dictionary"], counts["counts"], strict=True)) == {
        "cat": 40, "dög": 20, "": 20, 'quote"tab': 20}
    few = httpx.get(f"{url}/api/metadata/column/counts", params={**params, "limit": 3}).json()
    assert few == {"column": "label", "values": 4, "dictionary": None, "counts": None}
    unknown = httpx.get(f"{url}/api/metadata/column/counts", params={**params, "column": "nope"})
    assert unknown.status_code == 422 and "label, score" in unknown.json()["detail"]
