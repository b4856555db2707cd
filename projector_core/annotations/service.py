"""Annotations as every door asks for them: the page's routes, the Client, the widget, MCP
and ``projector annotations`` call these methods and only turn answers and errors into
their protocol.

Labels belong to points: an embedding's columns are keyed by the LOGDIR, the run and the
embedding's tag (``data/steps.py``), so every step of a training timeline shows the same
labels. A column made for another row count than the embedding has now is kept but not
shown (:attr:`ColumnInfo.reason` says why and offers its export).

Errors: ValueError (a bad name, value or row; a column name that is already a metadata
column) is the request's fault; LookupError an unknown name; :class:`AnnotationsOff` a
server whose annotations are off (by choice, or a store that could not be opened: the LOGDIR
is served all the same); :class:`StoreBusy` and :class:`StoreWriteFailed` an edit refused
whole. ``StillLoading`` while the embedding's tensor is still being read.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from projector_core.annotations.column_import import format_of, read_column
from projector_core.annotations.errors import AnnotationsOff, StoreUnavailable
from projector_core.annotations.export import check_format, coded, write_table
from projector_core.annotations.kinds import Kind, Value, check_kind, check_name, kind_for
from projector_core.annotations.location import store_path
from projector_core.annotations.rowsets import RowSet
from projector_core.annotations.saved_bookmarks import SavedBookmarks
from projector_core.annotations.store import (
    RULE,
    AnnotationStore,
    ColumnRecord,
    Committed,
    Edit,
    Key,
    UnknownColumn,
    hidden_reason,
)
from projector_core.data.model import INDEX_COLUMN, Embedding
from projector_core.data.steps import split_name
from projector_core.formats.bookmarks import parse_bookmarks

log = logging.getLogger(__name__)

LOCAL_AUTHOR = "local"  # an edit whose door named nobody (no X-Projector-User, no user=)
AUTHOR_MAX = 100
Lookup = Callable[[str, str], Embedding]  # (run, embedding) -> the embedding, LookupError


@dataclass(frozen=True)
class Change:
    """A committed change, as subscribers hear of it (the server's event stream)."""

    logdir: str
    run: str
    tag: str
    column: str | None  # None for a bookmark
    edit: int  # the history entry (a bookmark's id for a bookmark)
    author: str
    action: str  # set, import, undo, redo, bookmark-saved, bookmark-deleted
    changed: int | None = None  # rows that hold another value now (an edit's)
    code: int | None = None  # a set's value's code in the column
    values: int | None = None  # the column's dictionary's length now


Subscriber = Callable[[Change], None]


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    kind: Kind
    rows: int  # the rows it was made for
    shown: bool  # False: kept, not shown (``reason``)
    reason: str | None
    edits: int
    last_edit: int | None
    created_by: str
    created_at: float


@dataclass(frozen=True)
class ColumnValues:
    """A column as of an edit (None: now): one int32 code per row into ``dictionary``, whose
    code 0 is "" (nothing set)."""

    column: ColumnInfo
    dictionary: list[str]
    codes: np.ndarray
    as_of: int | None


@dataclass(frozen=True)
class Bookmark:
    state: dict[str, Any]
    id: int | None  # None: from the LOGDIR's bookmark file (read-only)
    author: str | None
    at: float | None


def check_author(author: str | None) -> str:
    """The author an edit is recorded under: the name the door passed, else "local"."""
    if author is None or not author.strip():
        return LOCAL_AUTHOR
    author = author.strip()
    if len(author) > AUTHOR_MAX or not author.isprintable():
        raise ValueError(f"an author is a printable name of at most {AUTHOR_MAX} characters")
    return author


class AnnotationService:
    """The annotations of one catalogue's embeddings in one store (None: annotations off,
    ``off_reason`` saying why)."""

    rule = RULE

    def __init__(self, store: AnnotationStore | None, logdir: Path | None, lookup: Lookup,
                 off_reason: str = "annotations are off") -> None:
        self.store, self.logdir, self.lookup = store, logdir, lookup
        self.off_reason = off_reason
        self.saved = SavedBookmarks(store.file) if store is not None else None
        self._subscribers: list[Subscriber] = []
        self._lock = threading.Lock()
        # Held from a commit until its subscribers are told: a look for edits made elsewhere
        # (``elsewhere.py``) never takes one of ours for another process's.
        self.committing = threading.RLock()

    @classmethod
    def open(cls, option: str | Path | None, logdir: Path | None, lookup: Lookup,
             timeout: float = 10.0) -> AnnotationService:
        """The service over the store ``option`` names (``location.py``); a store that cannot
        be opened leaves annotations off with the reason, never stops the server."""
        path = store_path(option)
        if path is None:
            return cls(None, logdir, lookup, "annotations are off (--annotations off): this "
                                             "server writes nothing")
        try:
            return cls(AnnotationStore(path, timeout), logdir, lookup)
        except StoreUnavailable as error:
            return cls(None, logdir, lookup, f"{error}; annotations are off and the data is "
                                             "served read-only (choose another store with "
                                             "--annotations PATH)")

    def status(self) -> dict[str, Any]:
        return {"enabled": self.store is not None, "rule": self.rule,
                "store": str(self.store.path) if self.store is not None else None,
                "reason": None if self.store is not None else self.off_reason}

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Call ``subscriber`` after every committed change made through this service; the
        answer unsubscribes."""
        with self._lock:
            self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            with self._lock:
                if subscriber in self._subscribers:
                    self._subscribers.remove(subscriber)
        return unsubscribe

    # -- columns --------------------------------------------------------------------------------
    def columns(self, run: str, embedding: str) -> list[ColumnInfo]:
        """The embedding's annotation columns, oldest first, shown or kept hidden."""
        found, key = self._key(run, embedding)
        if self.store is None:
            return []
        return [self._info(record, found) for record in self.store.columns(key)]

    def values(self, run: str, embedding: str, column: str,
               as_of: int | None = None) -> ColumnValues:
        """``column`` now, or right after edit ``as_of`` (any entry of the history)."""
        found, key = self._key(run, embedding)
        if self.store is None:
            raise UnknownColumn(f"no annotation column {column!r}: {self.off_reason}")
        record, dictionary, codes = self.store.values(key, column, as_of)
        return ColumnValues(self._info(record, found), dictionary, codes, as_of)

    def history(self, run: str, embedding: str, column: str | None = None, limit: int = 100,
                before: int | None = None) -> list[Edit]:
        """Everyone's edits of the embedding, newest first."""
        if not 1 <= limit <= 10_000:
            raise ValueError(f"limit is 1 to 10,000, not {limit}")
        _, key = self._key(run, embedding)
        return [] if self.store is None else self.store.history(key, column, limit, before)

    # -- edits ----------------------------------------------------------------------------------
    def annotate(self, run: str, embedding: str, column: str, value: Value,
                 rows: Sequence[int] | np.ndarray, author: str | None = None,
                 kind: str | None = None) -> Committed:
        """Set ``rows`` of ``column`` to ``value`` in one edit (all of it is saved or none);
        a new column is made of ``kind`` (default: a flag for a boolean value, else a label).
        The later edit of a cell wins; the earlier stays in the history."""
        found, key = self._key(run, embedding, loaded=True)
        store = self._writable()
        self._check_new_name(found, column)
        row_set, who = RowSet.of(rows, _rows_of(found)), check_author(author)
        chosen = check_kind(kind) if kind is not None else None
        with self.committing:
            return self._told(key, store.set_value(key, column, value, row_set, who, chosen))

    def undo(self, run: str, embedding: str, author: str | None = None) -> Committed:
        """Undo the author's own last edit of the embedding (others' edits stay)."""
        _, key = self._key(run, embedding)
        with self.committing:
            return self._told(key, self._writable().undo(key, check_author(author)))

    def redo(self, run: str, embedding: str, author: str | None = None) -> Committed:
        """Redo the edit the author undid last (unless they edited the embedding since)."""
        _, key = self._key(run, embedding)
        with self.committing:
            return self._told(key, self._writable().redo(key, check_author(author)))

    def import_column(self, run: str, embedding: str, column: str, raw: bytes, display: str,
                      fmt: str | None = None, author: str | None = None,
                      kind: str | None = None) -> Committed:
        """Set every row of ``column`` from a file's column of that name (or its only one),
        in one edit. DataError naming the file and line of a bad row."""
        found, key = self._key(run, embedding, loaded=True)
        store = self._writable()
        self._check_new_name(found, column)
        existing = {c.name: c.kind for c in store.columns(key)}.get(column)
        chosen = check_kind(kind) if kind is not None else existing or kind_for(None)
        dictionary, codes = read_column(raw, display, format_of(display, fmt), column,
                                        _rows_of(found), chosen)
        with self.committing:
            return self._told(key, store.import_codes(key, column, chosen, dictionary, codes,
                                                      check_author(author)))

    # -- export ---------------------------------------------------------------------------------
    def export(self, run: str, embedding: str, fmt: str, sink: BinaryIO,
               columns: list[str] | None = None) -> None:
        """Write the metadata with the shown annotation columns (or ``columns``) beside it.
        Columns kept hidden (made for another row count) are written alone, with their row
        numbers, when asked for by name."""
        fmt = check_format(fmt)
        found, _ = self._key(run, embedding, loaded=True)
        infos = {c.name: c for c in self.columns(run, embedding)}
        chosen = columns if columns is not None else [c for c, i in infos.items() if i.shown]
        values = [self.values(run, embedding, name) for name in chosen]
        hidden = [v for v in values if not v.column.shown]
        if hidden:
            if len({v.column.rows for v in values}) > 1 or len(hidden) != len(values):
                raise ValueError("hidden columns are exported alone, each set of the same row "
                                 f"count: {', '.join(v.column.name for v in hidden)}")
            table = {"row": _row_numbers(values[0].column.rows)}
        else:
            table = _metadata_table(found)
        for v in values:
            table[v.column.name if v.column.name not in table else f"{v.column.name} (annotation)"
                  ] = coded(v.dictionary, v.codes, empty_is_null=fmt == "parquet")
        write_table(table, fmt, sink)

    def annotated(self) -> list[tuple[str, str]]:
        """(run, tag) of every embedding of this LOGDIR with annotation columns."""
        if self.store is None or self.logdir is None:
            return []
        return [(key.run, key.tag) for key in self.store.keys(str(self.logdir))]

    # -- bookmarks ------------------------------------------------------------------------------
    def bookmarks(self, run: str, embedding: str) -> list[Bookmark]:
        """The LOGDIR's bookmark file's states first, then the saved ones, oldest first."""
        found, key = self._key(run, embedding)
        listed = [Bookmark(state, None, None, None) for state in found.bookmarks()]
        if self.saved is not None:
            listed += [Bookmark(b.state, b.id, b.author, b.at) for b in self.saved.list(key)]
        return listed

    def save_bookmark(self, run: str, embedding: str, state: dict[str, Any],
                      author: str | None = None) -> Bookmark:
        """Save a bookmark state (checked as a bookmark file's are: an object, made for a
        data set of this embedding's shape)."""
        found, key = self._key(run, embedding)
        self._writable()
        assert self.saved is not None
        parse_bookmarks(json.dumps([state]).encode(), "bookmark", found.shape)
        with self.committing:
            saved = self.saved.save(key, state, check_author(author))
            self.tell(Change(key.logdir, key.run, key.tag, None, saved.id, saved.author,
                             "bookmark-saved"))
        return Bookmark(saved.state, saved.id, saved.author, saved.at)

    def delete_bookmark(self, run: str, embedding: str, id: int,
                        author: str | None = None) -> None:
        _, key = self._key(run, embedding)
        self._writable()
        assert self.saved is not None
        with self.committing:
            self.saved.delete(key, id)
            self.tell(Change(key.logdir, key.run, key.tag, None, id, check_author(author),
                             "bookmark-deleted"))

    # -- shared ---------------------------------------------------------------------------------
    def key_of(self, found: Embedding) -> Key:
        """Whose labels ``found`` shows: its LOGDIR's, run's and tag's (every step alike); an
        embedding held in memory (no LOGDIR) keeps them by its data's fingerprint."""
        logdir = str(self.logdir) if self.logdir is not None else f"memory:{found.fingerprint}"
        return Key(logdir, found.run, split_name(found.name)[0])

    def _key(self, run: str, embedding: str, loaded: bool = False) -> tuple[Embedding, Key]:
        """The embedding (UnknownName from the lookup) and its key (:meth:`key_of`)."""
        found = self.lookup(run, embedding)
        if loaded:
            found.raise_if_loading()
        return found, self.key_of(found)

    def _writable(self) -> AnnotationStore:
        if self.store is None:
            raise AnnotationsOff(self.off_reason)
        return self.store

    def _check_new_name(self, found: Embedding, column: str) -> None:
        check_name(column)
        if column in _metadata_names(found):
            raise ValueError(f"{column!r} is already a metadata column of {found.run}/"
                             f"{found.name}: choose another name for the annotation column")

    def _info(self, record: ColumnRecord, found: Embedding) -> ColumnInfo:
        n = found.shape[0] if found.shape is not None else None
        reason = None
        if n is not None and record.rows != n:
            reason = hidden_reason(record, n)
        elif record.name in _metadata_names(found):
            reason = (f"the metadata now has a column {record.name!r} too: the annotation "
                      "column is kept but not shown; export it to use its labels")
        return ColumnInfo(record.name, record.kind, record.rows, reason is None and n is not None,
                          reason, record.edits, record.last_edit, record.created_by,
                          record.created_at)

    def _told(self, key: Key, committed: Committed) -> Committed:
        edit = committed.edit
        self.tell(Change(key.logdir, key.run, key.tag, edit.column, edit.id, edit.author,
                         edit.action, committed.changed, committed.code, committed.values))
        return committed

    def tell(self, change: Change) -> None:
        """Hand a committed change to every subscriber (this service's edits, and those other
        processes committed: ``elsewhere.py``)."""
        with self._lock:
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            try:
                subscriber(change)
            except Exception:  # a listener's failure never undoes a committed edit
                log.exception("annotation change subscriber failed on %s", change)


def _rows_of(found: Embedding) -> int:
    if found.shape is None:
        found.vectors()  # DataError naming the unreadable file
    assert found.shape is not None
    return found.shape[0]


def _metadata_names(found: Embedding) -> list[str]:
    """The data's own columns (not the annotation columns it shows)."""
    return found.data_columns() or [INDEX_COLUMN]


def _row_numbers(n: int) -> Any:
    import pyarrow as pa

    return pa.array(np.arange(n, dtype=np.int64))


def _metadata_table(found: Embedding) -> dict[str, Any]:
    """The embedding's metadata columns as Arrow (the file's strings, stored codes coded)."""
    metadata = found.metadata_or_index()
    table: dict[str, Any] = {}
    for name in found.data_columns() or metadata.names:
        if name in metadata.names:
            table[name] = metadata.arrays[name]
        else:
            table[name] = coded(*found.categorical(name))
    return table
