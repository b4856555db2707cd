"""Names for clusters, made from a metadata column.

- A categorical column (few distinct values, numbers included: digit labels are numbers):
  the dominant value with its share, "7 (96%)"; when it covers less than 60% the next
  values are added until they do (at most three): "cat (45%), dog (30%)".
- A free-text column (many distinct values): the most distinctive words of the cluster by
  class-based TF-IDF (each cluster's rows form one document; a word weighs its frequency in
  the cluster times log(1 + average words per cluster / its frequency over all clusters));
  a word no more frequent in the cluster than overall never names it.
- A numeric column with many distinct values: its median in the cluster, "zipf ≈ 4.2".
- A column of (nearly) all different single tokens, a word or an id per point: a value
  names one point, not a cluster, and a cluster's alphabetically first words say nothing
  about it; its most central members do ("cat dog horse": the points nearest the
  cluster's centre in the picture).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from projector_core.formats.metadata import Metadata

CATEGORICAL_MAX_VALUES = 100  # more distinct values than this (and > 5% of rows) is free text
UNIQUE_SHARE = 0.9  # this share of distinct values among the present ones: one value per point
MEMBERS = 3
DOMINANT_SHARE = 0.6
MAX_VALUES = 3
TOP_WORDS = 3
TEXT_ROW_LIMIT = 200_000  # text labels are read from an even sample of at most this many rows


def column_kind(metadata: Metadata, column: str) -> str:
    """"categorical", "unique" (a value per point), "numeric" or "text"."""
    values = metadata.column(column)
    present = [v for v in values if v != ""]
    distinct = len(set(present))
    if distinct <= max(CATEGORICAL_MAX_VALUES, 0.05 * len(values)) or distinct <= 1:
        return "categorical"
    if distinct >= UNIQUE_SHARE * len(present) and not metadata.is_numeric(column) \
            and sum(" " in v.strip() for v in present) < 0.5 * len(present):
        return "unique"  # one token per point (a word, an id): sentences keep their words
    return "numeric" if metadata.is_numeric(column) else "text"


def cluster_labels(metadata: Metadata, column: str, groups: Sequence[np.ndarray],
                   coordinates: np.ndarray | None = None) -> list[str]:
    """One label per group of row indices; ``coordinates`` (the picture) finds the central
    members that name clusters by a column of all-different values."""
    kind = column_kind(metadata, column)
    if kind == "categorical":
        names, codes = _codes(metadata.column(column))
        return [_dominant(names, codes, rows) for rows in groups]
    if kind == "numeric":
        numbers = metadata.numeric(column)
        assert numbers is not None
        return [_median(column, numbers[rows]) for rows in groups]
    if kind == "unique" and coordinates is not None:
        values = metadata.column(column)
        return [" ".join(values[i] or "(missing)" for i in central_members(coordinates, rows))
                for rows in groups]
    return _distinctive_words(metadata.column(column), groups)


def central_members(coordinates: np.ndarray, rows: np.ndarray, count: int = MEMBERS) -> list[int]:
    """The ``count`` rows nearest the mean of ``rows`` in ``coordinates``, nearest first."""
    points = np.asarray(coordinates[rows], np.float64)
    distance = ((points - points.mean(axis=0)) ** 2).sum(axis=1)
    nearest = np.argsort(distance, kind="stable")[:count]
    return [int(rows[i]) for i in nearest]


def _codes(values: list[str]) -> tuple[list[str], np.ndarray]:
    """Each row's value as a small integer (-1 for missing), so groups are counted by bincount."""
    index: dict[str, int] = {}
    codes = np.fromiter((-1 if v == "" else index.setdefault(v, len(index)) for v in values),
                        np.int64, count=len(values))
    return list(index), codes


def _dominant(names: list[str], codes: np.ndarray, rows: np.ndarray) -> str:
    picked = codes[rows]
    present = picked[picked >= 0]
    if present.size == 0:
        return "(missing)"
    counts = np.bincount(present, minlength=len(names))
    order = np.argsort(-counts, kind="stable")
    parts = []
    covered = 0.0
    for index in order[:MAX_VALUES]:
        if counts[index] == 0:
            break
        share = counts[index] / picked.size
        parts.append(f"{names[index]} ({share:.0%})")
        covered += share
        if covered >= DOMINANT_SHARE:
            break
    return ", ".join(parts)


def _median(column: str, values: np.ndarray) -> str:
    present = values[np.isfinite(values)]
    if present.size == 0:
        return f"{column}: (missing)"
    return f"{column} ≈ {float(np.median(present)):.4g}"


def _distinctive_words(values: list[str], groups: Sequence[np.ndarray]) -> list[str]:
    total = sum(g.size for g in groups)
    step = max(1, total // TEXT_ROW_LIMIT)
    picked = [g[::step] for g in groups]
    rows = np.concatenate(picked) if picked else np.zeros(0, np.int64)
    docs = [values[i] for i in rows.tolist()]
    from sklearn.feature_extraction.text import CountVectorizer  # on first use

    try:
        counts = CountVectorizer(token_pattern=r"(?u)\b\w+\b", lowercase=True).fit(docs)
    except ValueError:  # no words at all
        return ["(no words)"] * len(groups)
    words = counts.get_feature_names_out()
    matrix = counts.transform(docs).tocsr()
    owner = np.repeat(np.arange(len(groups)), [p.size for p in picked])
    per_class = np.zeros((len(groups), len(words)))
    for g in range(len(groups)):
        per_class[g] = np.asarray(matrix[owner == g].sum(axis=0)).ravel()
    class_totals = per_class.sum(axis=1, keepdims=True)
    tf = per_class / np.where(class_totals > 0, class_totals, 1)
    average = class_totals.mean()
    idf = np.log1p(average / np.maximum(per_class.sum(axis=0), 1))
    overall = per_class.sum(axis=0) / max(1.0, float(class_totals.sum()))
    # A word no more frequent in the cluster than in the whole set names nothing.
    scores = np.where(tf > overall * (1 + 1e-9), tf * idf, 0.0)
    labels = []
    for g in range(len(groups)):
        best = [i for i in np.argsort(-scores[g], kind="stable")[:TOP_WORDS] if scores[g, i] > 0]
        labels.append(" ".join(str(words[i]) for i in best) or "(no words)")
    return labels
