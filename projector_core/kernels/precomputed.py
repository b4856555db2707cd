"""Coordinates the user already has: numeric metadata columns, or data of at most 3 dimensions.

TensorBoard users ask to see coordinates computed elsewhere (tensorflow/tensorboard#1192) and
to plot low-dimensional data as it is (#676). Either is a projection like any other, so the
front end shows it with the same code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from projector_core.errors import unknown_column
from projector_core.formats.metadata import Metadata


@dataclass(frozen=True)
class PrecomputedResult:
    coordinates: np.ndarray  # float32 [N, 2 or 3]; NaN rows where a value is missing
    source: list[str]  # the metadata columns used, or ["data"]


def check_columns(metadata: Metadata | None, columns: list[str], numeric: bool = True) -> None:
    """Raise ValueError unless every column exists (and, with ``numeric``, holds numbers)."""
    if metadata is None:
        raise ValueError("this embedding has no metadata, so it has no columns to plot")
    for name in columns:
        if name not in metadata.names:
            raise unknown_column(name, metadata.names)
        if numeric and metadata.numeric(name) is None:
            raise ValueError(f"metadata column {name!r} is not numeric")


def precomputed(
    data: np.ndarray, metadata: Metadata | None = None, columns: list[str] | None = None
) -> PrecomputedResult:
    """The named numeric columns as coordinates, or ``data`` itself when ``columns`` is None.

    Data of one dimension gets a second axis of zeros; data of more than three is not for
    plotting as it is (the method checks that first: ``projection/limits.py`` ``data_dimensions``).
    """
    if columns:
        check_columns(metadata, columns)
        assert metadata is not None
        numbers = [metadata.numeric(name) for name in columns]
        coords = np.stack([n for n in numbers if n is not None], axis=1)  # all are: checked above
        return PrecomputedResult(coords.astype(np.float32), list(columns))
    dim = data.shape[1]
    assert dim <= 3, f"{dim}-D data is not plotted as it is"
    coords = np.array(data, dtype=np.float32)
    if dim == 1:
        coords = np.hstack([coords, np.zeros_like(coords)])
    return PrecomputedResult(coords, ["data"])
