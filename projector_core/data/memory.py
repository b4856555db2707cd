"""Embeddings held in memory instead of LOGDIR files: notebook data, ``show()``, uploads.

They become the same :class:`Embedding` the catalog builds from files, so every route, kernel
and job works on them unchanged; ``Catalog.add_run`` serves them. Inputs arrive in many shapes
(numpy or torch arrays, lists, pandas DataFrames, Arrow tables with a vector column) and are
normalised by the one input normaliser, :mod:`projector_core.formats.inputs`.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from projector_core.data.embedding_builder import EmbeddingBuilder
from projector_core.data.model import Embedding, Run
from projector_core.errors import DataError
from projector_core.formats.inputs import metadata_columns, split_table
from projector_core.formats.metadata import Metadata
from projector_core.formats.sprites.sprite import Sprite, SpriteImage
from projector_core.formats.sprites.writer import make_sprite
from projector_core.storage.fingerprint import fingerprint


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
