"""Point colours for pictures made without a browser, by the front end's rules
(``frontend/js/colors.js``): categories by count, most frequent first, on the same 20-colour
palette; numbers on the same viridis gradient; grey for a missing value. The palette and
stops are restated here (Python cannot import the ES module); ``tests/test_render.py`` reads
colors.js and fails when the two differ."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from projector_core.formats.metadata import Metadata

DEFAULT_COLOR = (117, 117, 217)
MISSING_COLOR = (150, 150, 150)
PALETTE = (
    "#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1",
    "#edc948", "#76b7b2", "#ff9da7", "#9c755f", "#6b6ecf",
    "#a0cbe8", "#ffbe7d", "#8cd17d", "#d4a6c8", "#86bcb6",
    "#f1ce63", "#d37295", "#b6992d", "#499894", "#bab0ac",
)
GRADIENT_STOPS = ("#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c",
                  "#28ae80", "#5ec962", "#addc30", "#fde725")
LEGEND_ROWS = 12


def rgb(hex_color: str) -> tuple[int, int, int]:
    h = hex_color.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


@dataclass
class Coloring:
    """uint8 [N, 3] colours, and the legend: rows of (text, colour or None), or a numeric
    range (lo, hi) drawn as a gradient bar."""

    colors: np.ndarray
    title: str | None = None
    rows: list[tuple[str, tuple[int, int, int] | None]] | None = None
    numeric: tuple[float, float] | None = None


def default_color_column(metadata: Metadata | None) -> str | None:
    """The front end's default: the first column with 2..20 distinct values."""
    if metadata is None:
        return None
    for name in metadata.names:
        if 2 <= len(set(metadata.column(name))) <= 20:
            return name
    return None


def _sort_key(item: tuple[str, int]) -> tuple[Any, ...]:
    value, count = item
    try:
        number = float(value)
        return (-count, 0, number if np.isfinite(number) else 0.0, value)
    except ValueError:
        return (-count, 1, 0.0, value)


def categorical(values: list[str], title: str) -> Coloring:
    counts: dict[str, int] = {}
    for v in values:
        if v != "":
            counts[v] = counts.get(v, 0) + 1
    order = sorted(counts.items(), key=_sort_key)
    colour_of = {v: rgb(PALETTE[i % len(PALETTE)]) for i, (v, _) in enumerate(order)}
    colors = np.array([colour_of.get(v, MISSING_COLOR) for v in values], np.uint8).reshape(-1, 3)
    rows: list[tuple[str, tuple[int, int, int] | None]] = [
        (v, colour_of[v]) for v, _ in order[:LEGEND_ROWS]]
    if len(order) > LEGEND_ROWS:
        rows.append((f"+ {len(order) - LEGEND_ROWS} more", None))
    if len(counts) < len(set(values)) or "" in values:
        rows.append(("(missing)", MISSING_COLOR))
    return Coloring(colors, title, rows=rows)


def gradient(t: np.ndarray) -> np.ndarray:
    """uint8 [N, 3] colours of t in [0, 1] on the gradient (linear between its stops)."""
    stops = np.array([rgb(s) for s in GRADIENT_STOPS], np.float64)
    x = np.clip(np.nan_to_num(t), 0, 1) * (len(stops) - 1)
    i = np.minimum(len(stops) - 2, np.floor(x).astype(int))
    f = (x - i)[:, None]
    return np.asarray(np.round(stops[i] + (stops[i + 1] - stops[i]) * f).astype(np.uint8))


def numeric(numbers: np.ndarray, title: str) -> Coloring:
    finite = np.isfinite(numbers)
    if not finite.any():
        return Coloring(np.tile(np.array(MISSING_COLOR, np.uint8), (numbers.size, 1)), title,
                        numeric=(float("nan"), float("nan")))
    lo, hi = float(numbers[finite].min()), float(numbers[finite].max())
    span = hi - lo if hi > lo else 1.0
    colors = gradient((numbers - lo) / span)
    colors[~finite] = MISSING_COLOR
    return Coloring(colors, title, numeric=(lo, hi))


def _few_integers(numbers: np.ndarray) -> bool:
    """dataset.js's categoricalByDefault: integers with at most 20 values are categories."""
    present = numbers[~np.isnan(numbers)]
    return bool(np.all(np.mod(present, 1) == 0)) and np.unique(present).size <= 20


def coloring_for(metadata: Metadata | None, column: str | None, n: int,
                 rows: np.ndarray | None = None) -> Coloring:
    """Colours of ``n`` points by ``column`` (numeric columns on the gradient), or the default
    colour for none; ValueError naming the known columns for an unknown one."""
    if column is None:
        return Coloring(np.tile(np.array(DEFAULT_COLOR, np.uint8), (n, 1)))
    if metadata is None or column not in metadata.names:
        known = ", ".join(metadata.names) if metadata else "none"
        raise ValueError(f"--color-by {column!r}: no such metadata column (columns: {known})")
    numbers = metadata.numeric(column)
    if numbers is not None and not _few_integers(numbers):
        return numeric(numbers if rows is None else numbers[rows], column)
    values = metadata.column(column)
    return categorical(values if rows is None else [values[i] for i in rows], column)
