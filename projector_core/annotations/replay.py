"""A column recomputed from its edits: as of any edit (the history's view), or on the rows of
an edit being undone or redone.

The rule for two edits of one cell is the order of the edits: the later committed edit wins,
the earlier stays in the history. Replaying the edits that count (sets and imports not undone)
in that order gives the column, so undoing one's own edit brings back, on each of its rows,
whatever the latest other edit there said (someone else's later edit stays), and a redone
edit takes back its own place in the order.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from projector_core.annotations.rowsets import RowSet

_WRITES = "('set', 'import')"


def counting_edits(connection: sqlite3.Connection, column_id: int,
                   as_of: int | None = None) -> set[int]:
    """The sets and imports that count: now, or right after edit ``as_of`` (the undo and redo
    entries up to it decide)."""
    if as_of is None:
        return {edit for (edit,) in connection.execute(
            f"SELECT id FROM edits WHERE column_id = ? AND action IN {_WRITES} AND undone = 0",
            (column_id,))}
    counting: dict[int, bool] = {}
    for edit, action, target in connection.execute(
            "SELECT id, action, target FROM edits WHERE column_id = ? AND id <= ? ORDER BY id",
            (column_id, as_of)):
        if action == "undo":
            counting[target] = False
        elif action == "redo":
            counting[target] = True
        else:
            counting[edit] = True
    return {edit for edit, counts in counting.items() if counts}


def replay(connection: sqlite3.Connection, column_id: int, n: int,
           rows: np.ndarray | None = None, as_of: int | None = None) -> np.ndarray:
    """The int32 codes of ``rows`` (ascending; None: every row) after the edits that count
    (:func:`counting_edits`), applied in order."""
    codes_of = dict(connection.execute(
        "SELECT value, code FROM column_values WHERE column_id = ?", (column_id,)))
    counting = counting_edits(connection, column_id, as_of)
    codes = np.zeros(n if rows is None else rows.size, np.int32)
    for edit, value, blob, per_row in connection.execute(
            "SELECT e.id, e.value, r.rows, r.codes FROM edits e JOIN edit_rows r "
            f"ON r.edit_id = e.id WHERE e.column_id = ? AND e.action IN {_WRITES} "
            "AND e.id <= ? ORDER BY e.id", (column_id, as_of if as_of is not None else 2**62)):
        if edit not in counting:
            continue
        ids = RowSet.decode(blob, n).ids
        new = codes_of[value] if per_row is None else np.frombuffer(per_row, "<i4")
        if rows is None:
            codes[ids] = new
            continue
        at = np.minimum(np.searchsorted(rows, ids), max(rows.size - 1, 0))
        hit = rows[at] == ids if rows.size else np.zeros(ids.size, bool)
        codes[at[hit]] = new if per_row is None else new[hit]
    return codes
