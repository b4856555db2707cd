"""Embeddings held in memory instead of LOGDIR files: notebook data, ``show()``, uploads.

They become the same :class:`Embedding` the catalog builds from files, so every route, kernel
and job works on them unchanged; ``Catalog.add_run`` serves them. Inputs arrive in many shapes
(numpy or torch arrays, lists, pandas DataFrames, Arrow tables with a vector column) and are
normalised here once, with errors that name the argument at fault.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from projector_core.data.embedding_builder import EmbeddingBuilder
from projector_core.data.model import Embedding, Run
from projector_core.errors import DataError
from projector_core.formats.arrays import embedding_from_table
from projector_core.formats.metadata import Metadata
from projector_core.formats.sprites.sprite import Sprite, SpriteImage
from projector_core.formats.sprites.writer import make_sprite
from projector_core.formats.tensor_files import as_vectors
from projector_core.storage.fingerprint import fingerprint

Columns = dict[str, list[str]]


@dataclass(frozen=True)
class MemorySpriteImage(SpriteImage):
    """A sprite image made in memory: its PNG bytes are kept, no file behind it."""

    data: bytes = b""

    def read(self) -> bytes:
        return self.data

    def decode(self) -> Image.Image:
        image = Image.open(io.BytesIO(self.data))  # our own PNG: no bomb to guard against
        image.load()
        return image

    def version(self) -> str:
        return fingerprint(self.data)


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


def metadata_columns(metadata: Any, n_points: int) -> Columns | None:
    """Metadata as columns of strings: a DataFrame, an Arrow table, a dict of columns, or a
    list (one value per point, or one row of values per point)."""
    if metadata is None:
        return None
    if _is_arrow_table(metadata):
        metadata = {name: metadata.column(name).to_pylist() for name in metadata.column_names}
    elif _is_dataframe(metadata):
        metadata = {str(c): metadata[c].tolist() for c in metadata.columns}
    if isinstance(metadata, Mapping):
        columns = {str(k): [_cell(v) for v in values] for k, values in metadata.items()}
    elif isinstance(metadata, Sequence) and not isinstance(metadata, (str, bytes)):
        columns = {"label": [_cell(v) for v in metadata]}
    else:
        raise DataError(f"metadata must be a DataFrame, a dict of columns or a list, not "
                        f"{type(metadata).__name__}", field="metadata")
    for name, values in columns.items():
        if len(values) != n_points:
            raise DataError(f"column {name!r} has {len(values)} values for {n_points} points",
                            field="metadata")
    return columns or None


def _images_sprite(sprite: Any) -> Sprite:
    """A sprite made of images: N x h x w [x c], or a list of them."""
    try:
        image, dim = make_sprite(sprite)
    except ValueError as exc:
        raise DataError(str(exc), field="sprite") from None
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    count = len(sprite)
    cols = max(1, image.size[0] // dim[0])
    page = MemorySpriteImage(path=Path("sprite.png"), display="(memory)", size=image.size,
                             content_type="image/png", identity=(0, 0), thumb=dim,
                             grid=(cols, max(1, image.size[1] // dim[1])), first=0, count=count,
                             data=buffer.getvalue())
    return Sprite(image=page, pages=(page,), single_image_dim=dim, count=count)


def memory_embedding(run: str, name: str, vectors: Any, metadata: Any = None, *,
                     labels: Sequence[Any] | None = None, sprite: Any = None,
                     sprite_dim: tuple[int, int] | None = None,
                     vector_column: str | None = None,
                     sources: Mapping[str, str] | None = None,
                     model: str | None = None) -> Embedding:
    """An embedding of in-memory data; raises DataError when the data cannot be used.

    ``metadata`` may also be a parsed metadata file (an upload's); ``sources`` names where the
    tensor and the metadata came from ("(memory)" by default); ``model`` the model that made
    the vectors (a text column's: search by meaning)."""
    matrix, table_columns = split_table(vectors, vector_column)
    n_points = int(matrix.shape[0])
    parsed = metadata if isinstance(metadata, Metadata) else None
    columns = {} if parsed else metadata_columns(metadata, n_points) or table_columns or {}
    if labels is not None:
        columns = {"label": metadata_columns(list(labels), n_points)["label"],  # type: ignore[index]
                   **{k: v for k, v in columns.items() if k != "label"}}
    shown = {"tensor": "(memory)", "metadata": "(memory)", **(sources or {})}
    built = EmbeddingBuilder(run, name)
    built.model = model
    built.tensor(matrix, fingerprint(np.ascontiguousarray(matrix).data), shown["tensor"])
    if parsed is not None:
        built.metadata(parsed, shown["metadata"])
    elif columns:
        built.metadata(Metadata.from_columns(columns, shown["metadata"]), shown["metadata"])
    if isinstance(sprite, (str, Path)):
        if sprite_dim is None:
            raise DataError("a sprite file needs sprite_dim=(width, height) of one thumbnail",
                            field="sprite_dim")
        built.sprite_file(Path(sprite), str(sprite), sprite_dim)
    elif sprite is not None:
        built.sprite(_images_sprite(sprite), "(memory)")
    return built.build()


def memory_run(name: str, embeddings: list[Embedding]) -> Run:
    return Run(name=name, embeddings=embeddings, config="(in memory)")
