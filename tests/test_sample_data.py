"""The committed sample LOGDIR agrees with itself: configs, tensors, metadata, sprite, bookmarks.

Checked with numpy, Pillow and the standard library only, independently of the project's own
readers, so a broken sample is told apart from a broken reader.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_data"
COLOURS = frozenset({
    "red", "yellow", "green", "orange", "purple", "pink", "brown", "black", "white", "grey",
    "gray", "violet", "crimson",
})  # fmt: skip


def pbtxt_fields(path: Path) -> dict[str, list[str]]:
    """`name: value` pairs of a one-embedding ProjectorConfig, repeated fields kept in order."""
    fields: dict[str, list[str]] = {}
    for name, value in re.findall(r"(\w+)\s*:\s*(\"[^\"]*\"|\S+)", path.read_text()):
        fields.setdefault(name, []).append(value.strip('"'))
    return fields


def metadata_rows(path: Path) -> tuple[list[str], list[list[str]]]:
    header, *rows = path.read_text(encoding="utf-8").splitlines()
    return header.split("\t"), [row.split("\t") for row in rows]


def test_each_run_has_one_config_and_the_sample_stays_small() -> None:
    runs = {config.parent.name for config in SAMPLE_DIR.glob("*/projector_config.*")}
    assert runs == {"digits", "iris", "training", "words"}
    total = sum(f.stat().st_size for f in SAMPLE_DIR.rglob("*") if f.is_file())
    assert total < 6 * 2**20


def test_digits_tensor_metadata_and_config_agree() -> None:
    run = SAMPLE_DIR / "digits"
    config = pbtxt_fields(run / "projector_config.pbtxt")
    assert config["tensor_name"] == ["digits"]
    n, d = (int(size) for size in config["tensor_shape"])
    assert (n, d) == (1797, 64)

    tensor = np.fromfile(run / config["tensor_path"][0], dtype="<f4")
    assert tensor.size == n * d
    tensor = tensor.reshape(n, d)
    assert tensor.min() == 0 and tensor.max() == 16
    assert np.array_equal(tensor, np.rint(tensor))  # pixel intensities 0..16

    header, rows = metadata_rows(run / config["metadata_path"][0])
    assert header == ["label", "parity"]
    assert len(rows) == n
    assert {int(label) for label, _ in rows} == set(range(10))
    assert all(parity == ("even" if int(label) % 2 == 0 else "odd") for label, parity in rows)


def test_digits_sprite_holds_each_image_at_its_grid_cell() -> None:
    run = SAMPLE_DIR / "digits"
    config = pbtxt_fields(run / "projector_config.pbtxt")
    n, d = (int(size) for size in config["tensor_shape"])
    width, height = (int(size) for size in config["single_image_dim"])
    assert (width, height) == (16, 16)
    per_row = math.ceil(math.sqrt(n))

    with Image.open(run / config["image_path"][0]) as image:
        assert image.format == "PNG"
        sheet = np.asarray(image.convert("L"), dtype=np.float64)
    assert sheet.shape[1] == per_row * width
    assert math.ceil(n / per_row) * height <= sheet.shape[0] <= per_row * height

    tensor = np.fromfile(run / config["tensor_path"][0], dtype="<f4").reshape(n, d)
    for index in (0, 1, per_row, n - 1):
        row, col = divmod(index, per_row)
        cell = sheet[row * height : (row + 1) * height, col * width : (col + 1) * width]
        pixels = cell.reshape(8, 2, 8, 2).mean(axis=(1, 3))  # back to 8x8
        expected = 255 - tensor[index].reshape(8, 8) * 255 / 16  # dark ink on white
        assert np.abs(pixels - expected).max() <= 1


def test_digits_bookmarks_are_tensorboard_states_for_every_point() -> None:
    run = SAMPLE_DIR / "digits"
    config = pbtxt_fields(run / "projector_config.pbtxt")
    n, d = (int(size) for size in config["tensor_shape"])
    states = json.loads((run / config["bookmarks_path"][0]).read_text())

    assert isinstance(states, list) and 1 <= len(states) <= 3
    for state in states:
        assert state["label"]
        assert state["dataSetDimensions"] == [n, d]
        assert state["selectedProjection"] == "pca"
        assert set(state["cameraDef"]) == {"orthographic", "position", "target", "zoom"}
        projections = state["projections"]
        assert len(projections) == n
        assert all(set(point) == {f"pca-{k}" for k in range(10)} for point in projections)
        assert all(0 <= i < n for i in state["selectedPoints"])
        components = np.array([[point[f"pca-{k}"] for k in range(10)] for point in projections])
        variance = components.var(axis=0)
        assert np.all(np.diff(variance) <= 1e-6 * variance[0])  # PCA order: variance falls


def test_iris_standalone_config_tensor_and_metadata_agree() -> None:
    run = SAMPLE_DIR / "iris"
    (embedding,) = json.loads((run / "projector_config.json").read_text())["embeddings"]
    assert embedding["tensorName"] == "iris"
    n, d = embedding["tensorShape"]
    assert (n, d) == (150, 4)

    tensor = np.loadtxt(run / embedding["tensorPath"], delimiter="\t", ndmin=2)
    assert tensor.shape == (n, d)

    header, rows = metadata_rows(run / embedding["metadataPath"])
    assert header == ["species", "sepal_length", "sepal_width", "petal_length", "petal_width"]
    assert len(rows) == n
    assert {row[0] for row in rows} == {"setosa", "versicolor", "virginica"}
    assert np.array_equal(np.array([row[1:] for row in rows], dtype=np.float64), tensor)


def test_training_run_holds_three_steps_of_one_hidden_layer_that_learns() -> None:
    """The Compare page's timeline: steps 1, 5, 20 of one tag, same rows, labels as digits."""
    run = SAMPLE_DIR / "training"
    config = pbtxt_fields(run / "projector_config.pbtxt")
    assert config["tensor_name"] == ["hidden:00001", "hidden:00005", "hidden:00020"]
    total = sum(f.stat().st_size for f in run.rglob("*") if f.is_file())
    assert total < 2**20
    _, digit_rows = metadata_rows(SAMPLE_DIR / "digits" / "metadata.tsv")
    agreement = []
    for tensor_path, metadata_path in zip(config["tensor_path"], config["metadata_path"], strict=True):
        tensor = np.loadtxt(run / tensor_path, delimiter="\t", ndmin=2)
        assert tensor.shape == (1797, 16) and tensor.min() >= 0  # ReLU activations
        header, rows = metadata_rows(run / metadata_path)
        assert header == ["label", "parity"] and rows == digit_rows
        labels = np.array([int(row[0]) for row in rows])
        gaps = np.linalg.norm(tensor[:, None] - tensor[None], axis=2)
        np.fill_diagonal(gaps, np.inf)
        agreement.append(float((labels[gaps.argmin(axis=1)] == labels).mean()))
    assert agreement[0] < agreement[-1]  # training pulls each digit's points together


