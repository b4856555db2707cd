"""Cluster names from metadata: dominant values with shares, distinctive words, medians."""

from __future__ import annotations

import numpy as np

from projector_core.formats.metadata import Metadata
from projector_core.kernels.cluster_labels import cluster_labels, column_kind


def test_categorical_names_the_dominant_value_with_its_share():
    values = ["7"] * 24 + ["1"] + ["3"] * 10 + ["4"] * 8 + ["5"] * 7
    metadata = Metadata.from_columns({"label": values})
    groups = [np.arange(25), np.arange(25, 50)]
    assert column_kind(metadata, "label") == "categorical"
    assert cluster_labels(metadata, "label", groups) == ["7 (96%)", "3 (40%), 4 (32%)"]


def test_free_text_names_words_distinctive_of_the_cluster_not_common_ones():
    rng = np.random.default_rng(0)
    fruit = [f"the red apple {w} {i}" for i, w in enumerate(rng.choice(["pie", "tree"], 150))]
    sea = [f"the blue ocean {w} {i}" for i, w in enumerate(rng.choice(["wave", "salt"], 150))]
    metadata = Metadata.from_columns({"text": fruit + sea})
    assert column_kind(metadata, "text") == "text"
    first, second = cluster_labels(metadata, "text", [np.arange(150), np.arange(150, 300)])
    assert set(first.split()) <= {"red", "apple", "pie", "tree"} and "the" not in first.split()
    assert set(second.split()) <= {"blue", "ocean", "wave", "salt"} and len(second.split()) == 3


def test_continuous_numbers_are_named_by_their_median():
    values = [f"{v:.3f}" for v in np.linspace(0, 10, 400)]
    metadata = Metadata.from_columns({"zipf": values})
    assert column_kind(metadata, "zipf") == "numeric"
    assert cluster_labels(metadata, "zipf", [np.arange(0, 200)]) == ["zipf ≈ 2.494"]


def test_a_word_per_point_names_clusters_by_their_central_members():
    words = [f"w{i:03d}" for i in range(300)]
    metadata = Metadata.from_columns({"word": words})
    assert column_kind(metadata, "word") == "unique"
    picture = np.zeros((300, 2))
    picture[:, 0] = np.arange(300)  # members of 0..99 lie on a line: the centre is 49.5
    labels = cluster_labels(metadata, "word", [np.arange(100)], picture)
    assert labels == ["w049 w050 w048"]  # not the alphabetically first "w000 w001 w002"
