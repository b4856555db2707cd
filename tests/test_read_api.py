"""The read API over logdirs written by real tools, and each route with good and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import numpy as np
import pytest

from tests.builders import (
    vectors,
    write_pbtxt_run,
    write_standalone_logdir,
    write_tensorboardx_logdir,
    write_torch_logdir,
)


def _runs(url: str) -> dict[str, dict]:
    response = httpx.get(f"{url}/api/runs")
    assert response.status_code == 200
    return {run["name"]: run for run in response.json()}


def _tensor(url: str, run: str, name: str) -> np.ndarray:
    response = httpx.get(f"{url}/api/tensor", params={"run": run, "embedding": name})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/octet-stream"
    n, d = map(int, response.headers["x-shape"].split(","))
    return np.frombuffer(response.content, dtype="<f4").reshape(n, d)


@pytest.mark.parametrize("writer", [write_torch_logdir, write_tensorboardx_logdir,
                                    write_standalone_logdir])
def test_every_embedding_written_by_real_tools_is_listed_with_exact_values(tmp_path, serve, writer):
    written = writer(tmp_path / "logs")
    url = serve(tmp_path / "logs")
    run = _runs(url)["."]
    assert run["error"] is None
    listed = {e["name"]: e for e in run["embeddings"]}
    assert set(listed) == set(written)
    for name, matrix in written.items():
        assert listed[name]["error"] is None
        assert listed[name]["shape"] == list(matrix.shape)
        np.testing.assert_array_equal(_tensor(url, ".", name), matrix)


def test_torch_metadata_rules_and_sprite(tmp_path, serve):
    write_torch_logdir(tmp_path)
    url = serve(tmp_path)
    embeddings = {e["name"]: e for e in _runs(url)["."]["embeddings"]}
    assert embeddings["default:00000"]["metadata_columns"] == ["label"]
    assert embeddings["default:00000"]["sprite"] == {"single_image_dim": [8, 8]}
    assert embeddings["my/tag%x:00003"]["metadata_columns"] == ["idx", "parity"]
    params = {"run": ".", "embedding": "default:00000"}
    tsv = httpx.get(f"{url}/api/metadata", params=params)
    assert tsv.headers["content-type"].startswith("text/tab-separated-values")
    assert tsv.text.splitlines()[:3] == ["label", "p0", "p1"]
    headed = httpx.get(f"{url}/api/metadata", params={"run": ".", "embedding": "my/tag%x:00003"})
    assert headed.text == (tmp_path / "00003" / "my%2ftag%25x" / "metadata.tsv").read_text()
    sprite = httpx.get(f"{url}/api/sprite", params=params)
    assert sprite.headers["content-type"] == "image/png"
    assert sprite.content == (tmp_path / "00000" / "default" / "sprite.png").read_bytes()


def test_runs_are_named_by_folder_including_the_plugin_folder(tmp_path, serve):
    write_standalone_logdir(tmp_path / "a" / "b")
    plugin = tmp_path / "run2" / "plugins" / "org_tensorflow_tensorboard_projector"
    write_pbtxt_run(plugin, 'embeddings { tensor_name: "t" tensor_path: "t.npy" }', {})
    np.save(plugin / "t.npy", vectors(5, 2))
    names = set(_runs(serve(tmp_path)))
    assert names == {"a/b", "run2"}


def test_the_logdir_run_keeps_its_name_and_says_its_folder(tmp_path, serve):
    """The LOGDIR's own run is "." (TensorBoard's name, kept in the API, URLs and bookmarks);
    ``folder`` names the LOGDIR for the page to show beside it. Other runs have none."""
    write_standalone_logdir(tmp_path / "experiment")
    (tmp_path / "experiment" / "nested").mkdir()
    write_standalone_logdir(tmp_path / "experiment" / "nested")
    runs = {r["name"]: r["folder"] for r in httpx.get(f"{serve(tmp_path / 'experiment')}/api/runs").json()}
    assert runs == {".": "experiment", "nested": None}


def test_npy_tensors_are_converted_to_float32_and_never_unpickled(tmp_path, serve):
    matrix = vectors(6, 3).astype(np.float16)
    np.save(tmp_path / "half.npy", matrix)
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    write_pbtxt_run(tmp_path, 'embeddings { tensor_name: "half" tensor_path: "half.npy" }\n'
                              'embeddings { tensor_name: "objects" tensor_path: "objects.npy" }')
    url = serve(tmp_path)
    listed = {e["name"]: e for e in _runs(url)["."]["embeddings"]}
    np.testing.assert_array_equal(_tensor(url, ".", "half"), matrix.astype(np.float32))
    assert "objects.npy" in listed["objects"]["error"]
    assert "pickle" in listed["objects"]["error"]
    response = httpx.get(f"{url}/api/tensor", params={"run": ".", "embedding": "objects"})
    assert response.status_code == 422
    assert "objects.npy" in response.json()["detail"]


def test_broken_config_still_lists_its_run_and_the_others_keep_working(tmp_path, serve):
    write_pbtxt_run(tmp_path / "bad", 'embeddings { tensor_name: "x"\n  bogus_field: 3 }')
    write_standalone_logdir(tmp_path / "good")
    runs = _runs(serve(tmp_path))
    assert runs["bad"]["embeddings"] == []
    assert "bad/projector_config.pbtxt line 2" in runs["bad"]["error"]
    assert "bogus_field" in runs["bad"]["error"]
    assert runs["good"]["error"] is None


def test_metadata_row_count_off_by_one_explains_the_header_rule(tmp_path, serve):
    np.save(tmp_path / "t.npy", vectors(3, 2))
    write_pbtxt_run(tmp_path, 'embeddings { tensor_name: "t" tensor_path: "t.npy" '
                              'metadata_path: "m.tsv" }', {"m.tsv": "a\tb\n1\t2\n3\t4\n5\t6\n7\t8\n"})
    url = serve(tmp_path)
    embedding = _runs(url)["."]["embeddings"][0]
    assert "m.tsv" in embedding["error"] and "header" in embedding["error"]
    assert embedding["shape"] == [3, 2]  # the tensor itself stays usable
    response = httpx.get(f"{url}/api/metadata", params={"run": ".", "embedding": "t"})
    assert response.status_code == 422 and "m.tsv" in response.json()["detail"]
    assert httpx.get(f"{url}/api/tensor", params={"run": ".", "embedding": "t"}).status_code == 200


def test_bookmarks_route(tmp_path, serve, sample_logdir):
    url = serve(sample_logdir)
    states = httpx.get(f"{url}/api/bookmarks", params={"run": "digits", "embedding": "digits"})
    assert states.status_code == 200
    # Every State of the file, every field, as written.
    assert states.json() == json.loads((sample_logdir / "digits" / "bookmarks.json").read_text())
    assert states.json()[0]["dataSetDimensions"] == [1797, 64]
    none = httpx.get(f"{url}/api/bookmarks", params={"run": "iris", "embedding": "iris"})
    assert none.json() == []


@pytest.mark.parametrize("route", ["tensor", "metadata", "sprite", "bookmarks"])
def test_unknown_names_are_404_and_missing_parameters_422(serve, sample_logdir, route):
    url = serve(sample_logdir)
    unknown_run = httpx.get(f"{url}/api/{route}", params={"run": "nope", "embedding": "digits"})
    assert unknown_run.status_code == 404 and "nope" in unknown_run.json()["detail"]
    unknown = httpx.get(f"{url}/api/{route}", params={"run": "digits", "embedding": "nope"})
    assert unknown.status_code == 404 and "nope" in unknown.json()["detail"]
    missing = httpx.get(f"{url}/api/{route}", params={"run": "digits"})
    assert missing.status_code == 422
    assert isinstance(missing.json()["detail"], str) and "embedding" in missing.json()["detail"]


def test_health_and_openapi(serve, sample_logdir):
    url = serve(sample_logdir)
    assert httpx.get(f"{url}/api/health").json() == {"status": "ok"}
    paths = httpx.get(f"{url}/openapi.json").json()["paths"]
    assert {"/api/runs", "/api/tensor", "/api/metadata", "/api/sprite", "/api/bookmarks"} <= set(paths)
    assert httpx.get(f"{url}/docs").status_code == 200


def test_sample_data_is_served(serve, sample_logdir):
    runs = _runs(serve(sample_logdir))
    shapes = {name: run["embeddings"][0]["shape"] for name, run in runs.items()}
    assert shapes == {"digits": [1797, 64], "iris": [150, 4], "training": [1797, 16], "words": [4000, 384]}
    assert all(run["embeddings"][0]["error"] is None for run in runs.values())


def test_logdir_is_only_read(tmp_path: Path, serve):
    write_torch_logdir(tmp_path / "logs")
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "logs").rglob("*")}
    url = serve(tmp_path / "logs")
    _runs(url)
    _tensor(url, ".", "default:00000")
    after = {p: p.stat().st_mtime_ns for p in (tmp_path / "logs").rglob("*")}
    assert before == after