@pytest.fixture(scope="module")
def words() -> tuple[dict[str, list[str]], np.ndarray, list[str], list[list[str]]]:
    run = SAMPLE_DIR / "words"
    config = pbtxt_fields(run / "projector_config.pbtxt")
    vectors = np.load(run / config["tensor_path"][0], allow_pickle=False)
    header, rows = metadata_rows(run / config["metadata_path"][0])
    return config, vectors, header, rows


def test_words_tensor_is_float16_and_matches_config_and_metadata(words) -> None:
    config, vectors, header, rows = words
    assert config["tensor_name"] == ["words"]
    assert vectors.dtype == np.float16
    assert vectors.shape == tuple(int(size) for size in config["tensor_shape"])
    n, d = vectors.shape
    assert 3000 <= n <= 5000 and d == 384
    assert np.isfinite(vectors).all()
    assert np.allclose(np.linalg.norm(vectors.astype(np.float32), axis=1), 1, atol=1e-2)

    assert header[:2] == ["word", "category"]
    assert len(rows) == n
    names = [row[0] for row in rows]
    assert len(set(names)) == n
    assert {"colour", "animal", "number", "country", "other"} <= {row[1] for row in rows}


def test_blue_has_a_colour_among_its_five_cosine_neighbours(words) -> None:
    _, vectors, _, rows = words
    names = [row[0] for row in rows]
    unit = vectors.astype(np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    blue = names.index("blue")
    order = [i for i in np.argsort(-(unit @ unit[blue])) if i != blue][:5]
    neighbours = {names[i] for i in order}
    assert neighbours & COLOURS, neighbours
