"""The data model every other layer reads: runs holding embeddings (vectors + metadata + assets).

An ``Embedding`` is built once (``embedding_builder.py``, whatever the input) with each part
already checked; a broken part is recorded in ``errors`` under its name (tensor, metadata,
sprite, bookmarks) and the healthy parts stay usable, so one bad file never takes the rest down.
Its data parts are private: read through the methods below, which refuse a broken or loading
part, and handed over once through ``Embedding.of``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from projector_core.data.loading import Loading, StillLoading
from projector_core.errors import DataError
from projector_core.formats.metadata import Metadata
from projector_core.sprites.sprite import Sprite

__all__ = ["Embedding", "Metadata", "Run"]

INDEX_COLUMN = "index"  # the column of data without metadata


@dataclass
class Embedding:
    run: str
    name: str
    fingerprint: str
    sprite: Sprite | None = None
    has_bookmarks: bool = False
    errors: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    loading: Loading | None = None  # set on a placeholder while its tensor is read in the background
    _vectors: np.ndarray | None = field(default=None, init=False, repr=False)
    _metadata: Metadata | None = field(default=None, init=False, repr=False)
    _bookmarks: list[dict[str, Any]] | None = field(default=None, init=False, repr=False)

    @classmethod
    def of(cls, run: str, name: str, fingerprint: str, *, vectors: np.ndarray | None = None,
           metadata: Metadata | None = None, bookmarks: list[dict[str, Any]] | None = None,
           **parts: Any) -> Embedding:
        """An embedding holding these data parts (``parts``: the public fields)."""
        embedding = cls(run=run, name=name, fingerprint=fingerprint, **parts)
        embedding._vectors, embedding._metadata, embedding._bookmarks = vectors, metadata, bookmarks
        return embedding

    @property
    def shape(self) -> tuple[int, int] | None:
        if self._vectors is None:
            return self.loading.shape if self.loading is not None else None
        return int(self._vectors.shape[0]), int(self._vectors.shape[1])

    @property
    def status(self) -> Literal["loading", "ready", "error"]:
        """"loading" while the tensor is read in the background; "error" when it could not be
        read (``error`` says why); else "ready" (a broken metadata or sprite file leaves the
        points usable: ``error`` names it)."""
        if self.loading is not None:
            return "loading"
        return "error" if self._vectors is None or "tensor" in self.errors else "ready"

    def raise_if_loading(self) -> None:
        if self.loading is not None:
            raise StillLoading(self.loading)

    @property
    def error(self) -> str | None:
        return "; ".join(self.errors.values()) if self.errors else None

    def _raise_if_broken(self, part: str) -> None:
        if part in self.errors:
            raise DataError(self.errors[part])

    def vectors(self) -> np.ndarray:
        """float32 [N, D], C-contiguous; may be a read-only memory map."""
        self.raise_if_loading()
        self._raise_if_broken("tensor")
        assert self._vectors is not None
        return self._vectors

    def metadata(self) -> Metadata | None:
        self.raise_if_loading()
        self._raise_if_broken("metadata")
        return self._metadata

    def metadata_or_index(self) -> Metadata:
        """The metadata, or for data without a metadata file the one column TensorBoard then
        shows: ``index``, each row's number (what /api/metadata serves and search reads)."""
        metadata = self.metadata()
        if metadata is not None:
            return metadata
        import pyarrow as pa  # on first use: start-up stays free of it

        n = self.shape[0] if self.shape else 0
        # Made here, not parsed: nothing in it to check, and it is fast for millions of rows.
        text = INDEX_COLUMN + "\n" + "".join(f"{i}\n" for i in range(n))
        return Metadata(names=[INDEX_COLUMN], has_header=True, raw=text.encode(),
                        arrays={INDEX_COLUMN: pa.array(np.arange(n)).cast(pa.string())})

    def metadata_columns(self) -> list[str]:
        return list(self._metadata.names) if self._metadata is not None else []

    def bookmarks(self) -> list[dict[str, Any]]:
        self.raise_if_loading()
        self._raise_if_broken("bookmarks")
        return list(self._bookmarks or [])


@dataclass
class Run:
    name: str
    embeddings: list[Embedding] = field(default_factory=list)
    error: str | None = None
    config: str | None = None
    signature: tuple[tuple[str, int, int], ...] = ()
    warnings: list[str] = field(default_factory=list)  # served all the same, said at start

    def embedding(self, name: str) -> Embedding:
        for embedding in self.embeddings:
            if embedding.name == name:
                return embedding
        raise KeyError(name)
