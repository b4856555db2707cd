"""The annotation store: named columns of an embedding's rows, every edit kept.

Each method is one transaction (:class:`StoreFile`): an edit of a million rows is committed
whole or not at all, whatever happens to the process or the disk meanwhile, and writers in
other threads and processes take their turn. Two edits of the same cell: the later committed
wins, the earlier stays in the history (``replay.py``). Undo and redo act on the author's own
last edit of the embedding; the history lists everyone's.

Nothing here knows the catalogue: the caller says which rows the embedding has (``n``) and
checks names against its metadata (``service.py``).
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from projector_core.annotations.blocks import read_column, write_codes
from projector_core.annotations.database import StoreFile
from projector_core.annotations.kinds import EMPTY, Kind, Value, check_name, kind_for, stored_value
from projector_core.annotations.replay import replay
from projector_core.annotations.rowsets import RowSet

Action = Literal["set", "import", "undo", "redo"]
RULE = ("two edits of the same cell: the later committed edit wins, the earlier stays in the "
        "history; undo and redo act on the author's own last edit")


@dataclass(frozen=True)
class Key:
    """Whose labels: the LOGDIR (resolved path), the run and the tag (every step alike)."""

    logdir: str
    run: str
    tag: str


@dataclass(frozen=True)
class ColumnRecord:
    name: str
    kind: Kind
    rows: int  # the embedding's row count when the column was made
    created_at: float
    created_by: str
    edits: int
    last_edit: int | None


@dataclass(frozen=True)
class Edit:
    """One entry of the history."""

    id: int
    column: str
    action: Action
    author: str
    at: float  # seconds since the epoch
    rows: int  # rows it set (an undo or redo: rows of its target)
    value: str | None  # a set's value ("" clears); None for the others
    target: int | None  # the edit an undo or redo acts on
    undone: bool  # a set or import undone now


@dataclass(frozen=True)
class Committed:
    """What an edit changed: the history entry, how many rows now hold another value than
    before, the code of a set's value in the column (so a page recolours its rows at once)
    and how many values the column's dictionary holds now (a page that knows fewer asks for
    the column again)."""

    edit: Edit
    changed: int
    code: int | None
    values: int
    rule: str = RULE  # every answer to an edit says how two edits of a cell are resolved


class UnknownColumn(LookupError):
    def __str__(self) -> str:
        return str(self.args[0])


_EDIT = ("SELECT e.id, c.name, e.action, e.author, e.at, e.row_count, e.value, e.target, "
         "e.undone FROM edits e JOIN columns c ON c.id = e.column_id")
_OF_KEY = "c.logdir = ? AND c.run = ? AND c.tag = ?"


def _edit(row: tuple[Any, ...]) -> Edit:
    id, column, action, author, at, rows, value, target, undone = row
    return Edit(id, column, action, author, at, rows, value, target, bool(undone))


class AnnotationStore:
    """The store file at ``path`` (:class:`StoreUnavailable` when it cannot be used)."""

    def __init__(self, path: Path, timeout: float = 10.0) -> None:
        self.file = StoreFile(Path(path), timeout)

    @property
    def path(self) -> Path:
        return self.file.path

    def close(self) -> None:
        self.file.close()

    # -- reading --------------------------------------------------------------------------------
    def columns(self, key: Key) -> list[ColumnRecord]:
        with self.file.reading() as db:
            return [ColumnRecord(*row) for row in db.execute(
                "SELECT c.name, c.kind, c.rows, c.created_at, c.created_by, COUNT(e.id), "
                "MAX(e.id) FROM columns c LEFT JOIN edits e ON e.column_id = c.id "
                f"WHERE {_OF_KEY} GROUP BY c.id ORDER BY c.id", _key(key))]

    def values(self, key: Key, column: str,
               as_of: int | None = None) -> tuple[ColumnRecord, list[str], np.ndarray]:
        """The column, its values and one int32 code per row into them: now (its blocks), or
        right after edit ``as_of`` (replayed)."""
        with self.file.reading() as db:
            record, column_id = self._column(db, key, column)
            dictionary = _dictionary(db, column_id)
            if as_of is None:
                return record, dictionary, read_column(db, column_id, record.rows)
            return record, dictionary, replay(db, column_id, record.rows, as_of=as_of)

    def history(self, key: Key, column: str | None = None, limit: int = 100,
                before: int | None = None) -> list[Edit]:
        """The embedding's edits (of ``column`` only, when given), newest first, ``limit`` of
        them older than edit ``before``."""
        where, args = _OF_KEY, list[object](_key(key))
        if column is not None:
            where, args = where + " AND c.name = ?", [*args, column]
        if before is not None:
            where, args = where + " AND e.id < ?", [*args, before]
        with self.file.reading() as db:
            return [_edit(row) for row in db.execute(
                f"{_EDIT} WHERE {where} ORDER BY e.id DESC LIMIT ?", (*args, limit))]

    def edits_after(self, logdir: str, after: int) -> list[tuple[Key, Edit]]:
        """Every edit of ``logdir``'s embeddings after edit ``after``, oldest first."""
        with self.file.reading() as db:
            return [(Key(logdir, run, tag), _edit(row)) for run, tag, *row in db.execute(
                f"SELECT c.run, c.tag, {_EDIT[len('SELECT '):]} WHERE c.logdir = ? AND "
                "e.id > ? ORDER BY e.id", (logdir, after))]

    def last_edit(self) -> int:
        with self.file.reading() as db:
            return int(db.execute("SELECT COALESCE(MAX(id), 0) FROM edits").fetchone()[0])

    def keys(self, logdir: str) -> list[Key]:
        """The embeddings of ``logdir`` that have annotation columns."""
        with self.file.reading() as db:
            return [Key(logdir, run, tag) for run, tag in db.execute(
                "SELECT DISTINCT run, tag FROM columns WHERE logdir = ? ORDER BY run, tag",
                (logdir,))]

    # -- writing --------------------------------------------------------------------------------
    def set_value(self, key: Key, column: str, value: Value, rows: RowSet, author: str,
                  kind: Kind | None = None) -> Committed:
        """Set ``rows`` of ``column`` to ``value`` (making the column, of ``kind`` or the
        value's, for the embedding's ``rows.n`` rows, if new)."""
        with self.file.writing() as db:
            record, column_id = self._writable(db, key, column, kind or kind_for(value),
                                               rows.n, author, given=kind)
            text = stored_value(record.kind, value, column)
            code = _codes(db, column_id, [text])[0]
            changed = write_codes(db, column_id, rows.n, rows.ids, code)
            edit = _record(db, column_id, "set", author, rows, text)
            return Committed(self._entry(db, edit), changed, code, _size(db, column_id))

    def import_codes(self, key: Key, column: str, kind: Kind, dictionary: list[str],
                     codes: np.ndarray, author: str) -> Committed:
        """Every row of ``column`` set at once, to ``dictionary[codes[row]]`` (values already
        checked for ``kind``): one edit, undone as one."""
        rows = RowSet.every(codes.size)
        with self.file.writing() as db:
            _, column_id = self._writable(db, key, column, kind, rows.n, author, given=kind)
            mapped = np.asarray(_codes(db, column_id, dictionary), np.int32)[codes]
            changed = write_codes(db, column_id, rows.n, rows.ids, mapped)
            edit = _record(db, column_id, "import", author, rows, None, mapped)
            return Committed(self._entry(db, edit), changed, None, _size(db, column_id))

    def undo(self, key: Key, author: str) -> Committed:
        """Undo ``author``'s last edit of the embedding that counts now."""
        with self.file.writing() as db:
            found = db.execute(
                f"SELECT e.id FROM edits e JOIN columns c ON c.id = e.column_id WHERE {_OF_KEY} "
                "AND e.author = ? AND e.action IN ('set', 'import') AND e.undone = 0 "
                "ORDER BY e.id DESC LIMIT 1", (*_key(key), author)).fetchone()
            if found is None:
                raise ValueError(f"{author} has no edit of {key.run}/{key.tag} to undo")
            return self._toggle(db, found[0], "undo", author)

    def redo(self, key: Key, author: str) -> Committed:
        """Redo the edit ``author`` undid last, unless they have edited the embedding since."""
        with self.file.writing() as db:
            last = db.execute(
                f"SELECT MAX(e.id) FROM edits e JOIN columns c ON c.id = e.column_id WHERE "
                f"{_OF_KEY} AND e.author = ? AND e.action IN ('set', 'import')",
                (*_key(key), author)).fetchone()[0] or 0
            found = db.execute(
                f"SELECT e.target FROM edits e JOIN columns c ON c.id = e.column_id "
                f"JOIN edits t ON t.id = e.target WHERE {_OF_KEY} AND e.author = ? "
                "AND e.action = 'undo' AND e.id > ? AND t.undone = 1 ORDER BY e.id DESC LIMIT 1",
                (*_key(key), author, last)).fetchone()
            if found is None:
                raise ValueError(f"{author} has no undone edit of {key.run}/{key.tag} to redo")
            return self._toggle(db, found[0], "redo", author)

    # -- inside a transaction ---------------------------------------------------------------------
    def _column(self, db: sqlite3.Connection, key: Key, name: str) -> tuple[ColumnRecord, int]:
        found = db.execute(
            "SELECT c.name, c.kind, c.rows, c.created_at, c.created_by, "
            "(SELECT COUNT(*) FROM edits WHERE column_id = c.id), "
            "(SELECT MAX(id) FROM edits WHERE column_id = c.id), c.id "
            f"FROM columns c WHERE {_OF_KEY} AND c.name = ?", (*_key(key), name)).fetchone()
        if found is None:
            known = [r for (r,) in db.execute(
                f"SELECT name FROM columns c WHERE {_OF_KEY} ORDER BY id", _key(key))]
            raise UnknownColumn(f"no annotation column {name!r} on {key.run}/{key.tag}; "
                                f"columns: {', '.join(known) or 'none'}")
        return ColumnRecord(*found[:7]), found[7]

    def _writable(self, db: sqlite3.Connection, key: Key, name: str, kind: Kind, n: int,
                  author: str, given: Kind | None) -> tuple[ColumnRecord, int]:
        """The column to write (made now when new); ValueError when the edit does not fit it."""
        try:
            record, column_id = self._column(db, key, name)
        except UnknownColumn:
            check_name(name)
            db.execute(
                "INSERT INTO columns (logdir, run, tag, name, kind, rows, created_at, "
                "created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*_key(key), name, kind, n, time.time(), author))
            db.execute("INSERT INTO column_values (column_id, code, value) VALUES "
                       "(last_insert_rowid(), 0, ?)", (EMPTY,))
            return self._column(db, key, name)
        if given is not None and given != record.kind:
            raise ValueError(f"annotation column {name!r} holds {record.kind}s, not {given}s")
        if record.rows != n:
            raise ValueError(hidden_reason(record, n))
        return record, column_id

    def _toggle(self, db: sqlite3.Connection, target: int, action: Action,
                author: str) -> Committed:
        column_id, n, blob = db.execute(
            "SELECT e.column_id, c.rows, r.rows FROM edits e JOIN columns c ON c.id = "
            "e.column_id JOIN edit_rows r ON r.edit_id = e.id WHERE e.id = ?",
            (target,)).fetchone()
        db.execute("UPDATE edits SET undone = ? WHERE id = ?", (int(action == "undo"), target))
        rows = RowSet.decode(blob, n)
        changed = write_codes(db, column_id, n, rows.ids, replay(db, column_id, n, rows.ids))
        at = time.time()
        edit = db.execute("INSERT INTO edits (column_id, action, author, at, target, row_count) "
                          "VALUES (?, ?, ?, ?, ?, ?)",
                          (column_id, action, author, at, target, rows.count)).lastrowid
        assert edit is not None
        return Committed(self._entry(db, edit), changed, None, _size(db, column_id))

    def _entry(self, db: sqlite3.Connection, edit: int) -> Edit:
        return _edit(db.execute(f"{_EDIT} WHERE e.id = ?", (edit,)).fetchone())


def hidden_reason(record: ColumnRecord, n: int) -> str:
    """Why a column made for another row count is kept but not shown."""
    return (f"annotation column {record.name!r} was made for {record.rows:,} rows and the "
            f"embedding now has {n:,}: it is kept but not shown; export it to use its labels")


def _key(key: Key) -> tuple[str, str, str]:
    return key.logdir, key.run, key.tag


def _dictionary(db: sqlite3.Connection, column_id: int) -> list[str]:
    return [value for (value,) in db.execute(
        "SELECT value FROM column_values WHERE column_id = ? ORDER BY code", (column_id,))]


def _size(db: sqlite3.Connection, column_id: int) -> int:
    """The column's number of values (codes are 0 to size - 1: read off the key's index)."""
    size: int = db.execute("SELECT MAX(code) + 1 FROM column_values WHERE column_id = ?",
                           (column_id,)).fetchone()[0]
    return size


def _codes(db: sqlite3.Connection, column_id: int, values: list[str]) -> list[int]:
    """The column's code of each value (looked up by value: a column of many notes is not
    read whole for each edit), new values given the next codes."""
    codes = []
    for value in values:
        found = db.execute("SELECT code FROM column_values WHERE column_id = ? AND value = ?",
                           (column_id, value)).fetchone()
        if found is None:
            found = (_size(db, column_id),)
            db.execute("INSERT INTO column_values (column_id, code, value) VALUES (?, ?, ?)",
                       (column_id, found[0], value))
        codes.append(found[0])
    return codes


def _record(db: sqlite3.Connection, column_id: int, action: Action, author: str, rows: RowSet,
            value: str | None, codes: np.ndarray | None = None) -> int:
    edit = db.execute("INSERT INTO edits (column_id, action, author, at, row_count, value) "
                      "VALUES (?, ?, ?, ?, ?, ?)",
                      (column_id, action, author, time.time(), rows.count, value)).lastrowid
    assert edit is not None
    db.execute("INSERT INTO edit_rows (edit_id, rows, codes) VALUES (?, ?, ?)",
               (edit, rows.encode(), None if codes is None else codes.astype("<i4").tobytes()))
    return edit
