"""THE input normaliser: what every door takes as data in memory, made into a float32 matrix and
metadata columns of strings.

``Projector(...)``, ``show()``, ``Client.upload`` and the server's in-memory embeddings
(:mod:`projector_core.data.memory`) all read their arguments here, so one shape means one thing
whichever door it goes through: numpy or torch arrays, lists, pandas DataFrames (of numbers, or
with a column of vectors), Arrow tables with a vector column, and metadata as a DataFrame, an
Arrow table, a Series, a dict of columns or a list. Errors name the argument at fault.

The HTTP client imports this module alone of the core (a recorded exception to its contract in
pyproject.toml): it must send what the widget would show, and duplicating these rules in the
client is how the two drifted apart (issue 33, item 2).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from projector_core.errors import DataError
from projector_core.formats.arrays import embedding_from_table
from projector_core.formats.npy_files import as_vectors

Columns = dict[str, list[str]]


def _cell(value: Any) -> str:
    """A metadata cell: missing values are empty; tabs and line breaks cannot be in a TSV cell."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ")


def _is_vector_cell(value: Any) -> bool:
    return isinstance(value, (list, tuple, np.ndarray)) and len(value) > 0


def _is_arrow_table(value: Any) -> bool:
    return type(value).__module__.startswith("pyarrow") and hasattr(value, "schema")


def _is_dataframe(value: Any) -> bool:
    return hasattr(value, "columns") and hasattr(value, "iloc")


def _is_series(value: Any) -> bool:
    return hasattr(value, "iloc") and hasattr(value, "name") and not hasattr(value, "columns")


def split_table(data: Any, vector_column: str | None = None) -> tuple[np.ndarray, Columns | None]:
    """Vectors and metadata columns from an array, a DataFrame or an Arrow table.

    A table needs one column of equal-length lists of numbers (``vector_column`` when there are
    several); its other scalar columns are the metadata. A DataFrame of numbers alone is the
    matrix itself.
    """
    if _is_arrow_table(data):
        plain = embedding_from_table(data, "table", vector_column, "vectors")
        return plain.vectors, plain.metadata_columns
    if _is_dataframe(data):
        return _split_dataframe(data, vector_column)
    if hasattr(data, "detach"):  # a torch tensor, without importing torch
        data = data.detach().cpu().numpy()
    try:
        array = np.asarray(data)
    except ValueError as exc:
        raise DataError(f"cannot be read as a matrix: {exc}", field="vectors") from None
    return as_vectors(array, "vectors"), None


def _split_dataframe(frame: Any, vector_column: str | None) -> tuple[np.ndarray, Columns | None]:
    names = [str(c) for c in frame.columns]
    if not len(frame):
        raise DataError("the DataFrame has no rows", field="vectors")
    vector_columns = [name for name, column in zip(names, frame.columns, strict=True)
                      if frame[column].dtype == object and _is_vector_cell(frame[column].iloc[0])]
    if vector_column is None and not vector_columns:
        return as_vectors(frame.to_numpy(), "vectors"), None
    if vector_column is None:
        if len(vector_columns) > 1:
            raise DataError(f"choose the column of vectors with vector_column (list columns: "
                            f"{', '.join(vector_columns)})", field="vectors")
        vector_column = vector_columns[0]
    if vector_column not in names:
        raise DataError(f"has no column {vector_column!r} (columns: {', '.join(names)})",
                        field="vector_column")
    cells = frame[frame.columns[names.index(vector_column)]].tolist()
    lengths = {len(c) if _is_vector_cell(c) else 0 for c in cells}
    if len(lengths) != 1 or 0 in lengths:
        row = next(i for i, c in enumerate(cells) if not _is_vector_cell(c) or len(c) != len(cells[0]))
        raise DataError(f"vectors must all have the same length: row {row} differs from row 0",
                        field=vector_column)
    vectors = as_vectors(np.asarray(np.stack([np.asarray(c) for c in cells])), vector_column)
    metadata = {name: [_cell(v) for v in frame[column].tolist()]
                for name, column in zip(names, frame.columns, strict=True)
                if name != vector_column and not _is_vector_cell(frame[column].iloc[0])}
    return vectors, metadata or None


def metadata_columns(metadata: Any, n_points: int | None) -> Columns | None:
    """Metadata as columns of strings: a DataFrame, an Arrow table, a dict of columns, a
    pandas Series (its name, else ``label``), or a list or 1-D array (one value per point:
    the ``label`` column). ``n_points`` None: the count is checked where the vectors are read
    (a file sent as it is)."""
    if metadata is None:
        return None
    if _is_arrow_table(metadata):
        metadata = {name: metadata.column(name).to_pylist() for name in metadata.column_names}
    elif _is_dataframe(metadata):
        metadata = {str(c): metadata[c].tolist() for c in metadata.columns}
    elif _is_series(metadata):
        metadata = {"label" if metadata.name is None else str(metadata.name): metadata.tolist()}
    elif isinstance(metadata, np.ndarray) and metadata.ndim == 1:
        metadata = metadata.tolist()
    if isinstance(metadata, Mapping):
        columns = {str(k): [_cell(v) for v in values] for k, values in metadata.items()}
    elif isinstance(metadata, Sequence) and not isinstance(metadata, (str, bytes)):
        columns = {"label": [_cell(v) for v in metadata]}
    else:
        raise DataError(f"metadata must be a DataFrame, a dict of columns or a list, not "
                        f"{type(metadata).__name__}", field="metadata")
    for name, values in columns.items():
        if n_points is not None and len(values) != n_points:
            raise DataError(f"column {name!r} has {len(values)} values for {n_points} points",
                            field="metadata")
    return columns or None
