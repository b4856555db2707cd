"""Bookmarks saved from the page, the notebook or an agent, kept in the annotation store
beside the labels (the LOGDIR's own bookmark file is read with the embedding and listed
first: ``service.py``). A bookmark is TensorBoard's ``State`` object, kept as its JSON."""

from __future__ import annotations

import builtins
import json
import time
from dataclasses import dataclass
from typing import Any

from projector_core.annotations.database import StoreFile
from projector_core.annotations.store import Key

STATE_MAX_BYTES = 1 << 20  # one state: a camera, a selection, a projection's parameters


class UnknownBookmark(LookupError):
    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class SavedBookmark:
    id: int
    state: dict[str, Any]
    author: str
    at: float


class SavedBookmarks:
    def __init__(self, file: StoreFile) -> None:
        self.file = file

    def list(self, key: Key) -> list[SavedBookmark]:
        """The embedding's saved bookmarks, oldest first."""
        with self.file.reading() as db:
            return [SavedBookmark(id, json.loads(state), author, at) for id, state, author, at
                    in db.execute("SELECT id, state, author, at FROM bookmarks WHERE logdir = ? "
                                  "AND run = ? AND tag = ? ORDER BY id",
                                  (key.logdir, key.run, key.tag))]

    def saved_after(self, logdir: str, after: int) -> builtins.list[tuple[Key, SavedBookmark]]:
        """The bookmarks of ``logdir``'s embeddings saved after bookmark ``after``."""
        with self.file.reading() as db:
            return [(Key(logdir, run, tag), SavedBookmark(id, json.loads(state), author, at))
                    for id, run, tag, state, author, at in db.execute(
                        "SELECT id, run, tag, state, author, at FROM bookmarks WHERE logdir = ? "
                        "AND id > ? ORDER BY id", (logdir, after))]

    def last_id(self) -> int:
        with self.file.reading() as db:
            return int(db.execute("SELECT COALESCE(MAX(id), 0) FROM bookmarks").fetchone()[0])

    def save(self, key: Key, state: dict[str, Any], author: str) -> SavedBookmark:
        text = json.dumps(state, ensure_ascii=False, allow_nan=False)
        if len(text.encode()) > STATE_MAX_BYTES:
            raise ValueError(f"a bookmark is at most {STATE_MAX_BYTES:,} bytes of JSON")
        at = time.time()
        with self.file.writing() as db:
            id = db.execute("INSERT INTO bookmarks (logdir, run, tag, state, author, at) VALUES "
                            "(?, ?, ?, ?, ?, ?)",
                            (key.logdir, key.run, key.tag, text, author, at)).lastrowid
        assert id is not None
        return SavedBookmark(id, state, author, at)

    def delete(self, key: Key, id: int) -> None:
        """:class:`UnknownBookmark` when the embedding has no saved bookmark ``id``."""
        with self.file.writing() as db:
            gone = db.execute("DELETE FROM bookmarks WHERE id = ? AND logdir = ? AND run = ? "
                              "AND tag = ?", (id, key.logdir, key.run, key.tag)).rowcount
        if not gone:
            raise UnknownBookmark(f"no saved bookmark {id} on {key.run}/{key.tag}")
