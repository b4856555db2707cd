"""One embedding assembled from its parts, whatever the input: a config entry's files, plain
array files, a TensorFlow checkpoint variable, chunked shards, data held in memory, an upload,
a text table. Each input kind only finds and reads its parts; the rules they share live here:

- the tensor warns of rows holding NaN or Inf (not for chunked arrays, which are never read
  whole) and of a single column;
- metadata is checked against the tensor's row count, its warnings join the embedding's;
- a chunked tensor brings the categorical columns stored beside it (a broken one: ``columns``);
- a sprite is checked for the tensor's points, and its page files are watched with it;
- the fingerprint (what every cache of this embedding is keyed by) covers the name, the tensor
  and the metadata, so a rewrite of either is never served stale.

A broken part is recorded under its name (``part()``) and the others still load.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from projector_core.data.ingest import rows_with_nan_or_inf
from projector_core.data.model import Embedding
from projector_core.errors import DataError
from projector_core.formats.bookmarks import read_bookmarks
from projector_core.formats.chunked import ChunkedVectors
from projector_core.formats.code_columns import CodeColumn, open_code_columns
from projector_core.formats.metadata import Metadata, read_metadata
from projector_core.formats.model_sidecar import read_models
from projector_core.formats.sprites.pages import check_sprite
from projector_core.formats.sprites.sprite import Sprite
from projector_core.storage.fingerprint import fingerprint


class EmbeddingBuilder:
    """Collects one embedding's parts in order (tensor first: the others are checked against
    it), then ``build()`` hands them to a new ``Embedding``."""

    def __init__(self, run: str, name: str) -> None:
        self.run = run
        self.name = name
        self.errors: dict[str, str] = {}
        self.warnings: list[str] = []
        self.sources: dict[str, str] = {}
        self.files: list[Path] = []  # every file a part was read from: a change reloads it
        self._vectors: np.ndarray | None = None
        self._tensor_key = ""
        self._metadata: Metadata | None = None
        self._sprite: Sprite | None = None
        self._bookmarks: list[dict[str, Any]] | None = None
        self._has_bookmarks = False
        self._code_columns: dict[str, CodeColumn] = {}
        self.model: str | None = None

    @property
    def n_points(self) -> int | None:
        return None if self._vectors is None else int(self._vectors.shape[0])

    @contextmanager
    def part(self, name: str) -> Iterator[None]:
        """Load one part: a DataError becomes that part's error, and the others go on."""
        try:
            yield
        except DataError as exc:
            self.errors[name] = str(exc)

    def tensor(self, vectors: np.ndarray, key: str, source: str) -> None:
        """The vectors; ``key`` changes whenever they do (a cache key of the tensor)."""
        self._vectors, self._tensor_key = vectors, key
        self.sources["tensor"] = source
        invalid = 0 if isinstance(vectors, ChunkedVectors) else rows_with_nan_or_inf(vectors)
        if invalid:
            rows = "1 row holds NaN or Inf; it is" if invalid == 1 else \
                f"{invalid} rows hold NaN or Inf; they are"
            self.warnings.append(f"{source}: {rows} kept out of neighbours and projections")
        if isinstance(vectors, ChunkedVectors):
            with self.part("columns"):
                self._code_columns = open_code_columns(vectors)
                # A rewritten column reloads the embedding, whose counts and codes are cached.
                self.files.extend(Path(c.path) / "zarr.json" for c in self._code_columns.values())
        if vectors.shape[1] == 1:
            self.warnings.append(f"{source}: has a single column (D = 1), so each point is one "
                                 "number; if these are labels or ids, name the file in "
                                 "metadata_path")

    def metadata(self, metadata: Metadata, source: str) -> None:
        """Metadata already parsed (columns that came with the vectors, an upload)."""
        if self.n_points is not None and metadata.n_rows != self.n_points:
            raise DataError(f"has {metadata.n_rows} rows for {self.n_points} points", file=source)
        self._metadata = metadata
        self.sources["metadata"] = source
        self.warnings.extend(metadata.warnings)

    def metadata_file(self, path: Path, display: str) -> None:
        self.sources["metadata"] = display
        self.files.append(path)
        self.metadata(read_metadata(path, display, self.n_points), display)

    def sprite(self, sprite: Sprite, source: str) -> None:
        self._sprite = sprite
        self.sources["sprite"] = source

    def sprite_file(self, path: Path, display: str, single_image_dim: tuple[int, ...]) -> None:
        """A sprite image (and its page manifest, when our writer left one)."""
        self.sources["sprite"] = display
        self.files.append(path)
        self._sprite = check_sprite(path, display, single_image_dim, self.n_points or 0,
                                    self.warnings)
        self.files.extend(self._sprite.files)

    def bookmarks_file(self, path: Path, display: str) -> None:
        self._has_bookmarks = True  # even when broken: the UI says why they are missing
        self.sources["bookmarks"] = display
        self.files.append(path)
        shape = None if self._vectors is None else (int(self._vectors.shape[0]),
                                                    int(self._vectors.shape[1]))
        self._bookmarks = read_bookmarks(path, display, shape)

    def model_file(self, path: Path, display: str) -> None:
        """The model our writer's sidecar names for this tensor (``formats/model_sidecar.py``)."""
        self.files.append(path)
        self.model = read_models(path, display).get(self.name)

    def build(self) -> Embedding:
        digest = self._metadata.digest if self._metadata is not None else ""
        return Embedding.of(self.run, self.name, fingerprint(self.name, self._tensor_key, digest),
                            vectors=self._vectors, metadata=self._metadata,
                            bookmarks=self._bookmarks, sprite=self._sprite,
                            has_bookmarks=self._has_bookmarks, errors=self.errors,
                            code_columns=self._code_columns, model=self.model,
                            warnings=self.warnings, sources=self.sources)
