"""The annotation columns as metadata columns: what ``Embedding.metadata_columns()`` and every
reader of a column (``data/added_columns.py``) see of the store.

An embedding shows the columns of its LOGDIR, run and tag made for its row count whose names
its data does not have (a column kept but not shown is listed by ``GET /api/annotations``
with the reason). Each is read once per edit: its codes are kept, keyed by the column's last
edit, until a later edit (from this process or another) makes them stale, so the many reads
of one column between two edits (the tiles of a view, counts, search) cost one query each.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from projector_core.annotations.errors import StoreError
from projector_core.data.added_columns import CodedColumn
from projector_core.storage.fingerprint import fingerprint
from projector_core.storage.recent import Recent

if TYPE_CHECKING:
    from projector_core.annotations.service import AnnotationService
    from projector_core.annotations.store import Key
    from projector_core.data.model import Embedding

log = logging.getLogger(__name__)

KEEP_COLUMNS = 8  # columns' codes held (4 bytes a row: 40 MB each at 10M rows)
BLOCK_ROWS = 1 << 20  # codes handed out at a time (a search that stops early reads few)


class AnnotationColumn:
    """One annotation column as of its last edit, answering as a stored code column does."""

    def __init__(self, name: str, dictionary: list[str], codes: np.ndarray, digest: str) -> None:
        self.name, self.dictionary, self.codes, self.digest = name, dictionary, codes, digest

    @property
    def rows(self) -> int:
        return int(self.codes.size)

    @cached_property
    def counts(self) -> np.ndarray:
        return np.bincount(self.codes, minlength=len(self.dictionary)).astype(np.int64)

    def blocks(self) -> Iterator[np.ndarray]:
        for start in range(0, self.codes.size, BLOCK_ROWS):
            yield self.codes[start:start + BLOCK_ROWS]

    def rows_with(self, wanted: np.ndarray) -> np.ndarray:
        return np.flatnonzero(wanted[self.codes]).astype(np.int64)


class ShownColumns:
    """The ``AddedColumns`` of one annotation service (``Catalog.add_columns``)."""

    def __init__(self, service: AnnotationService) -> None:
        self.service = service
        self._held: Recent[tuple[Key, str, int | None], AnnotationColumn] = Recent(KEEP_COLUMNS)

    def columns_of(self, embedding: Embedding) -> Mapping[str, CodedColumn]:
        store = self.service.store
        if store is None or embedding.shape is None:
            return {}
        key = self.service.key_of(embedding)
        n, own = embedding.shape[0], set(embedding.data_columns())
        try:
            records = store.columns(key)
            return {record.name: self._column(key, record.name, record.last_edit)
                    for record in records if record.rows == n and record.name not in own}
        except StoreError as error:  # the data is served all the same, without them
            log.warning("annotation columns of %s/%s not shown: %s", key.run, key.tag, error)
            return {}

    def _column(self, key: Key, name: str, last_edit: int | None) -> AnnotationColumn:
        def read() -> AnnotationColumn:
            assert self.service.store is not None
            record, dictionary, codes = self.service.store.values(key, name)
            return AnnotationColumn(name, dictionary, codes, fingerprint(
                "annotation", key.logdir, key.run, key.tag, name, record.last_edit))

        return self._held.get_or_compute((key, name, last_edit), read)
