"""The store's SQLite file: its schema, how a connection to it is opened, and what SQLite's
errors mean to the user.

WAL mode: readers never wait for a writer, and a write is one transaction appended to the
log, so a process killed in the middle of one (SIGKILL, power) leaves the store as it was
before it; ``synchronous=FULL``: a committed edit is on disk before the edit is answered.
Writers (threads, processes, several servers on one store) take the write lock in turn
(``BEGIN IMMEDIATE``), waiting up to ``timeout`` seconds for it.

Schema (``user_version`` 1). Keys are the LOGDIR's resolved path, the run and the tag (not
the step: every step of a tag shows the same labels):

- ``columns``: one per annotation column, with the row count it was made for.
- ``column_values``: its dictionary; codes are never reused nor renumbered, code 0 is "".
- ``blocks``: the column as it is now, ``BLOCK_ROWS`` int32 codes a block (a block of
  nothing but code 0 is not stored), what a read of the current column returns.
- ``edits``: every change, in commit order (``id``): ``set`` (one value on a row set),
  ``import`` (a value per row), ``undo``/``redo`` (of ``target``); ``undone`` says whether a
  set or import counts now. ``edit_rows`` holds the rows and per-row codes of each.
- ``bookmarks``: saved bookmark states (TensorBoard's ``State`` JSON).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from projector_core.annotations.errors import (
    StoreError,
    StoreUnavailable,
    StoreWriteFailed,
    busy,
)
from projector_core.annotations.turns import WriteTurns

VERSION = 1
BLOCK_ROWS = 1 << 16  # 256 KB of codes: a 10M-row column is 153 blocks, an edit rewrites few

SCHEMA = """
CREATE TABLE IF NOT EXISTS columns (
    id INTEGER PRIMARY KEY,
    logdir TEXT NOT NULL, run TEXT NOT NULL, tag TEXT NOT NULL, name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('label', 'flag', 'note')),
    rows INTEGER NOT NULL,
    created_at REAL NOT NULL, created_by TEXT NOT NULL,
    UNIQUE (logdir, run, tag, name)
);
CREATE TABLE IF NOT EXISTS column_values (
    column_id INTEGER NOT NULL REFERENCES columns (id),
    code INTEGER NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (column_id, code), UNIQUE (column_id, value)
);
CREATE TABLE IF NOT EXISTS blocks (
    column_id INTEGER NOT NULL REFERENCES columns (id),
    block INTEGER NOT NULL, codes BLOB NOT NULL,
    UNIQUE (column_id, block)
);
CREATE TABLE IF NOT EXISTS edits (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    column_id INTEGER NOT NULL REFERENCES columns (id),
    action TEXT NOT NULL CHECK (action IN ('set', 'import', 'undo', 'redo')),
    author TEXT NOT NULL, at REAL NOT NULL,
    target INTEGER REFERENCES edits (id),
    row_count INTEGER NOT NULL, value TEXT,
    undone INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS edits_by_column ON edits (column_id, id);
CREATE INDEX IF NOT EXISTS edits_by_author ON edits (author, id);
CREATE TABLE IF NOT EXISTS edit_rows (
    edit_id INTEGER PRIMARY KEY REFERENCES edits (id),
    rows BLOB NOT NULL, codes BLOB
);
CREATE TABLE IF NOT EXISTS bookmarks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    logdir TEXT NOT NULL, run TEXT NOT NULL, tag TEXT NOT NULL,
    state TEXT NOT NULL, author TEXT NOT NULL, at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS bookmarks_by_key ON bookmarks (logdir, run, tag, id);
"""


def connect(path: Path, timeout: float) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are begun explicitly) with the store's
    pragmas; SQLite errors as they come (see :func:`translate`)."""
    connection = sqlite3.connect(path, timeout=timeout, isolation_level=None,
                                 check_same_thread=False)
    try:
        mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode != "wal":
            raise StoreUnavailable(f"annotation store {path}: cannot use WAL mode (journal mode "
                                   f"stays {mode!r}): is it on a network file system?")
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute("PRAGMA foreign_keys=ON")
    except BaseException:
        connection.close()
        raise
    return connection


def prepare(connection: sqlite3.Connection, path: Path) -> None:
    """Check the file (a newer schema, damage) and create the schema if missing, in a write
    transaction: a store locked by another program is found here, at open."""
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    if version > VERSION:
        raise StoreUnavailable(f"annotation store {path}: written by a newer version of the "
                               f"projector (schema {version}, this one reads {VERSION})")
    problems = [row[0] for row in connection.execute("PRAGMA quick_check(5)")]
    if problems != ["ok"]:
        raise StoreUnavailable(f"annotation store {path}: is damaged ({'; '.join(problems)})")
    try:
        connection.executescript(f"BEGIN IMMEDIATE; {SCHEMA} PRAGMA user_version = {VERSION}; "
                                 "COMMIT;")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def translate(error: sqlite3.Error, path: Path, opening: bool = False) -> StoreError:
    """SQLite's error as the user reads it, naming the store file."""
    name = getattr(error, "sqlite_errorname", "")
    where = f"annotation store {path}"
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(error):
        refused = busy(path)
        return StoreUnavailable(str(refused).split(";")[0]) if opening else refused
    if name.startswith(("SQLITE_FULL", "SQLITE_IOERR")) and not opening:
        return StoreWriteFailed(f"{where}: the disk refused the write ({error}): the edit "
                                "was not saved, nothing of it was written")
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "not a database" in str(error):
        return StoreUnavailable(f"{where}: is damaged or not an annotation store ({error})")
    return StoreUnavailable(f"{where}: {error}")


class StoreFile:
    """The open store: a connection per thread, read snapshots and write transactions, every
    SQLite error translated (:func:`translate`). Opening it checks the file and creates the
    schema: :class:`StoreUnavailable` naming the file when it cannot be used."""

    def __init__(self, path: Path, timeout: float = 10.0) -> None:
        self.path, self.timeout = path, timeout
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreUnavailable(f"annotation store {path}: cannot make its folder "
                                   f"({error.strerror or error})") from None
        try:
            self.turns = WriteTurns(path, timeout)
        except OSError as error:
            raise StoreUnavailable(f"annotation store {path}: cannot make its lock file "
                                   f"({error.strerror or error})") from None
        try:
            prepare(self._connection(), path)
        except sqlite3.Error as error:
            self.close()
            raise translate(error, path, opening=True) from None
        except BaseException:
            self.close()
            raise

    def _connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = connect(self.path, self.timeout)
            self._local.connection = connection
            with self._lock:
                self._all.append(connection)
        return connection

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """One consistent snapshot for the block's queries (writers go on meanwhile)."""
        with self._transaction("BEGIN") as connection:
            yield connection

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """The write lock for the block: all of its changes are committed at its end, or none
        (an exception, a killed process, a full disk)."""
        with self.turns.turn(), self._transaction("BEGIN IMMEDIATE") as connection:
            yield connection

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        try:
            connection = self._connection()
            connection.execute(begin)
        except sqlite3.Error as error:
            raise translate(error, self.path) from None
        try:
            yield connection
            connection.execute("COMMIT")
        except BaseException as error:
            if connection.in_transaction:
                # SQLite may have rolled back itself (a full disk): nothing left to undo then
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
            if isinstance(error, sqlite3.Error):
                raise translate(error, self.path) from None
            raise

    def close(self) -> None:
        with self._lock:
            connections, self._all = self._all, []
        for connection in connections:
            connection.close()
        self._local = threading.local()
        self.turns.close()
