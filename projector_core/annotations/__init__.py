"""Annotations and saved bookmarks: labels, flags and notes on an embedding's rows, kept in a
SQLite store outside the LOGDIR, every edit recorded (who, when) and undoable.

- ``service.py``: :class:`AnnotationService`, what every door calls.
- ``store.py``: the store's columns and edits, one transaction each; ``database.py`` its file
  (schema, WAL, errors); ``blocks.py`` a column as it is now (int32 codes in blocks);
  ``replay.py`` a column recomputed from its edits (as of an edit, undo, redo);
  ``rowsets.py`` an edit's rows, compactly.
- ``kinds.py``: label, flag, note, and the values each may hold.
- ``saved_bookmarks.py``; ``export.py`` and ``column_import.py``: files in and out;
  ``location.py``: where the store is; ``errors.py``: what can go wrong with it.
"""

from projector_core.annotations.errors import (
    AnnotationsOff,
    StoreBusy,
    StoreError,
    StoreUnavailable,
    StoreWriteFailed,
)
from projector_core.annotations.service import (
    AnnotationService,
    Bookmark,
    Change,
    ColumnInfo,
    ColumnValues,
    check_author,
)
from projector_core.annotations.store import RULE, AnnotationStore, Committed, Edit, Key, UnknownColumn

__all__ = [
    "RULE", "AnnotationService", "AnnotationStore", "AnnotationsOff", "Bookmark", "Change",
    "ColumnInfo", "ColumnValues", "Committed", "Edit", "Key", "StoreBusy", "StoreError",
    "StoreUnavailable", "StoreWriteFailed", "UnknownColumn", "check_author",
]
