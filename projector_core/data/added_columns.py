"""Columns another layer adds to an embedding's metadata: the annotation columns
(``projector_core/annotations/``), kept outside the LOGDIR and changing while the server
runs.

The data model knows them only through ``model.AddedColumns``, which the layer that keeps
them hands to the catalogue (``Catalog.add_columns``): every embedding listed then shows
them after its own columns, as categorical columns of int32 codes (:class:`CodedColumn`,
what the codes stored beside chunked data answer too), so every reader of metadata (the
metadata routes, search, colours, tiles, charts, cluster names, exports) reads them as
any other column, as they are at the moment it asks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

import numpy as np


class CodedColumn(Protocol):
    """A categorical column as int32 codes into its dictionary (``CodeColumn`` stored beside
    chunked data, an annotation column)."""

    name: str
    dictionary: list[str]

    @property
    def digest(self) -> str:
        """Changes whenever the column's values do (ETags, caches)."""
        ...

    @property
    def rows(self) -> int: ...

    @property
    def codes(self) -> np.ndarray:
        """Every row's int32 code."""
        ...

    @property
    def counts(self) -> np.ndarray:
        """int64 rows holding each dictionary value."""
        ...

    def blocks(self) -> Iterator[np.ndarray]:
        """The codes in row order, a block at a time."""
        ...

    def rows_with(self, wanted: np.ndarray) -> np.ndarray:
        """int64 rows whose code is marked in ``wanted`` (bool, one per value)."""
        ...
